"""The answerability check inside a research run (ADR 0006): over the recorded corpus, with the fake embedder, a
specific ask the filings do not answer is refused with the missing terms named; an answerable one is rated."""

from __future__ import annotations

import json
from datetime import date

import pytest

from equimind.research.events import ResearchEvent

pytestmark = pytest.mark.integration

AS_OF = date(2025, 9, 30)
ABSENT = "How many tonnes of coffee did Tesla's cafeterias serve in 2024?"
ANSWERABLE = "How many vehicles did Tesla deliver in the first half of 2025?"


def test_absent_ask_refuses_naming_the_terms_and_answerable_ask_is_answered(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    events: list[ResearchEvent] = []
    absent = engine.research("TSLA", ABSENT, AS_OF, on_event=events.append)
    assert absent.refused and absent.rating is None and absent.conviction == 0.0
    reason = absent.refusal_reason or ""
    for word in ("'tonnes'", "'coffee'", "'cafeterias'"):
        assert word in reason
    docs = absent.agentic_rag.answerability["documents_searched"]  # type: ignore[union-attr,index]
    assert docs >= 2 and f"none of the {docs} documents visible for TSLA" in reason
    assert "Should I buy TSLA?" in reason and "equimind ingest --tickers TSLA" in reason
    assert absent.bull_case == [] and absent.bear_case == []
    log = absent.agentic_rag.answerability  # type: ignore[union-attr]
    assert log is not None and log["kind"] == "specific" and not log["answerable"]
    assert set(log["missing"]) == {"tonnes", "coffee", "cafeterias"}
    assert [e for e in events if e.stage == "answerability" and "refusing" in e.message]
    assert not [e for e in events if e.stage == "debate"]  # no debate ran
    from equimind.interfaces.cli import render, render_report

    with render.console.capture() as shown:
        render_report.recommendation(absent)
    text = " ".join(shown.get().split())
    assert "REFUSED" in text and "Bull vs Bear" not in text and "NOT answered" in text

    answered = engine.research("TSLA", ANSWERABLE, AS_OF)  # a specific ask: answered (issue 14), never rated
    assert answered.answer is not None and answered.rating is None and answered.bull_case == []
    assert answered.refused == (answered.answer.support == "refused")  # type: ignore[attr-defined]
    ans = answered.agentic_rag.answerability  # type: ignore[union-attr]
    assert ans is not None and ans["answerable"] and ans["missing"] == []
    assert ans["focus_terms"] == ["vehicles", "deliver"]

    again = engine.research("TSLA", ABSENT, AS_OF)  # deterministic, cached term sets give the same verdict
    strip = ("timings_ms",)
    a, b = (json.loads(r.model_dump_json(exclude=set(strip))) for r in (absent, again))
    assert a["refusal_reason"] == b["refusal_reason"]
    assert a["agentic_rag"]["answerability"] == b["agentic_rag"]["answerability"]


def test_decision_question_is_never_checked_away(make_engine) -> None:  # type: ignore[no-untyped-def]
    rec = make_engine().research("NVDA", "Should I invest in NVIDIA?", AS_OF)
    assert not rec.refused and rec.rating is not None
    log = rec.agentic_rag.answerability  # type: ignore[union-attr]
    assert log is not None and log["kind"] == "decision" and log["answerable"]


def test_ticker_without_filings_refuses_a_specific_ask(make_engine) -> None:  # type: ignore[no-untyped-def]
    """MSFT has prices in the corpus but no filings: the ask's terms are in none of its documents."""
    rec = make_engine().research("MSFT", "What were Microsoft's Azure cloud revenues in its latest 10-K?", AS_OF)
    assert rec.refused and rec.rating is None
    assert "'azure'" in (rec.refusal_reason or "") and "visible for MSFT" in (rec.refusal_reason or "")
    log = rec.agentic_rag.answerability  # type: ignore[union-attr]
    assert log is not None and "microsoft" not in log["focus_terms"]
    assert not any(f.startswith("10-") for f in log["forms"])
