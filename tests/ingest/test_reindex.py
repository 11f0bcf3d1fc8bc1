"""Embedding stamp on real stores: written on first ingest, mismatches refused before any write, reindex converts a
store (vectors, stamp, search) and a crash half-way leaves the old stamp for a re-run to finish."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from equimind.app.services import Services, open_services
from equimind.core.config import Settings
from equimind.core.documents import Document, Origin, Section, Source
from equimind.core.errors import ConfigError
from equimind.embedding.embed import HashEmbedder
from equimind.ingest.chunk import embedding_text
from equimind.ingest.embed_format import (
    PRODUCT_FORMAT,
    EmbeddingStamp,
    EmbedFormat,
    read_stamp,
)
from equimind.ingest.tokens import WhitespaceTokenizer
from equimind.store.reindex import Reindexer

PRODUCT = PRODUCT_FORMAT.value

pytestmark = pytest.mark.integration

QUERY = "Zephyr1 Holdings"  # words of document 1's title only: no chunk text contains them


def _doc(i: int, words: int = 300) -> Document:
    body = " ".join(f"w{i}_{j % 89} revenue growth" if j % 11 else f"Sentence {j}." for j in range(words))
    text = f"Item 7. Results\n{body}"
    key = f"reindex-test:{i}"
    return Document(id=Document.make_id(key, text), source_key=key, ticker="TST", cik="1", company="Test Co",
                    source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form="10-K", filed_at=date(2024, 1, i + 1),
                    period_end=None, url=None, title=f"Zephyr{i} Holdings annual report", text=text,
                    sections=(Section("Item 7. Results", 0, len(text)),))


def _services(home: Path, text_format: str | None = None) -> Services:
    return open_services(Settings(home=home, child_tokens=40, parent_tokens=160, embed_batch_size=16),
                         embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(), text_format=text_format)


def _state(s: Services) -> tuple[dict[str, int], int, tuple[str, str] | None]:
    return s.docstore.counts(), s.vectors.count(), s.docstore.embedding_stamp()


def _legacy_store(home: Path) -> Services:
    """A store as written before stamps existed: chunk-text vectors and no stamp in the docstore."""
    _services(home, "chunk-text-v0").pipeline().run([_doc(i) for i in range(3)])
    with sqlite3.connect(home / "docstore.sqlite") as conn:
        conn.execute("DELETE FROM meta WHERE key IN ('embed_model', 'embed_text_format')")
    return _services(home)


def _expected_vectors(s: Services) -> tuple[list[str], np.ndarray[Any, Any]]:
    ids, texts = [], []
    for ref in s.docstore.list_documents():
        doc = s.docstore.get_document(ref.doc_id)
        for c in s.docstore.chunks_for_document(doc.id):
            ids.append(c.id)
            texts.append(embedding_text(c, doc.title))
    return ids, HashEmbedder().embed(texts)


def test_new_store_takes_the_stamp_of_its_first_ingest(tmp_path: Path) -> None:
    s = _services(tmp_path / "h")
    assert read_stamp(s.docstore) is None
    report = s.pipeline().run([_doc(0)])
    assert report.text_format == PRODUCT and report.chunks_added > 0
    assert read_stamp(s.docstore) == EmbeddingStamp("hash-384", PRODUCT_FORMAT)
    ids, want = _expected_vectors(s)
    got = s.vectors.get_vectors(ids)
    assert np.allclose(np.stack([got[i] for i in ids]), want, atol=1e-6)  # the product embeds title | section


def test_legacy_store_is_detected_and_ingest_refused_before_any_write(tmp_path: Path) -> None:
    s = _legacy_store(tmp_path / "h")
    assert read_stamp(s.docstore) == EmbeddingStamp(None, EmbedFormat.CHUNK_TEXT_V0, legacy=True)
    before = _state(s)
    with pytest.raises(ConfigError, match=rf"stored as chunk-text-v0, current is {PRODUCT}.*equimind reindex"):
        s.pipeline().run([_doc(7), _doc(8)])
    assert _state(s) == before and not s.docstore.has_document(_doc(7).id)


def test_store_stamped_with_another_embedder_is_refused(tmp_path: Path) -> None:
    s = _services(tmp_path / "h")
    s.pipeline().run([_doc(0)])
    other = open_services(s.settings, embedder=HashEmbedder(dim=384, salt="x"), tokenizer=WhitespaceTokenizer())
    other._embedder.name = "hash-other"  # type: ignore[union-attr]
    before = _state(s)
    with pytest.raises(ConfigError, match=r"embedder hash-384.*embedder hash-other"):
        other.pipeline().run([_doc(1)])
    assert _state(s) == before


def test_reindex_converts_vectors_stamp_and_search(tmp_path: Path) -> None:
    s = _legacy_store(tmp_path / "h")
    searcher = s.searcher()  # the same searcher (and its cached matrix) before and after
    old = searcher.search(QUERY, mode="dense", top_k=5)
    assert [str(d) for d in old.degraded] == [f"embeddings: stored as chunk-text-v0, current is {PRODUCT}; "
                            "run `equimind reindex`"]
    assert searcher.search(QUERY, mode="bm25", top_k=5).degraded == []  # BM25 does not use the vectors
    assert s.searcher().search(QUERY, mode="dense", top_k=5).hits[0].scores.dense_score < 0.2  # type: ignore[operator]

    counts = s.docstore.counts()
    report = s.reindex()
    assert report.reindexed and report.documents == counts["documents"] and report.chunks == counts["chunks"]
    assert report.previous == {"embedder": None, "text_format": "chunk-text-v0", "legacy": True}
    assert report.seconds > 0 and {"embed", "vectors", "indexes"} <= set(report.timings_s)
    assert read_stamp(s.docstore) == EmbeddingStamp("hash-384", PRODUCT_FORMAT)
    ids, want = _expected_vectors(s)
    got = s.vectors.get_vectors(ids)
    assert np.allclose(np.stack([got[i] for i in ids]), want, atol=1e-6)

    new = searcher.search(QUERY, mode="dense", top_k=5)
    assert new.degraded == []
    assert {h.document.doc_id for h in new.hits} == {_doc(1).id}  # the title now reaches the vectors
    q = HashEmbedder().embed_query(QUERY)
    top = new.hits[0]
    assert top.scores.dense_score == pytest.approx(float(q @ want[ids.index(top.chunk_id)]), abs=1e-5)
    assert s.pipeline().run([_doc(5)]).documents_added == 1  # and ingest is accepted again
    assert s.reindex().reindexed is False  # already up to date


class _Crash(RuntimeError):
    pass


class CrashingEmbedder(HashEmbedder):
    def __init__(self, after: int) -> None:
        super().__init__()
        self.calls, self.after = 0, after

    def embed(self, texts: Any) -> Any:
        self.calls += 1
        if self.calls > self.after:
            raise _Crash("killed")
        return super().embed(texts)


def test_crash_mid_reindex_keeps_the_old_stamp_and_a_rerun_finishes(tmp_path: Path) -> None:
    s = _legacy_store(tmp_path / "h")
    crashing = Reindexer(s.docstore, s.vectors, CrashingEmbedder(after=2), s.settings.bm25_path,
                         text_format=PRODUCT, batch_size=8)
    with pytest.raises(_Crash):
        crashing.run()
    assert read_stamp(s.docstore) is not None and read_stamp(s.docstore).legacy  # type: ignore[union-attr]
    assert s.searcher().search(QUERY, mode="dense").degraded  # still reported as mismatched
    assert s.reindex().reindexed
    ids, want = _expected_vectors(s)
    got = s.vectors.get_vectors(ids)
    assert np.allclose(np.stack([got[i] for i in ids]), want, atol=1e-6)
    assert s.searcher().search(QUERY, mode="dense").degraded == []


def test_reindex_of_an_empty_store_only_stamps_it(tmp_path: Path) -> None:
    s = _services(tmp_path / "h")
    report = s.reindex()
    assert not report.reindexed and report.previous is None and report.chunks == 0
    assert s.docstore.embedding_stamp() == ("hash-384", PRODUCT)


def test_health_reports_the_stamp_and_a_mismatch_until_reindexed(tmp_path: Path) -> None:
    from equimind.app.engine import EquiMindEngine
    from equimind.embedding.rerank import FixedScoreReranker

    _legacy_store(tmp_path / "h")
    s = _services(tmp_path / "h")
    s._reranker = FixedScoreReranker({})
    note = f"embeddings: stored as chunk-text-v0, current is {PRODUCT}; run `equimind reindex`"
    health = EquiMindEngine(s).health()
    assert health.status == "degraded" and note in [str(d) for d in health.degraded]
    assert health.embedder["stored"] == {"embedder": None, "text_format": "chunk-text-v0", "legacy": True}
    s.reindex()
    health = EquiMindEngine(s).health()
    assert note not in health.degraded and health.embedder["text_format"] == PRODUCT
    assert health.embedder["stored"] == {"embedder": "hash-384", "text_format": PRODUCT, "legacy": False}
