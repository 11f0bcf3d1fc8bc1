"""Served dense recall@10 of the HNSW routes against exact search, swept over ef_search (and the build parameters M /
ef_construction), with the latency of hybrid search and the memory a serving process takes.

    python -m benchmarks.hnsw_sweep [--size 100000] [--builds 16:200 32:200] [--efs 50 100 200 400 800 1200]

For each build (M:ef_construction) one synthetic store of ``--size`` text-like chunks (``search_synthetic.py``) is
built (docstore, Chroma, local BM25 + exact matrix); then every ef_search runs in a fresh process (Chroma applies
an ef_search when it loads the segment) that opens the store as the product does (``Settings.hnsw_ef_search``) and
measures, over the same queries:
- ``served``: recall@10 of ``dense_search`` (the product's dense leg: top 50, over-fetch 66 from HNSW) with the exact
  threshold lowered to 20k rows so the unfiltered query takes the ``hnsw`` route and the date filter (~33 %) the
  ``hnsw+filter`` route; the truth is exact search over the admitted rows;
- ``raw_k10``: Chroma top-10 alone (the figure issue 16 quotes: 0.82 at ef 50);
- p50/p95 of ``HybridSearcher.search`` (hybrid mode) unfiltered / ticker+date / date-only, and the worker's resident
  set at each stage and its peak (VmHWM).
Writes benchmarks/results/hnsw_sweep.json (rewritten after every ef).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from benchmarks.scaling_worker import proc_memory_mb
from benchmarks.search_bench import filters, ingest, pct, time_modes
from benchmarks.search_synthetic import DIM, TableEmbedder, make_corpus, make_queries
from equimind.core.config import Settings
from equimind.retrieval.dense import HNSW_SLACK, dense_search
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore import DocStore
from equimind.store.local_indexes import LocalIndexes
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger("hnsw_sweep")
RESULTS = Path(__file__).resolve().parent / "results" / "hnsw_sweep.json"
HNSW_ROWS = 20_000  # exact threshold in the workers, so the HNSW routes are the ones measured
DENSE_K = 50  # Settings.dense_top_k


def build(n: int, m: int, efc: int, home: Path, n_queries: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    corpus, model = make_corpus(n, seed=n)
    gen_s = time.perf_counter() - t0
    settings = Settings(home=home, retrieval_mode="hybrid", hnsw_m=m, hnsw_ef_construction=efc)
    settings.ensure_home()
    docstore, vectors, timing = ingest(home, corpus, settings)
    queries = make_queries(corpus, model, n_queries, seed=n + 1)
    t0 = time.perf_counter()
    LocalIndexes(settings.bm25_path, docstore, vectors, DIM, "table").current()
    timing["local_indexes_rebuild_s"] = round(time.perf_counter() - t0, 2)
    timing["generate_s"] = round(gen_s, 2)
    docstore.close()
    np.save(home / "queries.npy", np.stack([v for _, v in queries]))
    (home / "queries.json").write_text(json.dumps([t for t, _ in queries]))
    return {"chunks": n, "M": m, "ef_construction": efc, "build_s": timing,
            "store_mb": round(sum(f.stat().st_size for f in home.rglob("*") if f.is_file()) / 2**20, 1)}


def worker(home: Path, ef: int, m: int, efc: int) -> dict[str, Any]:
    """One ef_search in this fresh process: served and raw recall, hybrid latency, peak RSS."""
    settings = Settings(home=home, retrieval_mode="hybrid", hnsw_m=m, hnsw_ef_construction=efc, hnsw_ef_search=ef)
    qs = np.load(home / "queries.npy")
    texts = json.loads((home / "queries.json").read_text())
    queries = list(zip(texts, qs, strict=True))
    rss: dict[str, float] = {"start": proc_memory_mb()["rss_mb"]}
    docstore = DocStore(settings.docstore_path)
    vectors = ChromaVectorStore.from_settings(settings)
    embedder = TableEmbedder(dict(queries))
    indexes = LocalIndexes(settings.bm25_path, docstore, vectors, DIM, "table")
    searcher = HybridSearcher(settings, docstore, vectors, indexes, embedder, None,  # type: ignore[arg-type]
                              exact_max_rows=HNSW_ROWS)
    rss["stores_open"] = proc_memory_mb()["rss_mb"]
    pair, _ = indexes.current()
    rss["local_indexes_loaded"] = proc_memory_mb()["rss_mb"]
    vectors.query(qs[0], 10)
    rss["after_first_hnsw_query"] = proc_memory_mb()["rss_mb"]
    flts = filters(np.random.default_rng(len(qs)), len(qs))
    out: dict[str, Any] = {"ef_search_read_back": vectors.hnsw_config().get("ef_search"), "served": {}}
    for fname, per_query in flts.items():
        recall, routes, ms = [], set(), []
        for vec, flt in zip(qs, per_query, strict=True):
            t0 = time.perf_counter()
            res = dense_search(vec, DENSE_K, flt, pair.dense, vectors, HNSW_ROWS)
            ms.append((time.perf_counter() - t0) * 1000)
            truth = {c for c, _ in pair.dense.search(vec, 10, flt)}
            recall.append(len(truth & {c for c, _ in res.hits[:10]}) / max(1, len(truth)))
            routes.add(res.route)
        out["served"][fname] = {"recall@10": round(float(np.mean(recall)), 4), "routes": sorted(routes),
                                "dense_ms": pct(ms)}
    raw = [len({c for c, _ in vectors.query(q, 10)} & {c for c, _ in pair.dense.search(q, 10)}) / 10 for q in qs]
    out["raw_k10_recall"] = round(float(np.mean(raw)), 4)
    out["hybrid_ms"] = {k: {"p50": v["p50"], "p95": v["p95"]}
                        for k, v in time_modes(searcher, queries, flts, modes=("hybrid",)).items()}
    rss["end"] = proc_memory_mb()["rss_mb"]
    out["rss_mb"] = rss  # resident set at each stage (file-backed pages of the memory-mapped matrix count)
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across fork + exec, so a worker started by the
    # process that built the store reported the builder's ~15 GB (session 5's figure) instead of its own peak.
    out["peak_rss_mb"] = proc_memory_mb()["peak_rss_mb"]
    docstore.close()
    return out


def run_worker(home: Path, ef: int, m: int, efc: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.hnsw_sweep", "--worker", str(home), str(ef), str(m), str(efc)]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent)
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    out["worker_s"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--builds", nargs="+", default=["16:200"], help="M:ef_construction per build")
    p.add_argument("--efs", type=int, nargs="+", default=[50, 100, 200, 400, 800, 1200])
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--root", type=Path, default=None,
                   help="keep the built stores here (default: a temporary directory, removed); a build found here "
                        "complete (it has build.json) is reused, so an ef can be added without a rebuild")
    p.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        home, ef, m, efc = Path(args.worker[0]), *map(int, args.worker[1:])
        print(json.dumps(worker(home, ef, m, efc)))
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    keep = args.root is not None
    root = args.root or Path(tempfile.mkdtemp(prefix="hnsw-sweep-"))
    out: dict[str, Any] = {"benchmark": "hnsw_sweep", "machine": machine_info(), "config": {
        "size": args.size, "queries": args.queries, "dense_top_k": DENSE_K, "hnsw_fetch": DENSE_K + HNSW_SLACK,
        "exact_max_rows_in_workers": HNSW_ROWS, "vectors": "textlike (benchmarks/search_synthetic.py)"},
        "builds": []}
    t_start = time.perf_counter()
    try:
        for spec in args.builds:
            m, efc = map(int, spec.split(":"))
            home = root / f"m{m}-efc{efc}"
            if keep and (home / "build.json").exists():  # written last: the build finished
                entry = json.loads((home / "build.json").read_text())
                log.info("reusing the build in %s", home)
            else:
                shutil.rmtree(home, ignore_errors=True)  # an interrupted build is started over, never extended
                entry = build(args.size, m, efc, home, args.queries)
                (home / "build.json").write_text(json.dumps(entry))
            entry["ef_sweep"] = {}
            out["builds"].append(entry)
            log.info("built %s: %s", spec, entry["build_s"])
            for ef in args.efs:
                entry["ef_sweep"][str(ef)] = run_worker(home, ef, m, efc)
                log.info("M=%d efc=%d ef=%d: %s", m, efc, ef, entry["ef_sweep"][str(ef)]["served"]["none"])
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(out, indent=2) + "\n")
            if not keep:
                shutil.rmtree(home, ignore_errors=True)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    out["total_runtime_s"] = round(time.perf_counter() - t_start, 1)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    log.info("wrote %s in %.0f s", args.out, out["total_runtime_s"])


if __name__ == "__main__":
    main()
