"""The audit log: append format, durability checks, and that verify catches each kind of tampering."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from equimind.core.config import Settings
from equimind.core.errors import ConfigError, NotFoundError
from equimind.security.audit import AuditLog
from equimind.security.chain import GENESIS_HASH, AuditError, canonical_json, line_hash, record_hmac
from equimind.security.verify import ProblemKind, verify_audit_log

KEY = "test-audit-key-0123456789abcdef"
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "audit" / "audit.jsonl"


def _write(path: Path, n: int, key: str = KEY) -> AuditLog:
    log = AuditLog(path, key)
    for i in range(n):
        log.append({"kind": "call", "tool": "search_filings", "args": {"query": f"q{i}"}})
    return log


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _put(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _kinds(path: Path, key: str = KEY) -> set[tuple[int | None, ProblemKind]]:
    return {(p.seq, p.kind) for p in verify_audit_log(path, key).problems}


def _forge_like(path: Path, key: str, seq: int, prev_hash: str) -> bytes:
    """Copy the first record's key_id and write a correctly MAC'd record with the given seq and prev_hash."""
    first = json.loads(_lines(path)[0])
    body = {"kind": "call", "tool": "forged", "args": {}, "v": 1, "seq": seq, "ts": first["ts"],
            "key_id": first["key_id"], "prev_hash": prev_hash}
    body["hmac"] = record_hmac(key.encode(), body)
    return canonical_json(body)


# ---------------------------------------------------------------------------------------------------------------
# Keys and settings


def test_missing_key_refuses_with_fix(log_path: Path) -> None:
    with pytest.raises(ConfigError, match="EQUIMIND_AUDIT_KEY"):
        AuditLog(log_path, None)
    with pytest.raises(ConfigError, match="at least 16"):
        AuditLog(log_path, "short")


def test_from_settings_needs_audit_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="EQUIMIND_AUDIT_KEY is not set"):
        AuditLog.from_settings(Settings(home=tmp_path / "home", audit_key=None))
    log = AuditLog.from_settings(Settings(home=tmp_path / "home", audit_key=KEY))
    assert log.path == tmp_path / "home" / "audit.jsonl"
    assert KEY not in repr(log)


# ---------------------------------------------------------------------------------------------------------------
# Appending


def test_append_chains_records_and_writes_tip(log_path: Path) -> None:
    log = _write(log_path, 3)
    lines = _lines(log_path)
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["prev_hash"] == GENESIS_HASH
    assert records[1]["prev_hash"] == line_hash(lines[0])
    assert records[2]["prev_hash"] == line_hash(lines[1])
    for line, rec in zip(lines, records, strict=True):
        assert canonical_json(rec) == line  # stored in canonical form
        body = {k: v for k, v in rec.items() if k != "hmac"}
        assert rec["hmac"] == record_hmac(KEY.encode(), body)
    tip = json.loads(log.tip_path.read_text())
    assert (tip["seq"], tip["hash"]) == (3, line_hash(lines[2]))


def test_append_returns_the_record(log_path: Path) -> None:
    rec = AuditLog(log_path, KEY).append({"kind": "call", "tool": "t"})
    assert rec.seq == 1
    assert rec.hash == line_hash(_lines(log_path)[0])
    assert rec.body["tool"] == "t"


def test_reserved_fields_are_rejected(log_path: Path) -> None:
    with pytest.raises(ValueError, match="reserved"):
        AuditLog(log_path, KEY).append({"seq": 99})
    assert not log_path.exists()


def test_unwritable_path_raises_audit_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    with pytest.raises(AuditError, match="could not write"):
        AuditLog(blocker / "audit.jsonl", KEY).append({"kind": "call"})


def test_long_records_are_read_back_across_blocks(log_path: Path) -> None:
    log = AuditLog(log_path, KEY)
    log.append({"blob": "x" * 150_000})
    log.append({"blob": "y" * 70_000})
    log.append({"kind": "after"})
    report = verify_audit_log(log_path, KEY)
    assert report.ok and report.records == 3


def test_concurrent_processes_append_one_chain(log_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from equimind.security.audit import AuditLog
        log = AuditLog(Path({str(log_path)!r}), {KEY!r})
        for i in range(20):
            log.append({{"kind": "call", "writer": sys.argv[1], "i": i}})
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(w)], cwd=REPO_ROOT) for w in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    report = verify_audit_log(log_path, KEY)
    assert report.ok, report.problems
    assert report.records == 80
    writers = [json.loads(line)["writer"] for line in _lines(log_path)]
    assert sorted(set(writers)) == ["0", "1", "2", "3"]


def test_concurrent_threads_append_one_chain(log_path: Path) -> None:
    import threading

    log = AuditLog(log_path, KEY)
    threads = [threading.Thread(target=lambda: [log.append({"i": i}) for i in range(10)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = verify_audit_log(log_path, KEY)
    assert report.ok and report.records == 40


# ---------------------------------------------------------------------------------------------------------------
# Verifying: clean, then one test per kind of damage


def test_clean_log_verifies(log_path: Path) -> None:
    log = _write(log_path, 5)
    report = log.verify()
    assert report.ok
    assert report.problems == []
    assert (report.records, report.last_seq) == (5, 5)
    assert report.last_hash == line_hash(_lines(log_path)[-1])


def test_empty_log_file_verifies(log_path: Path) -> None:
    log_path.parent.mkdir(parents=True)
    log_path.touch()
    report = verify_audit_log(log_path, KEY)
    assert report.ok and report.records == 0 and report.last_seq is None


def test_missing_log_is_not_found(log_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no audit log"):
        verify_audit_log(log_path, KEY)


def test_edited_record_fails_hmac(log_path: Path) -> None:
    _write(log_path, 5)
    lines = _lines(log_path)
    rec = json.loads(lines[2])
    rec["args"]["query"] = "something else"
    lines[2] = canonical_json(rec)
    _put(log_path, lines)
    kinds = _kinds(log_path)
    assert (3, ProblemKind.BAD_HMAC) in kinds
    assert (4, ProblemKind.BROKEN_CHAIN) in kinds  # the next record chained to the original bytes


def test_deleted_record_leaves_a_gap(log_path: Path) -> None:
    _write(log_path, 5)
    lines = _lines(log_path)
    del lines[2]  # seq 3
    _put(log_path, lines)
    kinds = _kinds(log_path)
    assert (4, ProblemKind.SEQ_GAP) in kinds
    assert (4, ProblemKind.BROKEN_CHAIN) in kinds
    assert not any(k is ProblemKind.BAD_HMAC for _, k in kinds)


def test_reordered_records_are_detected(log_path: Path) -> None:
    _write(log_path, 5)
    lines = _lines(log_path)
    lines[1], lines[2] = lines[2], lines[1]
    _put(log_path, lines)
    kinds = _kinds(log_path)
    assert (2, ProblemKind.SEQ_ORDER) in kinds
    assert (3, ProblemKind.BROKEN_CHAIN) in kinds
    assert (2, ProblemKind.BROKEN_CHAIN) in kinds


def test_record_appended_out_of_chain_is_detected_even_with_the_key(log_path: Path) -> None:
    log = _write(log_path, 3)
    lines = _lines(log_path)
    forged = _forge_like(log_path, KEY, seq=4, prev_hash=line_hash(lines[0]))  # valid MAC, wrong link
    _put(log_path, [*lines, forged])
    kinds = _kinds(log_path)
    assert kinds == {(4, ProblemKind.BROKEN_CHAIN), (None, ProblemKind.TIP_BEHIND)}
    with pytest.raises(AuditError, match="tip says seq 3"):  # the damaged log is not extended
        log.append({"kind": "call"})
    # Even if the forger also rewrites the tip, the chain still exposes the record.
    forged_tip = {"v": 1, "seq": 4, "hash": line_hash(forged), "key_id": json.loads(lines[0])["key_id"]}
    forged_tip["hmac"] = record_hmac(KEY.encode(), forged_tip)
    log.tip_path.write_bytes(canonical_json(forged_tip) + b"\n")
    assert _kinds(log_path) == {(4, ProblemKind.BROKEN_CHAIN)}


def test_replayed_record_is_detected(log_path: Path) -> None:
    _write(log_path, 3)
    lines = _lines(log_path)
    _put(log_path, [*lines, lines[1]])
    kinds = _kinds(log_path)
    assert (2, ProblemKind.SEQ_ORDER) in kinds
    assert (2, ProblemKind.BROKEN_CHAIN) in kinds


def test_record_forged_without_the_key_fails_hmac(log_path: Path) -> None:
    _write(log_path, 2)
    lines = _lines(log_path)
    forged = _forge_like(log_path, "an-attacker-guessed-key-000000", seq=3, prev_hash=line_hash(lines[1]))
    _put(log_path, [*lines, forged])
    assert (3, ProblemKind.BAD_HMAC) in _kinds(log_path)


def test_truncated_tail_is_detected_and_blocks_appends(log_path: Path) -> None:
    log = _write(log_path, 5)
    _put(log_path, _lines(log_path)[:3])
    report = verify_audit_log(log_path, KEY)
    assert not report.ok
    assert {(p.seq, p.kind) for p in report.problems} == {(5, ProblemKind.TRUNCATED)}
    before = log_path.read_bytes()
    with pytest.raises(AuditError, match="tip says seq 5"):
        log.append({"kind": "call"})
    assert log_path.read_bytes() == before


def test_torn_last_line_is_detected_and_blocks_appends(log_path: Path) -> None:
    log = _write(log_path, 3)
    raw = log_path.read_bytes()
    log_path.write_bytes(raw[:-20])
    kinds = {k for _, k in _kinds(log_path)}
    assert kinds == {ProblemKind.TORN_TAIL, ProblemKind.TRUNCATED}
    with pytest.raises(AuditError, match="partial line"):
        log.append({"kind": "call"})


def test_deleted_log_with_tip_is_truncated(log_path: Path) -> None:
    log = _write(log_path, 2)
    log_path.unlink()
    assert _kinds(log_path) == {(2, ProblemKind.TRUNCATED)}
    with pytest.raises(AuditError, match="empty or missing"):
        log.append({"kind": "call"})


def test_missing_tip_is_reported_and_blocks_appends(log_path: Path) -> None:
    log = _write(log_path, 2)
    log.tip_path.unlink()
    assert _kinds(log_path) == {(None, ProblemKind.TIP_MISSING)}
    with pytest.raises(AuditError, match="tip file"):
        log.append({"kind": "call"})


def test_edited_tip_is_invalid(log_path: Path) -> None:
    log = _write(log_path, 2)
    tip = json.loads(log.tip_path.read_text())
    tip["seq"] = 1
    log.tip_path.write_text(json.dumps(tip))
    assert _kinds(log_path) == {(None, ProblemKind.TIP_INVALID)}
    with pytest.raises(AuditError, match="HMAC"):
        log.append({"kind": "call"})


def test_wrong_key_is_reported_as_key_mismatch(log_path: Path) -> None:
    _write(log_path, 2)
    kinds = _kinds(log_path, key="another-key-entirely-000000")
    assert (1, ProblemKind.KEY_MISMATCH) in kinds and (2, ProblemKind.KEY_MISMATCH) in kinds
    assert (None, ProblemKind.TIP_INVALID) in kinds


def test_garbage_line_is_malformed(log_path: Path) -> None:
    _write(log_path, 2)
    lines = _lines(log_path)
    _put(log_path, [lines[0], b"not json", lines[1]])
    report = verify_audit_log(log_path, KEY)
    assert any(p.kind is ProblemKind.MALFORMED and p.line == 2 for p in report.problems)


def test_crash_before_tip_update_is_reported_then_caught_up(log_path: Path) -> None:
    log = _write(log_path, 2)
    old_tip = log.tip_path.read_bytes()
    log.append({"kind": "call"})
    log.tip_path.write_bytes(old_tip)  # as if the process died between the line fsync and the tip rename
    assert _kinds(log_path) == {(None, ProblemKind.TIP_BEHIND)}
    log.append({"kind": "call"})  # the authentic, chained tail is accepted and the tip catches up
    report = verify_audit_log(log_path, KEY)
    assert report.ok and report.records == 4
