"""Snapshot twin of Yahoo's news: recorded headlines with their publish times, served as of a date, no network.

Layouts read (any of them may hold a ticker; see ``../shared/corpus/README.md``):

- ``news/yahoo/TICKER_news.csv`` (source yahoo_finance; written by ``equimind snapshot record`` from yfinance):
  symbol, publishedDate, title, site, url, text; publishedDate is ISO-8601 with a UTC offset
  (``2025-05-28T21:45:00+00:00``); a time without an offset is a ParseError, never guessed.
- ``news/fmp/TICKER_news.csv`` (source fmp; Financial Modeling Prep stock-news): symbol, publishedDate, title,
  image, site, text, url; publishedDate ``YYYY-MM-DD HH:MM:SS`` without a zone, read as US/Eastern (FMP stamps New
  York time: NVDA's after-close earnings stories of 2025-05-28 are stamped 17:45-23:58).
- ``news/finnhub/TICKER_news.csv`` (source finnhub): headline, source, url, datetime; datetime
  ``YYYY-MM-DD HH:MM:SS`` in UTC (epoch seconds converted by pandas).

Every time is converted to UTC. An empty cell is a missing value: no url → de-duplicated by title and time; no
publisher, no summary → none (never a placeholder); no title or no time → the row is skipped (logged), never invented.

When several layouts hold the ticker they are merged, de-duplicated by url (else title + publish time); the first
layout in the order above wins a duplicate, and the result is ordered newest first (ties by url, then title), so two
runs give the same list.

The as-of rule and the limit. ``news(ticker, limit=N, until=D)`` returns the N most recent items published on or
before D, where D is a whole UTC calendar day: an item stamped any time on D (up to 23:59:59 UTC) counts, as a filing
filed on D or D's closing price does; FMP's 2025-05-01 21:00 Eastern is 2025-05-02 01:00 UTC and does not. This is
live yfinance's ``limit`` (``get_news(count=N)`` gives the N most recent headlines), moved back to the as-of date.
The default N is 20, the Protocol's and the live client's default: the market report and a research run read the
same number of headlines in both modes, and a run embeds 20 news documents instead of the ~1,000 recorded ones.
Items older than ``MAX_AGE_DAYS`` before D are not served: live yfinance has only current headlines, and a tone
computed from months-old news would pass for current sentiment. Nothing to serve raises ``NotFoundError`` naming the
recorded span and the fix, so the report says ``news: unavailable (...)`` instead of going quiet.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from zoneinfo import ZoneInfo

from equimind.core.documents import Origin, Source
from equimind.core.errors import NotFoundError, ParseError
from equimind.sources.base import NewsItem, normalise_ticker

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 20
MAX_AGE_DAYS = 30
EASTERN = ZoneInfo("America/New_York")


class Layout(StrEnum):
    """A recorded news layout; the value is its folder under ``news/``. Order = precedence for duplicates."""

    YAHOO = "yahoo"
    FMP = "fmp"
    FINNHUB = "finnhub"


def _fix(ticker: str) -> str:
    return (f"run without --snapshot for live Yahoo news, or record them with "
            f"`equimind snapshot record --tickers {ticker}`")


def _iso_with_offset(text: str) -> datetime:
    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if at.tzinfo is None:
        raise ValueError(f"publishedDate {text!r} has no UTC offset (expected e.g. 2025-05-28T21:45:00+00:00)")
    return at.astimezone(UTC)


def _eastern(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=EASTERN).astimezone(UTC)


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@dataclass(frozen=True)
class _Columns:
    """Where a layout keeps each field, and how its publish time reads."""

    title: str
    published: str
    publisher: str
    url: str
    summary: str | None
    parse_time: Callable[[str], datetime]
    source: Source


COLUMNS: dict[Layout, _Columns] = {
    Layout.YAHOO: _Columns("title", "publishedDate", "site", "url", "text", _iso_with_offset, Source.YAHOO_FINANCE),
    Layout.FMP: _Columns("title", "publishedDate", "site", "url", "text", _eastern, Source.FMP),
    Layout.FINNHUB: _Columns("headline", "datetime", "source", "url", None, _utc, Source.FINNHUB),
}


def _cell(row: Mapping[str, str | None], col: str | None) -> str | None:
    value = (row.get(col) or "").strip() if col else ""
    return value or None


def published_at(row: Mapping[str, str | None], layout: Layout) -> datetime | None:
    """A raw row's publish time in UTC (None when the cell is empty or unreadable; the reader reports those)."""
    cols = COLUMNS[layout]
    when = _cell(row, cols.published)
    try:
        return cols.parse_time(when) if when else None
    except ValueError:
        return None


