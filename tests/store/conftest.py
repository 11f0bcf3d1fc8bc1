"""Store fixtures: a real Chroma server for server-mode tests, and ``vector_backend`` — the same tests run against the
embedded ``PersistentClient`` and against a Chroma server (``ChromaVectorStore.http``).

Server: ``EQUIMIND_TEST_CHROMA_URL`` when set (CI starts one with ``scripts/chroma_server.sh``); otherwise one
server per test session started through that script when the ``chroma`` executable is available; otherwise the
server-mode tests skip, saying why. Each test gets collections of its own on the server (a unique name suffix),
deleted afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_backends import BACKENDS, VectorBackend

CHROMA_URL_ENV = "EQUIMIND_TEST_CHROMA_URL"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "chroma_server.sh"


def heartbeat(url: str, timeout_s: float) -> bool:
    """True once ``url`` answers Chroma's v2 heartbeat (polling until ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


def chroma_executable() -> str | None:
    beside = Path(sys.executable).parent / "chroma"
    return str(beside) if beside.exists() else shutil.which("chroma")


@pytest.fixture(scope="session")
def chroma_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a running Chroma server (see the module docstring for where it comes from)."""
    given = os.environ.get(CHROMA_URL_ENV, "").strip().rstrip("/")
    if given:
        if not heartbeat(given, timeout_s=10):
            pytest.fail(f"{CHROMA_URL_ENV}={given} does not answer /api/v2/heartbeat; start the server "
                        f"(bash {SCRIPT} start) or unset {CHROMA_URL_ENV}")
        yield given
        return
    chroma = chroma_executable()
    if chroma is None:
        pytest.skip(f"server-mode test: no `chroma` executable beside {sys.executable} or on PATH, and "
                    f"{CHROMA_URL_ENV} is not set; install chromadb or point {CHROMA_URL_ENV} at a server")
    pid_file = tmp_path_factory.mktemp("chroma-server") / "chroma.pid"
    env = {**os.environ, "CHROMA_BIN": chroma}
    started = subprocess.run(["bash", str(SCRIPT), "start", "--pid-file", str(pid_file)], capture_output=True,
                             text=True, timeout=120, env=env, check=False)
    if started.returncode != 0:
        pytest.fail(f"could not start a Chroma server with {SCRIPT}: {started.stderr.strip()}")
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", "--pid-file", str(pid_file)], capture_output=True, timeout=60,
                       env=env, check=False)


@pytest.fixture(params=BACKENDS)
def vector_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorBackend]:
    """Parametrizes a test over the embedded and the server backend."""
    url = request.getfixturevalue("chroma_server_url") if request.param == "server" else None
    backend = VectorBackend(request.param, tmp_path, url)
    try:
        yield backend
    finally:
        backend.drop_collections()
