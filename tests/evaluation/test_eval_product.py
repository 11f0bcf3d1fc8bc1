"""The ``product`` block scores exactly what ``equimind search`` returns (EquiMindEngine.search over the cells
store, the product's embedding text, filter parsed from the question), and ``--variants cells`` alone builds one
store."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from equimind.app.engine import EquiMindEngine
from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.embedding.rerank import FixedScoreReranker
from equimind.evaluation.golden import build_queries, load_golden, run_golden
from equimind.evaluation.runner import open_variant_store, stored_documents
from equimind.ingest.tokens import WhitespaceTokenizer

pytestmark = pytest.mark.integration

FILINGS = {("NFLX", "10-Q", date(2025, 7, 18))}


def _run(tmp_path: Path, corpus_dir: Path, variants: tuple[str, ...]) -> dict:  # type: ignore[type-arg]
    settings = Settings(home=tmp_path / "home")
    return run_golden(settings, corpus_dir, tmp_path / "cache", variants=variants, arms=("hybrid",),
                      settings_names=("shared_parsed",), filings=FILINGS, embedder=HashEmbedder(),
                      reranker=FixedScoreReranker({}, unavailable="no cross-encoder in tests"),
                      tokenizer=WhitespaceTokenizer())


def test_product_block_is_engine_search_over_the_product_store_alone(tmp_path: Path, corpus_dir: Path) -> None:
    result = _run(tmp_path, corpus_dir, ("cells",))
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["cells"]  # no other store was built
    assert result["config"]["product_block"] == "product"
    block = result["metrics"]["product"]
    assert block["variant"] == "cells" and block["mode"] == ["hybrid+rerank"]
    assert any("rerank: unavailable" in d for d in block["degraded"])
    assert block["n_questions"] >= 3 and block["auto_filtered"] == block["n_questions"]  # each names Netflix
    assert "product_minus_cells_shared_parsed_hybrid" in block

    # The same questions through the engine by hand: the same per-question scores.
    services, _ = open_variant_store(Settings(home=tmp_path / "cache" / "cells"), "cells", list,
                                     lambda docs: True, embedder=HashEmbedder(),
                                     reranker=FixedScoreReranker({}, unavailable="none"),
                                     tokenizer=WhitespaceTokenizer())
    engine = EquiMindEngine(services)
    queries = build_queries(load_golden(), stored_documents(services), "shared")
    by_hand = [q.judge(list(engine.search(q.text, top_k=10).hits)) for q in queries]
    assert [row["id"] for row in block["per_query"]] == [q.id for q in queries]
    assert [row["recall@10"] for row in block["per_query"]] == [float(any(j.matches[:10])) for j in by_hand]
    assert sum(row["recall@10"] for row in block["per_query"]) > 0


def test_without_the_product_store_the_product_block_says_why(tmp_path: Path, corpus_dir: Path) -> None:
    result = _run(tmp_path, corpus_dir, ("statement",))
    assert result["config"]["product_block"] is None
    assert "--variants cells" in result["metrics"]["product"]["unavailable"]
