"""Run retrieval arms over a set of judged queries and summarise them with bootstrap CIs.

An *arm* is a retrieval mode of :class:`~equimind.retrieval.search.HybridSearcher` (``dense | bm25 | hybrid |
hybrid+rerank``). Every arm sees the same queries in the same order, so two arms can be compared with the paired
bootstrap (:func:`~equimind.evaluation.metrics.paired_bootstrap_ci`). An arm whose stage is unavailable (the
reranker model is absent) is reported as unavailable with the reason, never scored as if it had run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from equimind.app.services import open_services
from equimind.core.config import Settings
from equimind.core.documents import Document, FilterSpec
from equimind.core.search import SearchHit, SearchResult
from equimind.evaluation.metrics import Judgement, bootstrap_ci, paired_bootstrap_ci, score_judgements
from equimind.ingest.embed_format import PRODUCT_FORMAT, EmbeddingStamp, mismatch, parse_format, read_stamp
from equimind.retrieval.search import HybridSearcher

if TYPE_CHECKING:
    from equimind.app.services import Services
    from equimind.core.protocols import Embedder, Reranker, Tokenizer
    from equimind.sources.base import SourceFailure

log = logging.getLogger(__name__)

ARMS: tuple[str, ...] = ("dense", "bm25", "hybrid", "hybrid+rerank")
HEADLINE: tuple[str, ...] = ("recall_any@10", "mrr@10", "ndcg@10")
KS: tuple[int, ...] = (1, 5, 10)


class Searcher(Protocol):
    def search(self, query: str, flt: FilterSpec | None = None, mode: str | None = None,
               top_k: int | None = None) -> SearchResult: ...


@dataclass(frozen=True)
class EvalQuery:
    """A question, its type (for per-type tables), the filter it is searched with, and its judge."""

    id: str
    text: str
    qtype: str
    flt: FilterSpec | None
    judge: Callable[[list[SearchHit]], Judgement]


@dataclass
class ArmRun:
    """Per-query scores of one arm ("<metric>@<k>" -> array in query order), or why it did not run."""

    arm: str
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    unavailable: str | None = None
    mean_latency_ms: float | None = None


def run_arm(searcher: Searcher, queries: Sequence[EvalQuery], arm: str, k: int = 10) -> ArmRun:
    """Search every query with ``arm`` and judge the top k."""
    judgements: list[Judgement] = []
    wall = 0.0
    for q in queries:
        t0 = time.perf_counter()
        res = searcher.search(q.text, q.flt, mode=arm, top_k=k)
        wall += time.perf_counter() - t0
        rerank = [str(d) for d in res.degraded if d.capability == "rerank"]
        if arm == "hybrid+rerank" and rerank:
            return ArmRun(arm, unavailable=rerank[0])
        judgements.append(q.judge(list(res.hits)))
    latency = round(1000.0 * wall / max(1, len(queries)), 2)
    return ArmRun(arm, score_judgements(judgements, KS), mean_latency_ms=latency)


def _mean_ci(x: np.ndarray, seed: int) -> dict[str, float]:
    ci = bootstrap_ci(x, n_resamples=10_000, seed=seed)
    return {"mean": round(ci.estimate, 4), "ci_low": round(ci.low, 4), "ci_high": round(ci.high, 4)}


def summarise(run: ArmRun, qtypes: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """Means with 95% bootstrap CIs for every metric, plus per-question-type means of the headline metrics."""
    if run.unavailable is not None:
        return {"unavailable": run.unavailable}
    out: dict[str, Any] = {"n": len(qtypes), "mean_latency_ms": run.mean_latency_ms,
                           "metrics": {name: _mean_ci(v, seed) for name, v in sorted(run.scores.items())}}
    types = np.array(qtypes)
    per_type: dict[str, Any] = {}
    for t in sorted(set(qtypes)):
        mask = types == t
        per_type[t] = {"n": int(mask.sum()),
                       **{m: round(float(run.scores[m][mask].mean()), 4) for m in HEADLINE}}
    out["per_type"] = per_type
    return out


def compare(a: ArmRun, b: ArmRun, metrics: Sequence[str] = HEADLINE, seed: int = 0) -> dict[str, Any] | None:
    """Paired bootstrap 95% CI of mean(a) - mean(b) per metric (None when either arm did not run)."""
    if a.unavailable or b.unavailable:
        return None
    out: dict[str, Any] = {}
    for m in metrics:
        ci = paired_bootstrap_ci(a.scores[m], b.scores[m], n_resamples=10_000, seed=seed)
        out[m] = {"diff": round(ci.estimate, 4), "ci_low": round(ci.low, 4), "ci_high": round(ci.high, 4)}
    return out


def per_query_table(runs: Sequence[ArmRun], queries: Sequence[EvalQuery], metric: str = "recall_any@10"
                    ) -> list[dict[str, Any]]:
    """Per-question scores of every arm that ran (for error analysis and for pairing across result files)."""
    rows: list[dict[str, Any]] = []
    for i, q in enumerate(queries):
        row: dict[str, Any] = {"id": q.id, "type": q.qtype}
        for r in runs:
            if r.unavailable is None:
                row[r.arm] = float(r.scores[metric][i])
        rows.append(row)
    return rows


def evaluate(searcher: Searcher, queries: Sequence[EvalQuery], arms: Sequence[str] = ARMS, k: int = 10,
             seed: int = 0) -> tuple[dict[str, Any], dict[str, ArmRun]]:
    """All arms over the queries: (JSON-ready summary, raw runs keyed by arm)."""
    runs = {arm: run_arm(searcher, queries, arm, k) for arm in arms}
    qtypes = [q.qtype for q in queries]
    summary: dict[str, Any] = {"n_questions": len(queries),
                               "arms": {arm: summarise(r, qtypes, seed) for arm, r in runs.items()}}
    if "hybrid" in runs and "dense" in runs:
        summary["hybrid_vs_dense"] = compare(runs["hybrid"], runs["dense"], seed=seed)
    summary["per_query_recall@10"] = per_query_table(list(runs.values()), queries)
    return summary, runs


SWEEP: dict[str, dict[str, Any]] = {
    "bm25=1.0": {"rrf_bm25_weight": 1.0},  # plain RRF
    "bm25=0.5": {"rrf_bm25_weight": 0.5},
    "bm25=0.3": {"rrf_bm25_weight": 0.3},
    "bm25=0.3, one child per parent": {"rrf_bm25_weight": 0.3, "collapse_parents": True},
}
"""Search settings the harness re-runs ``hybrid`` with (dense weight 1.0 throughout)."""


def fusion_sweep(services: Services, queries: Sequence[EvalQuery], hybrid: ArmRun,
                 sweep: dict[str, dict[str, Any]] | None = None, seed: int = 0,
                 keep: dict[str, ArmRun] | None = None) -> dict[str, Any]:
    """``hybrid`` re-run under each setting override, each compared (paired) with ``hybrid`` as configured.
    ``keep`` receives the raw runs by sweep name (for end-to-end comparisons)."""

    base = services.settings
    out: dict[str, Any] = {"configured": {"dense": base.rrf_dense_weight, "bm25": base.rrf_bm25_weight,
                                          "collapse_parents": base.collapse_parents}, "arms": {}}
    for name, update in (SWEEP if sweep is None else sweep).items():
        searcher = HybridSearcher(base.model_copy(update=update), services.docstore, services.vectors,
                                  services.sparse, services.embedder, None, text_format=services.text_format)
        run = run_arm(searcher, queries, "hybrid")
        if keep is not None:
            keep[name] = run
        out["arms"][name] = {"summary": summarise(run, [q.qtype for q in queries], seed),
                             "configured_minus_this": compare(hybrid, run, seed=seed)}
    return out


def end_to_end(runs: dict[tuple[str, str], dict[str, ArmRun]], sweeps: dict[tuple[str, str], dict[str, ArmRun]],
               seed: int = 0) -> dict[str, Any] | None:
    """What the product searches now (product-format store, parsed filter, hybrid as configured) vs where it started
    (base store, no filter, plain RRF), paired over the same questions; None when either run is missing."""
    after = runs.get((product_variant(), "shared_parsed"), {}).get("hybrid")
    before = sweeps.get(("base", "shared"), {}).get("bm25=1.0")
    diff = compare(after, before, seed=seed) if after is not None and before is not None else None
    if diff is None or after is None or before is None:
        return None
    return {"before": "base store, shared, no filter, hybrid with plain RRF (BM25 weight 1.0)",
            "after": f"{product_variant()} store, shared + filter parsed from the question, hybrid as configured",
            "before_recall@10": round(float(before.scores["recall_any@10"].mean()), 4),
            "after_recall@10": round(float(after.scores["recall_any@10"].mean()), 4), "after_minus_before": diff}


def cross_comparisons(runs: dict[tuple[str, str], dict[str, ArmRun]], sweeps: dict[tuple[str, str], dict[str, ArmRun]],
                      variants: Sequence[str], arms: Sequence[str]) -> dict[str, Any]:
    """Paired comparisons across (variant, setting) blocks: each variant vs ``base``, parsed filter vs none, and the
    end-to-end product vs starting point."""
    return {
        "variant_vs_base": {f"{v}/{s}/{arm}": compare(runs[(v, s)][arm], runs[("base", s)][arm])
                            for (v, s) in runs if v != "base" and ("base", s) in runs for arm in arms},
        "end_to_end": end_to_end(runs, sweeps),
        "parsed_vs_shared": {f"{v}/{arm}": compare(runs[(v, "shared_parsed")][arm], runs[(v, "shared")][arm])
                             for v in variants if (v, "shared_parsed") in runs and (v, "shared") in runs
                             for arm in arms},
    }


# ----------------------------------------------------------------------------------------------------------------
# Cached evaluation stores

STORE_VARIANTS: tuple[str, ...] = ("base", "context", "statement", "cells")


VARIANT_FORMATS: dict[str, str] = {"base": "chunk-text-v0", "context": "title-section-v1",
                                   "statement": "title-section-statement-v2",
                                   "cells": "title-section-statement-cells-v3"}
"""Embedding-text format (``equimind.ingest.embed_format``) of each store variant."""


def product_variant() -> str:
    """The store variant whose embedding text is the product format (``embed_format.PRODUCT_FORMAT``)."""
    return next(v for v, fmt in VARIANT_FORMATS.items() if fmt == PRODUCT_FORMAT.value)


def variant_format(variant: str) -> str:
    """``base``: the chunk text itself (``chunk-text-v0``); ``context``: the chunk under a one-line header of document
    title and section (``title-section-v1``); ``statement``: that header plus the financial statement the chunk lies
    in (``title-section-statement-v2``); ``cells``: v2 with table rows embedded as their cells
    (``title-section-statement-cells-v3``, the product format)."""
    if variant not in VARIANT_FORMATS:
        raise ValueError(f"unknown store variant {variant!r}; valid: {', '.join(STORE_VARIANTS)}")
    return VARIANT_FORMATS[variant]


def stored_documents(services: Services) -> list[Document]:
    """Every indexed Document of a store (with its canonical text)."""
    refs = services.docstore.list_documents(status="indexed")
    return [services.docstore.get_document(ref.doc_id) for ref in refs]


def open_variant_store(settings: Settings, variant: str, documents: Callable[[], Iterable[Document | SourceFailure]],
                       complete: Callable[[list[Document]], bool], *, embedder: Embedder | None = None,
                       reranker: Reranker | None = None, tokenizer: Tokenizer | None = None,
                       ) -> tuple[Services, dict[str, Any]]:
    """Open the store under ``settings.home``; when ``complete(stored docs)`` is False, ingest ``documents()`` with
    the variant's embedding text. Returns the services and an ingest summary (``cached`` True when nothing ran).

    The store's embedding stamp must match the variant: an unstamped store under the variant's home was built by
    this harness before stamps existed, with the variant's embedding text, so it is stamped as such; a store stamped
    otherwise (another embedder) is re-embedded first."""

    services = open_services(settings, embedder=embedder, reranker=reranker, tokenizer=tokenizer,
                             text_format=variant_format(variant))
    stamp = _align_stamp(services, variant)
    if complete(stored_documents(services)):
        return services, {"cached": True, **stamp}
    t0 = time.perf_counter()
    report = services.pipeline().run(documents())
    summary = {"cached": False, "seconds": round(time.perf_counter() - t0, 1), "variant": variant, **stamp,
               **report.model_dump(mode="json")}
    log.info("evaluation store %s ingested: %s", settings.home, summary)
    return services, summary


def _align_stamp(services: Services, variant: str) -> dict[str, Any]:
    """Make the variant store's embedding stamp agree with the variant (see ``open_variant_store``)."""

    stored = read_stamp(services.docstore)
    wanted = EmbeddingStamp(embedder=services.embedder.name, text_format=parse_format(services.text_format))
    if stored is not None and stored.legacy:
        log.info("evaluation store %s (%s) has no embedding stamp; stamping it %s", services.settings.home, variant,
                 wanted.text_format.value)
        services.docstore.set_embedding_stamp(wanted.embedder or "", wanted.text_format.value)
        return {"stamp": "adopted"}
    if mismatch(stored, wanted) is not None:
        report = services.reindex()
        return {"stamp": "reindexed", "reindex_seconds": report.seconds}
    return {}
