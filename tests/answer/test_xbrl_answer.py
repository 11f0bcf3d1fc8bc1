"""Numeric asks from the recorded SEC companyfacts: facts picked by period, never by the fy tag, as filed by as-of."""

from __future__ import annotations

from datetime import date
from typing import Any

from equimind.answer.fiscal import FiscalCalendar
from equimind.answer.xbrl_answer import xbrl_answer
from equimind.lexicon.concepts import METRICS
from equimind.query.periods import Period, PeriodKind

METRIC = {m.key: m for m in METRICS}
FY2024 = Period(PeriodKind.FISCAL_YEAR, "fiscal 2024", fiscal_year=2024)
AS_OF = date(2025, 9, 30)


def test_apple_fy2024_net_income_is_the_fiscal_2024_period_not_any_fy_2024_tag(facts: Any) -> None:
    cf = facts.company_facts("AAPL")
    tagged = {f.value for f in cf.get("us-gaap:NetIncomeLoss", "USD")
              if f.fy == 2024 and f.form == "10-K" and f.days and f.days > 350}
    assert {99_803e6, 96_995e6, 93_736e6} <= tagged  # the FY2024 10-K tags three years fy 2024
    result = xbrl_answer(cf, METRIC["net_income"], FY2024, AS_OF, "AAPL")
    assert result.sentence is not None
    fig = result.sentence.figures[0]
    assert fig.value == 93_736e6 and fig.unit == "USD"
    assert (fig.period_start, fig.period_end) == (date(2023, 10, 1), date(2024, 9, 28))
    assert fig.provenance["concept"] == "us-gaap:NetIncomeLoss"
    assert fig.provenance["accession"] == "0000320193-24-000123" and fig.provenance["form"] == "10-K"
    assert fig.provenance["filed"] == "2024-11-01" and fig.provenance["fy"] == 2024
    assert "$93,736 million" in result.sentence.text and "0000320193-24-000123" in result.sentence.text


def test_as_of_before_the_filing_sees_no_fiscal_2024_value(facts: Any) -> None:
    cf = facts.company_facts("AAPL")
    early = xbrl_answer(cf, METRIC["net_income"], FY2024, date(2024, 10, 31), "AAPL")
    assert early.sentence is None and "filed by 2024-10-31" in early.reason
    fy2023 = xbrl_answer(cf, METRIC["net_income"], Period(PeriodKind.FISCAL_YEAR, "fy23", fiscal_year=2023),
                         date(2024, 10, 31), "AAPL")
    assert fy2023.sentence is not None and fy2023.sentence.figures[0].value == 96_995e6
    assert fy2023.sentence.figures[0].provenance["filed"] <= "2024-10-31"


def test_nvidia_fiscal_calendar_and_revenue(facts: Any) -> None:
    cf = facts.company_facts("NVDA")
    cal = FiscalCalendar(cf, AS_OF)
    assert cal.year_end(2025)[0] == date(2025, 1, 26)
    assert cal.quarter_end(2026, 2)[0] == date(2025, 7, 27)
    rev = xbrl_answer(cf, METRIC["revenue"], Period(PeriodKind.FISCAL_YEAR, "fy25", fiscal_year=2025), AS_OF, "NVDA")
    assert rev.sentence is not None and rev.sentence.figures[0].value == 130_497e6
    assert rev.sentence.figures[0].provenance["concept"] == "us-gaap:Revenues"
    q2 = xbrl_answer(cf, METRIC["revenue"], Period(PeriodKind.QUARTER, "q2", fiscal_year=2026, quarter=2), AS_OF,
                     "NVDA")
    assert q2.sentence is not None and q2.sentence.figures[0].value == 46_743e6


def test_a_fourth_quarter_is_derived_with_its_formula(facts: Any) -> None:
    cf = facts.company_facts("AAPL")
    q4 = xbrl_answer(cf, METRIC["revenue"], Period(PeriodKind.QUARTER, "q4", fiscal_year=2024, quarter=4), AS_OF,
                     "AAPL")
    assert q4.sentence is not None
    fig = q4.sentence.figures[0]
    assert fig.period_end == date(2024, 9, 28) and 80 <= (fig.period_end - fig.period_start).days <= 100  # type: ignore[operator]
    assert fig.provenance["formula"].startswith("+us-gaap:") and " -us-gaap:" in fig.provenance["formula"]
    assert len(fig.provenance["facts"]) == 2


def test_a_fiscal_year_that_has_not_ended_by_the_as_of_date_is_not_reported_yet(facts: Any) -> None:
    cf = facts.company_facts("NVDA")
    fy2026 = Period(PeriodKind.FISCAL_YEAR, "fiscal 2026", fiscal_year=2026)
    result = xbrl_answer(cf, METRIC["revenue"], fy2026, AS_OF, "NVDA")  # NVIDIA's fiscal 2026 ends in Jan 2026
    assert result.sentence is None and result.not_ended
    assert "after the as-of date 2025-09-30" in result.reason
    later = xbrl_answer(cf, METRIC["revenue"], Period(PeriodKind.FISCAL_YEAR, "fiscal 2025", fiscal_year=2025),
                        AS_OF, "NVDA")
    assert later.sentence is not None and not later.not_ended


def test_balance_sheet_and_cost_lines_of_the_concept_map_answer_from_their_concepts(facts: Any) -> None:
    """Inventories, current assets / liabilities, net PP&E, accounts payable (instants at the fiscal year end) and
    cost of revenue (a flow) each come from their own us-gaap concept, not from a wider one."""
    from equimind.query.analysis import Subject, name_words
    from equimind.query.question import analyse_question

    apple = Subject("AAPL", name_words("AAPL", "Apple Inc."))
    cf = facts.company_facts("AAPL")
    cases = {
        "What were Apple's inventories at the end of fiscal 2024?": ("us-gaap:InventoryNet", 7_286e6),
        "What were Apple's total current liabilities at the end of fiscal 2024?": ("us-gaap:LiabilitiesCurrent",
                                                                                   176_392e6),
        "What were Apple's current assets at the end of fiscal 2024?": ("us-gaap:AssetsCurrent", 152_987e6),
        "What was Apple's net property, plant and equipment at the end of fiscal 2024?": (
            "us-gaap:PropertyPlantAndEquipmentNet", 45_680e6),
        "What was Apple's accounts payable at the end of fiscal 2024?": ("us-gaap:AccountsPayableCurrent", 68_960e6),
        "What was Apple's cost of sales in fiscal 2024?": ("us-gaap:CostOfGoodsAndServicesSold", 210_352e6),
    }
    for question, (concept, value) in cases.items():
        q = analyse_question(question, apple)
        assert q.xbrl and q.metric is not None, question
        result = xbrl_answer(cf, q.metric.metric, q.periods[0], AS_OF, "AAPL")
        assert result.sentence is not None, question
        fig = result.sentence.figures[0]
        assert (fig.provenance["concept"], fig.value, fig.period_end) == (concept, value, date(2024, 9, 28)), question
