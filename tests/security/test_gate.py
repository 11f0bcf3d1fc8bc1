"""The gate: default deny, audit before run, outcome record, fail closed on audit or policy trouble."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from equimind.core.config import Settings
from equimind.core.errors import ConfigError
from equimind.security.audit import AuditLog, AuditRecord
from equimind.security.chain import AuditError
from equimind.security.gate import Decision, Gate, ToolDenied, ToolPolicy, audit_safe, build_gate
from equimind.security.verify import verify_audit_log

KEY = "test-gate-key-0123456789abcdef"
DOC = "ab" * 32


class Recorder:
    """A tool that remembers how it was called."""

    def __init__(self, result: object = "result", error: Exception | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.result = result
        self.error = error

    def __call__(self, **kwargs: Any) -> object:
        self.calls.append(kwargs)
        if self.error is not None:
            raise self.error
        return self.result


class FailAfter:
    """An audit sink that writes through to a real log, then starts failing after ``n`` appends."""

    def __init__(self, log: AuditLog, n: int) -> None:
        self.log = log
        self.left = n

    def append(self, event: Mapping[str, Any]) -> AuditRecord:
        if self.left <= 0:
            raise OSError("disk full")
        self.left -= 1
        return self.log.append(event)


@pytest.fixture()
def log(tmp_path: Path) -> AuditLog:
    return AuditLog(tmp_path / "audit.jsonl", KEY)


@pytest.fixture()
def gate(log: AuditLog) -> Gate:
    return Gate(ToolPolicy.default(), log)


def _records(log: AuditLog) -> list[dict[str, Any]]:
    if not log.path.exists():
        return []
    return [json.loads(line) for line in log.path.read_bytes().splitlines()]


# ---------------------------------------------------------------------------------------------------------------
# Allowed calls


def test_allowed_call_runs_once_and_is_audited_before_and_after(gate: Gate, log: AuditLog) -> None:
    tool = Recorder(result={"hits": 3})
    args = {"query": "data center revenue", "ticker": "NVDA", "k": 5, "since": "2024-01-01"}
    assert gate.call("search_filings", args, tool) == {"hits": 3}
    assert tool.calls == [args]
    call, outcome = _records(log)
    assert (call["kind"], call["seq"], call["tool"], call["decision"]) == ("call", 1, "search_filings", "allow")
    assert call["args"] == args
    assert call["policy"] == gate.policy.digest
    assert (outcome["kind"], outcome["call_seq"], outcome["outcome"]) == ("outcome", 1, "ok")
    assert outcome["duration_ms"] >= 0
    assert verify_audit_log(log.path, KEY).ok


def test_call_record_is_durable_before_the_tool_runs(gate: Gate, log: AuditLog) -> None:
    seen: list[list[dict[str, Any]]] = []

    def tool(**kwargs: Any) -> str:
        seen.append(_records(log))
        return "ok"

    gate.call("market_snapshot", {"ticker": "AAPL"}, tool)
    assert len(seen[0]) == 1 and seen[0][0]["kind"] == "call"


def test_optional_null_argument_passes_through(gate: Gate) -> None:
    tool = Recorder()
    gate.call("market_snapshot", {"ticker": "BRK-B", "as_of": None}, tool)
    assert tool.calls == [{"ticker": "BRK-B", "as_of": None}]


def test_tool_error_is_audited_and_re_raised(gate: Gate, log: AuditLog) -> None:
    tool = Recorder(error=LookupError("no such document"))
    with pytest.raises(LookupError, match="no such document"):
        gate.call("verify_citation", {"doc_id": DOC, "quote": "revenue grew"}, tool)
    call, outcome = _records(log)
    assert call["decision"] == "allow"
    assert outcome["outcome"] == "error"
    assert outcome["error"] == "LookupError: no such document"


def test_async_call(gate: Gate, log: AuditLog) -> None:
    async def tool(**kwargs: Any) -> str:
        await asyncio.sleep(0)
        return f"{kwargs['ticker']} done"

    result = asyncio.run(gate.acall("research", {"ticker": "MSFT", "question": "Buy?"}, tool))
    assert result == "MSFT done"
    assert [r["kind"] for r in _records(log)] == ["call", "outcome"]


# ---------------------------------------------------------------------------------------------------------------
# Denials: fn never runs, exactly one record (the denial), reason names what is allowed

DENIED = [
    ("delete_everything", {}, "unknown tool 'delete_everything'; the policy allows: ask, changes, corpus_status"),
    ("search_filings", {"query": "x", "limit": 5}, "unexpected argument(s) 'limit'"),
    ("search_filings", {"ticker": "NVDA"}, "missing required argument 'query'"),
    ("search_filings", {"query": None}, "missing required argument 'query'"),
    ("search_filings", {"query": 123}, "'query' must be a string, got int"),
    ("search_filings", {"query": ""}, "at least 1 required"),
    ("search_filings", {"query": "x" * 501}, "at most 500 allowed"),
    ("search_filings", {"query": "x", "k": "5"}, "'k' must be an integer, got str"),
    ("search_filings", {"query": "x", "k": True}, "'k' must be an integer, got bool"),
    ("search_filings", {"query": "x", "k": 5.0}, "'k' must be an integer, got float"),
    ("search_filings", {"query": "x", "k": 0}, "'k' must be between 1 and 50"),
    ("search_filings", {"query": "x", "k": 51}, "'k' must be between 1 and 50"),
    ("search_filings", {"query": "x", "ticker": "nvda"}, "'ticker' must match"),
    ("search_filings", {"query": "x", "ticker": "NVDA; rm -rf"}, "'ticker' must match"),
    ("search_filings", {"query": "x", "since": "2024-02-30"}, "'since' must be a date"),
    ("search_filings", {"query": "x", "since": "2024/01/01"}, "'since' must be a date"),
    ("search_filings", {"query": "x", "since": "2025-01-01", "until": "2024-01-01"}, "'until' must be at least"),
    ("get_passage", {"doc_id": DOC, "start": 10, "end": 10}, "'end' must be greater than 'start'"),
    ("get_passage", {"doc_id": DOC, "start": 0, "end": 20001}, "must be at most 20000"),
    ("get_passage", {"doc_id": "../../etc/passwd", "start": 0, "end": 5}, "'doc_id' must match"),
    ("get_passage", {"doc_id": DOC, "start": -1, "end": 5}, "'start' must be between 0"),
    ("research", {"ticker": "NVDA", "question": "q", "as_of": 20240101}, "'as_of' must be a date"),
    ("research", ["NVDA", "q"], "arguments must be an object"),
]


@pytest.mark.parametrize(("tool_name", "args", "reason"), DENIED)
def test_denied_calls_never_run_and_are_audited(gate: Gate, log: AuditLog, tool_name: str, args: Any,
                                                reason: str) -> None:
    tool = Recorder()
    with pytest.raises(ToolDenied, match="tool call denied") as info:
        gate.call(tool_name, args, tool)
    assert tool.calls == []
    assert reason in info.value.verdict.reason
    assert info.value.verdict.decision is Decision.DENY
    (record,) = _records(log)
    assert (record["kind"], record["decision"], record["seq"]) == ("call", "deny", info.value.audit_seq)
    assert reason in record["reason"]
    assert verify_audit_log(log.path, KEY).ok


def test_denied_call_with_hostile_args_is_still_audited(gate: Gate, log: AuditLog) -> None:
    args = {"query": "x" * 100_000, "obj": object(), "nan": float("nan"), "big": 10**5000, "deep": [[[[[[1]]]]]]}
    with pytest.raises(ToolDenied):
        gate.call("search_filings", args, Recorder())
    (record,) = _records(log)
    assert len(record["args"]["query"]) < 5000 and "100000 chars, sha256:" in record["args"]["query"]
    assert record["args"]["obj"] == "<object>"
    assert record["args"]["nan"] == "nan"
    assert record["args"]["big"].startswith("<int of")
    assert verify_audit_log(log.path, KEY).ok


def test_audit_safe_keeps_plain_values() -> None:
    value = {"a": [1, 2.5, "s", None, True], "b": {"c": "d"}}
    assert audit_safe(value) == value
    assert audit_safe(list(range(60)))[-1] == "… 10 more items"


# ---------------------------------------------------------------------------------------------------------------
# Audit failure: the tool does not run (or, after it ran, its result is withheld)


def test_unwritable_audit_log_means_the_tool_does_not_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    gate = Gate(ToolPolicy.default(), AuditLog(tmp_path / "file" / "audit.jsonl", KEY))
    tool = Recorder()
    with pytest.raises(AuditError, match="the tool was not run"):
        gate.call("market_snapshot", {"ticker": "AAPL"}, tool)
    assert tool.calls == []


def test_tampered_audit_log_means_the_tool_does_not_run(gate: Gate, log: AuditLog) -> None:
    gate.call("market_snapshot", {"ticker": "AAPL"}, Recorder())
    log.path.write_bytes(log.path.read_bytes().splitlines(keepends=True)[0])  # cut off the outcome record
    tool = Recorder()
    with pytest.raises(AuditError, match="truncated or tampered"):
        gate.call("market_snapshot", {"ticker": "AAPL"}, tool)
    assert tool.calls == []


def test_outcome_write_failure_withholds_the_result(log: AuditLog) -> None:
    gate = Gate(ToolPolicy.default(), FailAfter(log, 1))
    tool = Recorder(result="secret")
    with pytest.raises(AuditError, match="result is withheld"):
        gate.call("market_snapshot", {"ticker": "AAPL"}, tool)
    assert len(tool.calls) == 1
    assert [r["kind"] for r in _records(log)] == ["call"]  # visible later as a call without an outcome


# ---------------------------------------------------------------------------------------------------------------
# Policies: malformed or unreadable files deny everything

VALID_ARG = {"query": {"type": "string", "max_length": 10}}
BAD_POLICIES: list[tuple[str, object]] = [
    ("not valid JSON", "{not json"),
    ("invalid tool policy", {"tools": {}}),  # no version
    ("invalid tool policy", {"version": 2, "tools": {}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"q": {"type": "string", "max_len": 5}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"q": {"type": "str"}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"q": {"type": "string", "required": "no"}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"q": {"type": "integer", "pattern": "x"}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"q": {"type": "string", "pattern": "(["}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"q": {"type": "integer", "min": 5, "max": 1}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": {"not-an-identifier": {"type": "string"}}}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": VALID_ARG, "ranges": [{"low": "a", "high": "b"}]}}}),
    ("invalid tool policy", {"version": 1, "tools": {"t": {"args": VALID_ARG}}, "extra": True}),
    ("invalid tool policy", ["a", "list"]),
]


@pytest.mark.parametrize(("message", "content"), BAD_POLICIES)
def test_malformed_policy_raises_and_loads_as_deny_all(tmp_path: Path, log: AuditLog, message: str,
                                                        content: object) -> None:
    path = tmp_path / "policy.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(ConfigError, match=message):
        ToolPolicy.from_file(path)
    policy = ToolPolicy.load(path)
    assert policy.tools == () and policy.error is not None
    tool = Recorder()
    with pytest.raises(ToolDenied, match="policy unusable"):
        Gate(policy, log).call("t", {"q": "x"}, tool)
    assert tool.calls == []
    assert _records(log)[0]["decision"] == "deny"


def test_unreadable_policy_denies_all(tmp_path: Path, log: AuditLog) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match="cannot read tool policy"):
        ToolPolicy.from_file(missing)
    gate = Gate(ToolPolicy.load(missing), log)
    with pytest.raises(ToolDenied, match="policy unusable"):
        gate.call("market_snapshot", {"ticker": "AAPL"}, Recorder())


def test_custom_policy_is_enforced(tmp_path: Path, log: AuditLog) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"version": 1, "tools": {"echo": {"args": {
        "mode": {"type": "string", "enum": ["a", "b"]},
        "n": {"type": "integer", "enum": [1, 2], "required": False},
        "flag": {"type": "boolean", "required": False},
        "x": {"type": "number", "min": 0, "max": 1, "required": False},
    }}}}))
    gate = Gate(ToolPolicy.from_file(path), log)
    assert gate.call("echo", {"mode": "a", "n": 2, "flag": True, "x": 0.5}, Recorder("ok")) == "ok"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"mode": "c"}, "one of a, b"),
        ({"mode": "a", "n": 3}, "one of 1, 2"),
        ({"mode": "a", "flag": 1}, "true or false"),
        ({"mode": "a", "x": float("inf")}, "finite"),
        ({"mode": "a", "x": 2}, "between 0 and 1"),
    ]
    for bad, reason in cases:
        assert reason in gate.check("echo", bad).reason
    assert not gate.check("market_snapshot", {"ticker": "AAPL"}).allowed  # not in this policy


def test_default_policy_ships_in_the_package() -> None:
    policy = ToolPolicy.default()
    assert policy.error is None
    assert policy.tools == ("ask", "changes", "corpus_status", "get_passage", "list_documents", "market_snapshot",
                            "memory", "research", "search_filings", "verify_citation", "verify_citations")
    assert len(policy.digest) == 64


# ---------------------------------------------------------------------------------------------------------------
# build_gate from settings


def test_build_gate_refuses_without_audit_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="EQUIMIND_AUDIT_KEY"):
        build_gate(Settings(home=tmp_path / "home", audit_key=None))


def test_build_gate_from_settings(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", audit_key=KEY)
    gate = build_gate(settings)
    gate.call("market_snapshot", {"ticker": "AAPL"}, Recorder())
    report = verify_audit_log(settings.audit_path, KEY)
    assert report.ok and report.records == 2


def test_build_gate_with_bad_policy_denies_all(tmp_path: Path) -> None:
    bad = tmp_path / "policy.json"
    bad.write_text("[]")
    gate = build_gate(Settings(home=tmp_path / "home", audit_key=KEY, gate_policy=bad))
    assert gate.policy.error is not None
    with pytest.raises(ToolDenied):
        gate.call("market_snapshot", {"ticker": "AAPL"}, Recorder())
