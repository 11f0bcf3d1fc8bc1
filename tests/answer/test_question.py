"""Question analysis: answer type, metric, periods, comparisons (pure functions of the text)."""

from __future__ import annotations

from datetime import date

import pytest

from equimind.lexicon.concepts import find_metrics
from equimind.query.analysis import Subject, name_words
from equimind.query.kinds import AnswerKind
from equimind.query.periods import PeriodKind, find_periods
from equimind.query.question import analyse_question

NVDA = Subject("NVDA", name_words("NVDA", "NVIDIA CORP"))
AAPL = Subject("AAPL", name_words("AAPL", "Apple Inc."))
META = Subject("META", name_words("META", "Meta Platforms, Inc."))


@pytest.mark.parametrize(("question", "kind"), [
    ("How many people work at NVIDIA?", AnswerKind.COUNT),
    ("How much did NVIDIA spend on research and development in fiscal 2025?", AnswerKind.AMOUNT),
    ("How quickly did NVIDIA's data center business grow in fiscal 2025?", AnswerKind.PERCENT),
    ("When was NVIDIA incorporated?", AnswerKind.DATE),
    ("Which new GPU architecture did NVIDIA introduce?", AnswerKind.NAME),
    ("Where is NVIDIA based?", AnswerKind.NAME),
    ("Did NVIDIA sell any H20 chips in the July 2025 quarter?", AnswerKind.YES_NO),
    ("What was NVIDIA's data center revenue in fiscal 2025?", AnswerKind.AMOUNT),
    ("What lifted NVIDIA's gross margin?", AnswerKind.TEXT),
    ("How large is NVIDIA's workforce?", AnswerKind.COUNT),
    # a money verb makes "how much ... shares" an amount, not a count of shares
    ("How much did Apple spend buying back its own shares in fiscal 2024?", AnswerKind.AMOUNT),
    ("How many shares did Apple buy back in fiscal 2024?", AnswerKind.COUNT),
    # the reason for a metric's move is asked, not the metric
    ("What drove the decline in Apple's Greater China sales in 2024?", AnswerKind.TEXT),
    ("Why did NVIDIA's revenue grow in fiscal 2025?", AnswerKind.TEXT),
    ("How does Amazon assign shared infrastructure costs to AWS?", AnswerKind.TEXT),
    ("Should I buy NVIDIA?", AnswerKind.DECISION),
    # a head count asked with "what is": a count, not an explanation
    ("What was NVIDIA's workforce at the end of fiscal 2025?", AnswerKind.COUNT),
    ("What is the number of NVIDIA's employees?", AnswerKind.COUNT),
    # the instructions name the answer's form when the item is not in the concept map
    ("What is NVIDIA's goodwill at the fiscal 2025 year end?", AnswerKind.TEXT),
    ("What is NVIDIA's goodwill at the fiscal 2025 year end? Answer in USD millions.", AnswerKind.AMOUNT),
    ("What is NVIDIA's goodwill at the fiscal 2025 year end (in USD millions)?", AnswerKind.AMOUNT),
    ("What is NVIDIA's fiscal 2025 revenue growth? Answer in units of percents.", AnswerKind.PERCENT),
    ("What was NVIDIA's inventory at the end of fiscal 2025?", AnswerKind.AMOUNT),
])
def test_answer_type(question: str, kind: AnswerKind) -> None:
    assert analyse_question(question, NVDA).kind is kind


