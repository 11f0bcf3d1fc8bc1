"""Tamper-evident, append-only audit log (JSONL) for gated tool calls.

Each line is canonical JSON holding ``seq``, ``ts``, ``key_id``, ``prev_hash`` (SHA-256 of the previous line's bytes),
the event's fields and ``hmac`` (HMAC-SHA256 over all other fields). A sidecar ``<log>.tip`` (HMAC'd, replaced
atomically) names the last seq and hash, so a cut-off tail is detectable. Appenders serialise on ``fcntl.flock`` of
``<log>.lock`` and fsync before returning; ``append`` refuses to extend a log whose tail and tip disagree.
The record format is in ``security.chain``, verification in ``security.verify``. Format, guarantees and limits:
docs/decisions/0004-gate-and-audit.md.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from equimind.core.errors import ConfigError
from equimind.security.chain import (
    FORMAT_VERSION,
    GENESIS_HASH,
    KEY_HINT,
    RESERVED_FIELDS,
    AuditError,
    Tip,
    canonical_json,
    check_key,
    key_id,
    line_hash,
    read_tip,
    record_hmac,
    verified_record,
)
from equimind.security.verify import AuditReport, verify_audit_log

if TYPE_CHECKING:
    from equimind.core.config import Settings

logger = logging.getLogger(__name__)



class Anchor(Protocol):
    """Where a log's tip is also recorded, off this host (``store.audit_anchor.PgAnchor``)."""

    where: str

    def read(self, key: bytes) -> Tip | None: ...

    def write(self, body: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class AuditRecord:
    """One appended record: its sequence number, timestamp, line hash and the full stored object."""

    seq: int
    ts: str
    hash: str
    body: dict[str, Any]



def _utc_now() -> datetime:
    return datetime.now(UTC)


class AuditLog:
    """Append-only, hash-chained, HMAC'd JSONL log at ``path`` (tip at ``<path>.tip``, lock at ``<path>.lock``)."""

    def __init__(self, path: Path, key: str | bytes | None, *, clock: Callable[[], datetime] = _utc_now,
                 anchor: Anchor | None = None) -> None:
        self._anchor = anchor
        self._key = check_key(key)
        self._key_id = key_id(self._key)
        self.path = Path(path)
        self.tip_path = self.path.with_name(self.path.name + ".tip")
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._clock = clock
        self._thread_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, anchor: Anchor | None = None) -> AuditLog:
        """The log at ``settings.audit_path`` keyed by ``settings.audit_key`` (ConfigError when the key is unset);
        ``anchor``: its shared anchor (``store.audit_anchor.audit_anchor(settings)`` on a PostgreSQL store)."""
        if settings.audit_key is None:
            raise ConfigError(f"EQUIMIND_AUDIT_KEY is not set, so audited tools cannot start; {KEY_HINT}")
        return cls(settings.audit_path, settings.audit_key, anchor=anchor)

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
        tip = Tip(body["seq"], line_hash(line))
        self._write_tip(tip)
        if self._anchor is not None:
            self._anchor.write(self._tip_body(tip))
        return AuditRecord(seq=tip.seq, ts=body["ts"], hash=tip.hash, body=body)

    def _head(self) -> Tip:
        """The (seq, hash) to chain onto, after checking that the log's last line, the tip and the shared anchor
        (when there is one) agree."""
        head = self._file_head()
        if self._anchor is not None:
            anchored = self._anchor.read(self._key)
            if anchored is not None and not (anchored.seq == head.seq and anchored.hash == head.hash) and not (
                    anchored.seq == head.seq - 1):  # the crash window: the record and tip written, anchor not yet
                raise AuditError(
                    f"audit log {self.path} ends at seq {head.seq}, but its anchor in {self._anchor.where} says seq "
                    f"{anchored.seq}: the log was deleted, rolled back or replaced on this host; run `equimind audit "
                    "verify`, keep the evidence, and ask an operator to clear the anchor before starting a new log")
        return head

    def _file_head(self) -> Tip:
        tip = read_tip(self.tip_path, self._key)
        last_line = _last_line(self.path)
        fix = f"run `equimind audit verify`, then move {self.path.name} and its .tip aside to start a new log"
        if last_line is None:
            if tip is not None:
                raise AuditError(f"audit log {self.path} is empty or missing but its tip says seq {tip.seq}; {fix}")
            return Tip(0, GENESIS_HASH)
        rec = verified_record(last_line, self._key)
        if rec is None:
            raise AuditError(f"the last record of {self.path} is malformed or fails its HMAC (wrong key?); {fix}")
        last = Tip(rec["seq"], line_hash(last_line))
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

    def _tip_body(self, tip: Tip) -> dict[str, Any]:
        body: dict[str, Any] = {"v": FORMAT_VERSION, "seq": tip.seq, "hash": tip.hash, "key_id": self._key_id}
        body["hmac"] = record_hmac(self._key, body)
        return body

    def _write_tip(self, tip: Tip) -> None:
        body = self._tip_body(tip)
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
