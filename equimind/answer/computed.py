"""Computed figures: a ratio, margin, growth rate or turnover the question names, computed from the statement lines
it is defined by, with the formula and every input cited.

A question such as "What is Amazon's FY2017 days payable outstanding?" or "what is the FY2015 - FY2017 3 year
average net profit margin?" asks for a number no filing prints. ``FORMULAS`` lists the standard definitions
(named by their usual phrases, matched as whole words, the longest first); each is a function of statement lines of
the concept map (``concepts.METRICS``) at the asked fiscal year ``t`` and the year before (``t-1``: growth rates,
and the averages of opening and closing balances that return and turnover ratios use):

* growth: revenue growth = (revenue[t] - revenue[t-1]) / revenue[t-1];
* margins (share of revenue[t]): gross (revenue - cost of revenue, or gross profit), operating (operating income),
  net (net income), EBITDA (operating income + depreciation and amortization), capex (capital expenditures);
* returns and turnover over the average of the balance at t-1 and t: return on assets (net income / total assets),
  return on equity (net income / stockholders' equity), asset turnover (revenue / total assets), fixed asset
  turnover (revenue / net PP&E), inventory turnover (cost of revenue / inventories);
* days: days payable outstanding = 365 x average accounts payable / (cost of revenue[t] + inventories[t] -
  inventories[t-1]); days inventory outstanding = 365 x average inventories / cost of revenue; days sales
  outstanding = 365 x average accounts receivable / revenue;
* balance-sheet ratios at t: current ratio ("working capital ratio") = current assets / current liabilities;
  working capital = current assets - current liabilities; debt to equity = total debt / stockholders' equity;
* effective tax rate = income tax expense / income before income taxes; dividend payout ratio = dividends paid /
  net income; free cash flow = operating cash flow - capital expenditures; EBITDA = operating income + D&A.

"N year average X" / "average X" over a span of fiscal years ("FY2015 - FY2017") is the mean of X over each year
of the span. A question that defines the metric its own way is answered with these definitions, which the answer
states, so the reader can see which was used.

Each line comes from XBRL companyfacts as filed by the as-of date when a facts source knows the company
(``xbrl_answer.pick_value``: by the period's dates), else from the statement rows of the company's own filings
(``StatementLines``): every Markdown table row whose label is the line's name (one of its phrases, after the
qualifiers a statement puts before a line: "Total net sales", "Net income (loss)", "Net income attributable to
..."), in the column whose header names the year, times the table's unit line. Among the rows of the first filing
that has the line (the fiscal year's own annual report first) the value stated most often wins: the consolidated
line recurs in the statements, the selected financial data and the notes; a segment's line does not. Every input is
cited: the figure with its XBRL provenance, or the row, its header and its unit line as verified quotes. A missing
input is said by name, and the question is then answered from the passages as any other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from equimind.analytics.xbrl import known_facts
from equimind.answer.concepts import METRICS, MetricSpec
from equimind.answer.fiscal import FiscalCalendar
from equimind.answer.periods import Period, PeriodKind
from equimind.answer.record import AnswerFigure, AnswerSentence, Method, Quote, StatedValue
from equimind.answer.units import Unit, cells, document_rows
from equimind.answer.values import table_scale
from equimind.models import sha256_hex
from equimind.sources.base import CompanyFacts

MONEY, PERCENT, TIMES, DAYS = "USD", "%", "x", "days"
Line = tuple[str, int]  # (concept-map metric key, year offset: 0 for t, -1 for t-1)
Values = Mapping[Line, float]


def _avg(v: Values, key: str) -> float:
    return (v[(key, 0)] + v[(key, -1)]) / 2


@dataclass(frozen=True)
class Formula:
    key: str
    name: str
    phrases: tuple[str, ...]
    unit: str  # MONEY, PERCENT, TIMES, DAYS
    text: str  # the definition as the answer states it
    lines: tuple[Line, ...]
    compute: Callable[[Values], float]
    alternatives: tuple[tuple[Line, ...], ...] = ()  # other line sets that define the same figure (gross profit)
    alt_compute: tuple[Callable[[Values], float], ...] = ()
    as_percent: bool = False  # a TIMES figure also stated as a percent (returns: 0.01 = 1.36%)


def _lines(spec: str) -> tuple[Line, ...]:
    """"revenue revenue@t-1" -> (("revenue", 0), ("revenue", -1))."""
    return tuple((x.split("@")[0], -1 if x.endswith("@t-1") else 0) for x in spec.split())


def _f(key: str, name: str, phrases: str, unit: str, text: str, lines: str, compute: Callable[[Values], float],
       **kw: object) -> Formula:
    return Formula(key, name, tuple(p.strip() for p in phrases.split(";")), unit, text, _lines(lines), compute,
                   **kw)  # type: ignore[arg-type]


FORMULAS: tuple[Formula, ...] = (
    _f("revenue_growth", "revenue growth", "revenue growth; revenue growth rate; total revenue growth rate; growth "
       "in revenue; growth rate of revenue; change in revenue; year-over-year change in revenue; year over year "
       "change in revenue; yoy change in revenue; revenue change; sales growth; net sales growth; growth in net "
       "sales", PERCENT, "(revenue[t] - revenue[t-1]) / revenue[t-1]", "revenue revenue@t-1",
       lambda v: (v[("revenue", 0)] - v[("revenue", -1)]) / v[("revenue", -1)] * 100),
    _f("gross_margin", "gross margin", "gross margin; gross profit margin; gross margins", PERCENT,
       "(revenue - cost of revenue) / revenue", "revenue cost_of_revenue",
       lambda v: (v[("revenue", 0)] - v[("cost_of_revenue", 0)]) / v[("revenue", 0)] * 100,
       alternatives=(_lines("gross_profit revenue"),),
       alt_compute=(lambda v: v[("gross_profit", 0)] / v[("revenue", 0)] * 100,)),
    _f("operating_margin", "operating margin", "operating margin; operating profit margin; operating income margin;"
       " operating margins", PERCENT, "operating income / revenue", "operating_income revenue",
       lambda v: v[("operating_income", 0)] / v[("revenue", 0)] * 100),
    _f("net_margin", "net profit margin", "net profit margin; net income margin; net margin; profit margin; net "
       "profit margins", PERCENT, "net income / revenue", "net_income revenue",
       lambda v: v[("net_income", 0)] / v[("revenue", 0)] * 100),
    _f("ebitda_margin", "EBITDA margin", "ebitda margin; unadjusted ebitda margin; ebitda margins; ebitda % margin; "
       "unadjusted ebitda % margin", PERCENT,
       "(operating income + depreciation and amortization) / revenue",
       "operating_income depreciation_amortization revenue",
       lambda v: (v[("operating_income", 0)] + v[("depreciation_amortization", 0)]) / v[("revenue", 0)] * 100),
    _f("ebitda", "EBITDA", "ebitda; unadjusted ebitda", MONEY, "operating income + depreciation and amortization",
       "operating_income depreciation_amortization",
       lambda v: v[("operating_income", 0)] + v[("depreciation_amortization", 0)]),
    _f("capex_to_revenue", "capital expenditures to revenue", "capex to revenue; capex/revenue; capex to revenue "
       "ratio; capital expenditure to revenue; capital expenditures to revenue; capex as a percentage of revenue",
       PERCENT, "capital expenditures / revenue", "capex revenue",
       lambda v: v[("capex", 0)] / v[("revenue", 0)] * 100),
    _f("return_on_assets", "return on assets", "return on assets; roa; return on average assets", TIMES,
       "net income[t] / average of total assets[t-1] and total assets[t]", "net_income total_assets total_assets@t-1",
       lambda v: v[("net_income", 0)] / _avg(v, "total_assets"), as_percent=True),
    _f("return_on_equity", "return on equity", "return on equity; roe; return on average equity", TIMES,
       "net income[t] / average of stockholders' equity[t-1] and [t]",
       "net_income stockholders_equity stockholders_equity@t-1",
       lambda v: v[("net_income", 0)] / _avg(v, "stockholders_equity"), as_percent=True),
    _f("asset_turnover", "asset turnover", "asset turnover; total asset turnover; asset turnover ratio", TIMES,
       "revenue[t] / average of total assets[t-1] and [t]", "revenue total_assets total_assets@t-1",
       lambda v: v[("revenue", 0)] / _avg(v, "total_assets")),
    _f("fixed_asset_turnover", "fixed asset turnover", "fixed asset turnover; fixed asset turnover ratio; fixed "
       "assets turnover", TIMES, "revenue[t] / average of net PP&E[t-1] and [t]", "revenue ppe_net ppe_net@t-1",
       lambda v: v[("revenue", 0)] / _avg(v, "ppe_net")),
    _f("inventory_turnover", "inventory turnover", "inventory turnover; inventory turnover ratio", TIMES,
       "cost of revenue[t] / average of inventories[t-1] and [t]",
       "cost_of_revenue inventories inventories@t-1",
       lambda v: v[("cost_of_revenue", 0)] / _avg(v, "inventories")),
    _f("dpo", "days payable outstanding", "days payable outstanding; dpo", DAYS,
       "365 x average accounts payable / (cost of revenue[t] + inventories[t] - inventories[t-1])",
       "accounts_payable accounts_payable@t-1 cost_of_revenue inventories inventories@t-1",
       lambda v: 365 * _avg(v, "accounts_payable") / (v[("cost_of_revenue", 0)] + v[("inventories", 0)]
                                                      - v[("inventories", -1)])),
    _f("dio", "days inventory outstanding", "days inventory outstanding; dio; days of inventory; days in inventory",
       DAYS, "365 x average inventories / cost of revenue[t]", "inventories inventories@t-1 cost_of_revenue",
       lambda v: 365 * _avg(v, "inventories") / v[("cost_of_revenue", 0)]),
    _f("dso", "days sales outstanding", "days sales outstanding; dso", DAYS,
       "365 x average accounts receivable / revenue[t]",
       "accounts_receivable accounts_receivable@t-1 revenue",
       lambda v: 365 * _avg(v, "accounts_receivable") / v[("revenue", 0)]),
    _f("current_ratio", "current ratio", "current ratio; working capital ratio", TIMES,
       "current assets / current liabilities", "current_assets current_liabilities",
       lambda v: v[("current_assets", 0)] / v[("current_liabilities", 0)]),
    _f("working_capital", "working capital", "working capital; net working capital", MONEY,
       "current assets - current liabilities", "current_assets current_liabilities",
       lambda v: v[("current_assets", 0)] - v[("current_liabilities", 0)]),
    _f("debt_to_equity", "debt to equity", "debt to equity; debt-to-equity; debt to equity ratio; debt/equity",
       TIMES, "total debt / stockholders' equity", "total_debt stockholders_equity",
       lambda v: v[("total_debt", 0)] / v[("stockholders_equity", 0)]),
    _f("effective_tax_rate", "effective tax rate", "effective tax rate; effective income tax rate", PERCENT,
       "income tax expense / income before income taxes", "income_tax pretax_income",
       lambda v: v[("income_tax", 0)] / v[("pretax_income", 0)] * 100),
    _f("payout_ratio", "dividend payout ratio", "dividend payout ratio; payout ratio", PERCENT,
       "dividends paid / net income", "dividends net_income",
       lambda v: v[("dividends", 0)] / v[("net_income", 0)] * 100),
    _f("free_cash_flow", "free cash flow", "free cash flow; fcf", MONEY,
       "operating cash flow - capital expenditures", "operating_cash_flow capex",
       lambda v: v[("operating_cash_flow", 0)] - v[("capex", 0)]),
)
OUTFLOWS = frozenset(["capex", "dividends", "buybacks"])  # printed as negatives in a cash-flow statement
# lines that are never negative: a negative row of that name is another table's (a deferred tax item "Depreciation
# and amortization (43,204)"), not the line
NONNEGATIVE = frozenset(["revenue", "cost_of_revenue", "total_assets", "current_assets", "current_liabilities",
                         "inventories", "accounts_payable", "accounts_receivable", "ppe_net",
                         "depreciation_amortization"])
# lines a cash-flow statement labels with what is depreciated ("Depreciation and amortization of property and
# equipment ..."): the label starts with the phrase
PREFIX_LINES = frozenset(["depreciation_amortization"])
ABSOLUTE = OUTFLOWS | {"depreciation_amortization"}  # used by size: an outflow or an add-back, whatever its sign
_METRICS = {m.key: m for m in METRICS}


@dataclass(frozen=True)
class FormulaMatch:
    formula: Formula
    phrase: str
    average_years: bool  # "3 year average X", "average X": the mean of X over the span of years named


def _pattern(phrase: str) -> re.Pattern[str]:
    body = r"[\s-]+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![\w&/]){body}(?![\w&/])")


_PATTERNS = tuple(sorted(((_pattern(p), p, f) for f in FORMULAS for p in f.phrases), key=lambda x: -len(x[1])))
AVERAGE_BEFORE = re.compile(r"\baverage\s+(?:\w+\s+){0,2}$")
N_YEAR_AVERAGE = re.compile(r"\b(?:\d+|two|three|four|five)[\s-]years?\s+average\b")


def find_formula(text: str) -> FormulaMatch | None:
    """The first computed figure ``text`` names (longest phrase first), or None."""
    low = text.lower().replace("\u2019", "'")
    best: tuple[int, FormulaMatch] | None = None
    for pat, phrase, f in _PATTERNS:
        m = pat.search(low)
        if m is None:
            continue
        if best is not None and best[0] <= m.start():
            continue
        avg = bool(AVERAGE_BEFORE.search(low[:m.start()])) or bool(N_YEAR_AVERAGE.search(low))
        best = (m.start(), FormulaMatch(f, phrase, avg))
    return best[1] if best else None


DECIMALS = re.compile(r"\bround(?:ed)?\s+(?:\w+\s+){0,3}?to\s+(?:the\s+nearest\s+)?(zero|one|two|three|0|1|2|3)\s+"
                      r"decimal", re.I)
_WORD_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3}


def asked_decimals(question: str) -> int | None:
    m = DECIMALS.search(question)
    if m is None:
        return None
    raw = m.group(1).lower()
    return int(raw) if raw.isdigit() else _WORD_DIGITS[raw]


# --- line values ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LineValue:
    value: float
    figure: AnswerFigure
    quotes: tuple[Quote, ...] = ()
    source: str = ""  # "xbrl" / "statement"


class XbrlLines:
    """Lines from companyfacts as filed by the as-of date, by fiscal year (the period's dates, never ``fy``)."""

    def __init__(self, cf: CompanyFacts, as_of: date) -> None:
        self.cf = cf
        self.as_of = as_of
        self.calendar = FiscalCalendar(cf, as_of)

    def value(self, metric: MetricSpec, year: int) -> LineValue | None:
        from equimind.answer.xbrl_answer import pick_value

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


LINE_QUALIFIERS = frozenset(["total", "net", "consolidated", "merchandise"])
_PAREN = re.compile(r"\([^)]*\)")
_NUMBER = re.compile(r"^\(?-?\$?\s*\(?\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*\)?$")


def _label_words(label: str) -> list[str]:
    return re.findall(r"[a-z0-9&']+", _PAREN.sub(" ", label.lower().replace("\u2019", "'")))


def label_names(metric: MetricSpec, label: str) -> bool:
    """A row's label is the line: a phrase of the metric, after statement qualifiers ("Total", "Net"), alone or
    followed by "attributable to ..." ("Net income attributable to Block, Inc."); parentheses aside ("Net income
    (loss)"); a line of ``PREFIX_LINES`` may go on after the phrase."""
    words = _label_words(label)
    if "attributable" in words:
        words = words[:words.index("attributable")]
    for phrase in (_label_words(p) for p in metric.phrases):
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


@dataclass
class StatementLines:
    """Lines from the statement rows of the company's filings (module docstring); ``docs``: doc id -> (text, fiscal
    year, form), searched the asked year's annual report first."""

    docs: Mapping[str, tuple[str, int | None, str]]
    _rows: dict[str, list[Unit]] = field(default_factory=dict)

    _scales: dict[str, float] = field(default_factory=dict)

    def _doc_rows(self, doc_id: str) -> list[Unit]:
        if doc_id not in self._rows:
            rows = document_rows(self.docs[doc_id][0], doc_id, 0)
            self._rows[doc_id] = rows
            stated = Counter(x for x in (table_scale(u.scale_context) for u in rows) if x != 1.0)
            self._scales[doc_id] = stated.most_common(1)[0][0] if stated else 1.0
        return self._rows[doc_id]

    def _scale(self, u: Unit) -> float:
        """The row's table unit; a table with no unit line of its own takes the unit the filing's tables state most
        often (a statement page whose "(in thousands)" line was not read with it), so lines of one filing are
        never mixed at two scales."""
        own = table_scale(u.scale_context)
        return own if own != 1.0 else self._scales.get(u.doc_id, 1.0)

    def order(self, year: int) -> list[str]:
        """The asked year's annual report, then later reports (they print it as a prior year), then the rest."""
        def key(d: str) -> tuple[int, int, int]:
            _, fy, form = self.docs[d]
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
            text = self.docs[doc_id][0]
            for u in self._doc_rows(doc_id):
                body = cells(u.span.text)
                if not body or not label_names(metric, body[0]):
                    continue
                where = year_column(text, u, year)
                n = cell_number(body[where[0]]) if where is not None else None
                if n is None or where is None or (n < 0 and metric.key in NONNEGATIVE):
                    continue
                (headed if where[1] else above).append((n * self._scale(u), u, where[0]))
            # rows under a header naming the year first: a year line read from above a split table may belong to
            # another statement (a cash-flow statement's "Accounts payable" change under its years)
            found = headed or above
            if found:
                counts = Counter(round(v, 2) for v, _, _ in found)
                best = max(counts.values())
                value, u, col = next(x for x in found if counts[round(x[0], 2)] == best)
                return self._line(metric, year, value, u, col, best, len(found))
        return None

    def _line(self, metric: MetricSpec, year: int, value: float, u: Unit, col: int, agree: int,
              rows: int) -> LineValue:
        text = self.docs[u.doc_id][0]
        sha = sha256_hex(text)
        quotes = [Quote(doc_id=u.doc_id, start=u.span.start, end=u.span.end, text=u.span.text, doc_sha256=sha,
                        role="row")]
        if u.header is not None:
            quotes.append(Quote(doc_id=u.doc_id, start=u.header.start, end=u.header.end, text=u.header.text,
                                doc_sha256=sha, role="header"))
        unit = u.scale if u.scale is not None else u.caption
        if unit is not None and table_scale(unit.text) != 1.0:
            quotes.append(Quote(doc_id=u.doc_id, start=unit.start, end=unit.end, text=unit.text, doc_sha256=sha,
                                role="unit"))
        head_cells = cells(u.header.text) if u.header is not None else []
        head = head_cells[col] if col < len(head_cells) and str(year) in head_cells[col] else str(year)
        prov = {"source": "statement row", "doc_id": u.doc_id, "row": cells(u.span.text)[0], "column": head,
                "cell": cells(u.span.text)[col], "scale": self._scale(u), "fiscal_year": year,
                "rows_agreeing": f"{agree} of {rows}"}
        fig = AnswerFigure(name=metric.name, value=value, unit=metric.unit, provenance=prov)
        return LineValue(value, fig, tuple(quotes), "statement")


# --- the computation -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Computed:
    sentence: AnswerSentence | None
    reason: str  # where the inputs came from, or which input is missing


LineLookup = Callable[[MetricSpec, int, int], LineValue | None]


def _year_values(f: Formula, lines: tuple[Line, ...], year: int, lookup: LineLookup, t: int,
                 got: dict[tuple[str, int], LineValue]) -> tuple[dict[Line, float] | None, str]:
    out: dict[Line, float] = {}
    for key, off in lines:
        y = year + off
        if (key, y) not in got:
            lv = lookup(_METRICS[key], y, t)
            if lv is None:
                return None, f"{_METRICS[key].name.lower()} for fiscal {y}"
            got[(key, y)] = lv
        v = got[(key, y)].value
        out[(key, off)] = abs(v) if key in ABSOLUTE else v
    return out, ""


def format_figure(value: float, f: Formula, decimals: int | None, asked_scale: float | None) -> str:
    if f.unit == PERCENT:
        return f"{value:,.{2 if decimals is None else decimals}f}%"
    if f.unit == DAYS:
        return f"{value:,.{2 if decimals is None else decimals}f} days"
    if f.unit == TIMES:
        text = f"{value:,.{2 if decimals is None else decimals}f}"
        return f"{text} ({value * 100:.2f}%)" if f.as_percent else text
    scale = asked_scale or 1e6
    v = value / scale
    word = {1e3: "thousand", 1e6: "million", 1e9: "billion"}.get(scale, "")
    digits = decimals if decimals is not None else (0 if abs(v) >= 100 else 2)
    return f"{'-' if v < 0 else ''}${abs(v):,.{digits}f} {word}"


def _amount(value: float) -> str:
    """An input line as the answer states it: millions from a million up, else the number as read."""
    sign = "-" if value < 0 else ""
    v = abs(value)
    return f"{sign}${v / 1e6:,.0f} million" if v >= 1e6 else f"{sign}{v:,.0f}"


def compute(match: FormulaMatch, years: Sequence[int], company: str, ticker: str, lookup: LineLookup,
            decimals: int | None = None, asked_scale: float | None = None, each_year: bool = False) -> Computed:
    """The figure ``match`` names for the last of ``years`` (or their mean, for an average over the span; or, with
    ``each_year``, for every year named and the change between the first and the last), from ``lookup``'s lines;
    ``Computed.sentence`` None with the missing input named when a line is not found."""
    f = match.formula
    t = max(years)
    if each_year and len(set(years)) > 1 and not match.average_years:
        return _each_year(match, sorted(set(years)), company, ticker, lookup, decimals, asked_scale)
    span = list(range(min(years), t + 1)) if match.average_years and len(years) > 1 else [t]
    got: dict[tuple[str, int], LineValue] = {}
    per_year: list[float] = []
    for y in span:
        values, missing = None, ""
        for lines, fn in ((f.lines, f.compute), *zip(f.alternatives, f.alt_compute, strict=True)):
            values, gap = _year_values(f, lines, y, lookup, t, got)
            missing = missing or gap  # the definition's own line is named first (gross profit is the fallback)
            if values is not None:
                try:
                    per_year.append(fn(values))
                except ZeroDivisionError:
                    return Computed(None, f"{f.name}: a zero denominator in fiscal {y}")
                break
        if values is None:
            return Computed(None, f"{f.name}: no {missing} found")
    value = sum(per_year) / len(per_year)
    shown = format_figure(value, f, decimals, asked_scale)
    period = f"fiscal {span[0]}-{span[-1]} average" if len(span) > 1 else f"fiscal {t}"
    inputs = "; ".join(f"{lv.figure.name.lower()} fiscal {y} {_amount(lv.value)}" for (_, y), lv in sorted(
        got.items(), key=lambda kv: (kv[0][1], kv[0][0])))
    each = f" (per year: {', '.join(format_figure(v, f, decimals, asked_scale) for v in per_year)})" \
        if len(per_year) > 1 else ""
    text = (f"{company}'s {f.name} for {period} was {shown}{each}, computed as {f.text} from its reported lines "
            f"({inputs}).")
    sources = sorted({lv.source for lv in got.values()})
    fig = AnswerFigure(name=f.name, value=value, unit=f.unit, provenance={
        "formula": f.text, "computed": True, "period": period, "inputs_from": sources,
        "inputs": [{"line": lv.figure.name, "fiscal_year": y, "value": lv.value, **lv.figure.provenance}
                   for (_, y), lv in got.items()]})
    quotes = [q for lv in got.values() for q in lv.quotes]
    stated = StatedValue(text=shown, number=value, unit=f.unit, period=period)
    sentence = AnswerSentence(text=text, method=Method.COMPUTED, subject=ticker, quotes=list(dict.fromkeys(quotes)),
                              figures=[fig, *[lv.figure for lv in got.values()]], values=[stated])
    return Computed(sentence, f"computed {f.name} from {' and '.join(sources)} lines")


def _each_year(match: FormulaMatch, years: list[int], company: str, ticker: str, lookup: LineLookup,
               decimals: int | None, asked_scale: float | None) -> Computed:
    """The figure for each named year, then the change from the first to the last (percentage points for a
    percent, the difference otherwise), one sentence citing every input."""
    parts = [compute(match, [y], company, ticker, lookup, decimals, asked_scale) for y in years]
    missing = next((p for p in parts if p.sentence is None), None)
    if missing is not None:
        return missing
    sentences = [p.sentence for p in parts if p.sentence is not None]
    f = match.formula
    first, last = sentences[0].figures[0].value, sentences[-1].figures[0].value
    digits = 2 if decimals is None else decimals
    diff = last - first
    change = f"{diff:+.{digits}f} percentage points" if f.unit == PERCENT else \
        f"{'+' if diff >= 0 else '-'}{format_figure(abs(diff), f, decimals, asked_scale)}"
    stated = ", ".join(f"fiscal {y}: {s.values[0].text}" for y, s in zip(years, sentences, strict=True))
    inputs = "; ".join(f"{fig.name.lower()} fiscal {y} {_amount(fig.value)}" for y, s in zip(years, sentences,
                       strict=True) for fig in s.figures[1:])
    text = (f"{company}'s {f.name} was {stated}; the change from fiscal {years[0]} to fiscal {years[-1]} is "
            f"{change}. Each is computed as {f.text} from its reported lines ({inputs}).")
    quotes = list(dict.fromkeys(q for s in sentences for q in s.quotes))
    figures = [fig for s in sentences for fig in s.figures]
    values = [v for s in sentences for v in s.values]
    return Computed(AnswerSentence(text=text, method=Method.COMPUTED, subject=ticker, quotes=quotes,
                                   figures=figures, values=values), parts[-1].reason)


CHANGE_ASK = re.compile(r"\b(?:chang\w*|compar\w*|versus|vs\.?|differ\w*|improv\w*|deteriorat\w*|"
                        r"declin\w*|increas\w*|decreas\w*|trend\w*)\b", re.I)


def asks_each_year(ask: str, match: FormulaMatch) -> bool:
    """The ask wants the figure for each year it names and the change ("How much has the effective tax rate
    changed between FY2021 and FY2022?"), not one year's figure: a change word, and a formula that is not itself a
    change or an average over years (revenue growth, return on average assets)."""
    return CHANGE_ASK.search(ask) is not None and all(off == 0 for _, off in match.formula.lines)


def line_sentence(lv: LineValue, ticker: str, asked_scale: float | None) -> AnswerSentence:
    """A statement line read for a reported-metric ask (``Answerer``: no XBRL for the company): "Net income:
    $11,588 million (printed: 11,588, in millions) (2019)."; the row, header and unit quotes cite it."""
    prov = lv.figure.provenance
    scale = float(prov.get("scale") or 1.0)
    word = {1e3: "thousands", 1e6: "millions", 1e9: "billions"}.get(scale)
    if word is None:  # the filing states no unit for the table: the number as printed, never a guessed scale
        shown = str(prov.get("cell"))
        printed = "the table states no unit"
    else:
        shown = format_figure(lv.value, _AMOUNT, None, asked_scale or 1e6)
        printed = f"printed: {prov.get('cell')}, in {word}"
    text = f"{prov.get('row')}: {shown} ({printed}) ({prov.get('column')})."
    stated = StatedValue(text=shown, number=lv.value, unit=MONEY, period=str(prov.get("column")))
    return AnswerSentence(text=text, method=Method.EXTRACTIVE, subject=ticker, quotes=list(lv.quotes),
                          figures=[lv.figure], values=[stated])


_AMOUNT = Formula("line", "line", (), MONEY, "", (), lambda v: 0.0)


UP = re.compile(r"\b(?:increas\w*|improv\w*|grow\w*|grew|rise|rising|rose|risen|higher|expand\w*|gain\w*)\b", re.I)
DOWN = re.compile(r"\b(?:decreas\w*|declin\w*|drop\w*|fall|falling|fell|fallen|lower|shrink\w*|shrank|"
                  r"deteriorat\w*|reduc\w*|contract\w*)\b", re.I)


def trend_word(ask: str) -> str | None:
    """"up" / "down": the direction a yes / no ask asks about ("Has X increased its debt", "an improving gross
    margin profile", "Was there any drop in ..."), the first such word; None when it names none."""
    up, down = UP.search(ask), DOWN.search(ask)
    if up and (not down or up.start() < down.start()):
        return "up"
    return "down" if down else None


def metric_formula(metric: MetricSpec) -> Formula:
    """A reported line as a one-line "formula", so a yes / no ask about its direction is answered as a ratio's."""
    return Formula(metric.key, metric.name.lower(), (), MONEY, "as reported", ((metric.key, 0),),
                   lambda v: v[(metric.key, 0)])


def trend(match: FormulaMatch, years: Sequence[int], company: str, ticker: str, lookup: LineLookup,
          direction: str, decimals: int | None = None, asked_scale: float | None = None) -> Computed:
    """A yes / no ask about the direction of a figure: the figure at the first and the last of ``years``, and
    "Yes" when it moved the asked way ("up" / "down"), "No" otherwise, with both values, the change and every
    input cited."""
    first, last = min(years), max(years)
    parts = [compute(match, [y], company, ticker, lookup, decimals, asked_scale) for y in (first, last)]
    missing = next((p for p in parts if p.sentence is None), None)
    if missing is not None:
        return missing
    a, b = (p.sentence for p in parts if p.sentence is not None)
    f = match.formula
    va, vb = a.figures[0].value, b.figures[0].value
    moved = "rose" if vb > va else "fell" if vb < va else "was unchanged"
    yes = (vb > va) if direction == "up" else (vb < va)
    diff = vb - va
    digits = 2 if decimals is None else decimals
    change = f"{diff:+.{digits}f} percentage points" if f.unit == PERCENT else \
        f"{'+' if diff >= 0 else '-'}{format_figure(abs(diff), f, decimals, asked_scale)}"
    inputs = "; ".join(f"{fig.name.lower()} fiscal {y} {_amount(fig.value)}" for y, s in ((first, a), (last, b))
                       for fig in s.figures[1:])
    how = f", computed as {f.text}" if f.text != "as reported" else " as reported"
    text = (f"{'Yes' if yes else 'No'}: {company}'s {f.name} {moved} from {a.values[0].text} in fiscal {first} to "
            f"{b.values[0].text} in fiscal {last} ({change}){how} ({inputs}).")
    quotes = list(dict.fromkeys([*a.quotes, *b.quotes]))
    sentence = AnswerSentence(text=text, method=Method.COMPUTED, subject=ticker, quotes=quotes,
                              figures=[*a.figures, *b.figures], values=[*a.values, *b.values])
    return Computed(sentence, parts[-1].reason)
