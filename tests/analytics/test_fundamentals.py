"""Point-in-time fundamentals from the recorded companyfacts: the as-of restatement rule, TTM arithmetic, provenance,
and P/E across NVIDIA's 10:1 split of 2024-06-10."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from equimind.analytics.fundamentals import compute_fundamentals, pe_ratio
from equimind.analytics.xbrl import QUARTER_DAYS, YEAR_DAYS, infer_eps_splits, known_facts, period_value
from equimind.sources.base import CompanyFacts, PriceHistory, XbrlFact
from equimind.sources.market_snapshot import SnapshotPrices, SnapshotSec


@pytest.fixture(scope="module")
def sec(corpus_dir: Path) -> SnapshotSec:
    return SnapshotSec(corpus_dir)


@pytest.fixture(scope="module")
def nvda(sec: SnapshotSec) -> CompanyFacts:
    return sec.company_facts("NVDA")


@pytest.fixture(scope="module")
def nvda_prices(corpus_dir: Path) -> PriceHistory:
    return SnapshotPrices(corpus_dir).history("NVDA")


def test_restated_value_is_not_used_before_the_restatement_was_filed(sec: SnapshotSec) -> None:
    """Apple restated FY2009 (iPhone revenue recognition): net income 5,704M in the 10-K of 2009-10-27 became 8,235M
    in the 10-K/A of 2010-01-25. As of 2009-12-31 the originally filed value must be used."""
    aapl = sec.company_facts("AAPL")
    before = compute_fundamentals(aapl, date(2009, 12, 31))
    ni = before.figure("net_income_ttm")
    assert ni is not None and ni.value == 5_704_000_000
    assert ni.provenance["accession"] == "0001193125-09-214859" and ni.provenance["filed"] == date(2009, 10, 27)
    assert ni.provenance["period"] == {"start": date(2008, 9, 28), "end": date(2009, 9, 26)}
    assert ni.as_of == date(2009, 10, 27)
    after = known_facts(aapl, "us-gaap:NetIncomeLoss", "USD", date(2010, 6, 30))
    fy09 = next(f for f in after if (f.start, f.end) == (date(2008, 9, 28), date(2009, 9, 26)))
    assert (fy09.value, fy09.accession, fy09.form) == (8_235_000_000, "0001193125-10-012091", "10-K/A")


def test_nvda_ttm_is_fy_plus_ytd_minus_prior_ytd_with_every_filing_named(nvda: CompanyFacts) -> None:
    res = compute_fundamentals(nvda, date(2025, 6, 30))
    rev = res.figure("revenue_ttm")
    assert rev is not None
    assert rev.value == 130_497_000_000 + 44_062_000_000 - 26_044_000_000
    facts = rev.provenance["facts"]
    assert [(f["sign"], f["start"], f["end"]) for f in facts] == [
        (1, date(2025, 1, 27), date(2025, 4, 27)), (1, date(2024, 1, 29), date(2025, 1, 26)),
        (-1, date(2024, 1, 29), date(2024, 4, 28))]
    assert {f["accession"] for f in facts} <= {"0001045810-25-000116", "0001045810-25-000023"}
    assert rev.provenance["concept"] == "us-gaap:Revenues" and rev.provenance["unit"] == "USD"
    assert rev.as_of == date(2025, 5, 28)
    q = res.figure("revenue_quarter")
    assert q is not None and q.value == 44_062_000_000 and q.provenance["form"] == "10-Q"
    growth = res.figure("revenue_growth_yoy")
    assert growth is not None and growth.value == pytest.approx(44_062 / 26_044 - 1)


def test_q4_is_derived_as_fy_minus_nine_months(nvda: CompanyFacts) -> None:
    res = compute_fundamentals(nvda, date(2025, 3, 31))
    q = res.figure("revenue_quarter")
    assert q is not None and q.value == 39_331_000_000  # NVIDIA's reported Q4 FY2025 revenue
    assert q.provenance["period"] == {"start": date(2024, 10, 28), "end": date(2025, 1, 26)}


@pytest.mark.parametrize("as_of", [date(2023, 3, 1), date(2024, 7, 31), date(2025, 3, 31), date(2025, 6, 30)])
def test_nothing_filed_after_the_as_of_date_is_used(nvda: CompanyFacts, as_of: date) -> None:
    res = compute_fundamentals(nvda, as_of)
    assert res.figures
    for f in res.figures:
        assert f.as_of is not None and f.as_of <= as_of, f.id
        for fact in f.provenance.get("facts", []):
            assert fact["filed"] <= as_of


def test_balance_sheet_ratios_are_consistent(sec: SnapshotSec) -> None:
    res = compute_fundamentals(sec.company_facts("GOOGL"), date(2025, 6, 30))
    v = {f.id: f.value for f in res.figures}
    assert v["debt_to_equity"] == pytest.approx(v["total_debt"] / v["stockholders_equity"])
    eq = (res.values["stockholders_equity"].value + res.values["stockholders_equity_prior"].value) / 2
    assert v["roe_ttm"] == pytest.approx(v["net_income_ttm"] / eq)
    assert v["net_margin_ttm"] == pytest.approx(v["net_income_ttm"] / v["revenue_ttm"])
    assert any(d.capability == "fundamentals.gross_profit" for d in res.degraded)  # Alphabet reports no GrossProfit


def test_eps_ttm_is_put_on_one_share_basis_across_the_split(nvda: CompanyFacts, nvda_prices: PriceHistory) -> None:
    splits = nvda_prices.splits()
    pre = compute_fundamentals(nvda, date(2024, 6, 7), splits=splits).values["eps_diluted_ttm"]
    post = compute_fundamentals(nvda, date(2024, 6, 14), splits=splits).values["eps_diluted_ttm"]
    # FY2024 11.93 + Q1 FY2025 5.98 - Q1 FY2024 0.82, all filed before the split
    assert pre.value == pytest.approx(17.09)
    assert post.value == pytest.approx(1.709)  # the same facts on the post-split basis
    assert all(c.split_factor == 10.0 for c in post.components)


@pytest.mark.parametrize("as_of", [date(2024, 5, 31), date(2024, 6, 7), date(2024, 6, 14), date(2024, 7, 31)])
def test_pe_is_consistent_with_split_adjusted_prices(nvda: CompanyFacts, nvda_prices: PriceHistory,
                                                     as_of: date) -> None:
    """Yahoo prices are on the post-split basis even before 2024-06-10; P/E must divide like by like."""
    splits = nvda_prices.splits()
    eps = compute_fundamentals(nvda, as_of, splits=splits).values["eps_diluted_ttm"]
    bar = nvda_prices.up_to(as_of).bars[-1]
    pe = pe_ratio(eps, bar.close, bar.day, as_of, nvda_prices.last_day, splits, price_provenance={})
    assert pe.value == pytest.approx(bar.close / 1.709, rel=1e-9)
    assert 40 < pe.value < 90  # ignoring the split would give a P/E of ~6
    assert pe.inputs["split_factor_after_as_of"] == (10.0 if as_of < date(2024, 6, 10) else 1.0)


def test_pe_not_meaningful_for_negative_eps(nvda: CompanyFacts) -> None:
    eps = compute_fundamentals(nvda, date(2025, 6, 30)).values["eps_diluted_ttm"]
    negative = type(eps)(value=-1.0, start=eps.start, end=eps.end, components=eps.components)
    pe = pe_ratio(negative, 100.0, date(2025, 6, 30), date(2025, 6, 30), None, (), price_provenance={})
    assert pe.value is None and "not meaningful" in pe.provenance["note"]


def _fact(start: date | None, end: date, value: float, filed: date, acc: str = "a") -> XbrlFact:
    return XbrlFact("us-gaap", "Revenues", "USD", value, start, end, acc, filed, "10-Q")


def test_period_value_graph_cases() -> None:
    fy = _fact(date(2024, 1, 1), date(2024, 12, 31), 400, date(2025, 2, 1))
    nine = _fact(date(2024, 1, 1), date(2024, 9, 30), 290, date(2024, 11, 1))
    q1_25 = _fact(date(2025, 1, 1), date(2025, 3, 31), 120, date(2025, 5, 1))
    q1_24 = _fact(date(2024, 1, 1), date(2024, 3, 31), 90, date(2025, 5, 1))
    facts = [fy, nine, q1_25, q1_24]
    q4 = period_value(facts, date(2024, 12, 31), QUARTER_DAYS)
    assert q4 is not None and q4.value == 110 and q4.start == date(2024, 10, 1)
    ttm = period_value(facts, date(2025, 3, 31), YEAR_DAYS)
    assert ttm is not None and ttm.value == 400 + 120 - 90 and ttm.start == date(2024, 4, 1)
    assert period_value([q1_25], date(2025, 3, 31), YEAR_DAYS) is None


@pytest.mark.parametrize(("ticker", "expected"), [
    ("NVDA", [(date(2021, 8, 20), 4.0), (date(2024, 8, 28), 10.0)]),  # splits of 2021-07-20 and 2024-06-10
    ("AAPL", [(date(2014, 7, 23), 7.0), (date(2020, 10, 30), 4.0)]),  # 2014-06-09 and 2020-08-31
    ("GOOGL", [(date(2022, 7, 27), 20.0)]),  # 2022-07-15
])
def test_splits_are_inferred_from_restated_per_share_facts(sec: SnapshotSec, ticker: str,
                                                           expected: list[tuple[date, float]]) -> None:
    cf = sec.company_facts(ticker)
    eps = [f for f in cf.get("us-gaap:EarningsPerShareDiluted") if f.form in ("10-K", "10-Q", "10-K/A", "10-Q/A")]
    events = infer_eps_splits(eps, date(2026, 12, 31))
    assert [(e.day, e.ratio) for e in events] == expected  # dated at the first filing on the new basis


def test_split_inference_uses_only_filings_made_by_the_as_of_date(sec: SnapshotSec) -> None:
    eps = sec.company_facts("GOOGL").get("us-gaap:EarningsPerShareDiluted")
    assert infer_eps_splits(eps, date(2022, 7, 26)) == []
    assert [e.ratio for e in infer_eps_splits(eps, date(2022, 7, 27))] == [20.0]


def test_pe_across_a_split_outside_the_price_window(sec: SnapshotSec, corpus_dir: Path) -> None:
    """Alphabet's 20:1 split (2022-07-15) predates the recorded prices (from 2022-11-08); FY2021 EPS was filed
    pre-split (112.20) and must be put on the new basis from the XBRL restatements alone."""
    prices = SnapshotPrices(corpus_dir).history("GOOGL")
    assert prices.splits() == ()
    res = compute_fundamentals(sec.company_facts("GOOGL"), date(2023, 2, 1), splits=prices.splits())
    eps = res.values["eps_diluted_ttm"]
    fy21 = next(c for c in eps.components if c.fact.end == date(2021, 12, 31))
    assert (fy21.fact.value, fy21.split_factor, fy21.value) == (112.20, 20.0, pytest.approx(5.61))
    assert eps.value == pytest.approx(5.03, abs=0.02)
    bar = prices.up_to(date(2023, 2, 1)).bars[-1]
    pe = pe_ratio(eps, bar.close, bar.day, date(2023, 2, 1), prices.last_day, (), price_provenance={})
    assert pe.value is not None and 15 < pe.value < 25
