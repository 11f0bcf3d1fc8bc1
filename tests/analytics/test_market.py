"""The market report over the recorded snapshot (and once through the live SEC client against a local server)."""

from __future__ import annotations

import json
import re
import socket
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from market_replay import ReplayServer

from equimind.analytics.market import MarketReport, build_market_report, report_for
from equimind.core.config import Settings
from equimind.core.documents import Document, Origin
from equimind.core.errors import NotFoundError
from equimind.sources.macro import MacroClient
from equimind.sources.market_snapshot import SnapshotPrices, SnapshotSec
from equimind.sources.sec_edgar import SecEdgarClient
from equimind.sources.sourceset import open_sources

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}")
# Metadata about the adjustment basis of Yahoo's price series (not data entering a figure).
BASIS_KEYS = {"split_basis_day", "price_basis_day"}


_report = report_for  # the market report over the snapshot's own SourceSet


@pytest.fixture(scope="module")
def june(snap: Settings) -> MarketReport:
    return _report(snap, "NVDA", date(2025, 6, 30))


@pytest.fixture(scope="module")
def march(snap: Settings) -> MarketReport:
    return _report(snap, "NVDA", date(2025, 3, 31))


def _dates(obj: Any, key: str = "") -> list[tuple[str, str]]:
    if isinstance(obj, dict):
        return [d for k, v in obj.items() if k not in BASIS_KEYS for d in _dates(v, k)]
    if isinstance(obj, list):
        return [d for v in obj for d in _dates(v, key)]
    return [(key, obj[:10])] if isinstance(obj, str) and ISO.match(obj) else []


def test_nvda_report_has_close_indicators_fundamentals_and_degradations(june: MarketReport) -> None:
    assert june.ticker == "NVDA" and june.company == "NVIDIA CORP" and june.mode == "snapshot"
    assert june.last_close.as_of == date(2025, 6, 30) and round(june.last_close.value or 0, 2) == 157.99
    ids = {f.id for f in june.figures()}
    assert {"rsi_14", "sma_200", "ema_50", "macd_12_26", "bb_upper_20_2", "high_52w", "realized_vol_20d"} <= ids
    assert {"revenue_ttm", "revenue_growth_yoy", "eps_diluted_ttm", "net_margin_ttm", "roe_ttm", "roa_ttm",
            "debt_to_equity", "total_debt", "stockholders_equity", "operating_cash_flow_ttm", "pe_ttm"} <= ids
    rev = june.figure("revenue_ttm")
    assert rev is not None and rev.provenance["concept"] == "us-gaap:Revenues"
    assert rev.provenance["accession"] == "0001045810-25-000116" and rev.provenance["filed"] == date(2025, 5, 28)
    pe = june.figure("pe_ttm")
    assert pe is not None and pe.value == pytest.approx(june.last_close.value / 3.10)
    caps = {d.capability: d.reason for d in june.degraded}
    assert "news" not in caps and "macro" not in caps  # the snapshot serves its recorded news and FRED series
    assert june.figure("news_tone") is not None and june.figure("macro_cpi") is not None
    assert json.loads(june.model_dump_json())["last_close"]["provenance"]["bar_date"] == "2025-06-30"


def test_earlier_as_of_changes_what_depends_on_later_data_and_nothing_else(june: MarketReport,
                                                                           march: MarketReport) -> None:
    cut = date(2025, 3, 31)
    a, b = {f.id: f for f in june.figures()}, {f.id: f for f in march.figures()}
    assert set(a) - set(b) == {"news_tone"}  # NVDA's recorded headlines start in May 2025
    assert set(b) <= set(a)
    changed = {i for i in b if a[i] != b[i]}
    for i in b:
        known_on = a[i].provenance.get("counted_from", a[i].as_of)  # a macro value counts after its publication lag
        depends_on_later = known_on is not None and known_on > cut
        assert (i in changed) == depends_on_later, i
    assert {"last_close", "rsi_14", "revenue_ttm", "pe_ttm"} <= changed
    assert march.last_close.as_of == cut and round(march.last_close.value or 0, 2) == 108.38
    assert march.figure("revenue_ttm").value == 130_497_000_000  # type: ignore[union-attr]
    assert (june.profile, june.company, june.mode) == (march.profile, march.company, march.mode)


