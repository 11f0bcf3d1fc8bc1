"""The rating ledger (issue 30): a research result stored with its evidence and figures, the "since" block on
synthetic Recommendations, the as-of rule on the previous entry, and a memory file written before the ledger."""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime
from pathlib import Path

import pytest

from equimind.core.documents import Source
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.research import Citation, Claim, Figure, LedgerDelta, Rating, Recommendation, Speaker
from equimind.core.search import EvidenceNode
from equimind.memory.ledger import QUOTE_CHARS, ledger_evidence, ledger_figures
from equimind.memory.records import FORMAT_VERSION
from equimind.memory.store import MemoryStore

DOC_K, DOC_Q = "a" * 64, "b" * 64  # the 10-K and the 10-Q
LONG = "Export controls on data center products " * 12


def cit(doc: str, start: int, quote: str) -> Citation:
    return Citation(doc_id=doc, start=start, end=start + len(quote), quote=quote, doc_sha256=doc)


A = cit(DOC_K, 100, "Data Center revenue grew 142% to $115.2 billion.")
B = cit(DOC_K, 500, "We returned $34.5 billion to shareholders.")
C = cit(DOC_Q, 200, "Revenue was $46.7 billion, up 56% from a year ago.")
D = cit(DOC_Q, 900, LONG)


def claim(speaker: Speaker, *citations: Citation, figures: tuple[str, ...] = ()) -> Claim:
    return Claim(speaker=speaker, text="claim", citations=list(citations), figure_ids=list(figures))


def fig(fid: str, value: float | None, as_of: date) -> Figure:
    return Figure(id=fid, name=fid.replace("_", " "), value=value, unit="ratio", as_of=as_of, formula="f",
                  provenance={"source": "sec_edgar", "accession": f"acc-{as_of}"})


def rec(as_of: date, rating: Rating | None, conviction: float, bull: list[Claim] | None = None,
        bear: list[Claim] | None = None, figures: list[Figure] | None = None) -> Recommendation:
    return Recommendation(ticker="NVDA", question="Should I invest in NVIDIA?", as_of=as_of, rating=rating,
                          conviction=conviction, thesis="t", bull_case=bull or [], bear_case=bear or [],
                          figures=figures or [])


def node(doc: str, filed: date, form: str) -> EvidenceNode:
    return EvidenceNode(id=doc[:4], doc_id=doc, start=0, end=10, text="x" * 10, ticker="NVDA", company="NVIDIA",
                        source=Source.SEC_EDGAR, form=form, filed_at=filed, section=None, score=1.0, doc_sha256=doc)


JUNE, SEPT = date(2025, 6, 30), date(2025, 9, 30)
NODES = [node(DOC_K, date(2025, 2, 26), "10-K"), node(DOC_Q, date(2025, 8, 27), "10-Q")]
FIRST = rec(JUNE, Rating.BUY, 0.7, bull=[claim(Speaker.BULL, A, B, figures=("growth",))],
            bear=[claim(Speaker.BEAR, B)],
            figures=[fig("growth", 0.69, date(2025, 5, 28)), fig("margin", 0.70, date(2025, 5, 28)),
                     fig("old_only", 1.0, date(2025, 5, 28))])
SECOND = rec(SEPT, Rating.HOLD, 0.55, bull=[claim(Speaker.BULL, B, C)], bear=[claim(Speaker.BEAR, D)],
             figures=[fig("growth", 0.556, date(2025, 8, 27)), fig("margin", 0.70, date(2025, 8, 27)),
                      fig("new_only", None, date(2025, 8, 27))])


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    """The same tests on the SQLite file and on the shared PostgreSQL store (a database of its own per test)."""
    if request.param == "postgresql":
        from equimind.memory.store import PgMemoryStore

        return PgMemoryStore(request.getfixturevalue("pg_url"))
    return MemoryStore(tmp_path / "memory.sqlite")


