"""Helpers for the server-mode and concurrency tests: small English-like filings ingested through the real
``IngestPipeline`` (hash embedder, whitespace tokenizer, real SQLite + Chroma + bm25s), and the "fully indexed" check
every search hit must pass."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from equimind.core.config import Settings
from equimind.core.documents import Document, FilterSpec, Origin, Section, Source
from equimind.core.search import SearchResult
from equimind.embedding.embed import HashEmbedder
from equimind.ingest.chunk import ParentChildChunker
from equimind.ingest.pipeline import IngestPipeline
from equimind.ingest.tokens import WhitespaceTokenizer
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore import DocStore
from equimind.store.local_indexes import LocalIndexes
from equimind.store.sparse import BM25Index
from equimind.store.vectors import ChromaVectorStore

TICKERS = ("NVDA", "WMT", "MSFT", "TSLA")
EMBED_DIM = 64
SENTENCES = (
    "data center revenue grew on demand for AI accelerators and GPUs",
    "supply chain constraints at foundry partners limited wafer output",
    "export controls on advanced chips are a material risk factor",
    "free cash flow funded share repurchases and a higher dividend",
    "the company refinanced senior notes and reduced long term debt",
    "same store sales declined as consumer spending slowed in stores",
    "cloud subscription revenue expanded with enterprise customers",
    "automotive deliveries rose while vehicle margins compressed",
)
QUERIES = (
    "export controls risk for advanced chips",
    "free cash flow and share repurchases",
    "cloud subscription revenue growth",
    "supply chain constraints wafer output",
    "debt refinancing senior notes",
)


def make_documents(n: int, seed: int = 0, sentences: int = 24) -> list[Document]:
    """``n`` filings of ``sentences`` sentences each (two sections), spread over 4 tickers and 2022-2024."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        ticker = TICKERS[i % len(TICKERS)]
        filed = date(2022, 1, 3) + timedelta(days=rng.randrange(3 * 365))
        body = [f"{ticker} {rng.choice(SENTENCES)} in fiscal {filed.year} (filing {i}, note {j})."
                for j in range(sentences)]
        text = " ".join(body)
        half = text.index(body[sentences // 2])
        key = f"test/{ticker}/{i}"
        docs.append(Document(
            id=Document.make_id(key, text), source_key=key, ticker=ticker, cik=None, company=f"{ticker} Corp",
            source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form="10-K" if i % 2 else "10-Q", filed_at=filed,
            period_end=None, url=None, title=f"{ticker} filing {i}", text=text,
            sections=(Section("Item 1", 0, half), Section("Item 7", half, len(text))),
        ))
    return docs


def chunker() -> ParentChildChunker:
    return ParentChildChunker(WhitespaceTokenizer(), child_tokens=40, parent_tokens=120)


def expected_chunks(docs: list[Document]) -> dict[str, set[str]]:
    """doc_id -> the ids of every chunk the pipeline will store for it."""
    c = chunker()
    return {d.id: {ch.id for ch in c.chunk(d)[1]} for d in docs}


def pipeline(docstore: DocStore, vectors: ChromaVectorStore, bm25_root: Path) -> IngestPipeline:
    return IngestPipeline(docstore, vectors, BM25Index(bm25_root), HashEmbedder(EMBED_DIM), chunker(), batch_size=16)


def query_plan(i: int) -> tuple[str, FilterSpec | None, str]:
    """The i-th (query, filter, mode) a reader runs: every mode, with and without a ticker + date filter."""
    query = QUERIES[i % len(QUERIES)]
    mode = ("hybrid", "dense", "bm25")[i % 3]
    flt = None if i % 2 else FilterSpec(tickers=(TICKERS[i % len(TICKERS)],), since=date(2022, 6, 1),
                                        until=date(2024, 6, 30))
    return query, flt, mode


@dataclass
class HitChecker:
    """Checks that every hit's document is fully indexed: status 'indexed', and every one of its chunks is in the
    docstore and in the vector store (a document, once complete, stays complete: the tests never delete)."""

    docstore: DocStore
    vectors: ChromaVectorStore
    expected: dict[str, set[str]]
    complete: set[str] = field(default_factory=set)

    def violations(self, result: SearchResult, flt: FilterSpec | None) -> list[str]:
        out: list[str] = []
        for hit in result.hits:
            doc_id = hit.document.doc_id
            if flt is not None and hit.document.ticker not in flt.tickers:
                out.append(f"hit {hit.chunk_id} of {hit.document.ticker} passed filter {flt.tickers}")
            want = self.expected.get(doc_id)
            if want is None or hit.chunk_id not in want:
                out.append(f"hit {hit.chunk_id} is not a chunk the pipeline makes for document {doc_id}")
                continue
            if doc_id not in self.complete:
                out.extend(self._check_document(doc_id, want))
        return out

    def _check_document(self, doc_id: str, want: set[str]) -> list[str]:
        out = []
        status = self.docstore.document_status(doc_id)
        if status != "indexed":
            out.append(f"document {doc_id} was returned with status {status!r}")
        stored = {c.id for c in self.docstore.chunks_for_document(doc_id)}
        if stored != want:
            out.append(f"document {doc_id}: {len(stored)}/{len(want)} chunks in the docstore")
        vectors = self.vectors.has_ids(sorted(want))
        if vectors != want:
            out.append(f"document {doc_id}: {len(vectors)}/{len(want)} chunks in the vector store")
        if not out:
            self.complete.add(doc_id)
        return out


@dataclass
class ReaderStats:
    searches: int = 0
    hits: int = 0
    documents_seen: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"searches": self.searches, "hits": self.hits, "documents_seen": sorted(self.documents_seen),
                "errors": self.errors[:20], "violations": self.violations[:20]}


def read_loop(searcher: HybridSearcher, checker: HitChecker, stop: Callable[[], bool], offset: int = 0,
              min_searches: int = 3) -> ReaderStats:
    """Search in a loop until ``stop()`` (at least ``min_searches`` times), recording exceptions and hits that
    are not fully indexed. Never raises: the caller asserts on the stats."""
    stats = ReaderStats()
    i = offset
    while stats.searches < min_searches or not stop():
        query, flt, mode = query_plan(i)
        i += 1
        try:
            result = searcher.search(query, flt, mode=mode, top_k=10)
            stats.violations.extend(checker.violations(result, flt))
        except Exception as exc:  # the point of the test: any exception is a failure, reported with its type
            stats.errors.append(f"{type(exc).__name__}: {exc}")
            continue
        finally:
            stats.searches += 1
        stats.hits += len(result.hits)
        stats.documents_seen.update(h.document.doc_id for h in result.hits)
    return stats


def open_searcher(settings: Settings, docstore: DocStore, vectors: ChromaVectorStore) -> HybridSearcher:
    """A searcher with its own LocalIndexes over the home's BM25 directory (what one API worker holds)."""
    embedder = HashEmbedder(EMBED_DIM)
    indexes = LocalIndexes(settings.bm25_path, docstore, vectors, embedder.dim, embedder.name)
    return HybridSearcher(settings, docstore, vectors, indexes, embedder, None)
