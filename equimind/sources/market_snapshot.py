"""Snapshot twins of the live market sources, reading the recorded corpus (``--snapshot DIR``), with no network.

Layout read (see ``../shared/corpus/README.md``):
  prices/TICKER.csv                       yfinance ``Ticker.history()`` CSV (Date with UTC offset, OHLCV, Dividends,
                                          Stock Splits)
  sec/company_tickers.json                ticker → CIK
  sec/submissions/CIK##########.json      SEC submissions responses
  sec/companyfacts/CIK##########.json     SEC XBRL companyfacts responses
  sec/filings/manifest.csv + TICKER/*.html  primary documents of some 10-K/10-Q filings
The JSON goes through the same ``parse_*`` functions as the live client.
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from functools import cached_property
from pathlib import Path

from equimind.core.documents import Origin, Source
from equimind.core.errors import NotFoundError, ParseError
from equimind.lexicon.forms import PERIODIC_FORMS
from equimind.sources.base import (
    CompanyFacts,
    CompanyProfile,
    FilingRef,
    PriceBar,
    PriceHistory,
    TickerInfo,
    normalise_ticker,
)
from equimind.sources.sec_edgar import (
    document_url,
    load_json_file,
    pad_cik,
    parse_company_facts,
    parse_submissions,
    parse_ticker_map,
    profile_from_submissions,
    select_filings,
)

log = logging.getLogger(__name__)

SEC_BASE_URL = "https://www.sec.gov"
_PRICE_COLUMNS = ("Date", "Open", "High", "Low", "Close", "Volume")


def _require_dir(path: Path) -> Path:
    if not path.is_dir():
        raise NotFoundError(f"snapshot folder {path} does not exist; pass --snapshot pointing at shared/corpus")
    return path


def read_price_csv(path: Path, ticker: str) -> PriceHistory:
    """A yfinance history CSV → PriceHistory. The bar's day is the exchange-local date in the Date column."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in _PRICE_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ParseError(f"{path}: missing columns {missing}; expected yfinance history() columns")
            bars = [b for row in reader if (b := _bar(row)) is not None]
    except (ValueError, KeyError) as e:
        raise ParseError(f"{path}: malformed price row ({e})") from e
    return PriceHistory(ticker=ticker, bars=tuple(bars), source=Source.YAHOO_FINANCE, origin=Origin.SNAPSHOT,
                        location=str(path))


def _bar(row: dict[str, str]) -> PriceBar | None:
    close = float(row["Close"])
    if math.isnan(close):
        return None  # a holiday row with no trade
    return PriceBar(day=date.fromisoformat(row["Date"][:10]), open=float(row["Open"]), high=float(row["High"]),
                    low=float(row["Low"]), close=close, volume=float(row["Volume"] or 0),
                    dividend=float(row.get("Dividends") or 0.0), split=float(row.get("Stock Splits") or 0.0))


class SnapshotPrices:
    """PriceSource over ``prices/TICKER.csv``."""

    name = "yahoo_finance:snapshot"

    def __init__(self, corpus_dir: Path) -> None:
        self.dir = _require_dir(Path(corpus_dir)) / "prices"

    def tickers(self) -> list[str]:
        return sorted(p.stem for p in self.dir.glob("*.csv"))

    def history(self, ticker: str, *, start: date | None = None, end: date | None = None) -> PriceHistory:
        t = normalise_ticker(ticker)
        path = self.dir / f"{t}.csv"
        if not path.is_file():
            raise NotFoundError(f"no recorded prices for {t} in {self.dir} (recorded: {', '.join(self.tickers())});"
                                " run without --snapshot to download them")
        h = read_price_csv(path, t)
        if start is not None:
            h = h.since(start)
        return h.up_to(end) if end is not None else h


