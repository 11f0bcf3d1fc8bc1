"""The answer path end to end over a small real store (the recorded NVIDIA 10-K and 10-Q ingested with the project's
pipeline; the real hybrid search; the recorded companyfacts): every quote is the stored text at its span."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from equimind.answer.answerer import Answerer
from equimind.answer.record import NO_VALUE_OF_TYPE_TEXT, Method, RefusalReason, Support
from equimind.core.citations import verify_citation
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.search import SearchHit
from equimind.query.kinds import AnswerKind
from tests.answer.asking import ask, parse

pytestmark = pytest.mark.integration
AS_OF = date(2025, 9, 30)
Search = Callable[[str], list[SearchHit]]


def _quotes_verify(answer: Any, docstore: Any) -> None:
    for s in answer.sentences:
        for q in s.quotes:
            check = verify_citation(docstore, q.doc_id, q.text)
            assert check.verified and docstore.get_document_text(q.doc_id)[q.start:q.end] == q.text


def test_segment_revenue_comes_from_the_10k_segment_table_row(answerer: Answerer, search: Search,
                                                               nvda_services: Any) -> None:
    question = "What was NVIDIA's data center revenue in fiscal 2025?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.support is Support.SUPPORTED and ans.kind is AnswerKind.AMOUNT
    s = ans.sentences[0]
    assert s.method is Method.EXTRACTIVE and "$115,186 million" in s.text
    row, header = s.quotes[0], s.quotes[1]
    assert row.role == "row" and row.text.startswith("| Data Center | $115,186 |")
    assert header.role == "header" and "Year Ended Jan 26, 2025" in header.text
    assert s.values[0].number == 115_186e6 and "2025" in (s.values[0].period or "")
    _quotes_verify(ans, nvda_services.docstore)
    assert ans.passages_searched and all(p.ticker == "NVDA" for p in ans.passages_searched)
    assert ans.model_dump_json()  # JSON-serialisable


def test_reported_metric_comes_from_xbrl_with_provenance(answerer: Answerer, search: Search) -> None:
    question = "How much did NVIDIA earn in fiscal 2025?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.support is Support.SUPPORTED and ans.sentences[0].method is Method.XBRL
    fig = ans.sentences[0].figures[0]
    assert fig.value == 72_880e6 and fig.provenance["concept"] == "us-gaap:NetIncomeLoss"
    assert fig.provenance["accession"] == "0001045810-25-000023" and fig.period_end == date(2025, 1, 26)


def test_text_ask_names_the_architecture(answerer: Answerer, search: Search, nvda_services: Any) -> None:
    question = "Which new GPU architecture did NVIDIA introduce?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.support is Support.SUPPORTED and ans.kind is AnswerKind.NAME
    assert "Blackwell" in ans.sentences[0].text
    _quotes_verify(ans, nvda_services.docstore)


def test_count_ask(answerer: Answerer, search: Search, nvda_services: Any) -> None:
    question = "How many employees did NVIDIA have at the end of fiscal 2025?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.support is Support.SUPPORTED and ans.kind is AnswerKind.COUNT
    assert "36,000 employees" in ans.sentences[0].text
    assert 36_000 in [v.number for v in ans.sentences[0].values]
    _quotes_verify(ans, nvda_services.docstore)


def test_absent_ask_is_refused_with_its_reason(answerer: Answerer, search: Search) -> None:
    question = "How many satellites did NVIDIA launch into orbit in fiscal 2025?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.refused and not ans.sentences and ans.refusal is not None
    assert ans.refusal.reason is RefusalReason.NOT_ANSWERABLE
    assert {"satellites", "orbit"} <= set(ans.refusal.missing) and "'satellites'" in ans.refusal.message


def test_terms_present_but_no_value_of_the_asked_type_is_not_found(answerer: Answerer, search: Search) -> None:
    """Every retrieved sentence about data-center growth states percentages; an amount is asked: not found (here
    only the passages are given, so the table lookup has no table with the terms to read)."""
    question = "How much did the Blackwell architecture introduce neural graphics?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.refused and ans.refusal is not None
    assert ans.refusal.reason in (RefusalReason.NO_VALUE_OF_TYPE, RefusalReason.NO_PASSAGES)
    if ans.refusal.reason is RefusalReason.NO_VALUE_OF_TYPE:
        assert NO_VALUE_OF_TYPE_TEXT in ans.refusal.message


def test_decision_ask_is_left_to_the_debate(answerer: Answerer, search: Search) -> None:
    ans = ask(answerer, "Should I buy NVIDIA?", "NVDA", AS_OF, search("Should I buy NVIDIA?"))
    assert ans.refused and ans.kind is AnswerKind.DECISION
    assert ans.refusal is not None and ans.refusal.reason is RefusalReason.DECISION_ASK
    assert "equimind research NVDA" in ans.refusal.message


def test_passages_after_the_as_of_date_are_not_read(answerer: Answerer, search: Search) -> None:
    question = "What was NVIDIA's data center revenue in fiscal 2025?"
    ans = ask(answerer, question, "NVDA", date(2025, 2, 1), search(question))
    assert all(p.filed_at is None or p.filed_at <= date(2025, 2, 1) for p in ans.passages_searched)
    assert not any("115,186" in s.text for s in ans.sentences)  # the 10-K was filed 2025-02-26


@pytest.mark.parametrize(("question", "fix"), [("", "the question is empty"), ("   ", "the question is empty"),
                                               ("x" * 100_000, "the limit is 2,000")])
def test_bad_question_raises_config_error_naming_the_fix(answerer: Answerer, question: str, fix: str) -> None:
    with pytest.raises(ConfigError, match=fix):
        ask(answerer, question, "NVDA", AS_OF, [])


def test_missing_ticker_comes_from_the_question_or_names_the_fix(answerer: Answerer) -> None:
    parsed = parse(answerer, "What was NVIDIA's revenue?", " ", AS_OF)
    assert parsed.ticker == "NVDA" and parsed.company_from.startswith("the question's words")
    with pytest.raises(NotFoundError, match="--ticker"):
        parse(answerer, "What was the revenue of the widget maker?", None, AS_OF)


def test_two_period_comparison_answers_each_period_from_xbrl(answerer: Answerer) -> None:
    ans = ask(answerer, "Was NVIDIA's revenue in fiscal 2025 higher than in fiscal 2024?", "NVDA", AS_OF, [])
    assert ans.kind is AnswerKind.COMPARISON and ans.support is Support.SUPPORTED
    assert [s.figures[0].value for s in ans.sentences] == [130_497e6, 60_922e6]
    assert [s.figures[0].period_end for s in ans.sentences] == [date(2025, 1, 26), date(2024, 1, 28)]


def test_xbrl_ask_of_a_company_without_stored_filings_is_answered_from_companyfacts(answerer: Answerer) -> None:
    """The store holds only NVIDIA's filings: Apple's net income is still a reported XBRL fact."""
    ans = ask(answerer, "What was Apple's net income in fiscal 2024?", "AAPL", AS_OF, [])
    assert ans.support is Support.SUPPORTED and ans.sentences[0].method is Method.XBRL
    fig = ans.sentences[0].figures[0]
    assert fig.value == 93_736e6 and fig.provenance["concept"] == "us-gaap:NetIncomeLoss"
    assert fig.provenance["accession"] == "0000320193-24-000123"
    assert (fig.period_start, fig.period_end) == (date(2023, 10, 1), date(2024, 9, 28))
    early = ask(answerer, "What was Apple's net income in fiscal 2024?", "AAPL", date(2024, 10, 1), [])
    assert early.refused and early.refusal is not None and early.refusal.reason is RefusalReason.NOT_ANSWERABLE
    assert any("filed by 2024-10-01" in d for d in early.degraded)


def test_same_question_same_answer(answerer: Answerer, search: Search) -> None:
    question = "What was NVIDIA's data center revenue in fiscal 2025?"
    hits = search(question)
    first, again = (ask(answerer, question, "NVDA", AS_OF, hits).model_dump_json() for _ in range(2))
    assert first == again


def test_a_full_year_that_has_not_ended_is_refused_not_answered_with_a_near_miss(answerer: Answerer,
                                                                                 search: Search) -> None:
    question = "What was NVIDIA's total revenue in fiscal 2026?"  # fiscal 2026 ends in January 2026
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.support is Support.REFUSED and not ans.sentences
    assert ans.refusal is not None and ans.refusal.reason is RefusalReason.PERIOD_NOT_ENDED
    assert "after the as-of date 2025-09-30" in ans.refusal.message


def test_growth_is_matched_by_the_filing_word_up_and_a_comparison_base_is_not_the_period(
        answerer: Answerer, search: Search, nvda_services: Any) -> None:
    question = "How quickly did NVIDIA's data center business grow in fiscal 2025?"
    hits = search(question)  # with the hash embedder these hold the 10-Q's "grew 62% ... compared to the first half
    # of fiscal year 2025" (fiscal 2026 growth: a near miss) but not the 10-K's sentence, which this search adds
    near_miss = "grew 62% year-on-year compared to the first half of fiscal year 2025"
    texts = [nvda_services.docstore.get_document_text(h.document.doc_id)[h.parent_start:h.parent_end] for h in hits]
    assert any(near_miss in t for t in texts)
    alone = ask(answerer, question, "NVDA", AS_OF, hits)
    assert all(near_miss not in s.text for s in alone.sentences)
    ans = ask(answerer, question, "NVDA", AS_OF, hits + search("Data Center revenue for fiscal year 2025 was up"))
    assert ans.support is Support.SUPPORTED and ans.kind is AnswerKind.PERCENT
    assert "142%" in ans.sentences[0].text
    _quotes_verify(ans, nvda_services.docstore)


def test_a_decision_ask_is_answered_on_its_topic_only_when_asked_to(answerer: Answerer, search: Search,
                                                                    nvda_services: Any) -> None:
    question = "Is data-center growth sustainable?"
    assert ask(answerer, question, "NVDA", AS_OF, search(question)).refusal.reason is RefusalReason.DECISION_ASK
    ans = ask(answerer, question, "NVDA", AS_OF, search(question), topic=True)
    assert ans.support is Support.SUPPORTED and ans.kind is AnswerKind.TEXT
    assert all("data center" in s.text.lower() for s in ans.sentences)
    _quotes_verify(ans, nvda_services.docstore)
