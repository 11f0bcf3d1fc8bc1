"""Serving-side processes of benchmarks/scaling_bench.py — each is what one API worker is: it opens an existing
EQUIMIND_HOME (docstore, Chroma embedded or server, the saved local indexes) in a fresh process.

    python -m benchmarks.scaling_worker serve CONFIG_JSON        latency, in-process threads, Chroma queries, memory
    python -m benchmarks.scaling_worker throughput CONFIG_JSON   prints "ready", waits for CONFIG's go-file, runs
                                                                 ticker+date searches, prints its timings

Each prints one JSON line (the last line of stdout).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.search_bench import filters, pct
from benchmarks.search_synthetic import DIM, TableEmbedder
from equimind.core.config import Settings
from equimind.core.documents import FilterSpec
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore import DocStore
from equimind.store.local_indexes import LocalIndexes
from equimind.store.vectors import ChromaVectorStore

FILTER_SEED = 7
THREADS = (1, 2, 4)


def proc_memory_mb(pid: int | str = "self") -> dict[str, float]:
    """VmRSS (resident now) and VmHWM (peak resident) of a process, in MB (Linux /proc)."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out["rss_mb" if key == "VmRSS" else "peak_rss_mb"] = round(int(value.split()[0]) / 1024, 1)
    return out


def pointers(bm25_root: Path) -> tuple[str, str]:
    """The CURRENT pointers of the saved BM25 index and matrix (unchanged = nothing was rebuilt)."""
    return (bm25_root / "CURRENT").read_text(), (bm25_root / "dense" / "CURRENT").read_text()


class Worker:
    """One opened home with a searcher over precomputed query vectors."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.settings = Settings(home=Path(cfg["home"]), chroma_url=cfg["chroma_url"], retrieval_mode="hybrid")
        self.texts: list[str] = cfg["queries"]
        self.qvecs = np.load(cfg["vectors"])
        before = pointers(self.settings.bm25_path)
        t0 = time.perf_counter()
        self.docstore = DocStore(self.settings.docstore_path)
        self.vectors = ChromaVectorStore.from_settings(self.settings)
        indexes = LocalIndexes(self.settings.bm25_path, self.docstore, self.vectors, DIM, "synthetic")
        indexes.current()
        self.open_s = round(time.perf_counter() - t0, 3)
        self.loaded_saved = pointers(self.settings.bm25_path) == before  # False: it had to rebuild them
        embedder = TableEmbedder(dict(zip(self.texts, self.qvecs, strict=True)))
        self.searcher = HybridSearcher(self.settings, self.docstore, self.vectors, indexes, embedder,  # type: ignore[arg-type]
                                       None)
        all_flts = filters(np.random.default_rng(FILTER_SEED), len(self.texts))
        self.flts: dict[str, list[FilterSpec | None]] = {"none": all_flts["none"],
                                                         "ticker+date": all_flts["ticker+date"]}

    def latency(self, flts: list[FilterSpec | None]) -> dict[str, Any]:
        for text, flt in list(zip(self.texts, flts, strict=True))[:5]:  # warm-up
            self.searcher.search(text, flt, mode="hybrid")
        ms = []
        for text, flt in zip(self.texts, flts, strict=True):
            t0 = time.perf_counter()
            self.searcher.search(text, flt, mode="hybrid")
            ms.append((time.perf_counter() - t0) * 1000)
        return pct(ms)

    def run_searches(self, n: int, offset: int, errors: list[str]) -> None:
        flts = self.flts["ticker+date"]
        for i in range(n):
            j = (offset + i) % len(self.texts)
            try:
                self.searcher.search(self.texts[j], flts[j], mode="hybrid")
            except Exception as exc:  # counted and reported, never hidden
                errors.append(f"{type(exc).__name__}: {exc}")

    def threaded(self, threads: int, per_thread: int) -> dict[str, Any]:
        """Searches/s with ``threads`` threads sharing this worker's searcher (an API worker's thread pool)."""
        errors: list[str] = []
        pool = [threading.Thread(target=self.run_searches, args=(per_thread, k * 7, errors)) for k in range(threads)]
        t0 = time.perf_counter()
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        wall = time.perf_counter() - t0
        return {"threads": threads, "searches": threads * per_thread,
                "searches_per_s": round(threads * per_thread / wall, 1), "errors": errors[:5]}

    def chroma_where(self, flts: list[FilterSpec | None], n: int) -> dict[str, Any]:
        ms = []
        for q, flt in list(zip(self.qvecs, flts, strict=True))[:n]:
            t0 = time.perf_counter()
            self.vectors.query(q, 50, flt)
            ms.append((time.perf_counter() - t0) * 1000)
        return pct(ms)


def serve(cfg: dict[str, Any]) -> dict[str, Any]:
    start = proc_memory_mb()
    w = Worker(cfg)
    out: dict[str, Any] = {"memory_start": start, "open_and_load_indexes_s": w.open_s,
                           "loaded_saved_indexes": w.loaded_saved, "memory_after_load": proc_memory_mb()}
    out["hybrid_ms"] = {name: w.latency(f) for name, f in w.flts.items()}
    out["threads"] = [w.threaded(k, cfg["per_thread"]) for k in THREADS]
    out["memory_after_exact_queries"] = proc_memory_mb()
    w.searcher.exact_max_rows = 0  # the dense leg through Chroma's HNSW (unfiltered, or over-fetch + post-filter)
    out["hybrid_hnsw_ms"] = {name: w.latency(f) for name, f in w.flts.items()}
    out["chroma_query_ms"] = {name: w.chroma_where(f, cfg["chroma_queries"]) for name, f in w.flts.items()}
    out["memory_end"] = proc_memory_mb()
    w.docstore.close()
    return out


def throughput(cfg: dict[str, Any]) -> dict[str, Any]:
    w = Worker(cfg)
    errors: list[str] = []
    w.run_searches(10, cfg["offset"], errors)  # warm the caches before the clock starts
    print("ready", flush=True)
    go = Path(cfg["go_file"])
    while not go.exists():
        time.sleep(0.01)
    start = time.time()
    w.run_searches(cfg["searches"], cfg["offset"], errors)
    end = time.time()
    w.docstore.close()
    return {"start": start, "end": end, "searches": cfg["searches"], "errors": errors[:5],
            "memory": proc_memory_mb()}


def main() -> None:
    kind, config = sys.argv[1], json.loads(Path(sys.argv[2]).read_text())
    result = serve(config) if kind == "serve" else throughput(config)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
