"""Shared helpers for the interface tests: fake-model services over real stores, and a live uvicorn server.

Imported by the conftest and by ``mcp_fake_server.py`` (which runs in a subprocess), so it depends on nothing but
EquiMind and the standard library.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from equimind.app.services import Services, open_services
from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.embedding.rerank import FixedScoreReranker
from equimind.ingest.tokens import WhitespaceTokenizer

AUDIT_KEY = "interfaces-test-audit-key-0123456789"
AS_OF = "2025-06-30"  # after NVDA's recorded 10-K (filed 2025-02-26), inside the recorded price history
_WORD = re.compile(r"[a-z0-9]+")


def overlap_score(query: str, text: str) -> float:
    """Fixed-score reranker function: the share of query words that occur in the passage."""
    q = set(_WORD.findall(query.lower()))
    return len(q & set(_WORD.findall(text.lower()))) / max(1, len(q))


def fake_services(settings: Settings) -> Services:
    """Real SQLite/Chroma/BM25 stores with the hash embedder, a word-overlap reranker and whitespace tokens."""
    return open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(),
                         reranker=FixedScoreReranker(overlap_score, name="word-overlap"))


def ingest(settings: Settings, corpus: Path, tickers: tuple[str, ...], forms: tuple[str, ...]) -> Any:
    from equimind.ingest.documents import documents
    from equimind.sources.snapshot import SnapshotFilingsSource

    services = fake_services(settings)
    try:
        raw = SnapshotFilingsSource(corpus).iter_results(tickers=tickers, forms=forms)
        return services.pipeline().run(documents(raw))
    finally:
        services.docstore.close()


def copy_home(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest)
    return dest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a background thread; yields the base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
