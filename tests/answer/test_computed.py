"""Computed figures (``answer.computed``): the formula a question names, its lines from statement rows (synthetic
filings laid out as the PDF parser writes them) or from the recorded XBRL companyfacts, every input cited."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from equimind.answer.computed import compute
from equimind.answer.lines import StatementLines, XbrlLines, cell_number, label_names, years_above
from equimind.answer.record import Method
from equimind.lexicon.concepts import METRICS
from equimind.lexicon.formulas import find_formula
from equimind.query.figure_asks import asked_decimals
from tests.answer.asking import ask

METRIC = {m.key: m for m in METRICS}

INCOME = """Segment information (in millions)

| | 2017 | 2016 | 2015 |
| --- | --- | --- | --- |
| Net sales | $106,110 | $79,785 | $63,708 |
| Consolidated net sales | $177,866 | $135,987 | $107,006 |

CONSOLIDATED STATEMENTS OF OPERATIONS
(in millions)

| | 2017 | 2016 | 2015 |
| --- | --- | --- | --- |
| Total net sales | $177,866 | $135,987 | $107,006 |
| Cost of sales | 111,934 | 88,265 | 71,651 |
| Net income (loss) | $3,033 | $2,371 | $596 |

CONSOLIDATED BALANCE SHEETS
(in millions)

December 31,
| | 2016 | 2017 |
| --- | --- | --- |
| Inventories | 11,461 | 16,047 |
| Total current assets | 45,781 | 60,197 |
| Total assets | $83,402 | $131,310 |
| Accounts payable | $25,309 | $34,616 |
| Total current liabilities | 43,816 | 57,883 |

Deferred tax items (in millions)

| | 2017 | 2016 |
| --- | --- | --- |
| Depreciation and amortization | (2,568) | (2,332) |

