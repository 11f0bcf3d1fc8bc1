"""Re-embed every stored chunk with the current embedder and embedding-text format (``equimind reindex``).

Order of writes, so that a crash anywhere is repaired by running it again:

1. every chunk of every stored document (indexed and pending: a pending one's vectors must not stay in the old
   format either) is embedded in batches and upserted by chunk id — idempotent, the chunk ids do not change;
2. the exact-search matrix beside the BM25 index is rebuilt from the new vectors (its chunk-id fingerprint is
   unchanged, so without this a searcher would reload the old saved matrix);
3. only then the new embedding stamp is written, in the same transaction as a bump of the docstore's generation,
   so every searcher (in any process) sees a new index stamp and reloads the matrix saved in step 2.

Until step 3 the store keeps its old stamp: ingest refuses to add vectors and search reports the mismatch.
A re-run after a crash re-embeds everything again (upserts overwrite; nothing is duplicated).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from equimind.core.documents import Chunk
from equimind.core.errors import ConfigError
from equimind.core.protocols import Embedder
from equimind.ingest.embed_format import (
    EmbeddingStamp,
    EmbedFormat,
    EmbedText,
    embed_text_for,
    parse_format,
    read_stamp,
)
from equimind.ingest.pipeline import Progress, no_progress
from equimind.store.local_indexes import LocalIndexes

log = logging.getLogger(__name__)


class ReindexReport(BaseModel):
    embedder: str
    text_format: str
    previous: dict[str, Any] | None = None  # the stamp before (None: the store was empty)
    reindexed: bool = False  # False when the store was already stamped this way (and not forced) or empty
    documents: int = 0
    chunks: int = 0
    seconds: float = 0.0
    timings_s: dict[str, float] = Field(default_factory=dict)

    def merge_timing(self, stage: str, seconds: float) -> None:
        self.timings_s[stage] = round(self.timings_s.get(stage, 0.0) + seconds, 4)


class Reindexer:
    """Re-embeds a store (docstore + vector store + the local indexes under ``index_root``) as ``text_format``."""

    def __init__(self, docstore, vectors, embedder: Embedder, index_root: Path | str,  # type: ignore[no-untyped-def]
                 *, text_format: str | EmbedFormat, batch_size: int = 64) -> None:
        if batch_size <= 0:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size}")
        self._docstore = docstore
        self._vectors = vectors
        self._embedder = embedder
        self._root = Path(index_root)
        self.text_format = parse_format(text_format)
        self._embed_text: EmbedText = embed_text_for(self.text_format)
        self._batch = batch_size

    def run(self, progress: Progress = no_progress, *, force: bool = False) -> ReindexReport:
        """Re-embed every chunk unless the store is empty or already stamped this way (``force`` re-embeds anyway)."""
        t_start = time.perf_counter()
        wanted = EmbeddingStamp(embedder=self._embedder.name, text_format=self.text_format)
        previous = read_stamp(self._docstore)
        report = ReindexReport(embedder=wanted.embedder or "", text_format=self.text_format.value,
                               previous=previous.as_dict() if previous is not None else None)
        if previous is None or (previous == wanted and not force):
            if previous is None:  # nothing stored: the first ingest will embed this way
                self._docstore.set_embedding_stamp(report.embedder, report.text_format)
            log.info("reindex: nothing to do (store %s)", "empty" if previous is None else "already up to date")
            return report
        self._check_dim()
        docs = self._docstore.list_documents()
        total = int(self._docstore.counts()["chunks"])
        pending: list[tuple[Chunk, str]] = []
        for ref in docs:
            doc = self._docstore.get_document(ref.doc_id)
            pending.extend((c, self._embed_text(c, doc)) for c in self._docstore.chunks_for_document(doc.id))
            while len(pending) >= self._batch:
                self._flush(pending[: self._batch], report, progress, total)
                del pending[: self._batch]
            report.documents += 1
            progress("documents", 1, len(docs))
        if pending:
            self._flush(pending, report, progress, total)
        self._rebuild_indexes(report)
        self._docstore.set_embedding_stamp(report.embedder, report.text_format, bump_generation=True)
        report.reindexed = True
        report.seconds = round(time.perf_counter() - t_start, 3)
        log.info("reindexed %d chunks of %d documents as %s (%s) in %.1f s", report.chunks, report.documents,
                 report.text_format, report.embedder, report.seconds)
        return report

    def _check_dim(self) -> None:
        """A different-size embedder cannot upsert into the existing collection: say how to start it afresh."""
        first = next(iter(self._docstore.iter_chunks(only_indexed=False)), None)
        if first is None:
            return
        got = self._vectors.get_vectors([first.id]).get(first.id)
        if got is not None and len(got) != self._embedder.dim:
            raise ConfigError(
                f"the vector store holds {len(got)}-d vectors but embedder {self._embedder.name} makes "
                f"{self._embedder.dim}-d ones; delete the vector store (EQUIMIND_HOME/chroma_db) and run "
                "`equimind reindex` again: it re-embeds every chunk from the docstore")

    def _flush(self, batch: list[tuple[Chunk, str]], report: ReindexReport, progress: Progress, total: int) -> None:
        t0 = time.perf_counter()
        vecs = self._embedder.embed([text for _, text in batch])
        report.merge_timing("embed", time.perf_counter() - t0)
        t0 = time.perf_counter()
        self._vectors.upsert([c for c, _ in batch], vecs)
        report.merge_timing("vectors", time.perf_counter() - t0)
        report.chunks += len(batch)
        progress("embeddings", len(batch), total)

    def _rebuild_indexes(self, report: ReindexReport) -> None:
        t0 = time.perf_counter()
        LocalIndexes(self._root, self._docstore, self._vectors, self._embedder.dim, self._embedder.name).rebuild()
        report.merge_timing("indexes", time.perf_counter() - t0)

