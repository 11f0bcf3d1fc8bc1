"""BM25 index: filter inside the leg, persistence, format version, atomic replace."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from equimind.core.documents import Chunk, FilterSpec, Source
from equimind.core.errors import ConfigError
from equimind.store.indexfiles import CURRENT, IndexFormatError, fingerprint
from equimind.store.sparse import BM25Index


def chunk(i: int, text: str, ticker: str, filed_at: int = 20240101, form: str = "10-K") -> Chunk:
    return Chunk(id=f"c{i:03d}", doc_id=f"d{i}", parent_id="p", start=0, end=len(text), parent_start=0,
                 parent_end=len(text), section=None, text=text, ticker=ticker, source=Source.SEC_EDGAR, form=form,
                 filed_at=filed_at)


@pytest.fixture(scope="module")
def corpus() -> list[Chunk]:
    strong = [chunk(i, "revenue revenue revenue growth guidance", "AAA") for i in range(40)]
    weak = chunk(40, "a long passage about litigation, leases, pensions, and once: revenue", "BBB", 20230601)
    other = chunk(41, "pension obligations and lease liabilities", "BBB", 20230601)
    return [*strong, weak, other]


def test_filter_is_applied_inside_the_leg(corpus: list[Chunk]) -> None:
    ix = BM25Index().build(corpus)
    unfiltered = [cid for cid, _ in ix.search("revenue", 10)]
    assert "c040" not in unfiltered and len(unfiltered) == 10  # ranked far below k without a filter
    hits = ix.search("revenue", 10, FilterSpec(tickers=("BBB",)))
    assert [cid for cid, _ in hits] == ["c040"]  # found, and the non-matching BBB chunk (score 0) is not returned
    assert ix.search("revenue", 10, FilterSpec(tickers=("BBB",), since=date(2024, 1, 1))) == []
    assert ix.search("revenue", 5, FilterSpec(forms=("10-Q",))) == []


def test_scores_stemming_stopwords_and_arguments(corpus: list[Chunk]) -> None:
    ix = BM25Index().build(corpus)
    hits = ix.search("pensions lease", 5)
    assert {cid for cid, _ in hits} == {"c040", "c041"}  # "pensions" ~ "pension", "lease" ~ "leases" by stemming
    assert all(s > 0 for _, s in hits) and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert ix.search("the and of", 5) == []  # stop words only
    assert ix.search("zzzunknown", 5) == []
    with pytest.raises(ConfigError):
        ix.search("revenue", 0)
    assert BM25Index().build([]).search("revenue", 5) == []


def test_save_load_round_trip_is_inspectable(corpus: list[Chunk], tmp_path: Path) -> None:
    ix = BM25Index().build(corpus)
    ix.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert loaded.fingerprint == ix.fingerprint == fingerprint(c.id for c in reversed(corpus))
    assert len(loaded) == len(corpus)
    lazy = BM25Index(tmp_path)  # a handle bound to the directory loads on first use
    assert lazy.exists() and lazy.search("pension", 3) == ix.search("pension", 3)
    flt = FilterSpec(tickers=("BBB",))
    assert loaded.search("revenue pension", 10, flt) == ix.search("revenue pension", 10, flt)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} <= {".json", ".npy", ""}  # CURRENT has no suffix; never a pickle
    for p in files:
        if p.suffix == ".npy":
            np.load(p, allow_pickle=False)
    empty_root = tmp_path / "empty"
    BM25Index().build([]).save(empty_root)
    assert BM25Index.load(empty_root).search("revenue", 3) == []


def test_format_version_mismatch_says_reindex(corpus: list[Chunk], tmp_path: Path) -> None:
    directory = BM25Index().build(corpus).save(tmp_path)
    stamp = json.loads((directory / "format.json").read_text())
    stamp["format_version"] = 999
    (directory / "format.json").write_text(json.dumps(stamp))
    with pytest.raises(IndexFormatError, match="reindex"):
        BM25Index.load(tmp_path)
    with pytest.raises(IndexFormatError, match="no equimind-bm25 index"):
        BM25Index.load(tmp_path / "nothing-here")
    assert not BM25Index(tmp_path / "nothing-here").exists()
    with pytest.raises(ConfigError, match="build"):
        BM25Index().search("revenue", 3)


def test_save_swaps_atomically_and_keeps_one_previous_version(corpus: list[Chunk], tmp_path: Path) -> None:
    one, two, three = (BM25Index().build(corpus[:n]) for n in (10, 42, 5))
    first = one.save(tmp_path)
    (tmp_path / ".tmp-crashed-writer").mkdir()  # a writer that died half-way is never read
    (tmp_path / ".tmp-crashed-writer" / "garbage.npy").write_bytes(b"not an array")
    assert BM25Index.load(tmp_path).fingerprint == one.fingerprint
    second = two.save(tmp_path)
    assert (tmp_path / CURRENT).read_text().strip() == second.name
    assert BM25Index.load(tmp_path).fingerprint == two.fingerprint
    third = three.save(tmp_path)
    versions = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert versions == sorted([second.name, third.name])  # the previous one survives for in-flight readers
    assert not first.exists() and not (tmp_path / ".tmp-crashed-writer").exists()
