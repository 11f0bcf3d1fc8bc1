"""``equimind serve --workers N``: the refusal without a Chroma server, the Settings hand-over to the spawned workers
(``EQUIMIND_SERVE_SETTINGS``), the ``worker`` field of the health answer, and a real 2-worker server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from interfaces_fakes import fake_services, free_port
from pydantic import SecretStr
from typer.testing import CliRunner

from equimind.core.config import EmbedBackend, ProviderName, RetrievalMode, Settings
from equimind.core.errors import ConfigError
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.interfaces.api.app import (
    SERVE_SETTINGS_ENV,
    check_workers,
    create_app,
    create_app_from_env,
    settings_from_env,
    settings_to_json,
)
from equimind.interfaces.cli.app import build_settings
from equimind.interfaces.cli.main import app as cli_app
from equimind.security.trace import config_hash

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "chroma_server.sh"
TEST_CHROMA_ENV = "EQUIMIND_TEST_CHROMA_URL"
runner = CliRunner()


# ------------------------------------------------------------------------------------------- the Chroma-server check


def test_more_than_one_worker_needs_a_chroma_server() -> None:
    with pytest.raises(ConfigError) as refused:
        check_workers(2, None)
    message = str(refused.value)
    assert "single-process" in message and "would not see vectors another worker writes" in message  # the problem
    assert "scripts/chroma_server.sh start" in message and "EQUIMIND_CHROMA_URL" in message  # the fix
    with pytest.raises(ConfigError, match="single-process"):
        check_workers(4, "")


def test_one_worker_needs_nothing_and_several_run_with_a_chroma_url() -> None:
    check_workers(1, None)
    check_workers(1, "http://127.0.0.1:8001")
    check_workers(2, "http://127.0.0.1:8001")
    check_workers(8, "https://chroma.internal:443")


@pytest.mark.parametrize("workers", [0, -1])
def test_fewer_than_one_worker_is_refused(workers: int) -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        check_workers(workers, "http://127.0.0.1:8001")


def test_the_cli_lists_workers_and_refuses_them_without_a_chroma_server(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    helped = runner.invoke(cli_app, ["serve", "--help"])
    assert helped.exit_code == 0 and "--workers" in helped.stdout
    monkeypatch.delenv("EQUIMIND_CHROMA_URL", raising=False)
    refused = runner.invoke(cli_app, ["serve", "--workers", "2", "--home", str(tmp_path / "home")])
    assert refused.exit_code == 2
    assert "single-process" in refused.stderr and "scripts/chroma_server.sh start" in refused.stderr
    zero = runner.invoke(cli_app, ["serve", "--workers", "0", "--home", str(tmp_path / "home")])
    assert zero.exit_code == 2 and "at least 1" in zero.stderr


# ------------------------------------------------------------------------------ the Settings hand-over to the workers


def _non_default_settings(tmp_path: Path) -> Settings:
    snapshot = tmp_path / "corpus"
    snapshot.mkdir(exist_ok=True)
    return Settings(home=tmp_path / "home", snapshot=snapshot, chroma_url="http://127.0.0.1:8001",
                    openai_api_key=SecretStr("sk-round-trip"), audit_key="audit-key-0123", provider=ProviderName.OPENAI,
                    model="gpt-test", embed_backend=EmbedBackend.ONNX_INT8, embed_threads=1, top_k=7,
                    retrieval_mode=RetrievalMode.HYBRID, rrf_bm25_weight=0.45, hnsw_space="ip", debate_rounds=2,
                    collapse_parents=True, sec_max_rps=2.5)


def test_settings_round_trip_through_the_environment_variable(tmp_path: Path) -> None:
    settings = _non_default_settings(tmp_path)
    rebuilt = settings_from_env({SERVE_SETTINGS_ENV: settings_to_json(settings)})
    assert rebuilt == settings
    assert rebuilt.openai_api_key is not None and rebuilt.openai_api_key.get_secret_value() == "sk-round-trip"
    assert rebuilt.models_dir == settings.models_dir and rebuilt.onnx_cache_dir == settings.onnx_cache_dir


def test_the_workers_environment_overrides_nothing_the_parent_built(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent's Settings come from its environment and its options (build_settings); a worker gets every field
    from the JSON, so a variable that differs in the worker (or is missing there) changes nothing."""
    monkeypatch.setenv("EQUIMIND_CHROMA_URL", "http://127.0.0.1:8001")
    monkeypatch.setenv("EQUIMIND_TOP_K", "5")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent")
    parent = build_settings(tmp_path / "home", None)
    encoded = settings_to_json(parent)
    monkeypatch.setenv("EQUIMIND_TOP_K", "9")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
    monkeypatch.delenv("EQUIMIND_CHROMA_URL")
    monkeypatch.setenv(SERVE_SETTINGS_ENV, encoded)
    worker = settings_from_env()
    assert worker == parent and worker.top_k == 5 and worker.chroma_url == "http://127.0.0.1:8001"
    assert worker.openai_api_key is not None and worker.openai_api_key.get_secret_value() == "sk-parent"
    assert isinstance(create_app_from_env(), FastAPI)  # the factory uvicorn calls (no lifespan: nothing opened)


