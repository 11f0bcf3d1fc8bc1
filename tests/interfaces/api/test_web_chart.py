"""The dashboard's lightweight-charts price chart, the progress list's step numbers and the header's store counts,
in headless Chromium (fixtures and skips from ``test_web``: no /usr/bin/chromium or no playwright -> skipped).

Screenshots go to test-artifacts/web/.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_web as web  # its skips (no chromium, no playwright) skip this module too
from interfaces_fakes import AS_OF, fake_services, live_server

from equimind.core.config import Settings
from equimind.interfaces.api.app import create_app

ARTIFACTS, _shot = web.ARTIFACTS, web._shot
base_url, browser_context, page = web.base_url, web.browser_context, web.page  # its fixtures, shared

pytestmark = pytest.mark.integration

VENDOR = Path(__file__).resolve().parents[3] / "equimind" / "interfaces" / "web" / "vendor" / "lightweight-charts"
UP, DOWN = (22, 163, 74), (220, 38, 38)  # chart.js's candle colours


def _draw_chart(page: Any) -> dict[str, Any]:
    """Chart-only for NVDA at AS_OF; returns the API's series JSON the chart was drawn from."""
    page.fill("#r-ticker", "nvda")
    page.fill("#r-asof", AS_OF)
    page.click("#r-chart")
    page.wait_for_selector("#chart[data-bars] [data-pane='macd'] canvas")
    series: dict[str, Any] = page.evaluate("EquiChart.current().data")
    return series


def _pane_box(page: Any, name: str) -> dict[str, float]:
    box: dict[str, float] = page.locator(f"#chart [data-pane='{name}']").bounding_box()
    return box


def _visible_range(page: Any) -> tuple[float, float]:
    r = page.evaluate("(() => { const r = EquiChart.current().chart.timeScale().getVisibleLogicalRange();"
                      " return [r.from, r.to]; })()")
    return float(r[0]), float(r[1])


def _bar_x(page: Any, index: int) -> float:
    """The page x of bar ``index`` on the chart's (shared) time scale."""
    x = page.evaluate(f"EquiChart.current().chart.timeScale().logicalToCoordinate({index})")
    return float(_pane_box(page, "price")["x"]) + float(x)


def _near(pixel: tuple[int, ...], color: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 12 for a, b in zip(pixel[:3], color, strict=True))


def _colour_counts(png: bytes) -> tuple[int, int]:
    from PIL import Image

    colors = Image.open(io.BytesIO(png)).convert("RGB").getcolors(1 << 24) or []
    return sum(c for c, p in colors if _near(p, UP)), sum(c for c, p in colors if _near(p, DOWN))


def test_chart_draws_with_lightweight_charts_in_three_panes(page: Any) -> None:
    s = _draw_chart(page)
    n = len(s["dates"])
    assert 200 < n < 260  # one year of trading days up to the as-of date
    assert f"NVDA to {AS_OF} · {n} bars" in page.locator("#chart-status").inner_text()
    assert page.evaluate("typeof LightweightCharts.createChart") == "function"
    assert page.evaluate("LightweightCharts.version()") == (VENDOR / "VERSION").read_text().strip()
    assert page.evaluate("EquiChart.current().chart.panes().length") == 3
    boxes = [_pane_box(page, name) for name in ("price", "rsi", "macd")]
    assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]  # stacked, price on top
    assert boxes[0]["height"] > 2 * boxes[1]["height"] > 100
    assert page.locator("#chart svg").count() == 0  # the hand-drawn SVG chart is gone
    # every series holds one point per bar, and its last value is the API's
    lengths = page.evaluate("Object.fromEntries(Object.entries(EquiChart.current().series)"
                            ".map(([k, x]) => [k, x.data().length]))")
    assert set(lengths) == {"candles", "volume", "sma_20", "sma_50", "sma_200", "bb_upper", "bb_middle", "bb_lower",
                            "rsi_14", "macd", "macd_signal", "macd_hist"}
    assert set(lengths.values()) == {n}
    for key in ("rsi_14", "macd", "sma_200", "volume"):
        last = page.evaluate(f"EquiChart.current().series.{key}.dataByIndex({n - 1}).value")
        assert last == pytest.approx(s[key][-1]), key
    candle = page.evaluate(f"EquiChart.current().series.candles.dataByIndex({n - 1})")
    assert [candle[k] for k in ("open", "high", "low", "close")] == [s[k][-1] for k in ("open", "high", "low", "close")]
    # the canvas really shows rising and falling candles
    ups, downs = _colour_counts(page.locator("#chart [data-pane='price']").screenshot())
    assert ups > 300 and downs > 300, (ups, downs)
    # the attribution the library's license asks for (its own logo is off: it needs an inline style the CSP refuses)
    assert "TradingView" in page.locator(".attribution a[href='https://www.tradingview.com/']").inner_text()
    _shot(page, "03-chart")
    assert page.console_errors == [] and page.foreign == []


