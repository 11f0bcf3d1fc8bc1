"""Component wiring: builds the stores and models from Settings once, at an entrypoint, and hands them down.

Interfaces (CLI, API, MCP) call ``open_services``; nothing here is module-level state.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from equimind.config import Settings

if TYPE_CHECKING:
    from equimind.ingest.pipeline import IngestPipeline, Progress
    from equimind.ingest.reindex import ReindexReport
    from equimind.protocols import Embedder, Reranker, Tokenizer
    from equimind.retrieval.query_filters import StoreFilterParser
    from equimind.retrieval.search import HybridSearcher
    from equimind.store.docstore import DocStore
    from equimind.store.sparse import BM25Index
    from equimind.store.vectors import ChromaVectorStore


@dataclass
class Services:
    """The long-lived components of one EquiMind home. Heavy parts (embedder, reranker) load on first use."""

    settings: Settings
    docstore: DocStore
    vectors: ChromaVectorStore
    sparse: BM25Index
    _embedder: Embedder | None = None
    _reranker: Reranker | None = None
    _tokenizer: Tokenizer | None = None
    # embedding-text format written by pipeline() and expected by searcher(); the literal of
    # embed_format.PRODUCT_FORMAT (importing it here would load numpy on `import equimind.services`)
    text_format: str = "title-section-v1"
    _cache: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from equimind.retrieval.embed import SentenceTransformerEmbedder
            from equimind.retrieval.hub import pulled_path

            name = self.settings.embed_model
            pulled = pulled_path(self.settings.models_path, name)  # EQUIMIND_HOME/models first
            self._embedder = SentenceTransformerEmbedder(str(pulled) if pulled else name,
                                                         batch_size=self.settings.embed_batch_size,
                                                         name=name if pulled else None)
        return self._embedder

    @property
    def reranker(self) -> Reranker:
        if self._reranker is None:
            from equimind.retrieval.hub import pulled_choice
            from equimind.retrieval.rerank import CrossEncoderReranker

            name = self.settings.rerank_model
            path, problem = pulled_choice(self.settings.models_path, name)  # EQUIMIND_HOME/models first
            self._reranker = CrossEncoderReranker(name, path=path, pulled_problem=problem)
        return self._reranker

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            from equimind.ingest.tokens import HFTokenizer
            from equimind.retrieval.hub import pulled_path

            name = self.settings.embed_model
            pulled = pulled_path(self.settings.models_path, name)
            self._tokenizer = HFTokenizer.from_model_dir(pulled or name, name=name if pulled else None)
        return self._tokenizer

    def searcher(self) -> HybridSearcher:
        with self._lock:  # concurrent first searches must not build competing indexes over the same files
            if "searcher" not in self._cache:
                from equimind.retrieval.search import HybridSearcher

                self._cache["searcher"] = HybridSearcher(self.settings, self.docstore, self.vectors, self.sparse,
                                                         self.embedder, self.reranker, text_format=self.text_format)
        searcher: HybridSearcher = self._cache["searcher"]
        return searcher

    def filter_parser(self) -> StoreFilterParser:
        """Company / fiscal-year words of a query -> filter, over this store's documents (rebuilt as they change)."""
        with self._lock:
            if "filter_parser" not in self._cache:
                from equimind.retrieval.query_filters import StoreFilterParser

                self._cache["filter_parser"] = StoreFilterParser(self.docstore)
        parser: StoreFilterParser = self._cache["filter_parser"]
        return parser

    def pipeline(self) -> IngestPipeline:
        from equimind.ingest.chunk import ParentChildChunker
        from equimind.ingest.pipeline import IngestPipeline

        chunker = ParentChildChunker(self.tokenizer, child_tokens=self.settings.child_tokens,
                                     parent_tokens=self.settings.parent_tokens)
        return IngestPipeline(self.docstore, self.vectors, self.sparse, self.embedder, chunker,
                              text_format=self.text_format, batch_size=self.settings.embed_batch_size)

    def reindex(self, progress: Progress | None = None, *, force: bool = False) -> ReindexReport:
        """Re-embed every stored chunk as ``text_format`` with the current embedder (see ``ingest/reindex.py``)."""
        from equimind.ingest.pipeline import no_progress
        from equimind.ingest.reindex import Reindexer

        reindexer = Reindexer(self.docstore, self.vectors, self.embedder, self.sparse.root or self.settings.bm25_path,
                              text_format=self.text_format, batch_size=self.settings.embed_batch_size)
        return reindexer.run(progress or no_progress, force=force)


def open_services(settings: Settings, *, embedder: Embedder | None = None, reranker: Reranker | None = None,
                  tokenizer: Tokenizer | None = None, text_format: str | None = None) -> Services:
    """Open (creating if needed) the stores under ``settings.home``. ``text_format``: the embedding-text format
    (``equimind.ingest.embed_format``) to ingest and search with; default: the product format."""
    from equimind.ingest.embed_format import PRODUCT_FORMAT, parse_format
    from equimind.store.docstore import DocStore
    from equimind.store.sparse import BM25Index
    from equimind.store.vectors import ChromaVectorStore

    settings.ensure_home()
    docstore = DocStore(settings.docstore_path)
    if settings.chroma_url:
        vectors = ChromaVectorStore.http(settings.chroma_url, settings=settings)
    else:
        vectors = ChromaVectorStore.persistent(settings.chroma_path, settings=settings)
    sparse = BM25Index(settings.bm25_path)
    fmt = parse_format(text_format or PRODUCT_FORMAT).value
    return Services(settings, docstore, vectors, sparse, embedder, reranker, tokenizer, fmt)
