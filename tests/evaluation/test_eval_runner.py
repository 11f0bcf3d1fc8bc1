"""Arms over judged queries: per-query scores, unavailable rerank, summaries with CIs, paired comparisons."""

from __future__ import annotations

from datetime import date

import pytest

from equimind.core.documents import Chunk, Document, FilterSpec, Origin, Source
from equimind.core.search import DocumentRef, SearchHit, SearchResult, StageScores
from equimind.evaluation.metrics import Judgement
from equimind.evaluation.runner import EvalQuery, compare, evaluate, run_arm, variant_format
from equimind.ingest.embed_format import embed_text_for


def _hit(rank: int, doc: str, start: int) -> SearchHit:
    ref = DocumentRef(doc_id=doc, ticker=None, company=None, form="10-K", filed_at=date(2024, 1, 1),
                      period_end=None, source=Source.LOCAL, origin=Origin.LOCAL_FILE, title=doc, url=None)
    return SearchHit(rank=rank, chunk_id=f"{doc}:{start}", text="t", start=start, end=start + 10, parent_id="p",
                     parent_text="t", parent_start=start, parent_end=start + 10, section=None, page_start=None,
                     page_end=None, document=ref, scores=StageScores())


class FakeSearcher:
    """Returns fixed rankings per (query, mode); the rerank mode degrades like a missing model does."""

    def __init__(self, rankings: dict[tuple[str, str], list[int]], rerank_ok: bool = False) -> None:
        self.rankings = rankings
        self.rerank_ok = rerank_ok
        self.filters: list[FilterSpec | None] = []

    def search(self, query: str, flt: FilterSpec | None = None, mode: str | None = None,
               top_k: int | None = None) -> SearchResult:
        self.filters.append(flt)
        starts = self.rankings.get((query, mode or "hybrid"), [])
        degraded = [] if mode != "hybrid+rerank" or self.rerank_ok else ["rerank: unavailable (model missing)"]
        return SearchResult(query=query, mode=mode or "hybrid", filters={},
                            hits=[_hit(i + 1, "d", s) for i, s in enumerate(starts[: top_k or 10])],
                            degraded=degraded, timings_ms={})


def _judge(gold_start: int):  # type: ignore[no-untyped-def]
    def judge(hits: list[SearchHit]) -> Judgement:
        return Judgement.of([{0} if h.start == gold_start else set() for h in hits], 1)

    return judge


QUERIES = [EvalQuery("q1", "alpha", "t1", FilterSpec(doc_ids=("d",)), _judge(5)),
           EvalQuery("q2", "beta", "t2", None, _judge(7))]
RANKINGS = {("alpha", "dense"): [1, 5], ("beta", "dense"): [2, 3],
            ("alpha", "hybrid"): [5], ("beta", "hybrid"): [9, 9, 7]}


def test_run_arm_scores_each_query_in_order_and_passes_filters() -> None:
    searcher = FakeSearcher(RANKINGS)
    run = run_arm(searcher, QUERIES, "dense")
    assert run.scores["recall_any@10"].tolist() == [1.0, 0.0]
    assert run.scores["mrr@10"].tolist() == [0.5, 0.0]
    assert searcher.filters == [QUERIES[0].flt, None]


def test_rerank_unavailable_is_reported_not_scored() -> None:
    run = run_arm(FakeSearcher(RANKINGS), QUERIES, "hybrid+rerank")
    assert run.unavailable is not None and "unavailable" in run.unavailable
    assert run.scores == {}


def test_evaluate_summarises_and_compares_hybrid_with_dense() -> None:
    summary, runs = evaluate(FakeSearcher(RANKINGS), QUERIES, ("dense", "hybrid", "hybrid+rerank"))
    hybrid = summary["arms"]["hybrid"]["metrics"]["mrr@10"]
    assert hybrid["mean"] == pytest.approx((1.0 + 1 / 3) / 2, abs=1e-4)
    assert hybrid["ci_low"] <= hybrid["mean"] <= hybrid["ci_high"]
    assert summary["arms"]["hybrid+rerank"] == {"unavailable": "rerank: unavailable (model missing)"}
    assert summary["arms"]["dense"]["per_type"]["t1"]["recall_any@10"] == 1.0
    diff = summary["hybrid_vs_dense"]["recall_any@10"]
    assert diff["diff"] == pytest.approx(0.5)
    assert compare(runs["hybrid"], runs["hybrid+rerank"]) is None
    assert summary["per_query_recall@10"][1] == {"id": "q2", "type": "t2", "dense": 0.0, "hybrid": 1.0}


def test_embed_text_variants() -> None:
    assert variant_format("base") == "chunk-text-v0" and variant_format("context") == "title-section-v1"
    chunk = Chunk(id="c", doc_id="d", parent_id="p", start=0, end=5, parent_start=0, parent_end=5, section="Item 7",
                  text="Sales", ticker="T", source=Source.LOCAL, form="10-K", filed_at=0)
    doc = Document(id="d", source_key="k", ticker="T", cik=None, company=None, source=Source.LOCAL,
                   origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=None, url=None, title="T 10-K",
                   text="Sales")
    assert embed_text_for(variant_format("base"))(chunk, doc) == "Sales"
    assert embed_text_for(variant_format("context"))(chunk, doc) == "T 10-K | Item 7\nSales"
    with pytest.raises(ValueError, match="valid"):
        variant_format("nope")


def test_end_to_end_pairs_the_product_run_with_the_plain_rrf_base_run() -> None:
    import numpy as np

    from equimind.evaluation.runner import ArmRun, end_to_end

    def run(recall: list[float]) -> ArmRun:
        x = np.array(recall)
        return ArmRun("hybrid", {"recall_any@10": x, "mrr@10": x / 2, "ndcg@10": x / 3})

    before, after = run([0.0, 0.0, 1.0, 0.0]), run([1.0, 1.0, 1.0, 0.0])
    out = end_to_end({("cells", "shared_parsed"): {"hybrid": after}}, {("base", "shared"): {"bm25=1.0": before}})
    assert out is not None
    assert (out["before_recall@10"], out["after_recall@10"]) == (0.25, 0.75)
    assert out["after_minus_before"]["recall_any@10"]["diff"] == 0.5
    assert end_to_end({}, {("base", "shared"): {"bm25=1.0": before}}) is None
