"""The Loughran-McDonald financial sentiment word lists: the one type (``Lexicon``) and reader every tone count uses.

Source: Loughran, T. and McDonald, B. (2011), "When Is a Liability Not a Liability? Textual Analysis, Dictionaries,
and 10-Ks", Journal of Finance 66(1). The lists (``LM_<category>.txt``, one upper-case inflected word a line) are read
from a directory passed in; nothing is bundled with the package: the recorded corpus keeps them at
``corpus/sentiment/``. ``NEGATIONS`` are the paper's: a positive word preceded within ``NEGATION_WINDOW`` words by one
of them counts as negative.

One type, two loaders, for its two readers' requirements:

* ``Lexicon.load`` (market-report sentiment: ``sources``, ``analytics``, ``lexicon.sentiment.score_text``): the five
  scored categories (``SCORED``), every one required.
* ``load_lexicon`` (the debate's tone signals, ``lexicon.tone.tone``): all six categories (modal too); negative and
  positive are required, another missing list is an empty set.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from equimind.core.errors import NotFoundError, ParseError

WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
NEGATIONS = frozenset({"NO", "NOT", "NONE", "NEITHER", "NEVER", "NOBODY"})
NEGATION_WINDOW = 3


class LMCategory(StrEnum):
    NEGATIVE = "negative"
    POSITIVE = "positive"
    UNCERTAINTY = "uncertainty"
    LITIGIOUS = "litigious"
    CONSTRAINING = "constraining"
    MODAL = "modal"


# The categories a tone score counts (every one but modal), in this order.
SCORED: tuple[LMCategory, ...] = (LMCategory.NEGATIVE, LMCategory.POSITIVE, LMCategory.UNCERTAINTY,
                                  LMCategory.LITIGIOUS, LMCategory.CONSTRAINING)


@dataclass(frozen=True)
class Lexicon:
    """Upper-case word sets per category, plus where they were read from (recorded in outputs for
    reproducibility)."""

    words: dict[LMCategory, frozenset[str]]
    source: str

    @classmethod
    def load(cls, directory: Path, categories: Iterable[LMCategory] = SCORED,
             required: Collection[LMCategory] = SCORED) -> Lexicon:
        """Reads ``LM_<category>.txt`` of each of ``categories`` from ``directory`` (default: the five scored
        categories, all required)."""
        lists = read_lm_lists(directory, [c.value for c in categories], required=[c.value for c in required])
        return cls(words={LMCategory(k): v for k, v in lists.items()}, source=str(directory))

    def has(self, category: LMCategory, token: str) -> bool:
        return token in self.words.get(category, frozenset())

    def category(self, word: str) -> tuple[str, ...]:
        """The scored categories whose list holds ``word`` (upper case), in ``SCORED`` order."""
        return tuple(c.value for c in SCORED if word in self.words.get(c, frozenset()))


def load_lexicon(directory: Path) -> Lexicon:
    """Read ``LM_<category>.txt`` for every category from ``directory``. NEGATIVE and POSITIVE are required; the
    others are optional (their sets are empty when the file is absent)."""
    return Lexicon.load(directory, tuple(LMCategory), required=(LMCategory.NEGATIVE, LMCategory.POSITIVE))


def read_lm_lists(directory: Path, categories: Iterable[str], required: Collection[str]) -> dict[str, frozenset[str]]:
    """Upper-case word sets per category. A missing ``required`` list raises NotFoundError; another missing list is
    an empty set. An entry that is not one word raises ParseError naming the file."""
    directory = Path(directory)
    if not directory.is_dir():
        raise NotFoundError(f"Loughran-McDonald word lists not found at {directory}; point EQUIMIND_SHARED at the "
                            "shared/ folder (corpus/sentiment/LM_*.txt)")
    out: dict[str, frozenset[str]] = {}
    for cat in categories:
        path = directory / f"LM_{cat}.txt"
        if not path.is_file():
            if cat in required:
                raise NotFoundError(f"Loughran-McDonald list {path} is missing; it is required "
                                    "(shared/corpus/sentiment/LM_*.txt)")
            out[cat] = frozenset()
            continue
        entries = {line.strip().upper() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
        bad = sorted(w for w in entries if not WORD.fullmatch(w))
        if bad:
            raise ParseError(f"{path} has entries that are not single words (e.g. {bad[:3]}); expected one word a line")
        out[cat] = frozenset(entries)
    return out
