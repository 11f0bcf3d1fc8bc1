"""SnapshotNews over the recorded FMP and Finnhub headlines (and a yahoo-layout file written like `snapshot record`):
parsing each layout with its time zone, empty cells, the as-of cut, the limit, merging and clear errors."""

from __future__ import annotations

import csv
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from equimind.core.documents import Origin, Source
from equimind.core.errors import NotFoundError, ParseError
from equimind.sources.base import NewsSource
from equimind.sources.snapshot_news import DEFAULT_LIMIT, MAX_AGE_DAYS, Layout, SnapshotNews, read_news_csv
from equimind.sources.to_documents import news_documents

YAHOO_COLUMNS = ["symbol", "publishedDate", "title", "site", "url", "text"]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_is_a_news_source(corpus_dir: Path) -> None:
    assert isinstance(SnapshotNews(corpus_dir), NewsSource)
    assert SnapshotNews(corpus_dir).tickers() == ["AAPL", "NVDA"]


def test_fmp_times_are_us_eastern_converted_to_utc(corpus_dir: Path) -> None:
    items = read_news_csv(corpus_dir / "news" / "fmp" / "NVDA_news.csv", Layout.FMP, "NVDA")
    assert len(items) == 997
    first = items[0]  # file row 2: "2025-06-09 20:20:29" Eastern (EDT, UTC-4)
    assert first.title == "Buy These AI Stocks Today" and first.publisher == "investorplace.com"
    assert first.published_at == datetime(2025, 6, 10, 0, 20, 29, tzinfo=UTC)
    assert first.source is Source.FMP and first.origin is Origin.SNAPSHOT
    assert first.url == "https://investorplace.com/2025/06/buy-these-ai-stocks-today/"
    assert first.summary.startswith("Do we need to fear fallout")
    assert all(n.published_at.tzinfo is UTC for n in items)


def test_finnhub_times_are_utc(corpus_dir: Path) -> None:
    items = read_news_csv(corpus_dir / "news" / "finnhub" / "AAPL_news.csv", Layout.FINNHUB, "AAPL")
    assert len(items) == 234
    top = items[0]
    assert top.title.startswith("A diminished ‘Magnificent 7’ tests Big Tech’s role")
    assert top.published_at == datetime(2025, 4, 9, 9, 59, 13, tzinfo=UTC)
    assert top.publisher == "Yahoo" and top.source is Source.FINNHUB and top.summary == ""


def test_yahoo_layout_with_offsets_and_empty_cells(tmp_path: Path) -> None:
    path = _write(tmp_path / "news" / "yahoo" / "AMD_news.csv", YAHOO_COLUMNS, [
        ["AMD", "2025-05-28T21:45:00+00:00", "AMD beats", "Reuters", "https://example.com/a", "Summary."],
        ["AMD", "2025-05-28T18:00:00-04:00", "AMD no url, no site, no text", "", "", ""],
        ["AMD", "2025-05-27T10:00:00Z", "", "Reuters", "https://example.com/untitled", ""],  # no title: skipped
        ["AMD", "", "AMD no time", "Reuters", "https://example.com/untimed", ""],  # no time: skipped
    ])
    items = read_news_csv(path, Layout.YAHOO, "AMD")
    assert [n.title for n in items] == ["AMD beats", "AMD no url, no site, no text"]
    a, b = items
    assert a.published_at == datetime(2025, 5, 28, 21, 45, tzinfo=UTC) and a.source is Source.YAHOO_FINANCE
    assert b.published_at == datetime(2025, 5, 28, 22, 0, tzinfo=UTC)
    assert (b.url, b.publisher, b.summary) == (None, None, "")  # empty cells stay missing
    (doc_b,) = news_documents([b])
    assert "unknown publisher, 2025-05-28 22:00 UTC" in doc_b.text and doc_b.url is None


def test_a_time_without_offset_in_the_yahoo_layout_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "AMD_news.csv", YAHOO_COLUMNS,
                  [["AMD", "2025-05-28 21:45:00", "AMD beats", "Reuters", "https://example.com/a", ""]])
    with pytest.raises(ParseError, match=r"row 2: bad publish time .*no UTC offset"):
        read_news_csv(path, Layout.YAHOO, "AMD")


