"""A margin asked of a company whose income statement has no such line (a card issuer: no cost of revenue, no
gross profit, no operating income) is answered by saying so, every row cited (``answer.undefined``); a statement
that splits the line in parts, or that is cut in two tables, or that prints the line, is never called so."""

from __future__ import annotations

from datetime import date
from typing import Any

import Stemmer

from equimind.answer.answerer import Answerer
from equimind.answer.computed import compute
from equimind.answer.figures import FigureAnswerer
from equimind.answer.lines import StatementLines
from equimind.answer.record import PassageRead
from equimind.answer.strategies import Answered, ComputedFigure, NotApplicable, SideInput, run_chain
from equimind.answer.undefined import own_words, undefined_figure
from equimind.lexicon.concepts import METRICS
from equimind.lexicon.formulas import find_formula
from equimind.query.analysis import Subject, name_words
from equimind.query.question import analyse_question
from tests.answer.conftest import OneFilingStore

METRIC = {m.key: m for m in METRICS}
HERON = Subject("HRN", name_words("HRN", "Heron Card Services Corp."))

# A made-up card issuer's income statement, laid out as the PDF parser writes tables.
CARD_ISSUER = """CONSOLIDATED STATEMENTS OF INCOME
(Millions)

| Year Ended December 31 | 2024 | 2023 |
| --- | --- | --- |
| Discount revenue | 21,400 | 19,900 |
| Net card fees | 4,100 | 3,800 |
| Total non-interest revenues | 25,500 | 23,700 |
| Interest on loans | 8,200 | 7,100 |
| Total interest expense | 1,900 | 1,300 |
| Net interest income | 6,300 | 5,800 |
| Total revenues net of interest expense | 31,800 | 29,500 |
| Total provisions for credit losses | 1,600 | 1,200 |
| Card Member rewards | 9,700 | 8,800 |
| Marketing | 3,900 | 3,600 |
| Total expenses | 22,400 | 20,700 |
| Pretax income | 7,800 | 7,600 |
| Income tax provision | 1,700 | 1,650 |
| Net income | 6,100 | 5,950 |
"""

# An aircraft maker's statement: no total cost of revenue, but its parts ("Cost of products", "Cost of services").
SPLIT_COSTS = CARD_ISSUER.replace("| Card Member rewards | 9,700 | 8,800 |", "| Cost of products | 9,700 | 8,800 |")
# The statement cut in two tables (a page break): the net income line is not in the revenue line's table.
CUT = CARD_ISSUER.replace("| Total expenses |", "\nContinued\n\n| Year Ended December 31 | 2024 | 2023 |\n"
                                                 "| --- | --- | --- |\n| Total expenses |")


def _lines(text: str) -> StatementLines:
    return StatementLines({"h": (2024, "10-K")}, {"h": text}.__getitem__)


def _undefined(question: str, text: str) -> str | None:
    match = find_formula(question)
    assert match is not None
    sl = _lines(text)
    result = compute(match, [2024], "Heron", "HRN", lambda m, y, t: sl.value(m, y, t))
    assert result.sentence is None  # a line is missing
    found = undefined_figure(match.formula, result, sl, "Heron", "HRN", 2024)
    return None if found is None else found.text


def test_a_margin_of_a_line_the_income_statement_does_not_print_is_said_not_to_be_defined() -> None:
    text = _undefined("What is Heron's gross margin for fiscal 2024?", CARD_ISSUER)
    assert text is not None
    assert text.startswith("Heron's statements do not define gross margin: its income statement for fiscal 2024 "
                           "reports no cost of revenue or gross profit line")
    assert '"Total revenues net of interest expense" ($31,800 million)' in text
    assert '"Net interest income"' in text and '"Pretax income"' in text and '"Marketing"' not in text
    op = _undefined("Does Heron have an improving operating margin?", CARD_ISSUER)
    assert op is not None and "reports no operating income line" in op


def test_every_row_the_sentence_names_is_cited() -> None:
    match = find_formula("Heron's operating margin")
    assert match is not None
    sl = _lines(CARD_ISSUER)
    result = compute(match, [2024], "Heron", "HRN", lambda m, y, t: sl.value(m, y, t))
    found = undefined_figure(match.formula, result, sl, "Heron", "HRN", 2024)
    assert found is not None
    rows = {q.text.split("|")[1].strip() for q in found.quotes if q.role == "row"}
    named = {part.split('"')[1] for part in found.text.split("its total and net lines are ")[1].split("; ")}
    assert named <= rows and "Total revenues net of interest expense" in rows
    assert all(CARD_ISSUER[q.start:q.end] == q.text for q in found.quotes)


