"""A choice among candidates the ask names (``query.choice``, ``answer.choice``): read from the ask's own
coordination, answered from one row per candidate in one table, the winner by the asked end, every row cited.
Companies and wordings of our own."""

from __future__ import annotations

from datetime import date

import pytest
import Stemmer

from equimind.answer.answerer import Answerer
from equimind.answer.choice import choose
from equimind.answer.lines import StatementLines
from equimind.answer.record import PassageRead
from equimind.answer.strategies import Answered, SideInput, run_chain
from equimind.query.analysis import Subject, name_words
from equimind.query.choice import find_choice
from equimind.query.question import analyse_question
from tests.answer.conftest import OneFilingStore

PLOVER = Subject("PLVR", name_words("PLVR", "Plover Home Goods, Inc."), ("p",))

# A made-up retailer's cash-flow statement and segment table, as the PDF parser writes tables.
FILING = """CONSOLIDATED STATEMENTS OF CASH FLOWS
($ in millions)

| Fiscal Years Ended | 2024 | 2023 |
| --- | --- | --- |
| Net earnings | 1,100 | 1,300 |
| Depreciation and amortization | 880 | 860 |
| Total cash provided by operating activities | 1,950 | 2,100 |
| Additions to property and equipment | (800) | (900) |
| Total cash used in investing activities | (720) | (1,010) |
| Repurchase of common stock | (1,400) | (900) |
| Total cash used in financing activities | (2,050) | (1,450) |

Segment revenue ($ in millions)

| Fiscal Years Ended | 2024 | 2023 |
| --- | --- | --- |
| Stores | 30,500 | 31,900 |
| Online | 9,200 | 8,700 |
| Wholesale | 1,300 | 1,450 |
"""


@pytest.mark.parametrize(("ask", "names", "direction"), [
    ("Among operations, investing, and financing activities, which brought in the most cash for Plover in 2024?",
     ["operations activities", "investing activities", "financing activities"], "max"),
    ("Which of Plover's operating, investing or financing activities used the most cash in FY2024?",
     ["operating activities", "investing activities", "financing activities"], "min"),  # an outflow verb
    ("Which of stores, online or wholesale had the lowest revenue in fiscal 2024?",
     ["stores", "online", "wholesale"], "min"),
    ("Which was larger in 2023, online or wholesale revenue?", ["online revenue", "wholesale revenue"], "max"),
])
def test_the_candidates_and_the_winning_end_are_read_from_the_ask(ask: str, names: list[str], direction: str) -> None:
    c = find_choice(ask, PLOVER.names)
    assert c is not None and c.names() == names and c.direction == direction


@pytest.mark.parametrize("ask", [
    "Which had the highest revenue in 2024?",  # no candidates, no group named
    "What were Plover's revenues and net earnings in 2024?",  # no superlative
    "Did stores and online both grow?",
    "Was Plover the best performer among retailers in 2024?",  # one item, no coordination
])
def test_an_ask_without_named_candidates_and_an_end_is_no_choice(ask: str) -> None:
    assert find_choice(ask, PLOVER.names) is None


def _lines() -> StatementLines:
    return StatementLines({"p": (2024, "10-K")}, {"p": FILING}.__getitem__)


def _choose(ask: str) -> str | None:
    c = find_choice(ask, PLOVER.names)
    assert c is not None
    q = analyse_question(ask, PLOVER)
    got = choose(c, set(q.terms), 2024, _lines(), "Plover", "PLVR")
    return None if got is None else got[0].text


def test_the_winner_is_read_from_one_row_per_candidate_signs_kept() -> None:
    most = _choose("Among operations, investing, and financing activities, which brought in the most cash in 2024?")
    assert most is not None and most.startswith("Total cash provided by operating activities ($1,950 million) is "
                                                "the highest of the 3 for Plover in fiscal 2024:")
    used = _choose("Which of Plover's operating, investing or financing activities used the most cash in 2024?")
    assert used is not None and used.startswith("Total cash used in financing activities (-$2,050 million) is the "
                                                "lowest")
    lowest = _choose("Which of stores, online or wholesale had the lowest revenue in fiscal 2024?")
    assert lowest is not None and lowest.startswith("Wholesale ($1,300 million) is the lowest")


