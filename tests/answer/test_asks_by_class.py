"""Classes of asks the answer path got wrong on companies it was never tuned on (issue 28), each tested on a
company and wordings of our own: liquidity and cycle figures a filing never prints, a yes / no ask that names such a
figure, a spend stated as a positive amount, a decision ask whose only "topic" is the company itself, and a refusal
over local files that prints no empty fields."""

from __future__ import annotations

from typing import Any

import pytest
import Stemmer

from equimind.answer.answerer import Side, _refusal_message
from equimind.answer.computed import compute
from equimind.answer.extract import extract
from equimind.answer.lines import StatementLines, line_sentence
from equimind.answer.record import PassageRead, RefusalReason, StatedValue
from equimind.answer.rows import other_line
from equimind.answer.units import passage_units
from equimind.answer.values import counts, is_change
from equimind.lexicon.concepts import METRICS
from equimind.lexicon.formulas import find_formula
from equimind.query.analysis import AskKind, Subject, analyse, name_words
from equimind.query.kinds import AnswerKind
from equimind.query.question import analyse_question
from tests.answer.conftest import sentence_units

METRIC = {m.key: m for m in METRICS}
KESTREL = Subject("KSTR", frozenset({"kestrel"}))

# A made-up outfitter's statements, laid out as the PDF parser writes tables (in thousands).
STATEMENTS = """CONSOLIDATED STATEMENTS OF OPERATIONS
(in thousands)

| | 2023 | 2022 |
| --- | --- | --- |
| Net sales | 2,400,000 | 2,200,000 |
| Cost of sales | 1,500,000 | 1,400,000 |

CONSOLIDATED BALANCE SHEETS
(in thousands)

| | 2023 | 2022 |
| --- | --- | --- |
| Accounts receivable, net | 130,000 | 110,000 |
| Merchandise inventories | 410,000 | 390,000 |
| Total current assets | 900,000 | 850,000 |
| Accounts payable | 260,000 | 240,000 |
| Total current liabilities | 600,000 | 560,000 |

CONSOLIDATED STATEMENTS OF CASH FLOWS
(in thousands)

| | 2023 | 2022 |
| --- | --- | --- |
| Net cash provided by operating activities | 300,000 | 280,000 |
| Purchases of property and equipment | (87,500) | (64,200) |
"""


def _lookup() -> Any:
    sl = StatementLines({"k": (2023, "10-K")}, {"k": STATEMENTS}.__getitem__)
    return lambda metric, year, t: sl.value(metric, year, t)


def _analyse(question: str) -> Any:
    return analyse_question(question, KESTREL)


@pytest.mark.parametrize(("wording", "key"), [
    ("What was Kestrel's quick ratio at the end of fiscal 2023?", "quick_ratio"),
    ("Compute the acid-test ratio of Kestrel for FY2023.", "quick_ratio"),
    ("What is Kestrel's cash conversion cycle in FY2023?", "cash_conversion_cycle"),
    ("What was the operating cash flow ratio of Kestrel in 2023?", "operating_cash_flow_ratio"),
])
def test_liquidity_and_cycle_figures_are_named_by_their_usual_phrases(wording: str, key: str) -> None:
    found = find_formula(wording)
    assert found is not None and found.formula.key == key


def test_quick_ratio_and_cash_conversion_cycle_are_computed_from_the_lines_with_every_input_cited() -> None:
    lookup = _lookup()
    quick = compute(find_formula("quick ratio"), [2023], "Kestrel", "KSTR", lookup)  # type: ignore[arg-type]
    assert quick.sentence is not None
    assert quick.sentence.figures[0].value == pytest.approx((900_000 - 410_000) / 600_000)
    assert "0.82" in quick.sentence.text and "(current assets - inventories) / current liabilities" in \
        quick.sentence.text
    ccc = compute(find_formula("cash conversion cycle"), [2023], "Kestrel", "KSTR", lookup)  # type: ignore[arg-type]
    assert ccc.sentence is not None
    dio = 365 * (410_000 + 390_000) / 2 / 1_500_000
    dso = 365 * (130_000 + 110_000) / 2 / 2_400_000
    dpo = 365 * (260_000 + 240_000) / 2 / 1_500_000
    assert ccc.sentence.figures[0].value == pytest.approx(dio + dso - dpo)
    assert f"{dio + dso - dpo:.2f} days" in ccc.sentence.text
    cited = {q.text for q in ccc.sentence.quotes}
    assert any("Accounts receivable" in t for t in cited) and any("Accounts payable" in t for t in cited)


