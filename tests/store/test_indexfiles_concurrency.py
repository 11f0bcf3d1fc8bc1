"""Versioned index directories with several writers and readers (threads or processes): a writer never removes
another live writer's temporary directory, and a reader whose version is replaced and removed mid-read retries on
the new one instead of failing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from equimind.store.indexfiles import CURRENT, IndexFormatError, read_versioned, write_versioned

KIND = "test-index"


def save(root: Path, payload: str) -> Path:
    def write(tmp: Path) -> None:
        tmp.mkdir(parents=True)
        (tmp / "payload.txt").write_text(payload)

    return write_versioned(root, KIND, 1, {"payload": payload}, write)


def read_payload(directory: Path, stamp: dict[str, object]) -> str:
    return (directory / "payload.txt").read_text()


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(proc.stdout)


def test_live_writers_temporary_directories_survive_another_writers_cleanup(tmp_path: Path) -> None:
    live = tmp_path / f".tmp-{os.getpid()}-v-inprogress"  # a writer in this process (another thread) at work
    crashed = tmp_path / f".tmp-{dead_pid()}-v-crashed"
    for d in (live, crashed):
        d.mkdir(parents=True)
        (d / "part.npy").write_bytes(b"half written")
    save(tmp_path, "one")
    assert live.is_dir() and not crashed.exists()


def test_failed_write_leaves_no_temporary_directory(tmp_path: Path) -> None:
    def broken(tmp: Path) -> None:
        tmp.mkdir(parents=True)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_versioned(tmp_path, KIND, 1, {}, broken)
    assert not any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())


def test_reader_retries_when_its_version_is_replaced_and_removed_mid_read(tmp_path: Path) -> None:
    save(tmp_path, "one")
    calls: list[str] = []

    def racing_read(directory: Path, stamp: dict[str, object]) -> str:
        calls.append(directory.name)
        if len(calls) == 1:  # two saves land while we read: ours is no longer current, nor the previous one
            save(tmp_path, "two")
            save(tmp_path, "three")
            assert not directory.exists()
        return read_payload(directory, stamp)

    assert read_versioned(tmp_path, KIND, 1, racing_read) == "three"
    assert len(calls) == 2 and calls[1] == (tmp_path / CURRENT).read_text().strip()


def test_a_current_version_that_is_missing_is_an_index_format_error_not_a_retry_loop(tmp_path: Path) -> None:
    version = save(tmp_path, "one")
    (version / "payload.txt").unlink()
    with pytest.raises(IndexFormatError, match="unreadable"):
        read_versioned(tmp_path, KIND, 1, read_payload)
