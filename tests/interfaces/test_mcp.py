"""The MCP server through a real stdio subprocess and the official client (ClientSession over stdio_client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from interfaces_fakes import AS_OF, AUDIT_KEY
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from equimind.security.verify import verify_audit_log

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TOOLS = {"search_filings", "get_passage", "verify_citation", "market_snapshot", "research", "ask"}


def _env(home: Path, corpus: Path, audit_key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EQUIMIND_")}
    env.update(EQUIMIND_HOME=str(home), EQUIMIND_SNAPSHOT=str(corpus), EQUIMIND_SHARED=str(corpus.parent),
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    if audit_key is not None:
        env["EQUIMIND_AUDIT_KEY"] = audit_key
    return env


Session = Callable[[Callable[[ClientSession], Awaitable[Any]]], Any]


@pytest.fixture(scope="module")
def session(nvda_home: Path, corpus_dir: Path) -> Session:
    """Runs ``body(session)`` against a fresh server subprocess (one per call keeps the tests independent)."""
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "mcp_fake_server.py")],
                                   env=_env(nvda_home, corpus_dir, AUDIT_KEY), cwd=str(nvda_home.parent))

    def run(body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await body(s)

        return anyio.run(main)

    return run


def _audit(home: Path) -> list[dict[str, Any]]:
    path = home / "audit.jsonl"
    report = verify_audit_log(path, AUDIT_KEY)
    assert report.ok, report.problems
    return [json.loads(line) for line in path.read_text().splitlines()]


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def _collect(s: ClientSession) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": {t.name for t in (await s.list_tools()).tools}}
    found = await s.call_tool("search_filings", {"query": "export controls China data center", "ticker": "NVDA",
                                                 "k": 3})
    assert not found.is_error, _text(found)
    hit = found.structured_content["hits"][0]  # type: ignore[index]
    out["hits"] = found.structured_content["hits"]  # type: ignore[index]
    doc = hit["document"]["doc_id"]
    out["passage"] = (await s.call_tool("get_passage", {"doc_id": doc, "start": hit["start"], "end": hit["end"]}))
    # the whole chunk: its first 100 characters also occur earlier in the 10-K (boilerplate repeated 3 times)
    out["check"] = await s.call_tool("verify_citation", {"doc_id": doc, "quote": hit["text"]})
    out["market"] = await s.call_tool("market_snapshot", {"ticker": "NVDA", "as_of": AS_OF})
    out["extra"] = await s.call_tool("search_filings", {"query": "gpu", "bogus": 1})
    out["ill_typed"] = await s.call_tool("get_passage", {"doc_id": doc, "start": "5", "end": 10})
    out["unknown"] = await s.call_tool("delete_everything", {})
    out["missing"] = await s.call_tool("verify_citation", {"doc_id": doc})
    out["ask"] = await s.call_tool("ask", {"question": "What was NVIDIA's data center revenue in fiscal 2025?",
                                           "ticker": "NVDA", "as_of": AS_OF})
    out["ask_bad"] = await s.call_tool("ask", {"question": "x" * 3000})
    return out


@pytest.fixture(scope="module")
def calls(session: Session, nvda_home: Path) -> dict[str, Any]:
    out: dict[str, Any] = session(_collect)
    out["audit"] = _audit(nvda_home)
    return out


def test_lists_the_six_tools(calls: dict[str, Any]) -> None:
    assert calls["tools"] == TOOLS


def test_ask_runs_through_the_gate_and_is_audited(calls: dict[str, Any]) -> None:
    ans = calls["ask"]
    assert not ans.is_error, _text(ans)
    got = ans.structured_content
    assert got["ticker"] == "NVDA" and got["support"] in ("supported", "partial", "refused")
    assert calls["ask_bad"].is_error and "tool call denied" in _text(calls["ask_bad"])  # 3000 > 2000 chars
    asked = [r for r in calls["audit"] if r["kind"] == "call" and r["tool"] == "ask"]
    assert [r["decision"] for r in asked] == ["allow", "deny"]


def test_allowed_calls_run_and_return_structured_results(calls: dict[str, Any]) -> None:
    hits = calls["hits"]
    assert 1 <= len(hits) <= 3 and all(h["document"]["ticker"] == "NVDA" for h in hits)
    passage = calls["passage"].structured_content
    assert passage["text"] == hits[0]["text"] and passage["document"]["form"] == "10-K"
    check = calls["check"].structured_content
    assert check["verified"] and check["match"] == "exact" and check["start"] == hits[0]["start"]
    market = calls["market"].structured_content
    assert market["ticker"] == "NVDA" and market["last_close"]["as_of"] <= AS_OF


@pytest.mark.parametrize(("key", "reason"), [
    ("extra", "unexpected argument(s) 'bogus'"),
    ("ill_typed", "argument 'start' must be"),
    ("unknown", "unknown tool 'delete_everything'"),
    ("missing", "missing required argument 'quote'"),
])
def test_denied_calls_are_refused_with_the_reason(calls: dict[str, Any], key: str, reason: str) -> None:
    result = calls[key]
    assert result.is_error
    assert "tool call denied" in _text(result) and reason in _text(result)


def test_every_call_is_audited_before_it_runs(calls: dict[str, Any]) -> None:
    records = calls["audit"]
    call_records = [r for r in records if r["kind"] == "call"]
    assert [r["tool"] for r in call_records] == ["search_filings", "get_passage", "verify_citation",
                                                 "market_snapshot", "search_filings", "get_passage",
                                                 "delete_everything", "verify_citation", "ask", "ask"]
    assert [r["decision"] for r in call_records] == ["allow"] * 4 + ["deny"] * 4 + ["allow", "deny"]
    assert call_records[4]["args"] == {"query": "gpu", "bogus": 1}  # the raw arguments, as the client sent them
    outcomes = {r["call_seq"]: r for r in records if r["kind"] == "outcome"}
    for rec in call_records:
        if rec["decision"] == "allow":
            assert outcomes[rec["seq"]]["outcome"] == "ok" and outcomes[rec["seq"]]["seq"] > rec["seq"]
        else:
            assert rec["seq"] not in outcomes  # denied: never ran


def test_a_failing_audit_write_stops_the_tool(session: Session, nvda_home: Path) -> None:
    log = nvda_home / "audit.jsonl"
    before = log.read_bytes()
    with log.open("ab") as fh:
        fh.write(b'{"torn": ')  # a partial last line: the log no longer matches its tip

    async def body(s: ClientSession) -> Any:
        return await s.call_tool("search_filings", {"query": "gpu"})

    try:
        result = session(body)
        assert result.is_error
        assert "could not be audited, so it was not run" in _text(result)
        assert log.read_bytes() == before + b'{"torn": '  # nothing was appended
    finally:
        log.write_bytes(before)


def test_research_tool_runs_the_debate(session: Session) -> None:
    async def body(s: ClientSession) -> Any:
        return await s.call_tool("research", {"ticker": "NVDA", "question": "Is NVIDIA a buy?", "as_of": AS_OF},
                                 read_timeout_seconds=300)

    result = session(body)
    assert not result.is_error, _text(result)
    rec = result.structured_content
    assert rec["ticker"] == "NVDA" and rec["as_of"] == AS_OF and rec["provider"] == "offline"


@pytest.mark.parametrize("entry", [
    ["-m", "equimind.interfaces.mcp_server"],
    ["-c", "from equimind.interfaces.cli.main import main; main()", "mcp"],  # `equimind mcp`
], ids=["module", "cli"])
def test_refuses_to_start_without_an_audit_key(tmp_path: Path, corpus_dir: Path, entry: list[str]) -> None:
    proc = subprocess.run([sys.executable, *entry], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=_env(tmp_path / "home", corpus_dir, None))
    assert proc.returncode == 2
    assert "EQUIMIND_AUDIT_KEY is not set" in proc.stderr and "secrets.token_hex" in proc.stderr
    assert proc.stdout == ""  # nothing was served
    assert not (tmp_path / "home" / "audit.jsonl").exists()
