"""Rerankers: unavailable model reports why and never scores; a tiny locally built cross-encoder runs the real path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from retrieval_corpus import TEXT_FORMAT, Stores

from equimind.core.errors import ConfigError
from equimind.core.protocols import Reranker
from equimind.embedding.embed import default_model_path
from equimind.embedding.rerank import CrossEncoderReranker, FixedScoreReranker
from equimind.retrieval.search import HybridSearcher


def test_missing_hub_model_is_unavailable_without_network() -> None:
    r = CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L6-v2")
    assert isinstance(r, Reranker)
    assert r.available is False
    assert r.unavailable_reason is not None
    assert "cross-encoder/ms-marco-MiniLM-L6-v2 not found locally; no network" in r.unavailable_reason
    with pytest.raises(ConfigError, match="unavailable"):
        r.score("q", ["a passage"])


def test_an_absent_hub_model_is_known_absent_without_importing_torch() -> None:
    """The cold-start path (issue 16): the reranker finds out the model is not in the local cache without loading
    sentence-transformers (~9 s here), with the same reason and fix."""
    import subprocess
    import sys

    code = ("import sys; from equimind.embedding.rerank import CrossEncoderReranker as C; "
            "r = C('cross-encoder/ms-marco-MiniLM-L6-v2'); print(r.available, r.unavailable_fix); "
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    first, modules = out.stdout.strip().splitlines()
    assert first.startswith("False") and "equimind models pull cross-encoder/ms-marco-MiniLM-L6-v2" in first
    assert modules == "[]"


def test_fixed_score_reranker() -> None:
    r = FixedScoreReranker({"b": 2.0}, default=-1.0)
    assert r.available and r.unavailable_reason is None
    assert r.score("q", ["a", "b"]) == [-1.0, 2.0] and r.calls == [("q", 2)]
    off = FixedScoreReranker({}, unavailable="switched off for the test")
    assert not off.available and off.unavailable_reason == "switched off for the test"
    with pytest.raises(ConfigError):
        off.score("q", ["a"])


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide BERT sequence classifier (num_labels=1) with the MiniLM tokenizer, saved locally."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    out = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(default_model_path()), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.mark.slow
def test_real_cross_encoder_path_scores_and_reorders(tiny_cross_encoder: Path, stores: Stores) -> None:
    r = CrossEncoderReranker(str(tiny_cross_encoder), max_length=128)
    assert r.available, r.unavailable_reason
    texts = ["revenue grew strongly", "the cat sat on the mat", "export controls are a risk"]
    scores = r.score("what drove revenue?", texts)
    assert len(scores) == 3 and all(np.isfinite(scores))
    assert scores == r.score("what drove revenue?", texts)  # deterministic
    assert len(set(scores)) > 1

    searcher = HybridSearcher(stores.settings, stores.docstore, stores.vectors, stores.indexes, stores.embedder, r,
                              text_format=TEXT_FORMAT)
    res = searcher.search("supply chain constraints at foundry partners", mode="hybrid+rerank", top_k=10)
    assert not res.degraded and len(res.hits) == 10
    got = [h.scores.rerank_score for h in res.hits]
    assert got == sorted(got, reverse=True)  # type: ignore[type-var]
    again = r.score("supply chain constraints at foundry partners", [h.text for h in res.hits])
    assert again == pytest.approx(got, abs=1e-5)  # the order is the model's own scores
    assert all(h.scores.rerank_status == f"ok ({tiny_cross_encoder})" for h in res.hits)
