"""The audit chain's anchor in the shared PostgreSQL store: a log deleted or rolled back together with its tip on
one host is detected by the next append, and the anchor row carries the tip's HMAC."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from equimind.security.audit import AuditLog
from equimind.security.chain import AuditError
from equimind.store.audit_anchor import PgAnchor

KEY = "anchor-test-key-0123456789abcdef"


def test_anchor_follows_the_tip_and_catches_a_rollback(pg_url: str, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, KEY, anchor=PgAnchor(pg_url, path, host="host-a"))
    for i in range(3):
        log.append({"event": "tool_call", "n": i})
    anchor = PgAnchor(pg_url, path, host="host-a")
    tip = anchor.read(KEY.encode())
    assert tip is not None and tip.seq == 3
    saved = tmp_path / "saved"
    saved.mkdir()
    shutil.copy(path, saved / "audit.jsonl")
    shutil.copy(f"{path}.tip", saved / "audit.jsonl.tip")
    log.append({"event": "tool_call", "n": 3})
    # roll the log and its tip back to seq 3 together: the files agree with each other, the anchor does not
    shutil.copy(saved / "audit.jsonl", path)
    shutil.copy(saved / "audit.jsonl.tip", f"{path}.tip")
    with pytest.raises(AuditError, match=r"anchor .* says seq 4"):
        log.append({"event": "tool_call", "n": 4})
    # deleted outright: the same
    path.unlink()
    Path(f"{path}.tip").unlink()
    with pytest.raises(AuditError, match="deleted, rolled back or replaced"):
        log.append({"event": "tool_call", "n": 5})
    # another host's log with the same path has an anchor of its own
    other = AuditLog(tmp_path / "b" / "audit.jsonl", KEY, anchor=PgAnchor(pg_url, tmp_path / "b" / "audit.jsonl",
                                                                          host="host-b"))
    assert other.append({"event": "tool_call"}).seq == 1


def test_an_edited_anchor_row_is_refused(pg_url: str, tmp_path: Path) -> None:
    import psycopg

    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, KEY, anchor=PgAnchor(pg_url, path, host="h"))
    log.append({"event": "x"})
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE audit_anchors SET seq = 9")
    with pytest.raises(AuditError, match="fails its HMAC"):
        log.append({"event": "y"})
