"""Every reader of document text returns on every sentence of the recorded data (issue 28): the 12 recorded 10-K /
10-Q filings parsed by the ingest layer (``evaluation.golden.snapshot_documents``: the snapshot source's raw records
through ``ingest.documents.to_document``), and FinanceBench's PDFs.

The PDFs: the product's PDF path (pypdf layout mode, tables as Markdown) takes 15-20 minutes for all 24 on 2 cores,
so the sweep reads a fixed sample of each PDF's pages through that same path: every ``PDF_PAGE_STRIDE``-th page
plus every page a FinanceBench question cites as evidence, copied into a smaller PDF and ingested as the product
ingests a local file. The dataset's own text of every evidence page (``evidence_text_full_page``) is swept too.
``EQUIMIND_PDF_PAGE_STRIDE=1`` reads every page (the full sweep). Sentences are ``lexicon.text.split_sentences``
spans (line breaks and sentence ends), so a table row is one sentence."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from equimind.core.documents import Document
from equimind.lexicon.text import split_sentences

Reader = Callable[[str], int]
PDF_PAGE_STRIDE = int(os.environ.get("EQUIMIND_PDF_PAGE_STRIDE", "100"))
RECORDED_FILINGS = 12


def sweep(text: str, read_all: Reader) -> tuple[int, int]:
    """(sentences, periods and values found) over every sentence of ``text``."""
    sentences = found = 0
    for a, b in split_sentences(text):
        found += read_all(text[a:b])
        sentences += 1
    return sentences, found


@pytest.mark.integration
def test_every_sentence_of_every_recorded_filing_is_read(recorded_documents: list[Document], read_all: Reader,
                                                         read_statements: Callable[[str], None]) -> None:
    docs = recorded_documents
    assert len(docs) == RECORDED_FILINGS
    sentences = found = 0
    for doc in docs:
        read_statements(doc.text)  # the statement readers over the whole filing: its tables span many sentences
        n, k = sweep(doc.text, read_all)
        assert n > 500, (doc.ticker, doc.form, n)
        sentences, found = sentences + n, found + k
    print(f"recorded filings: {len(docs)} documents, {sentences} sentences, {found} periods and values read")
    assert found > sentences // 2


def _questions(financebench_dir: Path) -> list[dict[str, Any]]:
    lines = (financebench_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _page_sample(pdf: Path, cited: set[int], tmp: Path) -> tuple[Path, int]:
    """A PDF of ``pdf``'s sampled pages (same file name: the ingest layer reads the document's name from it)."""
    from pypdf import PdfReader, PdfWriter

    reader = PdfReader(pdf)
    pages = [i for i in range(len(reader.pages)) if i % PDF_PAGE_STRIDE == 0 or i in cited]
    writer = PdfWriter()
    for i in pages:
        writer.add_page(reader.pages[i])
    out = io.BytesIO()
    writer.write(out)
    path = tmp / pdf.name
    path.write_bytes(out.getvalue())
    return path, len(pages)


def _ingested(path: Path, financebench_dir: Path) -> Document:
    from equimind.evaluation.financebench import load_doc_meta
    from equimind.ingest.documents import to_document
    from equimind.sources.local import LocalFileSource

    return to_document(LocalFileSource([path], metadata=load_doc_meta(financebench_dir)).load(path))


@pytest.mark.integration
@pytest.mark.slow
def test_every_sentence_of_the_financebench_pdfs_is_read(financebench_dir: Path, read_all: Reader,
                                                          read_statements: Callable[[str], None],
                                                          tmp_path: Path) -> None:
    questions = _questions(financebench_dir)
    cited: dict[str, set[int]] = {}
    for q in questions:
        for ev in q["evidence"]:
            cited.setdefault(ev["doc_name"], set()).add(int(ev["evidence_page_num"]))
    pdfs = sorted((financebench_dir / "pdfs").glob("*.pdf"))
    assert len(pdfs) >= 20
    pages = sentences = found = 0
    for pdf in pdfs:
        sample, n_pages = _page_sample(pdf, cited.get(pdf.stem, set()), tmp_path)
        text = _ingested(sample, financebench_dir).text
        read_statements(text)
        n, k = sweep(text, read_all)
        pages, sentences, found = pages + n_pages, sentences + n, found + k
    dataset_pages = [ev["evidence_text_full_page"] for q in questions for ev in q["evidence"]]
    for text in dataset_pages:
        n, k = sweep(text, read_all)
        sentences, found = sentences + n, found + k
    print(f"FinanceBench: {len(pdfs)} PDFs, {pages} pages read by the product (every {PDF_PAGE_STRIDE}th and the "
          f"cited ones) and {len(dataset_pages)} dataset evidence pages, {sentences} sentences, {found} periods and "
          "values read")
    assert sentences > 20 * len(pdfs) and found > 0