CONSOLIDATED STATEMENTS OF CASH FLOWS
(in millions)
Year Ended December 31,
| | 2017 | 2016 | 2015 |
| --- | --- | --- | --- |
| Net income | $3,033 | $2,371 | $596 |
Adjustments to reconcile net income to net cash from operating activities:
| | | | |
| --- | --- | --- | --- |
| Depreciation and amortization of property and equipment | 11,478 | 8,116 | 6,281 |
"""
SELECTED = """Five-Year Financial Highlights
$ in millions
Fiscal Year 2019 (1) 2018 2017
| | | | |
| --- | --- | --- | --- |
| Revenue | $42,879 | $42,151 | $39,403 |
"""


def lines(text: str = INCOME, fy: int = 2017) -> StatementLines:
    return StatementLines({"d": (fy, "10-K")}, {"d": text}.__getitem__)


def test_formulas_are_named_by_their_phrases() -> None:
    dpo = find_formula("What is Amazon's FY2017 days payable outstanding (DPO)?")
    assert dpo is not None and dpo.formula.key == "dpo" and not dpo.average_years
    avg = find_formula("what is the FY2015 - FY2017 3 year average net profit margin (as a %) for Best Buy?")
    assert avg is not None and avg.formula.key == "net_margin" and avg.average_years
    # the longer phrase wins: a working capital ratio is not working capital; an EBITDA margin is not EBITDA
    assert find_formula("Block's FY2016 working capital ratio").formula.key == "current_ratio"  # type: ignore[union-attr]
    assert find_formula("the FY2015 unadjusted EBITDA % margin").formula.key == "ebitda_margin"  # type: ignore[union-attr]
    assert find_formula("What was NVIDIA's revenue in fiscal 2025?") is None
    assert asked_decimals("Round your answer to two decimal places.") == 2
    assert asked_decimals("round to one decimal place") == 1 and asked_decimals("in USD millions") is None


def test_statement_labels_and_cells() -> None:
    assert label_names(METRIC["net_income"], "Net income (loss)")
    assert label_names(METRIC["net_income"], "Net earnings attributable to Best Buy Co., Inc. shareholders")
    assert label_names(METRIC["revenue"], "Total\xa0net\xa0sales")
    assert not label_names(METRIC["revenue"], "Cost of sales")
    assert label_names(METRIC["depreciation_amortization"], "Depreciation and amortization of property")
    assert not label_names(METRIC["total_assets"], "Total assets of discontinued operations")
    assert cell_number("$ (1,577)") == -1577 and cell_number("23%") is None and cell_number("—") is None
    assert years_above(SELECTED, SELECTED.index("| |")) == [2019, 2018, 2017]


def test_a_line_is_the_value_its_filing_states_most_often_never_a_negative_total() -> None:
    sl = lines()
    revenue = sl.value(METRIC["revenue"], 2017, 2017)
    assert revenue is not None and revenue.value == 177_866e6  # not the segment's 106,110, read first
    assert revenue.figure.provenance["rows_agreeing"] == "2 of 3"
    roles = [q.role for q in revenue.quotes]
    # of the two rows stating it, the income statement's (its table ends in the net income line) is quoted
    assert roles == ["row", "header", "unit"] and revenue.quotes[0].text.startswith("| Total net sales")
    da = sl.value(METRIC["depreciation_amortization"], 2017, 2017)
    assert da is not None and da.value == 11_478e6  # the cash-flow add-back, read under the split table's years
    sel = StatementLines({"s": (2019, "10-K")}, {"s": SELECTED}.__getitem__).value(METRIC["revenue"], 2018, 2019)
    assert sel is not None and sel.value == 42_151e6


def test_growth_and_days_payable_are_computed_with_every_input_cited() -> None:
    sl = lines()

    def lookup(metric: Any, year: int, t: int) -> Any:
        return sl.value(metric, year, t)

    growth = compute(find_formula("year-over-year change in revenue"), [2016, 2017], "Amazon", "AMZN",  # type: ignore[arg-type]
                     lookup, decimals=1)
    assert growth.sentence is not None and growth.sentence.method is Method.COMPUTED
    assert "30.8%" in growth.sentence.text and "(revenue[t] - revenue[t-1]) / revenue[t-1]" in growth.sentence.text
    assert growth.sentence.figures[0].provenance["computed"] is True
    assert {q.role for q in growth.sentence.quotes} == {"row", "header", "unit"}
    dpo = compute(find_formula("days payable outstanding"), [2017], "Amazon", "AMZN", lookup)  # type: ignore[arg-type]
    assert dpo.sentence is not None
    expected = 365 * (25_309 + 34_616) / 2 / (111_934 + 16_047 - 11_461)
    assert dpo.sentence.figures[0].value == pytest.approx(expected) and f"{expected:.2f} days" in dpo.sentence.text
    # a line the filing does not have is named, and nothing is computed
    roe = compute(find_formula("return on equity"), [2017], "Amazon", "AMZN", lookup)  # type: ignore[arg-type]
    assert roe.sentence is None and "stockholders' equity for fiscal 2017" in roe.reason


def test_an_average_over_years_is_the_mean_of_each_year() -> None:
    sl = lines()
    match = find_formula("the FY2015 - FY2017 3 year average net profit margin")
    res = compute(match, [2015, 2017], "Amazon", "AMZN", lambda m, y, t: sl.value(m, y, t), decimals=1)  # type: ignore[arg-type]
    each = [596 / 107_006, 2_371 / 135_987, 3_033 / 177_866]
    assert res.sentence is not None
    assert res.sentence.figures[0].value == pytest.approx(sum(each) / 3 * 100)
    assert "fiscal 2015-2017 average" in res.sentence.text


def test_apple_net_margin_from_xbrl_as_filed(facts: Any) -> None:
    xl = XbrlLines(facts.company_facts("AAPL"), date(2025, 9, 30))
    res = compute(find_formula("net profit margin"), [2024], "Apple Inc.", "AAPL",  # type: ignore[arg-type]
                  lambda m, y, t: xl.value(m, y))
    assert res.sentence is not None
    fig = res.sentence.figures[0]
    assert fig.value == pytest.approx(93_736 / 391_035 * 100)
    assert {i["concept"] for i in fig.provenance["inputs"]} == {
        "us-gaap:NetIncomeLoss", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"}
    assert fig.provenance["inputs_from"] == ["xbrl"] and "23.97%" in res.sentence.text
    # as of a day before the FY2024 10-K was filed, fiscal 2024 has no lines
    early = XbrlLines(facts.company_facts("AAPL"), date(2024, 10, 31))
    assert compute(find_formula("net profit margin"), [2024], "Apple Inc.", "AAPL",  # type: ignore[arg-type]
                   lambda m, y, t: early.value(m, y)).sentence is None


def test_the_answerer_computes_a_named_ratio_and_says_when_it_cannot(answerer: Any, search: Any) -> None:
    from tests.answer.conftest import AS_OF

    question = "What was NVIDIA's net profit margin in fiscal 2025?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.parsed_question["computed"] == "net_margin" and not ans.parsed_question["xbrl_ask"]
    (sentence,) = ans.sentences
    assert sentence.method is Method.COMPUTED and "55.85%" in sentence.text  # 72,880 / 130,497
    assert sentence.figures[0].provenance["inputs_from"] == ["xbrl"]
    quarter = "What was NVIDIA's operating margin in the second quarter of fiscal 2026?"
    ans = ask(answerer, quarter, "NVDA", AS_OF, search(quarter))
    assert all(s.method is not Method.COMPUTED for s in ans.sentences)
    assert any("computed for fiscal years" in d for d in ans.degraded)


CASH_FIRST = """CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions)
| | 2017 | 2016 |
| --- | --- | --- |
| Net income | 3,033 | 2,371 |
Changes in operating assets and liabilities:
| | | |
| --- | --- | --- |
| Accounts payable | 7,175 | 5,030 |

