"""The two derived, on-disk search indexes — BM25 and the exact-search vector matrix — kept in step with the docstore.

Layout under ``root`` (``EQUIMIND_HOME/bm25``): the BM25 index itself (``CURRENT`` + ``v-*``; the same directory the
ingest pipeline's ``BM25Index(root)`` saves to) and the matrix in ``root/dense``. Each records the *fingerprint* of
the chunk-id set it was built from.

``current()`` is called on every search. Fast path: the docstore's ``index_stamp()`` (one tiny SELECT) equals the
stamp of the indexes in memory. Otherwise it reads the indexed chunk ids' fingerprint (ids only), reuses whatever
saved index matches it (built by the ingest pipeline or another process), and rebuilds and saves (atomic swap) only
what does not — from one consistent snapshot of the indexed chunks and their vectors read back from the vector store.
So a search never sees chunks of a document that was not indexed in the snapshot the indexes were built from.

Several hosts over one shared docstore (PostgreSQL): each host keeps its own indexes and follows the store's change
feed (``store.feed.FeedFollower`` rebuilds ahead of the searches when the store announces a change). While one
thread rebuilds, the others do not wait: they serve the indexes they have and say how far behind they are
(``FeedView``), so a lagging host is never silently stale.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from equimind.core.documents import Chunk
from equimind.ingest.captions import captioned_texts
from equimind.store.docstore import DocStore
from equimind.store.indexfiles import IndexFormatError, fingerprint
from equimind.store.matrix import ExactVectorIndex, sort_key
from equimind.store.sparse import BM25Index
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger(__name__)


def dense_fingerprint(chunks_fp: str, deferred: Iterable[str]) -> str:
    """The exact-search matrix's fingerprint: the chunk-id set's, plus the deferred documents (first-answer indexing)
    when there are any — completing one changes which rows have a vector without changing the chunk set."""
    ids = sorted(deferred)
    return chunks_fp if not ids else fingerprint([f"chunks:{chunks_fp}", *(f"deferred:{d}" for d in ids)])


@dataclass(frozen=True)
class IndexPair:
    bm25: BM25Index
    dense: ExactVectorIndex
    stamp: str


def stamp_position(stamp: str) -> int:
    """The feed position (generation) an index stamp ``instance:position`` names."""
    try:
        return int(stamp.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return -1


@dataclass(frozen=True)
class FeedView:
    """Which feed position a search was served from, and the store's position when it ran."""

    served: int
    store: int

    @property
    def behind(self) -> int:
        return max(0, self.store - self.served)


