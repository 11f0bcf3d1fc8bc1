"""answer.fiscal_dates: a fiscal year's dates as the company's own annual report states them, in the answers read
from statement rows (a synthetic PDF-like local filing, no companyfacts); an XBRL answer over the recorded SEC
filings is unchanged."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from equimind.answer.answerer import Answerer
from equimind.answer.fiscal_dates import spoken, with_year_dates, year_end_of, year_ends
from equimind.answer.record import Method
from equimind.core.documents import Document, Origin, Source
from equimind.store.docstore import DocStore
from tests.answer.asking import ask

COVER = """UNITED STATES SECURITIES AND EXCHANGE COMMISSION
FORM 10-K
(Mark One)
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended {end}
OR
TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
BEST BUY CO., INC.
"""
EARNINGS = """
Consolidated Statements of Earnings
$ in millions
| | Fiscal 2023 | Fiscal 2022 | Fiscal 2021 |
| --- | --- | --- | --- |
| Revenue | $46,298 | $51,761 | $47,262 |
| Cost of sales | 36,386 | 40,121 | 36,689 |
| Net earnings | $1,419 | $2,454 | $1,798 |
"""
FAR = date(2100, 1, 1)


def _doc(fy: int, text: str, *, form: str = "10-K", meta: tuple[tuple[str, str], ...] = (),
         period_end: date | None = None) -> Document:
    key = f"local:BESTBUY_{fy}_{form}.pdf"
    return Document(id=Document.make_id(key, text), source_key=key, ticker="BBY", cik=None, company="Best Buy",
                    source=Source.LOCAL, origin=Origin.LOCAL_FILE, form=form, filed_at=None, period_end=period_end,
                    url=None, title=f"Best Buy {form} FY{fy}", text=text, meta=(("fiscal_year", str(fy)), *meta))


def test_year_ends_come_from_the_recorded_meta_the_period_end_or_the_cover_read_now() -> None:
    recorded = _doc(2023, "no cover here", meta=(("period_end_stated", "2023-01-28"),))
    indexed = _doc(2022, "no cover here", period_end=date(2022, 1, 29))
    old_store = _doc(2019, COVER.format(end="February 2, 2019"))  # stored before the cover was read at ingest
    undated = _doc(2018, "Best Buy 10-K, no cover page in this PDF's text")
    quarter = _doc(2024, "For the quarterly period ended July 29, 2023", form="10-Q")
    wrong_year = _doc(2010, COVER.format(end="January 28, 2023"))  # a fiscal_year three years off: not that year's
    docs = [recorded, indexed, old_store, undated, quarter, wrong_year]
    assert year_ends(docs) == {2023: date(2023, 1, 28), 2022: date(2022, 1, 29), 2019: date(2019, 2, 2)}
    assert year_end_of(old_store) == date(2019, 2, 2) and year_end_of(undated) is None


def test_the_dates_are_stated_at_each_years_first_mention() -> None:
    ends = {2022: date(2022, 1, 29), 2023: date(2023, 1, 28)}
    text = "Best Buy's net profit margin for fiscal 2023 was 3.06% (net income fiscal 2023 $1,419 million)."
    assert with_year_dates(text, ends) == ("Best Buy's net profit margin for fiscal 2023 (the year ended January 28, "
                                           "2023) was 3.06% (net income fiscal 2023 $1,419 million).")
    span = "margin for fiscal 2022-2023 average was 4%; revenue fiscal 2022 $51,761 million; fiscal 2021 $1"
    assert with_year_dates(span, ends) == ("margin for fiscal 2022-2023 average (the years ended January 29, 2022 "
                                           "to January 28, 2023) was 4%; revenue fiscal 2022 $51,761 million; "
                                           "fiscal 2021 $1")
    assert with_year_dates(text, {}) == text and with_year_dates(with_year_dates(text, ends), ends) == \
        with_year_dates(text, ends)
    assert spoken(date(2025, 1, 26)) == "January 26, 2025"


@pytest.fixture()
def pdf_store(tmp_path: Path) -> DocStore:
    store = DocStore(tmp_path / "docstore.sqlite")
    for doc in (_doc(2023, COVER.format(end="January 28, 2023") + EARNINGS),
                _doc(2024, "For the quarterly period ended July 29, 2023\nFORM 10-Q", form="10-Q")):
        store.add_document(doc)
        store.set_status(doc.id, "indexed")
    return store


def test_a_computed_answer_over_a_pdf_like_filing_states_the_fiscal_years_dates(pdf_store: DocStore) -> None:
    ans = ask(Answerer(pdf_store), "What is Best Buy's FY2023 net profit margin?", "BBY", FAR, [])
    (sentence,) = ans.sentences
    assert sentence.method is Method.COMPUTED
    assert sentence.text.startswith("Best Buy's net profit margin for fiscal 2023 (the year ended January 28, 2023) "
                                    "was 3.06%")  # 1,419 / 46,298
    assert sentence.text.count("January 28, 2023") == 1
    change = ask(Answerer(pdf_store), "Did Best Buy's net profit margin improve from FY2022 to FY2023?", "BBY", FAR, [])
    assert "fiscal 2023 (the year ended January 28, 2023)" in change.text
    assert "fiscal 2022 (the year" not in change.text, "fiscal 2022 has no annual report here: left undated"


def test_a_reported_line_states_the_fiscal_years_dates(pdf_store: DocStore) -> None:
    ans = ask(Answerer(pdf_store), "What was Best Buy's FY2023 revenue?", "BBY", FAR, [])
    (sentence,) = ans.sentences
    assert sentence.text == ("Revenue: $46,298 million (printed: $46,298, in millions) "
                             "(Fiscal 2023; fiscal 2023: the year ended January 28, 2023).")


# --- SEC filings ------------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_an_xbrl_answer_is_unchanged_and_statement_rows_of_an_sec_filing_are_dated(
        answerer: Any, nvda_services: Any, search: Any) -> None:
    from tests.answer.conftest import AS_OF

    question = "What was NVIDIA's net profit margin in fiscal 2025?"
    xbrl = ask(answerer, question, "NVDA", AS_OF, search(question))
    (sentence,) = xbrl.sentences
    assert sentence.figures[0].provenance["inputs_from"] == ["xbrl"]
    assert "the year ended" not in sentence.text and sentence.text.startswith(
        "NVIDIA CORP's net profit margin for fiscal 2025 was 55.85%")
    rows = ask(Answerer(nvda_services.docstore), question, "NVDA", AS_OF, search(question))
    (sentence,) = rows.sentences
    assert sentence.figures[0].provenance["inputs_from"] == ["statement"]
    assert "for fiscal 2025 (the year ended January 26, 2025) was 55.85%" in sentence.text
    refs = nvda_services.docstore.list_documents()
    assert {r.form: r.period_end for r in refs} == {"10-K": date(2025, 1, 26), "10-Q": date(2025, 7, 27)}
