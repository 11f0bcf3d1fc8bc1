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
* **ledger_runs / ledger_evidence / ledger_figures** — the rating ledger (``memory/ledger.py``): per run, the spans its
  claims cite (document id, start, end, a short quote, filing date, form, who cited it) and the figures it read (id,
  name, value, unit, as-of date, provenance, whether a claim cites it). A run with a ``ledger_runs`` row had its
  evidence recorded; a run without one predates the ledger.

The as-of rule holds on every read: an entry, summary item or run dated after the as-of date never comes back. A
stored summary is returned only when its whole period ends on or before the as-of date; the period that contains the
as-of date is rebuilt on the fly from the entries dated up to it (``partial = True``).

Delta engine: ``needs_fetch`` reuses what is stored and asks only for data newer than the last research on the ticker
(``since = last research as_of + 1 day``); a kind with nothing stored, or a ticker never researched, is fetched whole.

Format: ``meta.format_version`` (``records.FORMAT_VERSION``). An older file is migrated in place when opened (format 1
→ 2 adds the ledger's tables; its runs stay, as ledger entries without recorded evidence); a file of a newer format
is refused with the fix (upgrade EquiMind), never rewritten.
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
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.research import LedgerDelta, LedgerEvidence, LedgerFigure, Rating, Recommendation
from equimind.core.search import EvidenceNode
from equimind.memory import ledger
from equimind.memory.records import (
    FORMAT_VERSION,
    EvidenceEntry,
    EvidenceRef,
    FetchDecision,
    FetchPlan,
    LedgerEntry,
    LedgerHistory,
    Level,
    MemorySnapshot,
    PeriodSummary,
    ResearchRun,
    SummaryItem,
)
from equimind.memory.summaries import build_summaries, period_of
from equimind.store.pg import PgConnection, pool_for, redacted, unavailable_as_error

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
-- the whole research result of a run, as JSON: what `equimind report RUN_ID` prints (no row: an older run)
CREATE TABLE IF NOT EXISTS reports (run_id INTEGER PRIMARY KEY REFERENCES runs (id), result TEXT NOT NULL);
"""

# Format 2: the rating ledger. Every statement is idempotent, so a migration cut short is simply run again.
_LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger_runs (run_id INTEGER PRIMARY KEY REFERENCES runs (id));
CREATE TABLE IF NOT EXISTS ledger_evidence (
  run_id INTEGER NOT NULL REFERENCES runs (id), pos INTEGER NOT NULL, doc_id TEXT NOT NULL, start INTEGER NOT NULL,
  "end" INTEGER NOT NULL, quote TEXT NOT NULL, filed_at TEXT, form TEXT, sides TEXT NOT NULL,
  PRIMARY KEY (run_id, doc_id, start, "end"));
CREATE INDEX IF NOT EXISTS ledger_evidence_doc ON ledger_evidence (doc_id);
CREATE TABLE IF NOT EXISTS ledger_figures (
  run_id INTEGER NOT NULL REFERENCES runs (id), pos INTEGER NOT NULL, figure_id TEXT NOT NULL, name TEXT NOT NULL,
  value REAL, unit TEXT NOT NULL, as_of TEXT, provenance TEXT NOT NULL, cited INTEGER NOT NULL,
  PRIMARY KEY (run_id, figure_id));
"""

# format N -> N + 1, applied in order to an older file when it is opened
_MIGRATIONS: dict[int, str] = {1: _LEDGER_SCHEMA}


class MemoryStore:
    """SQLite-backed research memory; one connection per operation, so a store can be shared across threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._conn() as conn:
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
            if row is None:  # a new file
                conn.executescript(_LEDGER_SCHEMA)
                conn.execute("INSERT INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
                return
            found = int(row[0])
            if found > FORMAT_VERSION:
                raise ConfigError(f"{self.path} has memory format {found}, written by a newer EquiMind; this one "
                                  f"reads formats up to {FORMAT_VERSION}: upgrade EquiMind (or move the file aside, "
                                  "or delete the file, to start an empty memory: its research history is lost)")
            for version in range(found, FORMAT_VERSION):
                conn.executescript(_MIGRATIONS[version])
            if found != FORMAT_VERSION:
                conn.execute("UPDATE meta SET value = ? WHERE key = 'format_version'", (str(FORMAT_VERSION),))

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryStore:
        """The memory beside the docstore: in its PostgreSQL database when EQUIMIND_DOCSTORE_URL is set (every host
        shares runs and ledger), else ``memory.sqlite`` under home."""
        if settings.docstore_url:
            return PgMemoryStore(settings.docstore_url)
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
                "score = CASE WHEN excluded.score > evidence.score THEN excluded.score ELSE evidence.score END",
                [(sha256_hex(ticker, n.doc_id, str(n.start), str(n.end)), ticker, n.filed_at.isoformat(), n.doc_id,
                  n.start, n.end, sha256_hex(n.text), n.text, n.source.value, n.form, n.section, n.score, stamp)
                 for n in dated if n.filed_at is not None])
            added = int(conn.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]) - int(before)
        self._rebuild(ticker, sorted({n.filed_at for n in dated if n.filed_at is not None}))
        return added

    def record_run(self, ticker: str, question: str, as_of: date, rating: Rating | None, conviction: float,
                   run_at: datetime | None = None, duration_s: float | None = None, *,
                   evidence: Sequence[LedgerEvidence] | None = None,
                   figures: Sequence[LedgerFigure] | None = None) -> ResearchRun:
        """Store a run; with ``evidence`` / ``figures`` (even empty) its ledger rows too, in the same transaction."""
        if not 0.0 <= conviction <= 1.0:
            raise ConfigError(f"conviction must be between 0 and 1, got {conviction}")
        at = run_at or datetime.now()
        with self._conn() as conn:
            run_id = int(conn.execute(
                "INSERT INTO runs (ticker, question, as_of, rating, conviction, run_at, duration_s) "
                "VALUES (?,?,?,?,?,?,?) RETURNING id",
                (ticker.upper(), question, as_of.isoformat(), rating.value if rating else None, conviction,
                 at.isoformat(timespec="seconds"), duration_s)).fetchone()[0])
            if evidence is not None or figures is not None:
                self._record_ledger(conn, run_id, evidence or (), figures or ())
        return ResearchRun(id=run_id, ticker=ticker.upper(), question=question, as_of=as_of, rating=rating,
                           conviction=conviction, run_at=at.replace(microsecond=0), duration_s=duration_s)

    @staticmethod
    def _record_ledger(conn: sqlite3.Connection, run_id: int, evidence: Sequence[LedgerEvidence],
                       figures: Sequence[LedgerFigure]) -> None:
        conn.execute("INSERT INTO ledger_runs VALUES (?)", (run_id,))
        conn.executemany(
            "INSERT INTO ledger_evidence VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            [(run_id, i, e.doc_id, e.start, e.end, e.quote, e.filed_at.isoformat() if e.filed_at else None, e.form,
              json.dumps(e.sides)) for i, e in enumerate(evidence)])
        conn.executemany(
            "INSERT INTO ledger_figures VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            [(run_id, i, f.id, f.name, f.value, f.unit, f.as_of.isoformat() if f.as_of else None,
              json.dumps(f.provenance, sort_keys=True, default=str), int(f.cited)) for i, f in enumerate(figures)])

    def record_research(self, rec: Recommendation, nodes: Sequence[EvidenceNode] = (),
                        duration_s: float | None = None,
                        run_at: datetime | None = None) -> tuple[ResearchRun, LedgerDelta | None]:
        """Store a research result as a run and, with its evidence and figures, a ledger entry; returns the run and,
        for a rated result, its change since the previous entry visible at its as-of date (None for the first).
        ``nodes`` are the run's passages (each cited document's filing date and form)."""
        previous = self.previous_entry(rec.ticker, rec.as_of) if rec.rating is not None else None
        run = self.record_run(rec.ticker, rec.question, rec.as_of, rec.rating, rec.conviction, run_at=run_at,
                              duration_s=duration_s, evidence=ledger.ledger_evidence(rec, nodes),
                              figures=ledger.ledger_figures(rec))
        with self._conn() as conn:
            conn.execute("INSERT INTO reports (run_id, result) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         (run.id, rec.model_dump_json()))
        if previous is None:
            return run, None
        current = self._ledger_entries(rec.ticker, run_id=run.id)
        return run, ledger.delta(previous, current[0])

    def _rebuild(self, ticker: str, days: list[date]) -> None:
        if not days:
            return
        touched = {(lvl.value, period_of(d, lvl)[0]) for d in days for lvl in Level}
        lo = min(min(period_of(d, Level.WEEKLY)[1], period_of(d, Level.QUARTERLY)[1]) for d in days)
        hi = max(max(period_of(d, Level.WEEKLY)[2], period_of(d, Level.QUARTERLY)[2]) for d in days)
        built = [s for s in build_summaries(ticker, self._entries(ticker, lo, hi)) if
                 (s.level.value, s.period) in touched]
        with self._conn() as conn:
            conn.executemany("INSERT INTO summaries VALUES (?,?,?,?,?,?) ON CONFLICT (ticker, level, period) DO UPDATE "
                             'SET start = excluded.start, "end" = excluded."end", items = excluded.items',
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

    # -- the rating ledger (memory/ledger.py) ----------------------------------------------------------------
    def _ledger_entries(self, ticker: str, run_id: int | None = None, *, details: bool = True) -> list[LedgerEntry]:
        """Every rated run of ``ticker`` (or the one run ``run_id``) with its recorded evidence and figures (without
        them when ``details`` is False: choosing an entry needs only its dates)."""
        sql = ("SELECT r.id, r.ticker, r.question, r.as_of, r.run_at, r.rating, r.conviction, l.run_id IS NOT NULL "
               "FROM runs r LEFT JOIN ledger_runs l ON l.run_id = r.id WHERE r.ticker = ?")
        args: list[object] = [ticker.upper()]
        if run_id is None:
            sql += " AND r.rating IS NOT NULL"
        else:
            sql += " AND r.id = ?"
            args.append(run_id)
        evidence: dict[int, list[LedgerEvidence]] = {}
        figures: dict[int, list[LedgerFigure]] = {}
        with self._conn() as conn:
            runs = conn.execute(sql, args).fetchall()
            ids = [r[0] for r in runs] if details else []
            marks = ",".join("?" * len(ids))
            ev = conn.execute('SELECT run_id, doc_id, start, "end", quote, filed_at, form, sides FROM ledger_evidence '
                              f"WHERE run_id IN ({marks}) ORDER BY run_id, pos", ids).fetchall() if ids else []
            fig = conn.execute("SELECT run_id, figure_id, name, value, unit, as_of, provenance, cited FROM "
                               f"ledger_figures WHERE run_id IN ({marks}) ORDER BY run_id, pos",
                               ids).fetchall() if ids else []
        for r in ev:
            evidence.setdefault(r[0], []).append(LedgerEvidence(
                doc_id=r[1], start=r[2], end=r[3], quote=r[4], filed_at=date.fromisoformat(r[5]) if r[5] else None,
                form=r[6], sides=json.loads(r[7])))
        for r in fig:
            figures.setdefault(r[0], []).append(LedgerFigure(
                id=r[1], name=r[2], value=r[3], unit=r[4], as_of=date.fromisoformat(r[5]) if r[5] else None,
                provenance=json.loads(r[6]), cited=bool(r[7])))
        return [LedgerEntry(run_id=r[0], ticker=r[1], question=r[2], as_of=date.fromisoformat(r[3]),
                            run_at=datetime.fromisoformat(r[4]), rating=Rating(r[5]) if r[5] else None,
                            conviction=r[6], recorded=bool(r[7]), evidence=evidence.get(r[0], []),
                            figures=figures.get(r[0], [])) for r in runs]

    def ledger(self, ticker: str, as_of: date | None = None) -> list[LedgerEntry]:
        """The ledger of ``ticker``: its rated runs with an as-of date on or before ``as_of``, in ledger order."""
        return ledger.visible(self._ledger_entries(ticker), as_of)

    def previous_entry(self, ticker: str, as_of: date) -> LedgerEntry | None:
        """The entry a new run on ``ticker`` at ``as_of`` is compared with (``memory/ledger.py``): chosen among the
        entries' dates, then read whole."""
        chosen = ledger.previous_entry(self._ledger_entries(ticker, details=False), as_of)
        return self._ledger_entries(ticker, chosen.run_id)[0] if chosen is not None else None

    def ledger_history(self, ticker: str, as_of: date | None = None) -> LedgerHistory:
        """``equimind ledger``: every visible entry with its change from the one before; NotFoundError naming the
        fix when there is none."""
        t = ticker.strip().upper()
        entries = self.ledger(t, as_of)
        if not entries:
            raise NotFoundError(self._no_history(t, as_of))
        return LedgerHistory(ticker=t, as_of=as_of, rule=ledger.RULE, entries=ledger.history(entries))

    def _no_history(self, ticker: str, as_of: date | None) -> str:
        every = ledger.ordered(self._ledger_entries(ticker, details=False))
        if as_of is not None and every:
            first = every[0].as_of
            return (f"no research recorded for {ticker} with an as-of date on or before {as_of}: its first entry is "
                    f"as of {first}; choose --as-of {first} or later")
        with self._conn() as conn:
            rows = conn.execute("SELECT DISTINCT ticker FROM runs WHERE rating IS NOT NULL ORDER BY ticker").fetchall()
        has = f"; tickers with recorded research: {', '.join(r[0] for r in rows)}" if rows else ""
        return f"no research recorded for {ticker}; run `equimind research {ticker} \"Should I invest?\"` first{has}"

    def report(self, run_id: int) -> dict[str, object]:
        """The stored research result of run ``run_id`` (JSON-ready), with the run's id; NotFoundError naming the
        fix when the run is unknown or predates stored results."""
        with self._conn() as conn:
            row = conn.execute("SELECT r.id, p.result FROM runs r LEFT JOIN reports p ON p.run_id = r.id "
                               "WHERE r.id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no research run {run_id}; `equimind memory TICKER` lists a ticker's runs")
        if row[1] is None:
            raise NotFoundError(f"research run {run_id} was recorded before results were stored; run the research "
                                "again to get a report")
        result: dict[str, object] = json.loads(row[1])
        result["run_id"] = run_id
        return result

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


class PgMemoryStore(MemoryStore):
    """The same memory in the shared PostgreSQL database (tables from ``store/pg_migrations/0002_memory``); each
    operation is one transaction on a pooled connection. The SQL is the SQLite store's (``store.pg`` runs it)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = Path(redacted(url))  # what messages name
        self._pool = pool_for(url)  # migrates the database (the memory's tables: 0002_memory)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        where = redacted(self.url)
        with (unavailable_as_error(where), self._pool.connection() as raw,
              PgConnection(raw, where).transaction() as conn):
            yield conn  # type: ignore[misc]  # the subset of sqlite3.Connection the store uses
