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

Each line comes from XBRL companyfacts as filed by the as-of date when a facts source knows the company, else from
the statement rows of the company's own filings (``answer/lines.py``). Every input is cited: the figure with its
XBRL provenance, or the row, its header and its unit line as verified quotes. A missing input is said by name, and
the question is then answered from the passages as any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from equimind.answer.concepts import METRICS, MetricSpec
from equimind.answer.lines import LineValue
from equimind.answer.record import AnswerFigure, AnswerSentence, Method, StatedValue
from equimind.answer.values import in_asked_scale, scale_word

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
    # other line sets that define the same figure, each with its computation (gross profit / revenue)
    alternatives: tuple[tuple[tuple[Line, ...], Callable[[Values], float]], ...] = ()
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
       alternatives=((_lines("gross_profit revenue"), lambda v: v[("gross_profit", 0)] / v[("revenue", 0)] * 100),)),
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
    if decimals is None:
        return in_asked_scale(value, scale)
    v = value / scale
    return f"{'-' if v < 0 else ''}${abs(v):,.{decimals}f} {scale_word(scale)}"


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
        for lines, fn in ((f.lines, f.compute), *f.alternatives):
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


def _per_year(match: FormulaMatch, years: Sequence[int], company: str, ticker: str, lookup: LineLookup,
              decimals: int | None, asked_scale: float | None) -> tuple[list[AnswerSentence], str] | Computed:
    """The one-year sentence of each of ``years`` and the last one's reason, or the first year's ``Computed`` that
    names a missing line."""
    parts = [compute(match, [y], company, ticker, lookup, decimals, asked_scale) for y in years]
    missing = next((p for p in parts if p.sentence is None), None)
    if missing is not None:
        return missing
    return [p.sentence for p in parts if p.sentence is not None], parts[-1].reason


def _change(f: Formula, diff: float, decimals: int | None, asked_scale: float | None) -> str:
    """A change between two years: percentage points for a percent, the difference in the figure's unit else."""
    if f.unit == PERCENT:
        return f"{diff:+.{2 if decimals is None else decimals}f} percentage points"
    return f"{'+' if diff >= 0 else '-'}{format_figure(abs(diff), f, decimals, asked_scale)}"


def _years_sentence(text: str, ticker: str, years: Sequence[int], sentences: Sequence[AnswerSentence],
                    reason: str) -> Computed:
    """One sentence over several one-year sentences: ``text`` plus their inputs, every quote, figure and value."""
    inputs = "; ".join(f"{fig.name.lower()} fiscal {y} {_amount(fig.value)}" for y, s in zip(years, sentences,
                       strict=True) for fig in s.figures[1:])
    return Computed(AnswerSentence(text=f"{text} ({inputs}).", method=Method.COMPUTED, subject=ticker,
                                   quotes=list(dict.fromkeys(q for s in sentences for q in s.quotes)),
                                   figures=[fig for s in sentences for fig in s.figures],
                                   values=[v for s in sentences for v in s.values]), reason)


def _each_year(match: FormulaMatch, years: list[int], company: str, ticker: str, lookup: LineLookup,
               decimals: int | None, asked_scale: float | None) -> Computed:
    """The figure for each named year, then the change from the first to the last (percentage points for a
    percent, the difference otherwise), one sentence citing every input."""
    found = _per_year(match, years, company, ticker, lookup, decimals, asked_scale)
    if isinstance(found, Computed):
        return found
    sentences, reason = found
    f = match.formula
    change = _change(f, sentences[-1].figures[0].value - sentences[0].figures[0].value, decimals, asked_scale)
    stated = ", ".join(f"fiscal {y}: {s.values[0].text}" for y, s in zip(years, sentences, strict=True))
    text = (f"{company}'s {f.name} was {stated}; the change from fiscal {years[0]} to fiscal {years[-1]} is "
            f"{change}. Each is computed as {f.text} from its reported lines")
    return _years_sentence(text, ticker, years, sentences, reason)


CHANGE_ASK = re.compile(r"\b(?:chang\w*|compar\w*|versus|vs\.?|differ\w*|improv\w*|deteriorat\w*|"
                        r"declin\w*|increas\w*|decreas\w*|trend\w*)\b", re.I)


def asks_each_year(ask: str, match: FormulaMatch) -> bool:
    """The ask wants the figure for each year it names and the change ("How much has the effective tax rate
    changed between FY2021 and FY2022?"), not one year's figure: a change word, and a formula that is not itself a
    change or an average over years (revenue growth, return on average assets)."""
    return CHANGE_ASK.search(ask) is not None and all(off == 0 for _, off in match.formula.lines)




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
    found = _per_year(match, (first, last), company, ticker, lookup, decimals, asked_scale)
    if isinstance(found, Computed):
        return found
    sentences, reason = found
    a, b = sentences
    f = match.formula
    va, vb = a.figures[0].value, b.figures[0].value
    moved = "rose" if vb > va else "fell" if vb < va else "was unchanged"
    yes = (vb > va) if direction == "up" else (vb < va)
    how = f", computed as {f.text}" if f.text != "as reported" else " as reported"
    text = (f"{'Yes' if yes else 'No'}: {company}'s {f.name} {moved} from {a.values[0].text} in fiscal {first} to "
            f"{b.values[0].text} in fiscal {last} ({_change(f, vb - va, decimals, asked_scale)}){how}")
    return _years_sentence(text, ticker, (first, last), sentences, reason)
