"""Hybrid search: filter -> dense + BM25 (filter inside both legs) -> Reciprocal Rank Fusion -> cross-encoder rerank.

Modes: ``dense`` | ``bm25`` | ``hybrid`` (RRF of both legs) | ``hybrid+rerank`` (RRF, then the cross-encoder reorders
the top ``rerank_top_n``). A reranker that is unavailable never invents scores: the RRF order is kept, every hit says
``rerank_status = "unavailable (<reason>)"`` and the result's ``degraded`` list says so too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from equimind.core.config import RETRIEVAL_MODES, RetrievalMode, Settings
from equimind.core.degraded import Degradation
from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError
from equimind.core.lru import LRU
from equimind.core.protocols import Embedder, Reranker, Vectors
from equimind.core.search import FeedPosition, SearchHit, SearchResult, StageScores
from equimind.embedding.rerank import unavailable_line
from equimind.ingest.embed_format import (
    PRODUCT_FORMAT,
    EmbeddingStamp,
    parse_format,
    read_stamp,
    stamp_note,
    stored_chunk_texts,
)
from equimind.ingest.first_answer import CAPABILITY, search_note
from equimind.retrieval.dense import dense_search
from equimind.retrieval.fusion import rrf_fuse
from equimind.store.docstore import DocStore, Passage
from equimind.store.local_indexes import FeedView, LocalIndexes
from equimind.store.matrix import ExactVectorIndex
from equimind.store.open import open_docstore
from equimind.store.sparse import BM25Index
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Candidate:
    chunk_id: str
    scores: StageScores


def filter_dict(flt: FilterSpec | None) -> dict[str, Any]:
    """JSON-friendly view of a filter (what SearchResult.filters shows)."""
    if flt is None or flt.is_empty():
        return {}
    out: dict[str, Any] = {}
    for key in ("tickers", "forms", "doc_ids"):
        if getattr(flt, key):
            out[key] = list(getattr(flt, key))
    if flt.sources:
        out["sources"] = [s.value for s in flt.sources]
    if flt.since:
        out["since"] = flt.since.isoformat()
    if flt.until:
        out["until"] = flt.until.isoformat()
    return out


class _Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - t0) * 1000.0, 3)


class HybridSearcher:
    """One ``search()`` over the docstore's indexed chunks; settings are checked here, at construction."""

    def __init__(
        self,
        settings: Settings,
        docstore: DocStore,
        vectors: ChromaVectorStore,
        sparse: BM25Index | LocalIndexes,
        embedder: Embedder,
        reranker: Reranker | None,
        exact_max_rows: int = 100_000,
        text_format: str = PRODUCT_FORMAT.value,
    ) -> None:
        """``sparse``: the BM25 index handle bound to its directory (the searcher keeps it and the exact-search
        matrix beside it in step with the docstore), or a ready ``LocalIndexes``."""
        self.default_mode = self._check_mode(settings.retrieval_mode)
        if exact_max_rows < 0:
            raise ConfigError(f"exact_max_rows must be >= 0, got {exact_max_rows}")
        if isinstance(sparse, BM25Index):
            sparse = LocalIndexes(sparse.root or settings.bm25_path, docstore, vectors, embedder.dim, embedder.name)
        if sparse.dim != embedder.dim:
            raise ConfigError(f"local indexes are for {sparse.dim}-d vectors but embedder {embedder.name} makes "
                              f"{embedder.dim}-d ones; build LocalIndexes with dim=embedder.dim")
        self.settings = settings
        self.docstore = docstore
        self.vectors = vectors
        self.indexes = sparse
        self.embedder = embedder
        self.reranker = reranker
        self.exact_max_rows = exact_max_rows
        self.expected_embedding = EmbeddingStamp(embedder=embedder.name, text_format=parse_format(text_format))
        self._on_demand: dict[str, Vectors] = {}  # vectors of deferred chunks scored on the fly, by chunk id
        self._queries: LRU[str, Vectors] = LRU(QUERY_CACHE)

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder, reranker: Reranker | None) -> HybridSearcher:
        """Open the stores under ``settings.home`` (Chroma server when EQUIMIND_CHROMA_URL is set)."""
        settings.ensure_home()
        docstore = open_docstore(settings)
        vectors = ChromaVectorStore.from_settings(settings)
        return cls(settings, docstore, vectors, BM25Index(settings.bm25_path), embedder, reranker)

    @staticmethod
    def _check_mode(mode: str) -> RetrievalMode:
        if mode not in RETRIEVAL_MODES:
            raise ConfigError(f"unknown retrieval mode {mode!r}; valid modes: {', '.join(RETRIEVAL_MODES)}")
        return RetrievalMode(mode)

    def search(self, query: str, flt: FilterSpec | None = None, mode: str | None = None,
               top_k: int | None = None, sparse_terms: str = "") -> SearchResult:
        """``sparse_terms``: words the BM25 leg searches for besides ``query`` (the line-item words of query shaping);
        when given, the BM25 leg weighs ``rrf_bm25_weight_line_items`` in the fusion."""
        mode = self._check_mode(mode or self.default_mode)
        top_k = self.settings.top_k if top_k is None else top_k
        if top_k <= 0:
            raise ConfigError(f"top_k must be a positive integer, got {top_k}")
        if not query.strip():
            raise ConfigError("the query is empty; pass a question or keywords")
        timer = _Timer()
        with timer.stage("index"):
            pair, refreshed, view = self.indexes.current_view()
        if refreshed and self.indexes.last_refresh_ms is not None:
            log.info("search indexes refreshed in %.0f ms", self.indexes.last_refresh_ms)
        dense: list[tuple[str, float]] = []
        bm25: list[tuple[str, float]] = []
        if mode is not RetrievalMode.BM25:
            with timer.stage("embed"):
                qvec = self._query_vector(query)
            with timer.stage("dense"):
                dense = dense_search(qvec, self.settings.dense_top_k, flt, pair.dense, self.vectors,
                                     self.exact_max_rows).hits
        if mode is not RetrievalMode.DENSE:
            with timer.stage("bm25"):
                bm25 = pair.bm25.search(f"{query} {sparse_terms}".strip(), self.settings.bm25_top_k, flt)
        if dense and bm25 and not pair.dense.fully_embedded:
            with timer.stage("embed_deferred"):
                dense = self._score_unembedded(qvec, dense, bm25, pair.dense)
        with timer.stage("fusion"):
            candidates = self._fuse(mode, dense, bm25, line_items=bool(sparse_terms.strip()))
        with timer.stage("hydrate"):
            rerankable = mode is RetrievalMode.HYBRID_RERANK and self.reranker is not None and self.reranker.available
            need = max(top_k, self.settings.rerank_top_n) if rerankable else top_k
            candidates, passages = self._hydrate(candidates, need)
        degraded: list[Degradation] = (self._embedding_degraded(mode) + deferred_degraded(mode, pair.dense, flt)
                                       + lag_degraded(view))
        if mode is RetrievalMode.HYBRID_RERANK:
            with timer.stage("rerank"):
                candidates = self._rerank(query, candidates, passages, degraded)
        hits = [_hit(rank, passages[c.chunk_id], c.scores) for rank, c in enumerate(candidates[:top_k], 1)]
        return SearchResult(query=query, sparse_terms=sparse_terms, mode=mode, filters=filter_dict(flt), hits=hits,
                            degraded=degraded, timings_ms=timer.ms,
                            feed=FeedPosition(served=view.served, store=view.store, behind=view.behind))

    # ------------------------------------------------------------------ stages
    def _query_vector(self, query: str) -> Vectors:
        """The query's embedding, kept for the process's last ``QUERY_CACHE`` queries: a research run asks the same
        aspect queries every time it runs on a ticker (the embedder is deterministic)."""
        vec = self._queries.get(query)
        if vec is None:
            vec = self.embedder.embed_query(query)
            self._queries.put(query, vec)
        return vec

    def _score_unembedded(self, qvec: Vectors, dense: list[tuple[str, float]], bm25: list[tuple[str, float]],
                          matrix: ExactVectorIndex) -> list[tuple[str, float]]:
        """First-answer indexing left some chunks without a vector: BM25's top ``ON_DEMAND_TOP`` among them are
        embedded now (cached per process) and take their exact place in the dense ranking, so a deferred passage that
        BM25 ranks high is fused on equal terms instead of losing to every dense-only candidate."""
        todo = [cid for cid, _ in bm25[:ON_DEMAND_TOP]
                if (row := matrix.row_of(cid)) is not None and not matrix.has_vec[row]]
        if not todo:
            return dense
        missing = [cid for cid in todo if cid not in self._on_demand]
        if missing:
            chunks = self.docstore.get_chunks(missing)
            ids = [cid for cid in missing if cid in chunks]
            texts = stored_chunk_texts(self.expected_embedding.text_format, [chunks[cid] for cid in ids],
                                       self.docstore)
            if len(self._on_demand) > ON_DEMAND_CACHE:
                self._on_demand.clear()
            self._on_demand.update(zip(ids, self.embedder.embed(texts), strict=True))
        extra = [(cid, float(np.dot(self._on_demand[cid], qvec))) for cid in todo if cid in self._on_demand]
        return sorted([*dense, *extra], key=lambda h: (-h[1], h[0]))[: self.settings.dense_top_k]

    def _fuse(self, mode: RetrievalMode, dense: list[tuple[str, float]],
              bm25: list[tuple[str, float]], *, line_items: bool = False) -> list[_Candidate]:
        """Weighted RRF of the two legs; the BM25 leg weighs ``rrf_bm25_weight_line_items`` instead of
        ``rrf_bm25_weight`` when it also searched for line-item words (``sparse_terms``)."""
        if mode is RetrievalMode.DENSE:
            return [_Candidate(cid, StageScores(dense_rank=r, dense_score=s)) for r, (cid, s) in enumerate(dense, 1)]
        if mode is RetrievalMode.BM25:
            return [_Candidate(cid, StageScores(bm25_rank=r, bm25_score=s)) for r, (cid, s) in enumerate(bm25, 1)]
        dense_score, bm25_score = dict(dense), dict(bm25)
        fused = rrf_fuse([[c for c, _ in dense], [c for c, _ in bm25]], k=self.settings.rrf_k,
                         weights=(self.settings.rrf_dense_weight, self.settings.rrf_bm25_weight_line_items
                                  if line_items else self.settings.rrf_bm25_weight))
        return [
            _Candidate(f.id, StageScores(dense_rank=f.ranks[0], dense_score=dense_score.get(f.id),
                                         bm25_rank=f.ranks[1], bm25_score=bm25_score.get(f.id), rrf_score=f.score))
            for f in fused
        ]

    def _hydrate(self, candidates: list[_Candidate], need: int) -> tuple[list[_Candidate], dict[str, Passage]]:
        """Read the first ``need`` candidates whose document is indexed *now* (defence in depth against a status
        change after the indexes were checked). With ``collapse_parents`` a child whose parent is already held by a
        better-ranked child is skipped: the hits are distinct parent passages, not near-copies of one page."""
        kept: list[_Candidate] = []
        passages: dict[str, Passage] = {}
        parents: set[str] = set()
        collapse = self.settings.collapse_parents
        pos = 0
        while len(kept) < need and pos < len(candidates):
            batch = candidates[pos : pos + need - len(kept)]
            pos += len(batch)
            got = self.docstore.passages([c.chunk_id for c in batch], only_indexed=True)
            for c in batch:
                p = got.get(c.chunk_id)
                if p is None or (collapse and p.chunk.parent_id in parents):
                    continue
                parents.add(p.chunk.parent_id)
                passages[c.chunk_id] = p
                kept.append(c)
        return kept, passages

    def _rerank(self, query: str, candidates: list[_Candidate], passages: dict[str, Passage],
                degraded: list[Degradation]) -> list[_Candidate]:
        head, tail = candidates[: self.settings.rerank_top_n], candidates[self.settings.rerank_top_n :]
        reason = self._rerank_unavailable()
        scores: list[float] = []
        fix: str | None = None
        if reason is None and self.reranker is not None:
            try:
                scores = self.reranker.score(query, [passages[c.chunk_id].chunk.text for c in head])
                if len(scores) != len(head):
                    raise ValueError(f"returned {len(scores)} scores for {len(head)} passages")
            except Exception as exc:
                reason = f"failed: {type(exc).__name__}: {exc}"
                fix = "run `equimind models verify`"
                log.warning("reranker %s failed: %s", self.reranker.name, exc)
        if reason is not None:
            status = f"unavailable ({reason})"
            degraded.append(unavailable_line(self.reranker, reason, fix))
            return [_Candidate(c.chunk_id, c.scores.model_copy(update={"rerank_status": status})) for c in candidates]
        name = self.reranker.name if self.reranker is not None else "reranker"
        scored = [
            _Candidate(c.chunk_id, c.scores.model_copy(update={"rerank_score": s, "rerank_status": f"ok ({name})"}))
            for c, s in zip(head, scores, strict=True)
        ]
        order = sorted(range(len(scored)), key=lambda i: (-scores[i], i))
        rest = [_Candidate(c.chunk_id, c.scores.model_copy(update={"rerank_status": "not reranked (below top_n)"}))
                for c in tail]
        return [scored[i] for i in order] + rest

    def _embedding_degraded(self, mode: RetrievalMode) -> list[Degradation]:
        """A note when the stored vectors were not made the way query vectors are (dense scores are unreliable)."""
        if mode is RetrievalMode.BM25:
            return []
        note = stamp_note(read_stamp(self.docstore), self.expected_embedding)
        return [note] if note is not None else []

    def _rerank_unavailable(self) -> str | None:
        if self.reranker is None:
            return "no reranker configured"
        if not self.reranker.available:
            return self.reranker.unavailable_reason or f"{self.reranker.name} not available"
        return None


