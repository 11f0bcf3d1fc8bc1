"""`equimind documents`, `status` and `verify-citations`: the CLI forms of the API's list, health and batch
citation check (issue 31: they existed in the API and MCP only), over a stored home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from equimind.interfaces.cli.main import app
from equimind.store.docstore import DocStore

runner = CliRunner()
pytestmark = pytest.mark.integration


def _run(*args: str, home: Path, stdin: str | None = None) -> tuple[int, str, str]:
    res = runner.invoke(app, [*args, "--home", str(home)], input=stdin)
    return res.exit_code, res.stdout, res.stderr


def test_documents_lists_the_indexed_filings_with_filters(nvda_home: Path) -> None:
    code, out, err = _run("documents", "--ticker", "nvda", "--json", home=nvda_home)
    assert code == 0, err
    listed = json.loads(out)
    assert listed["total"] == listed["count"] == 1 and listed["documents"][0]["form"] == "10-K"
    assert listed["trace"]["corpus_signature"]
    code, out, _ = _run("documents", "--form", "10-Q", "--json", home=nvda_home)
    assert code == 0 and json.loads(out)["total"] == 0
    code, out, _ = _run("documents", home=nvda_home)
    assert code == 0 and "1 of 1 indexed document" in out and "10-K" in out
    code, _, err = _run("documents", "--since", "2025-02-01", "--until", "2024-01-01", home=nvda_home)
    assert code == 2 and "before --since" in err
    code, _, err = _run("documents", "--limit", "0", home=nvda_home)
    assert code == 2 and "--limit" in err


def test_status_reports_counts_backends_and_degradations(nvda_home: Path) -> None:
    code, out, err = _run("status", "--json", home=nvda_home)
    assert code == 0, err
    health = json.loads(out)
    assert health["store"]["indexed"] == 1 and health["backend"]["docstore"] == "sqlite"
    assert "trace" in health


def test_verify_citations_checks_a_batch_and_exits_1_on_a_miss(nvda_home: Path, tmp_path: Path) -> None:
    store = DocStore(nvda_home / "docstore.sqlite")
    doc_id = store.list_documents()[0].doc_id
    text = store.get_document_text(doc_id)
    store.close()
    start = text.index("Data Center")
    good = {"doc_id": doc_id, "start": start, "end": start + 40, "quote": text[start:start + 40]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps([good]))
    code, out, err = _run("verify-citations", str(path), "--json", home=nvda_home)
    assert code == 0, err
    body = json.loads(out)
    assert body["verified"] == body["total"] == 1 and body["results"][0]["in_claimed_span"] is True
    bad = {**good, "quote": "NVIDIA sells refrigerators and garden furniture."}
    missing = {**good, "doc_id": "0" * 64}
    code, out, _ = _run("verify-citations", "-", home=nvda_home, stdin=json.dumps({"citations": [good, bad, missing]}))
    assert code == 1 and "1 of 3 verified" in out and "error" in out
    path.write_text(json.dumps([{**good, "end": good["start"]}]))
    code, _, err = _run("verify-citations", str(path), home=nvda_home)
    assert code == 2 and "end" in err and "must be greater" in err
    path.write_text("not json")
    code, _, err = _run("verify-citations", str(path), home=nvda_home)
    assert code == 2 and "cannot read citations" in err
