"""The dashboard's Backtest page in headless Chromium (fixtures and skips from ``test_web``): a stored run's accuracy
table, the calibration of conviction (issue 31: buckets and ratings with Wilson intervals, Brier scores, the verdict)
and its reliability and equity plots, each compared with what ``GET /api/v1/backtest/{id}`` answers. Screenshot:
test-artifacts/web/backtest.png."""

from __future__ import annotations

from typing import Any

import pytest
import test_web as web  # its skips (no chromium, no playwright) skip this module too

_shot = web._shot
base_url, browser_context, page = web.base_url, web.browser_context, web.page  # its fixtures, shared

pytestmark = pytest.mark.integration


def test_backtest_page_shows_a_stored_runs_calibration(page: Any, base_url: str) -> None:
    body = {"tickers": ["NVDA"], "start": "2025-03-03", "end": "2025-06-02", "frequency": "monthly",
            "n_resamples": 200}
    res = page.request.post(base_url + "/api/v1/backtest", data=body, timeout=240_000)
    assert res.ok, res.text()
    run_id = res.json()["run_id"]
    page.click("#tab-backtest")
    page.wait_for_selector("#b-run[data-count]")
    page.select_option("#b-run", run_id)
    page.click("#b-show")
    page.wait_for_selector(f"#b-result[data-run='{run_id}']")
    report = page.request.get(f"{base_url}/api/v1/backtest/{run_id}").json()
    assert page.locator("#b-accuracy tr").count() == 1 + len(report["table"])  # header + one row per horizon
    rows = page.locator("#b-calibration tr[data-group]")
    want = [(h, f"{kind} {c['label']}", c["n"]) for h, b in report["calibration"].items()
            for kind, cells in (("conviction", b["buckets"]), ("rating", b["by_rating"])) for c in cells]
    assert rows.count() == len(want) > 0
    for i, (h, group, n) in enumerate(want):
        row = rows.nth(i)
        assert (row.get_attribute("data-horizon"), row.get_attribute("data-group"), row.get_attribute("data-n")) == \
            (h, group, str(n))
    verdicts = page.locator("#b-verdicts li").all_inner_texts()
    assert len(verdicts) == len(report["calibration"])
    for text, block in zip(verdicts, report["calibration"].values(), strict=True):
        assert block["verdict"] in text and "Brier" in text
    for img in ("#b-reliability", "#b-equity"):
        page.wait_for_function(f"document.querySelector('{img}').complete && "
                               f"document.querySelector('{img}').naturalWidth > 300")
    _shot(page, "backtest")
    assert not page.console_errors, page.console_errors
    assert not page.foreign, page.foreign