def test_reported_metric_is_an_xbrl_ask_but_a_segment_or_qualifier_is_not() -> None:
    plain = analyse_question("What was Apple's net income in fiscal 2024?", AAPL)
    assert plain.xbrl and plain.metric is not None and plain.metric.metric.key == "net_income"
    assert plain.periods[0].kind is PeriodKind.FISCAL_YEAR and plain.periods[0].fiscal_year == 2024
    segment = analyse_question("What was NVIDIA's data center revenue in fiscal 2025?", NVDA)
    assert not segment.xbrl and segment.metric is not None and set(segment.leftover) == {"data", "center"}
    # "deferred revenue" is not revenue: the longer us-gaap label phrase holds the concept map's "revenue" and wins
    deferred = analyse_question("How much deferred revenue did NVIDIA carry at January 26, 2025?", NVDA)
    assert deferred.metric is not None and deferred.metric.metric.key == "us-gaap:DeferredRevenue"
    assert analyse_question("What was Apple's net cash used in investing activities in fiscal 2024?", AAPL).metric \
        .metric.key == "us-gaap:NetCashProvidedByUsedInInvestingActivities"  # type: ignore[union-attr]
    assert analyse_question("How much did NVIDIA earn in fiscal 2025?", NVDA).metric.metric.key == "net_income"  # type: ignore[union-attr]


def test_metric_phrases_longest_first() -> None:
    assert [m.metric.key for m in find_metrics("diluted earnings per share and deferred revenue")] == [
        "eps_diluted", "revenue"]
    assert [m.metric.key for m in find_metrics("R&D expense and capital expenditures")] == ["rnd", "capex"]
    assert [m.metric.key for m in find_metrics("total current liabilities, total liabilities and current assets")] == [
        "current_liabilities", "total_liabilities", "current_assets"]
    assert [m.metric.key for m in find_metrics("COGS and net property, plant, and equipment")] == [
        "cost_of_revenue", "ppe_net"]
    assert [m.metric.key for m in find_metrics("cash flow from operating activities")] == ["operating_cash_flow"]


def test_periods() -> None:
    q2 = find_periods("total revenue in the second quarter of fiscal 2026")
    assert q2[0].kind is PeriodKind.QUARTER and (q2[0].quarter, q2[0].fiscal_year) == (2, 2026)
    mq = find_periods("Did it sell chips in the July 2025 quarter?")
    assert mq[0].kind is PeriodKind.MONTH_QUARTER and (mq[0].month, mq[0].year) == (7, 2025)
    ytd = find_periods("capex in the first six months of 2025")
    assert ytd[0].kind is PeriodKind.YEAR_TO_DATE and (ytd[0].months, ytd[0].fiscal_year) == (6, 2025)
    day = find_periods("deferred revenue at June 30, 2025")
    assert day == [day[0]] and day[0].kind is PeriodKind.DAY and day[0].day == date(2025, 6, 30)
    assert [p.fiscal_year for p in find_periods("FY2024 versus fiscal year 2025")] == [2024, 2025]
    mid = find_periods("the dividend per share in mid-2025")  # a point in the year, not the whole fiscal year
    assert [(p.kind, p.month, p.year, p.fiscal_year) for p in mid] == [(PeriodKind.MONTH_QUARTER, 6, 2025, None)]


def test_comparison_of_two_companies_needs_counts_for_a_workforce() -> None:
    q = analyse_question("Compare the headcounts of NVIDIA and Meta.", NVDA, [META])
    assert q.kind is AnswerKind.COMPARISON and q.ask.co_subjects == ("META",) and q.value_kind is AnswerKind.COUNT
    two_periods = analyse_question("Was NVIDIA's revenue in fiscal 2025 higher than in fiscal 2024?", NVDA)
    assert two_periods.kind is AnswerKind.COMPARISON and len(two_periods.periods) == 2


def test_a_decision_ask_with_a_topic_is_answered_on_that_topic_when_asked_to() -> None:
    question = "Is data-center growth sustainable?"
    plain = analyse_question(question, NVDA)
    assert plain.kind is AnswerKind.DECISION
    topic = analyse_question(question, NVDA, topic=True)
    assert topic.kind is AnswerKind.TEXT and set(topic.terms) == {"data", "center", "growth"}
    bare = analyse_question("Should I buy NVIDIA?", NVDA, topic=True)
    assert bare.kind is AnswerKind.DECISION  # nothing to answer beyond the rating
