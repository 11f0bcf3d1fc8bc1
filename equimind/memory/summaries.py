"""Periods and extractive summaries of research memory (pure): daily → weekly / monthly → quarterly.

Evidence text is split into sentences, each scored ``min(numbers, 3) + 0.5 × min(lexicon terms, 4) + σ(node score)``
(numbers and terms as the critic counts them, ``analytics.text`` / ``analytics.aspects``); the rules are in the
``memory.store`` module docstring.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from datetime import date, timedelta

from equimind.lexicon.aspects import Aspect, term_hits
from equimind.lexicon.text import TEXT_CACHE, count_financial_numbers, split_sentences
from equimind.memory.records import TOP_K, EvidenceEntry, Level, PeriodSummary, SummaryItem

_MIN_WORDS, _MAX_CHARS = 6, 600
_TEXT_ASPECTS = (Aspect.FUNDAMENTALS, Aspect.RISKS, Aspect.VALUATION_TECHNICALS)



def period_of(d: date, level: Level) -> tuple[str, date, date]:
    """(key, first day, last day) of the period holding ``d``."""
    if level is Level.DAILY:
        return d.isoformat(), d, d
    if level is Level.WEEKLY:
        year, week, weekday = d.isocalendar()
        start = d - timedelta(days=weekday - 1)
        return f"{year}-W{week:02d}", start, start + timedelta(days=6)
    if level is Level.MONTHLY:
        nxt = date(d.year + d.month // 12, d.month % 12 + 1, 1)
        return f"{d.year}-{d.month:02d}", d.replace(day=1), nxt - timedelta(days=1)
    q = (d.month - 1) // 3
    start = date(d.year, 3 * q + 1, 1)
    end = date(d.year + (q == 3), (3 * q + 3) % 12 + 1, 1) - timedelta(days=1)
    return f"{d.year}-Q{q + 1}", start, end


def sentence_score(sentence: str, node_score: float) -> float:
    terms = sum(len(term_hits(sentence, a)) for a in _TEXT_ASPECTS)
    return min(count_financial_numbers(sentence), 3) + 0.5 * min(terms, 4) + 1.0 / (1.0 + math.exp(-node_score))


def entry_sentences(entry: EvidenceEntry) -> list[SummaryItem]:
    return list(_entry_sentences(entry))


@functools.lru_cache(maxsize=TEXT_CACHE)
def _entry_sentences(entry: EvidenceEntry) -> tuple[SummaryItem, ...]:
    # Cached per (immutable) entry: every run rebuilds the summaries of its quarter from the same stored evidence.
    out = []
    for s, e in split_sentences(entry.text):
        text = entry.text[s:e].strip()
        if len(text.split()) < _MIN_WORDS or len(text) > _MAX_CHARS or "|" in text:
            continue
        lead = len(entry.text[s:e]) - len(entry.text[s:e].lstrip())
        out.append(SummaryItem(text=text, score=round(sentence_score(text, entry.score), 4), date=entry.date,
                               doc_id=entry.doc_id, start=entry.start + s + lead,
                               end=entry.start + s + lead + len(text), source=entry.source, form=entry.form))
    return tuple(out)


def _top(items: Sequence[SummaryItem], k: int) -> list[SummaryItem]:
    unique = {(i.doc_id, i.start, i.end): i for i in items}.values()
    ranked = sorted(unique, key=lambda i: (-i.score, -i.date.toordinal(), i.doc_id, i.start))
    return ranked[:k]


def build_summaries(ticker: str, entries: Sequence[EvidenceEntry]) -> list[PeriodSummary]:
    """All periods at all levels for ``entries``: day from sentences, week/month from days, quarter from months."""
    by_day: dict[date, list[SummaryItem]] = {}
    for entry in entries:
        by_day.setdefault(entry.date, []).extend(entry_sentences(entry))
    daily = {d: _top(items, TOP_K[Level.DAILY]) for d, items in by_day.items()}
    out = [_summary(ticker, Level.DAILY, d, items) for d, items in sorted(daily.items())]
    monthly: list[PeriodSummary] = []
    for level in (Level.WEEKLY, Level.MONTHLY):
        groups: dict[str, list[SummaryItem]] = {}
        for d, items in daily.items():
            groups.setdefault(period_of(d, level)[0], []).extend(items)
        built = [_summary(ticker, level, items[0].date, _top(items, TOP_K[level]))
                 for _, items in sorted(groups.items()) if items]
        out.extend(built)
        monthly = built if level is Level.MONTHLY else monthly
    quarters: dict[str, list[SummaryItem]] = {}
    for m in monthly:
        quarters.setdefault(period_of(m.start, Level.QUARTERLY)[0], []).extend(m.items)
    out.extend(_summary(ticker, Level.QUARTERLY, items[0].date, _top(items, TOP_K[Level.QUARTERLY]))
               for _, items in sorted(quarters.items()) if items)
    return out


def _summary(ticker: str, level: Level, day: date, items: list[SummaryItem]) -> PeriodSummary:
    key, start, end = period_of(day, level)
    return PeriodSummary(ticker=ticker, level=level, period=key, start=start, end=end, items=items)
