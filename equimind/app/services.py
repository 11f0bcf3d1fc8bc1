"""Component wiring: the single dependency container. Builds the stores, models and clients from Settings once, at
an entrypoint, and hands them down; nothing else builds a client from Settings.

Interfaces (CLI, API, MCP) call ``open_services``; nothing here is module-level state. Heavy parts (embedder,
reranker, tokenizer: torch and transformers) load on first use; so do the SQLite side stores and the sources.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.analytics.market import REPORT_VERSION
from equimind.answer.answerer import Answerer
from equimind.answer.llm_answer import LLMAnswerer
from equimind.answer.similarity import UnitSimilarity
from equimind.core.config import EmbedBackend, Settings
from equimind.core.documents import sha256_hex
from equimind.core.errors import ConfigError, EquiMindError
from equimind.embedding.embed import SentenceTransformerEmbedder, default_model_path, embedder_name  # torch
from equimind.embedding.embed_onnx import OnnxEmbedder  # onnxruntime, on construction
from equimind.embedding.hub import pulled_choice, pulled_path
from equimind.embedding.onnx_export import OnnxPrecision
from equimind.embedding.rerank import CrossEncoderReranker  # torch
from equimind.ingest.chunk import ParentChildChunker
from equimind.ingest.embed_format import PRODUCT_FORMAT, parse_format
from equimind.ingest.pipeline import IngestPipeline, IngestReport, no_progress
from equimind.ingest.tokens import HFTokenizer  # transformers
from equimind.llm.factory import model_for_settings  # pydantic-ai and the provider SDKs
from equimind.llm.providers import LLMConfig, model_settings, resolve_api_key
from equimind.memory.store import MemoryStore
from equimind.query.company_identity import registrant_tickers
from equimind.query.filters import DocFacts, StoreFilterParser
from equimind.query.parsed import QuestionParser
from equimind.retrieval.search import HybridSearcher  # chromadb
from equimind.sources.sourceset import open_sources  # edgartools, yfinance
from equimind.store.docstore import DocStore
from equimind.store.docstore_pg import PgDocStore
from equimind.store.feed import FeedFollower
from equimind.store.figures import FigureCache
from equimind.store.open import open_docstore
from equimind.store.reindex import Reindexer
from equimind.store.sparse import BM25Index
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from equimind.answer.term_index import DocTerms
    from equimind.core.protocols import Embedder, Reranker, Tokenizer
    from equimind.ingest.pipeline import IngestPipeline, Progress
    from equimind.memory.store import MemoryStore
    from equimind.query.filters import StoreFilterParser
    from equimind.retrieval.search import HybridSearcher
    from equimind.sources.sourceset import SourceSet
    from equimind.store.reindex import ReindexReport


@dataclass
class Services:
    """The long-lived components of one EquiMind home."""

    settings: Settings
    docstore: DocStore
    vectors: ChromaVectorStore
    sparse: BM25Index
    _embedder: Embedder | None = None
    _reranker: Reranker | None = None
    _tokenizer: Tokenizer | None = None
    # embedding-text format written by pipeline() and expected by searcher()
    text_format: str = PRODUCT_FORMAT.value
    _searcher: HybridSearcher | None = field(default=None, repr=False)
    _filter_parser: StoreFilterParser | None = field(default=None, repr=False)
    _sources: SourceSet | None = field(default=None, repr=False)
    _figure_cache: FigureCache | None = field(default=None, repr=False)
    _memory: MemoryStore | None = field(default=None, repr=False)
    _llm: tuple[Any, str | None] | None = field(default=None, repr=False)
    _follower: FeedFollower | None = field(default=None, repr=False)  # on a PostgreSQL docstore
    # per-home caches keyed by content hashes (a document id names one text forever, so entries never go stale)
    doc_shas: dict[str, str] = field(default_factory=dict, repr=False)
    answerability_terms: dict[str, DocTerms] = field(default_factory=dict, repr=False)
    _unit_similarity: UnitSimilarity | None = field(default=None, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _complete_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _embedder_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # why ticker-less documents (PDFs) could not be given their registrant's ticker, when the SEC map was unreadable
    identity_problem: str | None = field(default=None, repr=False)

    # --- models -------------------------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            with self._embedder_lock:  # a prewarm thread and the first search must not build two
                if self._embedder is None:
                    self._embedder = build_embedder(self.settings)
        return self._embedder

    def prewarm_embedder(self) -> None:
        """Build the embedder in a background thread (the ONNX export, when a home has none yet, takes ~10 s in a
        child process) while the caller fetches and parses; whoever needs it first waits for that build."""
        if self._embedder is not None:
            return

        def build() -> None:
            try:
                _ = self.embedder
            except EquiMindError as exc:  # the caller's own use raises it again, with its fix
                log.info("embedder prewarm failed: %s", exc)

        threading.Thread(target=build, name="equimind-embedder", daemon=True).start()

    @property
    def unit_similarity(self) -> UnitSimilarity:
        """Question-sentence similarity for the extractive answerer, under this home's embedding model (built on
        first use)."""
        if self._unit_similarity is None:
            self._unit_similarity = UnitSimilarity(lambda: self.embedder)
        return self._unit_similarity

    @property
    def reranker(self) -> Reranker:
        if self._reranker is None:
            name = self.settings.rerank_model
            path, problem = pulled_choice(self.settings.models_path, name)  # EQUIMIND_HOME/models first
            self._reranker = CrossEncoderReranker(name, path=path, pulled_problem=problem)
        return self._reranker

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            name = self.settings.embed_model
            pulled = pulled_path(self.settings.models_path, name)
            self._tokenizer = HFTokenizer.from_model_dir(pulled or name, name=name if pulled else None)
        return self._tokenizer

    @property
    def llm(self) -> tuple[Any, str | None]:
        """(the pydantic-ai Model of the configured provider or None for the offline analyst, degradation reason).
        A provider whose key is missing raises ConfigError naming the variable."""
        if self._llm is None:
            self._llm = model_for_settings(self.settings)
        return self._llm

    def answerer(self) -> Answerer:
        """The answer path's entry point: companyfacts from this mode's sources, the LLM answerer of the configured
        provider (none for the offline analyst), the per-home answerability term cache."""
        model, _ = self.llm
        llm = None
        if model is not None:
            config = LLMConfig.from_settings(self.settings, api_key=self.llm_api_key())
            llm = LLMAnswerer(model, settings=model_settings(config), output_retries=config.retries)
        return Answerer(self.docstore, facts=self.sources.market.facts, llm=llm,
                        terms_cache=self.answerability_terms, similarity=self.unit_similarity)

    @property
    def question_parser(self) -> QuestionParser:
        """The one reader of a question's text (``query/parsed.py``): the store's companies, this mode's SEC ticker
        map and the company names companyfacts give."""
        return QuestionParser(self.docstore, ticker_map=lambda: self.sources.ticker_map(),
                              entity_name=self._entity_name, shaping=self.settings.query_shaping,
                              registered=lambda: self.filter_parser().registered())

    def _entity_name(self, ticker: str) -> str | None:
        """The company's name from its companyfacts, else the SEC ticker map's registrant name, so a store without
        its filings still knows its name ("Should I buy Tesla?" before Tesla's filings are stored)."""
        facts = self.sources.market.facts
        if facts is not None:
            try:
                return facts.company_facts(ticker).entity_name
            except EquiMindError:
                pass
        try:
            info = self.sources.ticker_map().get(ticker.strip().upper())
        except EquiMindError:
            return None
        return info.name if info is not None else None

    def llm_api_key(self) -> str | None:
        return resolve_api_key(self.settings.provider, self.settings.api_key_env())

    def with_settings(self, settings: Settings) -> Services:
        """The same stores and models under other settings (e.g. another LLM provider): provider-dependent parts
        are rebuilt, everything else is shared."""
        _ = self.embedder, self.reranker  # materialise the shared models before sharing the wiring
        same_sources = settings.model_dump(exclude={"provider", "model"}) == self.settings.model_dump(
            exclude={"provider", "model"})
        return Services(settings, self.docstore, self.vectors, self.sparse, _embedder=self._embedder,
                        _reranker=self._reranker, _tokenizer=self._tokenizer, text_format=self.text_format,
                        _searcher=self.searcher(), _filter_parser=self.filter_parser(),
                        _sources=self.sources if same_sources else None, _figure_cache=self.figure_cache,
                        _memory=self.memory, _llm=None, doc_shas=self.doc_shas,
                        answerability_terms=self.answerability_terms, _unit_similarity=self.unit_similarity,
                        _complete_lock=self._complete_lock)

    def release_sources(self) -> None:
        """Close this container's SourceSet (its live HTTP pools); the next use opens a new one."""
        with self._lock:
            if self._sources is not None:
                self._sources.close()
                self._sources = None

    # --- retrieval ----------------------------------------------------------------------------------------------
    def searcher(self) -> HybridSearcher:
        with self._lock:  # concurrent first searches must not build competing indexes over the same files
            if self._searcher is None:
                self._searcher = HybridSearcher(self.settings, self.docstore, self.vectors, self.sparse,
                                                self.embedder, self.reranker, text_format=self.text_format)
                self._follow_feed(self._searcher)
            return self._searcher

    def _follow_feed(self, searcher: HybridSearcher) -> None:
        """On a shared (PostgreSQL) docstore, keep this process's search indexes at the store's feed position."""
        if isinstance(self.docstore, PgDocStore) and self._follower is None:
            self._follower = FeedFollower(self.docstore, searcher.indexes, self.settings.feed_poll_s).start()

    def filter_parser(self) -> StoreFilterParser:
        """Company / fiscal-year words of a query -> filter, over this store's documents (rebuilt as they change)."""
        with self._lock:
            if self._filter_parser is None:
                self._filter_parser = StoreFilterParser(self.docstore, self._registrant_tickers)
            return self._filter_parser

    def _registrant_tickers(self, facts: Sequence[DocFacts]) -> Mapping[str, str]:
        """Tickers of the stored documents that carry only a company name, from this mode's SEC ticker map."""
        if all(f.ticker or not f.company for f in facts):
            return {}
        try:
            names = {t: info.name for t, info in self.sources.ticker_map().items()}
        except EquiMindError as exc:  # live mode without an SEC identity: company names and stored tickers only
            log.warning("no SEC ticker map to name the tickers of documents without one: %s", exc)
            self.identity_problem = str(exc)  # engine.search puts it on the result's degraded lines
            return {}
        self.identity_problem = None
        return registrant_tickers(facts, names)

    def doc_sha(self, doc_id: str) -> str:
        if doc_id not in self.doc_shas:
            self.doc_shas[doc_id] = self.docstore.get_document(doc_id).sha256
        return self.doc_shas[doc_id]

    # --- sources and side stores ----------------------------------------------------------------------------------
    @property
    def sources(self) -> SourceSet:
        """The one SourceSet of this home's mode: the recorded snapshot (``settings.snapshot``) or the live
        clients, chosen here and nowhere else."""
        with self._lock:
            if self._sources is None:
                self._sources = open_sources(self.settings)
            return self._sources

    @property
    def figure_cache(self) -> FigureCache:
        with self._lock:
            if self._figure_cache is None:
                self._figure_cache = FigureCache(self.settings.figures_path, scope=figure_scope(self.settings))
            return self._figure_cache

    @property
    def memory(self) -> MemoryStore:
        with self._lock:
            if self._memory is None:
                self._memory = MemoryStore.from_settings(self.settings)  # PostgreSQL beside a shared docstore
            return self._memory

    # --- ingest -------------------------------------------------------------------------------------------------
    def pipeline(self) -> IngestPipeline:
        chunker = ParentChildChunker(self.tokenizer, child_tokens=self.settings.child_tokens,
                                     parent_tokens=self.settings.parent_tokens)
        return IngestPipeline(self.docstore, self.vectors, self.sparse, self.embedder, chunker,
                              text_format=self.text_format, batch_size=self.settings.embed_batch_size)

    def complete_deferred(self, tickers: Sequence[str] = (), progress: Progress | None = None) -> IngestReport:
        """Embed what first-answer indexing deferred (of ``tickers`` when given); one completion at a time per
        home container, so a run that needs its ticker complete waits for a background completion to finish."""
        if not self.docstore.deferred(tuple(tickers)):  # nothing of these tickers: never wait on another's completion
            return IngestReport()
        with self._complete_lock:
            return self.pipeline().complete_deferred(tickers, progress or no_progress)

    def reindex(self, progress: Progress | None = None, *, force: bool = False) -> ReindexReport:
        """Re-embed every stored chunk as ``text_format`` with the current embedder (see ``ingest/reindex.py``)."""

        reindexer = Reindexer(self.docstore, self.vectors, self.embedder, self.sparse.root or self.settings.bm25_path,
                              text_format=self.text_format, batch_size=self.settings.embed_batch_size)
        return reindexer.run(progress or no_progress, force=force)

    def close(self) -> None:
        """Release the clients and side stores this container opened (live HTTP pools, SQLite handles)."""
        with self._lock:
            for part in (self._sources, self._figure_cache):
                if part is not None:
                    part.close()
            self._sources = self._figure_cache = None
            if self._follower is not None:
                self._follower.stop()
                self._follower = None


def build_embedder(settings: Settings) -> Embedder:
    """The embedder of ``settings.embed_backend`` over ``settings.embed_model`` (a model pulled into
    EQUIMIND_HOME/models first; default: the bundled all-MiniLM-L6-v2). The ONNX backends build their export once,
    under ``settings.onnx_path`` (default HOME/models/onnx), from the same local weights."""
    name = settings.embed_model
    pulled = pulled_path(settings.models_path, name)  # EQUIMIND_HOME/models first
    model = str(pulled) if pulled else name
    if settings.embed_backend is EmbedBackend.TORCH:
        return SentenceTransformerEmbedder(model, batch_size=settings.embed_batch_size,
                                           name=name if pulled else None, num_threads=settings.embed_threads)
    model_dir = Path(model) if model else default_model_path()
    if not model_dir.is_dir():
        raise ConfigError(f"EQUIMIND_EMBED_BACKEND={settings.embed_backend.value} needs a local model directory, "
                          f"not {model!r}; pull it with `equimind models pull {model}` or set "
                          "EQUIMIND_EMBED_BACKEND=torch")
    precision = OnnxPrecision.INT8 if settings.embed_backend is EmbedBackend.ONNX_INT8 else OnnxPrecision.FP32
    return OnnxEmbedder(model_dir, settings.onnx_path, model_name=embedder_name(str(model_dir), name if pulled
                        else None), precision=precision, batch_size=settings.embed_batch_size,
                        num_threads=settings.embed_threads)


def open_services(settings: Settings, *, embedder: Embedder | None = None, reranker: Reranker | None = None,
                  tokenizer: Tokenizer | None = None, text_format: str | None = None) -> Services:
    """Open (creating if needed) the stores under ``settings.home``. ``text_format``: the embedding-text format
    (``equimind.ingest.embed_format``) to ingest and search with; default: the product format."""
    settings.ensure_home()
    docstore = open_docstore(settings)
    if settings.chroma_url:
        vectors = ChromaVectorStore.http(settings.chroma_url, settings=settings)
    else:
        vectors = ChromaVectorStore.persistent(settings.chroma_path, settings=settings)
    sparse = BM25Index(settings.bm25_path)
    fmt = parse_format(text_format or PRODUCT_FORMAT).value
    return Services(settings, docstore, vectors, sparse, embedder, reranker, tokenizer, fmt)


def figure_scope(settings: Settings) -> str:
    """What besides ticker, as-of and mode decides a stored market report's figures: the report version, the
    snapshot folder (or live) and the web-intelligence configuration."""
    parts = {"report": REPORT_VERSION, "data": str(settings.snapshot.resolve()) if settings.snapshot else "live",
             "web": [settings.job_boards, settings.github_orgs, settings.product_terms]}
    return sha256_hex(json.dumps(parts, sort_keys=True))[:16]
