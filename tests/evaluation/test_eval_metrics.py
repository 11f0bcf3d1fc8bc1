"""Retrieval metrics, relevance predicates and bootstrap CIs: hand-computed examples, edge cases, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.evaluation.metrics import (
    METRICS,
    EvidencePage,
    Judgement,
    OverlapBasis,
    Span,
    bootstrap_ci,
    dcg,
    doc_page_hits,
    judge_pages,
    judge_spans,
    ndcg_at_k,
    novel_gains,
    page_hits,
    paired_bootstrap_ci,
    per_query,
    recall_any_at_k,
    recall_fraction_at_k,
    reciprocal_rank_at_k,
    score_judgements,
    span_hits,
)

# Ranks 1..4 hit: nothing, gold A, gold A again, gold B. The query has 3 gold items (A, B, C).
EXAMPLE = Judgement.of([set(), {"A"}, {"A"}, {"B"}], n_relevant=3)


# ---------------------------------------------------------------------------------------------------- ranking metrics


def test_recall_any_hand_computed() -> None:
    assert recall_any_at_k(EXAMPLE, 1) == 0.0
    assert recall_any_at_k(EXAMPLE, 2) == 1.0
    assert recall_any_at_k(EXAMPLE, 10) == 1.0


def test_recall_fraction_hand_computed() -> None:
    assert recall_fraction_at_k(EXAMPLE, 1) == 0.0
    assert recall_fraction_at_k(EXAMPLE, 3) == pytest.approx(1 / 3)  # A found twice still counts once
    assert recall_fraction_at_k(EXAMPLE, 4) == pytest.approx(2 / 3)


def test_reciprocal_rank_hand_computed() -> None:
    assert reciprocal_rank_at_k(EXAMPLE, 1) == 0.0
    assert reciprocal_rank_at_k(EXAMPLE, 2) == 0.5
    assert reciprocal_rank_at_k(EXAMPLE, 10) == 0.5
    first = Judgement.of([{"A"}, set()], n_relevant=1)
    assert reciprocal_rank_at_k(first, 5) == 1.0


def test_ndcg_hand_computed() -> None:
    # novel gains [0, 1, 0, 1] -> DCG = 1/log2(3) + 1/log2(5); ideal: 3 hits at ranks 1..3 -> 1 + 1/log2(3) + 1/2
    assert novel_gains(EXAMPLE, 4) == [0, 1, 0, 1]
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 0.5)
    assert ndcg_at_k(EXAMPLE, 4) == pytest.approx(expected)
    assert ndcg_at_k(EXAMPLE, 4) == pytest.approx(0.49819, abs=1e-5)
    # k=2 caps the ideal at 2 hits: DCG = 1/log2(3); IDCG = 1 + 1/log2(3)
    assert ndcg_at_k(EXAMPLE, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_ndcg_perfect_ranking_is_one_and_redundant_hits_do_not_exceed_one() -> None:
    perfect = Judgement.of([{"A"}, {"B"}, set()], n_relevant=2)
    assert ndcg_at_k(perfect, 3) == pytest.approx(1.0)
    redundant = Judgement.of([{"A"}, {"A"}, {"A"}], n_relevant=1)
    assert ndcg_at_k(redundant, 3) == pytest.approx(1.0)


def test_dcg_formula() -> None:
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert dcg([]) == 0.0


def test_nothing_relevant_retrieved_scores_zero_everywhere() -> None:
    miss = Judgement.of([set(), set(), set()], n_relevant=2)
    empty = Judgement.of([], n_relevant=2)
    for j in (miss, empty):
        for fn in METRICS.values():
            assert fn(j, 10) == 0.0


def test_k_larger_than_list_uses_whole_list() -> None:
    for name, fn in METRICS.items():
        assert fn(EXAMPLE, 100) == fn(EXAMPLE, 4), name


def test_query_without_gold_items_is_refused() -> None:
    with pytest.raises(ValueError, match="drop it"):
        Judgement.of([set()], n_relevant=0)


def test_n_relevant_must_cover_every_hit_gold_item() -> None:
    with pytest.raises(ValueError, match="n_relevant"):
        Judgement.of([{"A"}, {"B"}], n_relevant=1)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_k_below_one_rejected(name: str) -> None:
    with pytest.raises(ValueError, match="cut-off"):
        METRICS[name](EXAMPLE, 0)


def test_from_flags_treats_each_relevant_rank_as_a_distinct_item() -> None:
    j = Judgement.from_flags([False, True, True], n_relevant=2)
    assert recall_fraction_at_k(j, 3) == 1.0
    assert ndcg_at_k(j, 3) == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))


def test_per_query_and_score_judgements() -> None:
    other = Judgement.of([{"X"}], n_relevant=1)
    scores = score_judgements([EXAMPLE, other], ks=(1, 4))
    assert set(scores) == {f"{m}@{k}" for m in ("recall_any", "recall_fraction", "mrr", "ndcg") for k in (1, 4)}
    np.testing.assert_allclose(scores["recall_any@1"], [0.0, 1.0])
    np.testing.assert_allclose(scores["mrr@4"], [0.5, 1.0])
    np.testing.assert_allclose(per_query([EXAMPLE, other], recall_fraction_at_k, 4), [2 / 3, 1.0])


_sets = st.frozensets(st.integers(min_value=0, max_value=5), max_size=3)


@st.composite
def judgements(draw: st.DrawFn) -> Judgement:
    matches = draw(st.lists(_sets, max_size=12))
    found = len(frozenset().union(*matches)) if matches else 0
    extra = draw(st.integers(min_value=0, max_value=4))
    return Judgement(tuple(matches), max(1, found + extra))


@settings(max_examples=200, deadline=None)
@given(judgements(), st.integers(min_value=1, max_value=15))
def test_recall_monotone_non_decreasing_in_k(j: Judgement, k: int) -> None:
    assert recall_any_at_k(j, k) <= recall_any_at_k(j, k + 1)
    assert recall_fraction_at_k(j, k) <= recall_fraction_at_k(j, k + 1)
    assert reciprocal_rank_at_k(j, k) <= reciprocal_rank_at_k(j, k + 1)


@settings(max_examples=200, deadline=None)
@given(judgements(), st.integers(min_value=1, max_value=15))
def test_all_metrics_lie_in_unit_interval(j: Judgement, k: int) -> None:
    for fn in METRICS.values():
        assert 0.0 <= fn(j, k) <= 1.0 + 1e-12


# ---------------------------------------------------------------------------------------------- relevance predicates


def test_page_hits_inclusive_range_zero_based() -> None:
    assert page_hits(3, 5, [1, 4, 9]) == {4}
    assert page_hits(3, 5, [3, 5]) == {3, 5}  # both ends inclusive
    assert page_hits(0, 0, [0]) == {0}  # page 0 is a real page
    assert page_hits(6, 8, [5, 9]) == frozenset()
    assert page_hits(7, None, [7]) == {7}
    assert page_hits(None, None, [0, 1]) == frozenset()


def test_page_hits_rejects_reversed_range() -> None:
    with pytest.raises(ValueError, match="reversed"):
        page_hits(5, 3, [4])


def test_doc_page_hits_requires_same_document() -> None:
    evidence = {EvidencePage("10k-2022", 4), EvidencePage("10q-2023", 4)}
    assert doc_page_hits("10k-2022", 3, 5, evidence) == {EvidencePage("10k-2022", 4)}
    assert doc_page_hits("other", 3, 5, evidence) == frozenset()


def test_judge_pages_end_to_end() -> None:
    evidence = [EvidencePage("d", 10), EvidencePage("d", 11)]
    ranked = [("e", 10, 10), ("d", 8, 9), ("d", 11, 12), ("d", 10, 11)]
    j = judge_pages(ranked, evidence)
    assert j.n_relevant == 2
    assert recall_any_at_k(j, 2) == 0.0  # same page number in another document does not count
    assert reciprocal_rank_at_k(j, 4) == pytest.approx(1 / 3)
    assert recall_fraction_at_k(j, 3) == 0.5
    assert recall_fraction_at_k(j, 4) == 1.0


def test_span_overlap_of_one_char_hits_and_adjacent_spans_do_not() -> None:
    gold = [Span("d", 9, 20)]
    assert span_hits(Span("d", 0, 10), gold) == {0}  # shares char 9
    assert span_hits(Span("d", 0, 9), gold) == frozenset()  # [0, 9) and [9, 20) are adjacent, not overlapping
    assert span_hits(Span("other", 0, 10), gold) == frozenset()


def test_span_min_fraction_against_each_basis() -> None:
    retrieved, gold = Span("d", 0, 100), [Span("d", 40, 60)]  # overlap 20 chars = all of gold, 20% of retrieved
    assert span_hits(retrieved, gold, 0.5, OverlapBasis.GOLD) == {0}
    assert span_hits(retrieved, gold, 0.5, OverlapBasis.RETRIEVED) == frozenset()
    assert span_hits(retrieved, gold, 0.5, OverlapBasis.SHORTER) == {0}
    assert span_hits(retrieved, gold, 0.2, OverlapBasis.RETRIEVED) == {0}
    partial = Span("d", 55, 200)  # overlap 5 of the 20 gold chars
    assert span_hits(partial, gold, 0.25, OverlapBasis.GOLD) == {0}
    assert span_hits(partial, gold, 0.26, OverlapBasis.GOLD) == frozenset()


def test_span_validation() -> None:
    with pytest.raises(ValueError, match="start < end"):
        Span("d", 5, 5)
    with pytest.raises(ValueError, match="min_fraction"):
        span_hits(Span("d", 0, 5), [Span("d", 0, 5)], min_fraction=1.5)


def test_judge_spans_counts_each_gold_span_once() -> None:
    gold = [Span("d", 0, 50), Span("d", 100, 150)]
    j = judge_spans([Span("d", 10, 20), Span("d", 30, 40), Span("d", 120, 130)], gold)
    assert j.matches == (frozenset({0}), frozenset({0}), frozenset({1}))
    assert novel_gains(j, 3) == [1, 0, 1]
    assert recall_fraction_at_k(j, 2) == 0.5


# --------------------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_ci_is_reproducible_with_a_seed() -> None:
    x = np.random.default_rng(1).normal(size=80)
    a, b = bootstrap_ci(x, n_resamples=2000, seed=7), bootstrap_ci(x, n_resamples=2000, seed=7)
    assert a == b
    c = bootstrap_ci(x, n_resamples=2000, seed=8)
    assert (c.low, c.high) != (a.low, a.high)
    assert a.low < a.estimate < a.high
    assert a.estimate == pytest.approx(float(x.mean()))
    assert a.n == 80 and a.n_resamples == 2000


def test_bootstrap_ci_agrees_with_scipy_percentile_interval() -> None:
    from scipy.stats import bootstrap

    x = np.random.default_rng(3).exponential(size=200)
    ours = bootstrap_ci(x, n_resamples=10_000, seed=0)
    ref = bootstrap((x,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(0))
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.02)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.02)


def test_constant_scores_give_a_degenerate_interval() -> None:
    ci = bootstrap_ci([0.5] * 10, n_resamples=500)
    assert (ci.low, ci.estimate, ci.high) == (0.5, 0.5, 0.5)


def test_paired_bootstrap_covers_the_true_difference_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(42)
    true_diff, covered, trials = 0.1, 0, 200
    for i in range(trials):
        question_difficulty = rng.normal(size=60)  # shared by both systems: pairing removes it
        a = question_difficulty + true_diff + rng.normal(scale=0.3, size=60)
        b = question_difficulty + rng.normal(scale=0.3, size=60)
        covered += paired_bootstrap_ci(a, b, n_resamples=1000, seed=i).contains(true_diff)
    assert 0.88 <= covered / trials <= 0.99


def test_paired_bootstrap_is_narrower_than_ignoring_the_pairing() -> None:
    rng = np.random.default_rng(5)
    difficulty = rng.normal(size=100)
    a, b = difficulty + 0.2, difficulty + rng.normal(scale=0.1, size=100)
    paired = paired_bootstrap_ci(a, b, n_resamples=2000, seed=0)
    assert paired.estimate == pytest.approx(float(a.mean() - b.mean()))
    assert not paired.contains(0.0)
    alone = bootstrap_ci(a, 2000, 0)
    unpaired_width = (alone.high - alone.low) * math.sqrt(2)  # independent samples: widths add in quadrature
    assert paired.high - paired.low < unpaired_width / 5


def test_paired_bootstrap_validates_inputs() -> None:
    with pytest.raises(ValueError, match="pair the same questions"):
        paired_bootstrap_ci([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([1.0, float("nan")])
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="alpha"):
        bootstrap_ci([1.0, 2.0], alpha=0.0)


def test_bootstrap_batches_large_samples_without_changing_the_count() -> None:
    x = np.random.default_rng(0).normal(size=5000)  # 5000 x 1000 resampled indices: several batches
    ci = bootstrap_ci(x, n_resamples=1000, seed=0)
    assert ci.n_resamples == 1000
    assert ci.contains(float(x.mean()))
    assert ci.high - ci.low == pytest.approx(2 * 1.96 * x.std() / math.sqrt(5000), rel=0.15)
