"""Chroma vector store of child-chunk embeddings (embedded ``PersistentClient`` or a Chroma server).

One collection, no Chroma-side embedding function (we pass vectors), HNSW configured through Chroma 1.x's
``configuration={"hnsw": {...}}`` API (space, max_neighbors = M, ef_construction, ef_search). ``chromadb`` is
imported only when a store is opened.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from equimind.core.config import Settings
from equimind.core.documents import Chunk, FilterSpec, date_to_int
from equimind.core.errors import ConfigError, SourceError
from equimind.core.protocols import Vectors

log = logging.getLogger(__name__)

DEFAULT_COLLECTION = "equimind_chunks"
_SPACES = ("cosine", "l2", "ip")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """chromadb warns "legacy embedding function config" whenever a collection has no embedding function (ours)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="legacy embedding function config", category=DeprecationWarning)
        yield


def chroma_where(flt: FilterSpec | None) -> dict[str, Any] | None:
    """Translate a FilterSpec into a Chroma ``where`` (same semantics as ``FilterSpec.matches``)."""
    if flt is None or flt.is_empty():
        return None
    clauses: list[dict[str, Any]] = []
    for key, values in (
        ("ticker", list(flt.tickers)),
        ("source", [s.value for s in flt.sources]),
        ("form", list(flt.forms)),
        ("doc_id", list(flt.doc_ids)),
    ):
        if values:
            clauses.append({key: {"$in": values}})
    if flt.since:
        clauses.append({"filed_at": {"$gte": date_to_int(flt.since)}})
    if flt.until:
        clauses.append({"filed_at": {"$lte": date_to_int(flt.until)}})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def chunk_metadata(c: Chunk) -> dict[str, str | int]:
    """Metadata stored with each vector (None becomes "" — Chroma metadata values cannot be null)."""
    return {
        "ticker": c.ticker or "",
        "source": c.source.value,
        "form": c.form,
        "filed_at": int(c.filed_at),
        "doc_id": c.doc_id,
        "section": c.section or "",
    }


def distance_to_similarity(distance: float, space: str) -> float:
    """Chroma distance -> similarity in [-1, 1] for unit vectors (cosine: 1-d; ip: 1-d; l2 (squared): 1-d/2)."""
    return 1.0 - distance / 2.0 if space == "l2" else 1.0 - distance


LOCKED_TRIES = 6  # SQLite "database is locked" while Chroma's own writer holds the file: retried, 0.1 s doubling


def _while_locked(call: Callable[[], Any]) -> Any:
    """``call``, retried while Chroma's SQLite reports the database locked (another writer of the same embedded store
    mid-commit, as under a loaded machine); any other error, or the last try's, is raised."""
    for attempt in range(LOCKED_TRIES):
        try:
            return call()
        except Exception as exc:  # chromadb.errors.InternalError carries the SQLite message
            if "database is locked" not in str(exc) or attempt == LOCKED_TRIES - 1:
                raise
            time.sleep(0.1 * 2 ** attempt)
    return None


