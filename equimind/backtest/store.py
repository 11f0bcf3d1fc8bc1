"""Accuracy tracker: backtest runs, their predictions and outcomes in SQLite (``EQUIMIND_HOME/backtest.sqlite``).

A prediction is written as soon as it is made (rating, conviction, close, a digest of the decision and the full
Recommendation JSON); outcomes are written when the prices to score them exist, and can be re-scored later when more
data arrives (``set_outcomes`` replaces a prediction's outcomes). Statistics are computed from what is stored, with
``equimind.backtest.stats`` (bootstrap CIs, sample-size caveats).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.backtest.calibration import calibration
from equimind.backtest.models import BacktestReport
from equimind.backtest.stats import Decision, summarise_backtest
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.research import Rating

if TYPE_CHECKING:
    from equimind.core.config import Settings

SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, params TEXT NOT NULL,"
    " status TEXT NOT NULL, finished_at TEXT, report TEXT)",
    "CREATE TABLE IF NOT EXISTS predictions (run_id TEXT NOT NULL REFERENCES runs(run_id), ticker TEXT NOT NULL,"
    " decided_at TEXT NOT NULL, question TEXT NOT NULL, rating TEXT, conviction REAL NOT NULL, refused INTEGER NOT"
    " NULL, close REAL NOT NULL, close_bar_date TEXT NOT NULL, digest TEXT NOT NULL, recommendation TEXT NOT NULL,"
    " duration_s REAL NOT NULL, PRIMARY KEY (run_id, ticker, decided_at))",
    "CREATE TABLE IF NOT EXISTS outcomes (run_id TEXT NOT NULL, ticker TEXT NOT NULL, decided_at TEXT NOT NULL,"
    " horizon_months INTEGER NOT NULL, forward_return REAL, benchmark_return REAL, scored_through TEXT NOT NULL,"
    " PRIMARY KEY (run_id, ticker, decided_at, horizon_months))",
)


@dataclass(frozen=True)
class Prediction:
    run_id: str
    ticker: str
    decided_at: date
    question: str
    rating: Rating | None  # None when the research refused to rate
    conviction: float
    close: float
    close_bar_date: date
    digest: str
    recommendation_json: str
    duration_s: float

    @property
    def refused(self) -> bool:
        return self.rating is None


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    created_at: str
    status: str  # "running" | "done" | "failed"
    params: dict[str, Any]
    n_predictions: int


class BacktestStore:
    """One SQLite file; safe to share across threads (one connection under a lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            raise ConfigError(f"{path} has backtest schema version {version}, this EquiMind reads "
                              f"{SCHEMA_VERSION}; move the file away to start a new tracker")
        self._db.execute("PRAGMA journal_mode=WAL")
        with self._db:
            for stmt in _SCHEMA:
                self._db.execute(stmt)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @classmethod
    def from_settings(cls, settings: Settings) -> BacktestStore:
        return cls(settings.home / "backtest.sqlite")

    def close(self) -> None:
        self._db.close()

    # --- writes ---------------------------------------------------------------------------------------------
    def start_run(self, run_id: str, params: Mapping[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT INTO runs (run_id, created_at, params, status) VALUES (?, ?, ?, 'running')",
                             (run_id, _now(), json.dumps(params, sort_keys=True, default=str)))

    def add_prediction(self, p: Prediction) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO predictions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (p.run_id, p.ticker, p.decided_at.isoformat(), p.question, p.rating.value if p.rating else None,
                 p.conviction, int(p.refused), p.close, p.close_bar_date.isoformat(), p.digest,
                 p.recommendation_json, p.duration_s))

    def set_outcomes(self, run_id: str, ticker: str, decided_at: date, forward: Mapping[int, float | None],
                     benchmark: Mapping[int, float | None], scored_through: date) -> None:
        """Replace the outcomes of one prediction (None = not known yet at ``scored_through``)."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM outcomes WHERE run_id=? AND ticker=? AND decided_at=?",
                             (run_id, ticker, decided_at.isoformat()))
            self._db.executemany(
                "INSERT INTO outcomes VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(run_id, ticker, decided_at.isoformat(), h, forward.get(h), benchmark.get(h),
                  scored_through.isoformat()) for h in sorted(set(forward) | set(benchmark))])

    def finish_run(self, run_id: str, report_json: str | None, status: str = "done") -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE runs SET status=?, finished_at=?, report=? WHERE run_id=?",
                             (status, _now(), report_json, run_id))

    # --- reads ----------------------------------------------------------------------------------------------
    def runs(self) -> list[RunInfo]:
        with self._lock:
            rows = self._db.execute(
                "SELECT r.run_id, r.created_at, r.status, r.params, COUNT(p.ticker) FROM runs r LEFT JOIN "
                "predictions p ON p.run_id = r.run_id GROUP BY r.run_id ORDER BY r.created_at").fetchall()
        return [RunInfo(r[0], r[1], r[2], json.loads(r[3]), int(r[4])) for r in rows]

    def report_json(self, run_id: str) -> str:
        with self._lock:
            row = self._db.execute("SELECT status, report FROM runs WHERE run_id=?", (run_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no backtest run {run_id!r} in {self.path}; `equimind backtest --list` shows them")
        if row[1] is None:
            raise NotFoundError(f"backtest run {run_id} has no report (status {row[0]})")
        return str(row[1])

    def predictions(self, run_id: str) -> list[Prediction]:
        with self._lock:
            rows = self._db.execute(
                "SELECT run_id, ticker, decided_at, question, rating, conviction, close, close_bar_date, digest,"
                " recommendation, duration_s FROM predictions WHERE run_id=? ORDER BY decided_at, ticker",
                (run_id,)).fetchall()
        return [Prediction(r[0], r[1], date.fromisoformat(r[2]), r[3], Rating(r[4]) if r[4] else None, r[5], r[6],
                           date.fromisoformat(r[7]), r[8], r[9], r[10]) for r in rows]

    def outcomes(self, run_id: str) -> dict[tuple[str, date], tuple[dict[int, float | None], dict[int, float | None]]]:
        with self._lock:
            rows = self._db.execute("SELECT ticker, decided_at, horizon_months, forward_return, benchmark_return "
                                    "FROM outcomes WHERE run_id=?", (run_id,)).fetchall()
        out: dict[tuple[str, date], tuple[dict[int, float | None], dict[int, float | None]]] = {}
        for t, d, h, f, b in rows:
            fwd, bench = out.setdefault((t, date.fromisoformat(d)), ({}, {}))
            fwd[int(h)], bench[int(h)] = f, b
        return out

    def decisions(self, run_id: str) -> list[Decision]:
        """The rated predictions (refusals left out) with their stored outcomes, for ``backtest_stats``."""
        outcomes = self.outcomes(run_id)
        out = []
        for p in self.predictions(run_id):
            if p.rating is None:
                continue
            fwd, bench = outcomes.get((p.ticker, p.decided_at), ({}, {}))
            out.append(Decision(p.ticker, p.decided_at, p.rating, p.conviction, p.close, fwd, bench))
        return out

    def report(self, run_id: str) -> BacktestReport:
        """A stored run's report; one stored before calibration gets it from its stored decisions. ConfigError naming
        the fix when the stored report does not match this EquiMind's format."""
        try:
            report = BacktestReport.model_validate_json(self.report_json(run_id))
        except ValueError as exc:  # pydantic's ValidationError
            raise ConfigError(f"stored report {run_id} does not match this EquiMind's report format ({exc}); "
                              "re-run the backtest") from exc
        if not report.calibration:
            report.calibration = calibration(self.decisions(run_id), report.request.horizons)
        return report

    def summary(self, run_id: str, horizons: Sequence[int], *, n_resamples: int = 10_000,
                seed: int | None = 0) -> dict[str, Any]:
        """Hit rate, information coefficient and long-short (with bootstrap CIs and caveats) from stored rows."""
        return summarise_backtest(self.decisions(run_id), horizons, n_resamples=n_resamples, seed=seed)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
