"""The dashboard's Ask page in headless Chromium (fixtures and skips from ``test_web``: no /usr/bin/chromium or no
playwright -> skipped): the streamed answer, its quotes highlighted in their filing context, a refusal, bad input.

Every check compares the page with what ``POST /api/v1/ask`` answers to the same request; the data-center ask must
be answered (the recorded 10-K's segment row) and the unicorn ask refused. Screenshots go to test-artifacts/web/.
"""

from __future__ import annotations

from typing import Any

import pytest
import test_web as web  # its skips (no chromium, no playwright) skip this module too

_shot = web._shot
base_url, browser_context, page = web.base_url, web.browser_context, web.page  # its fixtures, shared

pytestmark = pytest.mark.integration

DATA_CENTER = "What was NVIDIA's data center revenue in fiscal 2025?"
UNICORNS = "How many unicorns does NVIDIA keep in its Santa Clara stable?"
RUN_TIMEOUT = 240_000  # ms: the first ask may fetch a filing from the recorded snapshot


def _words(text: str) -> str:
    return " ".join(text.split())


def _ask(page: Any, base_url: str, question: str, ticker: str = "", as_of: str = "") -> dict[str, Any]:
    """Asks on the Ask page; once the page has rendered its streamed answer, returns what ``POST /api/v1/ask``
    answers to the same request (the store is warm by then: whatever the first ask fetched is stored)."""
    page.click("#tab-ask")
    page.fill("#a-question", question)
    page.fill("#a-ticker", ticker)
    page.fill("#a-asof", as_of)
    page.click("#a-run")
    page.wait_for_selector("#a-result[data-context='done']", timeout=RUN_TIMEOUT)
    body = {"question": question, "ticker": ticker.upper() or None, "as_of": as_of or None}
    res = page.request.post(base_url + "/api/v1/ask", data=body, timeout=RUN_TIMEOUT)
    assert res.ok, res.text()
    answer: dict[str, Any] = res.json()
    return answer


def _assert_page_shows(page: Any, ans: dict[str, Any]) -> None:
    """The direct answer, the verdict and every sentence with its quotes and figures are the API's."""
    assert page.locator("#a-support").get_attribute("data-support") == ans["support"]
    assert _words(page.locator("#a-answer").inner_text()) == _words(" ".join(s["text"] for s in ans["sentences"])) \
        or ans["support"] == "refused"
    items = page.locator("li.a-sentence")
    assert items.count() == len(ans["sentences"])
    for i, s in enumerate(ans["sentences"]):
        item = items.nth(i)
        assert _words(item.locator(".a-text").inner_text()) == _words(s["text"])
        assert item.get_attribute("data-method") == s["method"]
        blocks = item.locator(".a-quote")
        assert blocks.count() == len(s["quotes"])
        for j, q in enumerate(s["quotes"]):
            block = blocks.nth(j)
            assert block.get_attribute("data-context") == "loaded"
            assert _words(block.locator("mark").inner_text()) == _words(q["text"])
            context = _words(block.locator(".a-context").inner_text())
            assert len(context) > len(_words(q["text"])) + 100  # the span sits in its surrounding filing text
            box, mark = block.locator(".a-context").bounding_box(), block.locator("mark").bounding_box()
            assert box["y"] <= mark["y"] and mark["y"] + mark["height"] <= box["y"] + box["height"]  # in view
            meta = block.locator(".a-quote-meta").inner_text()
            assert q["doc_id"][:12] in meta and f"{q['start']}–{q['end']}" in meta and q["doc_sha256"][:12] in meta
        figures = item.locator("tr.a-figure")
        assert figures.count() == len(s["figures"])
        for j, f in enumerate(s["figures"]):
            row = figures.nth(j).inner_text()
            assert f["unit"] in row and str(f["provenance"].get("accession", "–")) in row
    degraded = page.locator("#a-degraded li").all_inner_texts()
    assert [_words(d) for d in degraded] == [_words(d) for d in ans["degraded"]]


