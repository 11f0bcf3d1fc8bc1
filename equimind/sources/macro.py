"""Macro context from FRED (CPI, Fed funds, GDP, VIX), LBMA (gold) and the World Bank (US GDP; GDP growth and
inflation of the company's main markets), point-in-time and cached.

With ``settings.fred_api_key`` the FRED API is asked for the vintage known on the as-of date (ALFRED real-time
period), so revisions never leak back. Without a key the public ``fredgraph.csv`` download (latest vintage) is used
and an observation counts only after a stated publication lag (e.g. CPI ~45 days after the month starts); the
provenance says which. World Bank annual values count from 1 July of the following year (stated assumption).

Gold. FRED's LBMA series (GOLDAMGBD228NLBM) ended in January 2022, when LBMA withdrew it. The maintained daily source
is LBMA's own public price file (``prices.lbma.org.uk/json/gold_pm.json``: the LBMA Gold Price PM, set by the 15:00
London auction that ICE Benchmark Administration runs). A day's price counts from the next day (the live rule for daily
series) and is stale after 10 days, as every daily series here.

Main markets. ``report(as_of, markets=...)`` takes ISO 3166 alpha-2 codes (``analytics.markets`` reads them from the
revenue-by-country facts of the company's own 10-K); the World Bank's real GDP growth (NY.GDP.MKTP.KD.ZG) and consumer
price inflation (FP.CPI.TOTL.ZG) are reported for each, and for the US when no market is given.

Nothing here invents a number: a series that cannot be had (no network, stale, unknown) becomes a ``Degradation``;
when every series fails the whole block is ``macro: unavailable (<reason>)``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Protocol, runtime_checkable

import httpx

from equimind.core.config import Settings
from equimind.core.degraded import Degradation
from equimind.core.errors import EquiMindError, NotFoundError, ParseError, SourceError
from equimind.core.research import Figure
from equimind.sources.http import HttpPolicy, PoliteHttpClient, UnreachableError, validate_json

log = logging.getLogger(__name__)

DAY_S = 86_400.0
FRED_GRAPH_URL = "https://fred.stlouisfed.org"


@dataclass(frozen=True)
class Series:
    key: str
    name: str
    series_id: str
    unit: str
    publication_lag_days: int  # keyless mode: observation date + lag must be <= as-of
    max_age_days: int  # older than this at the as-of date = stale
    source: str = "fred"  # who publishes it: "fred" | "lbma"


FRED_SERIES: tuple[Series, ...] = (
    Series("cpi", "US CPI, all urban consumers (index 1982-84=100)", "CPIAUCSL", "index", 45, 100),
    Series("fed_funds", "Effective federal funds rate", "DFF", "percent", 1, 10),
    Series("gdp", "US nominal GDP (SAAR)", "GDP", "billions USD", 120, 240),
    Series("vix", "CBOE volatility index (VIX)", "VIXCLS", "index", 1, 10),
)
GOLD = Series("gold", "Gold price, LBMA PM auction (USD)", "LBMA_GOLD_PM", "USD/troy oz", 1, 10, source="lbma")
LBMA_GOLD_PATH = "/json/gold_pm.json"
WORLD_BANK_GDP = ("NY.GDP.MKTP.CD", "US GDP, current USD (World Bank)", "USD")


@dataclass(frozen=True)
class WbIndicator:
    key: str
    code: str
    name: str


WORLD_BANK_PANEL: tuple[WbIndicator, ...] = (
    WbIndicator("gdp_growth", "NY.GDP.MKTP.KD.ZG", "Real GDP growth"),
    WbIndicator("inflation", "FP.CPI.TOTL.ZG", "Consumer price inflation"),
)
WB_RULE = "latest; a year's value counted from 1 July of the next year"
WB_STALE_YEARS = 3  # a latest known year older than as_of.year - 3 is stale


@dataclass(frozen=True)
class Observation:
    day: date
    value: float


@dataclass(frozen=True)
class MacroResult:
    figures: tuple[Figure, ...]
    degraded: tuple[Degradation, ...]


@runtime_checkable
class MacroSource(Protocol):
    """What the market report needs from a macro source: ``MacroClient`` (live) and ``SnapshotMacro`` (recorded)."""

    name: str

    def report(self, as_of: date, *, markets: Sequence[str] = ()) -> MacroResult:
        """Figures known on ``as_of`` (World Bank panel for ``markets``, ISO alpha-2; the US when empty); a series
        that cannot be had is a Degradation, never a raise."""
        ...

    def close(self) -> None:
        ...


def parse_fred_json(obj: Any) -> list[Observation]:
    """FRED /fred/series/observations JSON → observations ('.' = missing, skipped)."""
    if not isinstance(obj, dict) or "observations" not in obj:
        raise ParseError("FRED response has no 'observations'; check the series id / API key")
    out = []
    for o in obj["observations"]:
        if o.get("value") not in (None, ".", ""):
            out.append(Observation(date.fromisoformat(o["date"]), float(o["value"])))
    return sorted(out, key=lambda o: o.day)


def parse_fred_csv(body: bytes) -> list[Observation]:
    """fredgraph.csv (``observation_date,SERIES`` or ``DATE,SERIES``) → observations."""
    rows = list(csv.reader(io.StringIO(body.decode("utf-8"))))
    if not rows or len(rows[0]) < 2:
        raise ParseError("FRED CSV has no header/columns")
    out = []
    for r in rows[1:]:
        if len(r) >= 2 and r[1] not in ("", "."):
            out.append(Observation(date.fromisoformat(r[0]), float(r[1])))
    return out


def parse_world_bank(obj: Any) -> list[Observation]:
    """World Bank v2 JSON ``[meta, rows]`` → one observation per year (dated 31 December)."""
    if not isinstance(obj, list) or len(obj) < 2 or not isinstance(obj[1], list):
        message = obj[0].get("message") if isinstance(obj, list) and obj and isinstance(obj[0], dict) else obj
        raise ParseError(f"World Bank response is not [meta, rows]: {message}")
    out = [Observation(date(int(r["date"]), 12, 31), float(r["value"])) for r in obj[1] if r.get("value") is not None]
    return sorted(out, key=lambda o: o.day)


def parse_lbma(obj: Any) -> list[Observation]:
    """LBMA price JSON (``[{"d": "2025-06-30", "v": [usd, gbp, eur]}, ...]``) → USD observations. Total: a row with
    a bad date or no positive USD price is skipped; a body that is not a list raises ParseError."""
    if not isinstance(obj, list):
        raise ParseError("LBMA price file is not a list of {d, v} rows; check the URL (…/json/gold_pm.json)")
    out: dict[date, float] = {}
    for row in obj:
        try:
            day = date.fromisoformat(str(row["d"]))
            usd = float(row["v"][0])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if usd > 0:
            out[day] = usd
    return [Observation(d, v) for d, v in sorted(out.items())]


def parse_world_bank_panel(obj: Any) -> dict[str, tuple[str, list[Observation]]]:
    """World Bank v2 JSON for several countries → {ISO alpha-2: (the World Bank's country name, yearly
    observations)}. Rows without a value or with an unreadable year are skipped."""
    if not isinstance(obj, list) or len(obj) < 2 or not isinstance(obj[1], list):
        message = obj[0].get("message") if isinstance(obj, list) and obj and isinstance(obj[0], dict) else obj
        raise ParseError(f"World Bank response is not [meta, rows]: {message}")
    out: dict[str, tuple[str, list[Observation]]] = {}
    for r in obj[1]:
        try:
            code, name = str(r["country"]["id"]).upper(), str(r["country"].get("value") or r["country"]["id"])
            entry = out.setdefault(code, (name, []))
            if r.get("value") is not None:
                entry[1].append(Observation(date(int(r["date"]), 12, 31), float(r["value"])))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return {k: (n, sorted(v, key=lambda o: o.day)) for k, (n, v) in out.items()}


class MacroClient:
    """Live FRED + World Bank. ``report(as_of)`` never raises for a missing series; it degrades instead."""

    name = "macro"

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                 fred_graph_url: str | None = None, series: Sequence[Series] = FRED_SERIES,
                 http: PoliteHttpClient | None = None, max_rps: float = 2.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.api_key = settings.fred_api_key
        self.fred_url = settings.fred_base_url.rstrip("/")
        self.graph_url = (fred_graph_url or settings.fred_graph_url).rstrip("/")
        self.wb_url = settings.worldbank_base_url.rstrip("/")
        self.lbma_url = settings.lbma_base_url.rstrip("/")
        self.series = tuple(series)
        policy = HttpPolicy(max_rps=max_rps, timeout_s=settings.http_timeout_s, retries=settings.http_retries)
        self.http = http or PoliteHttpClient(source_name="macro", user_agent="equimind/0.1 (macro)",
                                             cache_dir=settings.http_cache_path, policy=policy, transport=transport,
                                             sleep=sleep)

    def close(self) -> None:
        self.http.close()

    def fred(self, s: Series, as_of: date) -> tuple[list[Observation], dict[str, Any]]:
        """Observations known on ``as_of`` and how that was decided."""
        if self.api_key:
            params = {"series_id": s.series_id, "api_key": self.api_key, "file_type": "json",
                      "observation_end": as_of.isoformat(), "realtime_start": as_of.isoformat(),
                      "realtime_end": as_of.isoformat(), "sort_order": "desc", "limit": "20"}
            url = f"{self.fred_url}/fred/series/observations"
            obs = parse_fred_json(self.http.get_json(url, params=params, max_age_s=DAY_S))
            return obs, {"url": url, "vintage": f"as known on {as_of} (ALFRED real-time period)"}
        url = f"{self.graph_url}/graph/fredgraph.csv"
        body = self.fred_csv(s.series_id)
        cutoff = as_of - timedelta(days=s.publication_lag_days)
        obs = [o for o in parse_fred_csv(body) if o.day <= cutoff]
        return obs, {"url": f"{url}?id={s.series_id}", "vintage": "latest (no API key); observation counted "
                     f"{s.publication_lag_days} days after its date as a publication lag"}

    def fred_csv(self, series_id: str) -> bytes:
        """The keyless ``fredgraph.csv`` download of one series, as served (latest vintage; cached a day)."""
        return self.http.get_bytes(f"{self.graph_url}/graph/fredgraph.csv", params={"id": series_id},
                                   max_age_s=DAY_S)

    def world_bank_gdp(self, as_of: date) -> tuple[list[Observation], dict[str, Any]]:
        code = WORLD_BANK_GDP[0]
        url = f"{self.wb_url}/v2/country/USA/indicator/{code}"
        obs = parse_world_bank(self.http.get_json(url, params={"format": "json", "per_page": "100"},
                                                  max_age_s=7 * DAY_S))
        known = [o for o in obs if date(o.day.year + 1, 7, 1) <= as_of]
        return known, {"url": url, "vintage": "latest; a year's value counted from 1 July of the next year"}

    def gold_json(self) -> bytes:
        """LBMA's gold PM price file, as served (cached a day)."""
        return self.http.get_bytes(f"{self.lbma_url}{LBMA_GOLD_PATH}", validate=validate_json, max_age_s=DAY_S)

    def gold(self, as_of: date) -> tuple[list[Observation], dict[str, Any]]:
        cutoff = as_of - timedelta(days=GOLD.publication_lag_days)
        obs = [o for o in parse_lbma(json.loads(self.gold_json())) if o.day <= cutoff]
        return obs, {"url": f"{self.lbma_url}{LBMA_GOLD_PATH}", "vintage": "LBMA Gold Price PM (IBA auction, "
                     "15:00 London); a day's price counted from the next day"}

    def world_bank_panel_json(self, indicator: str, countries: Sequence[str]) -> Any:
        """One World Bank indicator for several countries (ISO alpha-2, ';'-joined as the API takes them)."""
        url = f"{self.wb_url}/v2/country/{';'.join(countries)}/indicator/{indicator}"
        return self.http.get_json(url, params={"format": "json", "per_page": "20000",
                                                   "date": f"2000:{date.today().year}"},
                                  max_age_s=7 * DAY_S)

    def world_bank_panel(self, as_of: date, markets: Sequence[str]) -> MacroResult:
        countries = _markets(markets)
        figures: list[Figure] = []
        degraded: list[Degradation] = []
        for ind in WORLD_BANK_PANEL:
            url = f"{self.wb_url}/v2/country/{';'.join(countries)}/indicator/{ind.code}"
            try:
                panel = parse_world_bank_panel(self.world_bank_panel_json(ind.code, countries))
            except EquiMindError as e:
                degraded.append(Degradation(capability=f"macro.world_bank_{ind.key}", reason=f"unavailable ({e})"))
                continue
            panel_figures(ind, panel, countries, as_of, {"url": url, "vintage": WB_RULE}, figures, degraded)
        return MacroResult(tuple(figures), tuple(degraded))

    def report(self, as_of: date, *, markets: Sequence[str] = ()) -> MacroResult:
        figures: list[Figure] = []
        degraded: list[Degradation] = []
        for s in self.series:
            try:
                obs, how = self.fred(s, as_of)
            except (SourceError, ParseError, NotFoundError) as e:
                degraded.append(Degradation(capability=f"macro.{s.key}", reason=f"unavailable ({e})"))
                if isinstance(e, UnreachableError):  # no network: do not try the other series
                    return _all_unavailable(f"no network: {e}")
                continue
            _series_figures(s, obs, how, as_of, figures, degraded)
        try:
            obs, how = self.gold(as_of)
            _series_figures(GOLD, obs, how, as_of, figures, degraded)
        except (EquiMindError, ValueError) as e:
            degraded.append(Degradation(capability="macro.gold", reason=f"unavailable ({e})"))
        try:
            obs, how = self.world_bank_gdp(as_of)
            _wb_figure(obs, how, figures, degraded)
        except EquiMindError as e:
            degraded.append(Degradation(capability="macro.world_bank_gdp", reason=f"unavailable ({e})"))
        panel = self.world_bank_panel(as_of, markets)
        figures += panel.figures
        degraded += panel.degraded
        if not figures:
            return _all_unavailable("; ".join(d.reason for d in degraded))
        return MacroResult(tuple(figures), tuple(degraded))


