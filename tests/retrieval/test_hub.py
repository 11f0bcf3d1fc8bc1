"""`equimind models pull | list | verify` end to end against a loopback fake Hugging Face Hub (fake_hub.py).

The pulls run the real CLI in a subprocess with ``HF_ENDPOINT=http://127.0.0.1:PORT`` so huggingface_hub reads its own
variables (HF_ENDPOINT, HF_HUB_OFFLINE) exactly as for a user; the served model is a tiny cross-encoder built here.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_hub import FakeHub, FakeRepo, build_tiny_cross_encoder, repo_from_dir
from retrieval_corpus import TEXT_FORMAT, Stores, make_stores
from typer.testing import CliRunner

from equimind.app.engine import EquiMindEngine
from equimind.app.services import Services
from equimind.core.config import Settings
from equimind.core.errors import ConfigError
from equimind.embedding.hub import MANIFEST_NAME, PARTIAL_PREFIX, check_repo_id, model_dir, pulled_choice
from equimind.embedding.rerank import CrossEncoderReranker, unavailable_line
from equimind.interfaces.cli.main import app

REPO = "cross-encoder/ms-marco-MiniLM-L6-v2"
ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(scope="module")
def tiny_repo(tmp_path_factory: pytest.TempPathFactory) -> FakeRepo:
    return repo_from_dir(build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "model"))


@pytest.fixture()
def hub(tiny_repo: FakeRepo) -> Iterator[FakeHub]:
    server = FakeHub({REPO: tiny_repo}).start()
    yield server
    server.stop()


def pull(home: Path, endpoint: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``equimind models pull`` in a fresh process: huggingface_hub reads HF_ENDPOINT / HF_HUB_OFFLINE at import."""
    code = "import sys; from equimind.interfaces.cli.main import main; sys.argv = ['equimind', *sys.argv[1:]]; main()"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    full_env.update(PYTHONPATH=str(ROOT), HF_ENDPOINT=endpoint, HF_HOME=str(home.parent / "hf-home"),
                    NO_PROXY="127.0.0.1", EQUIMIND_HOME=str(home), **env)
    return subprocess.run([sys.executable, "-c", code, "models", "pull", *args], env=full_env, capture_output=True,
                          text=True, timeout=120)


def leftovers(home: Path) -> list[str]:
    models = home / "models"
    return sorted(p.name for p in models.iterdir()) if models.is_dir() else []


def services_over(stores: Stores) -> Services:
    """The product wiring (Services builds the reranker from settings) over the test corpus's stores."""
    return Services(stores.settings, stores.docstore, stores.vectors, stores.indexes,  # type: ignore[arg-type]
                    _embedder=stores.embedder, text_format=TEXT_FORMAT)


