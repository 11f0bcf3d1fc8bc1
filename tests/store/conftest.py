"""Store fixtures: a real Chroma server for server-mode tests, and ``vector_backend`` — the same tests run against the
embedded ``PersistentClient`` and against a Chroma server (``ChromaVectorStore.http``).

Server: the session fixture ``chroma_server_url`` (tests/conftest.py). Each test gets collections of its own on the
server (a unique name suffix), deleted afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_backends import BACKENDS, VectorBackend


@pytest.fixture(params=BACKENDS)
def vector_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorBackend]:
    """Parametrizes a test over the embedded and the server backend."""
    url = request.getfixturevalue("chroma_server_url") if request.param == "server" else None
    backend = VectorBackend(request.param, tmp_path, url)
    try:
        yield backend
    finally:
        backend.drop_collections()
