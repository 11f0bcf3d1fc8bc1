"""Documents → chunk → embed → store. Idempotent: ids are content hashes, a re-run changes nothing.

The items come from ``ingest/documents.py`` (the sources' raw filing records, parsed) and ``ingest/collect.py``
(market-data documents); a ``SourceFailure`` among them (defined in ``sources/base.py``) is counted as a failed
document and the batch goes on.

Crash safety: a document is written together with its parents and chunks in one SQLite transaction with status
``pending``; its vectors are upserted (idempotent by chunk id); only then is it marked ``indexed``. A process killed
anywhere in between leaves a ``pending`` document that the next run completes (missing vectors only), so the store
converges to exactly what a clean run produces. The BM25 index is rebuilt from the indexed chunks after a batch that
changed anything and swapped in atomically.

First-answer indexing (``ingest/first_answer.py``): ``run(..., defer=rule)`` embeds only the chunks the rule wants
now, marks the document ``indexed`` (BM25 covers all of its chunks) and records the rest as *deferred*;
``complete_deferred()`` embeds them later (idempotent by chunk id; the record is cleared only after its vectors are
stored, so a crash leaves it for the next call). A later ``run`` without a rule completes a deferred document it meets.

Embedding text: each child is embedded as its ``text_format`` says (``equimind.ingest.embed_format``); the store's
embedding stamp records (embedder, format). An empty store takes the pipeline's stamp before anything is written; a
store stamped otherwise (or a legacy, unstamped one) makes ``run()`` raise ``ConfigError`` before anything is written,
so vectors of two formats are never mixed — ``equimind reindex`` converts the store.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from equimind.core.documents import Chunk, Document, Parent
from equimind.core.errors import ConfigError, EquiMindError
from equimind.core.protocols import Embedder
from equimind.ingest.captions import captioned_texts
from equimind.ingest.embed_format import (
    PRODUCT_FORMAT,
    REINDEX_FIX,
    EmbeddingStamp,
    EmbedFormat,
    embed_text_for,
    mismatch,
    parse_format,
    read_stamp,
)
from equimind.sources.base import SourceFailure

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int | None], None]
"""progress(stage, advance, total): stage is "documents", "chunks" or "embeddings"."""


class _Chunker(Protocol):
    def chunk(self, doc: Document) -> tuple[list[Parent], list[Chunk]]: ...


class DeferRule(Protocol):
    """Which chunks of a new document to embed before the first answer (the others are deferred)."""

    def embed_now(self, doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]: ...


class FailedItem(BaseModel):
    source: str
    error: str


class IngestReport(BaseModel):
    documents_added: int = 0
    documents_completed: int = 0  # pending documents from an interrupted run, finished now
    documents_skipped: int = 0
    documents_deferred: int = 0  # indexed with some vectors left for complete_deferred (first-answer indexing)
    chunks_deferred: int = 0
    documents_failed: list[FailedItem] = Field(default_factory=list)
    chunks_added: int = 0
    chunks_skipped: int = 0
    parents_added: int = 0
    embeddings_computed: int = 0
    bm25_rebuilt: bool = False
    embedder: str = ""
    text_format: str = ""
    timings_s: dict[str, float] = Field(default_factory=dict)

    def merge_timing(self, stage: str, seconds: float) -> None:
        self.timings_s[stage] = round(self.timings_s.get(stage, 0.0) + seconds, 4)


def no_progress(stage: str, advance: int, total: int | None) -> None:
    return None


class IngestPipeline:
    """Stores Documents: chunk, embed, write docstore + vectors, rebuild BM25."""

    def __init__(self, docstore, vectors, sparse, embedder: Embedder, chunker: _Chunker,  # type: ignore[no-untyped-def]
                 *, text_format: str | EmbedFormat = PRODUCT_FORMAT, batch_size: int = 64) -> None:
        if batch_size <= 0:
            raise ValueError("batch_size must be a positive integer")
        self._docstore = docstore
        self._vectors = vectors
        self._sparse = sparse
        self._embedder = embedder
        self._chunker = chunker
        self.text_format = parse_format(text_format)
        self._embed_text = embed_text_for(self.text_format)
        self._batch = batch_size

    @property
    def stamp(self) -> EmbeddingStamp:
        """What this pipeline's vectors are: (embedder name, embedding-text format)."""
        return EmbeddingStamp(embedder=self._embedder.name, text_format=self.text_format)

    def check_store(self) -> None:
        """Stamp an empty store with this pipeline's format; raise ``ConfigError`` (writing nothing) when the store's
        vectors were made another way. A legacy store of the same format is stamped with this embedder."""
        stored = read_stamp(self._docstore)
        wanted = self.stamp
        why = mismatch(stored, wanted)
        if why is not None:
            raise ConfigError(f"the store's embeddings are {why}: ingesting would mix two kinds of vectors; "
                              f"{REINDEX_FIX} to re-embed the store as {wanted.text_format.value} first")
        if stored is None or stored.legacy:
            self._docstore.set_embedding_stamp(wanted.embedder or "", wanted.text_format.value)

    def run(self, items: Iterable[Document | SourceFailure], progress: Progress = no_progress,
            total: int | None = None, *, defer: DeferRule | None = None) -> IngestReport:
        self.check_store()
        report = IngestReport(embedder=self._embedder.name, text_format=self.text_format.value)
        changed = False
        for item in items:
            if isinstance(item, SourceFailure):
                report.documents_failed.append(FailedItem(source=item.source, error=item.error))
                progress("documents", 1, total)
                continue
            try:
                changed |= self._ingest_one(item, report, progress, defer)
            except EquiMindError as exc:
                log.warning("ingest failed for %s: %s", item.title, exc)
                report.documents_failed.append(FailedItem(source=item.source_key, error=str(exc)))
            progress("documents", 1, total)
        if changed or not self._sparse_exists():
            t0 = time.perf_counter()
            self._rebuild_sparse()
            report.bm25_rebuilt = True
            report.merge_timing("bm25", time.perf_counter() - t0)
        return report

    def _sparse_exists(self) -> bool:
        exists = getattr(self._sparse, "exists", None)
        return bool(exists()) if callable(exists) else False

    def _rebuild_sparse(self) -> None:
        chunks = list(self._docstore.iter_chunks(only_indexed=True))
        self._sparse.build(chunks, captioned_texts(chunks, self._docstore.get_document))
        self._sparse.save()

    def _ingest_one(self, doc: Document, report: IngestReport, progress: Progress, defer: DeferRule | None) -> bool:
        status = self._docstore.document_status(doc.id)
        if status == "indexed":
            if defer is None and doc.id in self._docstore.deferred():
                self._complete_one(doc.id, report, progress)
                return False  # the chunk set is unchanged: BM25 needs no rebuild
            report.documents_skipped += 1
            report.chunks_skipped += len(self._docstore.chunks_for_document(doc.id))
            return False
        t0 = time.perf_counter()
        parents, chunks = self._chunker.chunk(doc)
        report.merge_timing("chunk", time.perf_counter() - t0)
        if status is None:
            t0 = time.perf_counter()
            self._docstore.add_document_with_chunks(doc, parents, chunks)
            report.merge_timing("docstore", time.perf_counter() - t0)
            report.documents_added += 1
            report.parents_added += len(parents)
        else:
            report.documents_completed += 1
        progress("chunks", len(chunks), None)
        now = list(chunks) if defer is None else defer.embed_now(doc, chunks)
        self._embed_missing(doc, now, report, progress)
        left = len(chunks) - len(now)
        if left:  # recorded before the document becomes searchable, so it is never indexed-and-silently-partial
            self._docstore.mark_deferred(doc.id, left)
            report.documents_deferred += 1
            report.chunks_deferred += left
        elif status is not None:
            self._docstore.clear_deferred(doc.id)
        self._docstore.set_status(doc.id, "indexed")
        return True

    def complete_deferred(self, tickers: Sequence[str] = (), progress: Progress = no_progress) -> IngestReport:
        """Embed every deferred chunk (of ``tickers`` when given) and clear the records. Idempotent."""
        self.check_store()
        report = IngestReport(embedder=self._embedder.name, text_format=self.text_format.value)
        for doc_id in self._docstore.deferred(tuple(tickers)):
            self._complete_one(doc_id, report, progress)
        return report

    def _complete_one(self, doc_id: str, report: IngestReport, progress: Progress) -> None:
        """Embed a deferred document's missing vectors (the caller has checked the store's stamp)."""
        doc = self._docstore.get_document(doc_id)
        self._embed_missing(doc, self._docstore.chunks_for_document(doc_id), report, progress)
        self._docstore.clear_deferred(doc_id)  # after the vectors: a crash before it leaves the record
        report.documents_completed += 1

    def _embed_missing(self, doc: Document, chunks: Sequence[Chunk], report: IngestReport,
                       progress: Progress) -> None:
        present = self._vectors.has_ids([c.id for c in chunks]) if chunks else set()
        todo = [c for c in chunks if c.id not in present]
        report.chunks_added += len(todo)
        report.chunks_skipped += len(chunks) - len(todo)
        for i in range(0, len(todo), self._batch):
            batch = todo[i:i + self._batch]
            t0 = time.perf_counter()
            vecs = self._embedder.embed([self._embed_text(c, doc) for c in batch])
            report.merge_timing("embed", time.perf_counter() - t0)
            t0 = time.perf_counter()
            self._vectors.upsert(batch, vecs)
            report.merge_timing("vectors", time.perf_counter() - t0)
            report.embeddings_computed += len(batch)
            progress("embeddings", len(batch), None)