def test_the_json_carries_secrets_not_their_mask(tmp_path: Path) -> None:
    """The JSON carries the secret itself, not pydantic's '**********' mask (a worker would use the mask as key)."""
    settings = Settings(home=tmp_path / "home", anthropic_api_key=SecretStr("sk-ant-x"))
    values = json.loads(settings_to_json(settings))
    assert values["anthropic_api_key"] == "sk-ant-x" and "**********" not in json.dumps(values)


@pytest.mark.parametrize(("raw", "why"), [(None, "is not set"), ("", "is not set"), ("{not json", "valid settings"),
                                          ("[1, 2]", "JSON object"), ('{"top_k": 0}', "positive integer")])
def test_a_missing_or_invalid_value_is_a_clear_error(raw: str | None, why: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if raw is None:
        monkeypatch.delenv(SERVE_SETTINGS_ENV, raising=False)
    else:
        monkeypatch.setenv(SERVE_SETTINGS_ENV, raw)
    with pytest.raises(ConfigError, match=SERVE_SETTINGS_ENV) as err:
        create_app_from_env()
    assert why in str(err.value)


def test_health_names_the_worker_that_answered(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    with TestClient(create_app(settings, fake_services(settings))) as client:
        health = client.get("/api/v1/health").json()
        schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    assert health["worker"] == {"pid": os.getpid()} and health["status"] == "ok" and "trace" in health
    assert {"trace", "worker"} <= set(schema["TracedHealth"]["required"])


# ---------------------------------------------------------------------------------------- a real 2-worker server


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


@pytest.mark.slow
@pytest.mark.integration
def test_two_workers_answer_and_stop_together(tmp_path: Path, chroma_server_url: str) -> None:
    chroma_url = chroma_server_url
    home, port = tmp_path / "home", free_port()
    exe = Path(sys.executable).parent / "equimind"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "equimind.interfaces.cli.main"]
    env = {k: v for k, v in os.environ.items() if k != SERVE_SETTINGS_ENV}
    env.update({"EQUIMIND_CHROMA_URL": chroma_url, "EQUIMIND_TOP_K": "7"})  # an override every worker must carry
    log_path = tmp_path / "serve.log"
    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([*cmd, "serve", "--workers", "2", "--port", str(port), "--home", str(home)],
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        t0 = time.monotonic()
        answers: list[dict[str, Any]] = []
        while not answers:
            assert proc.poll() is None, f"serve exited {proc.returncode}:\n{log_path.read_text()[-3000:]}"
            assert time.monotonic() - t0 < 90, f"no health answer in 90 s:\n{log_path.read_text()[-3000:]}"
            try:
                res = httpx.get(f"{base}/api/v1/health", timeout=10)
                if res.status_code == 200:
                    answers.append(res.json())
            except httpx.HTTPError:
                time.sleep(0.25)
        ready_s = time.monotonic() - t0
        # ~30 requests, each on a new connection; keep going (up to 60 s) while the second worker may still warm up.
        pids: set[int] = set()
        deadline = time.monotonic() + 60
        while len(answers) < 30 or (len(pids) < 2 and time.monotonic() < deadline):
            answers.append(httpx.get(f"{base}/api/v1/health", timeout=30).json())
            pids = {a["worker"]["pid"] for a in answers}
        both_s = time.monotonic() - t0
        print(f"2-worker serve: first health answer after {ready_s:.1f} s, both workers after {both_s:.1f} s, "
              f"{len(answers)} requests")
        assert len(pids) == 2, (pids, log_path.read_text()[-3000:])
        assert proc.pid not in pids and all(_pgid(p) == proc.pid for p in pids)  # the parent's own workers
        expected = config_hash(Settings(home=home, chroma_url=chroma_url, top_k=7), PRODUCT_FORMAT.value)
        assert {a["trace"]["config_hash"] for a in answers} == {expected}
        assert {a["backend"]["vectors"] for a in answers} == {"chroma-server"}

        t_stop = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl+C in a terminal: the whole foreground group
        proc.wait(timeout=20)
        while _group_alive(proc.pid) and time.monotonic() - t_stop < 20:
            time.sleep(0.1)
        assert not _group_alive(proc.pid), f"workers outlived the parent:\n{log_path.read_text()[-3000:]}"
        print(f"2-worker serve: process group gone {time.monotonic() - t_stop:.1f} s after SIGINT")
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