def _markets(markets: Sequence[str]) -> tuple[str, ...]:
    """ISO alpha-2 codes, upper-case, once each, in the given order; the US when none is given."""
    out: list[str] = []
    for m in markets:
        c = m.strip().upper()
        if len(c) == 2 and c.isalpha() and c not in out:
            out.append(c)
    return tuple(out) or ("US",)


def panel_figures(ind: WbIndicator, panel: dict[str, tuple[str, list[Observation]]], countries: Sequence[str],
                  as_of: date, how: dict[str, Any], figures: list[Figure], degraded: list[Degradation]) -> None:
    """One figure per country: its latest year known on ``as_of`` (a year counts from 1 July of the next)."""
    for code in countries:
        cap = f"macro.world_bank_{ind.key}_{code.lower()}"
        if code not in panel:
            degraded.append(Degradation(capability=cap, reason=f"the World Bank publishes no {ind.code} series for "
                                        f"{code} (it does not cover every economy, Taiwan among them)"))
            continue
        name, obs = panel[code]
        known = [o for o in obs if date(o.day.year + 1, 7, 1) <= as_of]
        if not known:
            degraded.append(Degradation(capability=cap, reason=f"{ind.code} {name}: no year published by {as_of}"))
            continue
        last = known[-1]
        if last.day.year < as_of.year - WB_STALE_YEARS:
            degraded.append(Degradation(capability=cap, reason=f"{ind.code} {name}: latest year {last.day.year} is "
                                        f"stale at {as_of}"))
            continue
        figures.append(Figure(
            id=f"macro_wb_{ind.key}_{code.lower()}", name=f"{ind.name}, {name} ({last.day.year}, World Bank)",
            value=last.value, unit="percent", as_of=last.day,
            formula=f"World Bank {ind.code}, {name}, latest year known on the as-of date",
            provenance={"source": "world_bank", "indicator": ind.code, "country": code, "year": last.day.year,
                        **how}))


