"""Line items named by their XBRL labels (issue 28: metric words from data): the label grammar, the ambiguity rule,
the shipped table against the recorded companyfacts, and asks of our own wordings answered from companyfacts and
from a made-up company's statement rows."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from equimind.answer.lines import StatementLines
from equimind.answer.xbrl_answer import xbrl_answer
from equimind.lexicon.concepts import ampersand_acronyms, find_metrics
from equimind.lexicon.line_items import LabelledConcept, LineItems, label_phrases, load_line_items
from equimind.query.analysis import Subject, name_words
from equimind.query.kinds import AnswerKind
from equimind.query.periods import Period, PeriodKind
from equimind.query.question import analyse_question

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("EQUIMIND_SHARED", ROOT.parent / "shared"))
ORBIT = Subject("ORBT", name_words("ORBT", "Orbit Power Inc."))
NVDA = Subject("NVDA", name_words("NVDA", "NVIDIA CORP"))


@pytest.mark.parametrize(("label", "wanted", "unwanted"), [
    ("Selling, General and Administrative Expense", {"selling general and administrative expense", "sg&a", "sga",
                                                     "sgna", "selling general and administrative",
                                                     "selling general and administrative expenses"},
     {"selling", "sg&ae"}),
    ("Property, Plant and Equipment, Net", {"property plant and equipment", "net property plant and equipment",
                                            "pp&e", "ppne", "property plant and equipment net"}, {"property"}),
    ("Intangible Assets, Net (Excluding Goodwill)", {"intangible assets", "net intangible assets"},
     {"excluding goodwill", "intangible assets net excluding goodwill"}),
    ("Accounts Payable, Current", {"accounts payable", "accounts payable current"}, set()),
    ("Research and Development Expense", {"research and development expense", "r&d"}, {"rd", "rnd"}),
    ("Goodwill", set(), {"goodwill"}),
    ("Net Cash Provided by (Used in) Investing Activities", {"net cash provided by investing activities",
                                                            "net cash used in investing activities"}, set()),
    ("Retained Earnings (Accumulated Deficit)", {"retained earnings", "accumulated deficit"}, set()),
    ("Interest Expense", {"interest expense"}, set()),
    ("Selling and Marketing Expense", {"selling and marketing expense", "sales and marketing"}, set()),
])
def test_the_phrases_of_a_label_follow_the_label_grammar(label: str, wanted: set[str], unwanted: set[str]) -> None:
    phrases = set(label_phrases(label))
    assert wanted <= phrases
    assert not unwanted & phrases


def test_a_phrase_two_labels_give_belongs_to_neither_unless_it_is_a_whole_label() -> None:
    items = LineItems((LabelledConcept("us-gaap:WidgetsCurrent", "Widget Reserves, Current", "USD", False),
                       LabelledConcept("us-gaap:WidgetsNoncurrent", "Widget Reserves, Noncurrent", "USD", False),
                       LabelledConcept("us-gaap:GizmoCosts", "Gizmo Costs", "USD", True),
                       LabelledConcept("us-gaap:GizmoCostsNet", "Gizmo Costs, Net", "USD", True)), {})
    assert items.find("What were the widget reserves?") == []
    current = items.find("What were the widget reserves, current?")
    assert [m.metric.key for m in current] == ["us-gaap:WidgetsCurrent"]
    # "gizmo costs" is the whole label of one and the head of the other: the whole label wins
    assert [m.metric.key for m in items.find("What were the gizmo costs?")] == ["us-gaap:GizmoCosts"]
    assert [m.metric.key for m in items.find("net gizmo costs")] == ["us-gaap:GizmoCostsNet"]


def test_acronyms_around_an_ampersand_are_also_written_without_it_or_with_n() -> None:
    assert set(ampersand_acronyms("net pp&e")) == {"net pp&e", "net ppe", "net ppne"}
    assert ampersand_acronyms("r&d expense") == ("r&d expense",)  # two letters: "rd" names nothing
    found = find_metrics("What is the year end FY2020 net PPNE for Orbit Power?")
    assert [m.metric.key for m in found] == ["ppe_net"]


@pytest.mark.parametrize(("wording", "concept"), [
    ("What was Orbit Power's SG&A in fiscal 2023?", "us-gaap:SellingGeneralAndAdministrativeExpense"),
    ("How much selling, general and administrative expense did Orbit Power report for FY2023?",
     "us-gaap:SellingGeneralAndAdministrativeExpense"),
    ("How much advertising expense did Orbit Power have in 2023?", "us-gaap:AdvertisingExpense"),
    ("What were Orbit Power's total operating expenses in fiscal 2023?", "us-gaap:OperatingExpenses"),
    ("What were Orbit Power's net intangible assets at the end of 2023?",
     "us-gaap:IntangibleAssetsNetExcludingGoodwill"),
])
def test_an_amount_ask_naming_a_line_item_by_its_label_is_asked_of_that_concept(wording: str, concept: str) -> None:
    q = analyse_question(wording, ORBIT)
    assert q.metric is not None and q.metric.metric.key == concept
    assert q.value_kind is AnswerKind.AMOUNT and q.xbrl


@pytest.mark.parametrize("wording", [
    "Why did Orbit Power's operating expenses rise in 2023?",  # a reason, not a figure
    "How much did Orbit Power spend on marketing expense in its storage segment?",  # a segment's line
    "What drove interest expense at Orbit Power?",
    "What is Orbit Power's operating margin in 2023?",  # a computed figure is named: the catalogue answers it
])
def test_a_label_does_not_capture_an_ask_about_more_than_the_line(wording: str) -> None:
    q = analyse_question(wording, ORBIT)
    assert q.metric is None or not q.metric.metric.key.startswith("us-gaap:")


def test_a_yes_no_ask_about_a_line_items_direction_gets_both_years() -> None:
    q = analyse_question("Did Orbit Power's SG&A increase in fiscal 2023?", ORBIT)
    assert q.value_kind is AnswerKind.YES_NO and q.trend == "up"
    assert q.formula is not None and q.formula.formula.key == "us-gaap:SellingGeneralAndAdministrativeExpense"


ORBIT_STATEMENTS = """CONSOLIDATED STATEMENTS OF OPERATIONS
(in millions)

