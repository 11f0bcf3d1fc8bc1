"""Fixtures for retrieval tests (the corpus builder lives in retrieval_corpus.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_corpus import Stores, make_stores


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Stores:
    """A shared, read-only corpus (24 documents, 96 chunks). Tests that mutate use ``fresh_stores``."""
    return make_stores(tmp_path_factory.mktemp("corpus") / "home")


@pytest.fixture()
def fresh_stores(tmp_path: Path) -> Stores:
    return make_stores(tmp_path / "home")