CONSOLIDATED BALANCE SHEETS (in millions)
| | 2016 | 2017 |
| --- | --- | --- |
| Accounts payable | 25,309 | 34,616 |
"""
TAX = """(in millions)
| | 2022 | 2021 |
| --- | --- | --- |
| Income before income taxes | 9,577 | 10,481 |
| Income tax provision | 2,063 | 2,521 |
"""


def test_a_row_under_its_own_year_header_wins_over_a_year_line_read_from_above() -> None:
    ap = lines(CASH_FIRST).value(METRIC["accounts_payable"], 2017, 2017)
    assert ap is not None and ap.value == 34_616e6  # the balance, not the cash-flow statement's change


def test_a_change_ask_states_each_year_and_the_change() -> None:
    from equimind.query.figure_asks import asks_each_year

    ask = "How much has the effective tax rate of American Express changed between FY2021 and FY2022?"
    match = find_formula(ask)
    assert match is not None and asks_each_year(ask, match)
    assert not asks_each_year("year-over-year change in revenue from FY2016 to FY2017",
                              find_formula("year-over-year change in revenue"))  # type: ignore[arg-type]
    sl = lines(TAX, 2022)
    res = compute(match, [2021, 2022], "American Express", "AXP", lambda m, y, t: sl.value(m, y, t),
                  each_year=True)
    assert res.sentence is not None
    assert "fiscal 2021: 24.05%, fiscal 2022: 21.54%" in res.sentence.text
    assert "-2.51 percentage points" in res.sentence.text and len(res.sentence.values) == 2


def test_a_reported_line_is_stated_in_the_asked_unit_or_as_printed() -> None:
    from equimind.answer.lines import line_sentence
    from equimind.answer.values import table_scale

    assert table_scale("(Millions, except per share amounts)") == 1e6
    assert table_scale("(Dollars in millions)") == 1e6 and table_scale("Year ended (Note 3)") == 1.0
    thousands = "BALANCE SHEETS (in thousands)\n| | 2017 | 2016 |\n| --- | --- | --- |\n" \
                "| Total current liabilities | 5,466,312 | 4,586,657 |\n"
    lv = lines(thousands).value(METRIC["current_liabilities"], 2017, 2017)
    assert lv is not None
    s = line_sentence(lv, "NFLX", 1e6)
    assert s.text == "Total current liabilities: $5,466 million (printed: 5,466,312, in thousands) (2017)."
    assert [q.role for q in s.quotes] == ["row", "header", "unit"]
    bare = "| | 2017 | 2016 |\n| --- | --- | --- |\n| Total current liabilities | 5,466 | 4,587 |\n"
    lv = lines(bare).value(METRIC["current_liabilities"], 2017, 2017)
    assert lv is not None
    assert line_sentence(lv, "NFLX", 1e6).text == ("Total current liabilities: 5,466 (the table states no unit) "
                                                   "(2017).")


def test_a_yes_no_ask_about_a_direction_compares_two_years() -> None:
    from equimind.answer.computed import trend
    from equimind.lexicon.formulas import FormulaMatch, metric_formula
    from equimind.query.figure_asks import trend_word

    assert trend_word("Has Microsoft increased its debt on balance sheet between FY2023 and FY2022?") == "up"
    assert trend_word("Was there any drop in cash between FY2023 and FY2024?") == "down"
    assert trend_word("Is 3M a capital-intensive business?") is None
    sl = lines()

    def lookup(m: Any, y: int, t: int) -> Any:
        return sl.value(m, y, t)

    margin = trend(find_formula("an improving net profit margin"), [2016, 2017], "Amazon", "AMZN",  # type: ignore[arg-type]
                   lookup, "up")
    assert margin.sentence is not None and margin.sentence.text.startswith("No: Amazon's net profit margin fell")
    assets = trend(FormulaMatch(metric_formula(METRIC["total_assets"]), "total assets", False), [2016, 2017],
                   "Amazon", "AMZN", lookup, "up")
    assert assets.sentence is not None
    assert assets.sentence.text.startswith("Yes: Amazon's total assets rose from $83,402 million in fiscal 2016 to "
                                           "$131,310 million in fiscal 2017 (+$47,908 million) as reported")


def test_the_answerer_answers_a_direction_ask_from_xbrl(answerer: Any, search: Any) -> None:
    from tests.answer.conftest import AS_OF

    question = "Did NVIDIA's net profit margin improve in fiscal 2025?"
    ans = ask(answerer, question, "NVDA", AS_OF, search(question))
    assert ans.parsed_question["computed"] == "net_margin"
    (sentence,) = ans.sentences
    assert sentence.method is Method.COMPUTED
    assert sentence.text.startswith("Yes: NVIDIA") and "in fiscal 2024 to 55.85% in fiscal 2025" in sentence.text


def test_a_computed_figure_without_companyfacts_says_where_its_lines_came_from(nvda_services: Any,
                                                                                 search: Any) -> None:
    from equimind.answer.answerer import Answerer
    from tests.answer.conftest import AS_OF

    question = "What was NVIDIA's net profit margin in fiscal 2025?"
    ans = ask(Answerer(nvda_services.docstore), question, "NVDA", AS_OF, search(question))
    (sentence,) = ans.sentences
    assert sentence.method is Method.COMPUTED
    assert sentence.figures[0].provenance["inputs_from"] == ["statement"]
    assert any(d.startswith("computed: no companyfacts source given") for d in ans.degraded)
