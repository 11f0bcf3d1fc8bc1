"""Hierarchical memory: evidence, summaries, runs, the delta engine, and the as-of rule on every read."""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from equimind.core.config import Settings
from equimind.core.documents import Source
from equimind.core.errors import ConfigError
from equimind.core.research import Rating
from equimind.core.search import EvidenceNode
from equimind.memory.records import TOP_K, EvidenceEntry, Level
from equimind.memory.store import MemoryStore
from equimind.memory.summaries import build_summaries, period_of, sentence_score


def node(nid: str, text: str, filed: date | None, form: str = "10-Q", score: float = 0.0,
         start: int = 100) -> EvidenceNode:
    return EvidenceNode(id=nid, doc_id=f"doc-{nid}", start=start, end=start + len(text), text=text, ticker="NVDA",
                        company="NVIDIA", source=Source.SEC_EDGAR, form=form, filed_at=filed, section=None,
                        score=score, doc_sha256="x")


Q1 = node("q1", "Revenue was $26.0 billion, up 18% from the prior quarter. The weather was pleasant in the city "
                "all week long. Gross margin rose to 78.4% on strong data center demand.", date(2024, 5, 29))
K = node("k", "Export controls could adversely affect our data center revenue and results of operations. "
              "Short line.", date(2024, 2, 21), form="10-K")
FUTURE = node("q2", "Revenue was $30.0 billion, up 15% sequentially, a record for the company.", date(2024, 8, 28))


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    """The same tests on the SQLite file and on the shared PostgreSQL store (a database of its own per test)."""
    if request.param == "postgresql":
        from equimind.memory.store import PgMemoryStore

        return PgMemoryStore(request.getfixturevalue("pg_url"))
    return MemoryStore(tmp_path / "memory.sqlite")


def test_periods() -> None:
    d = date(2024, 5, 29)  # a Wednesday in ISO week 22
    assert period_of(d, Level.DAILY) == ("2024-05-29", d, d)
    assert period_of(d, Level.WEEKLY) == ("2024-W22", date(2024, 5, 27), date(2024, 6, 2))
    assert period_of(d, Level.MONTHLY) == ("2024-05", date(2024, 5, 1), date(2024, 5, 31))
    assert period_of(d, Level.QUARTERLY) == ("2024-Q2", date(2024, 4, 1), date(2024, 6, 30))
    assert period_of(date(2024, 12, 31), Level.QUARTERLY)[1:] == (date(2024, 10, 1), date(2024, 12, 31))
    assert period_of(date(2024, 12, 31), Level.WEEKLY)[0] == "2025-W01"


def test_sentence_score_by_hand() -> None:
    # 2 numbers ($26.0 billion, 18%) + 0.5 * 1 term (revenue) + sigmoid(0) = 2 + 0.5 + 0.5
    assert sentence_score("Revenue was $26.0 billion, up 18% from the prior quarter.", 0.0) == pytest.approx(3.0)


def test_remember_and_extractive_summaries(store: MemoryStore) -> None:
    assert store.remember("nvda", [Q1, K, node("undated", "No date here at all in this one.", None)]) == 2
    assert store.remember("NVDA", [Q1]) == 0  # idempotent
    days = store.summaries("NVDA", level=Level.DAILY)
    assert [s.period for s in days] == ["2024-02-21", "2024-05-29"]
    may = days[1].items
    assert [i.text[:12] for i in may] == ["Revenue was ", "Gross margin", "The weather "]  # best first
    first = may[0]
    assert Q1.text[first.start - Q1.start:first.end - Q1.start] == first.text  # offsets point into the document
    assert (first.doc_id, first.date, first.form) == ("doc-q1", date(2024, 5, 29), "10-Q")
    assert all("Short line" not in i.text for d in days for i in d.items)  # under 6 words
    quarters = store.summaries("NVDA", level=Level.QUARTERLY)
    assert [q.period for q in quarters] == ["2024-Q1", "2024-Q2"]
    assert quarters[1].items[0].text == first.text


def test_table_rows_and_lines_are_not_summary_sentences(store: MemoryStore) -> None:
    text = ("Fiscal Year 2025 Summary\n| Revenue | $130,497 | $60,922 | 114% |\n"
            "Data center revenue grew 142% to $115.2 billion in fiscal year 2025.")
    store.remember("NVDA", [node("t", text, date(2025, 2, 26))])
    (day,) = store.summaries("NVDA", level=Level.DAILY)
    assert [i.text for i in day.items] == ["Data center revenue grew 142% to $115.2 billion in fiscal year 2025."]


def test_summary_top_k_caps() -> None:
    text = " ".join(f"Revenue grew {i}% in segment number {i} this year." for i in range(1, 9))
    entry = EvidenceEntry(id="e", ticker="T", date=date(2024, 1, 3), doc_id="d", start=0, end=len(text), digest="",
                          text=text, source="sec_edgar", form="10-K", section=None, score=0.0)
    built = build_summaries("T", [entry])
    assert {s.level: len(s.items) for s in built} == {Level.DAILY: TOP_K[Level.DAILY], Level.WEEKLY: 5,
                                                      Level.MONTHLY: 5, Level.QUARTERLY: 5}


