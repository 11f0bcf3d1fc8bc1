"""HybridSearcher over real SQLite + Chroma + bm25s with the hash embedder and fake/real rerankers."""

from __future__ import annotations

from datetime import date

import pytest
from retrieval_corpus import TEXT_FORMAT, Stores, build_doc

from equimind.core.config import RETRIEVAL_MODES
from equimind.core.documents import FilterSpec, Source, date_to_int
from equimind.core.errors import ConfigError
from equimind.core.protocols import Reranker
from equimind.core.search import SearchResult
from equimind.embedding.rerank import CrossEncoderReranker, FixedScoreReranker
from equimind.retrieval.search import HybridSearcher


def searcher(s: Stores, reranker: Reranker | None = None, **kw: int) -> HybridSearcher:
    return HybridSearcher(s.settings, s.docstore, s.vectors, s.indexes, s.embedder, reranker, **kw,
                          text_format=TEXT_FORMAT)


def doc_text(s: Stores, doc_id: str) -> str:
    return next(d.text for d in s.docs if d.id == doc_id)


def assert_matches(result: SearchResult, flt: FilterSpec) -> None:
    for hit in result.hits:
        ref = hit.document
        assert not flt.tickers or ref.ticker in flt.tickers
        assert not flt.forms or ref.form in flt.forms
        assert ref.filed_at is not None
        assert not flt.since or ref.filed_at >= flt.since
        assert not flt.until or ref.filed_at <= flt.until


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_each_mode_finds_the_topic_and_fills_its_stage_scores(stores: Stores, mode: str) -> None:
    res = searcher(stores).search("export controls on advanced chips risk", mode=mode, top_k=5)
    assert res.mode == mode and len(res.hits) == 5
    assert "export controls" in res.hits[0].text
    assert [h.rank for h in res.hits] == [1, 2, 3, 4, 5]
    top = res.hits[0].scores
    if mode == "dense":
        assert top.dense_rank == 1 and top.bm25_rank is None and top.rrf_score is None
    elif mode == "bm25":
        assert top.bm25_rank == 1 and top.dense_rank is None and top.bm25_score is not None
    else:
        cfg = stores.settings
        expected = sum(w / (cfg.rrf_k + r) for w, r in ((cfg.rrf_dense_weight, top.dense_rank),
                                                         (cfg.rrf_bm25_weight, top.bm25_rank)) if r is not None)
        assert top.rrf_score == pytest.approx(expected)
        scores = [h.scores.rrf_score or 0.0 for h in res.hits]
        assert scores == sorted(scores, reverse=True)
    assert all(h.scores.rerank_status == "not requested" for h in res.hits)
    assert {"index", "fusion", "hydrate"} <= set(res.timings_ms)


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_filter_applies_in_every_leg(stores: Stores, mode: str) -> None:
    flt = FilterSpec(tickers=("WMT",), since=date(2023, 1, 1), until=date(2023, 12, 31))
    res = searcher(stores).search("AI accelerators revenue and free cash flow", flt, mode=mode, top_k=10)
    assert res.hits, "WMT 2023 documents mention cash flow; something must match"
    assert_matches(res, flt)
    assert res.filters == {"tickers": ["WMT"], "since": "2023-01-01", "until": "2023-12-31"}
    matching = [c for c in stores.chunks if flt.matches(c)]
    assert len(res.hits) <= len(matching)


@pytest.mark.integration
def test_hit_carries_child_parent_spans_section_pages_and_document(stores: Stores) -> None:
    res = searcher(stores).search("free cash flow share repurchases", FilterSpec(tickers=("NVDA",)), top_k=3)
    for hit in res.hits:
        text = doc_text(stores, hit.document.doc_id)
        assert hit.text == text[hit.start : hit.end]
        assert hit.parent_text == text[hit.parent_start : hit.parent_end]
        assert hit.parent_start <= hit.start < hit.end <= hit.parent_end
        assert hit.section in ("Item 1", "Item 7")
        assert hit.page_start in (0, 1)
        assert hit.document.ticker == "NVDA" and hit.document.source is Source.SEC_EDGAR


@pytest.mark.integration
def test_bad_mode_and_empty_query_raise_config_error(stores: Stores) -> None:
    with pytest.raises(ConfigError) as err:
        searcher(stores).search("cash", mode="semantic")
    for valid in RETRIEVAL_MODES:
        assert valid in str(err.value)
    with pytest.raises(ConfigError):
        searcher(stores).search("   ")
    with pytest.raises(ConfigError):
        searcher(stores).search("cash", top_k=0)


