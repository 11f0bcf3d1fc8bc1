"""Opening vector stores on either backend in tests (used by ``vector_backend`` in conftest.py, and importable by
test modules and helper processes, unlike the conftest)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from equimind.core.config import Settings
from equimind.store.vectors import DEFAULT_COLLECTION, ChromaVectorStore

BACKENDS = ("embedded", "server")


@dataclass
class VectorBackend:
    """Opens vector stores on one backend; in server mode collection names get this test's unique suffix."""

    name: str
    root: Path
    url: str | None = None
    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    collections: set[str] = field(default_factory=set)

    @property
    def is_server(self) -> bool:
        return self.url is not None

    def collection(self, name: str = DEFAULT_COLLECTION) -> str:
        """The real collection name for a test's logical one (unique per test on the shared server)."""
        real = f"{name}-{self.suffix}" if self.is_server else name
        self.collections.add(real)
        return real

    def settings(self, **overrides: Any) -> Settings:
        """Settings with a fresh home; ``chroma_url`` is set in server mode (so ``from_settings`` picks the server)."""
        home = self.root / f"home-{uuid.uuid4().hex[:6]}"
        return Settings(home=home, chroma_url=self.url, **overrides)

    def open(self, collection: str = "test_chunks", **hnsw: Any) -> ChromaVectorStore:
        if self.url is not None:
            return ChromaVectorStore.http(self.url, self.collection(collection), **hnsw)
        return ChromaVectorStore.persistent(self.root / "chroma", self.collection(collection), **hnsw)

    def from_settings(self, settings: Settings, collection: str = DEFAULT_COLLECTION) -> ChromaVectorStore:
        return ChromaVectorStore.from_settings(settings, self.collection(collection))

    def drop_collections(self) -> None:
        if self.url is None or not self.collections:
            return
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        parsed = urlparse(self.url)
        client = chromadb.HttpClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                                     ssl=parsed.scheme == "https", settings=ChromaSettings(anonymized_telemetry=False))
        existing = {c.name for c in client.list_collections()}
        for name in self.collections & existing:
            client.delete_collection(name)
