"""Result-file helpers: provenance envelope, corpus signature, atomic JSON writes."""

from __future__ import annotations

import hashlib
import json
import re
import stat
import subprocess
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pytest

from equimind.core.research import Rating
from equimind.evaluation.report import (
    corpus_signature,
    dumps,
    git_dirty,
    git_sha,
    machine_info,
    package_versions,
    result_envelope,
    utc_timestamp,
    write_json,
)


def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture()
def tiny_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    return repo


def test_corpus_signature_is_order_free_and_deduplicated() -> None:
    sig = corpus_signature(["b", "a", "c"])
    assert sig == corpus_signature(["c", "a", "b", "a"])
    assert sig == hashlib.sha256(b"a\nb\nc").hexdigest()
    assert sig != corpus_signature(["a", "b"])
    assert corpus_signature(iter(["x"])) == hashlib.sha256(b"x").hexdigest()  # any iterable


def test_git_sha_of_a_real_repo_and_dirty_flag(tiny_repo: Path) -> None:
    head = _git(tiny_repo, "rev-parse", "HEAD")
    assert git_sha(tiny_repo) == head
    assert re.fullmatch(r"[0-9a-f]{40}", head)
    assert git_dirty(tiny_repo) is False
    (tiny_repo / "untracked.json").write_text("{}")
    assert git_dirty(tiny_repo) is False  # untracked result files do not count
    (tiny_repo / "a.txt").write_text("two\n")
    assert git_dirty(tiny_repo) is True


def test_git_sha_unknown_outside_a_repo(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=outside, capture_output=True).returncode == 0:
        pytest.skip(f"the temp dir {outside} lies inside a git checkout; set TMPDIR to a folder outside one")
    assert git_sha(outside) == "unknown"
    assert git_dirty(outside) is None


def test_machine_info_reports_real_versions() -> None:
    info = machine_info()
    assert info["cpu_count"] >= 1
    assert info["python"].count(".") == 2
    assert info["packages"]["numpy"] == np.__version__
    assert package_versions(["no-such-distribution-xyz"]) == {"no-such-distribution-xyz": None}


def test_utc_timestamp_is_iso_z_and_now() -> None:
    before = datetime.now(UTC).replace(microsecond=0)  # the stamp has whole seconds
    stamp = utc_timestamp()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before <= parsed <= after  # taken between the two readings, however long the call took


def test_result_envelope_wraps_config_and_metrics(tiny_repo: Path) -> None:
    config = {"mode": "hybrid", "k": 10}
    metrics = {"recall_any@10": 0.5}
    env = result_envelope(config, metrics, corpus=corpus_signature(["d1"]), repo=tiny_repo)
    assert env["config"] == config and env["metrics"] == metrics
    assert env["git"] == {"sha": _git(tiny_repo, "rev-parse", "HEAD"), "dirty": False}
    assert env["corpus_signature"] == corpus_signature(["d1"])
    assert env["schema_version"] == 1
    assert {"cpu_count", "platform", "python", "packages"} <= set(env["machine"])
    json.loads(dumps(env))  # serialisable as is


@dataclass(frozen=True)
class _Rec:
    when: date
    rating: Rating


def test_write_json_round_trips_common_result_types(tmp_path: Path) -> None:
    obj = {
        "f": np.float64(0.25),
        "i": np.int64(3),
        "arr": np.array([1.0, 2.0]),
        "rec": _Rec(date(2024, 1, 31), Rating.BUY),
        "path": Path("/x/y"),
        "ids": frozenset({"b", "a"}),
    }
    target = write_json(tmp_path / "deep" / "dir" / "result.json", obj)
    assert json.loads(target.read_text()) == {
        "f": 0.25,
        "i": 3,
        "arr": [1.0, 2.0],
        "rec": {"when": "2024-01-31", "rating": "BUY"},
        "path": "/x/y",
        "ids": ["a", "b"],
    }
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_write_json_refuses_nan_and_leaves_the_old_file_alone(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    write_json(target, {"ok": 1})
    with pytest.raises(ValueError, match="None instead"):
        write_json(target, {"bad": float("nan")})
    with pytest.raises(TypeError, match="cannot write object"):
        write_json(target, {"bad": object()})
    assert json.loads(target.read_text()) == {"ok": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]  # no temp files left behind


def test_write_json_replaces_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    write_json(target, {"v": 1})
    write_json(str(target), {"v": 2})
    assert json.loads(target.read_text()) == {"v": 2}


def test_write_json_cleans_up_its_temp_file_when_the_rename_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "result.json"
    blocker.mkdir()  # a directory where the file should go: the final rename fails after the temp file is written
    with pytest.raises(OSError):
        write_json(blocker, {"v": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
    assert blocker.is_dir()