| | 2023 | 2022 |
| --- | --- | --- |
| Revenues | 5,120 | 4,480 |
| Selling, general and administrative | 611 | 540 |
| Interest expense | 47 | 52 |
"""


def test_a_line_item_without_companyfacts_is_read_from_the_statement_row_its_label_names() -> None:
    q = analyse_question("What was Orbit Power's selling, general and administrative expense in 2023?", ORBIT)
    assert q.metric is not None
    lines = StatementLines({"o": (2023, "10-K")}, {"o": ORBIT_STATEMENTS}.__getitem__)
    interest = analyse_question("How much interest expense did Orbit Power have in 2023?", ORBIT)
    assert interest.metric is not None
    got = lines.value(interest.metric.metric, 2023, 2023)
    assert got is not None and got.value == 47e6
    # the statement prints "Selling, general and administrative" without "expense": the series is a phrase too
    sga = lines.value(q.metric.metric, 2023, 2023)
    assert sga is not None and sga.value == 611e6
    assert sga.figure.provenance["row"] == "Selling, general and administrative"


def test_the_shipped_label_table_is_what_the_recorded_companyfacts_give() -> None:
    corpus = SHARED / "corpus"
    if not (corpus / "sec" / "companyfacts").is_dir():
        pytest.skip(f"the recorded corpus is not at {corpus}: set EQUIMIND_SHARED to the folder holding corpus/")
    import importlib.util
    spec = importlib.util.spec_from_file_location("build_line_labels", ROOT / "scripts" / "build_line_labels.py")
    assert spec is not None and spec.loader is not None
    builder: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    shipped = json.loads((ROOT / "equimind" / "lexicon" / "data" / "xbrl_labels.json").read_text(encoding="utf-8"))
    assert builder.build(corpus) == shipped
    assert all("deprecated" not in c["label"].lower() for c in shipped["concepts"])


def test_nvidia_sga_is_answered_from_companyfacts_as_filed(facts: Any) -> None:
    q = analyse_question("What was NVIDIA's SG&A in fiscal 2025?", NVDA)
    assert q.metric is not None and q.xbrl
    cf = facts.company_facts("NVDA")
    as_of = date(2025, 9, 30)
    result = xbrl_answer(cf, q.metric.metric, Period(PeriodKind.FISCAL_YEAR, "fy25", fiscal_year=2025), as_of,
                         "NVDA")
    assert result.sentence is not None
    fig = result.sentence.figures[0]
    filed = [f for f in cf.get("us-gaap:SellingGeneralAndAdministrativeExpense", "USD")
             if f.end == date(2025, 1, 26) and f.days and f.days > 350 and f.filed <= as_of]
    assert filed and fig.value == filed[0].value
    assert fig.provenance["concept"] == "us-gaap:SellingGeneralAndAdministrativeExpense"
    assert "selling, general and administrative expense" in result.sentence.text.lower()


def test_every_label_concept_loads_as_a_line() -> None:
    items = load_line_items()
    assert items.concepts and all(spec.concepts == (key,) for key, spec in items.specs.items())


KESTREL = Subject("KSTR", frozenset({"kestrel"}))
KESTREL_STATEMENTS = """CONSOLIDATED STATEMENTS OF OPERATIONS
(in thousands)

