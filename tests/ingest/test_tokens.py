"""Tokenizers: the real embedder tokenizer counts whole texts (no truncation); the whitespace fake is exact."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.errors import ConfigError
from equimind.core.protocols import Tokenizer
from equimind.ingest.tokens import HFTokenizer, WhitespaceTokenizer


@pytest.fixture(scope="module")
def hf() -> HFTokenizer:
    return HFTokenizer.from_model_dir()


def test_whitespace_tokenizer_spans_and_count() -> None:
    tok = WhitespaceTokenizer()
    assert isinstance(tok, Tokenizer)
    assert tok.token_spans("  ab c\n\nd ") == [(2, 4), (5, 6), (8, 9)]
    assert tok.count("  ab c\n\nd ") == 3 and tok.count("") == 0


def test_hf_tokenizer_counts_long_texts_without_truncation(hf: HFTokenizer) -> None:
    assert isinstance(hf, Tokenizer) and hf.name == "all-MiniLM-L6-v2"
    text = " ".join(f"revenue{i % 7} grew" for i in range(600))
    spans = hf.token_spans(text)
    assert hf.count(text) == len(spans) > 1000  # the model itself would stop at 128/256 tokens
    assert spans[-1][1] == len(text), "offsets reach the end of a long text"


def test_hf_token_spans_are_character_offsets_without_special_tokens(hf: HFTokenizer) -> None:
    text = "Café revenue — $130,497 million."
    spans = hf.token_spans(text)
    assert all(0 <= s < e <= len(text) for s, e in spans), "no zero-width [CLS]/[SEP] spans"
    pieces = [text[s:e] for s, e in spans]
    assert pieces[:2] == ["Café", "revenue"]
    assert "$" in pieces and "130" in pieces
    assert hf.token_spans("") == [] and hf.count("") == 0


def test_missing_model_dir_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tokenizer\.json"):
        HFTokenizer.from_model_dir(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(ConfigError, match="could not load tokenizer"):
        HFTokenizer.from_model_dir(tmp_path)
