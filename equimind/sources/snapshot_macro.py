"""Snapshot twin of ``MacroClient``: the recorded FRED CSVs under ``macro/`` of a snapshot, with no network.

Layout read: ``macro/SERIES_ID.csv`` in FRED's own ``fredgraph.csv`` form (header ``observation_date,SERIES_ID``, one
observation a row, a missing value is an empty cell — never a zero); ``macro/lbma_gold_pm.json`` (LBMA's gold PM price
file as served, a day's price counted from the next business day); ``macro/worldbank/INDICATOR.json`` (the World
Bank v2 response for all countries, a year counted from 1 July of the next year). A file that is absent is a degraded
line naming ``equimind snapshot record``. Figures come out of the live client's own
figure code (``analytics.macro``), so a snapshot figure has the same id, formula and provenance keys as a live one.

The as-of rule. A file holds one vintage (the values as of when it was downloaded), not the values as first
published, so an observation counts only once it would have been published, by the lag table ``SNAPSHOT_SERIES``
(one row per series; ``lag_days`` are calendar days after the observation date, which FRED puts at the start of
the period):

- CPIAUCSL, monthly: from obs + 45 days (BLS publishes CPI ~10th-15th of the next month; the live client's lag)
- UNRATE, monthly: from obs + 40 days (BLS Employment Situation: first Friday of the next month, at latest ~10th)
- FEDFUNDS, monthly average: from obs + 35 days (known once the month ends, posted the next business days)
- A191RL1Q225SBEA and GDPC1, quarterly: from obs + 125 days (BEA's advance estimate, ~30 days after the quarter)
- DGS10 and VIXCLS, daily: from the next business day (H.15 and Cboe's close are posted the next business day)

The live keyless client counts nominal GDP 120 days after the observation date; here 125, because a Q3/Q4 advance
estimate (Oct 30, Jan 30) comes 121-122 days after its observation date. A business day is Monday-Friday minus the
holidays the file itself records (FRED writes a daily series' holidays as rows with an empty value); beyond the file's
last row only weekends are skipped. The provenance of every figure says that revisions are included. Shipped corpus:
the files were downloaded in April 2026, except GDPC1 (a late-August 2025 vintage, before BEA's annual update).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from equimind.core.degraded import Degradation
from equimind.core.errors import NotFoundError, ParseError
from equimind.core.research import Figure
from equimind.sources.macro import (
    GOLD,
    WORLD_BANK_PANEL,
    MacroResult,
    Observation,
    Series,
    _all_unavailable,  # the live client's own degraded-block and figure code, shared on purpose
    _markets,
    _series_figures,
    panel_figures,
    parse_fred_csv,
    parse_lbma,
    parse_world_bank_panel,
)

log = logging.getLogger(__name__)

VINTAGE_NOTE = ("single vintage as recorded in the snapshot (the values as of when the file was downloaded), so "
                "revisions published after the as-of date are included; these are not the values as first published")
GOLD_FILE = "lbma_gold_pm.json"  # LBMA's /json/gold_pm.json as served
FIX = "run without --snapshot (live FRED) or record the series with `equimind snapshot record`"
GOLD_FIX = "run without --snapshot (live LBMA) or record it with `equimind snapshot record`"
WB_FIX = "run without --snapshot (live World Bank) or record it with `equimind snapshot record`"


@dataclass(frozen=True)
class RecordedSeries:
    """One FRED series of the snapshot and when an observation of it counts (see the module's lag table)."""

    series: Series  # the live record: key, name, FRED id, unit, lag (days), staleness limit (days)
    daily: bool  # True: counted from the next business day; False: ``series.publication_lag_days`` after its date
    lag_rule: str

    def counted_from(self, day: date, holidays: frozenset[date]) -> date:
        """The first as-of date on which the observation dated ``day`` counts."""
        if not self.daily:
            return day + timedelta(days=self.series.publication_lag_days)
        d = day + timedelta(days=1)
        while d.weekday() >= 5 or d in holidays:
            d += timedelta(days=1)
        return d


def _monthly(key: str, name: str, sid: str, unit: str, lag: int, rule: str) -> RecordedSeries:
    return RecordedSeries(Series(key, name, sid, unit, lag, 100), daily=False, lag_rule=rule)


SNAPSHOT_SERIES: tuple[RecordedSeries, ...] = (
    _monthly("cpi", "US CPI, all urban consumers (index 1982-84=100)", "CPIAUCSL", "index", 45,
             "monthly; counted 45 days after the month's first day (BLS publishes CPI mid next month)"),
    _monthly("unemployment", "US unemployment rate", "UNRATE", "percent", 40,
             "monthly; counted 40 days after the month's first day (BLS Employment Situation, early next month)"),
    _monthly("fed_funds", "Effective federal funds rate (monthly average)", "FEDFUNDS", "percent", 35,
             "monthly average; counted 35 days after the month's first day (posted after the month ends)"),
    RecordedSeries(Series("real_gdp_growth", "US real GDP growth (% q/q, annualized)", "A191RL1Q225SBEA", "percent",
                          125, 240), daily=False,
                   lag_rule="quarterly; counted 125 days after the quarter's first day (BEA advance estimate)"),
    RecordedSeries(Series("real_gdp", "US real GDP (SAAR)", "GDPC1", "billions of chained 2017 USD", 125, 240),
                   daily=False,
                   lag_rule="quarterly; counted 125 days after the quarter's first day (BEA advance estimate)"),
    RecordedSeries(Series("treasury_10y", "10-year Treasury constant-maturity yield", "DGS10", "percent", 1, 10),
                   daily=True, lag_rule="daily; counted from the next business day"),
    RecordedSeries(Series("vix", "CBOE volatility index (VIX)", "VIXCLS", "index", 1, 10),
                   daily=True, lag_rule="daily; counted from the next business day"),
)


@dataclass(frozen=True)
class RecordedFile:
    """A parsed series file: observations with a value, and the dates whose cell is empty (missing, not zero)."""

    path: Path
    observations: tuple[Observation, ...]
    empty_days: frozenset[date]


def read_fred_file(path: Path, series_id: str) -> RecordedFile:
    """A fredgraph.csv file → its observations (empty cells skipped) and its empty days. ParseError when the
    header does not name ``series_id`` or a row is malformed."""
    body = path.read_bytes()
    header = body.split(b"\n", 1)[0].decode("utf-8-sig").strip().split(",")
    if len(header) != 2 or header[0] not in ("observation_date", "DATE") or header[1] != series_id:
        raise ParseError(f"{path}: header {header} is not FRED's 'observation_date,{series_id}'; re-download "
                         f"https://fred.stlouisfed.org/graph/fredgraph.csv?id={series_id}")
    try:
        obs = parse_fred_csv(body)
        empty = frozenset(date.fromisoformat(line.split(",")[0]) for line in body.decode("utf-8-sig").splitlines()[1:]
                          if line.strip() and line.split(",")[1].strip() in ("", "."))
    except (ValueError, IndexError) as e:
        raise ParseError(f"{path}: malformed row ({e}); expected 'YYYY-MM-DD,value'") from e
    return RecordedFile(path, tuple(sorted(obs, key=lambda o: o.day)), empty)


class SnapshotMacro:
    """MacroSource over ``macro/*.csv``. ``report(as_of)`` never raises for a missing series; it degrades."""

    name = "macro:snapshot"

    def __init__(self, corpus_dir: Path, *, series: tuple[RecordedSeries, ...] = SNAPSHOT_SERIES) -> None:
        self.dir = Path(corpus_dir) / "macro"
        self.series = series
        self._files: dict[str, RecordedFile] = {}

    def close(self) -> None:
        self._files.clear()

    def _file(self, rs: RecordedSeries) -> RecordedFile:
        sid = rs.series.series_id
        if sid not in self._files:
            path = self.dir / f"{sid}.csv"
            if not path.is_file():
                raise NotFoundError(f"{sid} is not recorded ({path} is missing); {FIX}")
            self._files[sid] = read_fred_file(path, sid)
        return self._files[sid]

    def known(self, rs: RecordedSeries, as_of: date) -> tuple[list[Observation], dict[str, Any]]:
        """The observations of ``rs`` counted on ``as_of`` and the provenance of that decision."""
        f = self._file(rs)
        obs = [o for o in f.observations if rs.counted_from(o.day, f.empty_days) <= as_of]
        how: dict[str, Any] = {"origin": "snapshot", "location": str(f.path), "vintage": VINTAGE_NOTE,
                               "publication_lag": rs.lag_rule}
        if obs:
            how["counted_from"] = rs.counted_from(obs[-1].day, f.empty_days)
        return obs, how

    def gold(self, as_of: date) -> tuple[list[Observation], dict[str, Any]]:
        """The recorded LBMA gold PM file; a day's price counts from the next business day (weekends skipped)."""
        path = self.dir / GOLD_FILE
        if not path.is_file():
            raise NotFoundError(f"gold is not recorded ({path} is missing); {GOLD_FIX}")
        try:
            obs = parse_lbma(json.loads(path.read_bytes()))
        except ValueError as e:
            raise ParseError(f"{path}: not LBMA's price JSON ({e}); {GOLD_FIX}") from e
        rule = RecordedSeries(GOLD, daily=True, lag_rule="daily; counted from the next business day")
        known = [o for o in obs if rule.counted_from(o.day, frozenset()) <= as_of]
        return known, {"origin": "snapshot", "location": str(path), "vintage": VINTAGE_NOTE,
                       "publication_lag": rule.lag_rule}

    def world_bank_panel(self, as_of: date, markets: Sequence[str]) -> MacroResult:
        figures: list[Figure] = []
        degraded: list[Degradation] = []
        countries = _markets(markets)
        for ind in WORLD_BANK_PANEL:
            path = self.dir / "worldbank" / f"{ind.code}.json"
            try:
                if not path.is_file():
                    raise NotFoundError(f"{ind.code} is not recorded ({path} is missing); {WB_FIX}")
                panel = parse_world_bank_panel(json.loads(path.read_bytes()))
            except (NotFoundError, ParseError, ValueError) as e:
                degraded.append(Degradation(capability=f"macro.world_bank_{ind.key}", reason=f"unavailable ({e})"))
                continue
            how = {"origin": "snapshot", "location": str(path), "vintage": VINTAGE_NOTE,
                   "publication_lag": "annual; a year's value counted from 1 July of the next year"}
            panel_figures(ind, panel, countries, as_of, how, figures, degraded)
        return MacroResult(tuple(figures), tuple(degraded))

    def report(self, as_of: date, *, markets: Sequence[str] = ()) -> MacroResult:
        if not self.dir.is_dir():
            return _all_unavailable(f"the snapshot has no macro/ folder ({self.dir}); {FIX}")
        figures: list[Figure] = []
        degraded: list[Degradation] = []
        for rs in self.series:
            try:
                obs, how = self.known(rs, as_of)
            except (NotFoundError, ParseError) as e:
                degraded.append(Degradation(capability=f"macro.{rs.series.key}", reason=f"unavailable ({e})"))
                continue
            _series_figures(rs.series, obs, how, as_of, figures, degraded)
        try:
            obs, how = self.gold(as_of)
            _series_figures(GOLD, obs, how, as_of, figures, degraded)
        except (NotFoundError, ParseError) as e:
            degraded.append(Degradation(capability="macro.gold", reason=f"unavailable ({e})"))
        panel = self.world_bank_panel(as_of, tuple(markets))
        figures += panel.figures
        degraded += panel.degraded
        if not figures:
            return _all_unavailable("; ".join(d.reason for d in degraded) or "no series configured")
        return MacroResult(tuple(figures), tuple(degraded))
