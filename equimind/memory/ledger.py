"""The rating ledger (issue 30): what each rated research run used, and what changed since the previous one.

* **An entry** is a research run that ended in a rating: its as-of date, rating and conviction, the evidence its
  claims cite (bull and bear claims, and the answer a decision ask's topic gets: each a ``LedgerEvidence`` identified
  by document id and character span, with a short quote and the document's filing date and form) and the figures the
  run read (``LedgerFigure``: id, name, value, unit, as-of date, provenance; ``cited`` when a claim names it). A run
  without a rating (a specific ask's answer or refusal) is remembered as a run, not as a ledger entry.
* **Order**: by as-of date, then when it ran, then run id.
* **The previous entry** of a run at as-of date D is the last entry, in that order, whose as-of date is on or before
  D. Entries dated after D are never seen (the backtester's as-of rule, applied with ``core.timeguard``); a same-day
  entry is one that ran earlier (the current run is recorded after the comparison), so researching twice at the same
  date says what moved between the two runs, and researching at a later date says what the later data changed.
* **The change** (``LedgerDelta``): the evidence that entered (cited now, not before) and left (cited before, not
  now), matched by (document id, start, end); the figures whose value changed, matched by figure id (a figure
  present on one side only is a change with ``old`` or ``new`` None), those a claim cites first. Against an entry
  from before the ledger (``recorded`` False) only the rating and conviction are compared.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from equimind.core.research import FigureChange, LedgerDelta, LedgerEvidence, LedgerFigure, Recommendation
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import assert_not_after, filter_dated
from equimind.lexicon.text import clip
from equimind.memory.records import LedgerEntry, LedgerRow

QUOTE_CHARS = 240  # a ledger quote is a reminder of the span; the span itself is the citation
_ANSWER_ROLES = ("evidence", "row")  # an answer's quotes that carry its substance (not its header / unit lines)

RULE = ("entries ordered by as-of date, then run time; each change is against the entry before it; the previous "
        "entry of a run at as-of D is the last one dated on or before D (a same-day entry only when it ran earlier); "
        "nothing dated after the as-of date is shown")


def short_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    return clip(text, limit)


def ledger_evidence(rec: Recommendation, nodes: Iterable[EvidenceNode] = ()) -> list[LedgerEvidence]:
    """The spans ``rec`` cites, once each in the order first cited, with who cited them; ``nodes`` (the run's
    passages) give each document's filing date and form."""
    docs: dict[str, tuple[date | None, str]] = {}
    for n in nodes:
        docs.setdefault(n.doc_id, (n.filed_at, n.form))
    spans: dict[tuple[str, int, int], tuple[str, list[str]]] = {}

    def add(doc_id: str, start: int, end: int, quote: str, side: str) -> None:
        quote_sides = spans.setdefault((doc_id, start, end), (quote, []))
        if side not in quote_sides[1]:
            quote_sides[1].append(side)

    for side, claims in (("bull", rec.bull_case), ("bear", rec.bear_case)):
        for claim in claims:
            for c in claim.citations:
                add(c.doc_id, c.start, c.end, c.quote, side)
    for q in _answer_quotes(rec.answer):
        add(q.doc_id, q.start, q.end, q.text, "answer")
    out = []
    for (doc_id, start, end), (quote, sides) in spans.items():
        filed, form = docs.get(doc_id, (None, None))
        out.append(LedgerEvidence(doc_id=doc_id, start=start, end=end, quote=short_quote(quote), filed_at=filed,
                                  form=form, sides=sides))
    return out


def _answer_quotes(answer: Any) -> list[Any]:
    """The substantive quotes of the Answer a decision ask's topic got (``answer.record.Answer``, read by shape:
    memory sits below the answer package)."""
    quotes = [q for s in getattr(answer, "sentences", None) or [] for q in getattr(s, "quotes", None) or []]
    return [q for q in quotes if getattr(q, "role", "evidence") in _ANSWER_ROLES]


def ledger_figures(rec: Recommendation) -> list[LedgerFigure]:
    """The figures ``rec`` read, once per id, ``cited`` when one of its claims names the figure."""
    cited = {f for claim in rec.bull_case + rec.bear_case for f in claim.figure_ids}
    out: dict[str, LedgerFigure] = {}
    for f in rec.figures:
        out.setdefault(f.id, LedgerFigure(id=f.id, name=f.name, value=f.value, unit=f.unit, as_of=f.as_of,
                                          provenance=dict(f.provenance), cited=f.id in cited))
    return list(out.values())


def _span(e: LedgerEvidence) -> tuple[str, int, int]:
    return e.doc_id, e.start, e.end


def same_value(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def figure_changes(old: Sequence[LedgerFigure], new: Sequence[LedgerFigure]) -> list[FigureChange]:
    """Figures whose value differs (matched by id), cited ones first, then in the new entry's order, then those only
    the old entry has."""
    before = {f.id: f for f in old}
    after = {f.id: f for f in new}
    changes = []
    for fid in [*after, *(k for k in before if k not in after)]:
        o, n = before.get(fid), after.get(fid)
        if o is not None and n is not None and same_value(o.value, n.value):
            continue
        ref = n or o
        assert ref is not None
        changes.append(FigureChange(id=fid, name=ref.name, old=o, new=n))
    return sorted(changes, key=lambda c: not ((c.old and c.old.cited) or (c.new and c.new.cited)))


def delta(previous: LedgerEntry, current: LedgerEntry) -> LedgerDelta:
    """What changed from ``previous`` to ``current`` (both ledger entries of one ticker)."""
    head: dict[str, Any] = {
        "since": previous.as_of, "previous_run_id": previous.run_id, "previous_run_at": previous.run_at,
        "rating_from": previous.rating, "rating_to": current.rating, "conviction_from": previous.conviction,
        "conviction_to": current.conviction}
    if not (previous.recorded and current.recorded):
        return LedgerDelta(**head, previous_recorded=previous.recorded)
    was = {_span(e) for e in previous.evidence}
    now = {_span(e) for e in current.evidence}
    return LedgerDelta(**head,
                       evidence_entered=[e for e in current.evidence if _span(e) not in was],
                       evidence_left=[e for e in previous.evidence if _span(e) not in now],
                       evidence_kept=len(was & now),
                       figures_changed=figure_changes(previous.figures, current.figures))


def ordered(entries: Iterable[LedgerEntry]) -> list[LedgerEntry]:
    return sorted(entries, key=lambda e: (e.as_of, e.run_at, e.run_id))


def visible(entries: Iterable[LedgerEntry], as_of: date | None) -> list[LedgerEntry]:
    """The entries a run or a listing at ``as_of`` may see (as-of date on or before it), in ledger order."""
    seen = ordered(filter_dated(entries, as_of))
    assert_not_after(seen, as_of)
    return seen


def previous_entry(entries: Iterable[LedgerEntry], as_of: date) -> LedgerEntry | None:
    """The entry a new run at ``as_of`` compares with: the last visible one (module docstring)."""
    seen = visible(entries, as_of)
    return seen[-1] if seen else None


def history(entries: Sequence[LedgerEntry]) -> list[LedgerRow]:
    """Rows of the listing: each entry (in ledger order) with its change from the one before."""
    rows = []
    prev: LedgerEntry | None = None
    for e in ordered(entries):
        rows.append(LedgerRow(entry=e, evidence_count=len(e.evidence) if e.recorded else None,
                              figures_count=len(e.figures) if e.recorded else None,
                              change=delta(prev, e) if prev is not None else None))
        prev = e
    return rows