def test_missing_columns_name_the_expected_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "AMD_news.csv", ["symbol", "when", "title"], [["AMD", "x", "t"]])
    with pytest.raises(ParseError, match=r"missing columns \['publishedDate', 'url'\]"):
        read_news_csv(path, Layout.FMP, "AMD")


def test_as_of_cut_in_utc_with_the_limit(corpus_dir: Path) -> None:
    src = SnapshotNews(corpus_dir)
    items = src.news("AAPL", until=date(2025, 5, 1))
    assert len(items) == DEFAULT_LIMIT
    assert max(n.published_at for n in items) <= datetime(2025, 5, 1, 23, 59, 59, tzinfo=UTC)
    recorded = src.recorded("AAPL")
    later = [n for n in recorded if n.published_at.date() <= date(2025, 5, 1)]
    assert items == later[:DEFAULT_LIMIT]  # the most recent N on or before as-of, newest first
    assert [n.published_at for n in items] == sorted((n.published_at for n in items), reverse=True)
    # an FMP story stamped 2025-05-01 evening Eastern is 2025-05-02 in UTC: not served at as-of 2025-05-01
    evening = [n for n in recorded if n.published_at.date() == date(2025, 5, 2) and n.published_at.hour < 4]
    assert evening and not set(evening) & set(items)
    assert len(src.news("AAPL", limit=5, until=date(2025, 5, 1))) == 5


def test_nvda_before_its_recorded_news_and_long_after_are_clear(corpus_dir: Path) -> None:
    src = SnapshotNews(corpus_dir)
    with pytest.raises(NotFoundError, match=r"no recorded news for NVDA .* to 2025-05-01 \(every recorded headline "
                                            r"was published after it\).*equimind snapshot record --tickers NVDA"):
        src.news("NVDA", until=date(2025, 5, 1))
    with pytest.raises(NotFoundError, match=rf"older than {MAX_AGE_DAYS} days is not current news"):
        src.news("NVDA", until=date(2025, 9, 30))


def test_ticker_without_recorded_news_names_the_fix(corpus_dir: Path) -> None:
    with pytest.raises(NotFoundError, match=r"no recorded news for TSLA in the snapshot .*\(recorded: AAPL, NVDA\); "
                                            r"run without --snapshot .*equimind snapshot record --tickers TSLA"):
        SnapshotNews(corpus_dir).news("TSLA", until=date(2025, 6, 1))


def test_layouts_merge_without_duplicates_in_a_fixed_order(corpus_dir: Path, tmp_path: Path) -> None:
    fmp = corpus_dir / "news" / "fmp" / "NVDA_news.csv"
    (tmp_path / "news" / "fmp").mkdir(parents=True)
    shutil.copy(fmp, tmp_path / "news" / "fmp" / "NVDA_news.csv")
    recorded = read_news_csv(fmp, Layout.FMP, "NVDA")
    dup = recorded[0]  # the same story recorded again from yfinance, by url
    _write(tmp_path / "news" / "yahoo" / "NVDA_news.csv", YAHOO_COLUMNS, [
        ["NVDA", dup.published_at.isoformat(), dup.title + " (Yahoo)", "Yahoo", dup.url or "", ""],
        ["NVDA", "2025-06-10T12:00:00+00:00", "Only on Yahoo", "Yahoo", "", ""],
        ["NVDA", "2025-06-10T12:00:00+00:00", "Only on Yahoo", "Yahoo", "", ""],  # same title + time: one item
    ])
    src = SnapshotNews(tmp_path)
    merged = src.recorded("NVDA")
    assert len(merged) == len(recorded) + 1
    assert merged[0].title == "Only on Yahoo" and merged[0].source is Source.YAHOO_FINANCE
    winner = next(n for n in merged if n.url == dup.url)
    assert winner.title.endswith("(Yahoo)")  # the yahoo layout comes first
    assert SnapshotNews(tmp_path).recorded("NVDA") == merged  # deterministic
    assert len({n.url for n in merged if n.url}) == len([n for n in merged if n.url])
