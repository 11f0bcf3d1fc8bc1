"""The rating ledger end to end over the recorded snapshot (NVDA's 10-K in the store, its 10-Q fetched when the
as-of date reaches it; hash embedder): `equimind research` twice at two as-of dates carries the "since" block in
--json and prints it, `equimind ledger` lists the history (as-of rule included), and GET /api/v1/ledger/{ticker}
returns the same. Two research runs (~3 s each over the session's NVDA store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from interfaces_fakes import fake_services
from typer.testing import CliRunner

from equimind.core.config import Settings
from equimind.core.research import Recommendation
from equimind.interfaces.api.app import create_app
from equimind.interfaces.cli import app as cli_app
from equimind.interfaces.cli import render_report
from equimind.interfaces.cli.main import app
from equimind.interfaces.cli.render import console

pytestmark = [pytest.mark.slow, pytest.mark.integration]

runner = CliRunner()
QUESTION = "Should I invest in NVIDIA?"


@pytest.fixture(scope="module")
def researched(nvda_home: Path, corpus_dir: Path) -> dict:  # type: ignore[type-arg]
    """Research at 2025-06-30 (the 10-K only), then at 2025-09-30 (the 10-Q of 2025-08-27 is fetched): the CLI over
    fake-model services on a private copy of the NVDA store; the second run's --json."""
    mp = pytest.MonkeyPatch()
    mp.setattr(cli_app, "open_store", fake_services)
    try:
        args = ["--snapshot", str(corpus_dir), "--home", str(nvda_home), "--provider", "offline", "--json"]
        first = runner.invoke(app, ["research", "NVDA", QUESTION, "--as-of", "2025-06-30", *args])
        assert first.exit_code == 0, first.stderr
        assert json.loads(first.stdout)["since"] is None  # nothing researched before
        second = runner.invoke(app, ["research", "NVDA", QUESTION, "--as-of", "2025-09-30", *args])
        assert second.exit_code == 0, second.stderr
    finally:
        mp.undo()
    return json.loads(second.stdout)  # type: ignore[no-any-return]


def test_research_twice_shows_the_since_block(researched: dict) -> None:  # type: ignore[type-arg]
    rec = Recommendation.model_validate({k: v for k, v in researched.items() if k != "trace"})
    assert rec.since is not None
    with console.capture() as captured:
        render_report.recommendation(rec)
    flat = " ".join(captured.get().split())
    assert f"since 2025-06-30: {rec.since.rating_from} → {rec.rating}" in flat
    assert f"conviction {rec.since.conviction_from:.2f} → {rec.conviction:.2f}" in flat
    assert "Figures changed" in flat and "revenue_growth_yoy [cited]" in flat
    for e in rec.since.evidence_entered[:3]:
        assert f"doc {e.doc_id[:12]} chars {e.start}-{e.end}" in flat


def test_since_block_in_json_is_cited_and_never_later(researched: dict,  # type: ignore[type-arg]
                                                      nvda_home: Path) -> None:
    since = researched["since"]
    assert since["since"] == "2025-06-30" and since["rating_to"] == researched["rating"]
    code, out = _ledger(nvda_home)
    entries = json.loads(out)["entries"]
    assert code == 0 and [e["entry"]["as_of"] for e in entries] == ["2025-06-30", "2025-09-30"]
    assert entries[1]["change"] == since  # the listing's change is the one the run printed
    assert since["previous_run_id"] == entries[0]["entry"]["run_id"]
    changed = {c["id"]: c for c in since["figures_changed"]}
    growth = changed["revenue_growth_yoy"]  # the 10-Q of 2025-08-27 moved the quarter's growth
    assert growth["old"]["value"] != growth["new"]["value"]
    assert growth["old"]["as_of"] < "2025-06-30" < growth["new"]["as_of"] <= "2025-09-30"
    for e in since["evidence_entered"] + since["evidence_left"]:
        assert e["doc_id"] and e["end"] > e["start"] and e["quote"]
    for e in entries[1]["entry"]["evidence"]:
        assert e["filed_at"] is None or e["filed_at"] <= "2025-09-30"
    # the first run's entry saw nothing dated after its as-of date
    for e in entries[0]["entry"]["evidence"]:
        assert e["filed_at"] is None or e["filed_at"] <= "2025-06-30"
    assert all(f["as_of"] is None or f["as_of"] <= "2025-06-30" for f in entries[0]["entry"]["figures"])


def _ledger(home: Path, *args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["ledger", "NVDA", "--home", str(home), "--json", *args])
    return res.exit_code, res.stdout


def test_ledger_command_lists_the_history_and_obeys_as_of(researched: dict,  # type: ignore[type-arg]
                                                          nvda_home: Path) -> None:
    res = runner.invoke(app, ["ledger", "nvda", "--home", str(nvda_home)])
    assert res.exit_code == 0, res.stderr
    flat = " ".join(res.stdout.split())
    assert "Rating ledger: NVDA (2 entries)" in flat and "first entry" in flat and "as of 2025-09-30" in flat
    code, out = _ledger(nvda_home, "--as-of", "2025-07-31")
    data = json.loads(out)
    assert code == 0 and [e["entry"]["as_of"] for e in data["entries"]] == ["2025-06-30"]
    assert data["trace"]["request_id"] and data["as_of"] == "2025-07-31"
    res = runner.invoke(app, ["ledger", "NVDA", "--home", str(nvda_home), "--as-of", "2025-01-02"])
    assert res.exit_code == 2 and "choose --as-of 2025-06-30 or later" in " ".join(res.stderr.split())
    res = runner.invoke(app, ["ledger", "TSLA", "--home", str(nvda_home)])
    assert res.exit_code == 2
    assert "no research recorded for TSLA; run `equimind research TSLA" in " ".join(res.stderr.split())


def test_ledger_route(researched: dict, nvda_settings: Settings) -> None:  # type: ignore[type-arg]
    with TestClient(create_app(nvda_settings, fake_services(nvda_settings))) as client:
        res = client.get("/api/v1/ledger/nvda")
        assert res.status_code == 200, res.text
        body = res.json()
        assert body["ticker"] == "NVDA" and len(body["entries"]) == 2 and body["trace"]["request_id"]
        assert body["entries"][1]["change"]["since"] == "2025-06-30"
        early = client.get("/api/v1/ledger/NVDA", params={"as_of": "2025-07-31"}).json()
        assert [e["entry"]["as_of"] for e in early["entries"]] == ["2025-06-30"]
        missing = client.get("/api/v1/ledger/NVDA", params={"as_of": "2025-01-02"})
        assert missing.status_code == 404 and "choose --as-of" in missing.json()["detail"]
        assert "POST /api/v1/research" in missing.json()["hint"]
        assert client.get("/api/v1/ledger/ZZZZQ").status_code == 404  # unknown ticker
        assert "/api/v1/ledger/{ticker}" in client.get("/api/v1/openapi.json").json()["paths"]
