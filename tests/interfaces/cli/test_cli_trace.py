"""Every ``--json`` output carries the trace (one JSON object; a list result as ``{"items": [...]}``): the same
corpus signature and config hash for the same home and settings, a fresh request id each run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interfaces_fakes import AS_OF, copy_home, fake_services
from typer.testing import CliRunner

from equimind import __version__
from equimind.core.config import Settings
from equimind.ingest.documents import documents
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.interfaces.cli.main import app
from equimind.security.trace import config_hash, corpus_signature
from equimind.sources.local import LocalFileSource
from equimind.store.docstore import DocStore

PRODUCT = PRODUCT_FORMAT.value

pytestmark = pytest.mark.integration

runner = CliRunner()
TINY = "<html><body><p>Item 1. Business</p><p>We sell shoes.</p><p>Item 7. Results</p><p>Sales rose.</p></body></html>"


def _json(*args: str, env: dict[str, str | None] | None = None) -> dict[str, Any]:
    res = runner.invoke(app, [*args, "--json"], env=env)
    assert res.exit_code in (0, 1), res.stdout + res.stderr  # verify-citation exits 1 on an unverified quote
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def _indexed(home: Path) -> list[str]:
    store = DocStore(home / "docstore.sqlite")
    try:
        return store.indexed_doc_ids()[1]
    finally:
        store.close()


def test_json_outputs_carry_the_trace_of_the_home(tmp_path: Path, nvda_template: Path, corpus_dir: Path) -> None:
    home = copy_home(nvda_template, tmp_path / "home")
    [doc] = _indexed(home)
    market = [_json("market", "NVDA", "--as-of", AS_OF, "--snapshot", str(corpus_dir), "--home", str(home))
              for _ in range(2)]
    check = _json("verify-citation", doc, "NVIDIA", "--home", str(home))
    memory = _json("memory", "NVDA", "--home", str(home))
    assert market[0]["ticker"] == "NVDA" and "verified" in check and memory["ticker"] == "NVDA"
    traces = [o["trace"] for o in (*market, check, memory)]
    assert len({t["request_id"] for t in traces}) == 4 and {t["version"] for t in traces} == {__version__}
    assert {t["corpus_signature"] for t in traces} == {corpus_signature([doc])}
    # the API and MCP results over this home hash their settings the same way (test_api_trace, test_mcp)
    snap = Settings(home=home, snapshot=corpus_dir.resolve())
    assert market[0]["trace"]["config_hash"] == market[1]["trace"]["config_hash"] == config_hash(
        snap, PRODUCT)
    assert check["trace"]["config_hash"] == config_hash(Settings(home=home), PRODUCT)


def test_a_setting_that_changes_results_changes_the_config_hash(tmp_path: Path, nvda_template: Path) -> None:
    home = str(copy_home(nvda_template, tmp_path / "home"))
    base = _json("memory", "NVDA", "--home", home)["trace"]
    assert _json("memory", "NVDA", "--home", home, env={"EQUIMIND_TOP_K": "5"})["trace"]["config_hash"] != base[
        "config_hash"]
    assert _json("memory", "NVDA", "--home", home, env={"EQUIMIND_RETRIEVAL_MODE": "bm25"})["trace"][
        "config_hash"] != base["config_hash"]
    same = _json("memory", "NVDA", "--home", home, env={"EQUIMIND_AUDIT_KEY": "k" * 32, "EQUIMIND_HTTP_TIMEOUT_S": "3"})
    assert same["trace"]["config_hash"] == base["config_hash"]  # secrets and timeouts do not change results


def test_ingesting_a_document_changes_the_corpus_signature(tmp_path: Path, nvda_template: Path,
                                                           corpus_dir: Path) -> None:
    home = copy_home(nvda_template, tmp_path / "home")
    before = _json("memory", "NVDA", "--home", str(home))["trace"]
    page = tmp_path / "SHOE_10-K_2024-03-01.html"
    page.write_text(TINY)
    services = fake_services(Settings(home=home, snapshot=corpus_dir))
    try:
        assert services.pipeline().run(documents(LocalFileSource(page).iter_results())).documents_added == 1
    finally:
        services.docstore.close()
    after = _json("memory", "NVDA", "--home", str(home))["trace"]
    assert after["corpus_signature"] != before["corpus_signature"]
    assert after["corpus_signature"] == corpus_signature(_indexed(home))
    assert after["config_hash"] == before["config_hash"]


def test_a_list_result_is_wrapped_and_an_empty_home_stays_empty(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    out = _json("backtest", "--list", "--home", str(home))
    assert out["items"] == [] and set(out) == {"items", "trace"}
    assert out["trace"]["corpus_signature"] == corpus_signature([])  # no docstore: the signature of no documents
    assert not (home / "docstore.sqlite").exists()  # the trace created nothing
