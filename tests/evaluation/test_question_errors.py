"""A question whose answering raises is one error row, never the end of an evaluation run (issue 28): the
FinanceBench answers, the golden probe and the research checks each record ``"<ExceptionType>: <message>"`` in the
row of that question, count it in ``errors`` and go on with the next question."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from equimind.answer.record import Answer, AnswerSentence, Method, PassageRead, Quote, Support
from equimind.core.documents import Document, FilterSpec, Origin, PageSpan, Source, sha256_hex
from equimind.evaluation import answer_probe, answer_quality, answers
from equimind.evaluation.golden import GoldenQuestion, GoldQuote, ResolvedSpan
from equimind.query.filters import ParsedQuery
from equimind.query.kinds import AnswerKind

TEXT = "Cash flows\nPurchases of property, plant and equipment (PP&E) (1,577) (1,373)\nPage two."
DOC = Document(id="d1", source_key="local:3M_2018_10K.pdf", ticker=None, cik=None, company="3M",
               source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=None, url=None,
               title="3M 10-K", text=TEXT, pages=(PageSpan(59, 0, 70), PageSpan(60, 70, len(TEXT))),
               meta=(("doc_name", "3M_2018_10K"),))
CRASH = "ValueError: day is out of range for month"


def _quoting_answer(question: str) -> Answer:
    start = TEXT.index("Purchases")
    quote = Quote(doc_id="d1", start=start, end=start + 60, text=TEXT[start:start + 60], doc_sha256=sha256_hex(TEXT))
    return Answer(question=question, ticker="3M", as_of=date(2100, 1, 1), kind=AnswerKind.AMOUNT,
                  support=Support.SUPPORTED,
                  sentences=[AnswerSentence(text=quote.text, method=Method.EXTRACTIVE, quotes=[quote])],
                  passages_searched=[PassageRead(doc_id="d1", start=0, end=len(TEXT), score=1.0)])


class FailingAnswerer:
    """Answers by quoting the cash-flow row, except a question about an impossible date: that raises the error
    the held-out filing raised from the period parser."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def answer(self, question: Any, hits: Any) -> Answer:
        if "impossible" in str(question):
            raise ValueError("day is out of range for month")
        return _quoting_answer(str(question))


def _engine() -> Any:
    docstore = SimpleNamespace(list_documents=lambda status: [SimpleNamespace(doc_id="d1")],
                               get_document=lambda doc_id: DOC)
    services = SimpleNamespace(
        docstore=docstore, answerability_terms=None, unit_similarity=None,
        filter_parser=lambda: SimpleNamespace(explain=lambda q: ParsedQuery(FilterSpec(), ("3M",), ())),
        question_parser=SimpleNamespace(read=lambda q, *a, **k: q, parse=lambda q, *a, **k: q))
    return SimpleNamespace(services=services, search=lambda q, *a: SimpleNamespace(hits=[]))


def _fb_row(qid: str, question: str) -> dict[str, Any]:
    return {"financebench_id": qid, "company": "3M", "doc_name": "3M_2018_10K", "question_type": "metrics-generated",
            "question_reasoning": "Information extraction", "question": question, "answer": "$1577.00",
            "evidence": [{"doc_name": "3M_2018_10K", "evidence_page_num": 59}]}


def test_a_financebench_question_that_raises_is_an_error_row_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answer_quality, "Answerer", FailingAnswerer)
    rows = [_fb_row("a", "What was 3M's capex?"), _fb_row("b", "What was 3M's capex at an impossible date?"),
            _fb_row("c", "What did 3M spend on PP&E?")]
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = answer_quality.financebench_answers(_engine(), tmp_path)
    assert [r["id"] for r in result["rows"]] == ["a", "b", "c"]
    ok_a, failed, ok_c = result["rows"]
    assert failed["error"] == CRASH and failed["refused"] is False and failed["refusal"] is None
    assert not failed["on_gold_page"] and not failed["numbers_found"] and failed["gold_numbers"] == 1
    for ok in (ok_a, ok_c):
        assert ok["error"] is None and ok["on_gold_page"] and ok["numbers_found"]
    everything = result["by_type"]["all"]
    assert everything["errors"] == 1 and everything["n"] == 3
    assert everything["answer_bearing"]["k"] == 2 and everything["refused"]["k"] == 0


def test_a_golden_question_that_raises_is_an_error_row_and_the_probe_goes_on() -> None:
    gold = (GoldQuote("3M", "10-K", date(2019, 2, 7), "Purchases of property"),)
    questions = [GoldenQuestion("g1", "factual", "What was the capex?", "1,577", ("MMM",), gold),
                 GoldenQuestion("g2", "factual", "Capex at an impossible date?", "1,577", ("MMM",), gold),
                 GoldenQuestion("g3", "absent", "What did 3M pay for an airline?", None, ("MMM",), ())]
    spans = {"g1": [[ResolvedSpan("d1", 20, 40)]], "g2": [[ResolvedSpan("d1", 20, 40)]]}
    engine = _engine()
    result = answer_probe.run_probe(engine, FailingAnswerer(), questions, spans,
                                    parser=engine.services.question_parser)
    by_id = {r["id"]: r for r in result["rows"]}
    assert list(by_id) == ["g1", "g2", "g3"]
    assert by_id["g2"]["verdict"] == "error" and by_id["g2"]["error"] == CRASH
    assert by_id["g1"]["verdict"] == "correct" and by_id["g1"]["error"] is None
    assert by_id["g3"]["verdict"] == "wrong", "an answered absent question is still judged"
    factual = result["by_type"]["factual"]
    assert factual["n"] == 2 and factual["errors"] == 1 and factual["correct"] == 1 and factual["correct_share"] == 0.5
    assert result["misses_by_cause"] == {"answered_absent": 1, "error: ValueError": 1}


def test_a_research_run_that_raises_is_an_error_row_and_the_checks_go_on() -> None:
    def research(ticker: str, question: str, as_of: date) -> Any:
        raise ValueError("day is out of range for month")

    engine: Any = SimpleNamespace(research=research)
    q = GoldenQuestion("g1", "factual", "What was the capex?", "1,577", ("MMM",), ())
    tally = answers.AnswerTally()
    assert answers._run_one(engine, q, date(2025, 9, 30), tally, {"g1": []}) is None
    (row,) = tally.rows
    assert row["error"] == CRASH and row["refused"] is False and row["gold_reached"] is False
    assert not answers._repeats(engine, q)
    summary = answers._summarise(tally, answers.AnswerTally(), 0, 1)
    assert summary["errors"] == 1 and summary["false_refusal_rate_answerable"] == 0.0
