"""Hierarchical research memory in SQLite (``settings.home / "memory.sqlite"``).

* **evidence** — one row per (ticker, doc_id, span) used by a research run: its own date (the document's
  ``filed_at``; undated nodes are not stored), text and its sha256 digest, source, form, section, best score.
* **summaries** — per ticker, daily → weekly (ISO week) / monthly → quarterly, deterministic and extractive: the
  evidence text is split into sentences, each scored ``min(numbers, 3) + 0.5 × min(lexicon terms, 4) + σ(node score)``
  (numbers and terms as the critic counts them). Sentences under 6 words, over 600 characters, or table rows (holding
  "|") are skipped. A day keeps its top 5 sentences, a week the top 8 of its days' sentences, a month the top 10 of its
  days', a quarter the top 12 of its months'. Every item keeps its document, character span, date and form, so it can
  be cited. Ties break by newer date, then doc id and offset.
* **runs** — ticker, question, as_of, rating, conviction, when it ran and how long it took.

The as-of rule holds on every read: an entry, summary item or run dated after the as-of date never comes back. A
stored summary is returned only when its whole period ends on or before the as-of date; the period that contains the
as-of date is rebuilt on the fly from the entries dated up to it (``partial = True``).

Delta engine: ``needs_fetch`` reuses what is stored and asks only for data newer than the last research on the ticker
(``since = last research as_of + 1 day``); a kind with nothing stored, or a ticker never researched, is fetched whole.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from equimind.core.documents import sha256_hex
from equimind.core.errors import ConfigError
from equimind.core.research import Rating
from equimind.core.search import EvidenceNode
from equimind.memory.records import (
    FORMAT_VERSION,
    EvidenceEntry,
    EvidenceRef,
    FetchDecision,
    FetchPlan,
    Level,
    MemorySnapshot,
    PeriodSummary,
    ResearchRun,
    SummaryItem,
)
from equimind.memory.summaries import build_summaries, period_of

if TYPE_CHECKING:
    from equimind.core.config import Settings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evidence (
  id TEXT PRIMARY KEY, ticker TEXT NOT NULL, date TEXT NOT NULL, doc_id TEXT NOT NULL, start INTEGER NOT NULL,
  "end" INTEGER NOT NULL, digest TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL, form TEXT NOT NULL,
  section TEXT, score REAL NOT NULL, stored_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS evidence_ticker_date ON evidence (ticker, date);
CREATE TABLE IF NOT EXISTS summaries (
  ticker TEXT NOT NULL, level TEXT NOT NULL, period TEXT NOT NULL, start TEXT NOT NULL, "end" TEXT NOT NULL,
  items TEXT NOT NULL, PRIMARY KEY (ticker, level, period));
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, ticker TEXT NOT NULL, question TEXT NOT NULL, as_of TEXT NOT NULL,
  rating TEXT, conviction REAL NOT NULL, run_at TEXT NOT NULL, duration_s REAL);
CREATE INDEX IF NOT EXISTS runs_ticker_as_of ON runs (ticker, as_of);
"""