| | 2023 | 2022 |
| --- | --- | --- |
| Net sales | 2,400,000 | 2,200,000 |
| Cost of sales | 1,500,000 | 1,400,000 |
| Selling, general and administrative | 480,000 | 462,000 |
| Operating income | 420,000 | 338,000 |
| Interest expense | (35,000) | (31,000) |
| Net income | 300,000 | 240,000 |

CONSOLIDATED STATEMENTS OF CASH FLOWS
(in thousands)

| | 2023 | 2022 |
| --- | --- | --- |
| Dividends paid | (90,000) | (80,000) |
"""


def _kestrel_lookup() -> Any:
    sl = StatementLines({"k": (2023, "10-K")}, {"k": KESTREL_STATEMENTS}.__getitem__)
    return lambda metric, year, t: sl.value(metric, year, t)


@pytest.mark.parametrize(("wording", "key", "value"), [
    ("What is Kestrel's FY2023 COGS % margin?", "cost_of_revenue/revenue", 1_500 / 2_400 * 100),
    ("What was Kestrel's SG&A as a percentage of net sales in fiscal 2023?",
     "us-gaap:SellingGeneralAndAdministrativeExpense/revenue", 480 / 2_400 * 100),
    ("What is the year-over-year change in Kestrel's unadjusted operating income from FY2022 to FY2023, in "
     "percent?", "operating_income@growth", (420 - 338) / 338 * 100),
    ("How fast did Kestrel's selling, general and administrative expense grow in 2023? Give the growth rate.",
     "us-gaap:SellingGeneralAndAdministrativeExpense@growth", (480 - 462) / 462 * 100),
])
def test_a_lines_share_of_revenue_and_growth_are_composed_from_any_line(wording: str, key: str,
                                                                         value: float) -> None:
    from equimind.answer.computed import compute
    q = analyse_question(wording, KESTREL)
    assert q.formula is not None and q.formula.formula.key == key
    years = [p.fiscal_year for p in q.periods if p.fiscal_year] or [2023]
    got = compute(q.formula, years, "Kestrel", "KSTR", _kestrel_lookup(), q.decimals, q.scale)
    assert got.sentence is not None, got.reason
    assert got.sentence.figures[0].value == pytest.approx(value)
    assert "computed as" in got.sentence.text


@pytest.mark.parametrize("wording", [
    "What drove the change in Kestrel's operating income in 2023?",  # a reason
    "How much did Kestrel's operating income change from 2022 to 2023?",  # an amount, not a percent
    "What was Kestrel's revenue growth in 2023?",  # the catalogue's own figure
])
def test_composition_leaves_reasons_amounts_and_catalogue_figures_alone(wording: str) -> None:
    q = analyse_question(wording, KESTREL)
    assert q.formula is None or ("@" not in q.formula.formula.key and "/" not in q.formula.formula.key)


@pytest.mark.parametrize(("wording", "key", "value"), [
    ("What was Kestrel's interest coverage ratio in fiscal 2023?", "interest_coverage", 420 / 35),
    ("What is Kestrel's FY2023 times interest earned?", "interest_coverage", 420 / 35),
    ("What was Kestrel's retention ratio for 2023?", "retention_ratio", (300 - 90) / 300 * 100),
])
def test_coverage_and_retention_are_computed_by_their_textbook_definitions(wording: str, key: str,
                                                                          value: float) -> None:
    from equimind.answer.computed import compute
    q = analyse_question(wording, KESTREL)
    assert q.formula is not None and q.formula.formula.key == key
    got = compute(q.formula, [2023], "Kestrel", "KSTR", _kestrel_lookup(), q.decimals, q.scale)
    assert got.sentence is not None, got.reason
    assert got.sentence.figures[0].value == pytest.approx(value)


CAPITAL = KESTREL_STATEMENTS + """
CONSOLIDATED BALANCE SHEETS
(in thousands)

