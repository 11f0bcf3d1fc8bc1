"""Live 10-K / 10-Q / 8-K primary documents from SEC EDGAR, parsed into Documents.

Uses the polite SEC client (identity, rate limit, retries, on-disk cache) for the filing index and the download,
and the same HTML parser as the snapshot, so a filing has the same canonical text and the same source key
(``sec:{cik}:{accession}``) whichever way it arrived.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import date

from equimind.core.documents import Document, Origin, Source
from equimind.core.errors import EquiMindError
from equimind.ingest.parse import PARSER_VERSION, parse_filing_html
from equimind.ingest.pipeline import SourceFailure
from equimind.sources.sec_edgar import SecEdgarClient

log = logging.getLogger(__name__)


def live_filing_documents(client: SecEdgarClient, tickers: Sequence[str], forms: Sequence[str], *,
                          until: date | None = None, limit: int = 1) -> Iterator[Document | SourceFailure]:
    """The latest ``limit`` filings of each form for each ticker (filed on or before ``until``), through the
    caller's SEC client (the caller closes it). Per-filing download/parse failures are yielded as SourceFailure so
    the rest of the batch continues."""
    for ticker in tickers:
        refs = client.filings(ticker, forms=tuple(forms), until=until)
        for form in forms:
            chosen = sorted((r for r in refs if r.form == form), key=lambda r: r.filed, reverse=True)[:limit]
            for ref in chosen:
                try:
                    html = client.primary_document(ref)
                    parsed = parse_filing_html(html, ref.form, name=ref.url or ref.accession)
                except EquiMindError as exc:
                    yield SourceFailure(source=ref.url or ref.accession, error=str(exc))
                    continue
                key = f"sec:{ref.cik}:{ref.accession}"
                period = f", period ending {ref.period_end.isoformat()}" if ref.period_end else ""
                title = f"{ref.company or ref.ticker} {ref.form} filed {ref.filed.isoformat()}{period}"
                meta = (("accession", ref.accession), ("parser", f"edgartools-html/{PARSER_VERSION}"),
                        ("primary_document", ref.primary_document), *parsed.fiscal)
                yield Document(id=Document.make_id(key, parsed.text), source_key=key, ticker=ref.ticker,
                               cik=ref.cik, company=ref.company, source=Source.SEC_EDGAR, origin=Origin.LIVE,
                               form=ref.form, filed_at=ref.filed, period_end=ref.period_end, url=ref.url,
                               title=title,
                               text=parsed.text, sections=parsed.sections, meta=meta)
