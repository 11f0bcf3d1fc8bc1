"""ingest.exhibits: the detector of a filing that incorporates its annual report / financial statements by reference
to an exhibit (sentences of our own, and the recorded Wells Fargo 10-K against the other recorded 10-Ks), and how a
fetched exhibit is appended to the Document (exact spans) or recorded as missing."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from equimind.core.documents import Document, Origin, Source
from equimind.ingest.documents import to_document
from equimind.ingest.exhibits import EXHIBITS_KEY, MISSING_KEY, incorporated_exhibits
from equimind.sources.base import BodyKind, RawExhibit, RawFiling


@pytest.mark.parametrize(("text", "expected"), [
    ("Information in response to this Item 8 can be found in the 2024 Annual Report to Shareholders under "
     "\u201cFinancial Statements.\u201d That information is incorporated into this item by reference.", ("EX-13",)),
    ("The Annual Report to Stockholders, portions of which are incorporated herein by reference, is filed as "
     "Exhibit 13.", ("EX-13",)),
    ("Item 7. See pages 20 to 45 of Exhibit 13.1, which are incorporated by reference.", ("EX-13",)),
    ("Portions of the Annual Report to Security Holders are incorporated by reference into Part II.", ("EX-13",)),
    ("The consolidated financial statements, filed as Exhibit 99.1 hereto, are incorporated herein by reference.",
     ("EX-99",)),
    ("The annual report is incorporated by reference to Exhibit 13;\nthe statements to Exhibit 99 (financial "
     "statements are incorporated by reference).", ("EX-13", "EX-99")),
])
def test_incorporation_by_reference_to_an_exhibit_is_found(text: str, expected: tuple[str, ...]) -> None:
    assert incorporated_exhibits(text) == expected


@pytest.mark.parametrize("text", [
    "",
    "Portions of the Registrant\u2019s Proxy Statement are incorporated by reference into Part III.",
    "Incorporated by reference to Exhibit 10(a) to the Company\u2019s Annual Report on Form 10-K for 2023.",
    "Incorporated by reference to Exhibit 13 to the Company\u2019s Annual Report on Form 10-K for the year 2019.",
    "Our 2024 Annual Report to Shareholders will be mailed to shareholders in March.",  # no incorporation
    "| 13 | 2024 Annual Report to Shareholders. | Filed herewith. |",  # the exhibit index row alone
    "Exhibit 99.1 Press release, incorporated by reference.",  # an EX-99 that is no financial statements
    "Incorporated by reference to Exhibit 130 of the plan.",
    "\x00\ufffd" * 50,
])
def test_other_incorporations_and_mentions_are_not_findings(text: str) -> None:
    assert incorporated_exhibits(text) == ()


@pytest.mark.integration
def test_the_recorded_wfc_10k_incorporates_exhibit_13_and_the_other_10ks_do_not(
        recorded_documents: list[Document]) -> None:
    found = {d.ticker: incorporated_exhibits(d.text) for d in recorded_documents if d.form == "10-K"}
    assert found.pop("WFC") == ("EX-13",)
    assert len(found) >= 5 and set(found.values()) == {()}, found


TEN_K = """<html><body><div><span>Item 7. Management's Discussion and Analysis</span></div>
<div><span>Information in response to this Item 7 can be found in the 2024 Annual Report to Shareholders. That
information is incorporated into this item by reference.</span></div></body></html>"""
EXHIBIT = "<html><body><div><span>The asset cap limits total assets.</span></div></body></html>"


def _raw(form: str = "10-K", exhibits: tuple[RawExhibit, ...] = ()) -> RawFiling:
    return RawFiling(source_key="sec:0000072971:0000072971-25-000065", ticker="WFC", cik="0000072971",
                     company="WELLS FARGO", source=Source.SEC_EDGAR, origin=Origin.LIVE, form=form,
                     filed_at=date(2025, 2, 25), period_end=date(2024, 12, 31), url="https://sec.test/10k.htm",
                     title="WFC 10-K", body=TEN_K, kind=BodyKind.HTML, name="10k.htm", exhibits=exhibits)


def _exhibit(body: str = EXHIBIT, kind: str = "EX-13") -> RawExhibit:
    return RawExhibit(document_type=kind, document="ex13.htm", description="2024 Annual Report",
                      url="https://sec.test/ex13.htm", body=body)


def test_a_fetched_exhibit_is_appended_at_an_exact_span_and_nothing_is_missing() -> None:
    alone, doc = to_document(_raw()), to_document(_raw(exhibits=(_exhibit(),)))
    meta = doc.meta_dict()
    start, end = (int(x) for x in meta["exhibit_EX-13_span"].split(":"))
    assert doc.text.startswith(alone.text) and doc.text[start:end].startswith("Exhibit 13 (EX-13): 2024 Annual "
                                                                              "Report, ex13.htm")
    assert doc.text[start:end].endswith("The asset cap limits total assets.") and end == len(doc.text)
    assert doc.sections[-1].name == "Exhibit 13 (EX-13): 2024 Annual Report, ex13.htm"
    assert (doc.sections[-1].start, doc.sections[-1].end) == (start, end)
    assert all(s.end <= start for s in doc.sections[:-1])  # the 10-K's own sections end before the exhibit
    assert meta[EXHIBITS_KEY] == "EX-13" and MISSING_KEY not in meta and doc.id != alone.id
    assert alone.meta_dict()[MISSING_KEY] == "EX-13" and EXHIBITS_KEY not in alone.meta_dict()


def test_an_exhibit_without_text_or_of_another_type_leaves_the_annual_report_missing() -> None:
    empty = to_document(_raw(exhibits=(_exhibit("<html><body></body></html>"),)))
    assert empty.meta_dict()[MISSING_KEY] == "EX-13" and EXHIBITS_KEY not in empty.meta_dict()
    other = to_document(_raw(exhibits=(_exhibit(kind="EX-99.1"),)))
    assert other.meta_dict()[MISSING_KEY] == "EX-13" and other.meta_dict()[EXHIBITS_KEY] == "EX-99.1"
    numbered = to_document(_raw(exhibits=(_exhibit(kind="EX-13.1"),)))
    assert MISSING_KEY not in numbered.meta_dict()


def test_an_8k_is_not_read_for_exhibits() -> None:
    doc = to_document(_raw(form="8-K", exhibits=(_exhibit(),)))
    assert "asset cap" not in doc.text and MISSING_KEY not in doc.meta_dict()


@pytest.mark.integration
def test_the_recorded_wfc_10k_document_records_the_missing_exhibit(corpus_dir: Path) -> None:
    from equimind.sources.snapshot import SnapshotFilingsSource

    src = SnapshotFilingsSource(corpus_dir)
    (entry,) = src.list_entries(tickers=("WFC",), forms=("10-K",))
    doc = to_document(src.load(entry))
    assert doc.meta_dict()[MISSING_KEY] == "EX-13" and "asset cap" not in doc.text.lower()
