"""The dense leg: exact search over the admitted rows whenever a filter is given or there are at most
``exact_max_rows`` rows (default 100k: always, at EquiMind's scale), HNSW (Chroma) for a large unfiltered store.

A filtered search is always exact so that its result is a function of the admitted documents only: an HNSW answer
depends on the whole graph (which neighbours it visits, what it over-fetches), so unrelated documents arriving could
change a filtered result (issue 15). Exact over the admitted rows costs at most a full scan (~8 ms at 100k rows).

Why (measured on this 2-core machine at 100k chunks, see docs/decisions/0001-filtered-dense-search.md and
benchmarks/results/search.json): Chroma's filtered HNSW query costs ~145 ms, an unfiltered one ~2 ms; the served
recall@10 of the HNSW route vs exact is 0.85 at ef_search 50 and 0.997 at 800 (benchmarks/results/hnsw_sweep.json,
text-like vectors); at 1M rows 0.945 at 800 and 0.992 at the default 3200, where unfiltered hybrid search takes 38-47 ms
p50 (hnsw_sweep_1m.json, ADR 0008); an exact dot product over the rows a ticker + date filter
admits (a few thousand, contiguous thanks to the index's row order) costs well under 1 ms, a full exact scan ~8 ms.

Routes (every route returns only rows that are in the local index — i.e. of documents indexed in its snapshot — and
that pass the filter):
* ``exact``        — a filter, or at most ``exact_max_rows`` rows: exact top-k over the admitted rows.
* ``hnsw``         — no filter, more rows than that: Chroma HNSW top-(k + slack), dropping ids the local index
                     does not hold.
* ``exact-fallback`` — the HNSW route came back short: exact over the admitted rows (correct, slower).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from equimind.core.documents import FilterSpec
from equimind.core.protocols import Vectors
from equimind.store.matrix import ExactVectorIndex
from equimind.store.vectors import ChromaVectorStore

log = logging.getLogger(__name__)

MAX_FETCH = 4096  # cap on the HNSW over-fetch
HNSW_SLACK = 16  # extra HNSW results to absorb ids the local index does not hold (pending / deleted documents)


@dataclass(frozen=True)
class DenseResult:
    hits: list[tuple[str, float]]
    route: str
    admitted: int


def dense_search(
    query: Vectors,
    k: int,
    flt: FilterSpec | None,
    exact: ExactVectorIndex,
    vectors: ChromaVectorStore,
    exact_max_rows: int = 100_000,
) -> DenseResult:
    """Top-k (chunk_id, cosine similarity) among indexed chunks that pass ``flt``."""
    admitted_mask = exact.admitted(flt)
    admitted = int(admitted_mask.sum())
    want = min(k, admitted)
    if want == 0:
        return DenseResult([], "exact", 0)
    filtered = flt is not None and not flt.is_empty()
    if filtered or admitted <= exact_max_rows:
        return DenseResult(exact.search(query, k, flt), "exact", admitted)
    fetch = min(k + HNSW_SLACK, MAX_FETCH)  # Chroma returns fewer when it holds fewer: then fall back to exact
    hits: list[tuple[str, float]] = []
    for chunk_id, sim in vectors.query(query, fetch):
        row = exact.row_of(chunk_id)
        if row is not None and admitted_mask[row]:
            hits.append((chunk_id, sim))
            if len(hits) == k:
                break
    if len(hits) >= want:
        return DenseResult(hits, "hnsw", admitted)
    log.info("HNSW returned %d/%d admitted hits (fetched %d); falling back to exact search", len(hits), want, fetch)
    return DenseResult(exact.search(query, k, flt), "exact-fallback", admitted)