@pytest.mark.slow
@pytest.mark.integration
def test_pull_verify_then_search_reranks_with_the_pulled_model(hub: FakeHub, tiny_repo: FakeRepo,
                                                               tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = pull(home, hub.url, REPO)
    assert res.returncode == 0, res.stderr
    assert "Fetching 5 files" in res.stderr and "100%" in res.stderr  # huggingface_hub's progress bar
    assert f"pulled {REPO} @ {tiny_repo.commit} (5 files" in res.stdout
    folder = model_dir(home / "models", REPO)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["commit"] == tiny_repo.commit and manifest["endpoint"] == hub.url
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == {
        p: hashlib.sha256(b).hexdigest() for p, b in tiny_repo.files.items()}
    assert leftovers(home) == [folder.name]  # no partial folder, no HF cache left behind
    served = len(hub.requests)

    out = runner.invoke(app, ["models", "verify", REPO, "--home", str(home)])
    assert out.exit_code == 0, out.stdout + out.stderr
    assert "ok (5 files match sha256" in out.stdout and "loads ok; score" in out.stdout
    listed = runner.invoke(app, ["models", "list", "--json", "--home", str(home)])
    entry = next(e for e in json.loads(listed.stdout)["items"] if e["name"] == REPO)
    assert entry["source"] == "equimind-home" and entry["configured"] and entry["commit"] == tiny_repo.commit

    stores = make_stores(home)
    services = services_over(stores)
    result = services.searcher().search("supply chain constraints at foundry partners", mode="hybrid+rerank",
                                        top_k=5)
    assert not result.degraded
    assert all(h.scores.rerank_status == f"ok ({REPO})" for h in result.hits)
    direct = CrossEncoderReranker(REPO, path=folder).score("supply chain constraints at foundry partners",
                                                           [h.text for h in result.hits])
    assert [h.scores.rerank_score for h in result.hits] == pytest.approx(direct, abs=1e-5)
    long_passage = " ".join(["revenue grew on data center demand"] * 80)  # > 128 tokens: the 512-position path
    assert len(services.reranker.score("what drove revenue?", [long_passage])) == 1
    health = EquiMindEngine(services).health()
    assert health.reranker["available"] and not any(d.capability == "rerank" for d in health.degraded)
    assert len(hub.requests) == served  # verify, list and search made no request: only pull touches the network


@pytest.mark.slow
@pytest.mark.integration
def test_interrupted_download_leaves_no_model_and_a_second_pull_succeeds(hub: FakeHub, tmp_path: Path) -> None:
    home = tmp_path / "home"
    hub.drop = "model.safetensors"  # the server sends half the file, closes, and refuses to resume
    res = pull(home, hub.url, REPO)
    assert res.returncode == 2
    assert "interrupted" in res.stderr and REPO in res.stderr and hub.url in res.stderr
    assert "nothing was installed" in res.stderr
    assert leftovers(home) == []
    assert pulled_choice(home / "models", REPO) == (None, None)
    reranker = Services(Settings(home=home), None, None, None).reranker  # type: ignore[arg-type]
    assert not reranker.available  # the half model is never used

    hub.drop = None
    again = pull(home, hub.url, REPO)
    assert again.returncode == 0, again.stderr
    assert leftovers(home) == [model_dir(home / "models", REPO).name]
    assert Services(Settings(home=home), None, None, None).reranker.available  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.integration
def test_a_killed_pull_leaves_only_an_ignored_partial_folder(hub: FakeHub, tmp_path: Path) -> None:
    home = tmp_path / "home"
    hub.stall = "model.safetensors"  # half the file, then the server stalls: the process is killed mid-download
    code = "import sys; from equimind.interfaces.cli.main import main; sys.argv = ['equimind', *sys.argv[1:]]; main()"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(PYTHONPATH=str(ROOT), HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf-home"), NO_PROXY="127.0.0.1",
               EQUIMIND_HOME=str(home))
    proc = subprocess.Popen([sys.executable, "-c", code, "models", "pull", REPO], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not hub.stalled.is_set() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hub.stalled.is_set()
    finally:
        proc.kill()
        proc.wait()
        hub.release.set()
    left = leftovers(home)
    assert len(left) == 1 and left[0].startswith(PARTIAL_PREFIX)  # no model folder, only the partial one
    assert pulled_choice(home / "models", REPO) == (None, None)
    listed = runner.invoke(app, ["models", "list", "--home", str(home)])
    assert "(ignored) " + left[0] in listed.stdout and "source: missing" in listed.stdout

    hub.stall = None
    again = pull(home, hub.url, REPO)
    assert again.returncode == 0, again.stderr
    assert f"removed the leftover of an interrupted pull: {left[0]}" in again.stdout
    assert leftovers(home) == [model_dir(home / "models", REPO).name]


@pytest.mark.integration
def test_unknown_model_or_revision_is_a_clear_404(hub: FakeHub, tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = pull(home, hub.url, "cross-encoder/no-such-model")
    assert res.returncode == 2
    assert "model cross-encoder/no-such-model was not found at " + hub.url + " (HTTP 404)" in res.stderr
    res = pull(home, hub.url, REPO, "--revision", "v9")
    assert res.returncode == 2 and f"model {REPO} has no revision 'v9' at {hub.url} (HTTP 404)" in res.stderr
    assert leftovers(home) == []


@pytest.mark.integration
def test_no_network_and_offline_mode_are_clear_errors(hub: FakeHub, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    res = pull(home, dead, REPO)
    assert res.returncode == 2
    assert f"cannot reach {dead} to pull model {REPO} (ConnectError" in res.stderr and "HF_ENDPOINT" in res.stderr
    res = pull(home, hub.url, REPO, HF_HUB_OFFLINE="1")
    assert res.returncode == 2
    assert f"cannot pull model {REPO} from {hub.url}: HF_HUB_OFFLINE is set" in res.stderr
    assert hub.requests == []  # offline mode sent nothing
    assert leftovers(home) == []


@pytest.mark.slow
@pytest.mark.integration
def test_verify_detects_a_tampered_file_and_the_loaders_skip_it(hub: FakeHub, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert pull(home, hub.url, REPO).returncode == 0
    weights = model_dir(home / "models", REPO) / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # same size, one byte changed
    weights.write_bytes(bytes(data))
    out = runner.invoke(app, ["models", "verify", REPO, "--home", str(home)])
    assert out.exit_code == 1
    assert "CHANGED: model.safetensors: sha256" in out.stdout and "1 of 1 models failed" in out.stderr
    path, problem = pulled_choice(home / "models", REPO)
    assert path is None and problem is not None and "model.safetensors" in problem
    reranker = Services(Settings(home=home), None, None, None).reranker  # type: ignore[arg-type]
    assert not reranker.available and "is not used" in str(reranker.unavailable_reason)
    line = str(unavailable_line(reranker, str(reranker.unavailable_reason)))
    assert line.endswith(f"— run `equimind models pull {REPO}`")


def test_missing_reranker_line_names_the_pull_command(tmp_path: Path) -> None:
    reranker = Services(Settings(home=tmp_path / "home"), None, None, None).reranker  # type: ignore[arg-type]
    assert str(unavailable_line(reranker, str(reranker.unavailable_reason))) == (
        f"rerank: unavailable (model {REPO} not found locally; no network is used to load models) — run "
        f"`equimind models pull {REPO}`")


def test_model_names_are_checked() -> None:
    assert check_repo_id(" cross-encoder/x ") == "cross-encoder/x"
    for bad in ("no-slash", "a/b/c", "../etc", "/abs/path", "a/.."):
        with pytest.raises(ConfigError, match="org/name"):
            check_repo_id(bad)


def test_cli_help_and_import_load_no_model_library() -> None:
    code = ("import sys; from typer.testing import CliRunner; from equimind.interfaces.cli.main import app; "
            "r = CliRunner().invoke(app, ['models', '--help']); assert r.exit_code == 0, r.stdout; "
            "assert 'pull' in r.stdout and 'verify' in r.stdout; "
            "heavy = [m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'huggingface_hub', 'transformers', 'sentence_transformers', 'chromadb')]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_models_dir_is_fixed_at_construction(tmp_path: Path) -> None:
    base = Settings(home=tmp_path / "home")
    assert base.models_path == tmp_path / "home" / "models"
    sub = base.model_copy(update={"home": tmp_path / "home" / "eval" / "base"})  # evaluation / backtest stores
    assert sub.models_path == base.models_path  # they still find the models the user pulled
    assert Settings(home=tmp_path, models_dir=tmp_path / "m").models_path == tmp_path / "m"
