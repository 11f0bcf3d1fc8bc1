"""Filtered BM25 uses the filter's own term statistics: unrelated rows change nothing (issue 15)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from equimind.core.documents import Chunk, FilterSpec, Source
from equimind.store.sparse import BM25Index

TEXTS = [
    "revenue grew on strong demand for accelerators",
    "revenue declined in the retail segment as stores closed",
    "capital expenditure for property plant and equipment rose",
    "purchases of property and equipment were funded by operating cash flow",
    "the board approved a dividend and share repurchases",
    "lease liabilities and pension obligations increased",
]


def chunk(i: int, text: str, ticker: str) -> Chunk:
    return Chunk(id=f"{ticker}-{i:03d}", doc_id=f"{ticker}-d{i}", parent_id="p", start=0, end=len(text),
                 parent_start=0, parent_end=len(text), section=None, text=text, ticker=ticker,
                 source=Source.SEC_EDGAR, form="10-K", filed_at=20240101)


def own() -> list[Chunk]:
    return [chunk(i, t, "AAA") for i, t in enumerate(TEXTS)]


def unrelated(n: int) -> list[Chunk]:
    """Other tickers' rows that use the query words a lot (they would shift idf and avgdl of a shared index)."""
    words = ["revenue property equipment", "capital expenditure revenue revenue", "dividend lease " * 12]
    return [chunk(i, words[i % 3] + f" filler{i}", "ZZZ") for i in range(n)]


QUERIES = ["revenue demand", "capital expenditure property equipment", "pension lease", "dividend repurchases"]


@pytest.mark.parametrize("query", QUERIES)
def test_filtered_scores_equal_an_index_of_the_filtered_rows_alone(query: str) -> None:
    alone = BM25Index().build(own()).search(query, 10)
    shared = BM25Index().build([*unrelated(30), *own(), *unrelated(7)])
    filtered = shared.search(query, 10, FilterSpec(tickers=("AAA",)))
    assert [c for c, _ in filtered] == [c for c, _ in alone] and alone
    assert [s for _, s in filtered] == pytest.approx([s for _, s in alone], rel=1e-5)
    unfiltered = dict(shared.search(query, 50))  # the unfiltered path keeps the statistics of everything
    assert any(unfiltered.get(c) != pytest.approx(s, rel=1e-3) for c, s in alone)


def test_a_filter_admitting_every_row_gives_bm25s_own_scores() -> None:
    rows = [*own(), *unrelated(12)]
    ix = BM25Index().build(rows)
    everything = FilterSpec(forms=("10-K",))  # admits all rows, so the subset statistics are the global ones
    for query in QUERIES:
        plain, masked = ix.search(query, 20), ix.search(query, 20, everything)
        assert [c for c, _ in masked] == [c for c, _ in plain]
        assert [s for _, s in masked] == pytest.approx([s for _, s in plain], rel=1e-5)


def test_saved_postings_reload_and_serve_the_same_filtered_scores(tmp_path: Path) -> None:
    ix = BM25Index().build([*unrelated(9), *own()])
    ix.save(tmp_path)
    flt = FilterSpec(tickers=("AAA",))
    for mmap in (False, True):
        loaded = BM25Index.load(tmp_path, mmap=mmap)
        for query in QUERIES:
            assert loaded.search(query, 10, flt) == ix.search(query, 10, flt)
    assert (tmp_path / (tmp_path / "CURRENT").read_text().strip() / "postings" / "tf.npy").exists()


def test_postings_hold_the_term_frequencies_bm25s_saw() -> None:
    ix = BM25Index().build([chunk(0, "revenue revenue growth", "AAA"), chunk(1, "growth of revenue", "AAA")])
    post = ix._postings
    assert post is not None
    vocab = ix._bm25.vocab_dict
    t = vocab["revenu"]
    rows = post.rows[post.indptr[t]: post.indptr[t + 1]]
    assert list(rows) == [0, 1] and list(post.tf[post.indptr[t]: post.indptr[t + 1]]) == [2, 1]
    assert list(post.doc_len) == [3, 2]  # "of" is a stop word
    assert np.all(np.diff(post.indptr) >= 0)


def test_a_fragmented_filter_scores_the_same_as_a_contiguous_one() -> None:
    """More admitted runs than the range path takes (rows interleaved with another ticker): the mask lookup path."""
    rows: list[Chunk] = []
    for i in range(300):
        rows += [chunk(i, TEXTS[i % len(TEXTS)], "AAA"), chunk(i, "revenue lease dividend filler", "ZZZ")]
    interleaved = BM25Index().build(rows)
    alone = BM25Index().build([c for c in rows if c.ticker == "AAA"])
    for query in QUERIES:
        got = interleaved.search(query, 20, FilterSpec(tickers=("AAA",)))
        want = alone.search(query, 20)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5) and got
