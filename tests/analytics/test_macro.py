"""MacroClient through its real HTTP code against a local server speaking FRED's and the World Bank's formats.

The payloads below are small test fixtures in the documented response formats (not recorded data); what is tested
is the client: URL paths and parameters, the as-of/vintage rules, staleness, and degradation without a network."""

from __future__ import annotations

import json
import socket
from datetime import date
from pathlib import Path

import pytest
from market_replay import ReplayServer, SleepRecorder

from equimind.core.config import Settings
from equimind.sources.macro import FRED_SERIES, MacroClient, parse_fred_csv

AS_OF = date(2025, 6, 30)


def _csv(series: str, rows: list[tuple[str, str]]) -> tuple[str, bytes]:
    body = "observation_date," + series + "\n" + "".join(f"{d},{v}\n" for d, v in rows)
    return "text/csv", body.encode()


def _fred_graph(query: dict[str, str]) -> tuple[str, bytes] | None:
    sid = query.get("id", "")
    monthly = [(f"{y}-{m:02d}-01", str(300 + (y - 2024) * 12 + m)) for y in (2024, 2025) for m in range(1, 13)]
    table = {
        "CPIAUCSL": monthly,
        "DFF": [("2025-06-27", "4.33"), ("2025-06-28", "4.33"), ("2025-06-29", "4.33"), ("2025-06-30", "4.31")],
        "GDP": [("2024-10-01", "29700.6"), ("2025-01-01", "29962.0"), ("2025-04-01", "30331.1")],
        "VIXCLS": [("2025-06-27", "16.32"), ("2025-06-30", "16.73"), ("2025-07-01", "16.83")],
    }
    return _csv(sid, table[sid]) if sid in table else None


def _fred_api(query: dict[str, str]) -> tuple[str, bytes] | None:
    sid, day = query["series_id"], query["realtime_end"]
    obs = {"CPIAUCSL": [("2025-05-01", "320.580"), ("2025-04-01", "320.321"), ("2024-05-01", "313.140")]}
    rows = [{"realtime_start": day, "realtime_end": day, "date": d, "value": v} for d, v in obs.get(sid, [])]
    return "application/json", json.dumps({"observations": rows}).encode()


def _world_bank(query: dict[str, str]) -> tuple[str, bytes]:
    rows = [{"indicator": {"id": "NY.GDP.MKTP.CD"}, "date": str(y), "value": v}
            for y, v in ((2025, None), (2024, 2.9e13), (2023, 2.77e13))]
    return "application/json", json.dumps([{"page": 1, "pages": 1}, rows]).encode()


def _lbma(query: dict[str, str]) -> tuple[str, bytes]:
    rows = [{"is_cms_locked": 0, "d": "2025-06-27", "v": [3274.35, 2385.1, 2794.5]},
            {"is_cms_locked": 0, "d": "2025-06-30", "v": [3294.2, 2399.9, 2800.3]},
            {"is_cms_locked": 0, "d": "2025-07-01", "v": [3340.0, 2430.0, 2830.0]},
            {"d": "2025-02-30", "v": [1.0]}, {"d": "2025-07-02", "v": [None, 1.0, 1.0]}]  # impossible date, no USD
    return "application/json", json.dumps(rows).encode()


def _wb_panel(query: dict[str, str]) -> tuple[str, bytes]:
    def row(code: str, name: str, year: int, value: float | None) -> dict[str, object]:
        return {"country": {"id": code, "value": name}, "countryiso3code": "", "date": str(year), "value": value}
    rows = [row("US", "United States", 2024, 2.8), row("US", "United States", 2023, 2.9),
            row("SG", "Singapore", 2024, 4.4), row("SG", "Singapore", 2023, 1.8),
            row("US", "United States", 2025, None)]
    return "application/json", json.dumps([{"page": 1, "pages": 1, "total": len(rows)}, rows]).encode()