| | 2023 | 2022 |
| --- | --- | --- |
| Property and equipment, net | 360,000 | 330,000 |
| Total assets | 1,800,000 | 1,700,000 |
"""


def test_a_capital_intensity_ask_gets_the_textbook_measures_with_every_input_cited_and_no_verdict() -> None:
    from equimind.answer.computed import compute
    q = analyse_question("Is Kestrel a capital-intensive business based on FY2023 data?", KESTREL)
    assert q.formula is not None and q.formula.formula.key == "capital_intensity"
    sl = StatementLines({"k": (2023, "10-K")}, {"k": CAPITAL}.__getitem__)
    got = compute(q.formula, [2023], "Kestrel", "KSTR", lambda m, y, t: sl.value(m, y, t), q.decimals, q.scale)
    assert got.sentence is not None, got.reason
    text = got.sentence.text
    assert "0.75" in text  # total assets / revenue: 1,800 / 2,400
    assert "20.00%" in text  # net PP&E / total assets: 360 / 1,800
    assert text.count("total assets fiscal 2023 $1,800 million") == 1  # an input shared by two figures, once
    # no capex line is printed: that figure is named as not computed, the others stand
    assert "Not computed" in text and "capital expenditures" in text
    assert "No threshold is applied" in text and not text.startswith(("Yes", "No:"))
    assert {f.name for f in got.sentence.figures} >= {"capital intensity ratio", "fixed assets to total assets"}


def test_a_stability_ask_gets_three_years_and_the_largest_move_between_two() -> None:
    from equimind.answer.computed import compute
    statements = """CONSOLIDATED STATEMENTS OF OPERATIONS
(in millions)

| | 2023 | 2022 | 2021 |
| --- | --- | --- | --- |
| Net sales | 1,000 | 900 | 800 |
| Cost of sales | 780 | 690 | 620 |
"""
    q = analyse_question("Are Kestrel's gross margins historically consistent?", KESTREL)
    assert q.formula is not None and q.formula.formula.key == "gross_margin"
    assert q.each_year and q.years_before == 2
    sl = StatementLines({"k": (2023, "10-K")}, {"k": statements}.__getitem__)
    got = compute(q.formula, [2021, 2022, 2023], "Kestrel", "KSTR", lambda m, y, t: sl.value(m, y, t), q.decimals,
                  q.scale, q.each_year)
    assert got.sentence is not None, got.reason
    text = got.sentence.text
    # 22.50%, 23.33%, 22.00%: the largest move is 2022 -> 2023
    assert "fiscal 2021: 22.50%" in text and "fiscal 2022: 23.33%" in text and "fiscal 2023: 22.00%" in text
    assert "largest change from one year to the next is -1.33 percentage points (fiscal 2022 to fiscal 2023)" in text
    # a direction ask or an ask naming two years is not a stability ask
    assert analyse_question("Did Kestrel's gross margin improve in 2023?", KESTREL).years_before == 0
    assert analyse_question("Was Kestrel's gross margin stable between FY2021 and FY2023?", KESTREL).years_before == 0


@pytest.mark.parametrize(("key", "label", "named"), [
    ("revenue", "Total revenues net of interest expense", True),  # a card issuer's revenue line
    ("capex", "Purchases of property and equipment excluding finance leases, net of sales", True),
    ("revenue", "Total revenues net of interest expense after provisions for credit losses", False),  # another line
    ("net_income", "Net income including noncontrolling interests", False),  # "including" widens the line
])
def test_a_clause_that_narrows_a_statement_line_keeps_it_the_named_line(key: str, label: str, named: bool) -> None:
    from equimind.answer.lines import label_names
    from equimind.lexicon.concepts import METRICS
    assert label_names(next(m for m in METRICS if m.key == key), label) is named
