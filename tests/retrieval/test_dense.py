"""Dense-leg routing: exact over selective filters, HNSW otherwise; every route returns only admitted rows."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from retrieval_corpus import Stores, build_doc

from equimind.core.documents import FilterSpec
from equimind.retrieval.dense import dense_search


def brute(s: Stores, q: np.ndarray, k: int, flt: FilterSpec | None) -> dict[str, float]:
    """Brute-force similarities of every admitted chunk (indexed + passing the filter)."""
    indexed = [c for c in s.chunks if s.docstore.document_status(c.doc_id) == "indexed"]
    chosen = [c for c in indexed if flt is None or flt.matches(c)]
    sims = s.embedder.embed([c.text for c in chosen]) @ q
    return {c.id: float(x) for c, x in zip(chosen, sims, strict=True)}


def assert_is_top_k(hits: list[tuple[str, float]], truth: dict[str, float], k: int) -> None:
    """Same top-k as brute force (ties may be ordered differently): same scores, admitted ids, true scores."""
    best = sorted(truth.values(), reverse=True)[:k]
    assert [s for _, s in hits] == pytest.approx(best, abs=1e-5)
    for cid, sim in hits:
        assert truth[cid] == pytest.approx(sim, abs=1e-5)


@pytest.mark.integration
def test_routes_are_chosen_by_selectivity_and_agree_with_brute_force(stores: Stores) -> None:
    pair, _ = stores.indexes.current()
    q = stores.embedder.embed_query("supply chain wafer output AI accelerators")
    selective = FilterSpec(tickers=("NVDA",), since=date(2023, 1, 1), until=date(2023, 12, 31))
    cases = [
        (selective, 1000, "exact"),
        (selective, 0, "exact"),  # a filter is always exact (issue 15)
        (None, 1000, "exact"),
        (None, 10, "hnsw"),
        (FilterSpec(forms=("10-Q",)), 1000, "exact"),
        (FilterSpec(forms=("10-Q",)), 10, "exact"),
    ]
    for flt, limit, route in cases:
        res = dense_search(q, 5, flt, pair.dense, stores.vectors, exact_max_rows=limit)
        assert res.route == route, (flt, limit)
        assert_is_top_k(res.hits, brute(stores, q, 5, flt), 5)


@pytest.mark.integration
def test_short_hnsw_answer_falls_back_to_exact(fresh_stores: Stores) -> None:
    s = fresh_stores
    # Many pending documents whose vectors sit in Chroma right next to the query crowd HNSW's answer.
    for i in range(8):
        s.ingest(*build_doc(f"P{i}", "8-K", date(2024, 1, 1 + i), ["ai", "ai", "ai", "ai"]), index=False)
    pair, _ = s.indexes.current()
    q = s.embedder.embed_query("P0 data center revenue grew on demand for AI accelerators and GPUs")
    res = dense_search(q, 5, None, pair.dense, s.vectors, exact_max_rows=0)
    assert res.route == "exact-fallback"
    assert_is_top_k(res.hits, brute(s, q, 5, None), 5)
