"""Search latency per mode (10k and 100k chunks, with/without filters), Chroma's own filtered query for comparison,
and HNSW recall@10 against exact search.

    python -m benchmarks.search_bench [--sizes 10000 100000] [--queries 60] [--skip-models] [--calibrate]

Writes benchmarks/results/search.json (with machine info). Synthetic data: see benchmarks/search_synthetic.py.
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
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from benchmarks.search_synthetic import DIM, TICKERS, Corpus, TableEmbedder, make_corpus, make_queries
from equimind.core.config import Settings
from equimind.core.documents import FilterSpec
from equimind.retrieval.dense import dense_search
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore import DocStore
from equimind.store.indexfiles import RowMeta
from equimind.store.local_indexes import LocalIndexes
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger("search_bench")
RESULTS = Path(__file__).resolve().parent / "results" / "search.json"
EXACT_MAX_ROWS = 100_000  # HybridSearcher's default
HNSW_COMPARISON_ROWS = 20_000  # a lower threshold, to time and score the HNSW routes at the same sizes


def pct(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs)
    return {"p50": round(float(np.percentile(a, 50)), 3), "p95": round(float(np.percentile(a, 95)), 3),
            "mean": round(float(a.mean()), 3), "n": len(xs)}


def filters(rng: np.random.Generator, n: int) -> dict[str, list[FilterSpec | None]]:
    """Per query: a ticker + one-year window (selective, ~1.7 %), and 'filed in the last year' (~33 %)."""
    sel: list[FilterSpec | None] = []
    for _ in range(n):
        start = date(2022, 1, 1).toordinal() + int(rng.integers(0, 2 * 365))
        sel.append(FilterSpec(tickers=(TICKERS[int(rng.integers(0, len(TICKERS)))],),
                              since=date.fromordinal(start), until=date.fromordinal(start + 364)))
    last_year: list[FilterSpec | None] = [FilterSpec(since=date(2024, 1, 1))] * n
    return {"none": [None] * n, "ticker+date": sel, "date_only": last_year}


def ingest(home: Path, corpus: Corpus, settings: Settings) -> tuple[DocStore, ChromaVectorStore, dict[str, float]]:
    t = {}
    t0 = time.perf_counter()
    docstore = DocStore(settings.docstore_path)
    for doc, ps, cs in zip(corpus.docs, corpus.parents, corpus.chunks, strict=True):
        docstore.add_document_with_chunks(doc, ps, cs)
    t["docstore_insert_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = ChromaVectorStore.from_settings(settings)
    flat = [c for cs in corpus.chunks for c in cs]
    vectors.upsert(flat, corpus.vectors)
    t["chroma_upsert_s"] = time.perf_counter() - t0
    for doc in corpus.docs:
        docstore.set_status(doc.id, "indexed")
    return docstore, vectors, {k: round(v, 2) for k, v in t.items()}


def time_modes(searcher: HybridSearcher, queries: list[tuple[str, np.ndarray]],
               flts: dict[str, list[FilterSpec | None]], modes: tuple[str, ...] = ("dense", "bm25", "hybrid"),
               ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in modes:
        for fname, per_query in flts.items():
            for (text, _), flt in list(zip(queries, per_query, strict=True))[:5]:  # warm-up
                searcher.search(text, flt, mode=mode)
            wall, stages = [], Counter[str]()
            for (text, _), flt in zip(queries, per_query, strict=True):
                t0 = time.perf_counter()
                res = searcher.search(text, flt, mode=mode)
                wall.append((time.perf_counter() - t0) * 1000)
                stages.update({k: v / len(queries) for k, v in res.timings_ms.items()})
                assert flt is None or all(flt.since is None or (h.document.filed_at or date.min) >= flt.since
                                          for h in res.hits)
            out[f"{mode}/{fname}"] = {**pct(wall), "stage_mean_ms": {k: round(v, 3) for k, v in stages.items()}}
    return out


def dense_routes(searcher: HybridSearcher, queries: list[tuple[str, np.ndarray]],
                 flts: dict[str, list[FilterSpec | None]], corpus: Corpus, ids: list[str]) -> dict[str, Any]:
    """Which route the dense leg took, and its recall@10 against brute force over the admitted rows."""
    pair, _ = searcher.indexes.current()
    flat = [c for cs in corpus.chunks for c in cs]
    meta = RowMeta.from_chunks(flat)  # brute-force ground truth in corpus order
    out: dict[str, Any] = {}
    for fname, per_query in flts.items():
        routes, admitted, recall = Counter[str](), [], []
        for n, ((_, vec), flt) in enumerate(zip(queries, per_query, strict=True)):
            r = dense_search(vec, 50, flt, pair.dense, searcher.vectors, searcher.exact_max_rows)
            routes[r.route] += 1
            admitted.append(r.admitted)
            ok = meta.mask(flt)
            if n == 0 and ok is not None:  # the vectorised mask is the reference rule
                assert ok.tolist() == [flt is not None and flt.matches(c) for c in flat]
            sims = corpus.vectors @ vec if ok is None else np.where(ok, corpus.vectors @ vec, -np.inf)
            want = min(10, int(np.isfinite(sims).sum()))
            if want:
                best = {ids[i] for i in np.argsort(-sims, kind="stable")[:want]}
                recall.append(len(best & {cid for cid, _ in r.hits[:10]}) / want)
        out[fname] = {"routes": dict(routes), "admitted_rows_mean": round(float(np.mean(admitted)), 1),
                      "recall@10_vs_exact": round(float(np.mean(recall)), 4)}
    return out


def chroma_filtered(vectors: ChromaVectorStore, queries: list[tuple[str, np.ndarray]],
                    flts: dict[str, list[FilterSpec | None]], n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fname, per_query in flts.items():
        ms = []
        for (_, vec), flt in list(zip(queries, per_query, strict=True))[:n]:
            t0 = time.perf_counter()
            vectors.query(vec, 50, flt)
            ms.append((time.perf_counter() - t0) * 1000)
        out[fname] = pct(ms)
    return out


def exact_truth(corpus_vectors: np.ndarray, queries: np.ndarray, k: int = 10) -> np.ndarray:
    sims = queries @ corpus_vectors.T
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


def recall_in_process(vectors: ChromaVectorStore, ids: list[str], qs: np.ndarray, truth: np.ndarray) -> float:
    rec = []
    for q, t in zip(qs, truth, strict=True):
        got = {cid for cid, _ in vectors.query(q, 10)}
        rec.append(len(got & {ids[i] for i in t}) / 10)
    return round(float(np.mean(rec)), 4)


def recall_sweep(chroma_path: Path, ids: list[str], qs: np.ndarray, truth: np.ndarray,
                 efs: tuple[int, ...]) -> dict[str, Any]:
    """Each ef_search in a fresh process: Chroma applies a changed ef_search when it loads the segment."""
    work = Path(tempfile.mkdtemp(prefix="recall-"))
    np.save(work / "q.npy", qs)
    (work / "truth.json").write_text(json.dumps([[ids[i] for i in row] for row in truth]))
    out: dict[str, Any] = {}
    for ef in efs:
        cmd = [sys.executable, "-m", "benchmarks.search_bench", "--recall-worker", str(chroma_path), str(ef),
               str(work)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent)
        out[str(ef)] = json.loads(res.stdout.strip().splitlines()[-1])
    shutil.rmtree(work, ignore_errors=True)
    return out


def recall_worker(chroma_path: str, ef: int, work: str) -> None:
    vectors = ChromaVectorStore.persistent(chroma_path, ef_search=ef)
    qs = np.load(Path(work) / "q.npy")
    truth = json.loads((Path(work) / "truth.json").read_text())
    rec, ms = [], []
    for q, t in zip(qs, truth, strict=True):
        t0 = time.perf_counter()
        got = {cid for cid, _ in vectors.query(q, 10)}
        ms.append((time.perf_counter() - t0) * 1000)
        rec.append(len(got & set(t)) / 10)
    print(json.dumps({"recall@10": round(float(np.mean(rec)), 4), "ef_search_read_back": vectors.hnsw_config().get(
        "ef_search"), "query_ms": pct(ms)}))


def run_size(n: int, n_queries: int, root: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    corpus, model = make_corpus(n, seed=n)
    gen_s = time.perf_counter() - t0
    home = root / f"home-{n}"
    settings = Settings(home=home, retrieval_mode="hybrid")
    settings.ensure_home()
    docstore, vectors, build = ingest(home, corpus, settings)
    build["generate_s"] = round(gen_s, 2)
    queries = make_queries(corpus, model, n_queries, seed=n + 1)
    embedder = TableEmbedder({t: v for t, v in queries})
    indexes = LocalIndexes(settings.bm25_path, docstore, vectors, DIM, embedder.name)
    t0 = time.perf_counter()
    indexes.current()
    build["local_indexes_rebuild_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    LocalIndexes(settings.bm25_path, docstore, vectors, DIM, embedder.name).current()
    build["local_indexes_load_s"] = round(time.perf_counter() - t0, 3)
    searcher = HybridSearcher(settings, docstore, vectors, indexes, embedder, None,  # type: ignore[arg-type]
                              exact_max_rows=EXACT_MAX_ROWS)
    hnsw_searcher = HybridSearcher(settings, docstore, vectors, indexes, embedder, None,  # type: ignore[arg-type]
                                   exact_max_rows=HNSW_COMPARISON_ROWS)
    flts = filters(np.random.default_rng(n + 2), n_queries)
    log.info("n=%d built: %s", n, build)
    qs = np.stack([v for _, v in queries])
    ids = [c.id for cs in corpus.chunks for c in cs]
    result: dict[str, Any] = {
        "chunks": n, "documents": len(corpus.docs), "build": build,
        "latency_ms": time_modes(searcher, queries, flts),
        "dense_routes": dense_routes(searcher, queries, flts, corpus, ids),
        f"with_exact_max_rows_{HNSW_COMPARISON_ROWS}": {
            "latency_ms": time_modes(hnsw_searcher, queries, flts, modes=("hybrid",)),
            "dense_routes": dense_routes(hnsw_searcher, queries, flts, corpus, ids)},
        "chroma_query_ms": chroma_filtered(vectors, queries, flts, min(20, n_queries))}
    truth = exact_truth(corpus.vectors, qs)
    result["recall_at_10"] = {"vectors": "textlike", "ef_search_50_in_process": recall_in_process(vectors, ids, qs,
                                                                                                  truth)}
    pair, _ = indexes.current()
    exact_ok = [len({c for c, _ in pair.dense.search(q, 10)} & {ids[i] for i in t}) / 10 for q, t in zip(qs, truth,
                                                                                                       strict=True)]
    result["recall_at_10"]["exact_path"] = round(float(np.mean(exact_ok)), 4)
    result["recall_at_10"]["ef_sweep"] = recall_sweep(settings.chroma_path, ids, qs, truth, (50, 100, 200, 400))
    docstore.close()
    return result


def uniform_recall(n: int, root: Path) -> dict[str, Any]:
    """Worst case for HNSW: i.i.d. uniform unit vectors (no neighbourhood structure)."""
    corpus, model = make_corpus(n, seed=7, kind="uniform")
    settings = Settings(home=root / f"uniform-{n}")
    settings.ensure_home()
    vectors = ChromaVectorStore.from_settings(settings)
    flat = [c for cs in corpus.chunks for c in cs]
    vectors.upsert(flat, corpus.vectors)
    qs = model.sample(np.zeros(60, dtype=np.int64))
    truth = exact_truth(corpus.vectors, qs)
    ids = [c.id for c in flat]
    return {"chunks": n, "vectors": "uniform", "ef_sweep": recall_sweep(settings.chroma_path, ids, qs, truth,
                                                                         (50, 200, 800))}


ENGLISH_TEXT = ("revenue increased compared prior year primarily due higher demand data center products offset lower "
           "gaming sales gross margin improved operating expenses research development employee compensation supply "
           "chain constraints inventory purchase obligations customers concentration risk export controls china "
           "regulations could adversely affect results operations cash flows liquidity capital resources share "
           "repurchase program dividends debt notes interest rate exposure foreign currency fluctuations tax "
           "provision effective rate litigation legal proceedings accounting policies estimates goodwill impairment "
           "segment information geographic markets competition pricing pressure new product introductions")


def _torch_threads(n: int | None) -> int:
    import torch

    before = int(torch.get_num_threads())
    if n is not None:
        torch.set_num_threads(n)
    return before


def rerank_cost(n_pairs: int = 50, n_queries: int = 3) -> dict[str, Any]:
    """Latency of a cross-encoder with the architecture of ms-marco-MiniLM-L6-v2 (weights: the bundled MiniLM's
    encoder + an untrained head, built locally — the real model cannot be downloaded here; cost is the same) on
    ~200-token English passages, with torch's default thread count and with 1 thread."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    from equimind.embedding.embed import default_model_path
    from equimind.embedding.rerank import CrossEncoderReranker

    work = Path(tempfile.mkdtemp(prefix="ce-"))
    src = str(default_model_path())
    BertForSequenceClassification.from_pretrained(src, num_labels=1, local_files_only=True).save_pretrained(work)
    tokenizer = AutoTokenizer.from_pretrained(src, local_files_only=True)
    tokenizer.save_pretrained(work)
    rng = np.random.default_rng(0)
    words = ENGLISH_TEXT.split()
    texts = [" ".join(words[int(i)] for i in rng.integers(0, len(words), 190)) for _ in range(n_pairs)]
    tokens = float(np.mean([len(tokenizer(t)["input_ids"]) for t in texts]))
    reranker = CrossEncoderReranker(str(work), max_length=512)
    reranker.score("warm up", texts[:4])
    out: dict[str, Any] = {"pairs": n_pairs, "tokens_per_passage": round(tokens, 1)}
    default = _torch_threads(None)
    for threads in (default, 1):
        _torch_threads(threads)
        ms = []
        for i in range(n_queries):
            t0 = time.perf_counter()
            reranker.score(f"query {i} about revenue growth and export controls", texts)
            ms.append((time.perf_counter() - t0) * 1000)
        out[f"torch_threads_{threads}"] = pct(ms)
    _torch_threads(default)
    shutil.rmtree(work, ignore_errors=True)
    return out