def test_a_yes_no_ask_that_names_a_figure_gets_the_figure_computed() -> None:
    q = _analyse("Does Kestrel have healthy liquidity in FY2023 based on its quick ratio?")
    assert q.value_kind is AnswerKind.YES_NO and q.trend is None
    assert q.formula is not None and q.formula.formula.key == "quick_ratio"
    # a reason asked for is still answered from the passages, not with a figure
    assert _analyse("What drove the change in Kestrel's quick ratio in FY2023?").formula is None


def test_a_spend_is_stated_as_a_positive_amount_and_the_quote_keeps_the_print() -> None:
    spend = _analyse("How much did Kestrel spend on purchases of property and equipment in fiscal 2023?")
    assert spend.outflow
    assert _analyse("What were Kestrel's capital expenditures in 2023?").outflow  # an outflow line
    assert not _analyse("What were Kestrel's net sales in 2023?").outflow
    lv = _lookup()(METRIC["capex"], 2023, 2023)
    assert lv is not None and lv.value == -87_500e3
    s = line_sentence(lv, "KSTR", 1e6, outflow=True)
    assert s.text.startswith("Purchases of property and equipment: $87.50 million (printed: (87,500), in thousands;")
    assert "outflow" in s.text and "-$" not in s.text
    assert s.values[0].number == 87_500e3
    assert s.quotes[0].text.startswith("| Purchases of property and equipment | (87,500)")
    # a line asked for as it is (not as a spend) keeps its sign
    assert line_sentence(lv, "KSTR", 1e6).text.startswith("Purchases of property and equipment: -$87.50 million")


@pytest.mark.parametrize("wording", ["Should I invest in this company?", "Is this stock a good investment?",
                                     "Would you buy the firm's shares?"])
def test_a_decision_ask_about_the_company_itself_has_no_topic(wording: str) -> None:
    a = analyse(wording, KESTREL)
    assert a.kind is AskKind.DECISION and a.topic == ()


def test_a_decision_ask_keeps_a_real_topic() -> None:
    a = analyse("Should I buy this stock given its store expansion plans?", KESTREL)
    assert {t.word for t in a.topic} >= {"store", "expansion"}


def test_a_refusal_over_local_files_names_what_was_searched_without_empty_fields() -> None:
    q = _analyse("What was Kestrel's backlog at the end of 2023?")
    side = Side((), RefusalReason.NO_PASSAGES, "nothing holds the terms")
    message = _refusal_message(q, side, [PassageRead(doc_id="d", start=0, end=10, score=1.0, form="10-K")])
    assert "None" not in message and "Searched 1 passages (10-K)" in message


# --- the quoted sentence holds a value of the asked kind, for the asked line and period ---------------------------
STEM = Stemmer.Stemmer("english")
ORBIT = Subject("ORBT", name_words("ORBT", "Orbit Power, Inc."))


def _extract(question: str, *sentences: str, report: tuple[int, str] = (2024, "FY")) -> list[str]:
    q = analyse_question(question, ORBIT, (), STEM)
    units, texts = sentence_units(*sentences, ticker="ORBT")
    return [s.text for s in extract(q, units, texts, STEM, "ORBT", {"d": report}).sentences]


def test_a_physical_quantity_is_read_with_its_unit() -> None:
    deployed = "In 2024, Orbit Power deployed 12.6 GWh of battery storage at utility sites."
    change = "Battery storage revenues rose by $310 million in 2024, driven by utility sites."
    assert counts(deployed) == [] and [v.number for v in counts(deployed, counted="gwh")] == [12.6]
    assert _extract("How many GWh of battery storage did Orbit Power deploy in 2024?", change, deployed) == \
        [deployed]
    assert _extract("How many GWh of battery storage did Orbit Power deploy in 2024?", change) == []


def test_a_level_asked_is_not_answered_with_the_change() -> None:
    change = "Grid Services revenues increased $1.2 billion from 2023 to 2024, driven by new contracts."
    level = "Grid Services revenues were $4.8 billion in 2024."
    assert is_change(change, StatedValue(text="$1.2 billion", unit="USD")) and not \
        is_change(level, StatedValue(text="$4.8 billion", unit="USD"))
    assert _extract("What were Orbit Power's Grid Services revenues in 2024?", change, level) == [level]
    assert _extract("What were Orbit Power's Grid Services revenues in 2024?", change) == []
    # asked for the change, the change answers
    assert _extract("What was the increase in Orbit Power's Grid Services revenues in 2024?", change) == [change]


