"""ingest.fiscal_cover: the period a 10-K / 10-Q states on its cover, read from sentences of our own (clean, laid out
as a PDF parse writes them, and broken), recorded at ingest, and checked on every recorded filing of the corpus
against the period of report SEC's own index gives."""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.core.documents import Document, Origin, Source
from equimind.ingest.documents import to_document
from equimind.ingest.fiscal_cover import (
    COVER_CHARS,
    META_END,
    META_KIND,
    PeriodStated,
    period_end_of,
    stated_period,
    stated_periods,
)
from equimind.sources.base import BodyKind, RawFiling

ANNUAL, QUARTER = PeriodStated.ANNUAL, PeriodStated.QUARTER


@pytest.mark.parametrize(("text", "form", "end", "kind"), [
    ("ANNUAL REPORT PURSUANT TO SECTION 13\nFor the fiscal year ended January 28, 2023\nOR", "10-K",
     date(2023, 1, 28), ANNUAL),
    ("FORM 10-K FOR THE FISCAL YEAR ENDED AUGUST 29, 2021 | TABLE OF CONTENTS", "10-K", date(2021, 8, 29), ANNUAL),
    ("For\u00a0the\u00a0fiscal\u00a0year\u00a0ended\u00a0February\u00a02,\u00a02019 | OR", "10-K",
     date(2019, 2, 2), ANNUAL),
    ("1934 | For | the | fiscal | year | ended | December | 31, | 2016 | OR | o", "10-K", date(2016, 12, 31), ANNUAL),
    ("For the Year Ended December 31, 2018\nPART I", "10-K", date(2018, 12, 31), ANNUAL),
    ("For the fiscal year ended: Sept. 30 2024", "10-K", date(2024, 9, 30), ANNUAL),
    ("For the quarterly period ended June 28, 2025 or", "10-Q", date(2025, 6, 28), QUARTER),
    ("FORM 10-Q FOR THE QUARTER ENDED JUL Y 29, 2023", "10-Q", date(2023, 7, 29), QUARTER),  # a split month
    ("For the quarterly period ended Commission file\nMarch 31, 2021 number", "10-Q", date(2021, 3, 31), QUARTER),
    ("For the fiscal quarter ended April 30, 2024", "10-Q", date(2024, 4, 30), QUARTER),
    ("For the fiscal year ended June 30, 2023", "unknown", date(2023, 6, 30), ANNUAL),
    ("For the fiscal year ended June 30, 2023", None, date(2023, 6, 30), ANNUAL),
])
def test_the_cover_statement_is_read(text: str, form: str | None, end: date, kind: PeriodStated) -> None:
    found = stated_period(text, form)
    assert found is not None and (found.end, found.kind) == (end, kind)
    assert found.meta_pairs() == [(META_END, end.isoformat()), (META_KIND, kind.value)]


def test_the_form_says_which_statement_is_the_documents_own() -> None:
    ten_q = ("For the quarterly period ended June 28, 2025\n... read with our Annual Report on Form 10-K for the "
             "fiscal year ended September 28, 2024.")
    assert stated_period(ten_q, "10-Q").end == date(2025, 6, 28)  # type: ignore[union-attr]
    assert stated_period(ten_q, "10-K").end == date(2024, 9, 28)  # type: ignore[union-attr]
    reference_only = "Read with our Annual Report on Form 10-K for the fiscal year ended September 28, 2024."
    assert stated_period(reference_only, "10-Q") is None, "a 10-Q's cover is a quarter, never the 10-K it cites"
    eight_k = "Bonus for the fiscal year ended January 28, 2023."
    assert stated_period(eight_k, "8-K") is None and stated_period(eight_k, "DEF 14A") is None
    prose_first = ("For the year ended December 31, 2021, billed business grew.\n"
                   "FORM 10-K For the fiscal year ended December 31, 2022")
    assert stated_period(prose_first, "10-K").end == date(2022, 12, 31)  # type: ignore[union-attr]
    prose_only = "For the year ended December 31, 2022, worldwide billed business was $1.5 trillion."
    assert stated_period(prose_only, "10-K").end == date(2022, 12, 31)  # type: ignore[union-attr]
    gap = "For the year ended and the period from launch to May 5, 2021"  # words between a bare 'year ended' and a date
    assert stated_period(gap, "10-K") is None
    future = "the Company's fiscal year ending on or about January 31, 2027"
    assert stated_period(future, None) is None


@pytest.mark.parametrize("text", [
    "For the fiscal year ended February 30, 2023",  # no such day
    "For the fiscal year ended February 29, 2023",
    "For the fiscal year ended Smarch 12, 2023",
    "For the fiscal year ended 99, 2023",
    "For the fiscal year ended December 0, 2023",
    "For the fiscal year ended December 31, 1850",
    "For the fiscal year ended December 31",
    "For the fiscal year ended",
    "For the transition period from July 1, 2023 to December 31, 2023",
    "", "\x00\ufffd" * 50, "for the " * 5000, "For the fiscal year ended" + " " * 20_000 + "May 1, 2023",
    "For the fiscal year ended |" + "| " * 10_000 + "May 1, 2023",
])
def test_broken_text_yields_nothing_and_never_raises(text: str) -> None:
    assert stated_period(text, "10-K") is None and stated_period(text) is None


