"""SQLite cache of computed market reports (figures with provenance), keyed by ticker, as-of date and mode.

This is what makes figures DB-first: a second research run with the same as-of date reads the figures computed from
the data fetched by the first run instead of fetching prices and companyfacts again.
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, date, datetime
from pathlib import Path

SCHEMA_VERSION = 1


class FigureCache:
    """Stored market reports per (ticker, as-of, mode), within a ``scope``: what else decides the figures (the code's
    report version, the snapshot folder or live, the web-intelligence configuration). A report computed in another
    scope is never served: an upgraded EquiMind or another snapshot computes its own."""

    def __init__(self, path: Path, scope: str = "") -> None:
        self.scope = scope
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS market_reports (ticker TEXT NOT NULL, as_of TEXT NOT NULL, mode TEXT NOT NULL,"
            " report_json TEXT NOT NULL, computed_at TEXT NOT NULL, PRIMARY KEY (ticker, as_of, mode))")
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        self._db.commit()

    def get(self, ticker: str, as_of: date, mode: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT report_json FROM market_reports WHERE ticker=? AND as_of=? AND mode=?",
                                   (ticker, as_of.isoformat(), self._key(mode))).fetchone()
        return None if row is None else str(row[0])

    def put(self, ticker: str, as_of: date, mode: str, report_json: str) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO market_reports VALUES (?, ?, ?, ?, ?)",
                             (ticker, as_of.isoformat(), self._key(mode), report_json,
                              datetime.now(UTC).isoformat()))

    def _key(self, mode: str) -> str:
        return f"{mode}|{self.scope}" if self.scope else mode

    def close(self) -> None:
        self._db.close()