@pytest.fixture()
def server():  # type: ignore[no-untyped-def]
    with ReplayServer() as s:
        s.extra["/graph/fredgraph.csv"] = _fred_graph
        s.extra["/fred/series/observations"] = _fred_api
        s.extra["/v2/country/USA/indicator/NY.GDP.MKTP.CD"] = _world_bank
        s.extra["/json/gold_pm.json"] = _lbma
        for code in ("NY.GDP.MKTP.KD.ZG", "FP.CPI.TOTL.ZG"):
            s.extra[f"/v2/country/US;SG;TW/indicator/{code}"] = _wb_panel
            s.extra[f"/v2/country/US/indicator/{code}"] = _wb_panel
        yield s


def _settings(tmp_path: Path, url: str, key: str | None = None) -> Settings:
    return Settings(home=tmp_path, fred_base_url=url, worldbank_base_url=url, lbma_base_url=url, fred_api_key=key,
                    http_retries=1)


def _client(settings: Settings, **kw: object) -> MacroClient:
    return MacroClient(settings, max_rps=200.0, sleep=SleepRecorder(), **kw)  # type: ignore[arg-type]


def test_keyless_mode_applies_publication_lags_and_flags_stale_series(server: ReplayServer, tmp_path: Path) -> None:
    client = _client(_settings(tmp_path, server.url), fred_graph_url=server.url)
    res = client.report(AS_OF)
    figs = {f.id: f for f in res.figures}
    # CPI for June (dated 2025-06-01) is not published by 2025-06-30: May is the latest known.
    assert figs["macro_cpi"].as_of == date(2025, 5, 1) and figs["macro_cpi"].value == 317
    assert figs["macro_cpi_yoy"].value == pytest.approx(317 / 305 - 1)
    assert figs["macro_fed_funds"].value == 4.33 and figs["macro_fed_funds"].as_of == date(2025, 6, 29)
    assert figs["macro_gdp"].as_of == date(2025, 1, 1)  # Q2 2025 is not published by the as-of date
    assert figs["macro_vix"].as_of == date(2025, 6, 27)  # nothing after the as-of date, with a one-day lag
    assert figs["macro_world_bank_gdp"].value == 2.77e13  # 2024 only counts from 2025-07-01
    # gold: LBMA's own file (FRED's LBMA series ended in 2022); the 2025-06-30 price counts from the next day
    assert figs["macro_gold"].value == 3274.35 and figs["macro_gold"].as_of == date(2025, 6, 27)
    assert figs["macro_gold"].provenance["source"] == "lbma"
    assert figs["macro_wb_gdp_growth_us"].value == 2.9  # no markets given: the US; 2024 counts from 2025-07-01
    assert figs["macro_cpi"].provenance["vintage"].startswith("latest (no API key)")


def test_world_bank_year_counts_only_after_its_publication_lag(server: ReplayServer, tmp_path: Path) -> None:
    client = _client(_settings(tmp_path, server.url), fred_graph_url=server.url, series=())
    early = {f.id: f for f in client.report(date(2025, 6, 30)).figures}
    late = {f.id: f for f in client.report(date(2025, 7, 1)).figures}
    assert early["macro_world_bank_gdp"].as_of == date(2023, 12, 31)
    assert late["macro_world_bank_gdp"].as_of == date(2024, 12, 31)


def test_api_key_mode_asks_for_the_vintage_known_on_the_as_of_date(server: ReplayServer, tmp_path: Path) -> None:
    cpi = next(s for s in FRED_SERIES if s.key == "cpi")
    client = _client(_settings(tmp_path, server.url, key="k123"), series=(cpi,))
    res = client.report(AS_OF)
    figs = {f.id: f for f in res.figures}
    assert figs["macro_cpi"].value == 320.58 and figs["macro_cpi_yoy"].value == pytest.approx(320.58 / 313.14 - 1)
    q = next(q for p, q in server.queries if p == "/fred/series/observations")
    assert q["realtime_start"] == q["realtime_end"] == q["observation_end"] == "2025-06-30"
    assert q["api_key"] == "k123" and q["series_id"] == "CPIAUCSL"