def test_every_candidate_row_is_cited_and_a_missing_candidate_answers_nothing() -> None:
    c = find_choice("Which of stores, online or wholesale had the lowest revenue in fiscal 2024?", PLOVER.names)
    assert c is not None
    got = choose(c, {"revenu"}, 2024, _lines(), "Plover", "PLVR")
    assert got is not None
    rows = [q.text for q in got[0].quotes if q.role == "row"]
    assert rows == ["| Stores | 30,500 | 31,900 |", "| Online | 9,200 | 8,700 |", "| Wholesale | 1,300 | 1,450 |"]
    assert all(FILING[q.start:q.end] == q.text for q in got[0].quotes)
    franchise = find_choice("Which of stores, online or franchise had the lowest revenue in 2024?", PLOVER.names)
    assert franchise is not None and choose(franchise, set(), 2024, _lines(), "Plover", "PLVR") is None
    assert choose(c, set(), 2022, _lines(), "Plover", "PLVR") is None  # no column of that year


def plover_store() -> OneFilingStore:
    return OneFilingStore(FILING, "PLVR", "Plover Home Goods", 2024, date(2025, 3, 20), date(2025, 2, 1))


def test_the_answer_path_answers_a_choice_first_and_says_how() -> None:
    q = analyse_question("Among operations, investing, and financing activities, which brought in the most cash "
                         "for Plover in FY2024?", PLOVER, (), Stemmer.Stemmer("english"))
    passage = PassageRead(doc_id="p", start=0, end=len(FILING), score=1.0, ticker="PLVR")
    outcome, steps = run_chain(Answerer(plover_store()).chain,  # type: ignore[arg-type]
                               SideInput(q, "PLVR", (passage,), date(2025, 6, 30), ("p",)), [])
    assert isinstance(outcome, Answered) and [s.strategy for s in steps] == ["choice"]
    assert outcome.note.startswith("choice among 3 rows of one table")
    assert outcome.sentences[0].text.startswith("Total cash provided by operating activities ($1,950 million)")


BALANCE = """CONSOLIDATED BALANCE SHEETS
($ in millions)

| December 31 | 2024 | 2023 |
| --- | --- | --- |
| Assets | | |
| Cash and cash equivalents | 3,100 | 2,800 |
| Merchandise inventories (net of reserves of $40) | 5,200 | 5,000 |
| Total current assets | 8,300 | 7,800 |
| Property and equipment, net | 2,900 | 2,700 |
| Total assets | 11,200 | 10,500 |
| Liabilities and equity | | |
| Liabilities | | |
| Accounts payable | 4,100 | 3,900 |
| Total current liabilities | 4,100 | 3,900 |
| Long-term debt (includes current portion of $50) | 1,200 | 1,300 |
| Operating lease liabilities | 2,300 | 2,250 |
| Total liabilities | 7,600 | 7,450 |
| Total equity | 3,600 | 3,050 |
"""


def test_the_largest_line_of_a_kind_is_chosen_among_the_lines_its_total_sums() -> None:
    c = find_choice("What was Plover's largest liability on its balance sheet in 2024?", PLOVER.names)
    assert c is not None and c.total == ("liability",) and c.direction == "max"
    sl = StatementLines({"p": (2024, "10-K")}, {"p": BALANCE}.__getitem__)
    got = choose(c, set(), 2024, sl, "Plover", "PLVR")
    assert got is not None
    # the current subtotal is passed over, its line kept; "Total assets" above the heading is not reached
    assert got[0].text == ("Accounts payable ($4,100 million) is the highest of the 3 for Plover in fiscal 2024: "
                           "Accounts payable $4,100 million; Long-term debt $1,200 million; Operating lease "
                           "liabilities $2,300 million.")
    smallest = find_choice("What is the smallest asset of Plover in 2024?", PLOVER.names)
    assert smallest is not None
    low = choose(smallest, set(), 2024, sl, "Plover", "PLVR")
    assert low is not None and low[0].text.startswith("Property and equipment, net ($2,900 million) is the lowest of "
                                                      "the 3")