def test_ask_renders_the_answer_with_its_quotes_highlighted_in_context(page: Any, base_url: str) -> None:
    ans = _ask(page, base_url, DATA_CENTER, "NVDA", "2025-09-30")
    page.wait_for_selector("#a-progress li")
    stages = page.locator("#a-progress li").evaluate_all("els => els.map(e => e.dataset.stage)")
    assert len(stages) >= 2 and page.locator("#a-status").inner_text() == "done"
    assert ans["question"] == DATA_CENTER and ans["ticker"] == "NVDA" and ans["as_of"] == "2025-09-30"
    # the recorded 10-K's segment table answers this ask: an answer, not a refusal, with at least one quote
    assert ans["support"] in ("supported", "partial"), ans.get("refusal")
    quotes = [q for s in ans["sentences"] for q in s["quotes"]]
    assert quotes, ans["sentences"]
    _assert_page_shows(page, ans)  # every sentence and quote of the API's answer, each quote loaded in context
    marks = [_words(m) for m in page.locator("#a-sentences mark").all_inner_texts()]
    assert len(marks) == len(quotes) and any("115,186" in m for m in marks), marks  # the segment row, highlighted
    assert "115,186" in page.locator("#a-answer").inner_text()
    assert page.locator("#a-refusal").is_hidden()
    for q in quotes:  # each highlighted quote is a verified span of the stored filing
        check = page.request.post(base_url + "/api/v1/citations/verify",
                                  data={"doc_id": q["doc_id"], "quote": q["text"]}).json()
        assert check["verified"] and (check["start"], check["end"]) == (q["start"], q["end"]), (q, check)
    _shot(page, "ask-1-answer")
    first = next(q for s in ans["sentences"] for q in s["quotes"])
    page.locator("#a-sentences .a-quote button.cite").first.click()  # the drawer opens the same span
    page.wait_for_selector("#p-mark")
    assert _words(page.locator("#p-mark").inner_text()) == _words(first["text"])
    assert page.console_errors == [] and page.foreign == []


def test_ask_xbrl_answer_shows_its_figure_with_period_concept_and_accession(page: Any, base_url: str) -> None:
    ans = _ask(page, base_url, "What was NVIDIA's total revenue in fiscal 2025?", "", "2025-09-30")
    _assert_page_shows(page, ans)
    xbrl = [s for s in ans["sentences"] if s["method"] == "xbrl"]
    assert xbrl and xbrl[0]["figures"], ans  # the recorded companyfacts hold NVDA's FY2025 revenue
    f = xbrl[0]["figures"][0]
    cells = page.locator("li.a-sentence[data-method='xbrl'] tr.a-figure").first.locator("td").all_inner_texts()
    assert cells[0] == f["name"] and cells[1].replace(",", "") == f"{f['value']:.0f}" and cells[2] == f["unit"]
    assert cells[3].startswith(f"{f['period_start']} to {f['period_end']}")
    assert cells[4:7] == [f["provenance"]["concept"], f["provenance"]["accession"], f["provenance"]["form"]]
    _shot(page, "ask-2-xbrl")
    assert page.console_errors == [] and page.foreign == []


def test_ask_degraded_lines_are_visible(page: Any, base_url: str) -> None:
    # fiscal 2025 ended on 2025-01-26 but its 10-K was filed on 2025-02-26: as of 2025-02-10 no XBRL fact for it
    # was filed yet, and the answer says so in its degraded lines
    ans = _ask(page, base_url, "What was NVIDIA's total revenue in fiscal 2025?", "NVDA", "2025-02-10")
    assert any(d.startswith("xbrl: no XBRL fact") for d in ans["degraded"]), ans["degraded"]
    _assert_page_shows(page, ans)  # the lines themselves
    assert page.locator("#a-degraded").is_visible() and page.locator("#a-degraded h4").inner_text() == "Degraded"
    _shot(page, "ask-3-degraded")
    assert page.console_errors == [] and page.foreign == []


def test_ask_refusal_renders_its_message_and_missing_terms(page: Any, base_url: str) -> None:
    ans = _ask(page, base_url, UNICORNS, "", "2025-09-30")  # no ticker: the question's company
    assert ans["ticker"] == "NVDA" and ans["support"] == "refused", ans  # no unicorns in NVIDIA's filings
    _assert_page_shows(page, ans)
    assert page.locator("#a-refusal").is_visible()
    msg = _words(page.locator("#a-refusal-msg").inner_text())
    assert ans["refusal"]["reason"] in msg and msg.endswith(_words(ans["refusal"]["message"]))
    missing = page.locator("#a-missing .missing-term").all_inner_texts()
    assert missing == ans["refusal"]["missing"] and "unicorns" in missing
    assert page.locator("li.a-sentence").count() == 0
    _shot(page, "ask-4-refusal")
    assert page.console_errors == [] and page.foreign == []


def test_ask_bad_input_shows_the_error(page: Any) -> None:
    page.click("#tab-ask")
    page.fill("#a-question", "   ")
    page.click("#a-run")
    page.wait_for_selector("#a-error:not([hidden])")
    text = page.locator("#a-error").inner_text()
    assert text.startswith("question") and "character" in text, text
    assert page.locator("#a-result").is_hidden() and page.locator("#a-progress-box").is_hidden()
    _shot(page, "ask-5-empty-question")
    page.fill("#a-question", "What was revenue?")
    page.fill("#a-ticker", "zzzzq")
    page.click("#a-run")
    from playwright.sync_api import expect

    expect(page.locator("#a-error")).to_contain_text("unknown ticker ZZZZQ")
    assert "NVDA" in page.locator("#a-error").inner_text()  # the hint names the stored tickers
    # only the two refused requests were logged, no script error
    assert all(e.startswith(("422 ", "404 ", "Failed to load resource")) for e in page.console_errors), \
        page.console_errors
    assert page.foreign == []
