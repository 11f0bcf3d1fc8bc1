"""Exact vector matrix: filtered top-k equals brute force on every code path; files round-trip."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from equimind.core.documents import Chunk, FilterSpec, Source
from equimind.core.errors import ConfigError
from equimind.store.indexfiles import IndexFormatError
from equimind.store.matrix import ExactVectorIndex, sort_key


def random_chunks(n: int, rng: np.random.Generator) -> list[Chunk]:
    tickers = ["AAA", "BBB", "CCC", "DDD", None]
    forms = ["10-K", "10-Q", "8-K"]
    out = []
    for i in range(n):
        y, m, d = 2021 + int(rng.integers(0, 3)), int(rng.integers(1, 13)), int(rng.integers(1, 29))
        out.append(Chunk(id=f"c{i:05d}", doc_id=f"d{i % 37}", parent_id="p", start=i, end=i + 1, parent_start=i,
                         parent_end=i + 1, section=None, text="x", ticker=tickers[i % 5], source=Source.SEC_EDGAR,
                         form=forms[int(rng.integers(0, 3))], filed_at=y * 10000 + m * 100 + d))
    return sorted(out, key=sort_key)


@pytest.fixture(scope="module")
def index() -> tuple[ExactVectorIndex, list[Chunk], np.ndarray]:
    rng = np.random.default_rng(7)
    chunks = random_chunks(3000, rng)
    vecs = rng.standard_normal((len(chunks), 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    table = {c.id: v for c, v in zip(chunks, vecs, strict=True)}
    del table[chunks[5].id]  # one chunk without a vector: never returned
    return ExactVectorIndex.build(chunks, table, 16, embedder="fake"), chunks, vecs


FILTERS = [
    None,
    FilterSpec(tickers=("BBB",), since=date(2022, 3, 1), until=date(2022, 9, 30)),  # contiguous ranges
    FilterSpec(tickers=("AAA", "DDD"), since=date(2022, 1, 1)),
    FilterSpec(until=date(2021, 6, 30)),  # one range per ticker
    FilterSpec(forms=("8-K",)),  # fragmented and large: full scan, then mask
    FilterSpec(doc_ids=("d3",)),  # fragmented and small: gather path
    FilterSpec(tickers=("CCC",), forms=("10-Q",), doc_ids=("d3", "d8")),
    FilterSpec(tickers=("",)),  # chunks without a ticker
    FilterSpec(tickers=("ZZZ",)),
]


@pytest.mark.parametrize("flt", FILTERS)
def test_exact_filtered_top_k_equals_brute_force(index, flt: FilterSpec | None) -> None:  # type: ignore[no-untyped-def]
    ix, chunks, vecs = index
    q = vecs[11] * 0.5 + vecs[12] * 0.5
    ok = [i for i, c in enumerate(chunks) if (flt is None or flt.matches(c)) and i != 5]
    sims = vecs[ok] @ q
    # best first, equal scores by chunk id (q scores rows 11 and 12 exactly alike): the index's rule, whatever
    # the row order
    order = sorted(range(len(ok)), key=lambda j: (-float(sims[j]), chunks[ok[j]].id))[:20]
    expected = [chunks[ok[j]].id for j in order]
    got = ix.search(q, 20, flt)
    assert [cid for cid, _ in got] == expected
    assert [s for _, s in got] == pytest.approx([float(sims[j]) for j in order], abs=1e-6)
    assert chunks[5].id not in {cid for cid, _ in ix.search(vecs[5], 3000, flt)}


def test_round_trip_memory_mapped(index, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ix, _, vecs = index
    ix.save(tmp_path)
    loaded = ExactVectorIndex.load(tmp_path, mmap=True)
    assert isinstance(loaded.matrix, np.memmap) and loaded.dim == 16 and loaded.embedder == "fake"
    assert loaded.fingerprint == ix.fingerprint is not None
    flt = FilterSpec(tickers=("AAA",))
    assert loaded.search(vecs[3], 10, flt) == ix.search(vecs[3], 10, flt)
    assert {p.suffix for p in tmp_path.rglob("*") if p.is_file()} <= {".npy", ".json", ""}


def test_rejects_wrong_dimensions_and_bad_files(index, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ix, _, _ = index
    with pytest.raises(ConfigError):
        ix.search(np.ones(8, dtype=np.float32), 5)
    with pytest.raises(ConfigError):
        ix.search(np.ones(16, dtype=np.float32), 0)
    with pytest.raises(IndexFormatError):
        ExactVectorIndex.load(tmp_path / "missing")
