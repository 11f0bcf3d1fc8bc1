"""A missing cross-encoder: search, health and research all carry the command that lifts the degradation."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from equimind.app.engine import EquiMindEngine
from equimind.core.config import Settings

pytestmark = pytest.mark.integration

MODEL = "cross-encoder/ms-marco-MiniLM-L6-v2"
FIX = f" — run `equimind models pull {MODEL}`"


def test_every_rerank_degradation_names_the_pull_command(tmp_path: Path, corpus_dir: Path) -> None:
    from equimind.app.services import open_services
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer

    settings = Settings(home=tmp_path / "home", snapshot=corpus_dir)  # nothing pulled into home/models
    engine = EquiMindEngine(open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer()))
    line = f"rerank: unavailable (model {MODEL} not found locally; no network is used to load models){FIX}"
    health = engine.health()
    assert line in [str(d) for d in health.degraded] and health.reranker["fix"] == f"run `equimind models pull {MODEL}`"

    rec = engine.research("NVDA", "Is data-center growth sustainable?", date(2025, 9, 30))
    rerank = [d for d in rec.degraded if d.capability == "rerank"]
    assert rerank and all(d.reason.endswith(FIX) for d in rerank)
    engine.finish_indexing()  # what the CLI does once the answer is shown: no deferred-embeddings line after it
    result = engine.search("data center revenue", mode="hybrid+rerank")
    assert [str(d) for d in result.degraded] == [line]
