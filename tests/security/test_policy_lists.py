"""The policy's array and object types (``verify_citations``'s batch): bounded length, every element checked, unknown
keys denied, the denial naming the element's path; a policy that leaves a list unbounded does not load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from equimind.core.errors import ConfigError
from equimind.security.audit import AuditLog
from equimind.security.gate import Gate, ToolDenied, ToolPolicy

KEY = "test-policy-key-0123456789abcdef"
DOC = "ab" * 32
GOOD = {"doc_id": DOC, "start": 10, "end": 20, "quote": "net revenue"}


def _batch(*items: object) -> dict[str, Any]:
    return {"citations": list(items)}


def test_a_valid_batch_is_allowed_and_passed_through_unchanged(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    def tool(**kw: Any) -> str:
        calls.append(kw)
        return "ok"

    gate = Gate(ToolPolicy.default(), AuditLog(tmp_path / "audit.jsonl", KEY))
    args = _batch(GOOD, {**GOOD, "start": 0, "end": 1}, *[GOOD] * 48)  # 50: the limit
    assert gate.call("verify_citations", args, tool) == "ok"
    assert calls == [args]
    audited = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[0])
    assert audited["decision"] == "allow" and audited["args"]["citations"][1] == {**GOOD, "start": 0, "end": 1}


@pytest.mark.parametrize(("args", "reason"), [
    (_batch(), "argument 'citations' has 0 items; at least 1 required"),
    (_batch(*[GOOD] * 51), "argument 'citations' has 51 items; at most 50 allowed"),
    ({"citations": GOOD}, "argument 'citations' must be a list, got dict"),
    ({"citations": "[]"}, "argument 'citations' must be a list, got str"),
    (_batch(GOOD, "a quote"), "argument 'citations[1]' must be an object with string keys, got str"),
    (_batch(GOOD, None), "argument 'citations[1]' must not be null"),
    (_batch(GOOD, [GOOD]), "argument 'citations[1]' must be an object with string keys, got list"),
    (_batch({**GOOD, "start": "10"}), "argument 'citations[0].start' must be an integer, got str"),
    (_batch({**GOOD, "start": True}), "argument 'citations[0].start' must be an integer, got bool"),
    (_batch({**GOOD, "end": 1.5}), "argument 'citations[0].end' must be an integer, got float"),
    (_batch({**GOOD, "doc_id": "../etc/passwd"}), "argument 'citations[0].doc_id' must match"),
    (_batch({**GOOD, "quote": "x" * 2001}), "argument 'citations[0].quote' has 2001 characters"),
    (_batch({**GOOD, "quote": 7}), "argument 'citations[0].quote' must be a string, got int"),
    (_batch({k: v for k, v in GOOD.items() if k != "quote"}), "missing required argument 'citations[0].quote'"),
    (_batch({**GOOD, "page": 3}), "unexpected argument(s) 'citations[0].page'; 'citations[0]' accepts"),
    (_batch(GOOD, {**GOOD, "start": 20, "end": 20}), "'citations[1].end' must be greater than 'citations[1].start'"),
    ({**_batch(GOOD), "mode": "all"}, "unexpected argument(s) 'mode'"),
])
def test_bad_batches_are_denied_naming_the_element(tmp_path: Path, args: dict[str, Any], reason: str) -> None:
    gate = Gate(ToolPolicy.default(), AuditLog(tmp_path / "audit.jsonl", KEY))
    ran: list[object] = []
    with pytest.raises(ToolDenied) as denied:
        gate.call("verify_citations", args, lambda **kw: ran.append(kw))
    assert reason in str(denied.value) and ran == []
    assert json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[0])["decision"] == "deny"


ITEMS = {"type": "object", "properties": {"a": {"type": "integer"}}}


@pytest.mark.parametrize(("spec", "message"), [
    ({"type": "array", "items": ITEMS}, "max_items"),  # an unbounded list
    ({"type": "array", "max_items": 5}, "needs items"),
    ({"type": "array", "items": ITEMS, "max_items": 2, "min_items": 3}, "min_items (3) is greater than max_items"),
    ({"type": "object"}, "needs properties"),
    ({"type": "object", "properties": {"a-b": {"type": "string"}}}, "property names must be Python identifiers"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "ranges": [{"low": "a", "high": "b"}]}, "range a..b"),
    ({"type": "string", "items": ITEMS}, "apply to arrays only"),
    ({"type": "integer", "properties": {"a": {"type": "string"}}}, "apply to objects only"),
    ({"type": "array", "max_items": 2, "items": {"type": "array", "items": ITEMS}}, "max_items"),  # nested, unbounded
])
def test_ill_formed_list_specs_do_not_load(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="invalid tool policy"):
        ToolPolicy.from_dict({"version": 1, "tools": {"t": {"args": {"x": spec}}}})
    with pytest.raises(ConfigError) as err:
        ToolPolicy.from_dict({"version": 1, "tools": {"t": {"args": {"x": spec}}}})
    assert message in str(err.value)


def test_nested_lists_are_checked_at_every_level() -> None:
    policy = ToolPolicy.from_dict({"version": 1, "tools": {"t": {"args": {"grid": {
        "type": "array", "max_items": 3, "items": {"type": "array", "max_items": 2, "items": {"type": "integer",
                                                                                           "min": 0}}}}}}})
    assert policy.check("t", {"grid": [[1, 2], [3]]}).allowed
    assert policy.check("t", {"grid": [[1], [2, 3, 4]]}).reason == "argument 'grid[1]' has 3 items; at most 2 allowed"
    assert "argument 'grid[0][1]' must be between 0" in policy.check("t", {"grid": [[1, -1]]}).reason