def test_the_company_total_asked_is_not_answered_with_a_segments_figure() -> None:
    segment = "Grid Services revenues increased 19% in 2024, compared to the prior year."
    acronym = "GSX revenues increased 19% in 2024, compared to the prior year."
    total = "Revenues increased 11% in 2024, compared to the prior year."
    ask = "By how much did Orbit Power's consolidated revenues grow in 2024?"
    assert _extract(ask, segment, total) == [total] and _extract(ask, acronym, total) == [total]
    # the segment asked, the segment's sentence answers; "Orbit Power's revenues" is the company's own line
    assert _extract("By how much did Orbit Power's Grid Services revenues grow in 2024?", total, segment) == [segment]
    own = "Orbit Power's revenues increased 11% in 2024."
    assert _extract(ask, segment, own) == [own]
    # the company named in a form the ask does not use is still the company ("Orbit revenues" for "ORBT's")
    named = "In 2024, Orbit revenues increased 11%, compared to the prior year."
    assert _extract("By how much did ORBT's consolidated revenues grow in 2024?", segment, named) == [named]


def test_an_ask_for_a_set_of_names_is_answered_by_a_sentence_that_lists_names() -> None:
    from equimind.answer.extract import asks_for_names, lists_names

    about = "Orbit Power's reportable segments are each managed separately and report segment operating income."
    listed = "Orbit Power reports its segment results as Grid Services, Home Storage and Solar Roofs."
    titled = "Orbit Power's segments are described in Note 9, \u201cSegment Information and Geographic Data\u201d."
    assert lists_names(listed) and not lists_names(titled) and not lists_names("However, Orbit reports segments.")
    assert _extract("What segments does Orbit Power report?", about, listed)[0] == listed
    assert _extract("What segments does Orbit Power report?", titled, listed)[0] == listed
    q = analyse_question("How does Orbit Power break down its business into reportable segments?", ORBIT, (), STEM)
    assert asks_for_names(q)
    assert not asks_for_names(analyse_question("Which segment grew fastest in 2024?", ORBIT, (), STEM))
    assert not asks_for_names(analyse_question("What does Orbit Power sell?", ORBIT, (), STEM))


def test_a_which_ask_about_a_fiscal_year_is_not_answered_by_an_event_of_another_year() -> None:
    old = "In March 2021, Orbit Power completed the acquisition of Helio Storage for $300 million."
    new = "In August 2024, Orbit Power completed the acquisition of Verdant Grid for $120 million."
    assert _extract("Which acquisition did Orbit Power complete in fiscal 2024?", old) == []
    assert _extract("Which acquisition did Orbit Power complete in fiscal 2024?", old, new) == [new]


SEGMENTS = """Segment results (in millions)

| | 2024 | 2023 |
| --- | --- | --- |
| Revenues: | | |
| Grid Services | 4,812 | 3,650 |
| Home Energy | 2,101 | 2,300 |
| Operating income (loss): | | |
| Grid Services | 911 | 640 |
| Home Energy | (150) | 12 |
| Total Grid Services costs and expenses | 3,901 | 3,010 |
"""


def _row_answer(question: str) -> list[str]:
    q = analyse_question(question, ORBIT, (), STEM)
    passage = PassageRead(doc_id="s", start=0, end=len(SEGMENTS), score=1.0, ticker="ORBT")
    units = passage_units(SEGMENTS, passage, 0)
    return [s.text for s in extract(q, units, {"s": SEGMENTS}, STEM, "ORBT", {"s": (2024, "FY")}).sentences]


def test_a_segment_row_is_read_under_its_sub_heading_and_never_from_another_line() -> None:
    assert _row_answer("What were Grid Services revenues in 2024?")[0].startswith("Grid Services: $4,812 million")
    assert _row_answer("What was Grid Services operating income in 2024?")[0].startswith("Grid Services: $911 million")
    q = analyse_question("What were Grid Services revenues in 2024?", ORBIT, (), STEM)
    assert other_line(q, "Total Grid Services costs and expenses") and not other_line(q, "Grid Services")
    assert not other_line(q, "Net revenues (loss)")
    # an ask that names no line ("how big was the segment") may be answered by any line
    assert not other_line(analyse_question("How big was Orbit's Grid Services segment in 2024?", ORBIT, (), STEM),
                          "Revenues:")


