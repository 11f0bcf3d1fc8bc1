"""The period a 10-K / 10-Q says it covers, read from its own cover page: "For the fiscal year ended January 28,
2023" / "For the quarterly period ended July 27, 2025".

Total: any text in, a ``StatedPeriod`` or None out; it never raises. Only the first ``COVER_CHARS`` characters are
read (the cover page and the table of contents that repeats its line). What is read:

* a lead "for the" + one of: "fiscal year ended", "year ended" (annual); "quarterly period ended", "fiscal quarter
  ended", "quarter ended" (quarter), in any case, the words separated by spaces, no-break spaces or the cell bars a
  PDF layout puts between words ("For | the | fiscal | year | ended | December | 31, | 2016");
* then a date "Month D, YYYY" (full month name or its short form, "Sept."), the month read through a stray space a
  PDF layout leaves inside a word ("JUL Y 29, 2023"); up to ``GAP_CHARS`` letters (no digit) may stand between the
  lead and the date, the other column of a two-column cover ("For the quarterly period ended Commission file |
  March 31, 2021");
* an impossible date ("February 30, 2023") is skipped, and the next statement is read.

Which statement is the document's own: the form says the kind (a 10-Q's cover is the quarter it reports, never the
"Form 10-K for the fiscal year ended ..." it refers to; a 10-K's is annual; another form's is never read), and among
those of that kind the cover wording ("fiscal year ended", "quarterly period ended", "quarter ended") wins over a
bare "year ended" (a sentence "For the year ended December 31, 2022, worldwide billed business ..."), then the
first. A document of unknown form takes the first statement of either kind.

``documents.to_document`` records it as ``meta["period_end_stated"]`` (ISO date) and ``meta["period_stated"]``
("annual" / "quarter"); a local file, which has no period of report from a filing index, takes it as its
``period_end``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from equimind.core.documents import Origin
from equimind.lexicon.calendar import MONTH_ABBREVIATIONS, MONTHS
from equimind.lexicon.forms import is_annual, is_quarterly
from equimind.sources.base import RawFiling

COVER_CHARS = 15_000
GAP_CHARS = 40
META_END = "period_end_stated"
META_KIND = "period_stated"


class PeriodStated(StrEnum):
    ANNUAL = "annual"
    QUARTER = "quarter"


@dataclass(frozen=True)
class StatedPeriod:
    """A period end a cover states: the date, the kind, whether the cover's own wording named it (not a bare
    "year ended"), and the span of the statement in the text."""

    end: date
    kind: PeriodStated
    cover_wording: bool
    start: int
    stop: int

    def meta_pairs(self) -> list[tuple[str, str]]:
        return [(META_END, self.end.isoformat()), (META_KIND, self.kind.value)]


_SEP = r"(?:[\s\u00a0|]++)"  # possessive: a long run of blanks is read once, never backtracked into
_LEADS = {  # lead words -> (kind, the cover's own wording)
    "fiscal year": (PeriodStated.ANNUAL, True),
    "year": (PeriodStated.ANNUAL, False),
    "quarterly period": (PeriodStated.QUARTER, True),
    "fiscal quarter": (PeriodStated.QUARTER, True),
    "quarter": (PeriodStated.QUARTER, True),
}


def _spaced(word: str) -> str:
    """A month name that may carry one stray space between two letters ("JUL Y")."""
    return r"\s?".join(re.escape(c) for c in word)


_MONTH_NUMBER = {**{m: i + 1 for i, m in enumerate(MONTHS)},
                 **{a: MONTHS.index(next(m for m in MONTHS if m.startswith(a[:3]))) + 1 for a in MONTH_ABBREVIATIONS}}
_MONTH = "|".join(_spaced(m) for m in sorted(_MONTH_NUMBER, key=len, reverse=True))
_LEAD = "|".join(_SEP.join(w.split()) for w in sorted(_LEADS, key=len, reverse=True))
_STATED = re.compile(
    rf"\bfor{_SEP}the{_SEP}(?P<lead>{_LEAD}){_SEP}ended:?{_SEP}(?:(?P<gap>[^\d\n]{{1,{GAP_CHARS}}}?){_SEP})?"
    rf"(?P<month>{_MONTH})\.?{_SEP}(?P<day>\d{{1,2}})(?:{_SEP}?,{_SEP}?|{_SEP})(?P<year>(?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)


def _read(m: re.Match[str]) -> StatedPeriod | None:
    lead = " ".join(re.split(_SEP, m.group("lead").lower()))
    month = _MONTH_NUMBER.get(re.sub(r"\s", "", m.group("month").lower()))
    if lead not in _LEADS or month is None:
        return None
    try:
        end = date(int(m.group("year")), month, int(m.group("day")))
    except ValueError:  # "February 30, 2023"
        return None
    kind, cover = _LEADS[lead]
    if m.group("gap") and not cover:  # words between a bare "year ended" and a date: not a cover's statement
        return None
    return StatedPeriod(end, kind, cover, m.start(), m.end())


def stated_periods(text: str) -> list[StatedPeriod]:
    """Every period statement of the cover (``COVER_CHARS``), in order; impossible dates skipped."""
    if not isinstance(text, str):
        return []
    try:
        found = (_read(m) for m in _STATED.finditer(text[:COVER_CHARS]))
        return [p for p in found if p is not None]
    except (re.error, RecursionError, ValueError):  # never raise on a broken text
        return []


def _kind_of(form: str | None) -> PeriodStated | bool | None:
    """The kind the form's cover states; None for a form whose cover states none; True for an unknown form."""
    if is_annual(form):
        return PeriodStated.ANNUAL
    if is_quarterly(form):
        return PeriodStated.QUARTER
    return True if (form or "").strip().upper() in ("", "UNKNOWN") else None


def stated_period(text: str, form: str | None = None) -> StatedPeriod | None:
    """The period the document states it covers (module docstring), or None."""
    want = _kind_of(form)
    if want is None:
        return None
    found = [p for p in stated_periods(text) if want is True or p.kind is want]
    return min(found, key=lambda p: (not p.cover_wording, p.start), default=None)


def local_period_end(raw: RawFiling, stated: StatedPeriod | None) -> date | None:
    """A Document's ``period_end``: the record's own (a filing index's period of report) when it has one; else, for
    a local file only, the period its cover states. SEC documents keep what their index says, even none."""
    if raw.period_end is not None or raw.origin is not Origin.LOCAL_FILE or stated is None:
        return raw.period_end
    return stated.end


def period_end_of(meta: dict[str, str]) -> date | None:
    """The stated period end recorded in a Document's meta, or None (absent or malformed)."""
    try:
        return date.fromisoformat(meta.get(META_END, ""))
    except ValueError:
        return None
