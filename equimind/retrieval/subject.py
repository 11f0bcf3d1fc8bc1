"""The company a question is about when its words name none: the one the search's best passages come from.

"Was there any drop in cash and cash equivalents between FY2023 and Q2 of FY2024?" names no company. ``equimind
search`` answers it over the whole store; when its top passages come overwhelmingly from one company's filings, that
company is the evidence's subject, and ``ask`` answers for it and says so (``ParsedQuestion.company_from``:
"search: 8 of the top 10 passages"), so the user sees the guess and how to override it (``--ticker``). A company
also is when it holds most of the top passages' weight by rank (the passage ranked r weighs 1/r, as a reader reads
a ranked list: the first passage counts most): "board nominees with more votes against" ranks one company's vote
results first and third among passages of three companies, and that company holds half the weight though only 3 of
the 10 passages. When the top passages are split between companies by both counts nothing is guessed: the question
is refused for naming no company. Nor
is anything guessed when the question writes a name the top passages never mention ("the revenue of Acme Widgets":
a capitalised word inside the sentence that none of them holds may name a company the store does not have).

The share of the top passages one company must hold (``retrieval.company_from_hits_share``) and its share of their
rank weight (``retrieval.company_from_rank_share``, default 0.5: a majority) are tuning parameters, measured
leave-company-out by the evaluation harness, never chosen on one benchmark's questions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from equimind.core.search import SearchHit
from equimind.core.tunables import Tunable, register, tuned

TOP = 10
_WORD = re.compile(r"[A-Za-z][A-Za-z'&.-]*")
_PERIOD_WORD = re.compile(r"^(?:FY|Q[1-4]|H[12])\w*$")
SHARE = register(Tunable("retrieval.company_from_hits_share", 0.7, (0.5, 0.7, 0.9),
                         "share of the top search passages one company must hold for a question that names no "
                         "company to be answered for it")).name
RANK_SHARE = register(Tunable("retrieval.company_from_rank_share", 0.5, (0.4, 0.5, 0.7, 1.0),
                              "share of the top search passages' rank weight (1/rank) one company must hold for a "
                              "question that names no company to be answered for it; 1.0: only when every top "
                              "passage is its")).name


@dataclass(frozen=True)
class HitCompany:
    """The company the top passages come from: its ticker (None for a local file's company), its name, and how
    many of the top passages are its."""

    ticker: str | None
    company: str | None
    held: int
    top: int
    weight: float = 1.0  # its share of the top passages' rank weight (1/rank)
    by_rank: bool = False  # found by its rank weight, not by the count of its passages

    def describe(self) -> str:
        if self.by_rank:
            return (f"search: {self.held} of the top {self.top} passages, {self.weight:.0%} of their weight by rank "
                    "(the passage ranked r weighs 1/r)")
        return f"search: {self.held} of the top {self.top} passages"


def unknown_names(question: str, hits: Sequence[SearchHit]) -> list[str]:
    """Capitalised words inside the question's sentences (not a sentence's first word, not a period such as FY2024
    or Q2) that no hit's passage holds."""
    held = {w.lower() for h in hits for w in _WORD.findall(h.parent_text)}
    out: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+", question.strip()):
        for w in _WORD.findall(sentence)[1:]:
            word = w.strip("'.&-").removesuffix("'s")
            if word[:1].isupper() and len(word) > 1 and not _PERIOD_WORD.match(word) and word.lower() not in held:
                out.append(word)
    return out


def company_of_hits(question: str, hits: Sequence[SearchHit], top: int = TOP,
                    doc_tickers: Mapping[str, str] | None = None) -> HitCompany | None:
    """The company holding at least the tuned share of the ``top`` hits (counted by ticker, else by company name),
    else the one holding at least the tuned share of their rank weight (the hit at position r weighs 1/r); None
    when no company does, there are no hits, or the question writes a name none of them holds. ``doc_tickers``: the
    registrant's ticker of ticker-less documents (local files named by their registrant), so their hits count for
    it and the guess carries a ticker ``ask`` can run for."""
    best = hits[:top]
    if not best or unknown_names(question, best):
        return None
    tickers = doc_tickers or {}
    keys: list[tuple[str | None, str | None]] = []
    names: dict[tuple[str | None, str | None], str | None] = {}
    for h in best:
        ticker = h.document.ticker or tickers.get(h.document.doc_id)
        company = (h.document.company or "").strip() or None
        key: tuple[str | None, str | None] = (ticker, None) if ticker else (None, company)
        keys.append(key)
        names.setdefault(key, company)
    counts = Counter(keys)
    weights: dict[tuple[str | None, str | None], float] = {}
    for position, key in enumerate(keys, 1):
        weights[key] = weights.get(key, 0.0) + 1 / position
    total = sum(weights.values())
    most, held = counts.most_common(1)[0]
    if held / len(best) >= tuned(SHARE) and (most[0] or most[1]):
        return HitCompany(most[0], names[most], held, len(best), weights[most] / total)
    heaviest, weight = max(weights.items(), key=lambda kv: kv[1])
    if weight / total >= tuned(RANK_SHARE) and (heaviest[0] or heaviest[1]):
        return HitCompany(heaviest[0], names[heaviest], counts[heaviest], len(best), weight / total, by_rank=True)
    return None