def test_store_round_trip_keeps_evidence_and_figures(store: MemoryStore) -> None:
    run, since = store.record_research(FIRST, NODES, duration_s=1.5, run_at=datetime(2025, 7, 1, 9, 0))
    assert since is None  # the first entry has nothing to compare with
    (entry,) = store.ledger("nvda")
    assert (entry.run_id, entry.as_of, entry.rating, entry.conviction, entry.recorded) == (run.id, JUNE, Rating.BUY,
                                                                                           0.7, True)
    assert [(e.doc_id, e.start, e.end) for e in entry.evidence] == [(DOC_K, A.start, A.end), (DOC_K, B.start, B.end)]
    a, b = entry.evidence
    assert (a.quote, a.filed_at, a.form, a.sides) == (A.quote, date(2025, 2, 26), "10-K", ["bull"])
    assert b.sides == ["bull", "bear"]  # one span, cited by both sides
    assert [(f.id, f.value, f.cited) for f in entry.figures] == [("growth", 0.69, True), ("margin", 0.70, False),
                                                                 ("old_only", 1.0, False)]
    assert entry.figures[0].provenance == {"source": "sec_edgar", "accession": "acc-2025-05-28"}
    assert entry.figures == ledger_figures(FIRST) and entry.evidence == ledger_evidence(FIRST, NODES)
    # the run itself is still an ordinary memory run
    assert store.runs("NVDA")[0].duration_s == 1.5 and store.last_research("NVDA", JUNE) is not None


def test_quotes_are_short_and_undated_documents_say_so() -> None:
    (e,) = ledger_evidence(rec(SEPT, Rating.HOLD, 0.5, bear=[claim(Speaker.BEAR, D)]), [])
    assert len(e.quote) == QUOTE_CHARS and e.quote.endswith("…") and (e.start, e.end) == (D.start, D.end)
    assert e.filed_at is None and e.form is None  # not read as a passage of the run


def test_since_block_entered_left_and_changed_figures(store: MemoryStore) -> None:
    first, _ = store.record_research(FIRST, NODES)
    _, since = store.record_research(SECOND, NODES)
    assert isinstance(since, LedgerDelta)
    assert since.headline == "since 2025-06-30: BUY → HOLD"
    assert (since.since, since.previous_run_id, since.rating_from, since.rating_to) == (JUNE, first.id, Rating.BUY,
                                                                                        Rating.HOLD)
    assert (since.conviction_from, since.conviction_to, since.previous_recorded) == (0.7, 0.55, True)
    assert [(e.doc_id, e.start) for e in since.evidence_entered] == [(DOC_Q, C.start), (DOC_Q, D.start)]
    assert [(e.doc_id, e.start) for e in since.evidence_left] == [(DOC_K, A.start)]
    assert since.evidence_kept == 1  # B
    entered_c = since.evidence_entered[0]
    assert (entered_c.quote, entered_c.filed_at, entered_c.form) == (C.quote, date(2025, 8, 27), "10-Q")
    changes = {c.id: c for c in since.figures_changed}
    assert since.figures_changed[0].id == "growth"  # a cited figure first
    assert set(changes) == {"growth", "new_only", "old_only"}  # margin kept its value
    growth = changes["growth"]
    assert growth.old is not None and growth.new is not None
    assert (growth.old.value, growth.new.value) == (0.69, 0.556)
    assert (growth.old.provenance["accession"], growth.new.provenance["accession"]) == ("acc-2025-05-28",
                                                                                        "acc-2025-08-27")
    assert changes["new_only"].old is None and changes["old_only"].new is None
    # the Recommendation carries it as a typed field, in its JSON too
    out = SECOND.model_copy(update={"since": since})
    data = json.loads(out.model_dump_json())
    assert data["since"]["rating_from"] == "BUY" and data["since"]["evidence_left"][0]["doc_id"] == DOC_K
    assert Recommendation.model_validate(data).since == since
    assert json.loads(FIRST.model_dump_json())["since"] is None


def test_as_of_rule_a_later_entry_is_never_seen(store: MemoryStore) -> None:
    later, _ = store.record_research(SECOND, NODES)  # researched first, but dated 2025-09-30
    _, since = store.record_research(FIRST, NODES)  # at 2025-06-30 the September entry does not exist yet
    assert since is None
    july = rec(date(2025, 7, 31), Rating.SELL, 0.6, bull=[claim(Speaker.BULL, A)])
    _, since = store.record_research(july, NODES)
    assert since is not None and since.since == JUNE and since.previous_run_id != later.id
    assert [e.as_of for e in store.ledger("NVDA", date(2025, 7, 31))] == [JUNE, date(2025, 7, 31)]
    assert store.previous_entry("NVDA", date(2025, 6, 29)) is None
    # the listing is in as-of order, each change against the entry before it in that order
    rows = store.ledger_history("NVDA").entries
    assert [r.entry.as_of for r in rows] == [JUNE, date(2025, 7, 31), SEPT]
    assert rows[0].change is None
    assert rows[2].change is not None and rows[2].change.since == date(2025, 7, 31)
    assert [r.entry.as_of for r in store.ledger_history("NVDA", date(2025, 8, 1)).entries] == [JUNE,
                                                                                             date(2025, 7, 31)]


