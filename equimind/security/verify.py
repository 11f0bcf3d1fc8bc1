"""Verifying an audit log: every record's HMAC, seq and chain link, and the tip (``equimind audit verify``).

Read-only: it takes a shared lock when the lock file exists, so a concurrent append is seen whole or not at all.
Format: ``security.chain``; guarantees and limits: docs/decisions/0004-gate-and-audit.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from equimind.core.errors import NotFoundError
from equimind.security.chain import (
    GENESIS_HASH,
    RECORD_FIELDS,
    AuditError,
    Tip,
    check_key,
    key_id,
    line_hash,
    parse_record,
    read_tip,
    record_hmac,
)

MAX_PROBLEMS = 1000


class ProblemKind(StrEnum):
    MALFORMED = "malformed"  # not a JSON object with int seq and str prev_hash/key_id/hmac
    BAD_HMAC = "bad_hmac"  # the record was edited (or forged without the key)
    KEY_MISMATCH = "key_mismatch"  # written under another key (or its key_id was edited)
    SEQ_GAP = "seq_gap"  # seq jumped forward: records were deleted
    SEQ_ORDER = "seq_order"  # seq repeated or went backwards: records reordered or replayed
    BROKEN_CHAIN = "broken_chain"  # prev_hash is not the hash of the line before it
    TORN_TAIL = "torn_tail"  # the last line is incomplete (interrupted write or cut mid-record)
    TRUNCATED = "truncated"  # the tip names a seq past the end of the log: the tail was cut off
    TIP_MISMATCH = "tip_mismatch"  # the record at the tip's seq is not the one the tip names
    TIP_BEHIND = "tip_behind"  # records follow the tip's record (appended outside append(), or a crash)
    TIP_MISSING = "tip_missing"  # a non-empty log without its tip file
    TIP_INVALID = "tip_invalid"  # the tip file is malformed or fails its HMAC


class AuditProblem(BaseModel):
    seq: int | None = Field(description="The record's seq when it could be read, else None.")
    line: int | None = Field(description="1-based line number in the log, None for problems of the whole log.")
    kind: ProblemKind
    detail: str


class AuditReport(BaseModel):
    path: str
    ok: bool
    records: int = Field(description="Lines that parsed as records (authentic or not).")
    last_seq: int | None
    last_hash: str | None
    problems: list[AuditProblem] = Field(default_factory=list)
    problems_truncated: bool = Field(default=False, description=f"More than {MAX_PROBLEMS} problems; rest omitted.")


class _Scan:
    """State of one pass over the log."""

    def __init__(self, key: bytes, tip: Tip | None) -> None:
        self.key = key
        self.kid = key_id(key)
        self.tip = tip
        self.tip_line: int | None = None
        self.prev_hash = GENESIS_HASH
        self.max_seq = 0
        self.records = 0
        self.lines = 0
        self.last: Tip | None = None
        self.problems: list[AuditProblem] = []
        self.truncated = False

    def add(self, seq: int | None, line: int | None, kind: ProblemKind, detail: str) -> None:
        if len(self.problems) >= MAX_PROBLEMS:
            self.truncated = True
            return
        self.problems.append(AuditProblem(seq=seq, line=line, kind=kind, detail=detail))

    def line(self, lineno: int, raw: bytes) -> None:
        self.lines = lineno
        h = line_hash(raw)
        rec = parse_record(raw, RECORD_FIELDS)
        if rec is None:
            self.add(None, lineno, ProblemKind.MALFORMED, "not a JSON record with seq, prev_hash, key_id and hmac")
            self.prev_hash = h
            return
        seq: int = rec["seq"]
        self._authentic(rec, seq, lineno)
        if seq > self.max_seq + 1:
            self.add(seq, lineno, ProblemKind.SEQ_GAP, f"expected seq {self.max_seq + 1}, found {seq}")
        elif seq <= self.max_seq:
            self.add(seq, lineno, ProblemKind.SEQ_ORDER, f"seq {seq} after seq {self.max_seq}")
        if rec["prev_hash"] != self.prev_hash:
            self.add(seq, lineno, ProblemKind.BROKEN_CHAIN, "prev_hash is not the hash of the preceding line")
        self.prev_hash = h
        self.max_seq = max(self.max_seq, seq)
        self.records += 1
        self.last = Tip(seq, h)
        if self.tip is not None and self.tip_line is None and (seq, h) == (self.tip.seq, self.tip.hash):
            self.tip_line = lineno

    def _authentic(self, rec: dict[str, Any], seq: int, lineno: int) -> None:
        if rec["key_id"] != self.kid:
            self.add(seq, lineno, ProblemKind.KEY_MISMATCH,
                     f"written under key id {rec['key_id']}, verifying with {self.kid}; check EQUIMIND_AUDIT_KEY")
            return
        body = {k: v for k, v in rec.items() if k != "hmac"}
        if not hmac.compare_digest(record_hmac(self.key, body), rec["hmac"]):
            self.add(seq, lineno, ProblemKind.BAD_HMAC, "HMAC mismatch: the record was altered")

    def finish_tip(self, tip_error: str | None) -> None:
        if tip_error is not None:
            self.add(None, None, ProblemKind.TIP_INVALID, tip_error)
            return
        if self.tip is None:
            if self.lines:
                self.add(None, None, ProblemKind.TIP_MISSING, "the log has records but no .tip file")
            return
        if self.tip_line is None:
            kind = ProblemKind.TRUNCATED if self.tip.seq > self.max_seq else ProblemKind.TIP_MISMATCH
            self.add(self.tip.seq, None, kind,
                     f"tip names seq {self.tip.seq}; the log holds no such record (last seq {self.max_seq})")
        elif self.lines > self.tip_line:
            self.add(None, self.tip_line + 1, ProblemKind.TIP_BEHIND,
                     f"{self.lines - self.tip_line} line(s) follow the tip record (seq {self.tip.seq})")


def _scan_file(path: Path, scan: _Scan) -> None:
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.endswith(b"\n"):
                scan.line(lineno, raw[:-1])
            else:
                scan.add(None, lineno, ProblemKind.TORN_TAIL, f"last line is incomplete ({len(raw)} bytes, no newline)")


def verify_audit_log(path: Path, key: str | bytes | None) -> AuditReport:
    """Check every record (HMAC, seq, chain) and the tip. NotFoundError when neither the log nor its tip exists.

    Holds a shared lock (when the lock file exists) so that a concurrent append is seen whole or not at all."""
    raw_key = check_key(key)
    path = Path(path)
    tip_path = path.with_name(path.name + ".tip")
    if not path.exists() and not tip_path.exists():
        raise NotFoundError(f"no audit log at {path}; pass the path of audit.jsonl (default: $EQUIMIND_HOME)")
    lock_path = path.with_name(path.name + ".lock")
    with contextlib.ExitStack() as stack:
        if lock_path.exists():
            lock = stack.enter_context(open(lock_path, "rb"))
            fcntl.flock(lock.fileno(), fcntl.LOCK_SH)
        tip: Tip | None = None
        tip_error: str | None = None
        try:
            tip = read_tip(tip_path, raw_key)
        except AuditError as exc:
            tip_error = str(exc)
        scan = _Scan(raw_key, tip)
        if path.exists():
            _scan_file(path, scan)
    scan.finish_tip(tip_error)
    last = scan.last
    return AuditReport(
        path=str(path),
        ok=not scan.problems and not scan.truncated,
        records=scan.records,
        last_seq=last.seq if last else None,
        last_hash=last.hash if last else None,
        problems=scan.problems,
        problems_truncated=scan.truncated,
    )