# --- whole-filing figures over a span of years ---------------------------------------------------------------------
FIVE_YEARS = """Selected financial data (in thousands)

| | 2023 | 2022 | 2021 | 2020 |
| --- | --- | --- | --- | --- |
| Net sales | 2,400,000 | 2,200,000 | 1,900,000 | 1,500,000 |
"""


def test_a_compound_annual_growth_rate_spans_the_years_the_ask_names_or_states() -> None:
    sl = StatementLines({"k": (2023, "10-K")}, {"k": FIVE_YEARS}.__getitem__)

    def lookup(metric: Any, year: int, t: int) -> Any:
        return sl.value(metric, year, t)

    named = find_formula("What is Kestrel's revenue CAGR from FY2021 to FY2023?")
    assert named is not None and named.formula.key == "revenue_cagr"
    res = compute(named, [2021, 2023], "Kestrel", "KSTR", lookup)
    assert res.sentence is not None
    assert res.sentence.figures[0].value == pytest.approx(((2_400_000 / 1_900_000) ** 0.5 - 1) * 100)
    assert "from fiscal 2021 to fiscal 2023 (2 years)" in res.sentence.text
    stated = find_formula("What is the three-year compound annual growth rate of revenue up to FY2023?")
    assert stated is not None and stated.span_years == 3
    three = compute(stated, [2023], "Kestrel", "KSTR", lookup)
    assert three.sentence is not None and "from fiscal 2020 to fiscal 2023 (3 years)" in three.sentence.text
    one = compute(find_formula("revenue CAGR in FY2023"), [2023], "Kestrel", "KSTR", lookup)  # type: ignore[arg-type]
    assert one.sentence is None and "no span of years" in one.reason


def test_cash_conversion_ratio_and_fixed_assets_share_are_computed() -> None:
    lookup = _lookup()
    ratio = compute(find_formula("cash conversion ratio"), [2023], "Kestrel", "KSTR", lookup)  # type: ignore[arg-type]
    assert ratio.sentence is None and "net income for fiscal 2023" in ratio.reason  # a missing line is named
    assert find_formula("What was the cash conversion cycle?").formula.key == "cash_conversion_cycle"  # type: ignore[union-attr]


TWO_TOTALS = """Segment assets (in millions)

| | 2023 | 2022 |
| --- | --- | --- |
| Total assets | 1,954 | 2,182 |

CONSOLIDATED BALANCE SHEETS (in millions)

| | 2023 | 2022 |
| --- | --- | --- |
| Total assets | 137,100 | 138,552 |
"""


def test_a_company_total_is_the_larger_of_two_totals_printed_as_often() -> None:
    sl = StatementLines({"k": (2023, "10-K")}, {"k": TWO_TOTALS}.__getitem__)
    lv = sl.value(METRIC["total_assets"], 2023, 2023)
    assert lv is not None and lv.value == 137_100e6


def test_a_figure_that_could_not_be_computed_is_not_answered_by_a_sentence_that_does_not_name_it() -> None:
    from equimind.answer.record import AnswerSentence, Method
    from equimind.answer.strategies import names_figure

    q = _analyse("What was Kestrel's quick ratio at the end of fiscal 2023?")
    covenant = AnswerSentence(text="Kestrel was in compliance with all related covenants and ratios.",
                              method=Method.EXTRACTIVE, subject="KSTR")
    stated = AnswerSentence(text="Our quick ratio was 0.9 at year end.", method=Method.EXTRACTIVE, subject="KSTR")
    assert not names_figure(q, [covenant]) and names_figure(q, [covenant, stated])
    assert names_figure(_analyse("What were Kestrel's net sales in 2023?"), [covenant])  # no figure asked


def test_a_refusal_names_many_documents_of_a_kind_once() -> None:
    from datetime import date as day

    from equimind.answer.answerer import searched_documents

    monthly = [PassageRead(doc_id=f"p{m}", start=0, end=1, score=1.0, ticker="KSTR", form="prices",
                           filed_at=day(2024, m, 28)) for m in range(1, 10)]
    annual = PassageRead(doc_id="k", start=0, end=1, score=1.0, ticker="KSTR", form="10-K", filed_at=day(2025, 1, 27))
    assert searched_documents([annual, *monthly]) == ["KSTR 10-K filed 2025-01-27",
                                                      "KSTR prices: 9 documents filed 2024-01-28 to 2024-09-28"]


