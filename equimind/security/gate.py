"""Default-deny gate in front of every tool an agent or MCP client may call.

``Gate(policy, audit).call(tool, args, fn)``:

1. checks the call against a ``ToolPolicy`` (unknown tool, unexpected / missing / ill-typed / out-of-range argument,
   or an unusable policy file: deny);
2. appends a ``kind="call"`` record (tool, args, decision, reason, policy digest) to the audit log and waits until it
   is durable — if that write fails the tool does not run (``AuditError``); a denial then raises ``ToolDenied``;
3. runs ``fn(**args)`` with exactly the arguments that were checked and audited;
4. appends a second, ``kind="outcome"`` record (``call_seq`` = the seq of step 2, ``outcome`` ok/error, error type and
   message, duration). A call record without an outcome means the process died while the tool ran. If the outcome
   cannot be recorded the result is withheld (``AuditError``). See docs/decisions/0004-gate-and-audit.md.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from equimind.core.errors import ConfigError
from equimind.security.audit import Anchor, AuditLog, AuditRecord
from equimind.security.chain import AuditError
from equimind.security.policy import Decision, ToolPolicy, Verdict

if TYPE_CHECKING:
    from equimind.core.config import Settings

__all__ = ["AuditSink", "Decision", "Gate", "ToolDenied", "ToolPolicy", "Verdict", "audit_safe", "build_gate"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_AUDIT_STR = 4000
MAX_AUDIT_ITEMS = 50
MAX_AUDIT_DEPTH = 4
MAX_ERROR_CHARS = 500


class ToolDenied(ConfigError):
    """The policy denied the call (the denial is already in the audit log). The message says what is allowed."""

    def __init__(self, verdict: Verdict, audit_seq: int) -> None:
        super().__init__(f"tool call denied: {verdict.reason}")
        self.verdict = verdict
        self.audit_seq = audit_seq


class AuditSink(Protocol):
    """Where the gate writes; ``AuditLog`` is the implementation. ``append`` must be durable when it returns."""

    def append(self, event: Mapping[str, Any]) -> AuditRecord: ...


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{text[:limit]}…[{len(text)} chars, sha256:{digest}]"


def audit_safe(value: object, depth: int = 0) -> Any:
    """A bounded, JSON-serialisable rendering of ``value`` for the audit log (validated args pass through as-is)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return _clip(value, MAX_AUDIT_STR)
    if depth >= MAX_AUDIT_DEPTH:
        return f"<{type(value).__name__} nested too deep>"
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {_clip(str(k), 200): audit_safe(v, depth + 1) for k, v in items[:MAX_AUDIT_ITEMS]}
        if len(items) > MAX_AUDIT_ITEMS:
            out["…"] = f"{len(items) - MAX_AUDIT_ITEMS} more keys"
        return out
    if isinstance(value, list | tuple):
        seq = [audit_safe(v, depth + 1) for v in value[:MAX_AUDIT_ITEMS]]
        if len(value) > MAX_AUDIT_ITEMS:
            seq.append(f"… {len(value) - MAX_AUDIT_ITEMS} more items")
        return seq
    return f"<{type(value).__name__}>"


class Gate:
    """Policy check → durable audit record → run → outcome record. One instance per server; thread-safe."""

    def __init__(self, policy: ToolPolicy, audit: AuditSink, *, timer: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._audit = audit
        self._timer = timer

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        """The policy's verdict alone (nothing is audited or run)."""
        return self.policy.check(tool, args)

    def call(self, tool: str, args: Mapping[str, Any], fn: Callable[..., T]) -> T:
        """Run ``fn(**args)`` if the policy allows it and the call is audited; raise ToolDenied / AuditError if not."""
        checked, seq = self._admit(tool, args)
        start = self._timer()
        try:
            result = fn(**checked)
        except BaseException as exc:
            self._finish(seq, tool, start, exc)
            raise
        self._finish(seq, tool, start, None)
        return result

    async def acall(self, tool: str, args: Mapping[str, Any], fn: Callable[..., Awaitable[T]],
                    request_id: str | None = None) -> T:
        """``call`` for coroutine functions. The audit writes (a few fsyncs) run inline, in order. ``request_id``:
        the id the result's trace carries, recorded in both audit records so a result can be found in the log."""
        checked, seq = self._admit(tool, args, request_id)
        start = self._timer()
        try:
            result = await fn(**checked)
        except BaseException as exc:
            self._finish(seq, tool, start, exc, request_id)
            raise
        self._finish(seq, tool, start, None, request_id)
        return result

    def _admit(self, tool: str, args: Mapping[str, Any],
               request_id: str | None = None) -> tuple[dict[str, Any], int]:
        """Check and durably record the call; returns the exact args to run with and the call record's seq."""
        checked: Any = dict(args) if isinstance(args, Mapping) else args  # one snapshot: checked = audited = run
        verdict = self.policy.check(tool, checked)
        event: dict[str, Any] = {
            "kind": "call",
            "tool": _clip(str(tool), 200),
            "args": audit_safe(checked),
            "decision": verdict.decision.value,
            "reason": verdict.reason,
            "policy": self.policy.digest,
        }
        if request_id is not None:
            event["request_id"] = _clip(str(request_id), 64)
        record = self._append(event, "the tool was not run")
        if not verdict.allowed:
            logger.info("denied %s (audit seq %d): %s", verdict.tool, record.seq, verdict.reason)
            raise ToolDenied(verdict, record.seq)
        return checked, record.seq

    def _finish(self, seq: int, tool: str, start: float, exc: BaseException | None,
                request_id: str | None = None) -> None:
        event: dict[str, Any] = {
            "kind": "outcome",
            "call_seq": seq,
            "tool": _clip(str(tool), 200),
            "outcome": "ok" if exc is None else "error",
            "duration_ms": round((self._timer() - start) * 1000.0, 3),
        }
        if request_id is not None:
            event["request_id"] = _clip(str(request_id), 64)
        if exc is not None:
            event["error"] = _clip(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS)
        self._append(event, "the tool ran but its outcome is unrecorded, so its result is withheld")

    def _append(self, event: Mapping[str, Any], consequence: str) -> AuditRecord:
        try:
            return self._audit.append(event)
        except AuditError as exc:
            logger.error("audit write failed (%s): %s", consequence, exc)
            raise AuditError(f"{exc} ({consequence})") from exc
        except Exception as exc:  # a foreign sink: every failure means 'not audited'
            logger.error("audit write failed (%s): %s", consequence, exc)
            raise AuditError(f"audit write failed: {exc} ({consequence})") from exc


def build_gate(settings: Settings, anchor: Anchor | None = None) -> Gate:
    """The gate for ``settings``: the audit log in EQUIMIND_HOME (ConfigError when EQUIMIND_AUDIT_KEY is unset),
    with its shared ``anchor`` when given, and the policy at EQUIMIND_GATE_POLICY or the packaged default (deny-all,
    logged, when that file is unusable)."""
    audit = AuditLog.from_settings(settings, anchor)
    return Gate(ToolPolicy.load(settings.gate_policy), audit)
