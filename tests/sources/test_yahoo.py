"""YahooFinance: offline, only the failure path can run (-> named errors); the pure converters run on the recorded
yfinance CSVs and on news items in both of yfinance's layouts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from equimind.core.config import Settings
from equimind.core.documents import Origin
from equimind.core.errors import SourceError
from equimind.sources.base import NewsSource, PriceSource, ProfileSource
from equimind.sources.market_snapshot import read_price_csv
from equimind.sources.yahoo import YahooFinance, frame_to_history, parse_news


@pytest.fixture(scope="module")
def dead_end_yahoo(tmp_path_factory: pytest.TempPathFactory) -> YahooFinance:
    """yfinance with a session whose proxy port is closed: every request fails at once, network or not."""
    from curl_cffi import requests as curl_requests

    session = curl_requests.Session(impersonate="chrome", proxies={"http": "http://127.0.0.1:9",
                                                                   "https": "http://127.0.0.1:9"})
    home = tmp_path_factory.mktemp("yhome")
    return YahooFinance(Settings(home=home), session=session, timeout_s=2.0)


def test_satisfies_protocols(dead_end_yahoo: YahooFinance) -> None:
    y = dead_end_yahoo
    assert isinstance(y, PriceSource) and isinstance(y, NewsSource) and isinstance(y, ProfileSource)


def test_price_failure_raises_named_error_not_placeholder(dead_end_yahoo: YahooFinance) -> None:
    with pytest.raises(SourceError, match="Yahoo Finance price download for NVDA failed"):
        dead_end_yahoo.history("NVDA")


def test_news_and_profile_failures_raise_named_errors(dead_end_yahoo: YahooFinance) -> None:
    with pytest.raises(SourceError, match="news for AAPL"):
        dead_end_yahoo.news("AAPL")
    with pytest.raises(SourceError, match="profile for AAPL"):
        dead_end_yahoo.profile("AAPL")


def test_frame_to_history_matches_the_csv_reader(corpus_dir: Path) -> None:
    import pandas as pd

    path = corpus_dir / "prices" / "NVDA.csv"
    frame = pd.read_csv(path, index_col="Date")
    frame.index = pd.to_datetime(frame.index, utc=True).tz_convert("America/New_York")
    h = frame_to_history(frame, "NVDA", location=str(path), origin=Origin.SNAPSHOT)
    ref = read_price_csv(path, "NVDA")
    assert h.bars == ref.bars
    assert h.splits() == ref.splits()


def test_parse_news_both_layouts_skips_undated_and_sorts_newest_first() -> None:
    raw = [
        {"uuid": "a", "title": "Nvidia beats estimates", "publisher": "Reuters", "link": "https://x/a",
         "providerPublishTime": 1751241600},
        {"id": "b", "content": {"title": "Chip stocks slump on export curbs", "pubDate": "2025-07-01T13:00:00Z",
                                "provider": {"displayName": "Bloomberg"},
                                "canonicalUrl": {"url": "https://x/b"}, "summary": "Shares fell."}},
        {"id": "c", "content": {"title": "No date here"}},
        "not a dict",
    ]
    items = parse_news(raw, "NVDA")
    assert [i.title for i in items] == ["Chip stocks slump on export curbs", "Nvidia beats estimates"]
    assert items[0].publisher == "Bloomberg" and items[0].url == "https://x/b" and items[0].summary == "Shares fell."
    assert items[1].published_at == datetime(2025, 6, 30, 0, 0, tzinfo=UTC)