def test_no_network_is_one_clear_degradation_and_fast(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    sleep = SleepRecorder()
    client = MacroClient(_settings(tmp_path, dead), max_rps=200.0, sleep=sleep, fred_graph_url=dead)
    res = client.report(AS_OF)
    # fast, counted instead of timed: two connection attempts in all (not one per series) and one backoff
    assert client.http.requests_sent == 2 and sleep.waits == [0.5], (client.http.requests_sent, sleep.waits)
    assert res.figures == ()
    assert [d.capability for d in res.degraded] == ["macro"]
    assert res.degraded[0].reason.startswith("unavailable (no network:")


def test_server_errors_degrade_per_series(server: ReplayServer, tmp_path: Path) -> None:
    server.fault("/graph/fredgraph.csv", "500", "500")  # first series (CPI) fails twice = out of retries
    client = _client(_settings(tmp_path, server.url), fred_graph_url=server.url)
    res = client.report(AS_OF)
    assert "macro_cpi" not in {f.id for f in res.figures} and "macro_vix" in {f.id for f in res.figures}
    assert any(d.capability == "macro.cpi" and "HTTP 500" in d.reason for d in res.degraded)


def test_fred_csv_skips_missing_values() -> None:
    obs = parse_fred_csv(b"DATE,VIXCLS\n2025-06-27,16.32\n2025-06-30,.\n")
    assert [(o.day, o.value) for o in obs] == [(date(2025, 6, 27), 16.32)]


def test_api_key_never_appears_in_error_messages(server: ReplayServer, tmp_path: Path) -> None:
    cpi = next(s for s in FRED_SERIES if s.key == "cpi")
    server.fault("/fred/series/observations", "500", "500")
    res = _client(_settings(tmp_path, server.url, key="secret-k123"), series=(cpi,)).report(AS_OF)
    reasons = " ".join(d.reason for d in res.degraded)
    assert "HTTP 500" in reasons and "secret-k123" not in reasons and "api_key=***" in reasons


def test_world_bank_panel_for_the_main_markets(server: ReplayServer, tmp_path: Path) -> None:
    client = _client(_settings(tmp_path, server.url), fred_graph_url=server.url, series=())
    res = client.report(date(2025, 7, 2), markets=("us", "SG", "TW", "SG"))
    figs = {f.id: f for f in res.figures}
    assert figs["macro_wb_gdp_growth_sg"].value == 4.4 and figs["macro_wb_inflation_us"].value == 2.8
    assert figs["macro_wb_gdp_growth_sg"].name == "Real GDP growth, Singapore (2024, World Bank)"
    assert figs["macro_wb_gdp_growth_sg"].provenance["year"] == 2024
    assert figs["macro_gold"].value == 3340.0  # 2025-07-01's price counts on 2025-07-02
    # the World Bank does not cover Taiwan: said, not invented
    tw = [d for d in res.degraded if d.capability == "macro.world_bank_gdp_growth_tw"]
    assert tw and "publishes no NY.GDP.MKTP.KD.ZG series for TW" in tw[0].reason
    q = next(q for p, q in server.queries if p.endswith("/indicator/FP.CPI.TOTL.ZG"))
    assert q["format"] == "json" and q["date"].startswith("2000:")


def test_lbma_parser_is_total() -> None:
    from equimind.sources.macro import parse_lbma
    rows = [{"d": "2024-02-30", "v": [1]}, {"d": "x"}, {"v": [2]}, "junk", {"d": "2024-01-02", "v": ["2064.4"]}]
    assert [(o.day, o.value) for o in parse_lbma(rows)] == [(date(2024, 1, 2), 2064.4)]
    with pytest.raises(Exception, match="not a list"):
        parse_lbma({"error": "x"})
