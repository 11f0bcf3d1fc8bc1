"""Numeric asks about a reported metric, answered from XBRL companyfacts as filed by the as-of date.

For the metric's concepts (``concepts.METRICS``, preferred first) the facts are those filed in a periodic report on
or before the as-of date, one per period: the latest filed by then (``analytics.xbrl.known_facts``: a restatement
filed later never leaks back). The asked period comes from the company's fiscal calendar (``fiscal``); the fact is
picked by its dates — it ends within ``TOLERANCE_DAYS`` of the period's end and lasts about a year (fiscal year) or
a quarter — never by the ``fy`` tag. A quarter no filing reports on its own (Q4) is derived from reported periods
(FY - 9M YTD: ``analytics.xbrl.period_value``) and the figure's provenance gives the derivation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Protocol

from equimind.analytics.xbrl import PeriodValue, known_facts, latest_instant, period_value
from equimind.answer.fiscal import TOLERANCE_DAYS, FiscalCalendar, PeriodWindow
from equimind.answer.record import AnswerFigure, AnswerSentence, Method, StatedValue
from equimind.lexicon.concepts import SHARES, USD_PER_SHARE, MetricSpec
from equimind.query.periods import Period
from equimind.sources.base import CompanyFacts, XbrlFact

COVER_PAGE_DAYS = 120  # a cover-page share count is dated after the period it belongs to


class FactsSource(Protocol):
    """Anything that returns a company's XBRL companyfacts (``SnapshotSec``, ``SecEdgarClient``)."""

    def company_facts(self, ticker: str) -> CompanyFacts:
        ...


@dataclass(frozen=True)
class XbrlResult:
    sentence: AnswerSentence | None
    reason: str  # why there is no sentence, or where the value came from
    not_ended: bool = False  # the asked period ends after the as-of date: no figure for it can exist yet


def format_value(value: float, unit: str) -> str:
    """$93,736 million / $6.08 per share / 15,115,823,000 shares."""
    if unit == USD_PER_SHARE:
        return f"${value:,.2f} per share"
    if unit == SHARES:
        return f"{value:,.0f} shares"
    sign = "-" if value < 0 else ""
    v = abs(value)
    if v >= 1e6:
        return f"{sign}${v / 1e6:,.0f} million" if v / 1e6 >= 10 else f"{sign}${v / 1e6:,.1f} million"
    return f"{sign}${v:,.0f}"


def _nearest_end(facts: Sequence[XbrlFact], target: date, days: tuple[int, int] | None) -> date | None:
    """The reported period end nearest ``target`` within the tolerance (52/53-week years drift)."""
    ends = {f.end for f in facts if (f.start is None) == (days is None)}
    near = [e for e in ends if abs((e - target).days) <= TOLERANCE_DAYS]
    return min(near, key=lambda e: (abs((e - target).days), e)) if near else None


def pick_value(facts: Sequence[XbrlFact], window: PeriodWindow) -> PeriodValue | None:
    """The value of ``facts`` over ``window``: a duration by its end and length, an instant by its date."""
    if window.days is None:
        pv = latest_instant(facts, near=window.end, tolerance_days=TOLERANCE_DAYS)
        if pv is None:  # cover-page counts (dei) are dated weeks after the period end
            later = [f for f in facts if f.start is None and window.end < f.end <= window.end +
                     timedelta(days=COVER_PAGE_DAYS)]
            pv = latest_instant(later[:1]) if later else None
        return pv
    end = _nearest_end(facts, window.end, window.days)
    if end is None:
        return None
    return period_value(facts, end, window.days)


def _figure(metric: MetricSpec, concept: str, pv: PeriodValue, window: PeriodWindow) -> AnswerFigure:
    last = pv.latest
    prov = {**pv.provenance(), "fy": last.fy, "fp": last.fp, "fiscal_period": window.label,
            "period_source": window.source}
    prov["formula"] = "as reported" if pv.derivation == "as reported" else pv.derivation
    return AnswerFigure(name=metric.name, value=pv.value, unit=metric.unit, period_start=pv.start,
                        period_end=pv.end, provenance={k: (str(v) if isinstance(v, date) else v)
                                                       for k, v in prov.items() if k != "facts"} |
                        {"facts": pv.provenance()["facts"], "concept": concept})


def _sentence(company: str, metric: MetricSpec, fig: AnswerFigure, pv: PeriodValue, window: PeriodWindow,
              ticker: str) -> AnswerSentence:
    last = pv.latest
    span = f"{pv.start} to {pv.end}" if pv.start else f"at {pv.end}"
    how = "as reported" if pv.derivation == "as reported" else f"derived: {pv.derivation}"
    text = (f"{company}'s {metric.name.lower()} for {window.label} ({span}) was {format_value(pv.value, metric.unit)}"
            f" ({last.qualified}, {last.form} filed {last.filed}, accession {last.accession}; {how}).")
    stated = StatedValue(text=format_value(pv.value, metric.unit), number=pv.value, unit=metric.unit,
                         period=window.label)
    return AnswerSentence(text=text, method=Method.XBRL, subject=ticker, figures=[fig], values=[stated])


def xbrl_answer(cf: CompanyFacts, metric: MetricSpec, period: Period | None, as_of: date,
                ticker: str) -> XbrlResult:
    """The metric over the asked period, from the first concept that reports it (module docstring)."""
    calendar = FiscalCalendar(cf, as_of)
    window = calendar.window(period, metric.flow)
    if window is None:
        return XbrlResult(None, f"no filing of {ticker} on or before {as_of} places the asked period")
    if window.end > as_of:
        return XbrlResult(None, f"{window.label} ends {window.end}, after the as-of date {as_of}: no "
                                f"{metric.name.lower()} for it has been reported yet; ask for a period that has "
                                f"ended (the latest quarter reported, or the last full fiscal year)", not_ended=True)
    tried: list[str] = []
    for concept in metric.concepts:
        facts = known_facts(cf, concept, metric.unit, as_of)
        if not facts:
            tried.append(f"{concept} (no facts filed by {as_of})")
            continue
        pv = pick_value(facts, window)
        if pv is None:
            tried.append(f"{concept} (no period ending near {window.end})")
            continue
        fig = _figure(metric, concept, pv, window)
        company = cf.entity_name or ticker
        return XbrlResult(_sentence(company, metric, fig, pv, window, ticker), f"{concept} over {window.label}")
    return XbrlResult(None, f"no XBRL fact for {metric.name.lower()} over {window.label} (ending {window.end}) "
                            f"filed by {as_of}: tried {'; '.join(tried)}")
