"""Market data → Documents, each dated by its own data."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from equimind.core.documents import Document, Origin, Source
from equimind.sources.base import NewsItem
from equimind.sources.market_snapshot import SnapshotPrices, SnapshotSec
from equimind.sources.to_documents import fundamentals_documents, news_documents, price_documents


def test_price_documents_one_per_month_dated_by_their_last_bar(corpus_dir: Path) -> None:
    h = SnapshotPrices(corpus_dir).history("NVDA", start=date(2025, 5, 1), end=date(2025, 6, 30))
    docs = price_documents(h, company="NVIDIA CORP")
    assert [d.source_key for d in docs] == ["yahoo_finance:prices:NVDA:2025-05", "yahoo_finance:prices:NVDA:2025-06"]
    june = docs[1]
    assert june.filed_at == date(2025, 6, 30) and june.form == "prices" and june.source is Source.YAHOO_FINANCE
    assert "2025-06-30: open" in june.text and "close 157.98" in june.text
    assert "2025-05-30" not in june.text and june.meta_dict()["first_bar"] == "2025-06-02"
    assert june.id == Document.make_id(june.source_key, june.text)
    assert [d.id for d in price_documents(h, company="NVIDIA CORP")] == [d.id for d in docs]  # idempotent


def test_split_day_is_written_out(corpus_dir: Path) -> None:
    h = SnapshotPrices(corpus_dir).history("NVDA", start=date(2024, 6, 1), end=date(2024, 6, 30))
    assert "split 10:1" in price_documents(h)[0].text


def test_fundamentals_documents_one_per_filing_as_filed(corpus_dir: Path) -> None:
    cf = SnapshotSec(corpus_dir).company_facts("NVDA")
    docs = fundamentals_documents(cf, since=date(2025, 1, 1))
    q1 = next(d for d in docs if d.meta_dict()["accession"] == "0001045810-25-000116")
    assert q1.filed_at == date(2025, 5, 28) and q1.period_end == date(2025, 4, 27)
    assert q1.form == "fundamentals" and q1.meta_dict()["filing_form"] == "10-Q"
    assert "Revenue (us-gaap:Revenues, USD), 2025-01-27 to 2025-04-27: 44,062,000,000" in q1.text
    assert "Diluted EPS (us-gaap:EarningsPerShareDiluted, USD/shares), 2025-01-27 to 2025-04-27: 0.76" in q1.text
    assert all(d.filed_at is not None and d.filed_at >= date(2025, 1, 1) for d in docs)


def test_news_documents_dated_by_publication() -> None:
    item = NewsItem(ticker="NVDA", title="Nvidia shares rise", publisher="Reuters",
                    published_at=datetime(2025, 6, 27, 14, 5, tzinfo=UTC), url="https://example.com/n1",
                    summary="A summary.", origin=Origin.LIVE)
    (doc,) = news_documents([item], company="NVIDIA CORP")
    assert doc.form == "news" and doc.filed_at == date(2025, 6, 27) and doc.title == "Nvidia shares rise"
    assert doc.text.startswith("Nvidia shares rise\nReuters, 2025-06-27 14:05 UTC\nA summary.")
