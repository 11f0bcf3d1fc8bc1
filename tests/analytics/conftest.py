"""Fixtures shared by the analytics tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.config import Settings


@pytest.fixture(scope="module")
def snap(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings over the recorded snapshot, with a home of the test module's own."""
    return Settings(home=tmp_path_factory.mktemp("home"), snapshot=corpus_dir, shared=corpus_dir.parent)
