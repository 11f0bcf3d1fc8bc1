"""Evaluation variant stores carry the embedding stamp of their variant (base: chunk text, context: title|section)."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest

from equimind.core.config import Settings
from equimind.core.documents import Document, Origin, Section, Source
from equimind.embedding.embed import HashEmbedder
from equimind.embedding.rerank import FixedScoreReranker
from equimind.evaluation.runner import open_variant_store
from equimind.ingest.tokens import WhitespaceTokenizer

pytestmark = pytest.mark.integration


def _docs() -> list[Document]:
    text = "Item 7. Results\n" + " ".join(f"Revenue rose {j} percent." for j in range(40))
    return [Document(id=Document.make_id("v:0", text), source_key="v:0", ticker="TST", cik=None, company=None,
                     source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=date(2024, 1, 2),
                     period_end=None, url=None, title="Test 10-K", text=text,
                     sections=(Section("Item 7. Results", 0, len(text)),))]


def _open(home: Path, variant: str):  # type: ignore[no-untyped-def]
    settings = Settings(home=home, child_tokens=60, parent_tokens=200)
    return open_variant_store(settings, variant, _docs, lambda docs: len(docs) == 1, embedder=HashEmbedder(),
                              reranker=FixedScoreReranker({}), tokenizer=WhitespaceTokenizer())


@pytest.mark.parametrize(("variant", "fmt"), [("base", "chunk-text-v0"), ("context", "title-section-v1")])
def test_variant_store_is_stamped_and_searched_without_mismatch(tmp_path: Path, variant: str, fmt: str) -> None:
    services, summary = _open(tmp_path / variant, variant)
    assert summary["cached"] is False and summary["text_format"] == fmt
    assert services.docstore.embedding_stamp() == ("hash-384", fmt)
    assert services.searcher().search("revenue", mode="dense").degraded == []


def test_unstamped_cached_variant_store_is_adopted_not_mixed(tmp_path: Path) -> None:
    home = tmp_path / "context"
    services, _ = _open(home, "context")
    services.docstore.close()
    with sqlite3.connect(home / "docstore.sqlite") as conn:  # as the harness left it before stamps existed
        conn.execute("DELETE FROM meta WHERE key IN ('embed_model', 'embed_text_format')")
    services, summary = _open(home, "context")
    assert summary == {"cached": True, "stamp": "adopted"}
    assert services.docstore.embedding_stamp() == ("hash-384", "title-section-v1")


def test_fusion_sweep_reruns_hybrid_per_bm25_weight_paired_with_the_configured_run(tmp_path: Path) -> None:
    from equimind.evaluation.metrics import Judgement
    from equimind.evaluation.runner import EvalQuery, fusion_sweep, run_arm

    services, _ = _open(tmp_path / "base", "base")

    def judge(hits):  # type: ignore[no-untyped-def]  # relevant: the chunk holding "Revenue rose 7 percent."
        return Judgement(tuple(frozenset({"g"}) if "rose 7 percent" in h.text else frozenset() for h in hits), 1)

    queries = [EvalQuery(f"q{i}", q, "t", None, judge) for i, q in enumerate(["revenue rose 7 percent", "results"])]
    hybrid = run_arm(services.searcher(), queries, "hybrid")
    configured = services.settings.rrf_bm25_weight
    other = 1.0 if configured != 1.0 else 0.3
    out = fusion_sweep(services, queries, hybrid, {"same": {"rrf_bm25_weight": configured},
                                                   "other": {"rrf_bm25_weight": other}})
    assert out["configured"] == {"dense": services.settings.rrf_dense_weight, "bm25": configured,
                                 "collapse_parents": False}
    assert set(out["arms"]) == {"same", "other"}
    same = out["arms"]["same"]["configured_minus_this"]["recall_any@10"]
    assert same == {"diff": 0.0, "ci_low": 0.0, "ci_high": 0.0}  # the configured weights re-run give the same ranks
    assert out["arms"]["other"]["summary"]["n"] == 2
