"""LocalIndexes: built once per docstore state, reused from disk when the fingerprints match (e.g. the BM25 index the
ingest pipeline saved), rebuilt only where stale."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from test_docstore import make_doc

from equimind.core.config import Settings
from equimind.core.documents import FilterSpec
from equimind.embedding.embed import HashEmbedder
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore import DocStore
from equimind.store.indexfiles import CURRENT
from equimind.store.local_indexes import LocalIndexes
from equimind.store.sparse import BM25Index
from equimind.store.vectors import ChromaVectorStore


class Home:
    def __init__(self, root: Path) -> None:
        self.settings = Settings(home=root, retrieval_mode="hybrid", hnsw_m=12, hnsw_ef_search=40)
        self.settings.ensure_home()
        self.embedder = HashEmbedder(dim=32)
        self.docstore = DocStore(self.settings.docstore_path)
        self.vectors = ChromaVectorStore.persistent(self.settings.chroma_path, settings=self.settings)

    def ingest(self, n: int, ticker: str = "NVDA") -> None:
        doc, parents, chunks = make_doc(n, ticker, date(2024, 1, n % 28 + 1))
        self.docstore.add_document_with_chunks(doc, parents, chunks)
        self.vectors.upsert(chunks, self.embedder.embed([c.text for c in chunks]))
        self.docstore.set_status(doc.id, "indexed")

    def indexes(self) -> LocalIndexes:
        return LocalIndexes(self.settings.bm25_path, self.docstore, self.vectors, self.embedder.dim,
                            self.embedder.name)

    def pointers(self) -> tuple[str, str]:
        root = self.settings.bm25_path
        return (root / CURRENT).read_text(), (root / "dense" / CURRENT).read_text()


@pytest.fixture()
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    for n in range(3):
        h.ingest(n)
    return h


@pytest.mark.integration
def test_settings_reach_the_vector_store(home: Home) -> None:
    cfg = home.vectors.hnsw_config()
    assert (cfg["max_neighbors"], cfg["ef_search"], cfg["ef_construction"]) == (12, 40, 200)


@pytest.mark.integration
def test_built_once_then_reused_in_memory_and_from_disk(home: Home) -> None:
    ix = home.indexes()
    pair, refreshed = ix.current()
    assert refreshed and len(pair.bm25) == len(pair.dense) == 12
    again, refreshed = ix.current()
    assert again is pair and not refreshed
    before = home.pointers()
    fresh, refreshed = home.indexes().current()  # another process: loads the saved files, builds nothing
    assert refreshed and home.pointers() == before and fresh.dense.fingerprint == pair.dense.fingerprint


@pytest.mark.integration
def test_pipeline_saved_bm25_is_reused_and_only_the_matrix_rebuilt(home: Home) -> None:
    ix = home.indexes()
    ix.current()
    home.ingest(7, "WMT")
    BM25Index(home.settings.bm25_path).build(list(home.docstore.iter_chunks())).save()  # what the pipeline does
    bm25_pointer, dense_pointer = home.pointers()
    pair, refreshed = ix.current()
    assert refreshed
    assert home.pointers()[0] == bm25_pointer and home.pointers()[1] != dense_pointer
    assert len(pair.bm25) == len(pair.dense) == 16
    assert {cid for cid, _ in pair.dense.search(home.embedder.embed_query("w7_3"), 4, FilterSpec(tickers=("WMT",)))}


@pytest.mark.integration
def test_a_changed_embedder_rebuilds_the_matrix(home: Home) -> None:
    home.indexes().current()
    _, dense_pointer = home.pointers()
    other = LocalIndexes(home.settings.bm25_path, home.docstore, home.vectors, 32, "another-model")
    pair, _ = other.current()
    assert home.pointers()[1] != dense_pointer and pair.dense.embedder == "another-model"


@pytest.mark.integration
def test_searcher_accepts_the_bm25_handle_services_build(home: Home) -> None:
    s = HybridSearcher(home.settings, home.docstore, home.vectors, BM25Index(home.settings.bm25_path),
                       home.embedder, None)
    res = s.search("w1_5 w1_6", FilterSpec(tickers=("NVDA",)), top_k=3)
    assert res.hits and "w1_5" in res.hits[0].text
    assert home.docstore.known_tickers() == {"NVDA"}