def test_planted_future_entries_never_come_back(store: MemoryStore) -> None:
    store.remember("NVDA", [Q1, K, FUTURE])
    store.record_run("NVDA", "later question", date(2024, 9, 1), Rating.BUY, 0.7)
    as_of = date(2024, 6, 30)
    assert {e.doc_id for e in store.evidence("NVDA", as_of)} == {"doc-q1", "doc-k"}
    sums = store.summaries("NVDA", as_of)
    assert all(i.date <= as_of for s in sums for i in s.items)
    assert all("30.0 billion" not in i.text for s in sums for i in s.items)
    assert store.last_research("NVDA", as_of) is None
    snap = store.snapshot("NVDA", as_of)
    assert snap.evidence_count == 2 and snap.runs == [] and snap.last_research is None
    assert "30.0 billion" not in snap.model_dump_json()
    # with no cutoff everything is visible
    assert store.snapshot("NVDA").evidence_count == 3


def test_partial_period_is_rebuilt_from_entries_up_to_as_of(store: MemoryStore) -> None:
    early = node("m1", "Revenue rose to $1.0 billion in early August this year.", date(2024, 8, 2))
    store.remember("NVDA", [early, FUTURE])  # both in 2024-08 and 2024-Q3
    as_of = date(2024, 8, 10)
    monthly = store.summaries("NVDA", as_of, Level.MONTHLY)
    assert len(monthly) == 1 and monthly[0].partial
    assert [i.doc_id for i in monthly[0].items] == ["doc-m1"]
    stored = store.summaries("NVDA", None, Level.MONTHLY)
    assert not stored[0].partial and {i.doc_id for i in stored[0].items} == {"doc-m1", "doc-q2"}


def test_runs_and_last_research_obey_as_of(store: MemoryStore) -> None:
    store.record_run("NVDA", "q", date(2024, 3, 1), Rating.HOLD, 0.4, run_at=datetime(2024, 3, 1, 9), duration_s=3.5)
    store.record_run("NVDA", "q", date(2024, 6, 1), Rating.BUY, 0.6, run_at=datetime(2024, 6, 1, 9))
    assert store.last_research("NVDA", date(2024, 5, 31)).rating is Rating.HOLD  # type: ignore[union-attr]
    last = store.last_research("nvda", date(2024, 6, 30))
    assert last is not None and last.as_of == date(2024, 6, 1) and last.conviction == 0.6
    assert [r.duration_s for r in store.runs("NVDA")] == [3.5, None]
    with pytest.raises(ConfigError):
        store.record_run("NVDA", "q", date(2024, 6, 1), None, 1.5)


def test_needs_fetch_delta_engine(store: MemoryStore) -> None:
    kinds = ["10-Q", "10-K", "news"]
    fresh = store.needs_fetch("NVDA", date(2024, 6, 30), kinds)
    assert all(d.fetch and d.since is None for d in fresh.decisions)
    store.remember("NVDA", [Q1, K])
    store.record_run("NVDA", "q", date(2024, 6, 1), Rating.BUY, 0.6)
    plan = store.needs_fetch("NVDA", date(2024, 6, 30), kinds)
    by = {d.kind: d for d in plan.decisions}
    assert by["10-Q"].fetch and by["10-Q"].since == date(2024, 6, 2) and by["10-Q"].stored == 1
    assert "newer than the last research as of 2024-06-01" in by["10-Q"].reason
    assert by["news"].fetch and by["news"].since is None  # nothing stored: fetch all
    flt = plan.filter_for("10-Q")
    assert (flt.since, flt.until, flt.forms, flt.tickers) == (date(2024, 6, 2), date(2024, 6, 30), ("10-Q",),
                                                              ("NVDA",))
    same_day = store.needs_fetch("NVDA", date(2024, 6, 1), kinds)
    assert not {d.kind: d for d in same_day.decisions}["10-K"].fetch
    # a query as of a date before the last run does not see it
    before = store.needs_fetch("NVDA", date(2024, 5, 31), ["10-Q"])
    assert before.last_research is None and before.decisions[0].fetch


def test_snapshot_json_and_settings_path(settings: Settings) -> None:
    store = MemoryStore.from_settings(settings)
    assert store.path == settings.home / "memory.sqlite"
    store.remember("NVDA", [Q1])
    store.record_run("NVDA", "q", date(2024, 6, 1), Rating.BUY, 0.6)
    data = json.loads(store.snapshot("NVDA", date(2024, 6, 30)).model_dump_json())
    assert data["ticker"] == "NVDA" and data["evidence_count"] == 1
    assert data["last_research"]["rating"] == "BUY"
    assert {s["level"] for s in data["summaries"]} == {"daily", "weekly", "monthly", "quarterly"}


def test_format_version_mismatch_names_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    MemoryStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'format_version'")
    with pytest.raises(ConfigError, match="delete the file"):
        MemoryStore(path)


def test_rebuild_touches_only_affected_periods(store: MemoryStore) -> None:
    store.remember("NVDA", [K])
    before = store.summaries("NVDA", level=Level.QUARTERLY)
    store.remember("NVDA", [node("later", "Gross margin rose to 75% in the quarter, a record level.",
                                 date(2024, 2, 21) + timedelta(days=100))])
    after = store.summaries("NVDA", level=Level.QUARTERLY)
    assert after[0] == before[0] and len(after) == 2
