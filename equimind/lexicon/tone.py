"""Loughran-McDonald financial sentiment word lists: loader and tone counting.

Loughran, T. and McDonald, B. (2011), "When Is a Liability Not a Liability? Textual Analysis, Dictionaries, and
10-Ks", Journal of Finance 66(1). The lists are inflected forms (one upper-case word a line), so a token is looked up
as is. Following the paper, a positive word preceded within three words by a negation (no, not, none, neither,
never, nobody) counts as negative instead.

The lists are read from a directory passed in (the recorded corpus keeps them at ``corpus/sentiment/LM_*.txt``);
nothing is bundled with the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from equimind.lexicon.lm_lists import WORD as _TOKEN
from equimind.lexicon.lm_lists import read_lm_lists

__all__ = ["LMCategory", "Lexicon", "Tone", "load_lexicon", "tone"]

_NEGATIONS = frozenset({"NO", "NOT", "NONE", "NEITHER", "NEVER", "NOBODY"})
_NEGATION_WINDOW = 3


class LMCategory(StrEnum):
    NEGATIVE = "negative"
    POSITIVE = "positive"
    UNCERTAINTY = "uncertainty"
    LITIGIOUS = "litigious"
    CONSTRAINING = "constraining"
    MODAL = "modal"


@dataclass(frozen=True)
class Lexicon:
    """Word sets per category, plus where they were read from (recorded in outputs for reproducibility)."""

    words: dict[LMCategory, frozenset[str]]
    source: str

    def has(self, category: LMCategory, token: str) -> bool:
        return token in self.words.get(category, frozenset())


@dataclass(frozen=True)
class Tone:
    """Counts of LM words in a text. ``net`` = (positive - negative) / (positive + negative), 0 when neither."""

    tokens: int
    positive: int
    negative: int
    uncertainty: int
    litigious: int
    constraining: int

    @property
    def polar(self) -> int:
        return self.positive + self.negative

    @property
    def net(self) -> float:
        return (self.positive - self.negative) / self.polar if self.polar else 0.0


def load_lexicon(directory: Path) -> Lexicon:
    """Read ``LM_<category>.txt`` for every category from ``directory``. NEGATIVE and POSITIVE are required; the
    others are optional (their sets are empty when the file is absent)."""
    lists = read_lm_lists(directory, [c.value for c in LMCategory],
                          required=(LMCategory.NEGATIVE.value, LMCategory.POSITIVE.value))
    return Lexicon(words={LMCategory(k): v for k, v in lists.items()}, source=str(directory))


def tone(text: str, lexicon: Lexicon) -> Tone:
    """Count LM words in ``text`` (negated positives count as negative)."""
    tokens = [t.upper() for t in _TOKEN.findall(text)]
    positive, negative = lexicon.words.get(LMCategory.POSITIVE, frozenset()), lexicon.words.get(
        LMCategory.NEGATIVE, frozenset())
    pos = neg = 0
    for i, tok in enumerate(tokens):
        if tok in positive:
            if _NEGATIONS.intersection(tokens[max(0, i - _NEGATION_WINDOW):i]):
                neg += 1
            else:
                pos += 1
        elif tok in negative:
            neg += 1

    def count(category: LMCategory) -> int:
        words = lexicon.words.get(category, frozenset())
        return sum(1 for tok in tokens if tok in words)

    return Tone(tokens=len(tokens), positive=pos, negative=neg, uncertainty=count(LMCategory.UNCERTAINTY),
                litigious=count(LMCategory.LITIGIOUS), constraining=count(LMCategory.CONSTRAINING))
