"""A Chroma server for the tests (the root conftest's session fixture ``chroma_server_url``; importable, unlike a
conftest): ``EQUIMIND_TEST_CHROMA_URL`` when set (CI starts one with ``scripts/chroma_server.sh``), otherwise one
server per test session started through that script when the ``chroma`` executable is available, otherwise a skip
that says why."""

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

CHROMA_URL_ENV = "EQUIMIND_TEST_CHROMA_URL"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "chroma_server.sh"


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


def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Yields the URL of a running Chroma server (see the module docstring for where it comes from)."""
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
