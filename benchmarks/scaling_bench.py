"""Scaling: embedded Chroma vs a Chroma server (``chroma run`` on loopback) at 10k and 100k synthetic chunks.

    python -m benchmarks.scaling_bench [--sizes 10000 100000] [--backends embedded server] [--queries 60]

Per (size, backend), in a fresh EQUIMIND_HOME (and a fresh server with its own data directory):
* ingest, shaped like IngestPipeline's store writes — per document: docstore transaction, ``has_ids``, upsert of its
  50 vectors, status 'indexed' — then the local index build (BM25 + exact matrix, vectors read back from Chroma);
* a fresh *serving process* (what one API worker is; benchmarks/scaling_worker.py) opens the home, loads the saved
  indexes and measures ``HybridSearcher.search`` (mode hybrid, no rerank, top 10, query vectors precomputed)
  p50/p95 with a ticker + date filter and without; the same with the dense leg forced through Chroma's HNSW
  (``exact_max_rows=0``); Chroma's own filtered query; searches/s with 1, 2 and 4 threads; its memory (VmRSS/VmHWM);
* searches/s of 1 and 2 serving processes running at once;
* the Chroma server's memory, and the on-disk size of each store.

Writes benchmarks/results/scaling.json with machine info and the load average (the machine may be shared).
Synthetic corpus and vectors: benchmarks/search_synthetic.py.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from benchmarks.scaling_worker import THREADS, proc_memory_mb
from benchmarks.search_synthetic import DIM, Corpus, make_corpus, make_queries
from equimind.core.config import Settings
from equimind.store.docstore import DocStore
from equimind.store.local_indexes import LocalIndexes
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger("scaling_bench")
REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "scaling.json"
SCRIPT = REPO / "scripts" / "chroma_server.sh"


# ------------------------------------------------------------------ processes, memory, disk
def size_mb(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 1e6, 1)
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 1) if path.exists() else 0.0


class ChromaServer:
    """A ``chroma run`` started and stopped through scripts/chroma_server.sh, with its data in ``data_dir``."""

    def __init__(self, work: Path) -> None:
        self.pid_file = work / "chroma.pid"
        self.data_dir = work / "server-data"
        res = subprocess.run(["bash", str(SCRIPT), "start", "--pid-file", str(self.pid_file), "--path",
                              str(self.data_dir)], capture_output=True, text=True, timeout=120, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"could not start a Chroma server: {res.stderr.strip()}")
        self.url = res.stdout.strip().splitlines()[-1]
        self.pid = int(self.pid_file.read_text().strip())

    def memory(self) -> dict[str, float]:
        return proc_memory_mb(self.pid)

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "stop", "--pid-file", str(self.pid_file)], capture_output=True,
                       timeout=60, check=False)


# ------------------------------------------------------------------ ingest (this process)
def ingest(settings: Settings, corpus: Corpus) -> dict[str, Any]:
    """Pipeline-shaped store writes, then the local index build; seconds per stage and throughputs."""
    docstore = DocStore(settings.docstore_path)
    vectors = ChromaVectorStore.from_settings(settings)
    t = {"docstore_s": 0.0, "has_ids_s": 0.0, "upsert_s": 0.0, "status_s": 0.0}
    row = 0
    for doc, parents, chunks in zip(corpus.docs, corpus.parents, corpus.chunks, strict=True):
        t0 = time.perf_counter()
        docstore.add_document_with_chunks(doc, parents, chunks)
        t1 = time.perf_counter()
        vectors.has_ids([c.id for c in chunks])
        t2 = time.perf_counter()
        vectors.upsert(chunks, corpus.vectors[row : row + len(chunks)])
        t3 = time.perf_counter()
        docstore.set_status(doc.id, "indexed")
        t4 = time.perf_counter()
        row += len(chunks)
        for key, dt in (("docstore_s", t1 - t0), ("has_ids_s", t2 - t1), ("upsert_s", t3 - t2), ("status_s", t4 - t3)):
            t[key] += dt
    t0 = time.perf_counter()
    indexes = LocalIndexes(settings.bm25_path, docstore, vectors, DIM, "synthetic")
    indexes.current()
    t["index_build_s"] = time.perf_counter() - t0
    n = len(corpus.vectors)
    total = sum(t.values())
    docstore.close()
    return {**{k: round(v, 2) for k, v in t.items()}, "total_s": round(total, 2),
            "upsert_vectors_per_s": round(n / t["upsert_s"], 1), "chunks_per_s_end_to_end": round(n / total, 1),
            "vectors_in_chroma": vectors.count()}


# ------------------------------------------------------------------ serving (fresh processes)
def _worker(kind: str, cfg: dict[str, Any], path: Path) -> subprocess.Popen[str]:
    path.write_text(json.dumps(cfg))
    return subprocess.Popen([sys.executable, "-m", "benchmarks.scaling_worker", kind, str(path)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str], timeout: float = 1800) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"serving process failed: {err[-3000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def serve(base: dict[str, Any], work: Path, chroma_queries: int) -> dict[str, Any]:
    """Latency, threads, Chroma queries and memory of one fresh serving process."""
    cfg = {**base, "per_thread": 100, "chroma_queries": chroma_queries}
    return _finish(_worker("serve", cfg, work / "serve.json"))


def processes(base: dict[str, Any], work: Path, k: int, searches: int) -> dict[str, Any]:
    """Aggregate ticker+date searches/s of ``k`` serving processes started together (several API workers)."""
    go = work / f"go-{k}"
    procs = [_worker("throughput", {**base, "go_file": str(go), "searches": searches, "offset": i * 11},
                     work / f"throughput-{k}-{i}.json") for i in range(k)]
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"throughput worker did not start: {line} {proc.stderr.read() if proc.stderr else ''}")
    go.touch()
    runs = [_finish(p) for p in procs]
    wall = max(r["end"] for r in runs) - min(r["start"] for r in runs)
    return {"processes": k, "searches": sum(r["searches"] for r in runs),
            "searches_per_s": round(sum(r["searches"] for r in runs) / wall, 1),
            "errors": [e for r in runs for e in r["errors"]][:5],
            "rss_mb_per_process": [r["memory"]["rss_mb"] for r in runs]}


# ------------------------------------------------------------------ driver
def run_config(n: int, backend: str, corpus: Corpus, queries: list[tuple[str, np.ndarray]],
               root: Path, chroma_queries: int) -> dict[str, Any]:
    work = root / f"{backend}-{n}"
    work.mkdir(parents=True)
    server = ChromaServer(work) if backend == "server" else None
    load_before = list(os.getloadavg())
    try:
        settings = Settings(home=work / "home", chroma_url=server.url if server else None, retrieval_mode="hybrid")
        settings.ensure_home()
        out: dict[str, Any] = {"chunks": n, "backend": backend, "ingest": ingest(settings, corpus)}
        if server:
            out["chroma_server_memory_after_ingest"] = server.memory()
        log.info("%s %d ingest: %s", backend, n, out["ingest"])
        np.save(work / "q.npy", np.stack([v for _, v in queries]))
        base = {"home": str(settings.home), "chroma_url": settings.chroma_url, "queries": [t for t, _ in queries],
                "vectors": str(work / "q.npy")}
        out["serve"] = serve(base, work, chroma_queries)
        out["processes"] = [processes(base, work, k, searches=300) for k in (1, 2)]
        if server:
            out["chroma_server_memory_after_queries"] = server.memory()
        chroma_dir = server.data_dir / "db" if server else settings.chroma_path
        out["disk_mb"] = {"docstore": size_mb(settings.docstore_path), "chroma": size_mb(chroma_dir),
                          "bm25": round(size_mb(settings.bm25_path) - size_mb(settings.bm25_path / "dense"), 1),
                          "dense_matrix": size_mb(settings.bm25_path / "dense")}
        log.info("%s %d serve: %s", backend, n, {k: out["serve"][k] for k in ("hybrid_ms", "memory_end")})
    finally:
        if server:
            server.stop()
        out_load = {"before": load_before, "after": list(os.getloadavg())}
        shutil.rmtree(work, ignore_errors=True)
    out["load_average"] = out_load
    return out


def per_100k(results: dict[str, Any], sizes: list[int]) -> dict[str, Any]:
    """Growth per 100k chunks between the smallest and the largest size (a linear fit of two points)."""
    lo, hi = min(sizes), max(sizes)
    if lo == hi:
        return {}
    scale = 100_000 / (hi - lo)
    out: dict[str, Any] = {}
    for backend in sorted({r["backend"] for r in results.values()}):
        a, b = results.get(f"{backend}/{lo}", {}), results.get(f"{backend}/{hi}", {})
        if "ingest" not in a or "ingest" not in b:
            continue
        d: dict[str, float] = {
            "serving_process_rss_mb": (b["serve"]["memory_end"]["rss_mb"] - a["serve"]["memory_end"]["rss_mb"]),
            "index_build_s": b["ingest"]["index_build_s"] - a["ingest"]["index_build_s"],
            "ingest_total_s": b["ingest"]["total_s"] - a["ingest"]["total_s"],
            **{f"disk_{k}_mb": b["disk_mb"][k] - a["disk_mb"][k] for k in a["disk_mb"]}}
        if "chroma_server_memory_after_queries" in b:
            d["chroma_server_rss_mb"] = (b["chroma_server_memory_after_queries"]["rss_mb"]
                                         - a["chroma_server_memory_after_queries"]["rss_mb"])
        out[backend] = {k: round(v * scale, 1) for k, v in d.items()}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--backends", nargs="+", choices=("embedded", "server"), default=["embedded", "server"])
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--chroma-queries", type=int, default=20, help="Chroma where-filtered queries (slow at 100k)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per Chroma request otherwise
    t_start = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="scaling-bench-"))
    results: dict[str, Any] = {}
    try:
        for n in sorted(args.sizes):
            corpus, model = make_corpus(n, seed=n)
            queries = make_queries(corpus, model, args.queries, seed=n + 1)
            for backend in args.backends:
                try:
                    results[f"{backend}/{n}"] = run_config(n, backend, corpus, queries, root, args.chroma_queries)
                except Exception as exc:  # recorded in the results; the other configurations still run
                    log.exception("%s at %d chunks failed", backend, n)
                    error = f"{type(exc).__name__}: {exc}"
                    results[f"{backend}/{n}"] = {"chunks": n, "backend": backend, "error": error}
            del corpus
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = {"benchmark": "scaling", "machine": machine_info(), "config": _config(args), "results": results,
           "per_100k_chunks": per_100k(results, args.sizes), "total_runtime_s": round(time.perf_counter() - t_start, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    log.info("wrote %s in %.0f s", args.out, out["total_runtime_s"])


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "sizes": args.sizes, "backends": args.backends, "queries": args.queries, "chroma_queries": args.chroma_queries,
        "corpus": "benchmarks/search_synthetic.py: 50 chunks/document, 20 tickers, 2022-2024, 384-d text-like vectors",
        "ingest": "per document: docstore transaction, has_ids, upsert of its 50 vectors, set_status (the shape of "
                  "IngestPipeline's writes; embedding excluded), then LocalIndexes build (BM25 + exact matrix)",
        "search": "HybridSearcher.search mode hybrid, no rerank, top 10, precomputed query vectors, in a fresh process",
        "filters": {"ticker+date": "1 of 20 tickers and a 365-day window (~1.7% of chunks)", "none": "no filter"},
        "hybrid_hnsw_ms": "same searches with exact_max_rows=0: the dense leg queries Chroma (HNSW) instead of the "
                          "local exact matrix",
        "threads": f"ticker+date hybrid searches/s, {THREADS} threads sharing one searcher in one process",
        "processes": "ticker+date hybrid searches/s of 1 and 2 serving processes started together (300 each)",
        "server": "chroma run --host 127.0.0.1 (scripts/chroma_server.sh), fresh per configuration",
        "hnsw": {"space": "cosine", "M": 16, "ef_construction": 200, "ef_search": 50}}


if __name__ == "__main__":
    main()
