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

from equimind import __version__
from equimind.core.config import Settings
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.security.trace import config_hash, corpus_signature
from equimind.security.verify import verify_audit_log
from equimind.store.docstore import DocStore

PRODUCT = PRODUCT_FORMAT.value

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TOOLS = {"search_filings", "get_passage", "verify_citation", "market_snapshot", "research", "ask", "list_documents",
         "corpus_status", "verify_citations", "memory", "changes"}
NEW_TOOL_CALLS = ["corpus_status", "list_documents", "list_documents", "list_documents", "verify_citations",
                  "verify_citations", "verify_citations", "verify_citations", "verify_citations", "memory", "memory"]
NEW_TOOL_DECISIONS = ["allow", "allow", "allow", "deny", "allow", "deny", "deny", "deny", "deny", "allow", "deny"]


def _env(home: Path, corpus: Path, audit_key: str | None) -> dict[str, str]:
    # the session's shared ONNX export (conftest) is kept; first-answer indexing is off so that every tool's trace
    # after the ask sees the same corpus (with it on, the server completes the ask's deferred embeddings in the
    # background between the calls, and the signature changes when it does: ADR 0010)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EQUIMIND_") or k == "EQUIMIND_ONNX_CACHE_DIR"}
    env.update(EQUIMIND_HOME=str(home), EQUIMIND_SNAPSHOT=str(corpus), EQUIMIND_SHARED=str(corpus.parent),
               EQUIMIND_FIRST_ANSWER_INDEXING="false",
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
    out["search"] = found
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
    await _collect_new_tools(s, out, hit)
    return out


async def _collect_new_tools(s: ClientSession, out: dict[str, Any], hit: dict[str, Any]) -> None:
    doc = hit["document"]["doc_id"]
    out["status"] = await s.call_tool("corpus_status", {})
    out["docs"] = await s.call_tool("list_documents", {"ticker": "NVDA", "form": "10-K", "since": "2025-01-01"})
    out["docs_before"] = await s.call_tool("list_documents", {"ticker": "NVDA", "until": "2024-12-31", "limit": 5})
    out["docs_bad"] = await s.call_tool("list_documents", {"since": "2025-02-30"})
    good = {"doc_id": doc, "start": hit["start"], "end": hit["end"], "quote": hit["text"]}
    out["batch"] = await s.call_tool("verify_citations", {"citations": [
        good,
        {"doc_id": doc, "start": 0, "end": 50, "quote": hit["text"]},  # in the document, not in the claimed span
        {"doc_id": doc, "start": 0, "end": 10, "quote": "NVIDIA sells refrigerators and garden furniture."},
        {"doc_id": "0" * 64, "start": 0, "end": 5, "quote": "anything"},
    ]})
    out["batch_ill_typed"] = await s.call_tool("verify_citations", {"citations": [good, {**good, "start": "0"}]})
    out["batch_oversize"] = await s.call_tool("verify_citations", {"citations": [good] * 51})
    out["batch_extra_key"] = await s.call_tool("verify_citations", {"citations": [{**good, "page": 3}]})
    out["batch_not_a_list"] = await s.call_tool("verify_citations", {"citations": good})
    out["memory"] = await s.call_tool("memory", {"ticker": "NVDA", "as_of": AS_OF})
    out["memory_bad"] = await s.call_tool("memory", {"ticker": "NVDA; DROP"})


@pytest.fixture(scope="module")
def calls(session: Session, nvda_home: Path) -> dict[str, Any]:
    out: dict[str, Any] = session(_collect)
    out["audit"] = _audit(nvda_home)
    return out


def test_lists_the_eleven_tools(calls: dict[str, Any]) -> None:
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


def test_corpus_status_says_what_the_store_holds(calls: dict[str, Any]) -> None:
    status = calls["status"]
    assert not status.is_error, _text(status)
    got = status.structured_content
    assert got["store"]["documents"] == got["store"]["indexed"] > 1  # the 10-K and what the ask fetched
    assert got["store"]["chunks"] > 100 and got["store"]["pending"] == 0
    assert got["embedder"]["name"] == "hash-384" and got["embedder"]["stored"]["embedder"] == "hash-384"
    assert got["reranker"]["name"] == "word-overlap" and got["reranker"]["available"] is True
    assert got["mode"] == "snapshot" and got["version"] == __version__
    assert got["backend"] == {"vectors": "chroma-embedded", "sparse": "bm25s", "docstore": "sqlite"}


def test_list_documents_filters_by_ticker_form_and_date(calls: dict[str, Any]) -> None:
    listed = calls["docs"].structured_content
    doc = calls["hits"][0]["document"]
    assert [d["doc_id"] for d in listed["documents"]] == [doc["doc_id"]] and listed["count"] == listed["total"] == 1
    assert listed["documents"][0]["form"] == "10-K" and listed["documents"][0]["filed_at"] >= "2025-01-01"
    before = calls["docs_before"].structured_content  # the 10-K was filed on 2025-02-26; the ask fetched older ones
    assert before["count"] == min(5, before["total"]) == len(before["documents"])
    assert all(d["filed_at"] <= "2024-12-31" and d["ticker"] == "NVDA" for d in before["documents"])
    assert doc["doc_id"] not in {d["doc_id"] for d in before["documents"]}
    assert calls["docs_bad"].is_error and "argument 'since' must be a date" in _text(calls["docs_bad"])


def test_verify_citations_checks_each_quote_against_its_claimed_span(calls: dict[str, Any]) -> None:
    batch = calls["batch"]
    assert not batch.is_error, _text(batch)
    got = batch.structured_content
    first, elsewhere, invented, unknown = got["results"]
    hit = calls["hits"][0]
    assert first["in_claimed_span"] and first["check"]["verified"] and first["check"]["start"] == hit["start"]
    assert elsewhere["check"]["verified"] and not elsewhere["in_claimed_span"]  # found, but not where it claims
    assert not invented["check"]["verified"] and not invented["in_claimed_span"]
    assert unknown["check"] is None and "not in the docstore" in unknown["error"]
    assert (got["verified"], got["total"]) == (2, 4)


@pytest.mark.parametrize(("key", "reason"), [
    ("batch_ill_typed", "argument 'citations[1].start' must be an integer, got str"),
    ("batch_oversize", "argument 'citations' has 51 items; at most 50 allowed"),
    ("batch_extra_key", "unexpected argument(s) 'citations[0].page'"),
    ("batch_not_a_list", "argument 'citations' must be a list, got dict"),
    ("memory_bad", "argument 'ticker' must match"),
])
def test_new_tools_deny_bad_arguments(calls: dict[str, Any], key: str, reason: str) -> None:
    result = calls[key]
    assert result.is_error and "tool call denied" in _text(result) and reason in _text(result)


def test_memory_tool_returns_the_snapshot(calls: dict[str, Any]) -> None:
    mem = calls["memory"]
    assert not mem.is_error, _text(mem)
    assert mem.structured_content["ticker"] == "NVDA"


def test_every_result_carries_the_same_trace_but_its_own_request_id(calls: dict[str, Any], nvda_home: Path,
                                                                     corpus_dir: Path) -> None:
    before, after = ["search", "passage", "check", "market"], ["ask", "status", "docs", "batch", "memory"]
    keys = before + after
    traces = {k: calls[k].structured_content["trace"] for k in keys}
    assert all(json.loads(_text(calls[k]))["trace"] == traces[k] for k in keys)  # the text content says the same
    assert len({t["request_id"] for t in traces.values()}) == len(keys)
    assert all(len(t["request_id"]) == 32 and t["version"] == __version__ for t in traces.values())
    doc_id = calls["hits"][0]["document"]["doc_id"]
    # before the ask: the one indexed 10-K; the ask fetched and indexed more, and its own trace already counts them
    assert {traces[k]["corpus_signature"] for k in before} == {corpus_signature([doc_id])}
    store = DocStore(nvda_home / "docstore.sqlite")
    try:
        _, now = store.indexed_doc_ids()
    finally:
        store.close()
    assert len(now) > 1 and {traces[k]["corpus_signature"] for k in after} == {corpus_signature(now)}
    settings = Settings(home=nvda_home, snapshot=corpus_dir, shared=corpus_dir.parent, first_answer_indexing=False)
    assert {t["config_hash"] for t in traces.values()} == {config_hash(settings, PRODUCT)}


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
                                                 "delete_everything", "verify_citation", "ask", "ask",
                                                 *NEW_TOOL_CALLS]
    assert [r["decision"] for r in call_records] == (["allow"] * 4 + ["deny"] * 4 + ["allow", "deny"]
                                                     + NEW_TOOL_DECISIONS)
    assert call_records[4]["args"] == {"query": "gpu", "bogus": 1}  # the raw arguments, as the client sent them
    outcomes = {r["call_seq"]: r for r in records if r["kind"] == "outcome"}
    for rec in call_records:
        if rec["decision"] == "allow":
            assert outcomes[rec["seq"]]["outcome"] == "ok" and outcomes[rec["seq"]]["seq"] > rec["seq"]
        else:
            assert rec["seq"] not in outcomes  # denied: never ran


def test_a_result_can_be_found_in_the_audit_log_by_its_request_id(calls: dict[str, Any]) -> None:
    """Each result's trace.request_id is in the call record and the outcome record of that call (issue 31)."""
    records = calls["audit"]
    for key, tool in (("search", "search_filings"), ("ask", "ask"), ("status", "corpus_status"),
                      ("docs", "list_documents"), ("batch", "verify_citations")):
        rid = calls[key].structured_content["trace"]["request_id"]
        mine = [r for r in records if r.get("request_id") == rid]
        assert [r["kind"] for r in mine] == ["call", "outcome"] and mine[0]["tool"] == tool, (key, mine)
        assert mine[1]["call_seq"] == mine[0]["seq"]
    denied = [r for r in records if r["kind"] == "call" and r["decision"] == "deny"]
    assert denied and all(len(r["request_id"]) == 32 for r in denied)  # a refused call is findable too


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
