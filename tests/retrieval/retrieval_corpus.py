"""Helpers for retrieval tests: a small synthetic corpus built from models.Document/Parent/Chunk directly, stored in
a real SQLite docstore, real Chroma and real bm25s in a temp dir, embedded with the hash-based fake embedder."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from equimind.core.config import Settings
from equimind.core.documents import Chunk, Document, Origin, PageSpan, Parent, Section, Source, date_to_int
from equimind.embedding.embed import HashEmbedder
from equimind.store.docstore import DocStore
from equimind.store.local_indexes import LocalIndexes
from equimind.store.vectors import ChromaVectorStore

TOPICS = {
    "ai": "data center revenue grew on demand for AI accelerators and GPUs",
    "supply": "supply chain constraints at foundry partners limited wafer output",
    "risk": "export controls on advanced chips are a material risk factor",
    "cash": "free cash flow funded share repurchases and a higher dividend",
    "debt": "the company refinanced senior notes and reduced long term debt",
    "retail": "same store sales declined as consumer spending slowed in stores",
    "cloud": "cloud subscription revenue expanded with enterprise customers",
    "auto": "automotive deliveries rose while vehicle margins compressed",
}


def build_doc(ticker: str, form: str, filed: date, topics: list[str], source: Source = Source.SEC_EDGAR,
              per_parent: int = 2) -> tuple[Document, list[Parent], list[Chunk]]:
    """One document: one sentence (child chunk) per topic, parents of ``per_parent`` sentences, 2 pages."""
    sentences = [f"{ticker} {TOPICS[t]} in fiscal {filed.year} ({form}, item {i})." for i, t in enumerate(topics)]
    text = " ".join(sentences)
    key = f"{ticker}/{form}/{filed.isoformat()}"
    doc_id = Document.make_id(key, text)
    half = len(text) // 2
    doc = Document(
        id=doc_id, source_key=key, ticker=ticker, cik="0000000001", company=f"{ticker} Corp", source=source,
        origin=Origin.SNAPSHOT, form=form, filed_at=filed, period_end=filed, url=f"https://example.test/{key}",
        title=f"{ticker} {form} {filed.isoformat()}", text=text,
        sections=(Section("Item 1", 0, half), Section("Item 7", half, len(text))),
        pages=(PageSpan(0, 0, half), PageSpan(1, half, len(text))), meta=(("k", "v"),),
    )
    spans, pos = [], 0
    for s in sentences:
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    parents, chunks = [], []
    for p0 in range(0, len(spans), per_parent):
        group = spans[p0 : p0 + per_parent]
        ps, pe = group[0][0], group[-1][1]
        parent = Parent(id=f"{doc_id}:{ps}:{pe}", doc_id=doc_id, start=ps, end=pe, section=doc.section_at(ps))
        parents.append(parent)
        for s, e in group:
            pages = doc.pages_for(s, e)
            chunks.append(Chunk(
                id=Chunk.make_id(doc_id, s, e), doc_id=doc_id, parent_id=parent.id, start=s, end=e,
                parent_start=ps, parent_end=pe, section=doc.section_at(s), text=text[s:e], ticker=ticker,
                source=source, form=form, filed_at=date_to_int(filed),
                page_start=pages[0] if pages else None, page_end=pages[1] if pages else None,
            ))
    return doc, parents, chunks


def corpus_specs() -> list[tuple[str, str, date, list[str]]]:
    specs = []
    tickers = {"NVDA": ["ai", "supply", "risk", "cash"], "WMT": ["retail", "cash", "debt", "supply"],
               "MSFT": ["cloud", "ai", "cash", "risk"], "TSLA": ["auto", "supply", "debt", "ai"]}
    for ticker, topics in tickers.items():
        for year in (2022, 2023, 2024):
            specs.append((ticker, "10-K", date(year, 2, 20), topics))
            specs.append((ticker, "10-Q", date(year, 8, 5), list(reversed(topics))))
    return specs


TEXT_FORMAT = "chunk-text-v0"
"""The embedding-text format of this corpus's vectors (``Stores.ingest`` embeds ``chunk.text``); searchers over it
are built with ``text_format=TEXT_FORMAT``."""


@dataclass
class Stores:
    settings: Settings
    docstore: DocStore
    vectors: ChromaVectorStore
    indexes: LocalIndexes
    embedder: HashEmbedder
    docs: list[Document]
    chunks: list[Chunk]

    def ingest(self, doc: Document, parents: list[Parent], chunks: list[Chunk], index: bool = True) -> None:
        self.docstore.add_document_with_chunks(doc, parents, chunks)
        self.vectors.upsert(chunks, self.embedder.embed([c.text for c in chunks]))
        if index:
            self.docstore.set_status(doc.id, "indexed")
        self.docs.append(doc)
        self.chunks.extend(chunks)


def make_stores(home: Path) -> Stores:
    settings = Settings(home=home, retrieval_mode="hybrid")
    settings.ensure_home()
    embedder = HashEmbedder(dim=64)
    docstore = DocStore(settings.docstore_path)
    vectors = ChromaVectorStore.from_settings(settings)
    indexes = LocalIndexes(settings.bm25_path, docstore, vectors, embedder.dim, embedder.name)
    stores = Stores(settings, docstore, vectors, indexes, embedder, [], [])
    docstore.set_embedding_stamp(embedder.name, TEXT_FORMAT)  # Stores.ingest embeds the bare chunk text
    for ticker, form, filed, topics in corpus_specs():
        stores.ingest(*build_doc(ticker, form, filed, topics))
    return stores