def query_embed_cost(n: int = 30) -> dict[str, Any]:
    from equimind.embedding.embed import SentenceTransformerEmbedder

    e = SentenceTransformerEmbedder()
    e.embed_query("warm up")
    out: dict[str, Any] = {"model": e.name}
    default = _torch_threads(None)
    for threads in (default, 1):
        _torch_threads(threads)
        ms = []
        for i in range(n):
            t0 = time.perf_counter()
            e.embed_query(f"What are the main supply chain risks for the company in quarter {i}?")
            ms.append((time.perf_counter() - t0) * 1000)
        out[f"torch_threads_{threads}"] = pct(ms)
    _torch_threads(default)
    return out


def _spectrum_stats(vectors: np.ndarray) -> dict[str, float]:
    centred = vectors - vectors.mean(axis=0)
    var = np.linalg.svd(centred, compute_uv=False) ** 2
    cum = np.cumsum(var) / var.sum()
    sims = vectors @ vectors.T
    off = sims[~np.eye(len(vectors), dtype=bool)]
    return {"mean_vector_norm": round(float(np.linalg.norm(vectors.mean(axis=0))), 3),
            "random_pair_cosine": round(float(off.mean()), 3),
            "variance_in_top_10": round(float(cum[9]), 3), "variance_in_top_50": round(float(cum[49]), 3),
            "variance_in_top_100": round(float(cum[99]), 3)}


