"""The DB-first agentic loop on the recorded corpus (fake embedder, real stores)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from equimind.core.errors import ConfigError, NotFoundError

pytestmark = pytest.mark.integration

AS_OF = date(2025, 9, 30)
QUESTION = "Is data-center growth sustainable?"


def _comparable(rec) -> dict:  # type: ignore[no-untyped-def]
    data = json.loads(rec.model_dump_json())
    data.pop("timings_ms")
    data.pop("agentic_rag")
    data.pop("since")  # the rating ledger's change from the run before: history, not this run's evidence
    return data


def test_empty_store_fetches_then_converges_and_second_run_fetches_nothing(make_engine) -> None:  # type: ignore[no-untyped-def]
    # everything embedded before the first answer, so the two runs read the same store (first-answer indexing has
    # its own end-to-end test: tests/research/test_first_answer_research.py)
    engine = make_engine(first_answer_indexing=False)
    events = []
    first = engine.research("NVDA", QUESTION, AS_OF, on_event=events.append)
    rag = first.agentic_rag
    assert rag is not None and 1 <= rag.iterations <= 3 and rag.converged
    it1 = rag.log[0]
    assert it1.hits == [] and it1.critic["sufficient"] is False
    assert "store returned no evidence" in json.dumps(it1.critic)
    fetched = {f["kind"]: f for f in it1.fetched}
    assert "ingested" in fetched["10-K"]["outcome"] and "ingested" in fetched["10-Q"]["outcome"]
    assert fetched["companyfacts"]["figures"] > 0
    assert all("critic:" in f["why"] for f in it1.fetched)
    assert {e.stage for e in events} >= {"search", "critic", "fetch", "debate", "done"}

    after_first = engine.services.docstore.counts()
    vectors_after_first = engine.services.vectors.count()
    assert after_first["documents"] > 0 and after_first["chunks"] > 0  # the first run stored what it fetched
    second = engine.research("NVDA", QUESTION, AS_OF)
    assert second.agentic_rag is not None
    assert all(not it.fetched or all("not fetched" in f["outcome"] or "already" in f["outcome"]
                                     or "none available" in f["outcome"] or "unavailable" in f["outcome"]
                                     for f in it.fetched) for it in second.agentic_rag.log)
    # the second run adds nothing: no document, parent, chunk or deferred passage, and no vector
    assert engine.services.docstore.counts() == after_first
    assert engine.services.vectors.count() == vectors_after_first
    assert _comparable(first) == _comparable(second)


def test_nothing_after_as_of_reaches_the_output(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    # Store everything first, including NVDA's 10-Q (2025-08-27), the 8-K (2026-03-06) and prices to 2025-11.
    later = engine.research("NVDA", QUESTION, date(2026, 6, 30))
    assert later.rating is not None
    early_as_of = date(2025, 6, 30)
    rec = engine.research("NVDA", QUESTION, early_as_of)
    store = engine.services.docstore
    cited = [c for claim in rec.bull_case + rec.bear_case for c in claim.citations]
    assert cited, "the debate cited nothing"
    for c in cited:
        doc = store.get_document(c.doc_id)
        assert doc.filed_at is None or doc.filed_at <= early_as_of, (doc.title, doc.filed_at)
    for f in rec.figures:
        assert f.as_of is None or f.as_of <= early_as_of, (f.id, f.as_of)
    for it in rec.agentic_rag.log if rec.agentic_rag else []:
        for hit in it.hits:
            assert hit["filed_at"] is None or date.fromisoformat(str(hit["filed_at"])) <= early_as_of
    last_close = next(f for f in rec.figures if f.id == "last_close")
    assert last_close.as_of == early_as_of  # 2025-06-30 is a trading day


def test_unknown_ticker_and_empty_question_are_clear_errors(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    with pytest.raises(NotFoundError, match="unknown ticker ZZZZQ"):
        engine.research("ZZZZQ", QUESTION, AS_OF)
    with pytest.raises(ConfigError, match="question is empty"):
        engine.research("NVDA", "   ", AS_OF)
    with pytest.raises(ConfigError, match="not valid"):
        engine.research("NV DA!", QUESTION, AS_OF)


def test_memory_records_the_run(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    rec = engine.research("NVDA", QUESTION, AS_OF)
    snap = engine.memory("NVDA")
    assert snap.evidence_count > 0
    assert snap.last_research is not None and snap.last_research.as_of == AS_OF
    assert snap.last_research.rating == rec.rating
    assert engine.memory("NVDA", as_of=date(2025, 1, 1)).last_research is None
