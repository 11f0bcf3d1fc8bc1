"""A company's fiscal calendar, read from its own XBRL filings as known at the as-of date.

The ``fy`` tag of a companyfacts entry is the fiscal year of the *filing*, not of the fact: Apple's FY2024 10-K tags
its 2022, 2023 and 2024 net income all ``fy: 2024``. So facts are never picked by ``fy``. Instead, each annual
report (10-K, filed on or before the as-of date) names one fiscal year — its ``fy`` — whose period is the latest
annual duration that filing reports: that gives the dates of fiscal year N (NVIDIA's fiscal 2025 ends 2025-01-26,
Apple's fiscal 2024 ends 2024-09-28). Quarters come the same way from the 10-Qs (``fp`` Q1..Q3: the latest
quarter-long duration of that filing); Q4 ends with the fiscal year. A fiscal year no filing of the as-of date names
is placed by the company's pattern: a known year-end moved by whole years (within ``TOLERANCE_DAYS``, for 52/53-week
years), else 31 December of that year.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from equimind.analytics.xbrl import QUARTER_DAYS, YEAR_DAYS
from equimind.lexicon.forms import ANNUAL_FORMS, QUARTERLY_FORMS
from equimind.query.periods import Period, PeriodKind
from equimind.sources.base import CompanyFacts, XbrlFact

TOLERANCE_DAYS = 10


@dataclass(frozen=True)
class PeriodWindow:
    """The dates a question's period covers: a duration ending ``end`` of ``days`` (min, max) long, or an instant
    at ``end`` (``days`` None)."""

    end: date
    days: tuple[int, int] | None
    label: str
    source: str  # how the end date was found (which filing named it, or the pattern)


def _in(days: int | None, bounds: tuple[int, int]) -> bool:
    return days is not None and bounds[0] <= days <= bounds[1]


class FiscalCalendar:
    """Fiscal year and quarter ends named by the filings in ``cf`` filed on or before ``as_of``."""

    def __init__(self, cf: CompanyFacts, as_of: date) -> None:
        self.as_of = as_of
        years: dict[int, tuple[date, date, str]] = {}  # fy -> (filed, end, accession)
        quarters: dict[tuple[int, int], tuple[date, date, str]] = {}
        by_filing: dict[str, list[XbrlFact]] = {}
        for reported in cf.facts.values():
            for f in reported:
                if f.filed <= as_of and f.fy is not None and f.start is not None:
                    by_filing.setdefault(f.accession, []).append(f)
        for accession, facts in by_filing.items():
            self._read_filing(accession, facts, years, quarters)
        self.years = {fy: (end, acc) for fy, (_, end, acc) in years.items()}
        self.quarters = {k: (end, acc) for k, (_, end, acc) in quarters.items()}

    @staticmethod
    def _read_filing(accession: str, facts: list[XbrlFact], years: dict[int, tuple[date, date, str]],
                     quarters: dict[tuple[int, int], tuple[date, date, str]]) -> None:
        first = facts[0]
        if first.fy is None:
            return
        if first.form in ANNUAL_FORMS and first.fp == "FY":
            ends = [f.end for f in facts if _in(f.days, YEAR_DAYS)]
            target, key = years, first.fy
            if ends and (key not in target or first.filed > target[key][0]):
                target[key] = (first.filed, max(ends), accession)
        elif first.form in QUARTERLY_FORMS and first.fp in ("Q1", "Q2", "Q3"):
            ends = [f.end for f in facts if _in(f.days, QUARTER_DAYS)]
            qkey = (first.fy, int(first.fp[1]))
            if ends and (qkey not in quarters or first.filed > quarters[qkey][0]):
                quarters[qkey] = (first.filed, max(ends), accession)

    def year_end(self, fy: int) -> tuple[date, str]:
        """(end of fiscal year ``fy``, how it was found)."""
        if fy in self.years:
            end, acc = self.years[fy]
            return end, f"fiscal {fy} as named by annual report {acc}"
        if self.years:
            known = min(self.years, key=lambda k: abs(k - fy))
            end = self.years[known][0]
            return _shift_years(end, fy - known), f"fiscal {known}'s year-end ({end}) moved {fy - known:+d} years"
        return date(fy, 12, 31), f"no annual report by the as-of date: 31 December {fy} assumed"

    def quarter_end(self, fy: int, quarter: int) -> tuple[date, str]:
        if quarter == 4:
            end, how = self.year_end(fy)
            return end, f"Q4 ends with the fiscal year ({how})"
        if (fy, quarter) in self.quarters:
            end, acc = self.quarters[(fy, quarter)]
            return end, f"Q{quarter} of fiscal {fy} as named by quarterly report {acc}"
        year_end, how = self.year_end(fy)
        return year_end - timedelta(days=91 * (4 - quarter)), f"{4 - quarter} quarters before the year-end ({how})"

    def latest_year(self) -> int | None:
        return max(self.years, default=None)

    def window(self, period: Period | None, flow: bool) -> PeriodWindow | None:
        """The dates of ``period`` (None: the latest fiscal year an annual report of the as-of date names)."""
        if period is None:
            fy = self.latest_year()
            if fy is None:
                return None
            period = Period(PeriodKind.FISCAL_YEAR, f"fiscal {fy}", fiscal_year=fy)
        return self._window(period, flow)

    def _window(self, p: Period, flow: bool) -> PeriodWindow | None:
        span = YEAR_DAYS if flow else None
        if p.kind is PeriodKind.FISCAL_YEAR and p.fiscal_year:
            end, how = self.year_end(p.fiscal_year)
            return PeriodWindow(end, span, p.label(), how)
        if p.kind is PeriodKind.QUARTER and p.quarter:
            fy = p.fiscal_year or self._latest_quarter_year(p.quarter)
            if fy is None:
                return None
            end, how = self.quarter_end(fy, p.quarter)
            return PeriodWindow(end, QUARTER_DAYS if flow else None, f"Q{p.quarter} of fiscal {fy}", how)
        if p.kind is PeriodKind.YEAR_TO_DATE and p.months and p.fiscal_year:
            end, how = self.quarter_end(p.fiscal_year, p.months // 3)
            days = round(p.months * 30.44)
            return PeriodWindow(end, (days - 15, days + 15) if flow else None, p.label(), how)
        if p.kind is PeriodKind.MONTH_QUARTER and p.month and p.year:
            return self._month_quarter(p, flow)
        if p.kind is PeriodKind.DAY and p.day:
            return PeriodWindow(p.day, None if not flow else QUARTER_DAYS, p.label(), "the day the question names")
        return None

    def _latest_quarter_year(self, quarter: int) -> int | None:
        return max((fy for fy, q in self.quarters if q == quarter), default=self.latest_year())

    def _month_quarter(self, p: Period, flow: bool) -> PeriodWindow | None:
        ends = [e for e, _ in self.quarters.values()] + [e for e, _ in self.years.values()]
        hits = [e for e in ends if _ends_in_month(e, p.month or 0, p.year or 0)]
        if not hits:
            return None
        return PeriodWindow(max(hits), QUARTER_DAYS if flow else None, p.label(),
                            "the fiscal quarter a filing of the as-of date ends in that month")


def _ends_in_month(end: date, month: int, year: int) -> bool:
    """A 52/53-week quarter 'ended June' may end up to a week into July."""
    if (end.year, end.month) == (year, month):
        return True
    back = end - timedelta(days=7)
    return (back.year, back.month) == (year, month)


def _shift_years(end: date, years: int) -> date:
    try:
        return end.replace(year=end.year + years)
    except ValueError:  # 29 February
        return end.replace(year=end.year + years, day=28)


def known_ends(facts: Iterable[XbrlFact]) -> set[date]:
    return {f.end for f in facts}
