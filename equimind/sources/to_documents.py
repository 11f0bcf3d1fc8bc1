"""Market data → ``models.Document`` for the ingest pipeline, each document dated by its own data (never by the
query's as-of date), so the as-of filter on ``filed_at`` keeps later data out of retrieval.

- prices: one document per calendar month of bars; ``filed_at`` = its last bar (a month is knowable once its last
  bar is); source_key ``yahoo_finance:prices:TICKER:YYYY-MM`` (a re-download of the current month keeps the key and
  changes the id: replace by source_key).
- fundamentals: one document per filing (accession) with the headline XBRL facts it reported; ``filed_at`` = the
  filing date, ``period_end`` = the latest period end in it; source_key ``sec_edgar:xbrl:CIK:ACCESSION``.
- news: one document per headline; ``filed_at`` = publication date (UTC); source_key ``SOURCE:news:TICKER:URL``
  (SOURCE = who served it: yahoo_finance live, or fmp / finnhub / yahoo_finance from a snapshot).
- filings: ``filing_document`` wraps text already extracted from a primary document (with its sections).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date

from equimind.core.documents import Document, Origin, Section, Source
from equimind.lexicon.forms import PERIODIC_FORMS
from equimind.sources.base import CompanyFacts, FilingRef, NewsItem, PriceHistory, XbrlFact

HEADLINE_CONCEPTS: tuple[tuple[str, str], ...] = (
    ("us-gaap:Revenues", "Revenue"),
    ("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", "Revenue"),
    ("us-gaap:GrossProfit", "Gross profit"),
    ("us-gaap:OperatingIncomeLoss", "Operating income"),
    ("us-gaap:NetIncomeLoss", "Net income"),
    ("us-gaap:EarningsPerShareDiluted", "Diluted EPS"),
    ("us-gaap:NetCashProvidedByUsedInOperatingActivities", "Operating cash flow"),
    ("us-gaap:StockholdersEquity", "Stockholders' equity"),
    ("us-gaap:Assets", "Total assets"),
    ("us-gaap:Liabilities", "Total liabilities"),
    ("us-gaap:LongTermDebtNoncurrent", "Long-term debt, non-current"),
    ("us-gaap:LongTermDebtCurrent", "Long-term debt, current portion"),
)


def _doc(source_key: str, text: str, **fields: object) -> Document:
    return Document(id=Document.make_id(source_key, text), source_key=source_key, text=text, **fields)  # type: ignore[arg-type]


def price_documents(history: PriceHistory, *, company: str | None = None, cik: str | None = None) -> list[Document]:
    """One Document per calendar month of daily bars."""
    months: dict[str, list[str]] = defaultdict(list)
    last: dict[str, date] = {}
    for b in history.bars:
        key = f"{b.day:%Y-%m}"
        extra = (f" dividend {b.dividend:g}" if b.dividend else "") + (f" split {b.split:g}:1" if b.split else "")
        months[key].append(f"{b.day}: open {b.open:.2f} high {b.high:.2f} low {b.low:.2f} close {b.close:.2f} "
                           f"volume {b.volume:,.0f}{extra}")
        last[key] = b.day
    docs = []
    for key, lines in months.items():
        title = f"{history.ticker} daily prices {key}"
        head = (f"{title} ({company or history.ticker}; Yahoo Finance, {history.adjustment}). "
                f"{len(lines)} trading days.")
        docs.append(_doc(
            f"yahoo_finance:prices:{history.ticker}:{key}", head + "\n" + "\n".join(lines),
            ticker=history.ticker, cik=cik, company=company, source=Source.YAHOO_FINANCE, origin=history.origin,
            form="prices", filed_at=last[key], period_end=last[key], url=history.location, title=title,
            meta=(("first_bar", lines[0][:10]), ("last_bar", f"{last[key]}"), ("adjustment", history.adjustment)),
        ))
    return docs


def _fact_line(label: str, f: XbrlFact) -> str:
    period = f"{f.start} to {f.end}" if f.start else f"at {f.end}"
    value = f"{f.value:,.2f}" if f.unit == "USD/shares" else f"{f.value:,.0f}"
    return f"{label} ({f.qualified}, {f.unit}), {period}: {value}"


def fundamentals_documents(cf: CompanyFacts, *, since: date | None = None,
                           forms: Sequence[str] = PERIODIC_FORMS) -> list[Document]:
    """One Document per filing with the headline facts it reported (as filed)."""
    by_filing: dict[str, list[tuple[str, XbrlFact]]] = defaultdict(list)
    for concept, label in HEADLINE_CONCEPTS:
        for f in cf.get(concept):
            if f.form in forms and (since is None or f.filed >= since):
                by_filing[f.accession].append((label, f))
    docs = []
    for acc, rows in sorted(by_filing.items()):
        first = rows[0][1]
        period_end = max(f.end for _, f in rows)
        rows.sort(key=lambda r: (r[1].end, r[1].start or r[1].end, r[0]), reverse=True)
        title = f"{cf.entity_name} {first.form} filed {first.filed}: XBRL financial data"
        head = (f"{cf.entity_name} ({cf.ticker or cf.cik}) financial data as reported in its {first.form} filed "
                f"{first.filed} (accession {acc}), period ended {period_end}.")
        docs.append(_doc(
            f"sec_edgar:xbrl:{cf.cik}:{acc}", head + "\n" + "\n".join(_fact_line(lbl, f) for lbl, f in rows),
            ticker=cf.ticker, cik=cf.cik, company=cf.entity_name, source=Source.SEC_EDGAR, origin=cf.origin,
            form="fundamentals", filed_at=first.filed, period_end=period_end, url=cf.location, title=title,
            meta=(("accession", acc), ("filing_form", first.form)),
        ))
    return docs


def news_documents(items: Iterable[NewsItem], *, company: str | None = None) -> list[Document]:
    docs = []
    for n in items:
        at = n.published_at.astimezone(UTC) if n.published_at.tzinfo is not None else n.published_at
        text = f"{n.title}\n{n.publisher or 'unknown publisher'}, {at:%Y-%m-%d %H:%M} UTC"
        text += f"\n{n.summary}" if n.summary else ""
        docs.append(_doc(
            f"{n.source.value}:news:{n.ticker}:{n.url or n.title}", text, ticker=n.ticker, cik=None, company=company,
            source=n.source, origin=n.origin, form="news", filed_at=at.date(),
            period_end=None, url=n.url, title=n.title, meta=(("publisher", n.publisher or ""),),
        ))
    return docs


def filing_document(ref: FilingRef, text: str, sections: Sequence[Section] = (), *,
                    origin: Origin | None = None) -> Document:
    """A filing's primary document as a Document (``text`` already extracted, ``sections`` offsets into it)."""
    key = f"sec_edgar:filing:{ref.cik}:{ref.accession or ref.local_path or ref.filed}"
    return _doc(key, text, ticker=ref.ticker, cik=ref.cik, company=ref.company, source=Source.SEC_EDGAR,
                origin=origin or ref.origin, form=ref.form, filed_at=ref.filed, period_end=ref.period_end,
                url=ref.url, title=f"{ref.company or ref.ticker} {ref.form} filed {ref.filed}",
                sections=tuple(sections), meta=(("accession", ref.accession),
                                                ("primary_document", ref.primary_document)))
