"""Fundamentals from a filing's own inline XBRL when SEC's companyfacts are absent (TSLA's recorded 10-K and 10-Q),
the as-of rule over the filings read, and the fallback's totality."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest

from equimind.analytics.fundamentals import compute_fundamentals
from equimind.analytics.inline_companyfacts import filing_facts, inline_company_facts
from equimind.analytics.market import MarketReport, report_for
from equimind.core.config import Settings
from equimind.core.documents import Origin
from equimind.core.errors import NotFoundError
from equimind.sources.base import FilingRef, XbrlFact
from equimind.sources.market_snapshot import SnapshotSec

TSLA_10K = "0001628280-25-003063"  # filed 2025-01-30, fiscal year 2024
TSLA_10Q = "0001628280-25-035806"  # filed 2025-07-24, quarter to 2025-06-30
BETWEEN = date(2025, 5, 1)  # after the 10-K, before the 10-Q
FY2024 = (date(2024, 1, 1), date(2024, 12, 31))


@pytest.fixture(scope="module")
def sec(corpus_dir: Path) -> SnapshotSec:
    return SnapshotSec(corpus_dir)


@pytest.fixture(scope="module")
def tsla(snap: Settings) -> MarketReport:
    return report_for(snap, "TSLA", date(2025, 9, 30))


def _ref(accession: str = "0000000000-25-000001", form: str = "10-K", filed: date = date(2025, 2, 1)) -> FilingRef:
    return FilingRef(cik="0000000001", ticker="XYZ", company="XYZ Corp", accession=accession, form=form, filed=filed,
                     period_end=None, primary_document="x.htm", url=None, origin=Origin.SNAPSHOT)


class FakeFilings:
    """A FilingIndexSource over in-memory documents (a document None: cannot be had)."""

    name = "fake"

    def __init__(self, docs: dict[FilingRef, str | bytes | None]) -> None:
        self.docs = docs

    def filings(self, ticker: str, *, forms: Sequence[str] = (), until: date | None = None) -> list[FilingRef]:
        refs = [r for r in self.docs if r.form in forms and (until is None or r.filed <= until)]
        return sorted(refs, key=lambda r: r.filed, reverse=True)

    def primary_document(self, ref: FilingRef) -> str:
        doc = self.docs[ref]
        if doc is None:
            raise NotFoundError(f"{ref.form} of {ref.filed} is not recorded")
        return doc.decode("latin-1") if isinstance(doc, bytes) else doc


def _fy(facts: Sequence[XbrlFact], accession: str) -> list[XbrlFact]:
    return [f for f in facts if f.accession == accession and (f.start, f.end) == FY2024]


def test_tsla_facts_carry_the_10k_figures_as_companyfacts_would(sec: SnapshotSec) -> None:
    res = inline_company_facts(sec, "TSLA", date(2025, 9, 30))
    assert res.facts is not None and [r.accession for r in res.used] == [TSLA_10Q, TSLA_10K]
    cf = res.facts
    rev = _fy(cf.get("us-gaap:Revenues", "USD"), TSLA_10K)
    ni = _fy(cf.get("us-gaap:NetIncomeLoss", "USD"), TSLA_10K)
    eps = _fy(cf.get("us-gaap:EarningsPerShareDiluted", "USD/shares"), TSLA_10K)
    assert [f.value for f in rev] == [97_690_000_000]
    assert [f.value for f in ni] == [7_091_000_000]
    assert [f.value for f in eps] == [2.04]
    f = rev[0]
    assert (f.taxonomy, f.concept, f.form, f.filed, f.fy, f.fp, f.frame) == (
        "us-gaap", "Revenues", "10-K", date(2025, 1, 30), 2024, "FY", None)
    assert "inline XBRL" in cf.location and "tsla-20241231.htm" in cf.location
    # one fact per (concept, unit, period, accession): a statement line repeated in the notes is kept once
    keys = [(x.qualified, x.unit, x.start, x.end, x.accession) for v in cf.facts.values() for x in v]
    assert len(keys) == len(set(keys))
    assets = {(x.end, x.accession): x.value for x in cf.get("us-gaap:Assets", "USD") if x.start is None}
    assert assets[(date(2024, 12, 31), TSLA_10K)] == 122_070_000_000  # scale applied ("in millions")


def test_tsla_fundamentals_between_the_10k_and_the_10q_are_the_10k_values(sec: SnapshotSec) -> None:
    res = inline_company_facts(sec, "TSLA", BETWEEN)
    assert res.facts is not None and [r.accession for r in res.used] == [TSLA_10K]
    out = compute_fundamentals(res.facts, BETWEEN)
    for fid, value in (("revenue_ttm", 97_690_000_000), ("net_income_ttm", 7_091_000_000),
                       ("eps_diluted_ttm", 2.04)):
        fig = out.figure(fid)
        assert fig is not None and fig.value == pytest.approx(value), fid
        assert fig.provenance["accession"] == TSLA_10K and fig.provenance["filed"] == date(2025, 1, 30)
        assert fig.provenance["period"] == {"start": FY2024[0], "end": FY2024[1]}
    # a filing filed after the as-of date is never read, so nothing of it can enter any figure
    assert all(f.accession != TSLA_10Q for v in res.facts.facts.values() for f in v)
    assert TSLA_10Q not in repr(out)


def test_tsla_market_report_shows_fundamentals_from_the_filings(tsla: MarketReport) -> None:
    ids = {f.id for f in tsla.fundamentals}
    assert {"revenue_ttm", "net_income_ttm", "eps_diluted_ttm", "pe_ttm", "revenue_growth_yoy", "net_margin_ttm",
            "roe_ttm", "debt_to_equity"} <= ids
    rev = tsla.figure("revenue_ttm")
    assert rev is not None and rev.value == 97_690_000_000 + 41_831_000_000 - 46_801_000_000  # FY24 + 6M25 - 6M24
    assert rev.provenance["accession"] == TSLA_10Q and rev.provenance["concept"] == "us-gaap:Revenues"
    assert {c["accession"] for c in rev.provenance["facts"]} == {TSLA_10Q, TSLA_10K}
    eps = tsla.figure("eps_diluted_ttm")
    assert eps is not None and eps.value is not None and eps.value == pytest.approx(2.04 + 0.45 - 0.81)
    pe = tsla.figure("pe_ttm")
    assert pe is not None and pe.value == pytest.approx((tsla.last_close.value or 0) / eps.value)
    # no balance sheet a year before 2025-06-30 is recorded: no "prior" equity rather than the latest one again
    assert tsla.figure("stockholders_equity_prior") is None


def test_the_degraded_line_names_the_source_and_the_filings(tsla: MarketReport) -> None:
    caps = {d.capability: d.reason for d in tsla.degraded}
    assert "fundamentals" not in caps
    reason = caps["fundamentals.source"]
    assert reason.startswith("companyfacts not available (no XBRL companyfacts recorded for TSLA")
    assert "inline XBRL of 2 filings" in reason
    assert f"10-Q {TSLA_10Q} filed 2025-07-24" in reason and f"10-K {TSLA_10K} filed 2025-01-30" in reason
    assert "10-Q filed 2025-04-23" in reason  # listed in the submissions, not recorded: said, not hidden


def test_without_any_periodic_filing_the_original_reason_stays_with_what_was_tried(snap: Settings) -> None:
    r = report_for(snap, "AMD", date(2025, 6, 30))
    assert r.fundamentals == []
    reason = next(d.reason for d in r.degraded if d.capability == "fundamentals")
    assert "no XBRL companyfacts recorded for AMD" in reason
    assert "inline XBRL fallback: no 10-K or 10-Q of AMD filed by 2025-06-30" in reason


def test_an_unreadable_document_gives_no_facts_and_no_exception() -> None:
    garbage = bytes(range(256)) * 50
    assert filing_facts(garbage, _ref()) == []
    assert filing_facts(b"", _ref()) == []
    bad, missing = _ref(filed=date(2025, 2, 1)), _ref("0000000000-25-000002", "10-Q", date(2025, 5, 1))
    res = inline_company_facts(FakeFilings({bad: garbage, missing: None}), "XYZ", date(2025, 9, 30))
    assert res.facts is None and res.used == () and res.listed == 2
    assert dict(res.skipped) == {"10-K filed 2025-02-01": "no readable inline XBRL facts",
                                 "10-Q filed 2025-05-01": "document not available: NotFoundError"}


DOC = """<html><body><div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="fy">2024</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="fy">FY</ix:nonNumeric>
</ix:hidden><ix:resources>
<xbrli:context id="fy"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate></xbrli:period>
</xbrli:context>
<xbrli:context id="fy_us"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier><xbrli:segment>
<xbrldi:explicitMember dimension="srt:StatementGeographicalAxis">country:US</xbrldi:explicitMember></xbrli:segment>
</xbrli:entity><xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate>
</xbrli:period></xbrli:context>
<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
<xbrli:unit id="usdps"><xbrli:divide><xbrli:unitNumerator><xbrli:measure>iso4217:USD</xbrli:measure>
</xbrli:unitNumerator><xbrli:unitDenominator><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unitDenominator>
</xbrli:divide></xbrli:unit>
</ix:resources></ix:header></div>
<p>Revenue <ix:nonFraction name="us-gaap:Revenues" contextRef="fy" unitRef="usd" scale="9" decimals="-7">1.84
</ix:nonFraction> billion, of which US <ix:nonFraction name="us-gaap:Revenues" contextRef="fy_us" unitRef="usd"
scale="6" decimals="-6">900</ix:nonFraction>.</p>
<table><tr><td>Revenues <ix:nonFraction name="us-gaap:Revenues" contextRef="fy" unitRef="usd" scale="6"
decimals="-6">1,837</ix:nonFraction></td></tr>
<tr><td>Net loss <ix:nonFraction name="us-gaap:NetIncomeLoss" contextRef="fy" unitRef="usd" scale="6"
decimals="-6" sign="-">12</ix:nonFraction></td></tr>
<tr><td>EPS <ix:nonFraction name="us-gaap:EarningsPerShareDiluted" contextRef="fy" unitRef="usdps"
decimals="2">0.04</ix:nonFraction></td></tr></table>
</body></html>"""


def test_a_document_maps_to_companyfacts_entries() -> None:
    facts = {(f.qualified, f.unit): f for f in filing_facts(DOC, _ref())}
    assert set(facts) == {("us-gaap:Revenues", "USD"), ("us-gaap:NetIncomeLoss", "USD"),
                          ("us-gaap:EarningsPerShareDiluted", "USD/shares")}
    rev = facts[("us-gaap:Revenues", "USD")]
    assert rev.value == 1_837_000_000  # the statement's precise value, not the rounded "1.84 billion" of the text
    assert (rev.start, rev.end, rev.accession, rev.form, rev.fy, rev.fp) == (
        *FY2024, "0000000000-25-000001", "10-K", 2024, "FY")
    assert facts[("us-gaap:NetIncomeLoss", "USD")].value == -12_000_000
    assert facts[("us-gaap:EarningsPerShareDiluted", "USD/shares")].value == 0.04


def test_enterprise_value_to_sales_from_the_filing_and_the_price(tsla: MarketReport) -> None:
    """TSLA (inline XBRL): EV / sales = (close × diluted shares + debt − cash) / TTM revenue, every input named."""
    figs = {f.id: f for f in tsla.figures()}
    ev = figs["ev_to_sales_ttm"]
    i = ev.inputs
    assert i["market_cap"] == pytest.approx(i["last_close"] * i["shares_diluted_quarter"])
    assert i["enterprise_value"] == pytest.approx(i["market_cap"] + i["total_debt"] - i["cash"])
    assert ev.value == pytest.approx(i["enterprise_value"] / i["revenue_ttm"])
    assert i["revenue_ttm"] == figs["revenue_ttm"].value and 3.0e9 < i["shares_diluted_quarter"] < 4.0e9