def test_a_line_split_in_parts_a_cut_statement_or_a_printed_line_is_never_called_undefined() -> None:
    assert _undefined("What is Heron's gross margin for fiscal 2024?", SPLIT_COSTS) is None
    assert _undefined("What is Heron's gross margin for fiscal 2024?", CUT) is None
    printed = CARD_ISSUER.replace("| Marketing | 3,900 | 3,600 |", "| Operating income | 9,400 | 8,800 |")
    match = find_formula("Heron's operating margin")
    assert match is not None
    sl = _lines(printed)
    assert compute(match, [2024], "Heron", "HRN", lambda m, y, t: sl.value(m, y, t)).sentence is not None


# An aircraft maker that prints its cost of revenue only in parts, negative, with no total (Regulation S-X 5-03).
PARTS = """Consolidated Statements of Operations
(Dollars in millions)

| Years ended December 31, | 2024 | 2023 |
| --- | --- | --- |
| Sales of products | $50,000 | $46,000 |
| Sales of services | 10,000 | 9,000 |
| Total revenues | 60,000 | 55,000 |
| Cost of products | (45,000) | (42,000) |
| Cost of services | (8,000) | (7,500) |
| Capital interest expense | (30) | (30) |
| Total costs and expenses | (53,030) | (49,530) |
| General and administrative expense | (4,000) | (3,900) |
| Net loss | (1,200) | (900) |
"""


def test_a_line_printed_only_in_parts_is_their_sum_each_part_cited() -> None:
    sl = _lines(PARTS)
    lv = sl.value(METRIC["cost_of_revenue"], 2024, 2024)
    assert lv is not None and lv.value == 53_000e6  # products + services; the interest expense is no part
    assert [p["row"] for p in lv.figure.provenance["parts"]] == ["Cost of products", "Cost of services"]
    assert {q.text for q in lv.quotes if q.role == "row"} == {"| Cost of products | (45,000) | (42,000) |",
                                                               "| Cost of services | (8,000) | (7,500) |"}
    match = find_formula("Does Heron have an improving gross margin profile as of FY2024?")
    assert match is not None
    got = compute(match, [2024], "Heron", "HRN", lambda m, y, t: sl.value(m, y, t))
    assert got.sentence is not None and got.sentence.values[0].text == "11.67%"  # (60,000 - 53,000) / 60,000
    # a loss year's lines are the lines: "Net loss" is net income, negative
    loss = sl.value(METRIC["net_income"], 2024, 2024)
    assert loss is not None and loss.value == -1_200e6
    with_op = PARTS.replace("| General and administrative expense | (4,000) | (3,900) |",
                            "| Loss from operations | (1,030) | (800) |")
    op = _lines(with_op).value(METRIC["operating_income"], 2024, 2024)
    assert op is not None and op.value == -1_030e6
    # one part alone is no split line, and a table without the bottom line is not the income statement
    assert _lines(SPLIT_COSTS).value(METRIC["cost_of_revenue"], 2024, 2024) is None
    cut = PARTS.replace("| Net loss | (1,200) | (900) |\n", "")
    assert _lines(cut).value(METRIC["cost_of_revenue"], 2024, 2024) is None


def test_a_statement_missing_revenue_or_a_plural_cost_line_is_never_called_undefined() -> None:
    # "Merchandise costs": the line's own word as a plural; "Total receipts ...": revenue the reader does not know
    costs = CARD_ISSUER.replace("| Card Member rewards | 9,700 | 8,800 |", "| Merchandise costs | 9,700 | 8,800 |")
    assert _undefined("What is Heron's gross margin for fiscal 2024?", costs) is None
    renamed = CARD_ISSUER.replace("Total revenues net of interest expense", "Total receipts net of interest expense")
    assert _undefined("What is Heron's gross margin for fiscal 2024?", renamed) is None
    # a beverage maker's or a utility's revenue line is revenue
    operating = _lines(PARTS.replace("| Total revenues |", "| Net operating revenues |"))
    lv = operating.value(METRIC["revenue"], 2024, 2024)
    assert lv is not None and lv.value == 60_000e6