def read_news_csv(path: Path, layout: Layout, ticker: str) -> list[NewsItem]:
    """One recorded news CSV → NewsItems (UTC times), in file order. ParseError names the file, the row and the fix."""
    cols = COLUMNS[layout]
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        need = [c for c in (cols.title, cols.published, cols.url) if c not in (reader.fieldnames or [])]
        if need:
            raise ParseError(f"{path}: missing columns {need}; a news/{layout.value}/ file has columns "
                             f"{', '.join(c for c in (cols.title, cols.published, cols.publisher, cols.url) if c)}")
        return [item for n, row in enumerate(reader, start=2) if (item := _item(row, cols, path, n, ticker))]


def _item(row: dict[str, str | None], cols: _Columns, path: Path, line: int, ticker: str) -> NewsItem | None:
    title, when = _cell(row, cols.title), _cell(row, cols.published)
    if title is None or when is None:
        log.info("%s row %d: no title or no publish time, skipped", path, line)
        return None
    try:
        at = cols.parse_time(when)
    except ValueError as e:
        raise ParseError(f"{path} row {line}: bad publish time ({e}); fix or remove the row") from e
    return NewsItem(ticker=ticker, title=title, publisher=_cell(row, cols.publisher), published_at=at,
                    url=_cell(row, cols.url), summary=_cell(row, cols.summary) or "", origin=Origin.SNAPSHOT,
                    source=cols.source)


def merge_news(groups: list[list[NewsItem]]) -> list[NewsItem]:
    """Items of several layouts (in precedence order) → one list without duplicates, newest first, deterministic."""
    seen: set[tuple[str, ...]] = set()
    out: list[NewsItem] = []
    for items in groups:
        for n in items:
            key = ("url", n.url) if n.url else ("title", n.title, n.published_at.isoformat())
            if key not in seen:
                seen.add(key)
                out.append(n)
    return sorted(out, key=lambda n: (-n.published_at.timestamp(), n.url or "", n.title))


class SnapshotNews:
    """NewsSource over ``news/{yahoo,fmp,finnhub}/TICKER_news.csv`` of a snapshot."""

    name = "news:snapshot"

    def __init__(self, corpus_dir: Path) -> None:
        self.dir = Path(corpus_dir) / "news"
        self._cache: dict[str, list[NewsItem]] = {}

    def _files(self, ticker: str) -> Iterator[tuple[Layout, Path]]:
        for layout in Layout:
            path = self.dir / layout.value / f"{ticker}_news.csv"
            if path.is_file():
                yield layout, path

    def tickers(self) -> list[str]:
        """Tickers with recorded news in any layout."""
        return sorted({p.name.removesuffix("_news.csv") for lay in Layout
                       for p in (self.dir / lay.value).glob("*_news.csv")})

    def recorded(self, ticker: str) -> list[NewsItem]:
        """Every recorded item of ``ticker``, merged and newest first (no as-of cut). NotFoundError when none."""
        t = normalise_ticker(ticker)
        if t not in self._cache:
            files = list(self._files(t))
            if not files:
                have = ", ".join(self.tickers()) or "none"
                raise NotFoundError(f"no recorded news for {t} in the snapshot {self.dir} (recorded: {have}); "
                                    + _fix(t))
            self._cache[t] = merge_news([read_news_csv(p, lay, t) for lay, p in files])
        return self._cache[t]

    def news(self, ticker: str, *, limit: int = DEFAULT_LIMIT, until: date | None = None) -> list[NewsItem]:
        """The ``limit`` most recent recorded items published on or before ``until`` (UTC day), at most
        ``MAX_AGE_DAYS`` older than it; newest first. NotFoundError (with the recorded span) when none."""
        if limit <= 0:
            raise ValueError(f"limit must be positive (got {limit})")
        items = self.recorded(ticker)
        if until is None:
            return items[:limit]
        first = until - timedelta(days=MAX_AGE_DAYS)
        served = [n for n in items if first <= n.published_at.date() <= until]
        if not served:
            raise NotFoundError(_none_served(normalise_ticker(ticker), items, first, until))
        return served[:limit]


def _none_served(ticker: str, items: list[NewsItem], first: date, until: date) -> str:
    """Why nothing is served, naming no date after ``until`` (the as-of rule holds for messages too)."""
    t = ticker
    older = next((n for n in items if n.published_at.date() <= until), None)
    why = ("every recorded headline was published after it" if older is None else
           f"the latest recorded one before it is from {older.published_at.date()}, "
           f"{(until - older.published_at.date()).days} days earlier: older than {MAX_AGE_DAYS} days is not "
           "current news")
    return f"no recorded news for {t} published from {first} to {until} ({why}); " + _fix(t)
