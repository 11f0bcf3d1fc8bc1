"""Statement captions: which primary financial statement a passage lies in, on pages (PDF) and in Markdown (HTML)."""

from __future__ import annotations

import pytest

from equimind.app.engine import doc_ref
from equimind.core.documents import Chunk, Document, Origin, PageSpan, Source
from equimind.core.search import DocumentRef
from equimind.ingest.captions import caption_at, caption_of, statement_captions, title_kind
from equimind.ingest.embed_format import EmbedFormat, embed_text_for, stored_chunk_texts


def make_doc(text: str, pages: tuple[PageSpan, ...] = ()) -> Document:
    return Document(id=Document.make_id("t", text), source_key="t", ticker="MMM", cik=None, company="3M",
                    source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=None,
                    url=None, title="3M 10-K FY2018", text=text, pages=pages)


def paged(*page_texts: str) -> Document:
    spans, pos = [], 0
    for i, t in enumerate(page_texts):
        spans.append(PageSpan(i, pos, pos + len(t)))
        pos += len(t) + 2
    return make_doc("\n\n".join(page_texts), tuple(spans))


def chunk_of(doc: Document, needle: str) -> Chunk:
    start = doc.text.index(needle)
    end = start + len(needle)
    return Chunk(id=f"c{start}", doc_id=doc.id, parent_id="p", start=start, end=end, parent_start=start,
                 parent_end=end, section="Item 8. Financial Statements", text=needle, ticker="MMM",
                 source=Source.LOCAL, form="10-K", filed_at=0)


@pytest.mark.parametrize(("line", "kind"), [
    ("Consolidated Statement of Cash Flows", "statement of cash flows"),
    ("Consolidated Statement of Cash Flow s", "statement of cash flows"),  # PDF extraction splits words
    ("CASH FLOWS STATEMENTS", "statement of cash flows"),
    ("Consolidated Balance Shee t", "balance sheet"),
    ("CONDENSED CONSOLIDATED BALANCE SHEETS (Unaudited)", "balance sheet"),
    ("Consolidated Statements of Financial Position", "balance sheet"),
    ("CONSOLIDATED STATEMENTS OF OPERATIONS(in millions, except per share data)", "income statement"),
    ("Consolidated Statements of Earnings", "income statement"),
    ("INCOME STATEMENTS", "income statement"),
    ("Consolidated Statement of Comprehensive Income (Loss)", "statement of comprehensive income"),
    ("Consolidated Statements of Changes in Shareholders' Equity", "statement of stockholders' equity"),
    ("Consolidated Statements of Equity", "statement of stockholders' equity"),
    ("Consolidated Statement of Cash Flows (continued)", "statement of cash flows"),
])
def test_statement_titles_are_recognised(line: str, kind: str) -> None:
    assert title_kind(line) == kind


@pytest.mark.parametrize("line", [
    "Off-Balance Sheet Arrangements",
    "Consolidated Statements of Cash Flows Reconciliation",
    "are recorded on the balance sheet at fair value",
    "Consolidated Balance Sheets as of December 31, 2023 and 2024",  # an index entry, not a heading
    "Net cash provided by operating activities",
    "Balance",
])
def test_other_lines_are_not_titles(line: str) -> None:
    assert title_kind(line) is None


def test_a_statement_page_captions_every_passage_on_it() -> None:
    doc = paged(
        "Item 7. MD&A\nCapital spending rose in 2018.",
        "Table of Contents\n3M Company and Subsidiaries\nConsolidated Statement of Cash Flow\ns\nYears ended\n"
        "Net income 5,363\nPurchases of property, plant and equipment (PP&E)\n(1,577)",
        "Notes to Consolidated Financial Statements\nNote 1. Significant accounting policies",
    )
    caps = statement_captions(doc)
    assert [c.name for c in caps] == ["statement of cash flows"]
    assert caption_of(caps, chunk_of(doc, "Purchases of property, plant and equipment (PP&E)")) == \
        "statement of cash flows"
    assert caption_of(caps, chunk_of(doc, "Capital spending rose")) is None
    assert caption_of(caps, chunk_of(doc, "Note 1. Significant")) is None


