"""Engine fixtures: real SQLite/Chroma/bm25s in temp dirs, the recorded corpus, fast fake embedder and tokenizer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from equimind.app.engine import EquiMindEngine
from equimind.core.config import Settings


@pytest.fixture()
def make_engine(tmp_path: Path, corpus_dir: Path) -> Callable[..., EquiMindEngine]:
    from equimind.app.services import open_services
    from equimind.embedding.embed import HashEmbedder
    from equimind.embedding.rerank import FixedScoreReranker
    from equimind.ingest.tokens import WhitespaceTokenizer

    def make(home: Path | None = None, corpus: Path | None = None, **overrides: object) -> EquiMindEngine:
        settings = Settings(home=home or tmp_path / "home", snapshot=corpus or corpus_dir, **overrides)
        services = open_services(settings, embedder=HashEmbedder(),
                                 reranker=FixedScoreReranker({}, unavailable="no cross-encoder in tests"),
                                 tokenizer=WhitespaceTokenizer())
        return EquiMindEngine(services)

    return make