class LocalIndexes:
    """BM25 (``root``) and exact matrix (``root/dense``) for the docstore's indexed chunks."""

    def __init__(self, root: Path | str, docstore: DocStore, vectors: ChromaVectorStore, dim: int,
                 embedder: str | None = None, mmap: bool = True) -> None:
        self.root = Path(root)
        self.docstore = docstore
        self.vectors = vectors
        self.dim = dim
        self.embedder = embedder
        self.mmap = mmap
        self._pair: IndexPair | None = None
        self._lock = threading.Lock()
        self.last_refresh_ms: float | None = None
        self.serve_while_rebuilding = False

    def current(self) -> tuple[IndexPair, bool]:
        """The indexes matching the docstore now, and whether they had to be (re)loaded or rebuilt for this call."""
        pair, refreshed, _ = self.current_view()
        return pair, refreshed

    def current_view(self) -> tuple[IndexPair, bool, FeedView]:
        """``current()``, and which feed position the indexes are at against the store's.

        With ``serve_while_rebuilding`` (set by the feed follower), a search that finds another thread rebuilding
        serves the indexes it has instead of waiting, and the view says how far behind they are, unless they miss a
        change this process wrote itself (a research run searching what its fetch just indexed waits for it).
        Without it (one host), it waits for the rebuild, as it always did."""
        stamp = self.docstore.index_stamp()
        pair = self._pair
        if pair is not None and pair.stamp == stamp:
            return pair, False, FeedView(stamp_position(stamp), stamp_position(stamp))
        # another host's change may be served late (and said so); this process's own writes never are
        stale = pair if pair is not None and self.serve_while_rebuilding and \
            stamp_position(pair.stamp) >= self.docstore.own_position else None
        if stale is None:
            self._lock.acquire()
        elif not self._lock.acquire(blocking=False):  # another thread is rebuilding: serve what we have
            return stale, False, FeedView(stamp_position(stale.stamp), stamp_position(stamp))
        try:
            pair = self._pair
            if pair is not None and pair.stamp == stamp:
                return pair, False, FeedView(stamp_position(stamp), stamp_position(stamp))
            t0 = time.perf_counter()
            self._pair = pair = self._refresh()
            self.last_refresh_ms = (time.perf_counter() - t0) * 1000.0
            position = stamp_position(pair.stamp)
            return pair, True, FeedView(position, max(position, stamp_position(stamp)))
        finally:
            self._lock.release()

    @property
    def served_position(self) -> int | None:
        """The feed position of the indexes in memory (None before the first search)."""
        pair = self._pair
        return None if pair is None else stamp_position(pair.stamp)

    def rebuild(self) -> IndexPair:
        """Rebuild both indexes from the docstore now, whatever is on disk."""
        with self._lock:
            stamp, chunks = self._snapshot()
            dfp = dense_fingerprint(fingerprint(c.id for c in chunks), self.docstore.deferred())
            self._pair = IndexPair(self._build_bm25(chunks), self._build_dense(chunks, dfp), stamp)
            return self._pair

    def _refresh(self) -> IndexPair:
        stamp, fp = self.docstore.indexed_fingerprint()
        bm25, dense = self._load_bm25(fp), self._load_dense(dense_fingerprint(fp, self.docstore.deferred()))
        if bm25 is not None and dense is not None:
            return IndexPair(bm25, dense, stamp)
        stamp, chunks = self._snapshot()  # may be newer than the fingerprint read: rebuild what does not match it
        fp = fingerprint(c.id for c in chunks)
        # read after the chunks: a completion in between leaves a matrix that the next stamp change rebuilds
        dfp = dense_fingerprint(fp, self.docstore.deferred())
        bm25 = bm25 if bm25 is not None and bm25.fingerprint == fp else self._build_bm25(chunks)
        dense = dense if dense is not None and dense.fingerprint == dfp else self._build_dense(chunks, dfp)
        return IndexPair(bm25, dense, stamp)

    def _snapshot(self) -> tuple[str, list[Chunk]]:
        stamp, chunks = self.docstore.indexed_snapshot()
        chunks.sort(key=sort_key)  # ticker/date filters then select contiguous rows of the matrix
        return stamp, chunks

    def _load_bm25(self, fp: str) -> BM25Index | None:
        try:
            bm25 = BM25Index.load(self.root, mmap=self.mmap)
        except IndexFormatError as exc:
            log.info("BM25 index not loadable (%s); it will be rebuilt", exc)
            return None
        return bm25 if bm25.fingerprint == fp else None

    def _load_dense(self, fp: str) -> ExactVectorIndex | None:
        try:
            dense = ExactVectorIndex.load(self.root / "dense", mmap=self.mmap)
        except IndexFormatError as exc:
            log.info("vector matrix not loadable (%s); it will be rebuilt", exc)
            return None
        ok = dense.fingerprint == fp and dense.dim == self.dim and dense.embedder == self.embedder
        return dense if ok else None

    def _build_bm25(self, chunks: list[Chunk]) -> BM25Index:
        t0 = time.perf_counter()
        bm25 = BM25Index(self.root).build(chunks, captioned_texts(chunks, self.docstore.get_document))
        bm25.save()
        log.info("rebuilt BM25 over %d chunks in %.1f s", len(chunks), time.perf_counter() - t0)
        return bm25

    def _build_dense(self, chunks: list[Chunk], fp: str) -> ExactVectorIndex:
        t0 = time.perf_counter()
        vecs = self.vectors.get_vectors([c.id for c in chunks])
        dense = ExactVectorIndex.build(chunks, vecs, self.dim, self.embedder, fingerprint_=fp)
        dense.save(self.root / "dense")
        if self.mmap:  # serve from the saved, memory-mapped file (shared page cache, small resident memory)
            try:
                mapped = ExactVectorIndex.load(self.root / "dense", mmap=True)
            except IndexFormatError as exc:  # concurrent writers kept replacing it: serve the in-memory copy
                log.info("could not map the saved vector matrix (%s); serving it from memory", exc)
            else:
                dense = mapped if mapped.fingerprint == dense.fingerprint else dense  # another writer swapped in
        log.info("rebuilt vector matrix over %d chunks in %.1f s", len(chunks), time.perf_counter() - t0)
        return dense