class ChromaVectorStore:
    """Vectors of child chunks keyed by chunk id, with the filter metadata of ``chunk_metadata``."""

    def __init__(
        self,
        client: Any,
        collection: str = DEFAULT_COLLECTION,
        space: str = "cosine",
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 3200,  # Settings.hnsw_ef_search (ADR 0008: recall@10 0.99 at 1M rows)
    ) -> None:
        if space not in _SPACES:
            raise ConfigError(f"unknown HNSW space {space!r}; valid: {', '.join(_SPACES)}")
        for name, value in (("m", m), ("ef_construction", ef_construction), ("ef_search", ef_search)):
            if value <= 0:
                raise ConfigError(f"HNSW {name} must be a positive integer, got {value}")
        self.space = space
        self._client = client
        wanted = {"space": space, "max_neighbors": m, "ef_construction": ef_construction, "ef_search": ef_search}
        with _quiet():
            self._col = client.get_or_create_collection(
                collection, embedding_function=None, configuration={"hnsw": wanted}
            )
            self._reconcile(wanted)
        self.max_batch = int(client.get_max_batch_size())

    def _reconcile(self, wanted: dict[str, Any]) -> None:
        """An existing collection keeps its build parameters; ef_search can be changed, the rest cannot."""
        have = self.hnsw_config()
        if have.get("space") != wanted["space"]:
            raise ConfigError(
                f"collection {self._col.name} uses space {have.get('space')!r}, settings say {wanted['space']!r}; "
                "use the original space or delete the vector store and reindex"
            )
        if have.get("ef_search") != wanted["ef_search"]:
            _while_locked(lambda: self._col.modify(configuration={"hnsw": {"ef_search": wanted["ef_search"]}}))
            self._col = self._client.get_collection(self._col.name)
        for key in ("max_neighbors", "ef_construction"):
            if have.get(key) != wanted[key]:
                log.warning("collection %s was built with %s=%s (settings: %s); delete it and reindex to change it",
                            self._col.name, key, have.get(key), wanted[key])

    # ------------------------------------------------------------------ constructors
    @staticmethod
    def _hnsw(settings: Settings | None, overrides: dict[str, Any]) -> dict[str, Any]:
        base: dict[str, Any] = {}
        if settings is not None:
            base = {"space": settings.hnsw_space, "m": settings.hnsw_m,
                    "ef_construction": settings.hnsw_ef_construction, "ef_search": settings.hnsw_ef_search}
        return {**base, **overrides}

    @classmethod
    def persistent(cls, path: Path | str, collection: str = DEFAULT_COLLECTION, *, settings: Settings | None = None,
                   **hnsw: Any) -> ChromaVectorStore:
        """Embedded Chroma at ``path``; HNSW parameters from ``settings`` (keyword overrides win)."""
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        Path(path).mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(path=str(path), settings=ChromaSettings(anonymized_telemetry=False))
        return cls(client, collection, **cls._hnsw(settings, hnsw))

    @classmethod
    def http(cls, url: str, collection: str = DEFAULT_COLLECTION, *, settings: Settings | None = None,
             **hnsw: Any) -> ChromaVectorStore:
        """A Chroma server (``EQUIMIND_CHROMA_URL``, e.g. http://localhost:8000)."""
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError(f"EQUIMIND_CHROMA_URL must look like http://host:8000, got {url!r}")
        ssl = parsed.scheme == "https"
        try:
            client = chromadb.HttpClient(host=parsed.hostname, port=parsed.port or (443 if ssl else 8000), ssl=ssl,
                                         settings=ChromaSettings(anonymized_telemetry=False))
        except Exception as exc:
            raise SourceError(
                f"Chroma server at {url} is unreachable ({exc}); start it or unset EQUIMIND_CHROMA_URL"
            ) from exc
        return cls(client, collection, **cls._hnsw(settings, hnsw))

    @classmethod
    def from_settings(cls, settings: Settings, collection: str = DEFAULT_COLLECTION) -> ChromaVectorStore:
        if settings.chroma_url:
            return cls.http(settings.chroma_url, collection, settings=settings)
        return cls.persistent(settings.chroma_path, collection, settings=settings)

    # ------------------------------------------------------------------ API
    @property
    def name(self) -> str:
        return str(self._col.name)

    def hnsw_config(self) -> dict[str, Any]:
        """The HNSW configuration Chroma reports for the collection (read back, not what we asked for)."""
        with _quiet():
            config = self._col.configuration or {}
        return dict(config.get("hnsw") or {})

    def _batches(self, n: int) -> Iterator[slice]:
        for i in range(0, n, self.max_batch):
            yield slice(i, min(n, i + self.max_batch))

    def upsert(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        """Insert or replace vectors by chunk id (idempotent), in batches under Chroma's maximum batch size."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(chunks):
            raise ConfigError(f"got {vectors.shape} vectors for {len(chunks)} chunks; need one row per chunk")
        for s in self._batches(len(chunks)):
            part = chunks[s]
            self._col.upsert(ids=[c.id for c in part], embeddings=vectors[s],
                             metadatas=[chunk_metadata(c) for c in part])

    def query(self, vector: Vectors, k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """HNSW top-k (chunk_id, similarity), best first, among vectors matching the filter (Chroma-side)."""
        if k <= 0:
            raise ConfigError(f"k must be a positive integer, got {k}")
        q = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        res = self._col.query(query_embeddings=q, n_results=k, where=chroma_where(flt), include=["distances"])
        ids, dists = res["ids"][0], (res["distances"] or [[]])[0]
        return [(i, distance_to_similarity(float(d), self.space)) for i, d in zip(ids, dists, strict=True)]

    def count(self) -> int:
        return int(self._col.count())

    def has_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for s in self._batches(len(ids)):
            found.update(self._col.get(ids=list(ids[s]), include=[])["ids"])
        return found

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vectors]:
        """Stored vectors by chunk id (ids that are absent are left out)."""
        out: dict[str, Vectors] = {}
        for s in self._batches(len(ids)):
            res = self._col.get(ids=list(ids[s]), include=["embeddings"])
            for i, e in zip(res["ids"], res["embeddings"], strict=True):
                out[i] = np.asarray(e, dtype=np.float32)
        return out

    def delete_document(self, doc_id: str) -> None:
        self._col.delete(where={"doc_id": doc_id})

    def delete_ids(self, ids: Sequence[str]) -> None:
        for s in self._batches(len(ids)):
            self._col.delete(ids=list(ids[s]))