def _all_unavailable(reason: str) -> MacroResult:
    return MacroResult((), (Degradation(capability="macro", reason=f"unavailable ({reason})"),))


def _series_figures(s: Series, obs: list[Observation], how: dict[str, Any], as_of: date,
                    figures: list[Figure], degraded: list[Degradation]) -> None:
    if not obs:
        degraded.append(Degradation(capability=f"macro.{s.key}", reason=f"{s.series_id}: no observation by {as_of}"))
        return
    last = obs[-1]
    if (as_of - last.day).days > s.max_age_days + s.publication_lag_days:
        degraded.append(Degradation(capability=f"macro.{s.key}",
                                    reason=f"{s.series_id}: latest observation {last.day} is stale at {as_of}"))
        return
    prov = {"source": s.source, "series_id": s.series_id, "observation_date": last.day, **how}
    publisher = "FRED" if s.source == "fred" else s.source.upper()
    figures.append(Figure(id=f"macro_{s.key}", name=s.name, value=last.value, unit=s.unit, as_of=last.day,
                          formula=f"{publisher} {s.series_id} latest observation", provenance=prov))
    if s.key == "cpi":
        year_ago = next((o for o in obs if o.day == date(last.day.year - 1, last.day.month, last.day.day)), None)
        if year_ago is not None:
            figures.append(Figure(
                id="macro_cpi_yoy", name="US CPI inflation, year over year", value=last.value / year_ago.value - 1,
                unit="ratio", as_of=last.day, formula="cpi / cpi 12 months earlier - 1",
                inputs={"cpi": last.value, "cpi_year_ago": year_ago.value}, provenance=prov))


def _wb_figure(obs: list[Observation], how: dict[str, Any], figures: list[Figure],
               degraded: list[Degradation]) -> None:
    code, name, unit = WORLD_BANK_GDP
    if not obs:
        degraded.append(Degradation(capability="macro.world_bank_gdp", reason="no annual value published yet"))
        return
    last = obs[-1]
    figures.append(Figure(id="macro_world_bank_gdp", name=name, value=last.value, unit=unit, as_of=last.day,
                          formula=f"World Bank {code}, latest year", provenance={"source": "world_bank",
                                                                               "indicator": code, **how}))