class SnapshotSec:
    """TickerResolver, FilingIndexSource, FactsSource and ProfileSource over the recorded ``sec/`` folder."""

    name = "sec_edgar:snapshot"

    def __init__(self, corpus_dir: Path, *, base_url: str = SEC_BASE_URL) -> None:
        self.dir = _require_dir(Path(corpus_dir)) / "sec"
        self.base_url = base_url

    @cached_property
    def _tickers(self) -> dict[str, TickerInfo]:
        path = self.dir / "company_tickers.json"
        if not path.is_file():
            raise NotFoundError(f"{path} is missing; the snapshot needs sec/company_tickers.json")
        return parse_ticker_map(load_json_file(str(path)))

    def ticker_map(self) -> dict[str, TickerInfo]:
        """Every ticker of the recorded SEC map with its registrant (what a question's company words resolve to)."""
        return dict(self._tickers)

    def resolve(self, ticker: str) -> TickerInfo:
        t = normalise_ticker(ticker)
        info = self._tickers.get(t)
        if info is None:
            raise NotFoundError(f"ticker {t!r} is not in the recorded company_tickers.json; check the symbol")
        return info

    def _recorded(self, folder: str, cik: str) -> Path:
        return self.dir / folder / f"CIK{pad_cik(cik)}.json"

    def recorded_facts_tickers(self) -> list[str]:
        ciks = {p.stem.removeprefix("CIK") for p in (self.dir / "companyfacts").glob("CIK*.json")}
        return sorted(i.ticker for i in self._tickers.values() if i.cik in ciks)

    def company_facts(self, ticker: str) -> CompanyFacts:
        info = self.resolve(ticker)
        path = self._recorded("companyfacts", info.cik)
        if not path.is_file():
            raise NotFoundError(
                f"no XBRL companyfacts recorded for {info.ticker} (CIK {info.cik}) in the snapshot; recorded: "
                f"{', '.join(self.recorded_facts_tickers())}; run without --snapshot to fetch them from SEC")
        return parse_company_facts(load_json_file(str(path)), ticker=info.ticker, origin=Origin.SNAPSHOT,
                                   location=str(path))

    def profile(self, ticker: str) -> CompanyProfile:
        info = self.resolve(ticker)
        path = self._recorded("submissions", info.cik)
        if path.is_file():
            return profile_from_submissions(load_json_file(str(path)), info.ticker, Origin.SNAPSHOT)
        return CompanyProfile(ticker=info.ticker, name=info.name, source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT,
                              fields={"cik": info.cik})

    def _manifest(self) -> list[dict[str, str]]:
        path = self.dir / "filings" / "manifest.csv"
        if not path.is_file():
            return []
        with path.open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    def _manifest_refs(self, info: TickerInfo) -> list[FilingRef]:
        out = []
        for row in self._manifest():
            if row["ticker"].upper() != info.ticker:
                continue
            acc, primary = row.get("accession_number") or "", row.get("primary_document") or ""
            out.append(FilingRef(
                cik=info.cik, ticker=info.ticker, company=row.get("company") or info.name, accession=acc,
                form=row["form"], filed=date.fromisoformat(row["filing_date"]),
                period_end=date.fromisoformat(row["period_of_report"]) if row.get("period_of_report") else None,
                primary_document=primary,
                url=document_url(self.base_url, info.cik, acc, primary) if acc and primary else None,
                origin=Origin.SNAPSHOT, local_path=str(self.dir / "filings" / row["path"]),
            ))
        return out

    def filings(self, ticker: str, *, forms: Sequence[str] = PERIODIC_FORMS,
                until: date | None = None) -> list[FilingRef]:
        """The recorded submissions list (when recorded) merged with the recorded primary documents."""
        info = self.resolve(ticker)
        local = {(r.form, r.filed): r for r in self._manifest_refs(info)}
        path = self._recorded("submissions", info.cik)
        refs: list[FilingRef] = []
        if path.is_file():
            listed = parse_submissions(load_json_file(str(path)), ticker=info.ticker, base_url=self.base_url,
                                       origin=Origin.SNAPSHOT)
            for r in listed:
                hit = local.pop((r.form, r.filed), None)
                refs.append(r if hit is None else replace(r, local_path=hit.local_path))
        refs.extend(local.values())
        return select_filings(refs, forms, until)

    def primary_document(self, ref: FilingRef) -> str:
        if ref.local_path is None or not Path(ref.local_path).is_file():
            raise NotFoundError(f"the primary document of {ref.ticker} {ref.form} filed {ref.filed} is not recorded "
                                "in the snapshot; run without --snapshot to download it")
        return Path(ref.local_path).read_text(encoding="utf-8", errors="replace")