def test_a_share_of_revenue_table_is_never_read_as_dollars_and_a_tie_goes_to_the_statement() -> None:
    shares = """The following table sets forth items as a percentage of revenue.

| | Year Ended Jan 26, 2025 | Year Ended Jan 28, 2024 |
| --- | --- | --- |
| Revenue | 100.0% | 100.0% |
| Cost of revenue | 25.0 | 27.3 |

Stock-based compensation (In millions)

| | Year Ended Jan 26, 2025 | Year Ended Jan 28, 2024 |
| --- | --- | --- |
| Cost of revenue | $178 | $141 |

Consolidated Statements of Income (In millions)

| | Year Ended Jan 26, 2025 | Year Ended Jan 28, 2024 |
| --- | --- | --- |
| Revenue | $130,497 | $60,922 |
| Cost of revenue | 32,639 | 16,621 |
| Net income | $72,880 | $29,760 |
"""
    sl = StatementLines({"n": (2025, "10-K")}, {"n": shares}.__getitem__)
    lv = sl.value(METRIC["cost_of_revenue"], 2025, 2025)
    assert lv is not None and lv.value == 32_639e6  # not 25.0 (a share), not 178 (a note's part)
    shares_only = shares[:shares.index("Stock-based")]
    alone = StatementLines({"n": (2025, "10-K")}, {"n": shares_only}.__getitem__)
    assert alone.value(METRIC["cost_of_revenue"], 2025, 2025) is None  # a share of revenue is no dollar figure
    no_shares = shares[shares.index("Stock-based"):]
    tie = StatementLines({"n": (2025, "10-K")}, {"n": no_shares}.__getitem__).value(METRIC["cost_of_revenue"], 2025,
                                                                                     2025)
    assert tie is not None and tie.value == 32_639e6  # one each: the income statement's row


def test_a_lines_own_words_leave_the_words_every_line_uses() -> None:
    assert own_words(METRIC["cost_of_revenue"]) >= {"cost", "cogs"}
    assert own_words(METRIC["operating_income"]) == {"operating", "operations"}
    assert not own_words(METRIC["cost_of_revenue"]) & {"revenue", "sales", "income", "total", "net"}


def test_the_reason_a_figure_changed_is_asked_without_computing_it() -> None:
    q = analyse_question("What drove gross margin change in FY2024 for Heron?", HERON)
    assert q.formula is None and q.explained is not None and q.explained.formula.key == "gross_margin"
    assert analyse_question("What was Heron's gross margin in FY2024?", HERON).explained is None


def card_issuer_store() -> OneFilingStore:
    """A docstore of one 10-K holding ``CARD_ISSUER``."""
    return OneFilingStore(CARD_ISSUER, "HRN", "Heron Card Services", 2024, date(2025, 2, 20), date(2024, 12, 31))


def _answer(question: str) -> tuple[Any, list[str]]:
    q = analyse_question(question, HERON, (), Stemmer.Stemmer("english"))
    passage = PassageRead(doc_id="h", start=0, end=len(CARD_ISSUER), score=1.0, ticker="HRN")
    degraded: list[str] = []
    chain = Answerer(card_issuer_store()).chain  # type: ignore[arg-type]
    outcome, _steps = run_chain(chain, SideInput(q, "HRN", (passage,), date(2025, 6, 30), ("h",)), degraded)
    return outcome, degraded


def test_the_answer_path_says_so_for_a_figure_asked_and_for_the_reason_it_changed() -> None:
    for question in ("Does Heron have an improving operating margin profile as of FY2024?",
                     "What drove the gross margin change in FY2024 for Heron?"):
        outcome, degraded = _answer(question)
        assert isinstance(outcome, Answered), question
        assert outcome.sentences[0].text.startswith("Heron Card Services's statements do not define")
        assert outcome.note.endswith("is not defined by Heron Card Services's income statement")
        assert any("found" in d for d in degraded)  # the missing line is named in degraded


def test_the_reason_a_defined_figure_changed_is_left_to_the_passages() -> None:
    q = analyse_question("What drove the net margin change in FY2024 for Heron?", HERON, (), Stemmer.Stemmer("english"))
    assert q.explained is not None and q.explained.formula.key == "net_margin"
    outcome = ComputedFigure(FigureAnswerer(card_issuer_store(), None)).run(  # type: ignore[arg-type]
        SideInput(q, "HRN", (), date(2025, 6, 30), ("h",)))
    assert isinstance(outcome, NotApplicable) and "read from the passages" in outcome.reason


def test_the_bottom_line_is_net_income_earnings_or_loss_not_net_interest_income() -> None:
    from equimind.answer.lines import bottom_line

    assert all(bottom_line(x) for x in ("Net income", "Net loss", "Net earnings (loss)",
                                        "Net income attributable to Heron Corp.", "Net income (loss)"))
    assert not any(bottom_line(x) for x in ("Net interest income", "Net card fees", "Income tax provision",
                                            "Net income per share", "Net sales"))


def test_a_figure_missing_a_line_of_another_statement_is_never_called_undefined() -> None:
    # the income statement holds no equity, payables or capital expenditure row: that proves nothing about the
    # balance sheet or the cash-flow statement, so nothing is claimed (before, "statements do not define return on
    # equity" was said of a company that prints its shareholders' equity)
    for question in ("What is Heron's return on equity for fiscal 2024?", "What is Heron's debt to equity?",
                     "What is Heron's capital expenditures to revenue ratio in fiscal 2024?"):
        assert _undefined(question, CARD_ISSUER) is None
