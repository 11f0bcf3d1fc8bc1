"""Settings choose the vector backend (embedded directory, or the Chroma server at ``chroma_url``), and a hybrid
search over a pipeline-ingested corpus gives the same answers on both."""

from __future__ import annotations

from datetime import date

import pytest
from ingest_corpus import (
    EMBED_DIM,
    TICKERS,
    HitChecker,
    chunker,
    expected_chunks,
    make_documents,
    open_searcher,
    pipeline,
)
from store_backends import VectorBackend

from equimind.core.documents import FilterSpec
from equimind.core.search import SearchResult
from equimind.embedding.embed import HashEmbedder
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore import DocStore
from equimind.store.vectors import ChromaVectorStore

N_DOCS = 12
QUERY = "export controls risk for advanced chips"
FLT = FilterSpec(tickers=(TICKERS[0], TICKERS[1]), since=date(2022, 6, 1), until=date(2024, 6, 30))


def ingested(backend: VectorBackend) -> tuple[HybridSearcher, HitChecker]:
    settings = backend.settings(retrieval_mode="hybrid")
    settings.ensure_home()
    docstore = DocStore(settings.docstore_path)
    vectors = backend.from_settings(settings)
    docs = make_documents(N_DOCS, seed=3)
    report = pipeline(docstore, vectors, settings.bm25_path).run(docs)
    assert report.documents_added == N_DOCS and not report.documents_failed
    return open_searcher(settings, docstore, vectors), HitChecker(docstore, vectors, expected_chunks(docs))


def ranked(result: SearchResult) -> list[str]:
    return [h.chunk_id for h in result.hits]


@pytest.mark.integration
def test_settings_select_the_backend(vector_backend: VectorBackend) -> None:
    settings = vector_backend.settings()
    settings.ensure_home()
    store = vector_backend.from_settings(settings, "selected")
    docs = make_documents(1)
    chunks = chunker().chunk(docs[0])[1]
    store.upsert(chunks, HashEmbedder(EMBED_DIM).embed([c.text for c in chunks]))
    if vector_backend.is_server:
        assert not settings.chroma_path.exists(), "server mode must not write an embedded Chroma directory"
        assert vector_backend.url is not None
        other = ChromaVectorStore.http(vector_backend.url, store.name)  # another client sees the same collection
    else:
        assert settings.chroma_path.is_dir()
        other = ChromaVectorStore.persistent(settings.chroma_path, store.name)
    assert other.count() == len(chunks)


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_filtered_search_returns_only_fully_indexed_matching_hits(vector_backend: VectorBackend, mode: str) -> None:
    searcher, checker = ingested(vector_backend)
    res = searcher.search(QUERY, FLT, mode=mode, top_k=8)
    assert res.hits
    assert checker.violations(res, FLT) == []
    assert all(FLT.since and FLT.until and h.document.filed_at and FLT.since <= h.document.filed_at <= FLT.until
               for h in res.hits)


@pytest.mark.integration
def test_embedded_and_server_give_the_same_results(chroma_server_url: str, tmp_path_factory: pytest.TempPathFactory,
                                                   ) -> None:
    embedded = VectorBackend("embedded", tmp_path_factory.mktemp("embedded"))
    server = VectorBackend("server", tmp_path_factory.mktemp("server"), chroma_server_url)
    try:
        (a, _), (b, _) = ingested(embedded), ingested(server)
        for mode in ("dense", "bm25", "hybrid"):
            for flt in (None, FLT):
                assert ranked(a.search(QUERY, flt, mode=mode)) == ranked(b.search(QUERY, flt, mode=mode)), (mode, flt)
        # HNSW through Chroma itself (exact search disabled): the same neighbours from both backends
        a.exact_max_rows = b.exact_max_rows = 0
        assert set(ranked(a.search(QUERY, mode="dense", top_k=5))) == set(ranked(b.search(QUERY, mode="dense",
                                                                                          top_k=5)))
    finally:
        server.drop_collections()
