"""Statement lines for computed figures and reported-line answers: a concept-map line at a fiscal year, from XBRL
companyfacts (``XbrlLines``) or from the statement rows of the company's filings (``StatementLines``).

``XbrlLines``: the line's concepts as filed by the as-of date, picked by the fiscal year's dates
(``xbrl_answer.pick_value``), never by the ``fy`` tag.

``StatementLines``: every Markdown table row whose label is the line's name (``label_names``: one of its phrases,
after the qualifiers a statement puts before a line, "Total net sales", "Net income (loss)", "Net income
attributable to ..."), in the column whose header names the year, or, for a PDF table that a prose line split from
its header, the column of the year line above it when the counts agree (``year_column``), times the table's unit
line. The fiscal year's own annual report is read first, then later reports (they print it as a prior year). Among
the rows of the first filing that has the line, those under their own year header come first, then the value stated
most often wins: the consolidated line recurs in the statements, the selected financial data and the notes; a
segment's line does not. A line that is never negative is never read from a negative row (a deferred-tax
"Depreciation and amortization (43,204)"); a table with no unit line takes the unit the filing's tables state most
often, so the lines of one filing are never mixed at two scales.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date

from equimind.analytics.xbrl import known_facts
from equimind.answer.fiscal import FiscalCalendar
from equimind.answer.record import AnswerFigure, AnswerSentence, Method, Quote, StatedValue
from equimind.answer.units import Unit, cells, document_rows, unit_quotes
from equimind.answer.values import in_asked_scale, scale_word, table_scale
from equimind.answer.xbrl_answer import pick_value
from equimind.core.documents import sha256_hex
from equimind.lexicon.concepts import LINE_QUALIFIERS, USD, MetricSpec
from equimind.query.periods import Period, PeriodKind
from equimind.sources.base import CompanyFacts

# lines that are never negative: a negative row of that name is another table's (a deferred tax item "Depreciation
# and amortization (43,204)"), not the line
NONNEGATIVE = frozenset(["revenue", "cost_of_revenue", "total_assets", "current_assets", "current_liabilities",
                         "inventories", "accounts_payable", "accounts_receivable", "ppe_net",
                         "depreciation_amortization"])
# lines a cash-flow statement labels with what is depreciated ("Depreciation and amortization of property and
# equipment ..."): the label starts with the phrase
PREFIX_LINES = frozenset(["depreciation_amortization"])

@dataclass(frozen=True)
class LineValue:
    value: float
    figure: AnswerFigure
    quotes: tuple[Quote, ...] = ()
    source: str = ""  # "xbrl" / "statement"
    row: Unit | None = None  # the statement row it was read from (statement lines)


class XbrlLines:
    """Lines from companyfacts as filed by the as-of date, by fiscal year (the period's dates, never ``fy``)."""

    def __init__(self, cf: CompanyFacts, as_of: date) -> None:
        self.cf = cf
        self.as_of = as_of
        self.calendar = FiscalCalendar(cf, as_of)

    def value(self, metric: MetricSpec, year: int) -> LineValue | None:

        window = self.calendar.window(Period(PeriodKind.FISCAL_YEAR, f"fiscal {year}", fiscal_year=year),
                                      metric.flow)
        if window is None or window.end > self.as_of:
            return None
        for concept in metric.concepts:
            facts = known_facts(self.cf, concept, metric.unit, self.as_of)
            pv = pick_value(facts, window) if facts else None
            if pv is None:
                continue
            last = pv.latest
            prov = {"concept": concept, "fiscal_period": window.label, "form": last.form,
                    "filed": str(last.filed), "accession": last.accession, "formula": pv.derivation}
            fig = AnswerFigure(name=metric.name, value=pv.value, unit=metric.unit, period_start=pv.start,
                               period_end=pv.end, provenance=prov)
            return LineValue(pv.value, fig, (), "xbrl")
        return None


_PAREN = re.compile(r"\([^)]*\)")
_NUMBER = re.compile(r"^\(?-?\$?\s*\(?\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*\)?$")


def label_words(label: str) -> list[str]:
    return re.findall(r"[a-z0-9&']+", _PAREN.sub(" ", label.lower().replace("\u2019", "'")))


# Words that open a clause narrowing a statement line to what it is net of or excludes: the line is still the named
# one ("Total revenues net of interest expense" is a bank's revenue line). "Including" widens a line (net income
# including noncontrolling interests is not the shareholders' net income) and is not one of them.
NARROWING = (("excluding",), ("net", "of"))


def _narrowed(words: list[str]) -> list[str]:
    """The label's words up to a narrowing clause (``NARROWING``), when a word or more comes before it and the
    clause adjusts nothing further ("... net of interest expense after provisions for credit losses" is another
    line)."""
    for i in range(1, len(words)):
        if any(tuple(words[i:i + len(w)]) == w for w in NARROWING):
            return words if "after" in words[i:] else words[:i]
    return words


def label_names(metric: MetricSpec, label: str) -> bool:
    """A row's label is the line: a phrase of the metric, after statement qualifiers ("Total", "Net"), alone or
    followed by "attributable to ..." ("Net income attributable to Block, Inc."); parentheses aside ("Net income
    (loss)"); a line of ``PREFIX_LINES`` may go on after the phrase; a clause that narrows the line ("excluding
    ...", "net of ...") is set aside ("Total revenues net of interest expense", "Purchases of property and equipment
    excluding finance leases, net of sales")."""
    words = _narrowed(label_words(label))
    if "attributable" in words:
        words = words[:words.index("attributable")]
    for phrase in (label_words(p) for p in metric.phrases):
        n = len(phrase)
        if not n or len(words) < n:
            continue
        if words[-n:] == phrase and set(words[:-n]) <= LINE_QUALIFIERS:
            return True
        if metric.key in PREFIX_LINES and words[:n] == phrase:
            return True
    return False


_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
YEARS_LOOKBACK = 1500  # characters above a table searched for its column years when its header row has none
_SENTENCE_LIKE = re.compile(r"[.;]\s|[a-z]{3,}\s+[a-z]{3,}\s+[a-z]{3,}\s+[a-z]{3,}")


def years_above(text: str, top: int) -> list[int]:
    """The years of the nearest line above ``top`` (a table's first row) that names two or more distinct years
    and reads as column heads, not as a sentence: "Fiscal Year 2017 (1) 2016 (2) 2015 (3)", or the header row of
    the table a prose line split this one from ("| | 2015 | 2014 | 2013 |" above "Adjustments to reconcile net
    income ..."): a PDF statement whose column heads were not read into its own header row."""
    for line in reversed(text[max(0, top - YEARS_LOOKBACK):top].splitlines()):
        years = [int(y) for y in _YEAR.findall(line)]
        if len(years) >= 2 and len(set(years)) == len(years) and not _SENTENCE_LIKE.search(line):
            return years
    return []


def year_column(text: str, u: Unit, year: int) -> tuple[int, bool] | None:
    """(the row's cell index of ``year``'s column, whether the table's own header row names it): the header cell
    naming the year, else the years of the line above the table when they are as many as the row's value cells."""
    body = cells(u.span.text)
    if u.header is not None:
        head = cells(u.header.text)
        if len(head) == len(body):
            cols = [i for i, h in enumerate(head) if i > 0 and re.search(rf"\b{year}\b", h)]
            if cols:
                return (cols[0], True) if len(cols) == 1 else None
        top = u.header.start
    else:
        top = u.span.start
    years = years_above(text, top)
    if year in years and len(years) == len(body) - 1:
        return 1 + years.index(year), False
    return None


def cell_number(cell: str) -> float | None:
    """A statement cell's number: "$ (1,577)" -> -1577; None for a percent, a dash or words."""
    raw = cell.strip()
    if not raw or "%" in raw:
        return None
    m = _NUMBER.match(raw.replace(" ", "") if raw.count("(") <= 1 else raw)
    if m is None:
        return None
    value = float(m.group(1).replace(",", ""))
    return -value if "(" in raw or raw.lstrip("$ ").startswith("-") else value


# Lines a statement may print in parts and no total (Regulation S-X 5-03: the cost of tangible goods sold and the
# cost of services stated apart, as Boeing's "Cost of products" and "Cost of services"): the line's key -> the first
# words of a part's label. A part is a row of the income statement (the table holding the revenue and the net
# income or loss lines) whose label opens with them.
PART_LINES = {"cost_of_revenue": (("cost", "of"), ("costs", "of"))}


_BOTTOM = frozenset({"income", "earnings", "loss", "profit"})
_HUNDRED = re.compile(r"^\s*100(?:\.0+)?\s*%\s*$")


def bottom_line(label: str) -> bool:
    """The row is the income statement's last line: "Net income", "Net loss", "Net earnings (loss)", "Net income
    attributable to ..." (not "Net interest income")."""
    words = label_words(label)
    return (len(words) >= 2 and words[0] == "net" and words[1] in _BOTTOM
            and (len(words) == 2 or words[2] in _BOTTOM | {"attributable"}))


# Lines that are a company total: when its filing prints the label as often with two values (a segment's "Total
# assets" table and the balance sheet), the larger is the company's.
TOTAL_LINES = frozenset(["total_assets", "total_liabilities", "current_assets", "current_liabilities", "revenue"])


@dataclass
class StatementLines:
    """Lines from the statement rows of the company's filings (module docstring); ``docs``: doc id -> (fiscal year,
    form), searched the asked year's annual report first; ``text``: a document's canonical text, read only for the
    filings a line is looked up in."""

    docs: Mapping[str, tuple[int | None, str]]
    text: Callable[[str], str]
    _read: dict[str, tuple[str, str, list[Unit], float]] = field(default_factory=dict)  # text, sha, rows, unit
    _tables: dict[str, dict[int, list[Unit]]] = field(default_factory=dict)  # doc -> header start -> its rows

    def _doc(self, doc_id: str) -> tuple[str, str, list[Unit], float]:
        if doc_id not in self._read:
            text = self.text(doc_id)
            rows = document_rows(text, doc_id, 0)
            stated = Counter(x for x in (table_scale(u.scale_context) for u in rows) if x != 1.0)
            self._read[doc_id] = (text, sha256_hex(text), rows, stated.most_common(1)[0][0] if stated else 1.0)
        return self._read[doc_id]

    def _scale(self, u: Unit) -> float:
        """The row's table unit; a table with no unit line of its own takes the unit the filing's tables state most
        often (a statement page whose "(in thousands)" line was not read with it), so lines of one filing are
        never mixed at two scales."""
        own = table_scale(u.scale_context)
        return own if own != 1.0 else self._doc(u.doc_id)[3]

    def scale_of(self, u: Unit) -> float:
        """The unit a row's numbers are in (``_scale``)."""
        return self._scale(u)

    def order(self, year: int) -> list[str]:
        """The asked year's annual report, then later reports (they print it as a prior year), then the rest."""
        def key(d: str) -> tuple[int, int, int]:
            fy, form = self.docs[d]
            annual = 0 if form.upper().startswith("10-K") else 1
            if fy == year:
                return (0, annual, 0)
            if fy is not None and fy > year:
                return (1, annual, fy)
            return (2, annual, -(fy or 0))
        return sorted(self.docs, key=key)

    def value(self, metric: MetricSpec, year: int, t: int) -> LineValue | None:
        for doc_id in self.order(t):
            headed: list[tuple[float, Unit, int]] = []
            above: list[tuple[float, Unit, int]] = []
            text, _, rows, _ = self._doc(doc_id)
            for u in rows:
                body = cells(u.span.text)
                if not body or not label_names(metric, body[0]):
                    continue
                where = year_column(text, u, year)
                n = cell_number(body[where[0]]) if where is not None else None
                if n is None or where is None or (n < 0 and metric.key in NONNEGATIVE):
                    continue
                if metric.unit == USD and self._percent_table(u, where[0]):
                    continue  # "Cost of revenue | 25.0" under "Revenue | 100.0%": a share of revenue, not dollars
                (headed if where[1] else above).append((n * self._scale(u), u, where[0]))
            # rows under a header naming the year first: a year line read from above a split table may belong to
            # another statement (a cash-flow statement's "Accounts payable" change under its years)
            found = headed or above
            if found:
                counts = Counter(round(v, 2) for v, _, _ in found)
                best = max(counts.values())
                tied = [x for x in found if counts[round(x[0], 2)] == best]
                # on a tie, a row of the income statement (its table ends in the net income or loss line) before a
                # note's (stock-based compensation "Cost of revenue | $178")
                stated = [x for x in tied if self._in_statement(x[1])] or tied
                # a company total is never smaller than a segment's total printed under the same label
                value, u, col = max(stated, key=lambda x: abs(x[0])) if metric.key in TOTAL_LINES else stated[0]
                return self._line(metric, year, value, u, col, best, len(found))
        return self._parts(metric, year, t) if metric.key in PART_LINES else None

    def _percent_table(self, u: Unit, col: int) -> bool:
        """The row's table states its column as shares of a base: a cell of that column reads 100% ("Revenue |
        100.0%": a table of items as a percentage of revenue, whose other cells print no % sign)."""
        return any(len(c := cells(r.span.text)) > col and _HUNDRED.match(c[col]) for r in self.table_of(u))

    def _in_statement(self, u: Unit) -> bool:
        return any(bottom_line(cells(r.span.text)[0]) for r in self.table_of(u))

    def _parts(self, metric: MetricSpec, year: int, t: int) -> LineValue | None:
        """A line the income statement prints only in parts (``PART_LINES``): the sum of its parts at ``year``,
        each part cited, from the first filing (in ``order``) whose income statement has two or more."""
        starts = PART_LINES[metric.key]
        for doc_id in self.order(t):
            for table in self.tables(doc_id):
                if not self._in_statement(table[0]):
                    continue
                parts: list[tuple[float, Unit, int]] = []
                for u in table:
                    words = label_words(cells(u.span.text)[0])
                    got = self.at(u, year) if any(tuple(words[:2]) == s for s in starts) else None
                    if got is not None:
                        parts.append((abs(got[0]), u, got[1]))
                if len(parts) >= 2:
                    return self._sum(metric, year, parts)
        return None

    def _sum(self, metric: MetricSpec, year: int, parts: list[tuple[float, Unit, int]]) -> LineValue:
        value = sum(v for v, _, _ in parts)
        lines = [self._line(metric, year, v, u, col, 1, 1) for v, u, col in parts]
        prov = {"source": "statement rows (the line printed in parts)", "doc_id": parts[0][1].doc_id,
                "row": " + ".join(str(lv.figure.provenance["row"]) for lv in lines), "fiscal_year": year,
                "parts": [{"row": lv.figure.provenance["row"], "cell": lv.figure.provenance["cell"], "value": lv.value}
                          for lv in lines]}
        fig = AnswerFigure(name=metric.name, value=value, unit=metric.unit, provenance=prov)
        quotes = tuple(dict.fromkeys(q for lv in lines for q in lv.quotes))
        return LineValue(value, fig, quotes, "statement")

    def _line(self, metric: MetricSpec, year: int, value: float, u: Unit, col: int, agree: int,
              rows: int) -> LineValue:
        quotes = self.quotes_of(u)
        head_cells = cells(u.header.text) if u.header is not None else []
        head = head_cells[col] if col < len(head_cells) and str(year) in head_cells[col] else str(year)
        prov = {"source": "statement row", "doc_id": u.doc_id, "row": cells(u.span.text)[0], "column": head,
                "cell": cells(u.span.text)[col], "scale": self._scale(u), "fiscal_year": year,
                "rows_agreeing": f"{agree} of {rows}"}
        fig = AnswerFigure(name=metric.name, value=value, unit=metric.unit, provenance=prov)
        return LineValue(value, fig, tuple(quotes), "statement", u)

    def _by_header(self, doc_id: str) -> dict[int, list[Unit]]:
        """The filing's tables by their header row's start, each its rows in order (grouped once per filing)."""
        if doc_id not in self._tables:
            out: dict[int, list[Unit]] = {}
            for u in self._doc(doc_id)[2]:
                if u.header is not None:
                    out.setdefault(u.header.start, []).append(u)
            self._tables[doc_id] = out
        return self._tables[doc_id]

    def tables(self, doc_id: str) -> list[list[Unit]]:
        """Every table of the filing: its rows under one header, in order."""
        return list(self._by_header(doc_id).values())

    def at(self, u: Unit, year: int) -> tuple[float, int] | None:
        """The row's value in ``year``'s column, times the table's unit, and that column; None when it has none."""
        where = year_column(self._doc(u.doc_id)[0], u, year)
        n = cell_number(cells(u.span.text)[where[0]]) if where is not None else None
        return None if n is None or where is None else (n * self._scale(u), where[0])

    def table_of(self, row: Unit) -> list[Unit]:
        """Every row of the table ``row`` belongs to (the rows under the same header), in order."""
        if row.header is None:
            return [row]
        return self._by_header(row.doc_id)[row.header.start]

    def quotes_of(self, row: Unit) -> list[Quote]:
        """The quotes citing one statement row: the row, its header and its unit line."""
        return unit_quotes(row, self._doc(row.doc_id)[1])



def line_sentence(lv: LineValue, ticker: str, asked_scale: float | None, outflow: bool = False) -> AnswerSentence:
    """A statement line read for a reported-metric ask (``Answerer``: no XBRL for the company): "Net income:
    $11,588 million (printed: 11,588, in millions) (2019)."; the row, header and unit quotes cite it. ``outflow``: the
    ask is for the size of an outflow (``QuestionAnalysis.outflow``), stated positive; the print stays as quoted."""
    prov = lv.figure.provenance
    scale = float(prov.get("scale") or 1.0)
    word = scale_word(scale)
    number = abs(lv.value) if outflow else lv.value
    if not word:  # the filing states no unit for the table: the number as printed, never a guessed scale
        shown = str(prov.get("cell")).strip("()") if outflow else str(prov.get("cell"))
        printed = "the table states no unit"
    else:
        shown = in_asked_scale(number, asked_scale or 1e6)
        printed = f"printed: {prov.get('cell')}, in {word}s"
    if outflow and lv.value < 0:
        printed += "; an outflow, printed negative"
    text = f"{prov.get('row')}: {shown} ({printed}) ({prov.get('column')})."
    stated = StatedValue(text=shown, number=number, unit="USD", period=str(prov.get("column")))
    return AnswerSentence(text=text, method=Method.EXTRACTIVE, subject=ticker, quotes=list(lv.quotes),
                          figures=[lv.figure], values=[stated])
