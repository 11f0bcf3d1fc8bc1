"""Retrieval metrics, relevance predicates and bootstrap confidence intervals. Pure functions over numpy.

One query's retrieved list is judged into a :class:`Judgement`: for every rank, the set of gold items (evidence pages
or gold spans) that the retrieved item hits, plus the number of gold items the query has. Every metric is a function
of a Judgement and a cut-off ``k`` (ranks are 1-based in the formulas, lists are 0-based in code):

* ``recall_any_at_k``      1 if at least one of the top k hits any gold item, else 0. Its mean over queries is the
                           fraction of queries with >= 1 relevant item in the top k (a.k.a. success@k / hit@k; this is
                           the "page-level recall@10" FinanceBench baselines report).
* ``recall_fraction_at_k`` |gold items hit by the top k| / |gold items|  (classic recall; Manning et al. 2008, §8.3).
* ``reciprocal_rank_at_k`` 1 / rank of the first hit within the top k, else 0; its mean is MRR@k (Voorhees 1999).
* ``ndcg_at_k``            binary-relevance nDCG (Järvelin & Kekäläinen 2002):
                           DCG@k = sum_{i=1..k} g_i / log2(i + 1),  IDCG@k = sum_{i=1..min(R, k)} 1 / log2(i + 1),
                           nDCG@k = DCG@k / IDCG@k, with R the number of gold items. g_i = 1 when rank i hits a gold
                           item not already hit at an earlier rank; redundant hits (a second chunk on the same evidence
                           page) earn nothing, so DCG <= IDCG and nDCG lies in [0, 1].

A query with no gold items has undefined recall/nDCG: the Judgement refuses it (drop such queries from the set).

Confidence intervals: non-parametric bootstrap, percentile method (Efron & Tibshirani 1993, *An Introduction to the
Bootstrap*, ch. 13): resample the per-question scores with replacement B times, take the alpha/2 and 1 - alpha/2
quantiles of the resampled means. The paired version resamples question indices once and applies them to both systems
(the paired bootstrap test of IR evaluation, Sakai 2006), so it measures the difference on the same questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.intp]

# ----------------------------------------------------------------------------------------------------------------
# Judgements and ranking metrics


@dataclass(frozen=True)
class Judgement:
    """One query judged: ``matches[i]`` = gold items hit by the item at rank i + 1; ``n_relevant`` = |gold items|."""

    matches: tuple[frozenset[Hashable], ...]
    n_relevant: int

    def __post_init__(self) -> None:
        if self.n_relevant < 1:
            raise ValueError(
                f"n_relevant={self.n_relevant}: a query without gold items has undefined recall/nDCG; "
                "drop it from the evaluation set"
            )
        found = frozenset().union(*self.matches) if self.matches else frozenset()
        if len(found) > self.n_relevant:
            raise ValueError(
                f"the ranking hits {len(found)} distinct gold items but n_relevant={self.n_relevant}; "
                "n_relevant must count every gold item of the query"
            )

    @classmethod
    def of(cls, matches: Iterable[Iterable[Hashable]], n_relevant: int) -> Judgement:
        """Build from any iterables (lists of sets, lists of lists ...)."""
        return cls(tuple(frozenset(m) for m in matches), n_relevant)

    @classmethod
    def from_flags(cls, relevant: Iterable[bool], n_relevant: int) -> Judgement:
        """Build from per-rank binary relevance flags where every retrieved item is a distinct gold item."""
        return cls(tuple(frozenset({i}) if r else frozenset() for i, r in enumerate(relevant)), n_relevant)


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k={k}: the cut-off must be >= 1")


def recall_any_at_k(judgement: Judgement, k: int) -> float:
    """1.0 if any of the top k retrieved items hits a gold item, else 0.0 (mean over queries = success@k)."""
    _check_k(k)
    return 1.0 if any(judgement.matches[:k]) else 0.0


def recall_fraction_at_k(judgement: Judgement, k: int) -> float:
    """Fraction of the query's gold items hit by the top k: |union(matches[:k])| / n_relevant."""
    _check_k(k)
    top = judgement.matches[:k]
    found = frozenset().union(*top) if top else frozenset()
    return len(found) / judgement.n_relevant


def reciprocal_rank_at_k(judgement: Judgement, k: int) -> float:
    """1 / (1-based rank of the first hit within the top k), 0.0 when none of the top k hits (mean = MRR@k)."""
    _check_k(k)
    for i, m in enumerate(judgement.matches[:k]):
        if m:
            return 1.0 / (i + 1)
    return 0.0


def novel_gains(judgement: Judgement, k: int) -> list[int]:
    """Binary gain per rank in the top k: 1 when the item hits a gold item no earlier rank hit, else 0."""
    _check_k(k)
    seen: set[Hashable] = set()
    gains: list[int] = []
    for m in judgement.matches[:k]:
        gains.append(1 if m - seen else 0)
        seen |= m
    return gains