QUERY_CACHE = 2048  # query vectors kept per searcher
ON_DEMAND_TOP = 10  # BM25 candidates without a vector that the dense leg scores on the fly
ON_DEMAND_CACHE = 20_000  # on-the-fly vectors kept per process (cleared when exceeded)


def lag_degraded(view: FeedView) -> list[Degradation]:
    """The degraded line of a search served while this host's indexes were still catching up with the store."""
    if not view.behind:
        return []
    return [Degradation(capability="index freshness", reason=(
        f"this host's search indexes are {view.behind} change(s) behind the shared docstore (served from feed "
        f"position {view.served}, store at {view.store}); they are being rebuilt — repeat the search shortly"))]


def deferred_degraded(mode: RetrievalMode, dense: ExactVectorIndex, flt: FilterSpec | None) -> list[Degradation]:
    """The degraded line of a search whose scope holds chunks without a vector yet (first-answer indexing)."""
    if mode is RetrievalMode.BM25 or dense.fully_embedded:
        return []
    scope = dense.meta.mask(flt)
    without = int(np.count_nonzero(~dense.has_vec if scope is None else scope & ~dense.has_vec))
    if not without:
        return []
    total = len(dense) if scope is None else int(np.count_nonzero(scope))
    return [Degradation(capability=CAPABILITY, reason=search_note(without, total))]


def _hit(rank: int, p: Passage, scores: StageScores) -> SearchHit:
    ch = p.chunk
    return SearchHit(rank=rank, chunk_id=ch.id, text=ch.text, start=ch.start, end=ch.end, parent_id=ch.parent_id,
                     parent_text=p.parent_text, parent_start=ch.parent_start, parent_end=ch.parent_end,
                     section=ch.section, page_start=ch.page_start, page_end=ch.page_end, document=p.document,
                     scores=scores)
