"""The readers of document and question text are total (issue 28): any text, and text built from the pieces real
filings print (dates, impossible ones too, fiscal years, amounts, huge digit runs, digits of other scripts), is read
without an exception, and what is read keeps its invariants (the ``read_all`` fixture, ``conftest.read_all``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.answer.extract import names_month, unit_years
from equimind.lexicon.calendar import MONTH_ABBREVIATIONS, MONTHS
from equimind.query.periods import PeriodKind, find_periods

Reader = Callable[[str], int]
ANY_TEXT_EXAMPLES = 300
SHAPED_EXAMPLES = 600

_month = st.sampled_from([*MONTHS, *MONTH_ABBREVIATIONS]).map(
    lambda m: m.title()) | st.sampled_from([*MONTHS, *MONTH_ABBREVIATIONS, "Sept.", "MAY"])
_year = st.integers(1890, 2110).map(str) | st.sampled_from(["0000", "9999", "'23", "23", "00", "1900", "2099"])
_day = st.integers(0, 99).map(str) | st.sampled_from(["00", "31", "30", "29"])
_digits = st.text(alphabet="0123456789", min_size=1, max_size=400)
_unicode_digits = st.text(alphabet="0123456789\u0660\u0661\u0669\u06f3\u0966\u096f\uff10\uff19\u00b2\u2155",
                          min_size=1, max_size=12)
_number = _digits | _unicode_digits | st.builds(
    lambda a, b: f"{a},{b}", st.integers(0, 999_999), st.integers(0, 10**30)) | st.floats(
    allow_nan=True, allow_infinity=True).map(str)
_date = st.builds(lambda m, d, y, sep: f"{m}{sep}{d}, {y}", _month, _day, _year, st.sampled_from([" ", ". ", "  "]))
_fiscal = st.builds(lambda w, y: f"{w}{y}", st.sampled_from(["FY", "FY ", "fiscal ", "fiscal year ", "Q3 ",
                                                             "first half of ", "nine months ended ", "mid-",
                                                             "second quarter of ", "in "]), _year)
_amount = st.builds(lambda sign, n, scale, close: f"{sign}{n}{scale}{close}", st.sampled_from(["$", "$ ", "($",
                    "(", "", "-$"]), _number, st.sampled_from(["", " billion", " million", " thousand", "%", " bn",
                                                                " percent", " percentage points", " trillions"]),
                    st.sampled_from(["", ")", ".", ","]))
_piece = (_date | _fiscal | _amount | _month | _number
          | st.sampled_from(["(In millions)", "| Revenue | $1,234 |", "|---|---|", "\n", ". ", "June 2025 quarter",
                             "February 30, 2023", "(1,234)", "$1.2 billion", "FY2023", "compared to", "Inc.",
                             "U.S.", "“", "|", "$", "%", "\u2019", "\u0130", "\x00"])
          | st.text(max_size=8))
SHAPED_TEXT = st.lists(_piece, max_size=24).flatmap(lambda parts: st.sampled_from([" ", "", "\n"]).map(
    lambda sep: sep.join(parts)))

_counts = {"any": 0, "shaped": 0}


@settings(deadline=None, derandomize=True, max_examples=ANY_TEXT_EXAMPLES)
@given(text=st.text())
def test_every_reader_returns_on_any_text(read_all: Reader, text: str) -> None:
    _counts["any"] += 1
    read_all(text)


@settings(deadline=None, derandomize=True, max_examples=SHAPED_EXAMPLES)
@given(text=SHAPED_TEXT)
def test_every_reader_returns_on_date_and_number_shaped_text(read_all: Reader, text: str) -> None:
    _counts["shaped"] += 1
    read_all(text)


def test_the_examples_were_run(read_all: Reader) -> None:
    """The two properties above ran their examples (runs in file order after them; a lone run of this test
    generates them itself)."""
    if not _counts["any"]:
        test_every_reader_returns_on_any_text(read_all)
        test_every_reader_returns_on_date_and_number_shaped_text(read_all)
    print(f"hypothesis examples: any text {_counts['any']}, date/number shaped text {_counts['shaped']}")
    assert _counts["any"] >= ANY_TEXT_EXAMPLES // 2 and _counts["shaped"] >= SHAPED_EXAMPLES // 2


# ----------------------------------------------------------------------------------------- the reported crash


SENTENCE = ("As of February 30, 2023, the Company had repurchased 1,234 shares for $1.2 billion, compared to "
            "fiscal 2022.")


def test_an_impossible_date_in_a_sentence_is_read_as_its_month_end() -> None:
    periods = find_periods(SENTENCE)
    assert [(p.kind, p.day) for p in periods if p.kind is PeriodKind.DAY] == [(PeriodKind.DAY, date(2023, 2, 28))]
    assert [p.fiscal_year for p in periods if p.kind is PeriodKind.FISCAL_YEAR] == [2022]
    assert unit_years(SENTENCE) == {2022}, "the year of a date is a day, not a period, impossible day or not"


@pytest.mark.parametrize(("text", "day"), [
    ("at June 31, 2024", date(2024, 6, 30)),
    ("on Feb 29, 2023", date(2023, 2, 28)),
    ("on Feb 29, 2024", date(2024, 2, 29)),  # a leap day is a real day
    ("on Sept. 99, 2025", date(2025, 9, 30)),
    ("on September 30, 2025", date(2025, 9, 30)),
])
def test_a_day_past_the_month_end_is_the_month_end(text: str, day: date) -> None:
    assert [p.day for p in find_periods(text)] == [day]
    assert unit_years(text) == set()


def test_day_zero_is_no_day_and_not_a_fiscal_year() -> None:
    assert find_periods("On June 0, 2024 the plan began") == []
    assert unit_years("On June 0, 2024 the plan began") == set()


def test_names_month_names_no_month_outside_the_calendar() -> None:
    text = "In May 2024 and December 2024 the board approved it."
    assert names_month(text, 5, 2024) and names_month(text, 12, 2024)
    assert not names_month(text, 0, 2024) and not names_month(text, 13, 2024)
