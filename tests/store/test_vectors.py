"""ChromaVectorStore against real Chroma: each test runs on the embedded backend (temp dir) and on a Chroma server
(``vector_backend`` in conftest.py)."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from store_backends import VectorBackend

from equimind.core.documents import Chunk, FilterSpec, Source
from equimind.core.errors import ConfigError
from equimind.store.vectors import ChromaVectorStore, chroma_where


def chunks_and_vectors(n: int = 24) -> tuple[list[Chunk], np.ndarray]:
    rng = np.random.default_rng(3)
    tickers = ["NVDA", "WMT", None]
    out = []
    for i in range(n):
        out.append(Chunk(id=f"c{i:02d}", doc_id=f"d{i % 6}", parent_id="p", start=i, end=i + 1, parent_start=0,
                         parent_end=9, section=None if i % 2 else "Item 1A", text="t", ticker=tickers[i % 3],
                         source=Source.SEC_EDGAR if i % 4 else Source.YAHOO_FINANCE,
                         form=("10-K", "10-Q", "8-K")[i % 3 if i % 5 else 0], filed_at=20220101 + (i % 3) * 10000))
    vecs = rng.standard_normal((n, 8)).astype(np.float32)
    return out, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


@pytest.fixture()
def store(vector_backend: VectorBackend) -> ChromaVectorStore:
    return vector_backend.open("test_chunks", m=16, ef_construction=200, ef_search=50)


@pytest.mark.integration
def test_hnsw_configuration_is_applied_and_read_back(vector_backend: VectorBackend) -> None:
    store = vector_backend.open("cfg_test", m=12, ef_construction=150, ef_search=40)
    cfg = store.hnsw_config()
    assert (cfg["space"], cfg["max_neighbors"], cfg["ef_construction"], cfg["ef_search"]) == ("cosine", 12, 150, 40)
    reopened = vector_backend.open("cfg_test", m=12, ef_construction=150, ef_search=90)
    assert reopened.hnsw_config()["ef_search"] == 90  # ef_search is changeable after creation
    assert reopened.hnsw_config()["max_neighbors"] == 12
    with pytest.raises(ConfigError, match="space"):
        vector_backend.open("cfg_test", space="l2")
    with pytest.raises(ConfigError, match="valid"):
        vector_backend.open("cfg_test", space="manhattan")


@pytest.mark.integration
def test_upsert_is_idempotent_batched_and_queryable(store: ChromaVectorStore) -> None:
    chunks, vecs = chunks_and_vectors()
    store.max_batch = 7  # force several batches
    store.upsert(chunks, vecs)
    store.upsert(chunks, vecs)
    assert store.count() == len(chunks)
    assert store.has_ids(["c00", "c23", "zz"]) == {"c00", "c23"}
    top = store.query(vecs[4], 3)
    assert top[0][0] == "c04" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    got = store.get_vectors(["c05", "zz"])
    assert set(got) == {"c05"} and np.allclose(got["c05"], vecs[5], atol=1e-6)
    with pytest.raises(ConfigError):
        store.upsert(chunks, vecs[:3])
    with pytest.raises(ConfigError):
        store.query(vecs[0], 0)


@pytest.mark.integration
@pytest.mark.parametrize("flt", [
    FilterSpec(tickers=("NVDA",)),
    FilterSpec(tickers=("",)),
    FilterSpec(since=date(2023, 1, 1)),
    FilterSpec(until=date(2022, 12, 31)),
    FilterSpec(tickers=("NVDA", "WMT"), since=date(2022, 6, 1), until=date(2023, 12, 31)),
    FilterSpec(sources=(Source.YAHOO_FINANCE,)),
    FilterSpec(forms=("10-K",), doc_ids=("d0", "d3")),
])
def test_filter_semantics_match_the_reference(store: ChromaVectorStore, flt: FilterSpec) -> None:
    chunks, vecs = chunks_and_vectors()
    store.upsert(chunks, vecs)
    got = {cid for cid, _ in store.query(vecs[0], len(chunks), flt)}
    assert got == {c.id for c in chunks if flt.matches(c)}


@pytest.mark.integration
def test_delete_document(store: ChromaVectorStore) -> None:
    chunks, vecs = chunks_and_vectors()
    store.upsert(chunks, vecs)
    store.delete_document("d1")
    assert store.count() == len(chunks) - sum(c.doc_id == "d1" for c in chunks)
    assert not store.has_ids([c.id for c in chunks if c.doc_id == "d1"])


def test_where_translation() -> None:
    assert chroma_where(None) is None and chroma_where(FilterSpec()) is None
    assert chroma_where(FilterSpec(tickers=("A",))) == {"ticker": {"$in": ["A"]}}
    assert chroma_where(FilterSpec(forms=("10-K",), since=date(2024, 1, 2))) == {
        "$and": [{"form": {"$in": ["10-K"]}}, {"filed_at": {"$gte": 20240102}}]
    }


def test_http_url_is_validated() -> None:
    with pytest.raises(ConfigError, match="http://host"):
        ChromaVectorStore.http("localhost:8000")


def test_a_locked_database_is_retried_and_other_errors_are_not() -> None:
    from equimind.store import vectors

    calls: list[int] = []

    def locked_twice() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("Database error: error returned from database: (code: 5) database is locked")
        return "done"

    assert vectors._while_locked(locked_twice) == "done" and len(calls) == 3

    def broken() -> None:
        calls.append(1)
        raise RuntimeError("Error finding id")

    calls.clear()
    with pytest.raises(RuntimeError, match="finding id"):
        vectors._while_locked(broken)
    assert len(calls) == 1


def test_a_database_locked_on_every_try_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    from equimind.store import vectors

    monkeypatch.setattr(vectors.time, "sleep", lambda s: None)
    calls: list[int] = []

    def always() -> None:
        calls.append(1)
        raise RuntimeError("database is locked")

    with pytest.raises(RuntimeError, match="locked"):
        vectors._while_locked(always)
    assert len(calls) == vectors.LOCKED_TRIES
