"""Raw filing records → Documents: the one place a source's raw body is parsed into canonical text.

The filing sources (``sources/snapshot.py``, ``sources/live_filings.py``, ``sources/local.py``) yield ``RawFiling``
records (provenance + raw body) or ``SourceFailure`` rows; ``documents()`` parses each record here
(``parse_filing_html`` for HTML, ``parse_pdf`` for PDFs) and passes the failures through. A record whose body cannot
be parsed becomes a ``SourceFailure`` naming the file / URL and the error: one bad document is a per-row error,
never an aborted batch.

A Document's id is ``Document.make_id(source_key, parsed text)``. Its meta is the source's own pairs plus what parsing
adds: the parser (``edgartools-html/{PARSER_VERSION}`` for SEC filings, ``edgartools-html`` / ``pypdf-layout`` for
local files), the fiscal year / period an inline-XBRL filing declares (unless the record says the fiscal year is
already known) and the identity its opening states (``registrant_name``, ``short_names``: ``ingest/identity.py``).
The pairs are sorted; live SEC documents list the declared fiscal pairs last, as they always have.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from equimind.core.documents import Document, Origin, Source
from equimind.core.errors import EquiMindError, ParseError
from equimind.ingest.exhibits import with_exhibits
from equimind.ingest.fiscal_cover import local_period_end, stated_period
from equimind.ingest.identity import filing_identity
from equimind.ingest.parse import PARSER_VERSION, ParsedText, parse_filing_html, parse_pdf
from equimind.sources.base import BodyKind, RawFiling, SourceFailure

log = logging.getLogger(__name__)


def parse_raw(raw: RawFiling) -> ParsedText:
    """Parse a record's body (the form, when known, guides section detection). Raises ParseError naming it."""
    form = raw.form if raw.form != "unknown" else None
    if raw.kind is BodyKind.PDF:
        if not isinstance(raw.body, bytes):
            raise ParseError(f"{raw.name}: a PDF body must be bytes, not text")
        return parse_pdf(raw.body, form, name=raw.name)
    return parse_filing_html(raw.body, form, name=raw.name)


def parser_label(raw: RawFiling) -> str:
    """The ``parser`` meta value of a record's Document."""
    if raw.kind is BodyKind.PDF:
        return "pypdf-layout"
    if raw.source is Source.LOCAL:
        return "edgartools-html"
    return f"edgartools-html/{PARSER_VERSION}"


def to_document(raw: RawFiling) -> Document:
    """Parse one raw record into its Document. Raises ParseError (or another EquiMindError) for a bad body."""
    parsed, exhibit_pairs = with_exhibits(parse_raw(raw), raw)  # a 10-K's exhibits appended (ingest/exhibits.py)
    pairs = [*raw.meta, ("parser", parser_label(raw)), *exhibit_pairs]
    known = {k for k, _ in raw.meta}  # the cover page's registrant and the filing's own short names (ingest/identity)
    pairs += [p for p in filing_identity(parsed.text).meta_pairs() if p[0] not in known]
    stated = stated_period(parsed.text, raw.form)  # the period end its cover states (ingest/fiscal_cover.py)
    pairs += stated.meta_pairs() if stated is not None else []
    fiscal = parsed.fiscal if raw.declared_fiscal else ()
    # live SEC documents have always listed the declared fiscal pairs last; the others sort every pair
    meta = (*sorted(pairs), *fiscal) if raw.origin is Origin.LIVE else tuple(sorted([*pairs, *fiscal]))
    return Document(
        id=Document.make_id(raw.source_key, parsed.text), source_key=raw.source_key, ticker=raw.ticker, cik=raw.cik,
        company=raw.company, source=raw.source, origin=raw.origin, form=raw.form, filed_at=raw.filed_at,
        period_end=local_period_end(raw, stated), url=raw.url, title=raw.title, text=parsed.text,
        sections=parsed.sections, pages=parsed.pages, meta=meta,
    )


def documents(items: Iterable[RawFiling | SourceFailure]) -> Iterator[Document | SourceFailure]:
    """Each raw record parsed into its Document, in order; a source's failures pass through, and a record that
    cannot be parsed becomes a SourceFailure (its file / URL and the error) while the next one goes on."""
    for item in items:
        if isinstance(item, SourceFailure):
            yield item
            continue
        try:
            doc = to_document(item)
        except EquiMindError as exc:
            log.warning("skipping %s: %s", item.name, exc)
            yield SourceFailure(source=item.name, error=str(exc))
            continue
        yield doc
