"""Every reader of document and question text, run over one text (the ``read_all`` fixture): the property tests
call it on generated text and on every sentence of the recorded filings and FinanceBench PDFs. A reader is total
when it returns (whatever the text) and what it returns keeps its own invariants (checked here with plain asserts).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from equimind.answer import fiscal, units, values
from equimind.answer.choice import choose, choose_columns
from equimind.answer.column_groups import group_tables
from equimind.answer.computed import compute
from equimind.answer.extract import lists_names, names_month, qualified_line, unit_years
from equimind.answer.lines import StatementLines, bottom_line
from equimind.answer.undefined import undefined_figure
from equimind.answer.units import cells
from equimind.core.documents import Origin
from equimind.lexicon import text as lexicon_text
from equimind.lexicon.concepts import METRICS
from equimind.lexicon.formulas import FormulaMatch, formula_by_key
from equimind.query.analysis import Subject, name_words
from equimind.query.kinds import AnswerKind
from equimind.query.periods import PeriodKind, find_periods
from equimind.query.question import analyse_question
from equimind.sources.base import CompanyFacts, XbrlFact

VALUE_KINDS = tuple(AnswerKind)
METRIC = {m.key: m for m in METRICS}
HERON = Subject("HRN", name_words("HRN", "Heron Freight Lines Inc."))


def _fact(end: date, fy: int, filed: date) -> XbrlFact:
    return XbrlFact(taxonomy="us-gaap", concept="Revenues", unit="USD", value=1.0, start=date(end.year - 1, 3, 1),
                    end=end, accession=f"0000000000-{fy % 100:02d}-000001", filed=filed, form="10-K", fy=fy,
                    fp="FY")


# A year-end on 29 February (moved by whole years it must land on a real day) and a company with no filings.
CALENDARS = (
    fiscal.FiscalCalendar(CompanyFacts(cik="0000000001", entity_name="Leap", ticker="LEAP",
                                       facts={"us-gaap:Revenues": (_fact(date(2024, 2, 29), 2024,
                                                                         date(2024, 4, 1)),)},
                                       origin=Origin.SNAPSHOT, location="test"), date(2100, 1, 1)),
    fiscal.FiscalCalendar(CompanyFacts(cik="0000000002", entity_name="None", ticker="NONE", facts={},
                                       origin=Origin.SNAPSHOT, location="test"), date(2100, 1, 1)),
)


def _periods(text: str) -> int:
    periods = find_periods(text)
    for p in periods:
        assert p.label()
        if p.kind is PeriodKind.DAY:
            assert p.day is not None and 1900 <= p.day.year <= 2099, p
        if p.fiscal_year is not None:
            assert 1900 <= p.fiscal_year <= 2099, p
        if p.month is not None:
            assert 1 <= p.month <= 12, p
        for cal in CALENDARS:
            for flow in (True, False):
                window = cal.window(p, flow)
                assert window is None or isinstance(window.end, date)
    years = unit_years(text)
    assert all(1900 <= y <= 2099 for y in years), years
    for month in (0, 1, 2, 12, 13):
        names_month(text, month, 2024)
    return len(periods)


def _values(text: str) -> int:
    found = 0
    for kind in VALUE_KINDS:
        for v in values.values_of(kind, text, scale=1e6, question_words=text.split()[:5]):
            assert v.number is None or not math.isnan(v.number), v
            found += 1
    for v in values.amounts(text) + values.percents(text) + values.counts(text, 1e3):
        assert v.number is not None and v.number >= 0, v
    for n in values.numbers_in(text):
        assert n >= 0 and not math.isnan(n)
    assert values.table_scale(text) in (1.0, 1e3, 1e6, 1e9)
    values.dates(text)
    values.names(text, text.split()[:3])
    return found


def _spans_ok(text: str, spans: list[tuple[int, int]]) -> None:
    last = 0
    for a, b in spans:
        assert last <= a < b <= len(text), (a, b)
        last = b


def _lexicon(text: str) -> None:
    _spans_ok(text, lexicon_text.split_sentences(text))
    _spans_ok(text, lexicon_text.split_prose_sentences(text))
    assert lexicon_text.count_financial_numbers(text) >= 0
    words = lexicon_text.question_words(text)
    assert len(words) == len(set(words))
    lexicon_text.salient_terms(text, exclude=("Acme Inc.",))
    lexicon_text.topic_terms(text)


def _units(text: str) -> None:
    assert units.cells(text)
    for u in units.document_sentences(text, "d", 0) + units.document_rows(text, "d", 0):
        assert text[u.span.start:u.span.end] == u.span.text
        units.unit_quotes(u, "0" * 64)
    units.scale_note(text, len(text))


_ASKS = ("By how much did Heron's consolidated revenues grow in 2024?", "What segments does Heron report?",
         "What was Heron's largest liability in 2024?",
         "Among operations, investing, and financing activities, which brought in the most cash in 2024?",
         "Which of Heron's segments had the highest net income in 2024?",
         "Which segment grew the fastest in 2024?")


@functools.cache
def _asks() -> tuple[Any, ...]:
    return tuple(analyse_question(ask, HERON) for ask in _ASKS)


def _statements(text: str) -> None:
    """The statement readers over ``text`` as one filing: every table row's value at a year, the lines a total
    sums, a line printed in parts, a choice among named candidates, a figure the statement does not define, and the
    sentence preferences (a part's line, a list of names)."""
    sl = StatementLines({"d": (2024, "10-K")}, {"d": text}.__getitem__)
    for table in sl.tables("d"):
        for u in table:
            assert text[u.span.start:u.span.end] == u.span.text
            got = sl.at(u, 2024)
            assert got is None or not math.isnan(got[0])
            bottom_line(cells(u.span.text)[0])
    for key in ("cost_of_revenue", "revenue", "net_income"):
        lv = sl.value(METRIC[key], 2024, 2024)
        assert lv is None or all(text[q.start:q.end] == q.text for q in lv.quotes)
    for t in group_tables(text):  # column-grouped tables: every row a line of the text, one value per column
        assert all(text[r.start:r.end].strip() and len(r.values) == len(t.names) and
                   all(len(g) == len(t.periods) for g in r.values) for r in t.rows)
    for q in _asks():
        if q.choice is not None:
            got_choice = choose(q.choice, set(q.terms), 2024, sl, "Heron", "HRN")
            assert got_choice is None or all(text[x.start:x.end] == x.text for x in got_choice[0].quotes)
            if q.choice.group:
                got_choice = choose_columns(q.choice, 2024, "fiscal 2024", [("d", text)], "Heron", "HRN")
                assert got_choice is None or all(text[x.start:x.end] == x.text for x in got_choice[0].quotes)
        qualified_line(q, text)
    for name in ("gross_margin", "operating_margin"):
        f = formula_by_key(name)
        result = compute(FormulaMatch(f, f.name, False), [2024], "Heron", "HRN", lambda m, y, t: sl.value(m, y, t))
        if result.sentence is None:
            undefined_figure(f, result, sl, "Heron", "HRN", 2024)
    lists_names(text)


def read_all(text: str) -> int:
    """Run every reader over ``text`` (assertion errors name the broken invariant); the number of periods and
    values found."""
    _lexicon(text)
    _units(text)
    _statements(text)
    return _periods(text) + _values(text)


@pytest.fixture(scope="session", name="read_statements")
def read_statements_fixture() -> Callable[[str], None]:
    """The statement readers (``_statements``) over a whole document: its tables span many sentences."""
    return _statements


@pytest.fixture(scope="session", name="read_all")
def read_all_fixture() -> Callable[[str], int]:
    return read_all
