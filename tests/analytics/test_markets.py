"""Main markets from a 10-K's own inline XBRL (revenue by country), and the inline-XBRL reader's totality."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.analytics.inline_xbrl import inline_facts
from equimind.analytics.markets import main_markets

DOC = """<html><body><div style="display:none"><ix:header><ix:resources>
<xbrli:context id="fy"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate></xbrli:period>
</xbrli:context>
<xbrli:context id="fy_{c}"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier><xbrli:segment>
<xbrldi:explicitMember dimension="srt:StatementGeographicalAxis">{member}</xbrldi:explicitMember></xbrli:segment>
</xbrli:entity><xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>{end}</xbrli:endDate>
</xbrli:period></xbrli:context>
<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
</ix:resources></ix:header></div>
<p>Total <ix:nonFraction name="us-gaap:Revenues" contextRef="fy" unitRef="usd" scale="6"
decimals="-6">1,000</ix:nonFraction>
of which <ix:nonFraction name="us-gaap:Revenues" contextRef="fy_{c}" unitRef="usd" scale="6">{v}</ix:nonFraction></p>
</body></html>"""


def _doc(member: str = "country:JP", v: str = "250", end: str = "2024-12-31") -> str:
    return DOC.format(c="x", member=member, v=v, end=end)


def test_a_country_share_and_the_main_market_rule() -> None:
    facts = inline_facts(_doc())
    assert {(f.concept, f.value, f.dimensions) for f in facts} == {
        ("us-gaap:Revenues", 1e9, ()), ("us-gaap:Revenues", 2.5e8, (("srt:StatementGeographicalAxis", "country:JP"),))}
    m = main_markets(facts, source={"accession": "A1"})
    assert m.codes == ("JP",)
    fig = m.figures[0]
    assert fig.id == "revenue_share_jp" and fig.value == 0.25 and fig.provenance["accession"] == "A1"
    assert fig.provenance["member"] == "country:JP" and fig.inputs["total_revenue"] == 1e9
    small = main_markets(inline_facts(_doc(v="99")), source={})  # 9.9 %: disclosed, not a main market
    assert small.codes == () and small.figures[0].value == pytest.approx(0.099)


def test_regions_and_broken_contexts_are_notes_not_markets() -> None:
    region = main_markets(inline_facts(_doc(member="us-gaap:EMEAMember")), source={})
    assert region.codes == () and "EMEAMember is a region" in region.notes[0]
    broken = inline_facts(_doc(end="2024-02-30"))  # an impossible date: that fact is dropped, the rest is read
    assert [f.dimensions for f in broken] == [()]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400) | st.binary(max_size=400) | st.builds(
    lambda v, end, m: _doc(member=m, v=v, end=end), st.text(max_size=12),
    st.sampled_from(["2024-13-01", "0000-00-00", "", "2024-12-31", "9999-12-31", "x"]),
    st.sampled_from(["country:", "country:ZZZ", "", "country:us", "<b>"])))
def test_the_reader_is_total(text: str | bytes) -> None:
    facts = inline_facts(text)
    main_markets(facts, source={})


def test_recorded_10ks(corpus_dir: Path) -> None:
    got = {}
    for name in ("NVDA/nvda-10-k-2025-02-26.html", "TSLA/tsla-10-k-2025-01-30.html", "WFC/wfc-10-k-2025-02-25.html"):
        m = main_markets(inline_facts((corpus_dir / "sec" / "filings" / name).read_bytes()), source={})
        got[name.split("/")[0]] = m
    assert got["NVDA"].codes == ("US", "SG", "TW")  # China incl. Hong Kong is a company member: a note
    assert any("ChinaIncludingHongKong" in n for n in got["NVDA"].notes)
    assert got["TSLA"].codes == ("US", "CN")
    assert got["WFC"].codes == () and "tags no annual revenue by country" in got["WFC"].notes[0]
