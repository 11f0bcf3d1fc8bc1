"""Tamper-evident, append-only audit log (JSONL) for gated tool calls.

Each line is canonical JSON holding ``seq``, ``ts``, ``key_id``, ``prev_hash`` (SHA-256 of the previous line's bytes),
the event's fields and ``hmac`` (HMAC-SHA256 over all other fields). A sidecar ``<log>.tip`` (HMAC'd, replaced
atomically) names the last seq and hash, so a cut-off tail is detectable. Appenders serialise on ``fcntl.flock`` of
``<log>.lock`` and fsync before returning; ``append`` refuses to extend a log whose tail and tip disagree.
Format, guarantees and limits: docs/decisions/0004-gate-and-audit.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from equimind.errors import ConfigError, EquiMindError, NotFoundError

if TYPE_CHECKING:
    from equimind.config import Settings

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
GENESIS_HASH = "0" * 64
MIN_KEY_CHARS = 16
MAX_PROBLEMS = 1000
RESERVED_FIELDS = frozenset({"v", "seq", "ts", "key_id", "prev_hash", "hmac"})
_RECORD_FIELDS = ("prev_hash", "key_id", "hmac")
_TIP_FIELDS = ("hash", "key_id", "hmac")
_KEY_HINT = (
    "set EQUIMIND_AUDIT_KEY to a secret of at least 16 characters, e.g. "
    "export EQUIMIND_AUDIT_KEY=$(python -c 'import secrets; print(secrets.token_hex(32))')"
)


class AuditError(EquiMindError):
    """The audit log cannot be written or is inconsistent; audited tools refuse to run until an operator fixes it."""


# ---------------------------------------------------------------------------------------------------------------
# Pure helpers (the record format)


def canonical_json(obj: Mapping[str, Any]) -> bytes:
    """The one serialisation that is hashed and MAC'd: sorted keys, no whitespace, UTF-8, no NaN."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def record_hmac(key: bytes, body: Mapping[str, Any]) -> str:
    """HMAC-SHA256 (RFC 2104) over the canonical JSON of ``body`` (the record without its ``hmac`` field)."""
    return hmac.new(key, canonical_json(body), hashlib.sha256).hexdigest()


def line_hash(line: bytes) -> str:
    """SHA-256 of one stored line (without its newline); the next record's ``prev_hash``."""
    return hashlib.sha256(line).hexdigest()


def key_id(key: bytes) -> str:
    """A short, non-reversible identifier of the key, so verify can say 'wrong key' rather than 'edited'."""
    return hmac.new(key, b"equimind-audit-key-id", hashlib.sha256).hexdigest()[:16]


def _check_key(key: str | bytes | None) -> bytes:
    if key is None:
        raise ConfigError(f"no audit key: audited tools refuse to run without one; {_KEY_HINT}")
    raw = key.encode("utf-8") if isinstance(key, str) else key
    if len(raw.strip()) < MIN_KEY_CHARS:
        raise ConfigError(f"the audit key is shorter than {MIN_KEY_CHARS} characters; {_KEY_HINT}")
    return raw


def _parse(raw: bytes, fields: tuple[str, ...]) -> dict[str, Any] | None:
    """A stored line as a dict with an int ``seq`` and the given str ``fields``; None when it is not one."""
    try:
        rec = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(rec, dict) or type(rec.get("seq")) is not int:
        return None
    return rec if all(isinstance(rec.get(k), str) for k in fields) else None


def _verified(raw: bytes, key: bytes, fields: tuple[str, ...] = _RECORD_FIELDS) -> dict[str, Any] | None:
    """Parse a stored line and return it when its HMAC matches; None when malformed or not authentic."""
    rec = _parse(raw, fields)
    if rec is None:
        return None
    body = {k: v for k, v in rec.items() if k != "hmac"}
    return rec if hmac.compare_digest(record_hmac(key, body), rec["hmac"]) else None


# ---------------------------------------------------------------------------------------------------------------
# Writing


@dataclass(frozen=True)
class AuditRecord:
    """One appended record: its sequence number, timestamp, line hash and the full stored object."""

    seq: int
    ts: str
    hash: str
    body: dict[str, Any]


@dataclass(frozen=True)
class _Tip:
    seq: int
    hash: str


def _utc_now() -> datetime:
    return datetime.now(UTC)


