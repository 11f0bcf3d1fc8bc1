"""Live 10-K / 10-Q / 8-K primary documents from SEC EDGAR as raw filing records (``RawFiling``), not parsed.

Uses the polite SEC client (identity, rate limit, retries, on-disk cache) for the filing index and the download.
A 10-K comes with the exhibits it carries its substance in (EX-13, the annual report to shareholders:
``sources/sec_exhibits.py``); an exhibit that cannot be had is yielded as its own SourceFailure and the 10-K is
still yielded, without it.
``equimind.ingest.documents`` parses the records with the same HTML parser as the snapshot's, so a filing has the
same canonical text and the same source key (``sec:{cik}:{accession}``) whichever way it arrived.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date

from equimind.core.documents import Origin, Source
from equimind.core.errors import EquiMindError
from equimind.sources.base import BodyKind, FilingRef, RawExhibit, RawFiling, SourceFailure
from equimind.sources.sec_edgar import SecEdgarClient
from equimind.sources.sec_exhibits import fetch_exhibits


def live_filing_records(client: SecEdgarClient, tickers: Sequence[str], forms: Sequence[str], *,
                        until: date | None = None, limit: int = 1) -> Iterator[RawFiling | SourceFailure]:
    """The latest ``limit`` filings of each form for each ticker (filed on or before ``until``), through the
    caller's SEC client (the caller closes it). A failed download is yielded as a SourceFailure so the rest of the
    batch continues (a parse failure is reported the same way by ``equimind.ingest.documents``)."""
    for ticker in tickers:
        refs = client.filings(ticker, forms=tuple(forms), until=until)
        for form in forms:
            chosen = sorted((r for r in refs if r.form == form), key=lambda r: r.filed, reverse=True)[:limit]
            for ref in chosen:
                try:
                    html = client.primary_document(ref)
                except EquiMindError as exc:
                    yield SourceFailure(source=ref.url or ref.accession, error=str(exc))
                    continue
                exhibits, failures = fetch_exhibits(client, ref)
                yield from failures
                yield filing_record(ref, html, exhibits)


def filing_record(ref: FilingRef, html: str, exhibits: tuple[RawExhibit, ...] = ()) -> RawFiling:
    """The raw record of a downloaded primary document (with the exhibits fetched with it)."""
    period = f", period ending {ref.period_end.isoformat()}" if ref.period_end else ""
    return RawFiling(
        source_key=f"sec:{ref.cik}:{ref.accession}", ticker=ref.ticker, cik=ref.cik, company=ref.company,
        source=Source.SEC_EDGAR, origin=Origin.LIVE, form=ref.form, filed_at=ref.filed, period_end=ref.period_end,
        url=ref.url, title=f"{ref.company or ref.ticker} {ref.form} filed {ref.filed.isoformat()}{period}",
        body=html, kind=BodyKind.HTML, name=ref.url or ref.accession,
        meta=(("accession", ref.accession), ("primary_document", ref.primary_document)), exhibits=exhibits,
    )
