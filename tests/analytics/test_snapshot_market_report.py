"""The market report in snapshot mode carries the recorded macro series and news (issue 17 part 1): NVDA at as-of
2025-06-01 has macro figures and headline tone and no `unavailable` line for them; no headline after the as-of date
enters it; a ticker without recorded news still says so and names the fix."""

from __future__ import annotations

from datetime import date

import pytest

from equimind.analytics.market import MarketReport, report_for
from equimind.core.config import Settings
from equimind.core.documents import Document, Origin
from equimind.sources.snapshot_macro import SnapshotMacro
from equimind.sources.snapshot_news import SnapshotNews
from equimind.sources.sourceset import open_sources

_report = report_for  # the market report over the snapshot's own SourceSet


@pytest.fixture(scope="module")
def nvda_docs(snap: Settings) -> tuple[MarketReport, list[Document]]:
    got: list[Document] = []
    return _report(snap, "NVDA", date(2025, 6, 1), on_documents=got.extend), got


def test_snapshot_sources_are_the_recorded_twins(snap: Settings) -> None:
    sources = open_sources(snap)
    src = sources.market
    try:
        assert src.mode is Origin.SNAPSHOT
        assert isinstance(src.news, SnapshotNews) and isinstance(src.macro, SnapshotMacro)
        assert {d.capability for d in src.unavailable} & {"news", "macro"} == set()
    finally:
        sources.close()


NOT_RECORDED = {"macro.gold", "macro.world_bank_gdp_growth", "macro.world_bank_inflation"}  # not in the corpus


def test_nvda_june_2025_has_macro_and_news_sentiment(nvda_docs: tuple[MarketReport, list[Document]]) -> None:
    report, _ = nvda_docs
    assert not [d for d in report.degraded if (d.capability.split(".")[0] in ("news", "macro")
                                                and d.capability not in NOT_RECORDED)
                or d.capability == "sentiment.news"], report.degraded
    # NVIDIA's main markets come from its 10-K's revenue-by-country facts
    shares = {f.id: f.value for f in report.geography}
    assert shares["revenue_share_us"] == pytest.approx(61257 / 130497, abs=1e-4) and "revenue_share_tw" in shares
    assert {"macro.world_bank_gdp_growth", "macro.world_bank_inflation"} <= {d.capability for d in report.degraded}
    macro = {f.id: f for f in report.macro}
    assert {"macro_cpi", "macro_cpi_yoy", "macro_fed_funds", "macro_unemployment", "macro_treasury_10y",
            "macro_vix", "macro_real_gdp", "macro_real_gdp_growth"} <= set(macro)
    assert all(f.value is not None and f.provenance["origin"] == "snapshot" for f in report.macro)
    assert all("revisions" in f.provenance["vintage"] for f in report.macro)
    assert report.sentiment is not None
    tone = next(f for f in report.sentiment.figures if f.id == "news_tone")
    assert tone.inputs == {"headlines": 20} and tone.provenance["source"] == "fmp"
    assert tone.value is not None and -1.0 <= tone.value <= 1.0 and tone.as_of == date(2025, 6, 1)
    assert len(report.sentiment.headlines) == 20
    assert all(h["published"] <= "2025-06-01" for h in report.sentiment.headlines)


def test_nvda_news_is_handed_over_as_dated_documents(nvda_docs: tuple[MarketReport, list[Document]]) -> None:
    _, docs = nvda_docs
    news = [d for d in docs if d.form == "news"]
    assert len(news) == 20 and len({d.id for d in news}) == 20
    assert all(d.filed_at is not None and d.filed_at <= date(2025, 6, 1) for d in news)
    assert all(d.source.value == "fmp" and d.origin is Origin.SNAPSHOT and d.url for d in news)
    assert all(d.source_key.startswith("fmp:news:NVDA:") for d in news)


def test_no_headline_after_as_of(snap: Settings) -> None:
    r = _report(snap, "AAPL", date(2025, 5, 1))
    assert r.sentiment is not None and r.sentiment.headlines
    assert max(h["published"] for h in r.sentiment.headlines) <= "2025-05-01"
    nvda = _report(snap, "NVDA", date(2025, 5, 1))  # NVDA's recorded news starts 2025-05-02 (UTC)
    reason = next(d.reason for d in nvda.degraded if d.capability == "news")
    assert reason.startswith("unavailable (no recorded news for NVDA published from 2025-04-01 to 2025-05-01")
    assert nvda.sentiment is None or not nvda.sentiment.headlines
    assert nvda.macro and "macro" not in {d.capability for d in nvda.degraded}


def test_ticker_without_recorded_news_says_so(snap: Settings) -> None:
    r = _report(snap, "TSLA", date(2025, 6, 1))
    reason = next(d.reason for d in r.degraded if d.capability == "news")
    assert reason.startswith("unavailable (no recorded news for TSLA in the snapshot")
    assert "equimind snapshot record --tickers TSLA" in reason and "without --snapshot" in reason
    assert r.macro  # macro does not depend on the ticker