def calibrate(per_filing: int = 60) -> dict[str, Any]:
    """Compare the synthetic vector model with all-MiniLM-L6-v2 embeddings of real filing text (~1 min)."""
    import html
    import re

    from equimind.embedding.embed import SentenceTransformerEmbedder

    filings = sorted((Settings().corpus_dir / "sec" / "filings").glob("*/*.html"))
    if not filings:
        return {"skipped": "no recorded filings found; set EQUIMIND_SHARED"}
    rng = np.random.default_rng(0)
    texts: list[str] = []
    for path in filings[:8]:
        raw = re.sub(r"(?is)<(script|style|ix:header).*?</\1>", " ", path.read_text(errors="ignore"))
        words = html.unescape(re.sub(r"<[^>]+>", " ", raw)).split()[2000:]
        spans = [" ".join(words[i : i + 150]) for i in range(0, len(words) - 150, 150)]
        texts += [spans[int(i)] for i in rng.choice(len(spans), min(per_filing, len(spans)), replace=False)]
    real = SentenceTransformerEmbedder().embed(texts)
    corpus, _ = make_corpus(len(texts) * 10, seed=11)
    synthetic = corpus.vectors[rng.choice(len(corpus.vectors), len(texts), replace=False)]
    return {"passages": len(texts), "real_minilm": _spectrum_stats(real), "synthetic": _spectrum_stats(synthetic)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--skip-models", action="store_true", help="skip the real query-embedding and rerank timings")
    p.add_argument("--calibrate", action="store_true", help="also compare synthetic vectors with real embeddings")
    p.add_argument("--recall-worker", nargs=3, metavar=("CHROMA_PATH", "EF", "WORKDIR"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.recall_worker:
        recall_worker(args.recall_worker[0], int(args.recall_worker[1]), args.recall_worker[2])
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    t_start = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="search-bench-"))
    out: dict[str, Any] = {"benchmark": "search", "machine": machine_info(), "config": {
        "queries": args.queries, "dense_top_k": 50, "bm25_top_k": 50, "rrf_k": 60, "top_k": 10,
        "hnsw": {"space": "cosine", "M": 16, "ef_construction": 200, "ef_search": Settings().hnsw_ef_search},
        "exact_max_rows": EXACT_MAX_ROWS,
        "filters": {"ticker+date": "1 of 20 tickers and a 365-day window (~1.7% of chunks)",
                    "date_only": "filed since 2024-01-01 (~33% of chunks)"},
        "latency": "wall time of HybridSearcher.search (index check, dense, BM25, RRF, hydrate); query vectors "
                   "are precomputed, see query_embedding_ms for the real model's cost"}}
    try:
        out["sizes"] = {str(n): run_size(n, args.queries, root) for n in args.sizes}
        out["uniform_worst_case_recall"] = uniform_recall(min(args.sizes), root)
        if not args.skip_models:
            out["query_embedding_ms"] = query_embed_cost()
            out["rerank_50_pairs_ms"] = rerank_cost()
        if args.calibrate:
            out["vector_calibration"] = calibrate()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out["total_runtime_s"] = round(time.perf_counter() - t_start, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    log.info("wrote %s in %.0f s", args.out, out["total_runtime_s"])


if __name__ == "__main__":
    main()
