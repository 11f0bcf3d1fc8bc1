"""The note a refusal carries when a company's filing keeps its substance in an exhibit that is not stored.

A 10-K may incorporate its MD&A and financial statements by reference to an exhibit (Wells Fargo: Exhibit 13, the
annual report to shareholders). Ingest records an exhibit it saw referred to but did not get as the Document's
``exhibit_missing`` meta (``ingest/exhibits.py``). When a question about that company is refused, the refusal says
the substance is in that exhibit, that the exhibit is not stored, and how to fetch it: a live ingest of the filing,
which brings the exhibit with it. A filing counts as covered when another visible document of the same company, form
and filing date carries the exhibit (``exhibits`` meta): the live copy ingested after the recorded one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import TYPE_CHECKING

from equimind.core.documents import FilterSpec
from equimind.core.search import DocumentRef
from equimind.core.timeguard import as_of_filter
from equimind.ingest.exhibits import EXHIBITS_KEY, MISSING_KEY, base_type
from equimind.sources.sec_exhibits import carries_exhibits

if TYPE_CHECKING:
    from equimind.store.docstore import DocStore

WHAT = {"EX-13": "Exhibit 13 (its annual report to shareholders)", "EX-99": "Exhibit 99"}
IDENTITY_HINT = 'EQUIMIND_SEC_IDENTITY="Your Name you@example.com"'


def _types(meta: Mapping[str, str], key: str) -> set[str]:
    return {base_type(t) for t in meta.get(key, "").split(",") if t.strip()}


def exhibit_note(docs: Iterable[tuple[DocumentRef, Mapping[str, str]]]) -> str | None:
    """The note for the visible documents (ref, meta) of one company, or None when none of them lacks an exhibit it
    incorporates by reference (or another visible copy of that filing carries it)."""
    docs = list(docs)
    have = {(r.ticker, r.form, r.filed_at, t) for r, m in docs for t in _types(m, EXHIBITS_KEY)}
    lacking = [(r, sorted(t for t in _types(m, MISSING_KEY) if (r.ticker, r.form, r.filed_at, t) not in have))
               for r, m in docs]
    lacking = [(r, types) for r, types in lacking if types]
    if not lacking:
        return None
    ticker = next((r.ticker for r, _ in lacking if r.ticker), None)
    filings = " and ".join(f"{r.form}{f' filed {r.filed_at.isoformat()}' if r.filed_at else ''}" for r, _ in lacking)
    exhibits = " and ".join(WHAT.get(t, t) for t in sorted({t for _, ts in lacking for t in ts}))
    forms = ",".join(sorted({r.form for r, _ in lacking}))
    verb = "incorporates" if len(lacking) == 1 else "incorporate"
    owner = f"{ticker}'s" if ticker else "the"
    fix = (f"run `{IDENTITY_HINT} equimind ingest --tickers {ticker} --forms {forms}` (live mode, without "
           "--snapshot)" if ticker else "ingest it live from SEC EDGAR (`equimind ingest --tickers TICKER`)")
    return (f"Note: {owner} {filings} {verb} its MD&A and financial "
            f"statements by reference to {exhibits}, and that exhibit is not stored (only the filing's primary "
            f"document is), so the answer is likely in the exhibit. To fetch the filing with its exhibits, {fix}, "
            "then ask again")


def stored_exhibit_note(docstore: DocStore, doc_ids: Sequence[str]) -> str | None:
    """``exhibit_note`` over the stored documents ``doc_ids`` (only periodic reports are read)."""
    refs = [r for r in docstore.get_refs(doc_ids).values() if carries_exhibits(r.form)]
    return exhibit_note((r, docstore.get_document(r.doc_id).meta_dict()) for r in refs)


def company_exhibit_note(docstore: DocStore, ticker: str, as_of: date) -> str | None:
    """``exhibit_note`` over the company's indexed filings visible at ``as_of`` (the documents a run's subject
    holds: ``query/parsed.QuestionParser.subjects``)."""
    refs = docstore.list_documents(as_of_filter(FilterSpec(tickers=(ticker,)), as_of), status="indexed")
    return stored_exhibit_note(docstore, [r.doc_id for r in refs])


def with_note(message: str, note: str | None) -> str:
    """The refusal message followed by the note (messages end without a full stop; so does the result)."""
    return f"{message.rstrip('. ')}. {note}" if note else message
