"""LocalFileSource: PDFs/HTML → raw filing records (parsed by ``ingest.documents`` into Documents with pages);
metadata from names or a mapping; bad files reported."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from equimind.core.documents import Document, Origin, Source
from equimind.core.errors import ConfigError, NotFoundError
from equimind.ingest.documents import documents, to_document
from equimind.sources.base import BodyKind, RawFiling, SourceFailure
from equimind.sources.local import LocalFileSource, infer_meta

HTML = "<html><body><p>Item 1. Business</p><p>We sell shoes.</p><p>Item 7. Results</p><p>Sales rose.</p></body></html>"


@pytest.mark.parametrize(("stem", "company", "form", "year", "quarter", "dated"), [
    ("3M_2018_10K", "3M", "10-K", "2018", None, None),
    ("BESTBUY_2024Q2_10Q", "BESTBUY", "10-Q", "2024", "2", None),
    ("FOOTLOCKER_2022_8K_dated-2022-05-20", "FOOTLOCKER", "8-K", "2022", None, date(2022, 5, 20)),
    ("FOOTLOCKER_2022_8K_dated_2022-08-19", "FOOTLOCKER", "8-K", "2022", None, date(2022, 8, 19)),
    ("AMERICANEXPRESS_2022_10K", "AMERICANEXPRESS", "10-K", "2022", None, None),
    ("board_minutes", None, "unknown", None, None, None),
])
def test_infer_meta_from_financebench_names(stem: str, company: str | None, form: str, year: str | None,
                                            quarter: str | None, dated: date | None) -> None:
    meta = infer_meta(stem)
    assert (meta.company, meta.form, meta.fiscal_year, meta.fiscal_quarter, meta.dated) == (
        company, form, year, quarter, dated)
    assert meta.ticker is None, "a ticker is never guessed"


def test_metadata_mapping_overrides_the_name() -> None:
    meta = infer_meta("BESTBUY_2024Q2_10Q", {"doc_name": "BESTBUY_2024Q2_10Q", "company": "Best Buy",
                                             "doc_type": "10q", "doc_period": "2024", "gics_sector": "Retail",
                                             "doc_link": "https://example.com/bby.pdf", "ticker": "BBY"})
    assert (meta.company, meta.form, meta.ticker, meta.url) == ("Best Buy", "10-Q", "BBY", "https://example.com/bby.pdf")
    assert meta.title == "Best Buy 10-Q FY2024 Q2"
    assert ("gics_sector", "Retail") in meta.extra


def test_missing_path_and_unsupported_file_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        LocalFileSource(tmp_path / "nope.pdf")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ConfigError, match=r"\.pdf"):
        LocalFileSource(tmp_path / "notes.txt")


def test_bad_pdf_is_reported_and_the_batch_goes_on(tmp_path: Path) -> None:
    (tmp_path / "AAA_2020_10K.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (tmp_path / "ZZZ_2021_8K_dated-2021-03-04.html").write_text(HTML)
    (tmp_path / "ignored.txt").write_text("not a filing")
    source = LocalFileSource(tmp_path)
    assert [p.name for p in source.files()] == ["AAA_2020_10K.pdf", "ZZZ_2021_8K_dated-2021-03-04.html"]
    raw = list(source.iter_results())
    assert [type(r) for r in raw] == [RawFiling, RawFiling]  # the source only reads the bytes
    assert [r.kind for r in raw if isinstance(r, RawFiling)] == [BodyKind.PDF, BodyKind.HTML]
    results = list(documents(raw))
    assert isinstance(results[0], SourceFailure) and "AAA_2020_10K.pdf" in results[0].error
    assert results[0].source.endswith("AAA_2020_10K.pdf")
    doc = results[1]
    assert isinstance(doc, Document)
    assert (doc.source, doc.origin, doc.form, doc.company, doc.ticker) == (
        Source.LOCAL, Origin.LOCAL_FILE, "8-K", "ZZZ", None)
    assert doc.filed_at == date(2021, 3, 4) and doc.pages == ()
    assert [s.name for s in doc.sections] == ["Item 1. Business", "Item 7. Results"]
    assert doc.source_key == "local:ZZZ_2021_8K_dated-2021-03-04.html"
    assert doc.meta == (("date_basis", "document date from the file name"),
                        ("doc_name", "ZZZ_2021_8K_dated-2021-03-04"), ("file", "ZZZ_2021_8K_dated-2021-03-04.html"),
                        ("fiscal_year", "2021"), ("parser", "edgartools-html"))


@pytest.mark.integration
def test_financebench_pdf_has_pages_and_metadata(financebench_dir: Path) -> None:
    rows = [json.loads(line) for line in (financebench_dir / "documents.jsonl").read_text().splitlines() if line]
    mapping = {r["doc_name"]: {k: str(v) for k, v in r.items()} for r in rows}
    path = financebench_dir / "pdfs" / "BESTBUY_2024Q2_10Q.pdf"
    doc = to_document(LocalFileSource([path], metadata=mapping).load(path))
    assert dict(doc.meta)["parser"] == "pypdf-layout"
    assert (doc.company, doc.form, doc.ticker, doc.filed_at) == ("Best Buy", "10-Q", None, None)
    assert doc.meta_dict()["fiscal_year"] == "2024" and doc.url and doc.url.startswith("https://")
    assert len(doc.pages) > 10 and [p.number for p in doc.pages] == list(range(len(doc.pages)))
    assert doc.pages[0].start == 0 and doc.pages[-1].end == len(doc.text)
    assert all(a.end < b.start for a, b in zip(doc.pages, doc.pages[1:], strict=False))
    assert any(s.name.startswith("Part I, Item 2") for s in doc.sections)
