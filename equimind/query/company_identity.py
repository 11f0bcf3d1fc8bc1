"""Tickers for stored documents that carry only a company name, from the SEC ticker map.

A local file (a PDF with a ``company`` in its metadata) knows "JPMorgan" but not "JPM"; a user writes either. The SEC
ticker map (``company_tickers.json``: every listed ticker with its registrant's name, read through the home's
``SourceSet``) joins the two: the document's company name, without legal suffixes, is compared with each
registrant's name the same way.

Rules: an exact name match wins ("Coca Cola" = "COCA COLA CO"); otherwise a registrant whose name starts with the
document's name as whole words ("JPMorgan" → "JPMORGAN CHASE & CO"), only when exactly one registrant does. A
registrant listed under several tickers (preferred shares, notes) gives its first — the map lists the common stock
first. Tickers of one character are not used (too easily an ordinary capital letter in a question).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from equimind.query.filters import DocFacts, short_name

_NON_WORD = re.compile(r"[^0-9a-z]+")


def name_key(name: str) -> str:
    """A company name compared: legal suffixes dropped, lower case, punctuation and hyphens as spaces."""
    return " ".join(_NON_WORD.sub(" ", short_name(name).lower()).split())


def _registrants(ticker_names: Mapping[str, str]) -> dict[str, list[str]]:
    """name key -> tickers, one per registrant name (the first listed), in map order."""
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for ticker, name in ticker_names.items():
        if name in seen:
            continue
        seen.add(name)
        if len(ticker) >= 2 and (key := name_key(name)):
            out.setdefault(key, []).append(ticker.upper())
    return out


def registrant_tickers(facts: Iterable[DocFacts], ticker_names: Mapping[str, str]) -> dict[str, str]:
    """doc_id -> the ticker of the registrant a ticker-less document's company name names (see the module rules)."""
    registrants = _registrants(ticker_names)
    by_name: dict[str, str | None] = {}
    out: dict[str, str] = {}
    for f in facts:
        if f.ticker or not f.company:
            continue
        if f.company not in by_name:
            by_name[f.company] = _match(name_key(f.company), registrants)
        ticker = by_name[f.company]
        if ticker is not None:
            out[f.doc_id] = ticker
    return out


def _match(key: str, registrants: Mapping[str, list[str]]) -> str | None:
    if not key:
        return None
    exact = registrants.get(key)
    if exact:
        return exact[0] if len(exact) == 1 else None
    prefix = [t for k, ts in registrants.items() if k.startswith(key + " ") for t in ts]
    return prefix[0] if len(prefix) == 1 else None