class AuditLog:
    """Append-only, hash-chained, HMAC'd JSONL log at ``path`` (tip at ``<path>.tip``, lock at ``<path>.lock``)."""

    def __init__(self, path: Path, key: str | bytes | None, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._key = _check_key(key)
        self._key_id = key_id(self._key)
        self.path = Path(path)
        self.tip_path = self.path.with_name(self.path.name + ".tip")
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._clock = clock
        self._thread_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> AuditLog:
        """The log at ``settings.audit_path`` keyed by ``settings.audit_key`` (ConfigError when the key is unset)."""
        if settings.audit_key is None:
            raise ConfigError(f"EQUIMIND_AUDIT_KEY is not set, so audited tools cannot start; {_KEY_HINT}")
        return cls(settings.audit_path, settings.audit_key)

    def __repr__(self) -> str:
        return f"AuditLog(path={str(self.path)!r})"

    def verify(self) -> AuditReport:
        """``verify_audit_log`` of this log with this key."""
        return verify_audit_log(self.path, self._key)

    def append(self, event: Mapping[str, Any]) -> AuditRecord:
        """Durably append one record and return it; raises AuditError (nothing is appended) on any failure."""
        clash = RESERVED_FIELDS.intersection(event)
        if clash:
            raise ValueError(f"event fields {sorted(clash)} are reserved by the audit log; rename them")
        with self._thread_lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.lock_path, "a+b") as lock:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
                    try:
                        return self._append_locked(event)
                    finally:
                        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
            except AuditError:
                raise
            except (OSError, ValueError, TypeError) as exc:
                raise AuditError(f"could not write the audit log {self.path}: {exc}; check the path and disk") from exc

    def _append_locked(self, event: Mapping[str, Any]) -> AuditRecord:
        last = self._head()
        body: dict[str, Any] = dict(event)
        body.update(
            v=FORMAT_VERSION,
            seq=last.seq + 1,
            ts=self._clock().isoformat(timespec="milliseconds"),
            key_id=self._key_id,
            prev_hash=last.hash,
        )
        body["hmac"] = record_hmac(self._key, body)
        line = canonical_json(body)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            data = line + b"\n"
            while data:
                written = os.write(fd, data)
                data = data[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        tip = _Tip(body["seq"], line_hash(line))
        self._write_tip(tip)
        return AuditRecord(seq=tip.seq, ts=body["ts"], hash=tip.hash, body=body)

    def _head(self) -> _Tip:
        """The (seq, hash) to chain onto, after checking that the log's last line and the tip agree."""
        tip = _read_tip(self.tip_path, self._key)
        last_line = _last_line(self.path)
        fix = f"run `equimind audit verify`, then move {self.path.name} and its .tip aside to start a new log"
        if last_line is None:
            if tip is not None:
                raise AuditError(f"audit log {self.path} is empty or missing but its tip says seq {tip.seq}; {fix}")
            return _Tip(0, GENESIS_HASH)
        rec = _verified(last_line, self._key)
        if rec is None:
            raise AuditError(f"the last record of {self.path} is malformed or fails its HMAC (wrong key?); {fix}")
        last = _Tip(rec["seq"], line_hash(last_line))
        if tip is None:
            raise AuditError(f"audit tip file {self.tip_path} is missing; {fix}")
        if last.seq == tip.seq and last.hash == tip.hash:
            return last
        if last.seq == tip.seq + 1 and rec["prev_hash"] == tip.hash:
            # The one window a crash can leave (line fsynced, tip not yet replaced): the record chains onto the tip.
            logger.warning("audit tip %s was one record behind the log; catching up", self.tip_path)
            return last
        raise AuditError(f"audit log {self.path} ends at seq {last.seq}, which does not match its tip (tip says seq "
                         f"{tip.seq}): truncated or tampered; {fix}")

    def _write_tip(self, tip: _Tip) -> None:
        body: dict[str, Any] = {"v": FORMAT_VERSION, "seq": tip.seq, "hash": tip.hash, "key_id": self._key_id}
        body["hmac"] = record_hmac(self._key, body)
        tmp = self.tip_path.with_name(self.tip_path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, canonical_json(body) + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.tip_path)
        dir_fd = os.open(self.tip_path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _read_tip(path: Path, key: bytes) -> _Tip | None:
    """The tip, None when absent; AuditError when present but malformed or not authentic."""
    try:
        raw = path.read_bytes().strip()
    except FileNotFoundError:
        return None
    rec = _verified(raw, key, _TIP_FIELDS)
    if rec is None:
        raise AuditError(f"audit tip file {path} is malformed or fails its HMAC (wrong key or edited)")
    return _Tip(rec["seq"], rec["hash"])


def _last_line(path: Path, block: int = 65536) -> bytes | None:
    """The last complete line of ``path`` without reading the whole file; None when missing or empty."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return None
        fh.seek(size - 1)
        if fh.read(1) != b"\n":
            raise AuditError(f"audit log {path} ends in a partial line (interrupted write or truncation); "
                             "run `equimind audit verify` and move the log aside to start a new one")
        buf = b""
        pos = size - 1  # the final newline is not part of the last line
        while pos > 0 and b"\n" not in buf:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            buf = fh.read(step) + buf
        return buf[buf.rfind(b"\n") + 1:]


# ---------------------------------------------------------------------------------------------------------------
# Verifying


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

    def __init__(self, key: bytes, tip: _Tip | None) -> None:
        self.key = key
        self.kid = key_id(key)
        self.tip = tip
        self.tip_line: int | None = None
        self.prev_hash = GENESIS_HASH
        self.max_seq = 0
        self.records = 0
        self.lines = 0
        self.last: _Tip | None = None
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
        rec = _parse(raw, _RECORD_FIELDS)
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
        self.last = _Tip(seq, h)
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
    raw_key = _check_key(key)
    path = Path(path)
    tip_path = path.with_name(path.name + ".tip")
    if not path.exists() and not tip_path.exists():
        raise NotFoundError(f"no audit log at {path}; pass the path of audit.jsonl (default: $EQUIMIND_HOME)")
    lock_path = path.with_name(path.name + ".lock")
    with contextlib.ExitStack() as stack:
        if lock_path.exists():
            lock = stack.enter_context(open(lock_path, "rb"))
            fcntl.flock(lock.fileno(), fcntl.LOCK_SH)
        tip: _Tip | None = None
        tip_error: str | None = None
        try:
            tip = _read_tip(tip_path, raw_key)
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
