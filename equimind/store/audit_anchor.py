"""The audit chain's shared anchor: a host's audit log also records its HMAC'd tip in the shared PostgreSQL store
(table ``audit_anchors``, one row per host and log path), so removing or rolling back a log *together with* its
``.tip`` file on one host is still detected (``AuditLog._head`` compares the three). The row holds exactly the tip
file's fields, with the same HMAC; a row that fails it is refused like a tampered tip.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.core.errors import StoreUnavailable
from equimind.security.chain import FORMAT_VERSION, TIP_FIELDS, AuditError, Tip, verified_record
from equimind.store.pg import PgConnection, pool_for, redacted, unavailable_as_error

if TYPE_CHECKING:
    from equimind.core.config import Settings


def audit_anchor(settings: Settings) -> PgAnchor | None:
    """The anchor of ``settings.audit_path`` on this host when the docstore is shared (PostgreSQL), else None."""
    return PgAnchor(settings.docstore_url, settings.audit_path) if settings.docstore_url else None


class PgAnchor:
    """The anchor row of ``log_path`` on this host in the PostgreSQL store at ``url``."""

    def __init__(self, url: str, log_path: Path, host: str | None = None) -> None:
        self.where = f"PostgreSQL {redacted(url)}"
        self.log_id = f"{host or socket.gethostname()}:{Path(log_path).resolve()}"
        self._url = url
        self._pool = pool_for(url)  # migrates the database (the anchors' table: 0003_audit_anchor)

    def _run(self, sql: str, args: tuple[Any, ...]) -> Any:
        try:
            with unavailable_as_error(redacted(self._url)), self._pool.connection() as raw:
                return PgConnection(raw, self.where).execute(sql, args).fetchall()
        except StoreUnavailable as exc:  # audited tools refuse to run without their anchor
            raise AuditError(f"the audit anchor cannot be reached: {exc}") from exc

    def read(self, key: bytes) -> Tip | None:
        rows = self._run("SELECT seq, hash, key_id, hmac FROM audit_anchors WHERE log_id = ?", (self.log_id,))
        if not rows:
            return None
        seq, hash_, key_id, mac = rows[0]
        raw = json.dumps({"v": FORMAT_VERSION, "seq": int(seq), "hash": hash_, "key_id": key_id, "hmac": mac}).encode()
        rec = verified_record(raw, key, TIP_FIELDS)
        if rec is None:
            raise AuditError(f"the audit anchor of {self.log_id} in {self.where} fails its HMAC (wrong key or edited)")
        return Tip(rec["seq"], rec["hash"])

    def write(self, body: dict[str, Any]) -> None:
        self._run("INSERT INTO audit_anchors (log_id, seq, hash, key_id, hmac) VALUES (?, ?, ?, ?, ?) "
                  "ON CONFLICT (log_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, "
                  "key_id = excluded.key_id, hmac = excluded.hmac, updated_at = now() RETURNING seq",
                  (self.log_id, body["seq"], body["hash"], body["key_id"], body["hmac"]))