def test_a_title_below_the_top_of_a_page_or_an_index_page_captions_nothing() -> None:
    doc = paged(
        "Index to Financial Statements\nConsolidated Statement of Income 55\nConsolidated Balance Sheet 57\n"
        "Consolidated Statement of Cash Flows 59",
        "Item 7.\n" + "\n".join(f"line {i}" for i in range(12)) + "\nConsolidated Balance Sheet\nCash 2,853",
    )
    assert statement_captions(doc) == ()


def test_a_markdown_statement_is_captioned_through_its_table_only() -> None:
    text = ("| Consolidated Statements of Cash Flows | 36 |\n| Consolidated Balance Sheets | 39 |\n\n"
            "CONSOLIDATED STATEMENTS OF CASH FLOWS\n\n(In millions)\n\n| | 2024 | 2023 |\n| --- | --- | --- |\n"
            "| Payments for acquisition of property, plant and equipment | (9,447) | (10,959) |\n\n"
            "Note 1 – Summary of Significant Accounting Policies\nPayments are recognised when made.")
    doc = make_doc(text)
    caps = statement_captions(doc)
    assert [c.name for c in caps] == ["statement of cash flows"]  # the table of contents is not a heading
    assert caption_of(caps, chunk_of(doc, "| Payments for acquisition")) == "statement of cash flows"
    assert caption_of(caps, chunk_of(doc, "Payments are recognised")) is None
    assert caption_at(caps, 0) is None


def test_a_title_without_a_table_under_it_governs_nothing() -> None:
    doc = make_doc("Consolidated Balance Sheets\n\n" + "We discuss liquidity below. " * 60 + "\n| a | 1 |")
    assert statement_captions(doc) == ()


def test_the_statement_format_puts_the_caption_in_the_header_and_the_others_do_not() -> None:
    doc = paged("Consolidated Balance Sheet\nAt December 31\nProperty, plant and equipment — net 8,738")
    c = chunk_of(doc, "Property, plant and equipment — net 8,738")
    assert embed_text_for("title-section-statement-v2")(c, doc) == \
        "3M 10-K FY2018 | Item 8. Financial Statements | balance sheet\nProperty, plant and equipment — net 8,738"
    assert embed_text_for("title-section-v1")(c, doc) == \
        "3M 10-K FY2018 | Item 8. Financial Statements\nProperty, plant and equipment — net 8,738"
    loads: list[str] = []
    refs: list[str] = []

    class Store:
        def get_refs(self, doc_ids: list[str]) -> dict[str, DocumentRef]:
            refs.extend(doc_ids)
            return {d: doc_ref(doc) for d in doc_ids}

        def get_document(self, doc_id: str) -> Document:
            loads.append(doc_id)
            return doc

    assert stored_chunk_texts(EmbedFormat("title-section-v1"), [c], Store()) == \
        [embed_text_for("title-section-v1")(c, doc)]
    assert loads == [] and refs == [doc.id]  # a format without captions never loads the document
    assert stored_chunk_texts(EmbedFormat("title-section-statement-v2"), [c, c],
                              Store()) == [embed_text_for("title-section-statement-v2")(c, doc)] * 2
    assert loads == [doc.id] and refs == [doc.id]  # once per document, and no second read of its metadata


def test_the_cells_format_embeds_table_rows_as_their_cells() -> None:
    from equimind.ingest.embed_format import table_cells_as_text

    text = "| (Millions) | 2018 | 2017 |\n| --- | --- | --- |\n| Purchases of PP&E | (1,577) | (1,373) |\n" \
           "| Cash Flows |  |  |\nA sentence | with a bar."
    assert table_cells_as_text(text) == ("(Millions) 2018 2017\nPurchases of PP&E (1,577) (1,373)\nCash Flows\n"
                                         "A sentence | with a bar.")
    doc = make_doc("Consolidated Balance Sheets\n\n| | 2024 |\n| --- | --- |\n| Total assets | 364,980 |")
    c = chunk_of(doc, "| Total assets | 364,980 |")
    assert embed_text_for("title-section-statement-cells-v3")(c, doc) == \
        "3M 10-K FY2018 | Item 8. Financial Statements | balance sheet\nTotal assets 364,980"
    assert c.text == "| Total assets | 364,980 |"  # the chunk (BM25, citations) keeps the exact span


