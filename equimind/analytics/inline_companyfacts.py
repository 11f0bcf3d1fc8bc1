"""``CompanyFacts`` assembled from the inline XBRL of a company's own 10-K and 10-Q primary documents: the fallback of
the market report's fundamentals when SEC's companyfacts cannot be had (not recorded in a snapshot, or not served).

Every 10-K / 10-Q filed since 2019 is an inline XBRL document whose tagged facts hold the statements' lines. The
facts without dimensions are the consolidated figures; each becomes an ``XbrlFact`` exactly as companyfacts would
carry it: ``us-gaap:Revenues`` split into taxonomy and concept, the unit as companyfacts spells it (``USD``,
``USD/shares``), the context's period, and accession / filed date / form of the filing (``fy`` / ``fp`` from the
document's ``dei:DocumentFiscalYearFocus`` / ``dei:DocumentFiscalPeriodFocus``, the filing's fiscal period, as in
companyfacts). A filing's comparative periods are kept: companyfacts holds them too, and the point-in-time rules of
``analytics/xbrl.py`` pick, per period, the fact filed last by the as-of date.

Which filings: the 10-K and 10-Q filed on or before the as-of date, newest first, those filed within
``WINDOW_DAYS`` of the newest one (what TTM, the latest quarter and the year-earlier values need), plus the latest
annual report if it is older; at most ``MAX_DOCUMENTS`` documents are read. Total: a filing whose document cannot be
had or holds no readable inline XBRL contributes nothing, a fact that cannot be mapped is skipped.

Duplicates: the same fact (concept, unit, period) often appears twice in one document, once in a statement and once
rounded in the text ("$1.84 billion"); the most precise value wins (fewest trailing zeros), ties in document order.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation

from equimind.analytics.inline_xbrl import InlineFact, inline_facts
from equimind.core.errors import EquiMindError
from equimind.lexicon.forms import is_annual
from equimind.sources.base import CompanyFacts, FilingIndexSource, FilingRef, XbrlFact

log = logging.getLogger(__name__)

FORMS: tuple[str, ...] = ("10-K", "10-Q")
WINDOW_DAYS = 400  # the newest filing and the year before it: TTM, the latest quarter, the same quarter a year earlier
MAX_DOCUMENTS = 6

_DEI = re.compile(r"<ix:nonNumeric\b[^>]*\bname=[\"']dei:(DocumentFiscalYearFocus|DocumentFiscalPeriodFocus)[\"']"
                  r"[^>]*>(.*?)</ix:nonNumeric>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class InlineCompanyFacts:
    """The assembled facts (None when no filing gave any), the filings they came from and what was skipped."""

    facts: CompanyFacts | None
    used: tuple[FilingRef, ...]
    skipped: tuple[tuple[str, str], ...]  # ("10-Q filed 2025-04-23", why it gave nothing)
    listed: int  # periodic filings filed by the as-of date

    def describe_used(self) -> str:
        return ", ".join(f"{r.form} {r.accession} filed {r.filed}" if r.accession
                         else f"{r.form} filed {r.filed} (accession not recorded)" for r in self.used)

    def describe_skipped(self) -> str:
        """"10-Q filed 2025-04-23, 10-Q filed 2024-10-24 (document not available: NotFoundError)", by reason."""
        by_reason: dict[str, list[str]] = {}
        for label, reason in self.skipped:
            by_reason.setdefault(reason, []).append(label)
        return "; ".join(f"{', '.join(labels)} ({reason})" for reason, labels in by_reason.items())

    def describe_tried(self, ticker: str, as_of: date) -> str:
        if not self.listed:
            return f"no {' or '.join(FORMS)} of {ticker} filed by {as_of} is listed"
        head = f"{self.listed} {'/'.join(FORMS)} of {ticker} filed by {as_of} listed, none with readable inline XBRL"
        return head + (f" (tried: {self.describe_skipped()})" if self.skipped else "")


def accession_of(ref: FilingRef) -> str:
    """The filing's accession, or a stand-in naming the filing when the snapshot did not record it."""
    return ref.accession or f"(accession not recorded: {ref.form} filed {ref.filed})"


def fiscal_focus(html: str) -> tuple[int | None, str | None]:
    """(fy, fp) of the document's dei cover facts, e.g. (2024, "FY"), (2025, "Q2"); None where absent."""
    fy: int | None = None
    fp: str | None = None
    for name, body in _DEI.findall(html):
        text = _TAG.sub("", body).strip()
        if name.lower() == "documentfiscalyearfocus" and fy is None and text[:4].isdigit():
            fy = int(text[:4])
        elif name.lower() == "documentfiscalperiodfocus" and fp is None and text:
            fp = text.upper()[:2]
    return fy, fp


