"""Fixtures for the interface tests: one NVDA store built per session (recorded 10-K, fake embedder), copied per test
module that writes to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from interfaces_fakes import copy_home, ingest

from equimind.core.config import Settings


@pytest.fixture(scope="session")
def nvda_template(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Path:
    """An EQUIMIND_HOME holding NVDA's recorded 10-K, indexed with the hash embedder. Never written after this."""
    home = tmp_path_factory.mktemp("nvda_template") / "home"
    report = ingest(Settings(home=home, snapshot=corpus_dir), corpus_dir, ("NVDA",), ("10-K",))
    assert report.documents_added == 1 and not report.documents_failed, report
    return home


@pytest.fixture(scope="module")
def nvda_home(tmp_path_factory: pytest.TempPathFactory, nvda_template: Path) -> Path:
    """A private copy of the template for one test module (research runs write memory, figures, fetched data)."""
    return copy_home(nvda_template, tmp_path_factory.mktemp("nvda_home") / "home")


@pytest.fixture(scope="module")
def nvda_settings(nvda_home: Path, corpus_dir: Path) -> Settings:
    return Settings(home=nvda_home, snapshot=corpus_dir, shared=corpus_dir.parent, provider="offline")