@pytest.mark.parametrize(("ask", "verb"), [
    ("How much did Orbit Power pour into Solar Roofs in 2024?", "pour"),
    ("Did Orbit Power ship any inverters to Brazil in 2024?", "ship"),
    ("How does Orbit Power allot overhead to its segments?", "allot"),
    ("Which risks did it flag in the June quarter?", "flag"),
    # the asked direction, a metric's own verb, a possessive's noun: no asker's verb
    ("Did Orbit Power increase its dividend?", None),
    ("How much did Orbit Power spend on research?", None),
    ("Does Orbit Power's new CFO have prior public-company experience?", None),
    ("What was Orbit Power's revenue in 2024?", None),
])
def test_the_askers_own_verb_is_found_after_the_auxiliary_and_the_company(ask: str, verb: str | None) -> None:
    from equimind.query.question import asker_verb

    assert asker_verb(ask) == verb


def test_a_filing_that_states_the_amount_in_its_own_verb_answers_the_askers_verb() -> None:
    said = "Our total Solar Roofs investments were $4.1 billion in 2024, including headcount and tooling."
    # the asker's verb "pour" is in no sentence; the sentence holding the rest of the ask answers
    assert _extract("How much did Orbit Power pour into Solar Roofs in 2024?", said) == [said]
    # a noun of the ask missing is still missing: the verb alone is discounted
    assert _extract("How much did Orbit Power pour into Solar Roofs in Brazil in 2024?", said) == []


def test_an_amount_after_by_under_a_verb_of_change_is_the_change() -> None:
    cut = "Our investments in Solar Roofs reduced our 2024 operating profit by approximately $3.2 billion."
    level = "Our total Solar Roofs investments were $4.1 billion in 2024."
    assert is_change(cut, StatedValue(text="$3.2 billion", unit="USD"))
    assert not is_change("We raised $2.0 billion of notes in 2024.", StatedValue(text="$2.0 billion", unit="USD"))
    assert not is_change("Revenue increased in 2024, and was $9.0 billion.", StatedValue(text="$9.0 billion",
                                                                                       unit="USD"))
    assert _extract("How much did Orbit Power invest in Solar Roofs in 2024?", cut, level) == [level]


def test_a_sentence_listing_the_asked_names_answers_though_it_holds_no_other_word_of_the_ask() -> None:
    about = "Although the reportable segments sell similar products, each is managed separately by region."
    listed = "Orbit Power's reportable segments consist of North America, Europe and Asia Pacific."
    other = "Orbit Power sells through Costco, Home Depot and Lowe's."
    ask = "How does Orbit Power divide its operations into reportable segments?"
    assert _extract(ask, about, other, listed)[0] == listed
    # a list under other words than the ask's names is no answer
    assert _extract(ask, other) == []


def test_a_product_code_is_a_term_and_a_period_word_is_not() -> None:
    terms = analyse("Did Orbit Power ship any H20 inverters or M4 panels in Q2 of FY2024 or H1?", ORBIT, (), STEM).terms
    words = {t.word for t in terms}
    assert {"h20", "m4", "inverters", "panels"} <= words
    assert not words & {"q2", "fy2024", "h1"}


def test_an_amount_ask_naming_no_measure_is_answered_by_a_sentence_before_a_row() -> None:
    text = ("Revenue by segment (in millions)\n\n| | 2024 | 2023 |\n| --- | --- | --- |\n"
            "| Solar Roofs | 2,146 | 1,896 |\n\n"
            "Our total Solar Roofs investments were $4.1 billion in 2024, including headcount and tooling.")
    units = passage_units(text, PassageRead(doc_id="d", start=0, end=len(text), score=1.0, ticker="ORBT"), 0)

    def answer(question: str) -> list[str]:
        q = analyse_question(question, ORBIT, (), STEM)
        return [s.text for s in extract(q, units, {"d": text}, STEM, "ORBT", {"d": (2024, "FY")}).sentences]

    assert answer("How much did Orbit Power pour into Solar Roofs in 2024?") == [
        "Our total Solar Roofs investments were $4.1 billion in 2024, including headcount and tooling."]
    # the measure named, its row answers
    assert answer("What was Orbit Power's Solar Roofs revenue in 2024?") == ["Solar Roofs: $2,146 million (2024)."]