@pytest.mark.parametrize("ask", [
    "What was the highest revenue in 2023?",  # the metric itself, not one of its lines
    "What is the most important risk?",  # an adjective's superlative
    "Which had the lowest operating income?",  # no lines of a kind, no group
])
def test_a_superlative_of_a_metric_or_an_adjective_is_no_choice_among_lines(ask: str) -> None:
    assert find_choice(ask, PLOVER.names) is None


def test_no_heading_above_the_total_chooses_nothing() -> None:
    c = find_choice("What was Plover's largest liability in 2024?", PLOVER.names)
    assert c is not None
    headless = BALANCE.replace("| Liabilities | | |\n", "").replace("| Liabilities and equity | | |\n", "")
    sl = StatementLines({"p": (2024, "10-K")}, {"p": headless}.__getitem__)
    assert choose(c, set(), 2024, sl, "Plover", "PLVR") is None


SEGMENTS = """Net sales by reportable segment ($ in millions)

| | 2024 | 2023 |
| --- | --- | --- |
| Americas | 167,045 | 162,560 |
| Europe | 101,328 | 94,294 |
| Greater China | 66,952 | 72,559 |
| Total net sales | 335,325 | 329,413 |

Operating income by reportable segment ($ in millions)

| | 2024 | 2023 |
| --- | --- | --- |
| Americas | 67,656 | 60,508 |
| Europe | 41,790 | 36,098 |
| Greater China | 27,082 | 30,328 |
"""


@pytest.mark.parametrize(("ask", "start"), [
    ("Which segment had the worst topline performance for Plover during FY2024?",
     "Greater China (-7.7% from fiscal 2023) is the lowest of the 3"),
    ("Which of Plover's reportable segments had the highest net sales in fiscal 2024?",
     "Americas ($167,045 million) is the highest of the 3"),
    ("Which segment had the lowest operating income in 2024?", "Greater China ($27,082 million) is the lowest"),
    ("Which segment grew the fastest in 2024?", "Europe (+7.5% from fiscal 2023) is the highest"),
])
def test_a_choice_within_a_named_group_reads_the_table_by_that_group(ask: str, start: str) -> None:
    c = find_choice(ask, PLOVER.names)
    assert c is not None and c.group
    sl = StatementLines({"p": (2024, "10-K")}, {"p": SEGMENTS}.__getitem__)
    got = choose(c, set(), 2024, sl, "Plover", "PLVR")
    assert got is not None and got[0].text.startswith(start), got
    assert all(SEGMENTS[q.start:q.end] == q.text for q in got[0].quotes)


def test_a_group_no_table_is_by_answers_nothing() -> None:
    sl = StatementLines({"p": (2024, "10-K")}, {"p": SEGMENTS}.__getitem__)
    for ask in ("Which product category had the highest revenue in 2024?",
                "Which region had the worst topline performance in 2024?"):  # tables by segment only
        c = find_choice(ask, PLOVER.names)
        assert c is not None and c.group
        assert choose(c, set(), 2024, sl, "Plover", "PLVR") is None
    by_region = SEGMENTS.replace("Net sales by reportable segment", "Net sales by geographic region")
    c = find_choice("Which region had the worst topline performance in 2024?", PLOVER.names)
    assert c is not None
    got = choose(c, set(), 2024, StatementLines({"p": (2024, "10-K")}, {"p": by_region}.__getitem__), "Plover",
                 "PLVR")
    assert got is not None and got[0].text.startswith("Greater China (-7.7% from fiscal 2023) is the lowest")
