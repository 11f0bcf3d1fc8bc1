"""SnapshotFilingsSource: manifest rows → typed entries → raw filing records (source=sec_edgar, origin=snapshot),
parsed into Documents by ``ingest.documents``."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from equimind.core.documents import Document, Origin, Source
from equimind.core.errors import NotFoundError
from equimind.ingest.documents import documents, to_document
from equimind.sources.base import BodyKind, RawFiling, SourceFailure
from equimind.sources.snapshot import SnapshotFilingsSource

HTML = """<html><body>
<div><span>FORM 10-K</span></div>
<div><span>Item 1. Business</span></div><div><span>We make {what}.</span></div>
<div><span>Item 1A. Risk Factors</span></div><div><span>Demand may fall.</span></div>
</body></html>"""
MANIFEST = (
    "ticker,cik,company,form,filing_date,period_of_report,accession_number,primary_document,path\n"
    "ACME,0000012345,Acme Corp,10-K,2025-02-26,2025-01-26,0000012345-25-000023,acme-20250126.htm,ACME/a.html\n"
    "ACME,0000012345,Acme Corp,10-Q,2025-08-27,2025-07-27,,,ACME/q.html\n"
    "BETA,0000067890,Beta Inc,10-K,2025-03-01,2024-12-31,,,BETA/missing.html\n"
)


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    filings = tmp_path / "sec" / "filings"
    (filings / "ACME").mkdir(parents=True)
    (filings / "manifest.csv").write_text(MANIFEST)
    (filings / "ACME" / "a.html").write_text(HTML.format(what="anvils"))
    (filings / "ACME" / "q.html").write_text(HTML.format(what="rockets"))
    return tmp_path


def test_missing_corpus_dir_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="--snapshot"):
        SnapshotFilingsSource(tmp_path / "nowhere")


def test_list_entries_are_typed_and_filterable(corpus: Path) -> None:
    source = SnapshotFilingsSource(corpus)
    entries = source.list_entries()
    assert [(e.ticker, e.form) for e in entries] == [("ACME", "10-K"), ("ACME", "10-Q"), ("BETA", "10-K")]
    first = entries[0]
    assert (first.cik, first.filed_at, first.period_end) == ("0000012345", date(2025, 2, 26), date(2025, 1, 26))
    assert first.url == "https://www.sec.gov/Archives/edgar/data/12345/000001234525000023/acme-20250126.htm"
    assert entries[1].url is None and entries[1].accession is None
    assert [e.form for e in source.list_entries(tickers=["acme"], forms=["10-q"])] == ["10-Q"]
    assert source.tickers() == ("ACME", "BETA")


def test_entries_are_read_once_per_process_and_again_when_the_corpus_changes(corpus: Path) -> None:
    first = SnapshotFilingsSource(corpus).list_entries()
    assert SnapshotFilingsSource(corpus).list_entries() == first  # a new source (each research run opens one)
    manifest = corpus / "sec" / "filings" / "manifest.csv"
    manifest.write_text(MANIFEST + "GAMA,0000011111,Gama plc,10-K,2025-04-01,,,,GAMA/g.html\n")
    assert SnapshotFilingsSource(corpus).tickers() == ("ACME", "BETA", "GAMA")  # re-recorded: read again
    (corpus / "sec" / "8k").mkdir()  # the 8-K folder appearing changes the key too
    assert len(SnapshotFilingsSource(corpus).list_entries()) == 4


def test_unknown_ticker_or_form_names_what_is_available(corpus: Path) -> None:
    source = SnapshotFilingsSource(corpus)
    with pytest.raises(NotFoundError, match=r"ZZZ.*recorded tickers: ACME, BETA"):
        source.list_entries(tickers=["ZZZ"])
    with pytest.raises(NotFoundError, match="recorded forms: 10-K, 10-Q"):
        list(source.records(tickers=["ACME"], forms=["8-K"]))


def test_load_reads_a_raw_record_without_parsing_it(corpus: Path) -> None:
    source = SnapshotFilingsSource(corpus)
    raw = source.load(source.list_entries(tickers=["ACME"], forms=["10-K"])[0])
    assert isinstance(raw, RawFiling)
    assert (raw.source, raw.origin, raw.kind, raw.form) == (Source.SEC_EDGAR, Origin.SNAPSHOT, BodyKind.HTML, "10-K")
    assert raw.body == HTML.format(what="anvils").encode()
    assert raw.name.endswith("a.html") and raw.source_key == "sec:0000012345:0000012345-25-000023"
    assert raw.meta == (("corpus_path", "a.html"), ("accession", "0000012345-25-000023"),
                        ("primary_document", "acme-20250126.htm"))


def test_load_builds_a_document_with_sections_and_provenance(corpus: Path) -> None:
    source = SnapshotFilingsSource(corpus)
    doc = to_document(source.load(source.list_entries(tickers=["ACME"], forms=["10-K"])[0]))
    assert isinstance(doc, Document)
    assert (doc.source, doc.origin, doc.ticker, doc.form) == (Source.SEC_EDGAR, Origin.SNAPSHOT, "ACME", "10-K")
    assert doc.source_key == "sec:0000012345:0000012345-25-000023"
    assert doc.id == Document.make_id(doc.source_key, doc.text)
    assert doc.meta == (("accession", "0000012345-25-000023"), ("corpus_path", "a.html"),
                        ("parser", "edgartools-html/1"), ("primary_document", "acme-20250126.htm"))
    assert doc.url and doc.url.endswith("/acme-20250126.htm")
    assert [s.name for s in doc.sections] == ["Cover", "Item 1. Business", "Item 1A. Risk Factors"]
    assert "We make anvils." in doc.text
    again = to_document(source.load(source.list_entries(tickers=["ACME"], forms=["10-K"])[0]))
    assert again.id == doc.id, "ids are content hashes: a re-load is identical"


def test_iter_results_reports_a_broken_entry_and_goes_on(corpus: Path) -> None:
    results = list(SnapshotFilingsSource(corpus).iter_results())
    assert [type(r).__name__ for r in results] == ["RawFiling", "RawFiling", "SourceFailure"]
    failure = results[2]
    assert isinstance(failure, SourceFailure) and "missing.html" in failure.error
    assert failure.source.endswith("missing.html")
    parsed = list(documents(results))  # the source's failure passes through ingest in its place
    assert [type(r).__name__ for r in parsed] == ["Document", "Document", "SourceFailure"]
    assert parsed[2] == failure


@pytest.mark.integration
def test_recorded_corpus_filings_and_8ks(corpus_dir: Path) -> None:
    source = SnapshotFilingsSource(corpus_dir)
    entries = source.list_entries()
    assert len(entries) == 12 and {e.form for e in entries} == {"10-K", "10-Q"}
    assert {"NVDA", "AAPL", "WFC"} <= set(source.tickers())
    raw_8ks = list(source.eight_k_records())
    assert all(isinstance(r.body, str) and r.kind is BodyKind.HTML for r in raw_8ks)  # the HTML, extracted
    eight_ks = [to_document(r) for r in raw_8ks]
    assert {d.ticker for d in eight_ks} == {"NVDA", "JPM"}
    nvda = next(d for d in eight_ks if d.ticker == "NVDA")
    assert (nvda.form, nvda.filed_at, nvda.cik) == ("8-K", date(2026, 3, 6), "0001045810")
    assert nvda.url == "https://www.sec.gov/Archives/edgar/data/1045810/000104581026000024/nvda-20260302.htm"
    assert any(s.name.startswith("Item 5.02") for s in nvda.sections)
    assert "<XBRL>" not in nvda.text and "xbrli" not in nvda.text


def test_the_fiscal_year_a_filing_declares_is_kept(corpus: Path, corpus_dir: Path) -> None:
    from equimind.ingest.parse import declared_fiscal
    from equimind.query.filters import QueryFilterParser

    src = SnapshotFilingsSource(corpus_dir)
    q = to_document(src.load(next(e for e in src.list_entries(["NVDA"], ["10-Q"]))))
    k = to_document(src.load(next(e for e in src.list_entries(["NVDA"], ["10-K"]))))
    # the quarter ended 2025-07-27 is NVIDIA's fiscal 2026 Q2: only the filing's own header says so
    assert (q.period_end, dict(q.meta)["fiscal_year"], dict(q.meta)["fiscal_period"]) == (date(2025, 7, 27), "2026",
                                                                                           "Q2")
    assert dict(k.meta)["fiscal_year"] == "2025" and dict(k.meta)["fiscal_period"] == "FY"
    parser = QueryFilterParser.from_documents([q, k])
    assert parser.parse("NVIDIA data center revenue in fiscal 2026").doc_ids == (q.id,)
    assert parser.parse("NVIDIA data center revenue in fiscal 2025").doc_ids == (k.id,)
    # a document without an inline-XBRL header declares nothing (the test manifest's plain HTML)
    plain = SnapshotFilingsSource(corpus)
    assert "fiscal_year" not in dict(to_document(plain.load(plain.list_entries()[0])).meta)
    assert declared_fiscal(b'<ix:nonNumeric name="dei:DocumentFiscalYearFocus" id="x">2031</ix:nonNumeric>') == (
        ("fiscal_year", "2031"),)