def dcg(gains: Sequence[float]) -> float:
    """DCG = sum_i gains[i] / log2(i + 2) for 0-based i (Järvelin & Kekäläinen 2002, with the log2 discount)."""
    return float(sum(g / math.log2(i + 2) for i, g in enumerate(gains)))


def ndcg_at_k(judgement: Judgement, k: int) -> float:
    """Binary nDCG@k: DCG of the novel gains over the ideal DCG of min(n_relevant, k) hits at the top ranks."""
    _check_k(k)
    ideal = dcg([1.0] * min(judgement.n_relevant, k))
    return dcg(novel_gains(judgement, k)) / ideal


Metric = Callable[[Judgement, int], float]

METRICS: dict[str, Metric] = {
    "recall_any": recall_any_at_k,
    "recall_fraction": recall_fraction_at_k,
    "mrr": reciprocal_rank_at_k,
    "ndcg": ndcg_at_k,
}


def per_query(judgements: Sequence[Judgement], metric: Metric, k: int) -> FloatArray:
    """The metric for every query, in order (the input the bootstrap functions take)."""
    return np.array([metric(j, k) for j in judgements], dtype=np.float64)


def score_judgements(judgements: Sequence[Judgement], ks: Iterable[int] = (1, 5, 10)) -> dict[str, FloatArray]:
    """Per-query scores for every metric in METRICS and every k, keyed ``"<metric>@<k>"`` (e.g. ``"ndcg@10"``)."""
    ks = tuple(ks)
    return {f"{name}@{k}": per_query(judgements, fn, k) for name, fn in METRICS.items() for k in ks}


# ----------------------------------------------------------------------------------------------------------------
# Relevance predicates


@dataclass(frozen=True)
class EvidencePage:
    """A gold evidence page: zero-based ``page`` of document ``doc_id`` (FinanceBench counts pages from 0)."""

    doc_id: str
    page: int


def page_hits(page_start: int | None, page_end: int | None, evidence_pages: Collection[int]) -> frozenset[int]:
    """Evidence pages overlapped by the inclusive page range [page_start, page_end] (zero-based pages).

    An unpaged item (``page_start`` None) hits nothing; ``page_end`` None means a single page.
    """
    if page_start is None:
        return frozenset()
    end = page_start if page_end is None else page_end
    if end < page_start:
        raise ValueError(f"page range [{page_start}, {end}] is reversed; page_end must be >= page_start")
    return frozenset(p for p in evidence_pages if page_start <= p <= end)


def doc_page_hits(
    doc_id: str, page_start: int | None, page_end: int | None, evidence: Collection[EvidencePage]
) -> frozenset[EvidencePage]:
    """Like :func:`page_hits`, but an evidence page only counts when it belongs to the same document."""
    pages = {e.page for e in evidence if e.doc_id == doc_id}
    hit = page_hits(page_start, page_end, pages)
    return frozenset(EvidencePage(doc_id, p) for p in hit)


def judge_pages(
    retrieved: Sequence[tuple[str, int | None, int | None]], evidence: Collection[EvidencePage]
) -> Judgement:
    """Judge a ranked list of (doc_id, page_start, page_end) against the query's evidence pages."""
    gold = frozenset(evidence)
    return Judgement(tuple(doc_page_hits(d, ps, pe, gold) for d, ps, pe in retrieved), len(gold))


@dataclass(frozen=True)
class Span:
    """A character span [start, end) of a document's canonical text."""

    doc_id: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"span [{self.start}, {self.end}) is empty or negative; need 0 <= start < end")

    def __len__(self) -> int:
        return self.end - self.start


class OverlapBasis(StrEnum):
    """What ``min_fraction`` of a span overlap is measured against."""

    GOLD = "gold"  # overlap / len(gold span): how much of the evidence was retrieved
    RETRIEVED = "retrieved"  # overlap / len(retrieved span): how much of the retrieved text is evidence
    SHORTER = "shorter"  # overlap / len(shorter span): 1.0 whenever one span contains the other


def overlap_chars(a: Span, b: Span) -> int:
    """Characters shared by two spans; 0 when they are in different documents or disjoint."""
    if a.doc_id != b.doc_id:
        return 0
    return max(0, min(a.end, b.end) - max(a.start, b.start))


def _basis_length(retrieved: Span, gold: Span, basis: OverlapBasis) -> int:
    if basis is OverlapBasis.GOLD:
        return len(gold)
    if basis is OverlapBasis.RETRIEVED:
        return len(retrieved)
    return min(len(gold), len(retrieved))