def test_same_day_rerun_compares_with_the_earlier_run(store: MemoryStore) -> None:
    first, _ = store.record_research(FIRST, NODES, run_at=datetime(2025, 7, 1, 9, 0))
    _, since = store.record_research(FIRST, NODES, run_at=datetime(2025, 7, 1, 10, 0))
    assert since is not None and since.since == JUNE and since.previous_run_id == first.id
    assert since.headline == "since 2025-06-30: BUY → BUY"
    assert not (since.evidence_entered or since.evidence_left or since.figures_changed) and since.evidence_kept == 2


def test_unrated_runs_are_not_ledger_entries(store: MemoryStore) -> None:
    store.record_research(FIRST, NODES)
    answered = rec(date(2025, 8, 1), None, 0.0, bull=[], bear=[])  # a specific ask's answer: no rating
    _, since = store.record_research(answered, NODES)
    assert since is None and len(store.runs("NVDA")) == 2
    assert [e.as_of for e in store.ledger("NVDA")] == [JUNE]
    _, since = store.record_research(SECOND, NODES)
    assert since is not None and since.since == JUNE  # compared with the rated run, not the answer


def test_no_history_names_the_fix(store: MemoryStore) -> None:
    with pytest.raises(NotFoundError, match=r"no research recorded for AAPL; run `equimind research AAPL"):
        store.ledger_history("aapl")
    store.record_research(FIRST, NODES)
    with pytest.raises(NotFoundError, match="tickers with recorded research: NVDA"):
        store.ledger_history("AAPL")
    with pytest.raises(NotFoundError, match=r"first entry is as of 2025-06-30; choose --as-of 2025-06-30 or later"):
        store.ledger_history("NVDA", date(2025, 1, 1))


# A memory file as EquiMind wrote it before the ledger (format 1: this schema, verbatim).
_FORMAT_1 = """
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
INSERT INTO meta VALUES ('format_version', '1');
INSERT INTO runs (ticker, question, as_of, rating, conviction, run_at, duration_s)
  VALUES ('NVDA', 'Should I invest in NVIDIA?', '2025-06-30', 'STRONG_BUY', 0.83, '2025-07-01T09:00:00', 58.2);
INSERT INTO runs (ticker, question, as_of, rating, conviction, run_at, duration_s)
  VALUES ('NVDA', 'What was revenue?', '2025-06-30', NULL, 0.0, '2025-07-01T09:05:00', 3.0);
INSERT INTO evidence VALUES ('e1', 'NVDA', '2025-02-26', 'doc', 0, 40, 'digest', 'Revenue grew 114% to a record.',
  'sec_edgar', '10-K', NULL, 1.0, '2025-07-01T09:00:00');
"""


def test_a_memory_file_from_before_the_ledger_opens_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(_FORMAT_1)
    store = MemoryStore(path)  # migrated in place, nothing deleted
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone() == (str(FORMAT_VERSION),)
    runs = store.runs("NVDA")
    assert [(r.rating, r.conviction, r.duration_s) for r in runs] == [(Rating.STRONG_BUY, 0.83, 58.2),
                                                                       (None, 0.0, 3.0)]
    assert len(store.evidence("NVDA")) == 1
    (old,) = store.ledger("NVDA")
    assert old.rating is Rating.STRONG_BUY and not old.recorded and not old.evidence
    row = store.ledger_history("NVDA").entries[0]
    assert (row.evidence_count, row.figures_count) == (None, None)  # not recorded, not "zero"
    # a new run compares its rating with the old one and says the evidence cannot be compared
    _, since = store.record_research(SECOND, NODES)
    assert since is not None and not since.previous_recorded
    assert since.headline == "since 2025-06-30: STRONG_BUY → HOLD"
    assert not (since.evidence_entered or since.evidence_left or since.figures_changed)
    # opening it again changes nothing
    again = MemoryStore(path)
    assert [e.recorded for e in again.ledger("NVDA")] == [False, True] and len(again.runs("NVDA")) == 3


def test_a_memory_file_of_a_newer_format_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    MemoryStore(path).record_research(FIRST, NODES)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'format_version'", (str(FORMAT_VERSION + 1),))
    with pytest.raises(ConfigError, match=r"written by a newer EquiMind.*upgrade EquiMind"):
        MemoryStore(path)
    with sqlite3.connect(path) as conn:  # refused, not rewritten
        assert conn.execute("SELECT COUNT(*) FROM ledger_evidence").fetchone() == (2,)