def _precision(value: float) -> int:
    """The exponent of the value's last significant digit (lower = more precise): 1837000000 -> 6, 1.84e9 -> 7."""
    try:
        exp = Decimal(repr(value)).normalize().as_tuple().exponent
    except (InvalidOperation, ValueError):
        return 0
    return exp if isinstance(exp, int) else 0


def _xbrl_fact(f: InlineFact, ref: FilingRef, fy: int | None, fp: str | None) -> XbrlFact | None:
    taxonomy, sep, concept = f.concept.partition(":")
    if not sep or not taxonomy or not concept or not f.unit:
        return None
    if f.start is not None and f.start > f.end:
        return None
    return XbrlFact(taxonomy=taxonomy, concept=concept, unit=f.unit, value=f.value, start=f.start, end=f.end,
                    accession=accession_of(ref), filed=ref.filed, form=ref.form, fy=fy, fp=fp, frame=None)


def filing_facts(html: str | bytes, ref: FilingRef) -> list[XbrlFact]:
    """The consolidated (dimensionless) facts of one primary document as companyfacts entries, one per
    (concept, unit, period). [] for a document without readable inline XBRL."""
    text = html.decode("utf-8", errors="replace") if isinstance(html, bytes) else html
    fy, fp = fiscal_focus(text)
    best: dict[tuple[str, str, date | None, date], tuple[int, int, XbrlFact]] = {}
    for order, f in enumerate(inline_facts(text)):
        if f.dimensions:
            continue
        try:
            x = _xbrl_fact(f, ref, fy, fp)
        except (TypeError, ValueError) as e:  # a malformed fact: skipped
            log.debug("inline companyfacts: fact %s skipped (%s)", f.concept, e)
            continue
        if x is None:
            continue
        key = (x.qualified, x.unit, x.start, x.end)
        rank = (_precision(x.value), order)
        cur = best.get(key)
        if cur is None or rank < cur[:2]:
            best[key] = (*rank, x)
    return [x for _, _, x in sorted(best.values(), key=lambda t: t[1])]


def _candidates(refs: Sequence[FilingRef], as_of: date) -> list[FilingRef]:
    """The filings worth reading, newest first: those within ``WINDOW_DAYS`` of the newest, plus the latest annual
    report when it is older than that."""
    refs = [r for r in refs if r.filed <= as_of]  # the source already filters; the as-of rule is checked again
    if not refs:
        return []
    newest = max(r.filed for r in refs)
    out = [r for r in refs if (newest - r.filed) <= timedelta(days=WINDOW_DAYS)]
    if not any(is_annual(r.form) for r in out):
        out += [r for r in refs if is_annual(r.form) and r not in out][:1]
    return out


def inline_company_facts(filings: FilingIndexSource, ticker: str, as_of: date) -> InlineCompanyFacts:
    """The company's facts from the inline XBRL of its 10-K / 10-Q filed on or before ``as_of``. Raises
    EquiMindError only when the filing list itself cannot be had."""
    refs = filings.filings(ticker, forms=FORMS, until=as_of)
    used: list[FilingRef] = []
    skipped: list[tuple[str, str]] = []
    by_concept: dict[str, list[XbrlFact]] = {}
    seen: set[tuple[str, str, date | None, date, str]] = set()
    for ref in _candidates(refs, as_of):
        if len(used) >= MAX_DOCUMENTS:
            break
        label = f"{ref.form} filed {ref.filed}"
        try:
            html = filings.primary_document(ref)
        except (EquiMindError, OSError) as e:
            skipped.append((label, f"document not available: {type(e).__name__}"))
            log.info("inline companyfacts: %s of %s not read (%s)", label, ticker, e)
            continue
        facts = filing_facts(html, ref)
        if not facts:
            skipped.append((label, "no readable inline XBRL facts"))
            continue
        used.append(ref)
        for x in facts:
            key = (x.qualified, x.unit, x.start, x.end, x.accession)
            if key not in seen:
                seen.add(key)
                by_concept.setdefault(x.qualified, []).append(x)
    if not used:
        return InlineCompanyFacts(None, (), tuple(skipped), len(refs))
    first = used[0]
    location = "inline XBRL of " + "; ".join(r.url or r.local_path or accession_of(r) for r in used)
    cf = CompanyFacts(cik=first.cik, entity_name=first.company or first.ticker or ticker,
                      ticker=first.ticker or ticker,
                      facts={k: tuple(sorted(v, key=lambda f: (f.end, f.start or f.end, f.filed)))
                             for k, v in by_concept.items()},
                      origin=first.origin, location=location)
    return InlineCompanyFacts(cf, tuple(used), tuple(skipped), len(refs))
