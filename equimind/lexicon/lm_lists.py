"""Reading the Loughran-McDonald word lists (``LM_<category>.txt``, one upper-case word a line) from a directory.

The one reader behind ``agents.lexicon.load_lexicon`` (debate tone signals) and ``analytics.sentiment.Lexicon``
(market report sentiment). Nothing is bundled with the package: the recorded corpus keeps the lists at
``corpus/sentiment/``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import Path

from equimind.core.errors import NotFoundError, ParseError

WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


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