@pytest.mark.parametrize("as_of", [date(2025, 3, 31), date(2024, 7, 31)])
def test_no_date_after_as_of_anywhere_in_the_report(snap: Settings, as_of: date) -> None:
    report = _report(snap, "NVDA", as_of).model_dump(mode="json")
    late = [(k, d) for k, d in _dates(report) if d > as_of.isoformat()]
    assert late == []


def test_weekend_as_of_uses_the_last_trading_day(snap: Settings) -> None:
    r = _report(snap, "NVDA", date(2025, 6, 29))
    assert r.last_close.as_of == date(2025, 6, 27)
    assert all(d.capability != "prices" for d in r.degraded)


def test_ticker_without_companyfacts_degrades_fundamentals_clearly(snap: Settings) -> None:
    r = _report(snap, "AMD", date(2025, 6, 30))
    assert r.fundamentals == [] and r.last_close.value is not None
    reason = next(d.reason for d in r.degraded if d.capability == "fundamentals")
    assert "no XBRL companyfacts recorded for AMD" in reason and "NVDA" in reason


def test_as_of_before_any_data_is_a_clear_error(snap: Settings) -> None:
    with pytest.raises(NotFoundError, match=r"no price bars for NVDA on or before 2020-01-01"):
        _report(snap, "NVDA", date(2020, 1, 1), lookback_days=10_000)


def test_fetched_data_is_handed_over_as_dated_documents(snap: Settings) -> None:
    got: list[Document] = []
    _report(snap, "NVDA", date(2025, 6, 30), on_documents=got.extend)
    forms = {d.form for d in got}
    assert forms == {"prices", "fundamentals", "news"}
    news = [d for d in got if d.form == "news"]
    assert len(news) == 20 and all(d.filed_at and d.filed_at <= date(2025, 6, 30) for d in news)
    prices = [d for d in got if d.form == "prices"]
    assert max(d.filed_at for d in prices if d.filed_at) == date(2025, 11, 7)  # each dated by its own bars
    assert any(d.filed_at == date(2025, 6, 30) for d in prices)
    assert len({d.id for d in got}) == len(got)


def test_sources_for_live_without_identity_degrades_fundamentals(tmp_path: Path) -> None:
    sources = open_sources(Settings(home=tmp_path, sec_identity=None))
    src = sources.market
    try:
        assert src.mode is Origin.LIVE and src.facts is None and src.macro is not None
        reason = next(d.reason for d in src.unavailable if d.capability == "fundamentals")
        assert "EQUIMIND_SEC_IDENTITY" in reason
    finally:
        sources.close()


def test_live_sec_client_end_to_end_gives_the_same_fundamentals(corpus_dir: Path, tmp_path: Path,
                                                                june: MarketReport) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    with ReplayServer(corpus_dir) as server:
        settings = Settings(home=tmp_path, sec_identity="EquiMind Tests tests@example.com",
                            sec_base_url=server.url, sec_data_url=server.url, fred_base_url=dead,
                            worldbank_base_url=dead)
        sec = SecEdgarClient(settings)
        macro = MacroClient(settings, fred_graph_url=dead)
        live = build_market_report(settings, "NVDA", date(2025, 6, 30), prices=SnapshotPrices(corpus_dir),
                                   facts=sec, profile=SnapshotSec(corpus_dir), macro=macro, mode=Origin.LIVE)
    assert live.mode == "live"
    assert [f for f in live.fundamentals if f.id != "pe_ttm"] == [
        f.model_copy(update={"provenance": {**f.provenance, "origin": "live",
                                            "location": f"{server.url}/api/xbrl/companyfacts/CIK0001045810.json"}})
        if "origin" in f.provenance else f
        for f in june.fundamentals if f.id != "pe_ttm"]
    macro_reason = next(d.reason for d in live.degraded if d.capability == "macro")
    assert macro_reason.startswith("unavailable (no network:")