def test_an_impossible_date_is_skipped_and_the_next_statement_read() -> None:
    text = "For the fiscal year ended February 30, 2023\nFor the Fiscal Year Ended February 28, 2023"
    assert [p.end for p in stated_periods(text)] == [date(2023, 2, 28)]
    assert stated_period("x" * COVER_CHARS + "For the fiscal year ended May 1, 2023") is None  # past the cover
    assert stated_periods(None) == []  # type: ignore[arg-type]
    assert period_end_of({META_END: "2023-02-30"}) is None and period_end_of({}) is None
    assert period_end_of({META_END: "2023-01-28"}) == date(2023, 1, 28)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("For the fiscal year quarterly period ended January May 0123456789,"
                                             ".|\n\u00a0 ")), max_size=400),
       st.sampled_from(["10-K", "10-Q", "8-K", None, "unknown"]))
def test_any_text_is_read_without_raising(text: str, form: str | None) -> None:
    found = stated_period(text, form)
    assert found is None or found.end.year >= 1900


# --- at ingest ------------------------------------------------------------------------------------------------------

COVER_HTML = """<html><body><div>FORM 10-K</div><div>For the fiscal year ended January 28, 2023</div>
<div><span>Item 1. Business</span></div><div><span>We sell electronics.</span></div></body></html>"""


def _raw(*, origin: Origin, source: Source, period_end: date | None, form: str = "10-K") -> RawFiling:
    return RawFiling(source_key=f"k:{origin.value}", ticker=None, cik=None, company="Best Buy", source=source,
                     origin=origin, form=form, filed_at=None, period_end=period_end, url=None, title="Best Buy 10-K",
                     body=COVER_HTML, kind=BodyKind.HTML, name="bby.html", meta=(("fiscal_year", "2023"),),
                     declared_fiscal=False)


def test_a_local_file_records_the_stated_end_and_takes_it_as_its_period_end() -> None:
    doc = to_document(_raw(origin=Origin.LOCAL_FILE, source=Source.LOCAL, period_end=None))
    assert doc.period_end == date(2023, 1, 28)
    assert doc.meta_dict()[META_END] == "2023-01-28" and doc.meta_dict()[META_KIND] == "annual"
    assert doc.id == Document.make_id(doc.source_key, doc.text), "the id is the text's: unchanged by the date"


def test_an_sec_document_keeps_its_index_period_end() -> None:
    indexed = to_document(_raw(origin=Origin.SNAPSHOT, source=Source.SEC_EDGAR, period_end=date(2023, 1, 31)))
    assert indexed.period_end == date(2023, 1, 31), "the submissions' reportDate is kept, whatever the cover says"
    assert indexed.meta_dict()[META_END] == "2023-01-28"  # recorded beside it, as a cross-check
    bare = to_document(_raw(origin=Origin.LIVE, source=Source.SEC_EDGAR, period_end=None))
    assert bare.period_end is None, "an SEC document's period_end is only ever its index's"
    eight_k = to_document(_raw(origin=Origin.LOCAL_FILE, source=Source.LOCAL, period_end=None, form="8-K"))
    assert eight_k.period_end is None and META_END not in eight_k.meta_dict()


# --- the recorded corpus --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded(corpus_dir: Path, recorded_documents: list[Document]) -> list[tuple[dict[str, str], Document]]:
    with (corpus_dir / "sec" / "filings" / "manifest.csv").open(newline="") as f:
        rows = {r["path"].split("/")[-1]: r for r in csv.DictReader(f)}
    return [(rows.get(doc.meta_dict().get("corpus_path", ""), {}), doc) for doc in recorded_documents]


@pytest.mark.slow
@pytest.mark.integration
def test_every_recorded_filing_states_its_period_of_report(recorded: list[tuple[dict[str, str], Document]],
                                                            corpus_dir: Path) -> None:
    periodic = [(row, doc) for row, doc in recorded if doc.form in ("10-K", "10-Q")]
    assert len(periodic) == len(recorded) == 12
    for row, doc in periodic:
        stated = stated_period(doc.text, doc.form)
        assert stated is not None, doc.title
        assert stated.end.isoformat() == row["period_of_report"] == doc.meta_dict()[META_END], doc.title
        assert stated.kind is (ANNUAL if doc.form == "10-K" else QUARTER)
        assert doc.period_end == stated.end  # the index's period, unchanged, and the cover agree
    nvda = {d.form: d.meta_dict()[META_END] for _, d in periodic if d.ticker == "NVDA"}
    assert nvda == {"10-K": "2025-01-26", "10-Q": "2025-07-27"}  # NVIDIA's fiscal 2025 ended January 26, 2025
    # the submissions JSON's reportDate (SEC's own index) for the filings whose accession is recorded
    checked = 0
    for row, doc in periodic:
        if not row.get("accession_number"):
            continue
        recent = json.loads((corpus_dir / "sec" / "submissions" / f"CIK{row['cik']}.json").read_text())
        recent = recent["filings"]["recent"]
        i = recent["accessionNumber"].index(row["accession_number"])
        assert doc.meta_dict()[META_END] == recent["reportDate"][i], doc.title
        checked += 1
    assert checked == 6  # AAPL, NVDA, TSLA: 10-K and 10-Q
