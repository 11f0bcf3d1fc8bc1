"""The extractive answerer's period rule over synthetic sentences: a near miss on the period is "not found"."""

from __future__ import annotations

import Stemmer

from equimind.answer.extract import extract
from equimind.query.analysis import Subject, name_words
from equimind.query.question import analyse_question
from tests.answer.conftest import sentence_units

STEM = Stemmer.Stemmer("english")
TSLA = Subject("TSLA", name_words("TSLA", "Tesla, Inc."))


def _answer(question: str, *sentences: str, report: tuple[int, str] = (2025, "FY")) -> list[str]:
    """The answer's sentences when ``sentences`` come from the report of fiscal period ``report``."""
    q = analyse_question(question, TSLA, (), STEM)
    units, texts = sentence_units(*sentences)
    return [s.text for s in extract(q, units, texts, STEM, "TSLA", {"d": report}).sentences]


HALF = ("Net cash flows from investing activities related primarily to capital expenditures, which were $3.89 billion "
        "and $5.05 billion for the six months ended June 30, 2025 and 2024, respectively.")
YEAR = "Capital expenditures amounted to $11.34 billion in 2024 compared to $8.90 billion in 2023."
GREW = "Revenue from energy storage grew 62% year-on-year compared to fiscal year 2024."


def test_a_part_year_figure_never_answers_a_full_year() -> None:
    assert _answer("What were Tesla's capital expenditures in 2024?", HALF) == []
    assert _answer("What were Tesla's capital expenditures in 2024?", HALF, YEAR) == [YEAR]


def test_a_year_after_compared_to_is_the_base_not_the_period() -> None:
    assert _answer("How fast did Tesla's energy storage revenue grow in fiscal 2024?", GREW) == []
    # no year of its own: the sentence's period is its report's, fiscal 2025's annual report here ...
    assert _answer("How fast did Tesla's energy storage revenue grow in fiscal 2025?", GREW) == [GREW]
    # ... and a quarterly report's growth is not the full year's
    assert _answer("How fast did Tesla's energy storage revenue grow in fiscal 2025?", GREW, report=(2025, "Q2")) == []


def test_a_statement_row_under_a_unit_line_answers_with_its_metric_line_and_unit() -> None:
    """The statement's row named by the asked metric wins over a row that only shares a word of it, its number is
    money in the unit the line above the table states, and the unit line is quoted."""
    from equimind.answer.record import PassageRead as Read
    from equimind.answer.units import passage_units

    text = ("($ in millions)\n|  |  |  |\n| --- | --- | --- |\n"
            "| Operating lease right-of-use assets | 2,890 | 2,788 |\n| Other long-term assets | 3,381 | 3,312 |\n"
            "| TOTAL ASSETS | $59,268 | $55,556 |\n")
    passage = Read(doc_id="d", start=0, end=len(text), score=1.0, ticker="TSLA")
    q = analyse_question("How much total assets did Tesla have at the end of FY2021?", TSLA, (), STEM)
    out = extract(q, passage_units(text, passage, 0), {"d": text}, STEM, "TSLA", {"d": (2021, "FY")})
    assert [s.text for s in out.sentences] == ["TOTAL ASSETS: $59,268 million."]
    assert out.sentences[0].values[0].number == 59_268e6
    assert "unit" in [x.role for x in out.sentences[0].quotes]
    q = analyse_question("What were Tesla's merchandise inventories at the end of FY2021?", TSLA, (), STEM)
    rows = "($ in millions)\n|  |  |  |\n| --- | --- | --- |\n| Merchandise inventories | 5,409 | 5,209 |\n"
    passage = Read(doc_id="d", start=0, end=len(rows), score=1.0, ticker="TSLA")
    found = extract(q, passage_units(rows, passage, 0), {"d": rows}, STEM, "TSLA", {"d": (2021, "FY")})
    assert [v.number for v in found.sentences[0].values] == [5_409e6]  # no "$" in the row: the unit line says so


def test_names_metric_takes_statement_qualifiers_only() -> None:
    from equimind.answer.rows import names_metric

    q = analyse_question("What were Tesla's net sales in 2024?", TSLA, (), STEM)
    assert [names_metric(q, label) for label in ("Total net sales", "Net\xa0sales:", "Cost of sales", "Products")] == [
        True, True, False, False]


def test_a_row_is_stated_in_the_unit_the_question_asks() -> None:
    from equimind.answer.units import document_rows
    from equimind.query.question import asked_scale

    assert asked_scale("What is X's FY2020 cash flow from operations? Answer in USD millions.") == 1e6
    assert asked_scale("What is the net PP&E (in USD billions)?") == 1e9
    assert asked_scale("What was Tesla's revenue in 2024?") is None
    text = ("CONSOLIDATED STATEMENTS OF CASH FLOWS\n(In thousands)\n\n| | 2020 | 2019 |\n| --- | --- | --- |\n"
            "| Net cash provided by operating activities | $ 381,603 | $ 465,699 |\n")
    rows = document_rows(text, "d", 0, "TSLA")

    def stated(question: str) -> list[str]:
        q = analyse_question(question, TSLA, (), STEM)
        return [s.text for s in extract(q, rows, {"d": text}, STEM, "TSLA", {"d": (2020, "FY")}).sentences]

    asked = stated("How much cash did Tesla generate from operating activities in FY2020? Answer in USD millions.")
    assert asked == ["Net cash provided by operating activities: $382 million (printed: $ 381,603 thousand) (2020)."]
    plain = stated("How much cash did Tesla generate from operating activities in FY2020?")
    assert plain == ["Net cash provided by operating activities: $ 381,603 thousand (2020)."]
