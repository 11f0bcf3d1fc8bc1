"""First-answer indexing end to end (issue 16.3): the first research on a new ticker answers with the parts of the
filings it needs embedded and says the rest is deferred; the rest is embedded after the answer (or at the start of
the next run); the next run then equals a run on a store that embedded everything up front."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from equimind.app.engine import EquiMindEngine
from equimind.core.research import Recommendation
from equimind.ingest.first_answer import CAPABILITY

pytestmark = pytest.mark.integration
Q, AS_OF = "Should I invest in NVIDIA?", date(2025, 9, 30)


def _notes(rec: Recommendation) -> list[str]:
    return [d.reason for d in rec.degraded if d.capability == CAPABILITY]


def _case(rec: Recommendation) -> tuple[object, ...]:
    return (rec.rating, rec.conviction, rec.thesis, [c.model_dump() for c in rec.bull_case],
            [c.model_dump() for c in rec.bear_case])


def test_first_research_defers_and_the_next_run_equals_embedding_everything(
        make_engine: Callable[..., EquiMindEngine], tmp_path: Path) -> None:
    a = make_engine(home=tmp_path / "a")
    first = a.research("NVDA", Q, AS_OF)
    notes = _notes(first)
    assert len(notes) == 1 and "first-answer indexing" in notes[0] and "equimind complete" in notes[0]
    outcomes = [f["outcome"] for it in first.agentic_rag.log for f in it.fetched]
    assert any("embedded after the answer" in o for o in outcomes)
    left = a.services.docstore.deferred(("NVDA",))
    assert left
    done = a.finish_indexing()
    assert done.embeddings_computed == sum(left.values()) and a.services.docstore.deferred() == {}
    second = a.research("NVDA", Q, AS_OF)
    assert _notes(second) == []

    b = make_engine(home=tmp_path / "b", first_answer_indexing=False)
    b_first = b.research("NVDA", Q, AS_OF)
    assert _notes(b_first) == [] and b.services.docstore.deferred() == {}
    assert _case(b.research("NVDA", Q, AS_OF)) == _case(second)


def test_the_next_run_completes_what_an_interrupted_process_left_and_a_server_completes_in_the_background(
        make_engine: Callable[..., EquiMindEngine], tmp_path: Path) -> None:
    c = make_engine(home=tmp_path / "c")
    c.research("NVDA", Q, AS_OF)  # the process "ends" here: nobody calls finish_indexing
    assert c.services.docstore.deferred()
    again = make_engine(home=tmp_path / "c").research("NVDA", Q, AS_OF)  # a new process on the same home
    assert _notes(again) == []

    server = make_engine(home=tmp_path / "s")
    server.background_indexing = True
    server.research("NVDA", Q, AS_OF)
    for t in [t for t in threading.enumerate() if t.name == "equimind-complete"]:
        t.join(timeout=120)
    assert server.services.docstore.deferred() == {}
