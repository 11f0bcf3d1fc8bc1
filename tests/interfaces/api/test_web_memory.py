"""The dashboard's Memory explorer in headless Chromium (fixtures and skips from ``test_web``; issue 31): a ticker's
memory tiers (raw evidence, daily, weekly, monthly, quarterly summaries), its research runs and its rating ledger,
each compared with what ``GET /api/v1/memory/{ticker}`` and ``/ledger/{ticker}`` answer, before and after two
research runs. Screenshot: test-artifacts/web/memory.png."""

from __future__ import annotations

from typing import Any

import pytest
import test_web as web  # its skips (no chromium, no playwright) skip this module too

_shot = web._shot
base_url, browser_context, page = web.base_url, web.browser_context, web.page  # its fixtures, shared

pytestmark = pytest.mark.integration
QUESTION = "Should I invest in NVIDIA?"


def _show(page: Any, ticker: str, as_of: str = "") -> None:
    page.click("#tab-memory")
    page.fill("#m-ticker", ticker)
    page.fill("#m-asof", as_of)
    page.click("#m-show")
    page.wait_for_selector(f"#m-result[data-ticker='{ticker}']")


def test_memory_explorer_shows_tiers_runs_and_the_ledger(page: Any, base_url: str) -> None:
    _show(page, "NVDA")
    assert page.locator("#m-ledger tr").count() == 1  # header only: nothing researched yet
    assert "no rated research" in page.locator("#m-ledger-note").inner_text()
    for as_of in ("2025-06-30", "2025-09-30"):
        res = page.request.post(base_url + "/api/v1/research", data={"ticker": "NVDA", "question": QUESTION,
                                                                     "as_of": as_of}, timeout=240_000)
        assert res.ok, res.text()
    _show(page, "NVDA")
    memory = page.request.get(base_url + "/api/v1/memory/NVDA").json()
    ledger = page.request.get(base_url + "/api/v1/ledger/NVDA").json()
    tiers = page.locator("#m-tiers tr[data-level]")
    assert tiers.count() == 5
    assert tiers.nth(0).get_attribute("data-periods") == str(memory["evidence_count"]) != "0"
    for i, level in enumerate(("daily", "weekly", "monthly", "quarterly"), 1):
        want = sum(1 for s in memory["summaries"] if s["level"] == level)
        assert tiers.nth(i).get_attribute("data-level") == level
        assert tiers.nth(i).get_attribute("data-periods") == str(want)
    items = sum(len(s["items"]) for s in memory["summaries"])
    assert page.locator("li.m-item").count() == items > 0  # every summary sentence, each with its Open button
    assert page.locator("#m-runs tr").count() == 1 + len(memory["runs"]) == 3
    rows = page.locator("#m-ledger tr[data-run]")
    assert rows.count() == len(ledger["entries"]) == 2
    assert "since 2025-06-30" in rows.nth(1).inner_text()
    _shot(page, "memory")
    with page.context.expect_page() as opened:  # the report view: the run's printable report, in a new tab
        page.locator("#m-runs a.m-report").nth(1).click()
    report = opened.value
    report.wait_for_load_state()
    assert "NVDA: Should I invest in NVIDIA?" in report.locator("h1").inner_text()
    assert report.locator("blockquote").count() > 0 and report.locator("img.chart").count() == 1
    report.screenshot(path=str(web.ARTIFACTS / "report.png"), full_page=True)
    report.close()
    pdf = page.request.get(base_url + page.locator("#m-runs a.m-pdf").nth(1).get_attribute("href"),
                           timeout=120_000)
    assert pdf.ok and pdf.body()[:5] == b"%PDF-", pdf.text()[:300]
    _show(page, "NVDA", "2025-07-31")  # the as-of rule: the later run is not shown
    assert page.locator("#m-ledger tr[data-run]").count() == 1 and page.locator("#m-runs tr").count() == 2
    assert not page.console_errors or all("404" in e for e in page.console_errors), page.console_errors
    assert not page.foreign, page.foreign
