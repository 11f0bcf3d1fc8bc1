"""Tone counting for the debate's tone signals with the Loughran-McDonald word lists (``lexicon.lm_lists``: the
lists, their source, the one ``Lexicon`` type and its loaders).

``tone`` counts every token of a text: a positive word preceded within three words by a negation (no, not, none,
neither, never, nobody) counts as negative instead, whatever punctuation lies between. (The market-report score,
``lexicon.sentiment.score_text``, stops a negation at a clause break and keeps per-word negative counts: the two
counts differ on such text, and each caller keeps its own.)
"""

from __future__ import annotations

from dataclasses import dataclass

from equimind.lexicon.lm_lists import NEGATION_WINDOW, NEGATIONS, Lexicon, LMCategory
from equimind.lexicon.lm_lists import WORD as _TOKEN

__all__ = ["Tone", "tone"]


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


def tone(text: str, lexicon: Lexicon) -> Tone:
    """Count LM words in ``text`` (negated positives count as negative)."""
    tokens = [t.upper() for t in _TOKEN.findall(text)]
    positive, negative = lexicon.words.get(LMCategory.POSITIVE, frozenset()), lexicon.words.get(
        LMCategory.NEGATIVE, frozenset())
    pos = neg = 0
    for i, tok in enumerate(tokens):
        if tok in positive:
            if NEGATIONS.intersection(tokens[max(0, i - NEGATION_WINDOW):i]):
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
