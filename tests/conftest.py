"""Shared fixtures. The recorded corpus lives in ../shared (EQUIMIND_SHARED); tests that need it skip clearly, and
under CI (CI=true) every skip is a failure that keeps its reason (tests/ci_skip_policy.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["ci_skip_policy"]

REPO_ROOT = Path(__file__).resolve().parent.parent


def _shared() -> Path:
    return Path(os.environ.get("EQUIMIND_SHARED", str(REPO_ROOT.parent / "shared"))).resolve()


def pytest_configure(config: pytest.Config) -> None:
    """With pytest-xdist workers (``make test``: ``-n 2``, one worker a core), one OpenMP / BLAS thread in each worker
    and in the processes its tests start (torch, OpenBLAS): two workers of two threads each would oversubscribe the
    2-core machine. Set before the workers start, so they inherit it; a value already in the environment is kept."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session", autouse=True)
def shared_onnx_cache(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One ONNX export of the embedder for the whole session (the default backend builds it once per
    ``onnx_cache_dir``; every test home would otherwise rebuild it). Subprocesses inherit it through the environment.
    A test of the default location unsets it. Under pytest-xdist (``make test`` runs ``-n 2``) the workers share one
    folder in the run's temp root: builds hold a ``flock`` and publish with ``os.replace`` (embedding/onnx_export.py),
    so the export is built once per run, not once per worker."""
    old = os.environ.get("EQUIMIND_ONNX_CACHE_DIR")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        cache = tmp_path_factory.getbasetemp().parent / "onnx-exports"  # the run's root, above each worker's basetemp
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("onnx-exports")
    os.environ["EQUIMIND_ONNX_CACHE_DIR"] = str(cache)
    yield Path(os.environ["EQUIMIND_ONNX_CACHE_DIR"])
    if old is None:
        os.environ.pop("EQUIMIND_ONNX_CACHE_DIR", None)
    else:
        os.environ["EQUIMIND_ONNX_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    path = _shared()
    if not (path / "corpus").is_dir():
        pytest.skip(f"recorded data not found at {path}; set EQUIMIND_SHARED to the shared/ folder")
    return path


@pytest.fixture(scope="session")
def corpus_dir(shared_dir: Path) -> Path:
    return shared_dir / "corpus"


@pytest.fixture(scope="session")
def recorded_documents(corpus_dir: Path) -> list[Any]:
    """The 12 recorded 10-K / 10-Q filings parsed once per session by the ingest layer (``snapshot_documents``:
    ~1 s a filing); tests read them, never change them (Documents are frozen)."""
    from equimind.evaluation.golden import snapshot_documents

    return list(snapshot_documents(corpus_dir))


@pytest.fixture(scope="session")
def financebench_dir(shared_dir: Path) -> Path:
    path = shared_dir / "benchmarks" / "financebench"
    if not path.is_dir():
        pytest.skip(f"FinanceBench dev split not found at {path}; it is part of shared/ (EQUIMIND_SHARED)")
    return path


@pytest.fixture()
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Settings with a fresh EQUIMIND_HOME in a temp dir (does not require the shared data)."""
    from equimind.core.config import Settings

    return Settings(home=tmp_path / "home", shared=_shared())


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A PostgreSQL server for the session (tests/pg_server.py): EQUIMIND_TEST_PG_URL when set (.ci/run starts one;
    it must answer SELECT 1), else a throwaway cluster started by scripts/postgres.sh and stopped at the end. Has
    ``.url`` and ``.pid_file`` (None for EQUIMIND_TEST_PG_URL). Skips, naming the fix, without PostgreSQL binaries."""
    from pg_server import pg_url_or_skip

    server = pg_url_or_skip(tmp_path_factory)
    yield server
    server.stop()


@pytest.fixture()
def pg_url(pg_server):  # type: ignore[no-untyped-def]
    """The URL of a new, empty database of its own on ``pg_server`` (dropped afterwards, WITH (FORCE))."""
    from pg_server import database_name, drop_database, fresh_database

    url = fresh_database(pg_server.url)
    yield url
    from equimind.store.pg import close_pool

    close_pool(url)  # this process's pool on it, before the database goes
    drop_database(pg_server.url, database_name(url))


@pytest.fixture(scope="session")
def chroma_server_url(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """URL of a running Chroma server (tests/chroma_server.py: EQUIMIND_TEST_CHROMA_URL, else one started for the
    session by scripts/chroma_server.sh, else a skip naming the fix)."""
    from chroma_server import chroma_server

    yield from chroma_server(tmp_path_factory)
