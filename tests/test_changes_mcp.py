"""The MCP tool ``changes`` over the recorded NVDA 10-K / 10-Q pair: the real server (``mcp_server.prepare``: the
default policy, the audit log, the engine over real stores with the hash embedder) driven by the official client
in-process (``mcp.Client(server)``), so every call passes ``GatedMCPServer.call_tool`` (the gate) as over stdio
(``tests/interfaces/test_mcp.py`` runs the stdio transport). The home starts empty: the first call fetches the pair
from the recorded snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from equimind.core.config import Settings
from equimind.interfaces.mcp_server import TOOLS, prepare
from equimind.security.policy import ToolPolicy
from equimind.security.verify import verify_audit_log
from equimind.store.docstore import DocStore
from tests.interfaces.interfaces_fakes import AUDIT_KEY, fake_services

pytestmark = pytest.mark.integration

DENIED: dict[str, tuple[dict[str, Any], str]] = {
    "bad_ticker": ({"ticker": "NVDA; DROP"}, "argument 'ticker' must match"),
    "bad_form": ({"ticker": "NVDA", "form": "8-K"}, "argument 'form' must be one of 10-K, 10-Q"),
    "bad_section": ({"ticker": "NVDA", "sections": ["risk_factors", "everything"]},
                    "argument 'sections[1]' must be one of risk_factors"),
    "cli_name": ({"ticker": "NVDA", "from": "2025-02-26"}, "unexpected argument(s) 'from'"),
    "bad_as_of": ({"ticker": "NVDA", "as_of": "2025-02-30"}, "argument 'as_of' must be a date"),
    "bad_filing": ({"ticker": "NVDA", "to_filing": "../../etc/passwd"}, "argument 'to_filing' must match"),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("changes_mcp") / "home"


async def _collect(client: Client, out: dict[str, Any]) -> None:
    out["tools"] = (await client.list_tools()).tools
    out["changes"] = await client.call_tool("changes", {"ticker": "NVDA"})
    report = out["changes"].structured_content
    sides = [c[n] for c in report["changes"] for n in ("old", "new") if c[n] is not None]
    out["verify"] = await client.call_tool("verify_citations", {"citations": [
        {"doc_id": s["doc_id"], "start": s["start"], "end": s["end"], "quote": s["quote"]}
        for s in sides if len(s["quote"]) <= 2000][:50]})
    out["risk_only"] = await client.call_tool("changes", {"ticker": "NVDA", "sections": ["risk_factors"],
                                                          "form": None, "as_of": "2025-12-31"})
    for key, (args, _) in DENIED.items():
        out[key] = await client.call_tool("changes", args)
    out["reversed"] = await client.call_tool("changes", {"ticker": "NVDA", "from_filing": report["new"]["accession"],
                                                         "to_filing": report["old"]["accession"]})
    out["unknown"] = await client.call_tool("changes", {"ticker": "ZZZQX"})


@pytest.fixture(scope="module")
def calls(home: Path, corpus_dir: Path) -> dict[str, Any]:
    settings = Settings(home=home, snapshot=corpus_dir, shared=corpus_dir.parent, provider="offline",
                        audit_key=AUDIT_KEY)
    services = fake_services(settings)
    server = prepare(settings, services)
    out: dict[str, Any] = {}

    async def main() -> None:
        async with Client(server) as client:
            await _collect(client, out)

    try:
        anyio.run(main)
    finally:
        services.docstore.close()
    report = verify_audit_log(settings.audit_path, AUDIT_KEY)
    assert report.ok, report.problems
    out["audit"] = [json.loads(line) for line in settings.audit_path.read_text().splitlines()]
    return out


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_changes_is_listed_and_its_arguments_are_the_policys(calls: dict[str, Any]) -> None:
    assert "changes" in TOOLS
    tool = next(t for t in calls["tools"] if t.name == "changes")
    spec = ToolPolicy.default().tool_spec("changes")
    assert spec is not None
    assert set(tool.input_schema["properties"]) == set(spec.args)  # every argument the tool takes is bounded
    assert tool.input_schema["required"] == ["ticker"] == [n for n, a in spec.args.items() if a.required]


def test_changes_returns_the_ranked_report_cited_on_both_sides(calls: dict[str, Any], home: Path) -> None:
    result = calls["changes"]
    assert not result.is_error, _text(result)
    report = result.structured_content
    assert json.loads(_text(result))["trace"] == report["trace"]  # the text content says the same
    assert (report["old"]["form"], report["new"]["form"]) == ("10-K", "10-Q") and report["ticker"] == "NVDA"
    assert report["changes"] and report["citations_failed"] == 0
    store = DocStore(home / "docstore.sqlite")
    try:
        texts = {d: store.get_document_text(d) for d in (report["old"]["doc_id"], report["new"]["doc_id"])}
    finally:
        store.close()
    for c in report["changes"]:
        for name in ("old", "new"):
            side = c[name]
            if side is not None:
                assert side["doc_id"] == report[name]["doc_id"]
                assert texts[side["doc_id"]][side["start"]:side["end"]] == side["quote"]
    checked = calls["verify"].structured_content
    assert checked["total"] >= 10 and checked["verified"] == checked["total"]
    assert all(r["in_claimed_span"] for r in checked["results"])


def test_section_and_as_of_arguments_reach_the_engine(calls: dict[str, Any]) -> None:
    result = calls["risk_only"]
    assert not result.is_error, _text(result)
    report = result.structured_content
    assert report["as_of"] == "2025-12-31" and [s["key"] for s in report["sections"]] == ["risk_factors"]
    assert report["changes"] and {c["section"] for c in report["changes"]} == {"risk_factors"}


@pytest.mark.parametrize("key", list(DENIED))
def test_bad_arguments_are_refused_by_the_gate(calls: dict[str, Any], key: str) -> None:
    result = calls[key]
    assert result.is_error and "tool call denied" in _text(result) and DENIED[key][1] in _text(result)


@pytest.mark.parametrize(("key", "said"), [
    ("reversed", "ConfigError: from (10-Q 2025-08-27"),
    ("unknown", "NotFoundError: unknown ticker ZZZQX"),
])
def test_engine_errors_reach_the_client_naming_the_fix(calls: dict[str, Any], key: str, said: str) -> None:
    result = calls[key]
    assert result.is_error and said in _text(result)
    assert "swap them" in _text(result) or key != "reversed"


def test_every_changes_call_is_audited_before_it_runs(calls: dict[str, Any]) -> None:
    records = calls["audit"]
    made = [r for r in records if r["kind"] == "call" and r["tool"] == "changes"]
    assert [r["decision"] for r in made] == ["allow", "allow"] + ["deny"] * len(DENIED) + ["allow", "allow"]
    assert made[0]["args"] == {"ticker": "NVDA"} and made[0]["reason"] == "allowed by policy"
    assert made[2]["args"] == DENIED["bad_ticker"][0]  # the raw arguments, as the client sent them
    outcomes = {r["call_seq"]: r for r in records if r["kind"] == "outcome"}
    for rec in made:
        if rec["decision"] == "deny":
            assert rec["seq"] not in outcomes  # denied: never ran
        else:
            assert outcomes[rec["seq"]]["seq"] > rec["seq"]
    assert [outcomes[r["seq"]]["outcome"] for r in made if r["decision"] == "allow"] == ["ok", "ok", "error", "error"]
    assert "swap them" in outcomes[made[-2]["seq"]]["error"]
