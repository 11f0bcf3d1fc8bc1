"""Tickers for stored documents that carry only a company name, from the SEC ticker map.

A local file (a PDF with a ``company`` in its metadata) knows "JPMorgan" but not "JPM"; a user writes either. The SEC
ticker map (``company_tickers.json``: every listed ticker with its registrant's name, read through the home's
``SourceSet``) joins the two: the document's company name, without legal suffixes, is compared with each
registrant's name the same way; a document whose company name names no registrant is tried again under the
registrant's name its cover page prints (``DocFacts.registrant``, ``ingest/identity.py``).

Rules: an exact name match wins ("Coca Cola" = "COCA COLA CO"); otherwise a registrant whose name starts with the
document's name as whole words ("JPMorgan" → "JPMORGAN CHASE & CO"), only when exactly one registrant does. A
registrant listed under several tickers (preferred shares, notes) gives its first — the map lists the common stock
first. Tickers of one character are not used (too easily an ordinary capital letter in a question).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from equimind.query.identity import DocFacts, RegistrantTickers, name_key, registrants_of

__all__ = ["name_key", "registrant_tickers"]


def registrant_tickers(facts: Iterable[DocFacts], ticker_names: Mapping[str, str]) -> RegistrantTickers:
    """doc_id -> the ticker of the registrant a ticker-less document's names name (see the module rules); the result
    carries the map's registrants, so the identity model can judge leading words against them."""
    registrants = registrants_of(ticker_names)
    by_names: dict[tuple[str, ...], str | None] = {}
    out: dict[str, str] = {}
    for f in facts:
        names = tuple(n for n in (f.company, f.registrant) if n)
        if f.ticker or not names:
            continue
        if names not in by_names:
            by_names[names] = registrants.ticker_of(names)
        ticker = by_names[names]
        if ticker is not None:
            out[f.doc_id] = ticker
    return RegistrantTickers(out, registrants)
