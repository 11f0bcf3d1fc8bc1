"""Periods named in a question: a fiscal year ("fiscal 2025", "FY2024", "in 2024"), a quarter ("Q2 of fiscal 2026",
"the second quarter of 2025", "the June 2025 quarter"; "mid-2025" is read as the quarter ended June 2025), a
calendar month ("announced in May 2024": when an event happened, which no reporting period is), a year-to-date
span ("the first half of 2025", "the first nine months of fiscal 2025") or a day ("at June 30, 2025",
"year-end 2024" is the fiscal year's end).

Pure functions of the text. A bare year is read as the fiscal year of that number (analysts say "Apple's 2024 sales"
for fiscal 2024); which dates a fiscal year covers is the company's own calendar (``fiscal.FiscalCalendar``).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from equimind.lexicon.calendar import MONTH_ABBREVIATIONS, MONTHS

_MON = "|".join((*MONTHS, *MONTH_ABBREVIATIONS))
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
YTD_MONTHS = {"first half": 6, "first six months": 6, "six months": 6, "first nine months": 9, "nine months": 9,
              "first three months": 3, "h1": 6}
_YEAR = r"(?:fiscal(?:\s+year)?\s+|fy\s*'?)?((?:19|20)\d{2}|'?\d{2}(?=\b))"
_DAY = re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}}),?\s+((?:19|20)\d{{2}})\b")
_QUARTER = re.compile(rf"\b(?:q([1-4])|(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter)"
                      rf"(?:\s+(?:of|in)\s+(?:the\s+)?)?\s*(?:{_YEAR})?")
_MONTH_QUARTER = re.compile(rf"\b({_MON})\s+((?:19|20)\d{{2}})\s+(?:fiscal\s+)?quarter\b")
_MID_YEAR = re.compile(r"\bmid-?\s?((?:19|20)\d{2})\b")  # "mid-2025": the quarter ended June 2025
_MONTH = re.compile(rf"\b({_MON})\.?\s+((?:19|20)\d{{2}})\b")  # "in May 2024": a calendar month
_YTD = re.compile(r"\b(first half|first six months|first nine months|first three months|six months|nine months|h1)"
                  rf"(?:\s+(?:of|in|ended)\s+(?:the\s+)?)?\s*(?:{_YEAR})?")
_FISCAL_YEAR = re.compile(r"\b(?:fiscal(?:\s+year)?|fy)\s*'?((?:19|20)\d{2}|\d{2})\b")
_BARE_YEAR = re.compile(r"(?<![\w$.,])((?:19|20)\d{2})(?![\w%,.]\d)")


class PeriodKind(StrEnum):
    FISCAL_YEAR = "fiscal_year"
    QUARTER = "quarter"  # fiscal quarter k of a fiscal year
    MONTH_QUARTER = "month_quarter"  # the quarter ending in a calendar month
    YEAR_TO_DATE = "year_to_date"  # the first 3/6/9 months of a fiscal year
    DAY = "day"  # an instant
    MONTH = "month"  # a calendar month ("announced in May 2024"): when something happened, not a reporting period


@dataclass(frozen=True)
class Period:
    kind: PeriodKind
    text: str
    fiscal_year: int | None = None
    quarter: int | None = None
    months: int | None = None  # YTD length
    month: int | None = None  # MONTH_QUARTER: the calendar month the quarter ends in
    year: int | None = None  # MONTH_QUARTER / DAY: calendar year
    day: date | None = None

    def label(self) -> str:
        if self.kind is PeriodKind.FISCAL_YEAR:
            return f"fiscal {self.fiscal_year}"
        if self.kind is PeriodKind.QUARTER:
            return f"Q{self.quarter} of fiscal {self.fiscal_year}" if self.fiscal_year else f"Q{self.quarter}"
        if self.kind is PeriodKind.MONTH_QUARTER:
            return f"the quarter ended {MONTHS[(self.month or 1) - 1].title()} {self.year}"
        if self.kind is PeriodKind.MONTH:
            return f"{MONTHS[(self.month or 1) - 1].title()} {self.year}"
        if self.kind is PeriodKind.YEAR_TO_DATE:
            return f"the first {self.months} months of fiscal {self.fiscal_year}"
        return f"{self.day}"


def _year(raw: str | None) -> int | None:
    if not raw:
        return None
    digits = raw.strip("'")
    return int(digits) if len(digits) == 4 else 2000 + int(digits)


def _month(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(name[:3]))


def _day(year: int, month: int, day: int) -> date | None:
    """The date a text prints; a day past the month's end ("February 30", "June 31") is read as its last day, day 0
    as no date (filings and PDFs print impossible dates: never an error)."""
    if day < 1:
        return None
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def find_periods(question: str) -> list[Period]:
    """Every period the question names, in text order; a span claimed by a more specific period (a day, a quarter,
    a year-to-date) is not read again as a fiscal year."""
    low = question.lower().replace("\u2019", "'")
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []

    def claim(m: re.Match[str], period: Period) -> None:
        if not any(m.start() < b and a < m.end() for a, b in taken):
            taken.append((m.start(), m.end()))
            found.append((m.start(), period))

    for m in _DAY.finditer(low):
        day = _day(int(m.group(3)), _month(m.group(1)), int(m.group(2)))
        if day is None:  # "June 0, 2024": a date-shaped span, so not a year either, but no day
            taken.append((m.start(), m.end()))
        else:
            claim(m, Period(PeriodKind.DAY, m.group(0), day=day))
    for m in _MONTH_QUARTER.finditer(low):
        claim(m, Period(PeriodKind.MONTH_QUARTER, m.group(0), month=_month(m.group(1)), year=int(m.group(2))))
    for m in _MID_YEAR.finditer(low):
        claim(m, Period(PeriodKind.MONTH_QUARTER, m.group(0), month=6, year=int(m.group(1))))
    for m in _MONTH.finditer(low):
        claim(m, Period(PeriodKind.MONTH, m.group(0), month=_month(m.group(1)), year=int(m.group(2))))
    for m in _QUARTER.finditer(low):
        q = int(m.group(1)) if m.group(1) else ORDINALS[m.group(2)]
        claim(m, Period(PeriodKind.QUARTER, m.group(0).strip(), fiscal_year=_year(m.group(3)), quarter=q))
    for m in _YTD.finditer(low):
        claim(m, Period(PeriodKind.YEAR_TO_DATE, m.group(0).strip(), fiscal_year=_year(m.group(2)),
                        months=YTD_MONTHS[m.group(1)]))
    for pat in (_FISCAL_YEAR, _BARE_YEAR):
        for m in pat.finditer(low):
            claim(m, Period(PeriodKind.FISCAL_YEAR, m.group(0), fiscal_year=_year(m.group(1))))
    return [p for _, p in sorted(found, key=lambda sp: sp[0])]