class MemoryStore:
    """SQLite-backed research memory; one connection per operation, so a store can be shared across threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._conn() as conn:
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
            if row is None:
                conn.execute("INSERT INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
            elif int(row[0]) != FORMAT_VERSION:
                raise ConfigError(f"{self.path} has memory format {row[0]}, this EquiMind reads {FORMAT_VERSION}; "
                                  "delete the file to rebuild it")

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryStore:
        return cls(settings.ensure_home() / "memory.sqlite")

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path)) as conn, conn:
            yield conn

    # -- writes ---------------------------------------------------------------------------------------------
    def remember(self, ticker: str, nodes: Sequence[EvidenceNode], stored_at: datetime | None = None) -> int:
        """Store dated nodes as evidence of ``ticker`` and rebuild the summaries they touch; returns rows added."""
        ticker = ticker.upper()
        stamp = (stored_at or datetime.now()).isoformat(timespec="seconds")
        dated = [n for n in nodes if n.filed_at is not None]
        with self._conn() as conn:
            before = conn.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]
            conn.executemany(
                'INSERT INTO evidence VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET '
                "score = max(score, excluded.score)",
                [(sha256_hex(ticker, n.doc_id, str(n.start), str(n.end)), ticker, n.filed_at.isoformat(), n.doc_id,
                  n.start, n.end, sha256_hex(n.text), n.text, n.source.value, n.form, n.section, n.score, stamp)
                 for n in dated if n.filed_at is not None])
            added = int(conn.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]) - int(before)
        self._rebuild(ticker, sorted({n.filed_at for n in dated if n.filed_at is not None}))
        return added

    def record_run(self, ticker: str, question: str, as_of: date, rating: Rating | None, conviction: float,
                   run_at: datetime | None = None, duration_s: float | None = None) -> ResearchRun:
        if not 0.0 <= conviction <= 1.0:
            raise ConfigError(f"conviction must be between 0 and 1, got {conviction}")
        at = run_at or datetime.now()
        with self._conn() as conn:
            cur = conn.execute(
                "INSERT INTO runs (ticker, question, as_of, rating, conviction, run_at, duration_s) "
                "VALUES (?,?,?,?,?,?,?)",
                (ticker.upper(), question, as_of.isoformat(), rating.value if rating else None, conviction,
                 at.isoformat(timespec="seconds"), duration_s))
            run_id = int(cur.lastrowid or 0)
        return ResearchRun(id=run_id, ticker=ticker.upper(), question=question, as_of=as_of, rating=rating,
                           conviction=conviction, run_at=at.replace(microsecond=0), duration_s=duration_s)

    def _rebuild(self, ticker: str, days: list[date]) -> None:
        if not days:
            return
        touched = {(lvl.value, period_of(d, lvl)[0]) for d in days for lvl in Level}
        lo = min(min(period_of(d, Level.WEEKLY)[1], period_of(d, Level.QUARTERLY)[1]) for d in days)
        hi = max(max(period_of(d, Level.WEEKLY)[2], period_of(d, Level.QUARTERLY)[2]) for d in days)
        built = [s for s in build_summaries(ticker, self._entries(ticker, lo, hi)) if
                 (s.level.value, s.period) in touched]
        with self._conn() as conn:
            conn.executemany("INSERT OR REPLACE INTO summaries VALUES (?,?,?,?,?,?)",
                             [(ticker, s.level.value, s.period, s.start.isoformat(), s.end.isoformat(),
                               json.dumps([i.model_dump(mode="json") for i in s.items])) for s in built])

    # -- reads (all obey as-of) -----------------------------------------------------------------------------
    def _entries(self, ticker: str, since: date | None, until: date | None,
                 kinds: Sequence[str] = ()) -> list[EvidenceEntry]:
        sql = "SELECT * FROM evidence WHERE ticker = ? AND date >= ? AND date <= ?"
        args: list[str] = [ticker.upper(), (since or date.min).isoformat(), (until or date.max).isoformat()]
        if kinds:
            sql += f" AND form IN ({','.join('?' * len(kinds))})"
            args.extend(kinds)
        with self._conn() as conn:
            rows = conn.execute(sql + " ORDER BY date, doc_id, start", args).fetchall()
        return [EvidenceEntry(id=r[0], ticker=r[1], date=date.fromisoformat(r[2]), doc_id=r[3], start=r[4], end=r[5],
                              digest=r[6], text=r[7], source=r[8], form=r[9], section=r[10], score=r[11])
                for r in rows]

    def evidence(self, ticker: str, as_of: date | None = None, kinds: Sequence[str] = ()) -> list[EvidenceEntry]:
        """Stored evidence of ``ticker`` dated on or before ``as_of`` (optionally only the given forms)."""
        return self._entries(ticker, None, as_of, kinds)

    def summaries(self, ticker: str, as_of: date | None = None, level: Level | None = None) -> list[PeriodSummary]:
        """Stored summaries of whole periods ending by ``as_of``, plus the partial period(s) holding ``as_of``."""
        ticker = ticker.upper()
        levels = [level] if level else list(Level)
        cutoff = (as_of or date.max).isoformat()
        marks = ",".join("?" * len(levels))
        with self._conn() as conn:
            rows = conn.execute(
                f'SELECT level, period, start, "end", items FROM summaries WHERE ticker = ? AND "end" <= ? '
                f"AND level IN ({marks}) ORDER BY start, level", [ticker, cutoff, *[lv.value for lv in levels]],
            ).fetchall()
        out = [PeriodSummary(ticker=ticker, level=Level(r[0]), period=r[1], start=date.fromisoformat(r[2]),
                             end=date.fromisoformat(r[3]), items=[SummaryItem(**i) for i in json.loads(r[4])])
               for r in rows]
        if as_of is not None:
            out.extend(self._partial(ticker, as_of, levels))
        return sorted(out, key=lambda s: (s.start, list(Level).index(s.level)))

    def _partial(self, ticker: str, as_of: date, levels: list[Level]) -> list[PeriodSummary]:
        open_periods = {(lv, period_of(as_of, lv)[0]) for lv in levels if period_of(as_of, lv)[2] > as_of}
        if not open_periods:
            return []
        lo = min(period_of(as_of, lv)[1] for lv, _ in open_periods)
        built = build_summaries(ticker, self._entries(ticker, lo, as_of))
        return [s.model_copy(update={"partial": True}) for s in built if (s.level, s.period) in open_periods]

    def last_research(self, ticker: str, as_of: date | None = None) -> ResearchRun | None:
        """The latest research run on ``ticker`` whose as-of date is on or before ``as_of``."""
        runs = self.runs(ticker, as_of)
        return runs[-1] if runs else None

    def runs(self, ticker: str, as_of: date | None = None) -> list[ResearchRun]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT id, ticker, question, as_of, rating, conviction, run_at, duration_s FROM runs "
                "WHERE ticker = ? AND as_of <= ? ORDER BY as_of, run_at, id",
                (ticker.upper(), (as_of or date.max).isoformat())).fetchall()
        return [ResearchRun(id=r[0], ticker=r[1], question=r[2], as_of=date.fromisoformat(r[3]),
                            rating=Rating(r[4]) if r[4] else None, conviction=r[5],
                            run_at=datetime.fromisoformat(r[6]), duration_s=r[7]) for r in rows]

    def needs_fetch(self, ticker: str, as_of: date, kinds: Sequence[str]) -> FetchPlan:
        """What to fetch for ``kinds`` (forms such as 10-K, 10-Q, 8-K, news, prices, companyfacts) as of ``as_of``."""
        last = self.last_research(ticker, as_of)
        decisions = []
        for kind in dict.fromkeys(str(k) for k in kinds):
            stored = len(self._entries(ticker, None, as_of, [kind]))
            if last is None:
                fetch, since, why = True, None, f"no research on {ticker.upper()} up to {as_of}; fetch all"
            elif stored == 0:
                fetch, since, why = True, None, f"nothing stored for {kind}; fetch all"
            elif last.as_of >= as_of:
                fetch, since, why = False, None, f"last research as of {last.as_of} covers {as_of}"
            else:
                since = last.as_of + timedelta(days=1)
                fetch, why = True, f"fetch only {since}..{as_of}, newer than the last research as of {last.as_of}"
            decisions.append(FetchDecision(kind=kind, fetch=fetch, since=since, until=as_of, stored=stored,
                                           reason=f"{why}; reuse {stored} stored entr{'y' if stored == 1 else 'ies'}"))
        return FetchPlan(ticker=ticker.upper(), as_of=as_of, last_research=last, decisions=decisions)

    def snapshot(self, ticker: str, as_of: date | None = None) -> MemorySnapshot:
        entries = self.evidence(ticker, as_of)
        refs = [EvidenceRef(id=e.id, date=e.date, doc_id=e.doc_id, start=e.start, end=e.end, digest=e.digest,
                            source=e.source, form=e.form, section=e.section) for e in entries]
        runs = self.runs(ticker, as_of)
        return MemorySnapshot(ticker=ticker.upper(), as_of=as_of, evidence_count=len(refs), evidence=refs,
                              summaries=self.summaries(ticker, as_of), runs=runs,
                              last_research=runs[-1] if runs else None)
