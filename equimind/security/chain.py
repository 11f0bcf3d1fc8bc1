"""The audit log's record format: canonical JSON, the HMAC chain, the key checks and the HMAC'd tip.

Each line is canonical JSON holding ``seq``, ``ts``, ``key_id``, ``prev_hash`` (SHA-256 of the previous line's bytes),
the event's fields and ``hmac`` (HMAC-SHA256 over all other fields). A sidecar ``<log>.tip`` (HMAC'd) names the last
seq and hash. Shared by the writer (``security.audit``) and the verifier (``security.verify``); pure except
``read_tip``, which reads one small file. Format, guarantees and limits: docs/decisions/0004-gate-and-audit.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from equimind.core.errors import ConfigError, EquiMindError

FORMAT_VERSION = 1
GENESIS_HASH = "0" * 64
MIN_KEY_CHARS = 16
RESERVED_FIELDS = frozenset({"v", "seq", "ts", "key_id", "prev_hash", "hmac"})
RECORD_FIELDS = ("prev_hash", "key_id", "hmac")
TIP_FIELDS = ("hash", "key_id", "hmac")
KEY_HINT = (
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


def check_key(key: str | bytes | None) -> bytes:
    if key is None:
        raise ConfigError(f"no audit key: audited tools refuse to run without one; {KEY_HINT}")
    raw = key.encode("utf-8") if isinstance(key, str) else key
    if len(raw.strip()) < MIN_KEY_CHARS:
        raise ConfigError(f"the audit key is shorter than {MIN_KEY_CHARS} characters; {KEY_HINT}")
    return raw


def parse_record(raw: bytes, fields: tuple[str, ...]) -> dict[str, Any] | None:
    """A stored line as a dict with an int ``seq`` and the given str ``fields``; None when it is not one."""
    try:
        rec = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(rec, dict) or type(rec.get("seq")) is not int:
        return None
    return rec if all(isinstance(rec.get(k), str) for k in fields) else None


def verified_record(raw: bytes, key: bytes, fields: tuple[str, ...] = RECORD_FIELDS) -> dict[str, Any] | None:
    """Parse a stored line and return it when its HMAC matches; None when malformed or not authentic."""
    rec = parse_record(raw, fields)
    if rec is None:
        return None
    body = {k: v for k, v in rec.items() if k != "hmac"}
    return rec if hmac.compare_digest(record_hmac(key, body), rec["hmac"]) else None



@dataclass(frozen=True)
class Tip:
    """The (seq, hash) of the last record, as the tip file names it (or as a scan found it)."""

    seq: int
    hash: str


def read_tip(path: Path, key: bytes) -> Tip | None:
    """The tip, None when absent; AuditError when present but malformed or not authentic."""
    try:
        raw = path.read_bytes().strip()
    except FileNotFoundError:
        return None
    rec = verified_record(raw, key, TIP_FIELDS)
    if rec is None:
        raise AuditError(f"audit tip file {path} is malformed or fails its HMAC (wrong key or edited)")
    return Tip(rec["seq"], rec["hash"])

