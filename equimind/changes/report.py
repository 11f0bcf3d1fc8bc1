"""Two stored filings in, one ``ChangeReport`` out: diff, rank, and check every cited span like an answer's."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from datetime import date

from equimind.changes.diff import diff_documents
from equimind.changes.model import Change, ChangeKind, ChangeReport, FilingRef
from equimind.changes.rank import RANKING_RULE, rank
from equimind.core.citations import TextLookup, verify_spans
from equimind.core.documents import Document
from equimind.lexicon.lm_lists import Lexicon


def filing_ref(doc: Document) -> FilingRef:
    meta = doc.meta_dict()
    return FilingRef(doc_id=doc.id, ticker=doc.ticker, company=doc.company, form=doc.form, filed_at=doc.filed_at,
                     period_end=doc.period_end, accession=meta.get("accession"), title=doc.title)


def compare(old: Document, new: Document, *, lexicon: Lexicon | None, text_lookup: TextLookup,
            sections: Sequence[str] = (), pairing: str = "", as_of: date | None = None) -> ChangeReport:
    """The ranked, cited changes from ``old`` to ``new``. Every side's quote is checked against the stored text
    (``core.citations.verify_spans``, the answers' span check); a change with a side that fails is dropped and
    counted in ``citations_failed`` (it cannot happen unless the stored text changed under the run)."""
    t0 = time.perf_counter()
    diffs, dates_only = diff_documents(old, new, sections)
    t1 = time.perf_counter()
    ranked = rank([c for d in diffs for c in d.changes], lexicon)
    t2 = time.perf_counter()
    kept, checked, failed = _checked(ranked, text_lookup)
    t3 = time.perf_counter()
    degraded = []
    if lexicon is None:
        degraded.append("Loughran-McDonald word lists not found: rewordings are not ranked by negative / "
                        "uncertainty words (fix: set EQUIMIND_SHARED to the directory holding corpus/sentiment)")
    counts = Counter(c.kind.value for c in kept)
    counts["risk_factors_added"] = sum(1 for c in kept if c.is_risk_factor and c.kind == ChangeKind.ADDED)
    counts["risk_factors_removed"] = sum(1 for c in kept if c.is_risk_factor and c.kind == ChangeKind.REMOVED)
    return ChangeReport(
        ticker=new.ticker or old.ticker, company=new.company or old.company, as_of=as_of, old=filing_ref(old),
        new=filing_ref(new), pairing=pairing, sections=[d.pair for d in diffs], changes=kept,
        counts={k: counts.get(k, 0) for k in (*[k.value for k in ChangeKind], "risk_factors_added",
                                                 "risk_factors_removed")},
        dates_only=dates_only, ranking_rule=RANKING_RULE, citations_checked=checked, citations_failed=failed,
        degraded=degraded,
        timings_ms={"diff": round((t1 - t0) * 1000, 1), "rank": round((t2 - t1) * 1000, 1),
                    "citations": round((t3 - t2) * 1000, 1)})


def _checked(changes: list[Change], lookup: TextLookup) -> tuple[list[Change], int, int]:
    items = [(s.doc_id, s.start, s.end, s.quote) for c in changes for s in (c.old, c.new) if s is not None]
    results = verify_spans(lookup, items)
    ok = {(r.doc_id, r.start, r.end) for r in results if r.in_claimed_span}
    kept = [c for c in changes if all((s.doc_id, s.start, s.end) in ok for s in (c.old, c.new) if s is not None)]
    for n, c in enumerate(kept, start=1):
        c.rank = n
    return kept, len(items), sum(1 for r in results if not r.in_claimed_span)
