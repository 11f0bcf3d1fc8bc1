"""Figures for the answer path (``Answerer``): a computed ratio the ask names (``answer.computed``) and a reported
line read from the statements when no XBRL figure answers (``answer.lines``).

The lines come from XBRL companyfacts as filed by the as-of date when the facts source knows the company, else from
the statement rows of the subject's visible filings. Fiscal years only: an ask about a quarter is left to the
passages (and ``degraded`` says so for a computed figure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from equimind.answer.choice import choose, choose_columns, choose_quarter_rows
from equimind.answer.computed import Computed, compute, trend
from equimind.answer.fiscal_dates import dated, with_line_date, year_ends
from equimind.answer.lines import LineValue, StatementLines, XbrlLines, line_sentence
from equimind.answer.record import AnswerSentence
from equimind.answer.undefined import undefined_figure
from equimind.core.documents import Document
from equimind.core.errors import NotFoundError
from equimind.lexicon.concepts import MetricSpec
from equimind.lexicon.formulas import FormulaMatch
from equimind.query.periods import PeriodKind
from equimind.query.question import QuestionAnalysis

if TYPE_CHECKING:
    from equimind.answer.xbrl_answer import FactsSource
    from equimind.store.docstore import DocStore


@dataclass(frozen=True)
class _Inputs:
    """What computing a figure for one ask reads (``FigureAnswerer._inputs``)."""

    match: FormulaMatch
    company: str
    years: list[int]
    refs: list[Document]
    statements: StatementLines
    xbrl: XbrlLines | None
    notes: tuple[str, ...]  # where the lines come from (no companyfacts: the statement rows)

    def lookup(self, metric: MetricSpec, year: int, t: int) -> LineValue | None:
        found = self.xbrl.value(metric, year) if self.xbrl is not None else None
        return found or self.statements.value(metric, year, t)

    def undefined(self, result: Computed, key: str) -> tuple[AnswerSentence, str] | None:
        """The sentence saying the figure is not defined by the company's income statement (``answer.undefined``),
        with its reason; None when it is defined, or a line is only missing."""
        f = self.match.formula
        found = undefined_figure(f, result, self.statements, self.company, key, max(self.years))
        return None if found is None else (found, f"{f.name} is not defined by {self.company}'s income statement")


class FigureAnswerer:
    def __init__(self, docstore: DocStore, facts: FactsSource | None) -> None:
        self.docstore = docstore
        self.facts = facts

    def computed(self, q: QuestionAnalysis, key: str, as_of: date, doc_ids: Sequence[str],
                 degraded: list[str]) -> tuple[AnswerSentence, str] | None:
        """The figure the ask names computed from reported lines (``answer.computed``): XBRL companyfacts when
        the facts source knows the company, else the statement rows of its visible filings; None (noted in
        ``degraded``) when an input is missing, so the passages answer instead, unless the company's income
        statement has no such line at all (``answer.undefined``): then the answer says so."""
        assert q.formula is not None
        inputs = self._inputs(q, q.formula, key, as_of, doc_ids)
        if isinstance(inputs, tuple):
            degraded.extend(inputs)
            return None
        years, lookup = inputs.years, inputs.lookup
        if q.trend is not None:
            result = trend(q.formula, years, inputs.company, key, lookup, q.trend, q.decimals, q.scale)
        else:
            result = compute(q.formula, years, inputs.company, key, lookup, q.decimals, q.scale, q.each_year)
        if result.sentence is None:
            undefined = inputs.undefined(result, key)
            if undefined is not None:
                degraded.extend([*inputs.notes, f"computed: {result.reason}"])
                return undefined
            degraded.extend([*inputs.notes, f"computed: {result.reason}; answered from the passages"])
            return None
        degraded.extend(inputs.notes)
        dates = year_ends(inputs.refs) if inputs.xbrl is None else {}  # statement rows: the years' dates as stated
        return dated(result.sentence, dates), result.reason

    def undefined(self, q: QuestionAnalysis, key: str, as_of: date, doc_ids: Sequence[str],
                  degraded: list[str]) -> tuple[AnswerSentence, str] | None:
        """An ask for the reason behind a figure ("what drove gross margin change", ``QuestionAnalysis.explained``)
        whose company's income statement does not define it: the sentence saying so; None otherwise (the passages
        give the reason, and nothing is noted)."""
        assert q.explained is not None
        inputs = self._inputs(q, q.explained, key, as_of, doc_ids)
        if isinstance(inputs, tuple):
            return None
        result = compute(q.explained, [max(inputs.years)], inputs.company, key, inputs.lookup)
        found = inputs.undefined(result, key) if result.sentence is None else None
        if found is not None:
            degraded.extend([*inputs.notes, f"computed: {result.reason}"])
        return found

    def choice(self, q: QuestionAnalysis, key: str, doc_ids: Sequence[str]) -> tuple[AnswerSentence, str] | None:
        """A choice among the candidates the ask names (``answer.choice``) at its fiscal year (the latest annual
        report's when it names none): one row each in one table of the filings; None when no table holds them. A
        group choice is also read from a table whose column groups are the members (``choose_columns``), in the
        asked quarter's 10-Q or the year's annual report."""
        assert q.choice is not None
        quarters = {p.quarter for p in q.periods if p.kind is PeriodKind.QUARTER and p.quarter}
        if len(quarters) > 1 or any(p.kind not in (PeriodKind.FISCAL_YEAR, PeriodKind.QUARTER) for p in q.periods):
            return None
        refs, statements = self._statements(doc_ids)
        year = max((p.fiscal_year for p in q.periods if p.fiscal_year), default=None) or _latest_annual(refs)
        if year is None:
            return None
        company = next((d.company for d in refs if d.company), key)
        if not quarters:
            found = choose(q.choice, set(q.terms), year, statements, company, key)
            if found is not None or not q.choice.group:
                return found
        if not q.choice.group:
            return None
        # a group whose members are a table's column groups (a bank's segment results), read in the asked period's
        # own report: the quarter's 10-Q, or the year's annual report
        quarter = min(quarters) if quarters else None
        wanted = f"Q{quarter}" if quarter else "FY"
        docs = [d for d in refs if fiscal_year_of(d) == year and fiscal_period_of(d) == wanted]
        period = f"Q{quarter} of fiscal {year}" if quarter else f"fiscal {year}"
        found = choose_columns(q.choice, year, period, [(d.id, statements.document_text(d.id)) for d in docs],
                               company, key)
        if found is None and quarter is not None:  # the members as rows, read at the quarter's column
            found = choose_quarter_rows(q.choice, set(q.terms), year, quarter, [d.id for d in docs], statements,
                                        company, key)
        return found

    def _inputs(self, q: QuestionAnalysis, match: FormulaMatch, key: str, as_of: date,
                doc_ids: Sequence[str]) -> _Inputs | tuple[str, ...]:
        """What computing ``match`` for the ask reads: the company, the fiscal years, the line lookup (XBRL, else
        statement rows) and the notes on where the lines come from; or the degraded lines saying why it cannot be
        computed."""
        name = match.formula.name
        if any(p.kind is not PeriodKind.FISCAL_YEAR for p in q.periods):
            return (f"computed: {name} is computed for fiscal years; the asked period "
                    f"({', '.join(p.label() for p in q.periods)}) is answered from the passages",)
        xbrl: XbrlLines | None = None
        company = key
        notes: list[str] = []
        if self.facts is None:
            notes.append(f"computed: no companyfacts source given; {name} is computed from the statement rows "
                         "of the filings")
        else:
            try:
                cf = self.facts.company_facts(key)
                xbrl, company = XbrlLines(cf, as_of), cf.entity_name or key
            except NotFoundError as exc:
                notes.append(f"computed: {exc}; {name} is computed from the statement rows of the filings")
        refs, statements = self._statements(doc_ids)
        company = company if xbrl is not None else next((d.company for d in refs if d.company), key)
        years = sorted({p.fiscal_year for p in q.periods if p.fiscal_year})
        if not years:
            latest = xbrl.calendar.latest_year() if xbrl is not None else _latest_annual(refs)
            if latest is None:
                return (*notes, f"computed: no annual report of {key} names a fiscal year to compute {name} for")
            years = [latest]
        if q.trend is not None and len(years) == 1:  # "an improving margin as of FY2022": against the year before
            years = [years[0] - 1, years[0]]
        if q.years_before and len(years) == 1:  # "are its margins consistent?": the years before it as well
            years = list(range(years[0] - q.years_before, years[0] + 1))
        return _Inputs(match, company, years, refs, statements, xbrl, tuple(notes))

    def _statements(self, doc_ids: Sequence[str]) -> tuple[list[Document], StatementLines]:
        refs = [self.docstore.get_document(d) for d in doc_ids]
        return refs, StatementLines({d.id: (fiscal_year_of(d), d.form) for d in refs},
                                    self.docstore.get_document_text)

    def reported_line(self, q: QuestionAnalysis, key: str, doc_ids: Sequence[str]) -> tuple[AnswerSentence, str] | None:
        """A reported-metric ask with no XBRL figure: the line as the company's statements print it for the asked
        fiscal year (``lines.StatementLines``), or None (the passages answer)."""
        assert q.metric is not None
        if len(q.periods) > 1 or any(p.kind is not PeriodKind.FISCAL_YEAR for p in q.periods):
            return None
        refs, statements = self._statements(doc_ids)
        year = q.periods[0].fiscal_year if q.periods else _latest_annual(refs)
        found = statements.value(q.metric.metric, year, year) if year else None
        if found is None:
            return None
        return with_line_date(line_sentence(found, key, q.scale, q.outflow), year, year_ends(refs)), (
            f"statement line {q.metric.metric.name} of fiscal {year} "
            f"({found.figure.provenance.get('rows_agreeing')} rows agree)")


def _latest_annual(refs: Sequence[Document]) -> int | None:
    return max((fy for d in refs if (fy := fiscal_year_of(d)) and d.form.upper().startswith("10-K")), default=None)


def fiscal_period_of(doc: Document) -> str | None:
    """The fiscal period the document's source declared (``meta["fiscal_period"]``: "FY", "Q2"; a local file's
    ``fiscal_quarter`` "2" is "Q2"); an annual report is its year's ("FY") when the source names none."""
    meta = doc.meta_dict()
    if meta.get("fiscal_period"):
        return meta["fiscal_period"]
    if meta.get("fiscal_quarter", "").isdigit():
        return f"Q{meta['fiscal_quarter']}"
    return "FY" if doc.form.upper().startswith("10-K") else None


def fiscal_year_of(doc: Document) -> int | None:
    """The fiscal year the document's source declared (``meta["fiscal_year"]``), or None."""
    fy = doc.meta_dict().get("fiscal_year", "")
    return int(fy) if fy.isdigit() else None
