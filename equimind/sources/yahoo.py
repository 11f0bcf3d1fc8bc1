"""Yahoo Finance through yfinance: daily OHLCV (2 years by default), company profile, news headlines.

Every failure (network, Yahoo refusing, an empty answer) raises a named error: ``SourceError`` when Yahoo cannot be
reached or answers with an error, ``NotFoundError`` when it has nothing for the ticker. There is no fallback: never
synthetic data, never a placeholder price.

yfinance keeps caches (time zones, cookies) on disk; they are pointed at ``EQUIMIND_HOME/yfinance`` so nothing is
written outside the home folder. yfinance holds that location (and its HTTP session) process-wide and fixes it at
first use, so in one process the first ``YahooFinance`` decides it. A ``session`` (curl_cffi) may be injected,
e.g. with a proxy.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from equimind.core.config import Settings
from equimind.core.documents import Origin, Source
from equimind.core.errors import NotFoundError, SourceError
from equimind.sources.base import CompanyProfile, NewsItem, PriceBar, PriceHistory, normalise_ticker
from equimind.sources.yahoo_endpoint import redirected_session

log = logging.getLogger(__name__)

DEFAULT_LOOKBACK_DAYS = 730
PROFILE_KEYS = ("sector", "industry", "country", "currency", "exchange", "website", "fullTimeEmployees",
                "longBusinessSummary", "quoteType")


def frame_to_history(frame: Any, ticker: str, *, location: str, origin: Origin = Origin.LIVE) -> PriceHistory:
    """A yfinance ``history()`` DataFrame (DatetimeIndex, Open/High/Low/Close/Volume[/Dividends/Stock Splits]) →
    PriceHistory. Rows without a close are dropped; the bar's day is the index's exchange-local date."""
    bars = []
    for ts, row in frame.iterrows():
        close = float(row["Close"])
        if math.isnan(close):
            continue
        bars.append(PriceBar(
            day=ts.date(), open=float(row["Open"]), high=float(row["High"]), low=float(row["Low"]), close=close,
            volume=float(row.get("Volume", 0.0) or 0.0), dividend=float(row.get("Dividends", 0.0) or 0.0),
            split=float(row.get("Stock Splits", 0.0) or 0.0),
        ))
    return PriceHistory(ticker=ticker, bars=tuple(bars), source=Source.YAHOO_FINANCE, origin=origin,
                        location=location)


def parse_news(raw: Any, ticker: str) -> list[NewsItem]:
    """yfinance ``Ticker.news`` (both the older flat layout and the newer ``{"content": {...}}`` one) → NewsItems.
    Items without a title or a publication time are skipped, never invented."""
    out = []
    for item in raw or []:
        if not isinstance(item, Mapping):
            continue
        content = item.get("content")
        c: Mapping[str, Any] = content if isinstance(content, Mapping) else item
        title = str(c.get("title") or "").strip()
        published = _published(c)
        if not title or published is None:
            continue
        provider = c.get("provider")
        publisher = provider.get("displayName") if isinstance(provider, Mapping) else c.get("publisher")
        url_obj = c.get("canonicalUrl") or c.get("clickThroughUrl")
        url = url_obj.get("url") if isinstance(url_obj, Mapping) else c.get("link")
        out.append(NewsItem(ticker=ticker, title=title, publisher=publisher, published_at=published, url=url,
                            summary=str(c.get("summary") or c.get("description") or "").strip()))
    return sorted(out, key=lambda n: n.published_at, reverse=True)


def _published(c: Mapping[str, Any]) -> datetime | None:
    if isinstance(c.get("providerPublishTime"), int | float):
        return datetime.fromtimestamp(float(c["providerPublishTime"]), tz=UTC)
    text = c.get("pubDate") or c.get("displayTime")
    if isinstance(text, str) and text:
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


class YahooFinance:
    """PriceSource, NewsSource and ProfileSource backed by yfinance (live network)."""

    name = "yahoo_finance"

    def __init__(self, settings: Settings, *, lookback_days: int = DEFAULT_LOOKBACK_DAYS,
                 session: Any | None = None, timeout_s: float | None = None) -> None:
        if lookback_days <= 0:
            raise ValueError(f"lookback_days must be positive (got {lookback_days})")
        import yfinance as yf

        cache = settings.home / "yfinance"
        cache.mkdir(parents=True, exist_ok=True)
        yf.set_tz_cache_location(str(cache))  # also the cookie cache
        yf.config.debug.hide_exceptions = False  # we want yfinance's errors raised (and named), not logged
        self._yf = yf
        self.lookback_days = lookback_days
        if session is None and settings.yahoo_endpoint:
            session = redirected_session(settings.yahoo_endpoint)
        self.session = session
        self.timeout_s = timeout_s if timeout_s is not None else settings.http_timeout_s

    def _ticker(self, ticker: str) -> Any:
        return self._yf.Ticker(ticker, session=self.session)

    def history(self, ticker: str, *, start: date | None = None, end: date | None = None) -> PriceHistory:
        t = normalise_ticker(ticker)
        last = end or datetime.now(UTC).date()
        first = start or last - timedelta(days=self.lookback_days)
        frame = self.history_frame(t, first, last)
        url = f"https://finance.yahoo.com/quote/{t}/history"
        return frame_to_history(frame, t, location=url).since(first).up_to(last)

    def history_frame(self, ticker: str, first: date, last: date) -> Any:
        """yfinance's own ``history()`` DataFrame of daily bars first..last (adjusted, with actions)."""
        t = normalise_ticker(ticker)
        try:
            frame = self._ticker(t).history(start=first.isoformat(), end=(last + timedelta(days=1)).isoformat(),
                                            interval="1d", auto_adjust=True, actions=True, timeout=self.timeout_s)
        except Exception as e:  # yfinance raises curl/HTTP/JSON errors of many kinds
            raise SourceError(f"Yahoo Finance price download for {t} failed ({type(e).__name__}: {e}); "
                              "check the network or use --snapshot DIR") from e
        if frame is None or len(frame) == 0:
            raise NotFoundError(f"Yahoo Finance returned no daily bars for {t} between {first} and {last}; "
                                "check the symbol (Yahoo uses e.g. BRK-B)")
        return frame

    def news(self, ticker: str, *, limit: int = 20, until: date | None = None) -> list[NewsItem]:
        """Yahoo's latest headlines (yfinance ``get_news``: today's, not an archive); ``until`` drops later ones."""
        t = normalise_ticker(ticker)
        try:
            raw = self._ticker(t).get_news(count=limit)
        except Exception as e:
            raise SourceError(f"Yahoo Finance news for {t} failed ({type(e).__name__}: {e})") from e
        items = parse_news(raw, t)
        if until is not None:
            items = [n for n in items if n.published_at.astimezone(UTC).date() <= until]
        return items[:limit]

    def profile(self, ticker: str) -> CompanyProfile:
        t = normalise_ticker(ticker)
        try:
            info = self._ticker(t).info
        except Exception as e:
            raise SourceError(f"Yahoo Finance profile for {t} failed ({type(e).__name__}: {e})") from e
        if not isinstance(info, Mapping) or not (info.get("longName") or info.get("shortName")):
            raise NotFoundError(f"Yahoo Finance has no profile for {t}; check the symbol")
        name = str(info.get("longName") or info.get("shortName"))
        return CompanyProfile(ticker=t, name=name, source=Source.YAHOO_FINANCE, origin=Origin.LIVE,
                              fields={k: info[k] for k in PROFILE_KEYS if info.get(k) not in (None, "")})
