"""``GET /api/v1/changes/{ticker}`` over the recorded NVDA 10-K / 10-Q pair, through FastAPI's TestClient (real
stores, hash embedder: a comparison reads text, not vectors), and the dashboard's Changes page in headless Chromium
(skipped without /usr/bin/chromium or playwright).

The home starts empty: the first request fetches the pair from the recorded snapshot (its embeddings deferred), as
a server in snapshot mode would. Every change's quotes are checked against the stored text and through
``POST /api/v1/citations/verify-batch``; bad input gets the API's statuses (ConfigError → 422, NotFoundError → 404).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from equimind.core.config import Settings
from equimind.interfaces.api.app import create_app
from tests.interfaces.interfaces_fakes import fake_services

pytestmark = pytest.mark.integration

KINDS = ("added", "removed", "reworded", "figures_changed")
CHROMIUM = Path("/usr/bin/chromium")
ORIGIN = "http://equimind.test"  # the dashboard's origin in the browser test (its requests never leave the process)


@pytest.fixture(scope="module")
def changes_settings(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Settings:
    home = tmp_path_factory.mktemp("changes_api") / "home"
    return Settings(home=home, snapshot=corpus_dir, shared=corpus_dir.parent, provider="offline")


@pytest.fixture(scope="module")
def client(changes_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(changes_settings, fake_services(changes_settings))) as c:
        yield c


@pytest.fixture(scope="module")
def first(client: TestClient) -> tuple[dict[str, Any], str]:
    """The default comparison (the store is empty until this request fetches the pair) and its X-Request-ID."""
    res = client.get("/api/v1/changes/NVDA")
    assert res.status_code == 200, res.text
    return res.json(), res.headers["X-Request-ID"]


def _sides(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(name, c[name]) for c in report["changes"] for name in ("old", "new") if c[name] is not None]


def _msg(res: Any) -> str:
    assert res.status_code == 422, res.text
    return " ".join(e["msg"] for e in res.json()["detail"])


def test_default_pair_is_the_10q_against_the_10k_before_it(first: tuple[dict[str, Any], str]) -> None:
    report, rid = first
    old, new = report["old"], report["new"]
    assert (old["ticker"], old["form"], old["filed_at"]) == ("NVDA", "10-K", "2025-02-26")
    assert (new["ticker"], new["form"], new["filed_at"]) == ("NVDA", "10-Q", "2025-08-27")
    assert "risk-factor update" in report["pairing"]
    risk = next(s for s in report["sections"] if s["key"] == "risk_factors")
    assert risk["mode"] == "risk_factor_update" and risk["new_paragraphs"] > 0
    changes = report["changes"]
    assert changes and [c["rank"] for c in changes] == list(range(1, len(changes) + 1))
    assert all(c["kind"] in KINDS and c["summary"] for c in changes)
    assert {k: report["counts"][k] for k in KINDS} == {k: sum(c["kind"] == k for c in changes) for k in KINDS}
    tiers = [c["tier"] for c in changes]
    assert tiers == sorted(tiers) and report["ranking_rule"].startswith("Tier 0")  # ranked by the stated rule
    assert report["citations_failed"] == 0 and report["citations_checked"] >= len(_sides(report))
    assert any("fetched 2 filing(s) of NVDA" in d for d in report["degraded"])  # the empty store fetched the pair
    assert report["trace"]["request_id"] == rid and len(report["trace"]["corpus_signature"]) == 64


def test_every_change_quotes_the_stored_text_on_its_sides(client: TestClient,
                                                          first: tuple[dict[str, Any], str]) -> None:
    report, _ = first
    store = client.app.state.engine.services.docstore  # type: ignore[attr-defined]
    texts = {d: store.get_document_text(d) for d in (report["old"]["doc_id"], report["new"]["doc_id"])}
    for c in report["changes"]:
        want = {"added": (False, True), "removed": (True, False)}.get(c["kind"], (True, True))
        assert (c["old"] is not None, c["new"] is not None) == want, c
    for name, side in _sides(report):
        assert side["doc_id"] == report[name]["doc_id"]  # the old side cites the old filing, the new the new
        assert texts[side["doc_id"]][side["start"]:side["end"]] == side["quote"]
    batch = [{"doc_id": s["doc_id"], "start": s["start"], "end": s["end"], "quote": s["quote"]}
             for _, s in _sides(report) if len(s["quote"]) <= 2000][:50]
    assert len(batch) >= 10
    res = client.post("/api/v1/citations/verify-batch", json={"citations": batch})
    assert res.status_code == 200, res.text
    out = res.json()
    assert out["verified"] == out["total"] == len(batch)
    assert all(r["in_claimed_span"] and r["check"]["match"] == "exact" for r in out["results"])


def test_section_filter_and_the_stored_pair_are_read_without_fetching(client: TestClient,
                                                                      first: tuple[dict[str, Any], str]) -> None:
    report, _ = first
    res = client.get("/api/v1/changes/nvda", params=[("section", "risk_factors"), ("section", "Item 1A")])
    assert res.status_code == 200, res.text
    only = res.json()
    assert [s["key"] for s in only["sections"]] == ["risk_factors"]
    assert only["changes"] and {c["section"] for c in only["changes"]} == {"risk_factors"}
    assert (only["old"]["doc_id"], only["new"]["doc_id"]) == (report["old"]["doc_id"], report["new"]["doc_id"])
    assert not any("fetched" in d for d in only["degraded"])  # DB-first: the pair is stored now
    assert only["trace"]["corpus_signature"] == report["trace"]["corpus_signature"]


def test_reversed_from_and_to_is_refused_naming_the_fix(client: TestClient,
                                                       first: tuple[dict[str, Any], str]) -> None:
    report, _ = first
    res = client.get("/api/v1/changes/NVDA", params={"from": report["new"]["accession"],
                                                     "to": report["old"]["accession"]})
    msg = _msg(res)
    assert "is later than to" in msg and "swap them" in msg


def test_unknown_ticker_is_404_with_a_hint(client: TestClient) -> None:
    res = client.get("/api/v1/changes/ZZZQX")
    assert res.status_code == 404, res.text
    body = res.json()
    assert "unknown ticker ZZZQX" in body["detail"] and body["hint"]
    assert res.headers["X-Request-ID"]


@pytest.mark.parametrize(("query", "reason"), [
    ({"form": "8-K"}, "use 10-K or 10-Q"),
    ({"section": "bogus"}, "is not a compared section"),
    ({"as_of": "2999-01-01"}, "is in the future"),
])
def test_bad_input_is_422_naming_the_fix(client: TestClient, first: tuple[dict[str, Any], str],
                                         query: dict[str, str], reason: str) -> None:
    assert reason in _msg(client.get("/api/v1/changes/NVDA", params=query))


def test_ill_formed_ticker_is_refused_by_the_path_pattern(client: TestClient) -> None:
    res = client.get("/api/v1/changes/NVDA;DROP")
    assert res.status_code == 422 and res.json()["detail"][0]["loc"] == ["path", "ticker"]


def test_the_route_is_in_the_openapi_spec(client: TestClient) -> None:
    op = client.get("/api/v1/openapi.json").json()["paths"]["/api/v1/changes/{ticker}"]["get"]
    assert {p["name"] for p in op["parameters"]} == {"ticker", "form", "from", "to", "section", "as_of"}
    assert {"200", "404", "422"} <= set(op["responses"])


# --------------------------------------------------------------------------------------------------------- dashboard


def test_dashboard_changes_page_shows_the_ranked_changes_with_both_quotes(
        client: TestClient, first: tuple[dict[str, Any], str]) -> None:
    """The page in headless Chromium, its requests answered by this module's app through the TestClient (no second
    server over the same home): the pair is stored by now, so the page's request reads it."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium chromium-driver")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright==1.65.2")
    report, _ = first

    def forward(route: Any) -> None:
        req = route.request
        headers = {k: v for k, v in req.headers.items() if k.lower() in ("accept", "content-type")}
        res = client.request(req.method, req.url.removeprefix(ORIGIN), content=req.post_data_buffer, headers=headers)
        route.fulfill(status=res.status_code, headers=dict(res.headers), body=res.content)

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, chromium_sandbox=False,
                                     args=["--disable-gpu", "--no-first-run", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route(ORIGIN + "/**", forward)
            page.goto(ORIGIN + "/")
            page.click("#tab-changes")
            page.fill("#c-ticker", "NVDA")
            page.check("#changes-form input[value=risk_factors]")
            page.click("#c-run")
            page.wait_for_selector("#c-result[data-count]", timeout=60_000)
            assert page.locator("#c-pairing").inner_text() == report["pairing"]
            assert page.locator("#c-result").get_attribute("data-count") == str(len(report["changes"]))
            items = page.locator("li.c-change")
            assert items.count() == min(25, len(report["changes"]))
            top = report["changes"][0]
            item = items.nth(0)
            assert item.get_attribute("data-kind") == top["kind"]
            assert item.locator(".c-summary").inner_text() == top["summary"]
            for name in ("old", "new"):
                side = top[name]
                block = item.locator(f".c-{name}")
                if side is None:
                    assert block.count() == 0
                    continue
                assert block.locator(".c-where").inner_text() == f"{side['doc_id'][:12]}:{side['start']}-{side['end']}"
                assert _words(block.locator(".c-quote").inner_text()) == _words(side["quote"])
            item.locator(".c-side button.cite").first.click()  # opens the span highlighted in its filing
            page.wait_for_selector("#p-mark")
            assert _words(page.locator("#p-mark").inner_text()) == _words((top["old"] or top["new"])["quote"])
            page.fill("#c-ticker", "ZZZQX")
            page.click("#c-run")
            page.wait_for_selector("#c-error:not([hidden])")
            assert "unknown ticker ZZZQX" in page.locator("#c-error").inner_text()
            assert not errors, errors
        finally:
            browser.close()


def _words(text: str) -> str:
    return " ".join(text.split())
