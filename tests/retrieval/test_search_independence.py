"""A filtered search is a function of the filtered documents only (issue 15): ingesting other tickers' documents that
use the query's words leaves every hit and every stage score of a filtered search unchanged."""

from __future__ import annotations

from datetime import date

import pytest
from retrieval_corpus import TEXT_FORMAT, Stores, build_doc

from equimind.core.documents import FilterSpec
from equimind.core.search import SearchResult
from equimind.retrieval.search import HybridSearcher

QUERY = "free cash flow funded share repurchases and supply chain"


def _view(res: SearchResult) -> list[tuple[str, object]]:
    return [(h.chunk_id, h.scores.model_dump()) for h in res.hits]


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_unrelated_documents_do_not_move_a_filtered_search(fresh_stores: Stores, mode: str) -> None:
    s = fresh_stores
    searcher = HybridSearcher(s.settings, s.docstore, s.vectors, s.indexes, s.embedder, None,
                              exact_max_rows=0, text_format=TEXT_FORMAT)  # 0: unfiltered searches would use HNSW
    flt = FilterSpec(tickers=("WMT",), until=date(2024, 12, 31))
    before = searcher.search(QUERY, flt, mode=mode, top_k=8)
    unfiltered_before = searcher.search(QUERY, None, mode="bm25", top_k=8)
    for i in range(6):  # other tickers whose filings repeat the query's words (shifting idf and avgdl of the store)
        s.ingest(*build_doc(f"OTH{i}", "10-K", date(2023, 3, 1 + i), ["cash", "cash", "supply", "cash", "debt"]))
    after = searcher.search(QUERY, flt, mode=mode, top_k=8)
    assert before.hits and _view(after) == _view(before)
    unfiltered_after = searcher.search(QUERY, None, mode="bm25", top_k=8)
    assert _view(unfiltered_after) != _view(unfiltered_before)  # the shared-store path still sees everything