def test_zoom_and_scroll_on_the_price_pane_move_the_indicator_panes(page: Any) -> None:
    s = _draw_chart(page)
    n = len(s["dates"])
    before = _visible_range(page)
    rsi_before = page.locator("#chart [data-pane='rsi']").screenshot()
    price = _pane_box(page, "price")
    page.mouse.move(price["x"] + price["width"] * 0.6, price["y"] + price["height"] * 0.5)
    for _ in range(4):
        page.mouse.wheel(0, -240)
    page.wait_for_function(f"(() => {{ const r = EquiChart.current().chart.timeScale().getVisibleLogicalRange();"
                           f" return r.to - r.from < {0.7 * (before[1] - before[0])}; }})()")
    zoomed = _visible_range(page)
    assert zoomed[1] - zoomed[0] < 0.7 * (before[1] - before[0])
    assert page.locator("#chart [data-pane='rsi']").screenshot() != rsi_before  # the RSI pane redrew the zoom
    # a bar in the zoomed window sits at one x in every pane: the crosshair in the RSI pane names that bar
    i = int((zoomed[0] + zoomed[1]) / 2)
    rsi = _pane_box(page, "rsi")
    page.mouse.move(_bar_x(page, i), rsi["y"] + rsi["height"] / 2)
    assert page.locator("#chart").get_attribute("data-crosshair") == s["dates"][i]
    _shot(page, "07-chart-zoomed")
    # dragging the price pane scrolls the time scale back in time, keeping the zoom
    page.mouse.move(price["x"] + price["width"] * 0.3, price["y"] + price["height"] * 0.5)
    page.mouse.down()
    page.mouse.move(price["x"] + price["width"] * 0.7, price["y"] + price["height"] * 0.5, steps=8)
    page.mouse.up()
    scrolled = _visible_range(page)
    assert scrolled[0] < zoomed[0] - 5 and scrolled[1] - scrolled[0] == pytest.approx(zoomed[1] - zoomed[0], abs=1)
    assert 0 <= i < n and page.console_errors == [] and page.foreign == []


def test_crosshair_shows_the_bar_values_in_every_pane(page: Any) -> None:
    s = _draw_chart(page)
    n = len(s["dates"])
    readout = page.locator("#chart-readout")
    assert readout.inner_text().startswith(s["dates"][-1])  # before any move: the last bar
    i = n - 40
    price = _pane_box(page, "price")
    page.mouse.move(_bar_x(page, i), price["y"] + price["height"] * 0.4)
    text = readout.inner_text()
    assert text.startswith(s["dates"][i])
    assert f"C {s['close'][i]:,.2f}" in text and f"RSI {s['rsi_14'][i]:,.1f}" in text
    assert f"MACD {s['macd'][i]:,.2f} / {s['macd_signal'][i]:,.2f}" in text
    assert f"SMA20 {s['sma_20'][i]:,.2f}" in text and f"SMA200 {s['sma_200'][i]:,.2f}" in text
    _shot(page, "08-chart-crosshair")
    macd = _pane_box(page, "macd")
    page.mouse.move(_bar_x(page, i - 10), macd["y"] + macd["height"] / 2)
    assert readout.inner_text().startswith(s["dates"][i - 10])  # the MACD pane's crosshair names the same bars
    assert page.console_errors == []


@pytest.fixture(scope="module")
def empty_url(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Iterator[str]:
    """A server over an empty store: the research run has to fetch and ingest NVDA's recorded filings and facts."""
    home = tmp_path_factory.mktemp("empty_home") / "home"
    settings = Settings(home=home, snapshot=corpus_dir, shared=corpus_dir.parent, provider="offline")
    with live_server(create_app(settings, fake_services(settings))) as url:
        yield url


def _counts(text: str) -> tuple[int, int]:
    m = re.search(r"(\d+) documents · (\d+) chunks", text)
    assert m, text
    return int(m[1]), int(m[2])


def test_research_numbers_every_step_and_refreshes_the_header_counts(browser_context: Any, empty_url: str) -> None:
    from playwright.sync_api import expect

    pg = browser_context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(empty_url + "/")
    health = pg.locator("#health")
    expect(health).to_have_attribute("data-status", re.compile("."))
    assert _counts(health.inner_text()) == (0, 0)
    pg.fill("#r-ticker", "NVDA")
    pg.fill("#r-question", "Should I invest in NVIDIA?")
    pg.fill("#r-asof", AS_OF)
    pg.click("#r-run")
    pg.wait_for_selector("#result:not([hidden])", timeout=240_000)
    expect(health).not_to_contain_text(" 0 documents", timeout=10_000)
    stored = pg.request.get(empty_url + "/api/v1/health").json()["store"]
    assert _counts(health.inner_text()) == (stored["documents"], stored["chunks"]) and stored["documents"] > 0
    steps = pg.locator("#progress li")
    assert steps.count() >= 12
    ol = pg.locator("#progress").bounding_box()
    for n in range(1, steps.count() + 1):
        number = steps.nth(n - 1).locator(".step-n")
        assert number.inner_text() == f"{n}."
        if n >= 9:  # the list scrolls: bring the step into view, then its number must lie inside the list's box
            number.scroll_into_view_if_needed()
            box = number.bounding_box()
            assert box["x"] >= ol["x"] and box["x"] + box["width"] <= ol["x"] + ol["width"], (n, box, ol)
            assert number.evaluate("e => e.scrollWidth <= e.clientWidth"), n  # the text fits its column
    assert pg.locator("#progress").evaluate("e => e.scrollWidth <= e.clientWidth")  # nothing cut on either side
    _shot(pg, "09-research-after-run")
    pg.locator("#progress").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    pg.evaluate("window.scrollTo(0, 0)")
    pg.screenshot(path=str(ARTIFACTS / "10-progress-and-counts.png"),
                  clip={"x": 0, "y": 0, "width": 1400, "height": 560})
    assert errors == []
    pg.close()
