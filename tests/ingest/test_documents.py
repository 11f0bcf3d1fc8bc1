"""ingest.documents: raw filing records → Documents; a record that cannot be parsed is one failed row, the next one
still becomes a Document; ids and meta are built as the sources built them before the split."""

from __future__ import annotations

import io
from datetime import date

import pytest

from equimind.core.documents import Document, Origin, Source
from equimind.core.errors import ParseError
from equimind.ingest.documents import documents, to_document
from equimind.ingest.parse import PARSER_VERSION
from equimind.sources.base import BodyKind, RawFiling, SourceFailure

HTML = """<html><body>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" id="a">2026</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" id="b">Q2</ix:nonNumeric>
<div><span>Item 1. Business</span></div><div><span>We make anvils.</span></div>
<div><span>Item 1A. Risk Factors</span></div><div><span>Demand may fall.</span></div>
</body></html>"""


def _raw(name: str, body: bytes | str, *, kind: BodyKind = BodyKind.HTML, origin: Origin = Origin.SNAPSHOT,
         source: Source = Source.SEC_EDGAR, form: str = "10-Q", declared_fiscal: bool = True,
         meta: tuple[tuple[str, str], ...] = (("corpus_path", "x.html"), ("accession", "0000000001-25-000001"))
         ) -> RawFiling:
    return RawFiling(source_key=f"sec:0000000001:{name}", ticker="ACME", cik="0000000001", company="Acme Corp",
                     source=source, origin=origin, form=form, filed_at=date(2025, 8, 27), period_end=date(2025, 7, 27),
                     url=None, title=f"Acme Corp {form} {name}", body=body, kind=kind, name=f"/corpus/{name}",
                     meta=meta, declared_fiscal=declared_fiscal)


def test_a_record_that_cannot_be_parsed_is_one_failed_row_and_the_next_still_becomes_a_document() -> None:
    before = SourceFailure(source="/corpus/gone.html", error="recorded filing /corpus/gone.html is missing")
    items = [before,
             _raw("broken.html", b"<html><body><div style='display:none'>nothing shown</div></body></html>"),
             _raw("garbage.pdf", b"%PDF-1.4 not really a pdf", kind=BodyKind.PDF),
             _raw("good.html", HTML.encode())]
    out = list(documents(iter(items)))
    assert [type(o).__name__ for o in out] == ["SourceFailure", "SourceFailure", "SourceFailure", "Document"]
    assert out[0] == before, "a source's failure passes through unchanged"
    html_failure, pdf_failure, doc = out[1], out[2], out[3]
    assert isinstance(html_failure, SourceFailure) and html_failure.source == "/corpus/broken.html"
    assert "broken.html" in html_failure.error and "no text" in html_failure.error
    assert isinstance(pdf_failure, SourceFailure) and pdf_failure.source == "/corpus/garbage.pdf"
    assert "unreadable PDF" in pdf_failure.error
    assert isinstance(doc, Document) and "We make anvils." in doc.text


def test_to_document_raises_for_a_bad_body() -> None:
    with pytest.raises(ParseError, match=r"broken\.html"):
        to_document(_raw("broken.html", b"<html><body></body></html>"))
    with pytest.raises(ParseError, match="must be bytes"):
        to_document(_raw("text.pdf", "not bytes", kind=BodyKind.PDF))


def test_snapshot_document_id_provenance_and_sorted_meta() -> None:
    raw = _raw("good.html", HTML.encode())
    doc = to_document(raw)
    assert doc.id == Document.make_id(raw.source_key, doc.text)
    assert (doc.source_key, doc.ticker, doc.cik, doc.company, doc.source, doc.origin, doc.form, doc.filed_at,
            doc.period_end, doc.url, doc.title) == (
        raw.source_key, "ACME", "0000000001", "Acme Corp", Source.SEC_EDGAR, Origin.SNAPSHOT, "10-Q",
        date(2025, 8, 27), date(2025, 7, 27), None, raw.title)
    assert doc.sections and doc.sections[-1].name.endswith("Item 1A. Risk Factors")  # the form guides the names
    assert doc.meta == (("accession", "0000000001-25-000001"), ("corpus_path", "x.html"), ("fiscal_period", "Q2"),
                        ("fiscal_year", "2026"), ("parser", f"edgartools-html/{PARSER_VERSION}"))
    assert to_document(_raw("good.html", HTML)) == doc, "a str body (an 8-K's extracted HTML) parses the same"


def test_live_document_lists_the_declared_fiscal_pairs_last() -> None:
    raw = _raw("live", HTML, origin=Origin.LIVE,
               meta=(("accession", "0000000001-25-000001"), ("primary_document", "acme.htm")))
    assert to_document(raw).meta == (("accession", "0000000001-25-000001"),
                                     ("parser", f"edgartools-html/{PARSER_VERSION}"),
                                     ("primary_document", "acme.htm"), ("fiscal_year", "2026"),
                                     ("fiscal_period", "Q2"))


def test_local_file_keeps_its_own_fiscal_year_and_its_parser_label() -> None:
    known = _raw("ACME_2025Q2_10Q.html", HTML, source=Source.LOCAL, origin=Origin.LOCAL_FILE, declared_fiscal=False,
                 meta=(("doc_name", "ACME_2025Q2_10Q"), ("fiscal_year", "2025")))
    assert to_document(known).meta == (("doc_name", "ACME_2025Q2_10Q"), ("fiscal_year", "2025"),
                                       ("parser", "edgartools-html"))
    unknown = _raw("notes.html", HTML, source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="unknown",
                   meta=(("doc_name", "notes"),))
    doc = to_document(unknown)
    assert doc.form == "unknown"
    assert dict(doc.meta) == {"doc_name": "notes", "fiscal_period": "Q2", "fiscal_year": "2026",
                              "parser": "edgartools-html"}


def test_a_pdf_without_text_is_a_failed_row_naming_the_file() -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buf = io.BytesIO()
    writer.write(buf)
    out = list(documents([_raw("blank.pdf", buf.getvalue(), kind=BodyKind.PDF, source=Source.LOCAL,
                               origin=Origin.LOCAL_FILE)]))
    assert isinstance(out[0], SourceFailure) and out[0].source == "/corpus/blank.pdf"
    assert "blank.pdf" in out[0].error and "no extractable text" in out[0].error