def test_bm25_reads_a_statement_passage_under_its_statement_name() -> None:
    from equimind.ingest.captions import captioned_texts

    doc = paged(
        "Item 7. MD&A\nInventories rose because of new stores.",
        "Consolidated Balance Sheets\nAssets\n| Merchandise inventories | 5,409 | 5,209 |",
    )
    md_a, row = chunk_of(doc, "Inventories rose"), chunk_of(doc, "| Merchandise inventories | 5,409 | 5,209 |")
    reads: list[str] = []

    def get(doc_id: str) -> Document:
        reads.append(doc_id)
        return doc

    assert captioned_texts([md_a, row], get) == [
        "Inventories rose", "balance sheet\n| Merchandise inventories | 5,409 | 5,209 |"]
    assert reads == [doc.id]  # one read per document


def test_a_balance_sheet_question_finds_the_row_through_bm25_and_an_old_index_is_rebuilt(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The row shares "inventories" with MD&A sentences that say it more often; the question's "balance sheet" is
    what tells them apart, and only the caption carries it (the row's passage does not hold the title). A BM25 index
    saved in the format before captions is not read: it is rebuilt."""
    import json

    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer
    from equimind.store.indexfiles import FORMAT_FILE
    from equimind.store.sparse import FORMAT_VERSION, BM25Index

    filler = "\n".join(f"Inventories planning note {i}: inventories and inventories matter." for i in range(12))
    rows = "\n".join(f"| Asset line {i} | {i} | {i + 1} |" for i in range(8))
    tail = "Other matters: " + "store staffing and openings continued. " * 8
    doc = paged(f"Item 7. MD&A\n{filler}\n{tail}", f"Consolidated Balance Sheets\nAssets\n{rows}\n"
                "| Merchandise inventories | 5,409 | 5,209 |\n| Total assets | 12,901 | 13,049 |")
    settings = Settings(home=tmp_path / "h", child_tokens=30, parent_tokens=90)
    services = open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer())
    services.pipeline().run([doc])
    hits = services.searcher().search("balance sheet inventories", mode="bm25", top_k=5).hits

    def order(texts: list[str]) -> tuple[int, int]:  # (rank of the row's passage, of the first MD&A note)
        row = next(i for i, t in enumerate(texts) if "Merchandise inventories" in t)
        note = next((i for i, t in enumerate(texts) if "planning note" in t), len(texts))
        return row, note

    row, note = order([h.text for h in hits])
    assert row < note and "Balance Sheets" not in hits[row].text
    # the same children indexed by their text alone rank an MD&A note above the row
    chunks = list(services.docstore.iter_chunks(only_indexed=True))
    by_id = {c.id: c.text for c in chunks}
    plain = BM25Index(None).build(chunks).search("balance sheet inventories", 20)
    texts = [by_id[cid] for cid, _ in plain]
    assert any("Merchandise inventories" in t for t in texts)
    p_row, p_note = order(texts)
    assert p_note < p_row
    # an index stamped with the previous format version is rebuilt on the next search, not read
    current = settings.bm25_path / (settings.bm25_path / "CURRENT").read_text().strip()
    stamp_file = current / FORMAT_FILE
    stamp = json.loads(stamp_file.read_text())
    assert stamp["format_version"] == FORMAT_VERSION
    stamp_file.write_text(json.dumps({**stamp, "format_version": FORMAT_VERSION - 1}))
    fresh = open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer()).searcher()
    again = fresh.search("balance sheet inventories", mode="bm25", top_k=5).hits
    assert [h.chunk_id for h in again] == [h.chunk_id for h in hits]
    new_current = settings.bm25_path / (settings.bm25_path / "CURRENT").read_text().strip()
    assert json.loads((new_current / FORMAT_FILE).read_text())["format_version"] == FORMAT_VERSION
