"""One loopback server (127.0.0.1, random port) answering as SEC EDGAR, Yahoo Finance and FRED at once, from the
recorded ``../shared/corpus``, so ``equimind snapshot record`` runs its live clients end to end.

SEC paths are ``ReplayServer``'s (tests/market_replay.py): the recorded company_tickers.json, submissions and
companyfacts bodies byte for byte, and the primary documents listed in ``sec/filings/manifest.csv`` (any other
filing is a 404, as it was not recorded). The rest is built from recorded data, reshaped to the live layouts:

  /v8/finance/chart/TICKER   Yahoo's chart JSON from prices/TICKER.csv (period1/period2 or range=1d; close and
                             adjclose both the recorded adjusted close; dividends and splits as events)
  /                          fc.yahoo.com's cookie page;  /v1/test/getcrumb  a crumb
  POST /xhr/ncp              Yahoo's news stream for the requested ticker from news/fmp/TICKER_news.csv (FMP items,
                             their US-Eastern times converted to UTC, newest first, ``snippetCount`` of them)
  /graph/fredgraph.csv?id=S  macro/S.csv as recorded (FRED's own CSV form)
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from market_replay import ReplayServer

EASTERN = ZoneInfo("America/New_York")


def chart_json(price_csv: Path, ticker: str, query: dict[str, str]) -> bytes:
    """Yahoo's /v8/finance/chart answer for the bars of ``price_csv`` inside [period1, period2)."""
    with price_csv.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    stamps = [int((datetime.fromisoformat(r["Date"]) + timedelta(hours=9, minutes=30)).timestamp()) for r in rows]
    if "period1" in query:
        lo, hi = int(query["period1"]), int(query.get("period2", "9999999999"))
        chosen = [(s, r) for s, r in zip(stamps, rows, strict=True) if lo <= s < hi]
    else:  # range=1d: the time-zone probe
        chosen = [(stamps[-1], rows[-1])]
    events: dict[str, dict[str, Any]] = {"dividends": {}, "splits": {}}
    for s, r in chosen:
        if float(r["Dividends"] or 0):
            events["dividends"][str(s)] = {"amount": float(r["Dividends"]), "date": s}
        if float(r["Stock Splits"] or 0):
            ratio = float(r["Stock Splits"])
            events["splits"][str(s)] = {"date": s, "numerator": ratio, "denominator": 1.0,
                                        "splitRatio": f"{ratio:g}:1"}
    closes = [float(r["Close"]) for _, r in chosen]
    meta = {"currency": "USD", "symbol": ticker, "exchangeName": "NMS", "fullExchangeName": "NasdaqGS",
            "instrumentType": "EQUITY", "firstTradeDate": stamps[0], "regularMarketTime": stamps[-1],
            "gmtoffset": -18000, "timezone": "EST", "exchangeTimezoneName": "America/New_York",
            "regularMarketPrice": float(rows[-1]["Close"]), "dataGranularity": "1d", "range": "",
            "validRanges": ["1d", "5d", "1mo", "3mo", "6mo", "1y", "2y", "5y", "10y", "ytd", "max"]}
    quote = {k.lower(): [float(r[k]) for _, r in chosen] for k in ("Open", "High", "Low", "Close")}
    quote["volume"] = [int(float(r["Volume"])) for _, r in chosen]
    result = {"meta": meta, "timestamp": [s for s, _ in chosen], "events": events,
              "indicators": {"quote": [quote], "adjclose": [{"adjclose": closes}]}}
    return json.dumps({"chart": {"result": [result], "error": None}}).encode()


def news_json(news_csv: Path, count: int) -> bytes:
    """Yahoo's /xhr/ncp news stream built from a recorded FMP stock-news CSV (newest ``count`` items)."""
    items = []
    with news_csv.open(newline="", encoding="utf-8") as f:
        for n, r in enumerate(csv.DictReader(f)):
            when = datetime.fromisoformat(r["publishedDate"]).replace(tzinfo=EASTERN).astimezone(UTC)
            items.append({"id": f"fmp-{n}", "content": {
                "title": r["title"], "pubDate": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "summary": r["text"],
                "provider": {"displayName": r["site"]}, "canonicalUrl": {"url": r["url"]}}})
    items.sort(key=lambda i: i["content"]["pubDate"], reverse=True)
    return json.dumps({"data": {"tickerStream": {"stream": items[:count]}}}).encode()


class SnapshotReplayServer(ReplayServer):
    """``ReplayServer`` plus Yahoo (chart, cookie, crumb, news) and FRED (fredgraph.csv) from the corpus."""

    def __init__(self, corpus_dir: Path) -> None:
        super().__init__(corpus_dir)
        self.corpus_dir = corpus_dir
        self.posts: list[tuple[str, dict[str, Any]]] = []
        self.extra["/"] = ("text/html", b"<html>fc.yahoo.com</html>")
        self.extra["/v1/test/getcrumb"] = ("text/plain", b"replaycrumb")
        self.extra["/graph/fredgraph.csv"] = self._fred
        for path in sorted((corpus_dir / "prices").glob("*.csv")):
            self.extra[f"/v8/finance/chart/{path.stem}"] = (
                lambda q, p=path: ("application/json", chart_json(p, p.stem, q)))

    def _fred(self, query: dict[str, str]) -> tuple[str, bytes] | None:
        path = self.corpus_dir / "macro" / f"{query.get('id', '')}.csv"
        return ("text/csv", path.read_bytes()) if path.is_file() else None

    def news_body(self, payload: dict[str, Any]) -> bytes | None:
        config = payload.get("serviceConfig", {})
        tickers = config.get("s") or [""]
        path = self.corpus_dir / "news" / "fmp" / f"{tickers[0]}_news.csv"
        if not path.is_file():
            return json.dumps({"data": {"tickerStream": {"stream": []}}}).encode()
        return news_json(path, int(config.get("snippetCount", 10)))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()
        server = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.posts.append((parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}))
                body = server.news_body(payload) if parts.path == "/xhr/ncp" else None
                if body is None:
                    self._send(404, b"not found", "text/plain")
                else:
                    self._send(200, body, "application/json")

        return Handler