def span_hits(
    retrieved: Span,
    gold: Sequence[Span],
    min_fraction: float = 0.0,
    basis: OverlapBasis = OverlapBasis.SHORTER,
) -> frozenset[int]:
    """Indices of the gold spans the retrieved span hits: same document, overlap >= 1 char and
    overlap / len(basis span) >= ``min_fraction`` (0.0 = any overlap counts)."""
    if not 0.0 <= min_fraction <= 1.0:
        raise ValueError(f"min_fraction={min_fraction}: must lie in [0, 1]")
    hit: set[int] = set()
    for i, g in enumerate(gold):
        n = overlap_chars(retrieved, g)
        if n < 1:
            continue
        if n / _basis_length(retrieved, g, basis) >= min_fraction:
            hit.add(i)
    return frozenset(hit)


def judge_spans(
    retrieved: Sequence[Span],
    gold: Sequence[Span],
    min_fraction: float = 0.0,
    basis: OverlapBasis = OverlapBasis.SHORTER,
) -> Judgement:
    """Judge a ranked list of retrieved spans against the query's gold spans (gold items = indices into ``gold``)."""
    return Judgement(tuple(span_hits(r, gold, min_fraction, basis) for r in retrieved), len(gold))


# ----------------------------------------------------------------------------------------------------------------
# Bootstrap confidence intervals

_MAX_CELLS = 2_000_000  # resampled indices held in memory at once (16 MB)


@dataclass(frozen=True)
class BootstrapCI:
    """A point estimate with its (1 - alpha) percentile-bootstrap interval [low, high]."""

    estimate: float
    low: float
    high: float
    alpha: float
    n: int
    n_resamples: int
    method: str = "percentile"

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _as_scores(x: ArrayLike, name: str) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of per-question scores (got shape {arr.shape})")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf; remove undefined questions before bootstrapping")
    return arr


def _check_params(n_resamples: int, alpha: float) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples={n_resamples}: must be >= 1 (10,000 is the usual choice)")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha}: must lie in (0, 1); 0.05 gives a 95% interval")


def bootstrap_rows(
    n: int,
    estimate: float,
    statistic: Callable[[IndexArray], FloatArray],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    alpha: float = 0.05,
) -> BootstrapCI:
    """Generic percentile bootstrap over ``n`` observations.

    ``statistic`` receives a (B, n) matrix of resampled indices (one resample a row) and returns the B resampled
    statistics. Non-finite resampled values (e.g. a correlation of a constant resample) are dropped; the interval
    uses the remaining ones and ``n_resamples`` reports how many that was. Batches bound memory; the result depends
    only on ``seed``.
    """
    _check_params(n_resamples, alpha)
    if n < 1:
        raise ValueError("cannot bootstrap zero observations")
    rng = np.random.default_rng(seed)
    batch = max(1, _MAX_CELLS // n)
    parts: list[FloatArray] = []
    for done in range(0, n_resamples, batch):
        idx = rng.integers(0, n, size=(min(batch, n_resamples - done), n))
        parts.append(np.asarray(statistic(idx), dtype=np.float64))
    stats = np.concatenate(parts)
    stats = stats[np.isfinite(stats)]
    if stats.size == 0:
        raise ValueError("every bootstrap resample gave an undefined statistic; the sample is too small or constant")
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float(estimate), float(low), float(high), alpha, n, int(stats.size))


def bootstrap_ci(x: ArrayLike, n_resamples: int = 10_000, seed: int | None = 0, alpha: float = 0.05) -> BootstrapCI:
    """Mean of ``x`` with its percentile-bootstrap (1 - alpha) CI (Efron & Tibshirani 1993, ch. 13)."""
    arr = _as_scores(x, "x")
    return bootstrap_rows(
        arr.size,
        float(arr.mean()),
        lambda idx: arr[idx].mean(axis=1),
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
    )


def paired_bootstrap_ci(
    a: ArrayLike, b: ArrayLike, n_resamples: int = 10_000, seed: int | None = 0, alpha: float = 0.05
) -> BootstrapCI:
    """mean(a) - mean(b) over the same questions, with a paired percentile-bootstrap CI.

    ``a[i]`` and ``b[i]`` must score the same question i. Each resample draws question indices with replacement
    and recomputes mean(a*) - mean(b*) on them, which is the mean of the resampled per-question differences.
    A CI that excludes 0 means the difference is unlikely to be resampling noise at level alpha.
    """
    arr_a, arr_b = _as_scores(a, "a"), _as_scores(b, "b")
    if arr_a.shape != arr_b.shape:
        raise ValueError(f"a has {arr_a.size} questions and b has {arr_b.size}; pair the same questions in order")
    diff = arr_a - arr_b
    return bootstrap_rows(
        diff.size,
        float(diff.mean()),
        lambda idx: diff[idx].mean(axis=1),
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
    )