@pytest.mark.integration
def test_unavailable_reranker_keeps_rrf_order_and_says_why_everywhere(stores: Stores, tmp_path) -> None:  # type: ignore[no-untyped-def]
    reranker = CrossEncoderReranker(str(tmp_path / "no-such-model"))
    s = searcher(stores, reranker)
    plain = s.search("supply chain wafer output", mode="hybrid", top_k=8)
    res = s.search("supply chain wafer output", mode="hybrid+rerank", top_k=8)
    assert [h.chunk_id for h in res.hits] == [h.chunk_id for h in plain.hits]
    assert reranker.unavailable_reason
    status = f"unavailable ({reranker.unavailable_reason})"
    assert all(h.scores.rerank_status == status and h.scores.rerank_score is None for h in res.hits)
    assert reranker.unavailable_fix and "EQUIMIND_RERANK_MODEL" in reranker.unavailable_fix
    assert [str(d) for d in res.degraded] == [f"rerank: {status} — {reranker.unavailable_fix}"]
    none = searcher(stores, None).search("supply chain", mode="hybrid+rerank")
    assert [str(d) for d in none.degraded] == ["rerank: unavailable (no reranker configured)"]


@pytest.mark.integration
def test_available_reranker_reorders_by_its_scores(stores: Stores) -> None:
    # Prefer WMT passages: a deliberately different order from RRF's.
    fake = FixedScoreReranker(lambda q, t: (2.0 if t.startswith("WMT") else 0.0) + len(t) / 1000.0)
    s = searcher(stores, fake)
    res = s.search("supply chain constraints", mode="hybrid+rerank", top_k=5)
    assert len(fake.calls) == 1 and 5 < fake.calls[0][1] <= stores.settings.rerank_top_n
    scores = [h.scores.rerank_score for h in res.hits]
    assert all(x is not None for x in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert all(h.text.startswith("WMT") for h in res.hits[:3])
    assert all(h.scores.rerank_status == "ok (fixed-score)" for h in res.hits) and not res.degraded
    hybrid = s.search("supply chain constraints", mode="hybrid", top_k=5)
    assert [h.chunk_id for h in hybrid.hits] != [h.chunk_id for h in res.hits]


@pytest.mark.integration
def test_pending_documents_are_invisible_until_indexed(fresh_stores: Stores) -> None:
    s = fresh_stores
    doc, parents, chunks = build_doc("ZZZ", "8-K", date(2024, 3, 1), ["auto", "debt"])
    s.ingest(doc, parents, chunks, index=False)  # vectors are in Chroma, the document is still pending
    search = searcher(s)
    for mode in ("dense", "bm25", "hybrid"):
        res = search.search("ZZZ automotive deliveries", mode=mode, top_k=50)
        assert all(h.document.doc_id != doc.id for h in res.hits)
    s.docstore.set_status(doc.id, "indexed")
    res = search.search("ZZZ automotive deliveries", mode="hybrid", top_k=3)
    assert res.hits[0].document.doc_id == doc.id
    s.docstore.delete_document(doc.id)
    s.vectors.delete_document(doc.id)
    res = search.search("ZZZ automotive deliveries", mode="hybrid", top_k=50)
    assert all(h.document.doc_id != doc.id for h in res.hits)


@pytest.mark.integration
def test_exact_and_hnsw_dense_routes_agree(stores: Stores) -> None:
    flt = FilterSpec(tickers=("MSFT", "TSLA"), since=date(2023, 1, 1))
    exact = searcher(stores, exact_max_rows=10_000).search("cloud AI revenue", flt, mode="dense", top_k=10)
    hnsw = searcher(stores, exact_max_rows=0).search("cloud AI revenue", flt, mode="dense", top_k=10)
    assert len(exact.hits) == len(hnsw.hits) == 10
    for a, b in zip(exact.hits, hnsw.hits, strict=True):  # same ranking up to the order of exact ties
        assert a.scores.dense_score == pytest.approx(b.scores.dense_score, abs=1e-4)
    assert_matches(exact, flt)
    assert all(date_to_int(h.document.filed_at or date.min) >= 20230101 for h in hnsw.hits)


@pytest.mark.integration
def test_empty_store_returns_no_hits(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from equimind.core.config import Settings
    from equimind.embedding.embed import HashEmbedder

    settings = Settings(home=tmp_path / "home", retrieval_mode="hybrid+rerank")
    s = HybridSearcher.open(settings, HashEmbedder(dim=32), FixedScoreReranker({}))
    for mode in RETRIEVAL_MODES:
        res = s.search("anything at all", FilterSpec(tickers=("NVDA",)), mode=mode)
        assert res.hits == [] and res.mode == mode
    assert (settings.bm25_path / "CURRENT").is_file() and (settings.bm25_path / "dense" / "CURRENT").is_file()


@pytest.mark.integration
def test_a_failing_reranker_degrades_visibly(stores: Stores) -> None:
    class Broken(FixedScoreReranker):
        def score(self, query: str, texts):  # type: ignore[no-untyped-def, override]
            return [1.0]  # wrong length

    res = searcher(stores, Broken({})).search("cash flow", mode="hybrid+rerank", top_k=3)
    assert len(res.hits) == 3 and res.degraded and str(res.degraded[0]).startswith("rerank: unavailable (failed:")
    assert all(h.scores.rerank_score is None for h in res.hits)


def _with(s: Stores, **update: object) -> Stores:
    from dataclasses import replace

    return replace(s, settings=s.settings.model_copy(update=update))


@pytest.mark.integration
def test_rrf_leg_weights_change_the_fused_order_and_bm25_only_hits_sink(stores: Stores) -> None:
    query = "export controls on advanced chips risk"
    equal = searcher(stores).search(query, mode="hybrid", top_k=20)
    dense_only = searcher(_with(stores, rrf_bm25_weight=0.0)).search(query, mode="hybrid", top_k=20)
    # with the BM25 leg weighted 0 the fused order is the dense order, and documents only BM25 found come last
    ranked = [h.scores.dense_rank for h in dense_only.hits if h.scores.dense_rank is not None]
    assert ranked == sorted(ranked)
    first_bm25_only = next((i for i, h in enumerate(dense_only.hits) if h.scores.dense_rank is None), None)
    if first_bm25_only is not None:
        assert all(h.scores.dense_rank is None for h in dense_only.hits[first_bm25_only:])
    assert [h.chunk_id for h in equal.hits] != [h.chunk_id for h in dense_only.hits]


def test_rrf_weights_are_validated() -> None:
    from pydantic import ValidationError

    from equimind.core.config import Settings

    with pytest.raises(ValidationError, match="at least one"):
        Settings(rrf_dense_weight=0.0, rrf_bm25_weight=0.0)
    with pytest.raises(ValidationError, match=r"\[0, 10\]"):
        Settings(rrf_bm25_weight=-1.0)


@pytest.mark.integration
def test_collapse_parents_returns_one_child_per_parent(stores: Stores) -> None:
    query = "revenue cash debt supply risk"
    plain = searcher(stores).search(query, mode="hybrid", top_k=30)
    assert len({h.parent_id for h in plain.hits}) < len(plain.hits)  # the corpus has 2 children per parent
    collapsed = searcher(_with(stores, collapse_parents=True)).search(query, mode="hybrid", top_k=10)
    parents = [h.parent_id for h in collapsed.hits]
    assert len(parents) == len(set(parents)) == 10
    # each kept child is the best-ranked child of its parent in the uncollapsed order
    first_of_parent: dict[str, str] = {}
    for h in plain.hits:
        first_of_parent.setdefault(h.parent_id, h.chunk_id)
    assert all(first_of_parent.get(h.parent_id, h.chunk_id) == h.chunk_id for h in collapsed.hits)


@pytest.mark.integration
def test_sparse_terms_reach_the_bm25_leg_only(stores: Stores) -> None:
    s = searcher(stores)
    plain = s.search("zzz", mode="bm25", top_k=5)
    assert plain.hits == []  # no chunk holds the word
    expanded = s.search("zzz", mode="bm25", top_k=5, sparse_terms="export controls")
    assert expanded.hits and "export controls" in expanded.hits[0].text
    assert expanded.sparse_terms == "export controls" and expanded.query == "zzz"
    dense = s.search("zzz", mode="dense", top_k=5)
    dense_expanded = s.search("zzz", mode="dense", top_k=5, sparse_terms="export controls")
    assert [h.chunk_id for h in dense.hits] == [h.chunk_id for h in dense_expanded.hits]


@pytest.mark.integration
def test_the_bm25_leg_weighs_as_much_as_the_dense_leg_when_it_searched_for_line_item_words(stores: Stores) -> None:
    s = searcher(_with(stores, rrf_bm25_weight=0.0, rrf_bm25_weight_line_items=1.0, rrf_k=60))
    query = "export controls on advanced chips risk"
    plain = s.search(query, mode="hybrid", top_k=30)
    with_terms = s.search(query, mode="hybrid", top_k=30, sparse_terms="revenue")
    # no line-item words: the BM25 leg weighs 0, so a hit's fused score is its dense share alone
    assert all(h.scores.rrf_score == pytest.approx(1 / (60 + h.scores.dense_rank) if h.scores.dense_rank else 0.0)
               for h in plain.hits)
    # with them, both legs count alike (plain RRF)
    for h in with_terms.hits:
        want = sum(1 / (60 + r) for r in (h.scores.dense_rank, h.scores.bm25_rank) if r is not None)
        assert h.scores.rrf_score == pytest.approx(want)
    assert any(h.scores.bm25_rank is not None for h in with_terms.hits)
