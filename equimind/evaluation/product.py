"""The ``product`` block: what ``equimind search QUESTION`` returns, scored.

Each question is searched through ``EquiMindEngine.search`` itself — the code path of the ``equimind search`` command
(``interfaces/cli/store.py``) with no filter option: the filter the engine parses from the question (auto filter),
the configured mode (``hybrid+rerank`` by default; without a cross-encoder the RRF order is kept and the block says
so), the configured fusion weights and ``top_k`` 10 — over the ``cells`` store, whose embedding text is the product
format. Nothing here re-implements a stage; the harness only judges the hits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from equimind.app.engine import EquiMindEngine
from equimind.app.services import Services
from equimind.core.documents import Document
from equimind.evaluation.metrics import Judgement, score_judgements
from equimind.evaluation.runner import (
    KS,
    ArmRun,
    EvalQuery,
    compare,
    product_variant,
    stored_documents,
    summarise,
)

PRODUCT_SETTING = "shared"  # every document in one store; the harness passes no filter, the engine parses its own
PRODUCT_KEY = "product"
WHAT = ("EquiMindEngine.search(question, top_k=10) as `equimind search` runs it: cells store (every document), "
        "filter parsed from the question, configured mode and fusion weights, rerank when a cross-encoder is present")


def run_product(services: Services, queries: Sequence[EvalQuery], k: int = 10) -> tuple[ArmRun, dict[str, Any]]:
    """Search every question as the product does (``queries``' own filters are ignored) and judge the top k.
    Returns the run and what the product did: its mode, how many questions got a parsed filter, degradations."""
    engine = EquiMindEngine(services)
    judgements: list[Judgement] = []
    modes: set[str] = set()
    degraded: set[str] = set()
    notes: list[str | None] = []
    filtered = 0
    wall = 0.0
    for q in queries:
        t0 = time.perf_counter()
        res = engine.search(q.text, top_k=k)
        wall += time.perf_counter() - t0
        modes.add(str(res.mode))
        degraded.update(str(d) for d in res.degraded)
        notes.append(res.auto_filter)
        filtered += bool(res.filters)
        judgements.append(q.judge(list(res.hits)))
    run = ArmRun(PRODUCT_KEY, score_judgements(judgements, KS), mean_latency_ms=round(1000.0 * wall / max(1, len(
        queries)), 2))
    info = {"modes": sorted(modes), "degraded": sorted(degraded),
            "auto_filtered": filtered, "filters": notes}
    return run, info


def product_block(services: Services, queries: Sequence[EvalQuery], reference: ArmRun | None,
                  reference_name: str, seed: int = 0) -> tuple[dict[str, Any], ArmRun]:
    """The JSON ``product`` block: summary with CIs and per-type means, what ran, per-question scores, and the paired
    difference to ``reference`` (the harness's own arm over the same store and questions)."""
    run, info = run_product(services, queries)
    block: dict[str, Any] = {"what": WHAT, "variant": product_variant(), "setting": PRODUCT_SETTING,
                             "mode": info["modes"], "degraded": info["degraded"],
                             "auto_filtered": info["auto_filtered"], "n_questions": len(queries),
                             "summary": summarise(run, [q.qtype for q in queries], seed)}
    block["per_query"] = [
        {"id": q.id, "type": q.qtype, "recall@10": float(run.scores["recall_any@10"][i]),
         "mrr@10": round(float(run.scores["mrr@10"][i]), 4), "filter": info["filters"][i]}
        for i, q in enumerate(queries)]
    if reference is not None:
        block[f"product_minus_{reference_name}"] = compare(run, reference, seed=seed)
    return block, run


def add_product(metrics: dict[str, Any], config: dict[str, Any], services: dict[str, Services],
                queries: Callable[[list[Document]], list[EvalQuery]],
                runs: dict[tuple[str, str], dict[str, ArmRun]]) -> None:
    """Put the ``product`` block into a benchmark's result when its store was opened (``services`` by variant), and
    say in the config which block is the product; paired with the harness's context/shared_parsed hybrid arm.
    ``queries`` builds the benchmark's unfiltered queries over the store's documents."""
    variant = product_variant()
    if variant not in services:
        config["product_block"] = None
        metrics[PRODUCT_KEY] = {"unavailable": f"the product store variant {variant!r} was not opened; "
                                               f"run with --variants {variant}"}
        return
    reference = runs.get((variant, "shared_parsed"), {}).get("hybrid")
    qs = queries(stored_documents(services[variant]))
    metrics[PRODUCT_KEY], _ = product_block(services[variant], qs, reference, f"{variant}_shared_parsed_hybrid")
    config["product_block"] = PRODUCT_KEY
