"""Cost of filtered BM25 with the filter's own term statistics (issue 15) vs the old masked global-statistics query.

Synthetic corpus (``search_synthetic``: Zipfian words, 100 words a chunk, 20 tickers, 3 years of filing dates) of
``--rows`` chunks, in the row order of the local indexes (ticker, filing date). Measures: BM25Index.build (bm25s
index + the term-frequency postings), the postings' share of it
and of the saved size, and per-query latency of ``search`` with no filter (bm25s over everything), a ticker + year
filter and a date-only filter (subset statistics), next to bm25s' own masked ``get_scores`` (global statistics, what
filtered queries used before). Writes benchmarks/results/bm25_subset.json.

    python -m benchmarks.bm25_subset_bench --rows 100000
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from benchmarks.search_synthetic import START, TICKERS, vocabulary, zipf_probs
from equimind.core.documents import Chunk, FilterSpec, Source, date_to_int
from equimind.store.matrix import sort_key
from equimind.store.sparse import BM25Index
from equimind.store.sparse_subset import Postings


def corpus(rows: int, seed: int = 0) -> list[Chunk]:
    rng = np.random.default_rng(seed)
    words, probs = vocabulary(rng), zipf_probs()
    out: list[Chunk] = []
    for i in range(rows):
        text = " ".join(words[j] for j in rng.choice(len(words), 100, p=probs))
        filed = START.toordinal() + int(rng.integers(0, 3 * 365))
        out.append(Chunk(id=f"c{i:07d}", doc_id=f"d{i // 50}", parent_id="p", start=0, end=len(text),
                         parent_start=0, parent_end=len(text), section=None, text=text,
                         ticker=TICKERS[(i // 50) % len(TICKERS)], source=Source.SEC_EDGAR, form="10-K",
                         filed_at=date_to_int(date.fromordinal(filed))))
    return sorted(out, key=sort_key)  # the row order LocalIndexes gives the saved index


def _ms(fn: Any, n: int) -> dict[str, float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 3), "p95_ms": round(times[int(0.95 * (n - 1))], 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/bm25_subset.json"))
    args = ap.parse_args()
    chunks = corpus(args.rows)
    t0 = time.perf_counter()
    ix = BM25Index().build(chunks)
    build_s = time.perf_counter() - t0
    from equimind.store.sparse import _stemmer, tokenize

    t0 = time.perf_counter()
    Postings.build(tokenize([c.text for c in chunks[:10_000]], _stemmer()), ix._bm25.vocab_dict)
    postings_10k_s = time.perf_counter() - t0  # includes re-tokenising 10k rows: an upper bound of its share
    with tempfile.TemporaryDirectory() as tmp:
        saved = ix.save(Path(tmp))
        size = {p.name: round(sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 1e6, 1)
                for p in saved.iterdir() if p.is_dir()}
    rng = np.random.default_rng(1)
    queries = [" ".join(chunks[int(rng.integers(0, len(chunks)))].text.split()[:6]) for _ in range(args.queries)]
    filters = {"none": None, "ticker+year": FilterSpec(tickers=(TICKERS[3],), since=date(2023, 1, 1),
                                                       until=date(2023, 12, 31)),
               "date-only": FilterSpec(since=date(2023, 1, 1), until=date(2023, 12, 31))}
    latency: dict[str, Any] = {}
    for name, flt in filters.items():
        it = iter(queries * 4)
        latency[name] = {"admitted": int(ix.meta.mask(flt).sum()) if flt else len(chunks),
                         "search": _ms(lambda flt=flt, it=it: ix.search(next(it), 50, flt), args.queries)}
        if flt is not None:
            weights = ix.meta.mask(flt).astype(np.float32)
            it2 = iter(queries * 4)
            latency[name]["old_masked_global_stats"] = _ms(
                lambda w=weights, it2=it2: ix._bm25.get_scores(ix._query_ids(next(it2)), weight_mask=w), args.queries)
    result = {"benchmark": "bm25_subset", "rows": args.rows, "build_s": round(build_s, 2),
              "postings_build_10k_rows_s_incl_tokenize": round(postings_10k_s, 2), "saved_mb": size,
              "latency": latency, "machine": machine_info()}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    main()
