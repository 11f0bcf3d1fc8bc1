"""The tagged facts of a filing's own inline XBRL (``ix:nonFraction`` with its context's period and dimensions).

A 10-K or 10-Q primary document filed since 2019 is an inline XBRL document: every number of its statements and many of
its notes carry the concept, period and dimensions (e.g. ``srt:StatementGeographicalAxis = country:TW``) they report.
edgartools' ``XBRLExtractor`` reads them (contexts, units, scale, sign and the display transforms); this module turns
its output into frozen ``InlineFact`` records. Total: an unreadable document, context or value is skipped (a fact
without a number is dropped), never an exception, because real filings carry broken markup.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from typing import Any

import lxml.html

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InlineFact:
    concept: str  # "us-gaap:Revenues"
    value: float
    unit: str | None
    start: date | None  # None for an instant
    end: date
    dimensions: tuple[tuple[str, str], ...]  # (axis, member), sorted
    context_id: str

    @property
    def days(self) -> int | None:
        return None if self.start is None else (self.end - self.start).days + 1


def _day(text: Any) -> date | None:
    try:
        return date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


def inline_facts(html: str | bytes) -> list[InlineFact]:
    """Every numeric fact of an inline XBRL document, in document order (duplicates kept). [] for a document with
    no inline XBRL or one that cannot be parsed."""

    from edgar.documents.strategies.xbrl_extraction import XBRLExtractor

    if isinstance(html, str):  # lxml refuses a str that carries an XML encoding declaration
        html = html.encode("utf-8", errors="replace")
    try:
        root = lxml.html.fromstring(html)
    except (ValueError, TypeError, lxml.etree.ParserError) as e:  # empty or not HTML at all
        log.info("inline XBRL: unreadable document (%s)", e)
        return []
    extractor = XBRLExtractor()  # type: ignore[no-untyped-call]
    out: list[InlineFact] = []
    for el in root.iter():
        if not isinstance(el.tag, str) or not el.tag.lower().endswith("nonfraction"):
            continue
        try:
            fact = extractor.extract_fact(el)
        except Exception as e:
            log.debug("inline XBRL: fact skipped (%s: %s)", type(e).__name__, e)
            continue
        rec = _record(fact)
        if rec is not None:
            out.append(rec)
    return out


def _record(fact: Any) -> InlineFact | None:
    if fact is None or not fact.concept:
        return None
    ctx = fact.context or {}
    try:
        value = float(str(fact.value).replace(",", ""))
    except (TypeError, ValueError):
        return None
    end = _day(ctx.get("end_date") or ctx.get("instant"))
    if end is None:
        return None
    start = _day(ctx["start_date"]) if ctx.get("start_date") else None
    dims = tuple(sorted((str(k), str(v)) for k, v in (ctx.get("dimensions") or {}).items()))
    return InlineFact(str(fact.concept), value, fact.unit, start, end, dims, str(ctx.get("id") or fact.context_ref))
