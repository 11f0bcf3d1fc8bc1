"""Embedders: the hash fake (fast) and the real bundled all-MiniLM-L6-v2 (one slow test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from equimind.core.errors import ConfigError
from equimind.core.protocols import Embedder
from equimind.embedding.embed import HashEmbedder, SentenceTransformerEmbedder


def test_hash_embedder_is_a_deterministic_normalised_bag_of_words() -> None:
    e = HashEmbedder(dim=128)
    assert isinstance(e, Embedder)
    m = e.embed(["Revenue grew strongly", "revenue GREW", "the cat sat on the mat", ""])
    assert m.shape == (4, 128) and m.dtype == np.float32
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(m, e.embed(["Revenue grew strongly", "revenue GREW", "the cat sat on the mat", ""]))
    assert float(m[0] @ m[1]) > 0.7 > abs(float(m[0] @ m[2]))
    assert np.array_equal(e.embed_query("revenue grew"), m[1])
    assert e.embed([]).shape == (0, 128)
    assert not np.array_equal(HashEmbedder(128, salt="other").embed(["revenue"]), e.embed(["revenue"]))
    with pytest.raises(ConfigError):
        HashEmbedder(dim=0)


def test_missing_model_is_a_config_error_naming_model_and_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        SentenceTransformerEmbedder(str(tmp_path / "not-a-model"))
    assert "not-a-model" in str(err.value) and "EQUIMIND_EMBED_MODEL" in str(err.value)


@pytest.mark.slow
def test_bundled_minilm_embeds_384d_unit_vectors_with_meaning() -> None:
    e = SentenceTransformerEmbedder(batch_size=2)
    assert isinstance(e, Embedder) and e.dim == 384 and e.name == "all-MiniLM-L6-v2"
    m = e.embed(["Quarterly revenue increased", "Sales grew this quarter", "The cat sat on the mat"])
    assert m.shape == (3, 384) and m.dtype == np.float32
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert float(m[0] @ m[1]) > float(m[0] @ m[2]) + 0.2
    assert np.allclose(e.embed_query("Quarterly revenue increased"), m[0], atol=1e-5)
