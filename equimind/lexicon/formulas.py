"""The computed figures' catalogue: each ratio, margin, growth rate, turnover or days figure by its usual phrases,
the statement lines that define it and its computation (``FORMULAS``), and the matcher that finds the one a text
names (``find_formula``: whole words, the longest phrase first).

Source: standard accounting definitions (the formulas ``answer/computed.py`` documents, hand-written from textbook
definitions, not from any benchmark's questions); the lines are keys of the XBRL concept map
(``lexicon/concepts.METRICS``). The answer path computes a named figure from here (``find_formula``), and query
shaping reads the statement lines of a named ratio from here (``RATIOS``, ``find_ratios``: rule 6 of
``query/shape.py``).

``RATIOS`` are the figures whose lines query shaping adds to the BM25 query: the four margins / rates of
``FORMULAS`` below, each with its phrases plus the plural forms shaping also matches (``find_formula`` does not), and
its lines in the words of their first XBRL concept's name (``concepts.concept_name_words``); and capital intensity
("capital-intensive"), a judgement over capital expenditures, net PP&E, revenue and total assets that has no single
formula, so it is listed for shaping only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from equimind.lexicon.concepts import METRICS, USD, MetricSpec, concept_name_words, longest_first, phrase_patterns

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
    members: tuple[str, ...] = ()  # a set of figures stated together ("capital intensity"): their keys, in order


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
    _f("quick_ratio", "quick ratio", "quick ratio; acid-test ratio; acid test ratio", TIMES,
       "(current assets - inventories) / current liabilities", "current_assets inventories current_liabilities",
       lambda v: (v[("current_assets", 0)] - v[("inventories", 0)]) / v[("current_liabilities", 0)]),
    _f("operating_cash_flow_ratio", "operating cash flow ratio", "operating cash flow ratio; cash flow from "
       "operations ratio", TIMES, "operating cash flow / current liabilities",
       "operating_cash_flow current_liabilities",
       lambda v: v[("operating_cash_flow", 0)] / v[("current_liabilities", 0)]),
    _f("cash_conversion_cycle", "cash conversion cycle", "cash conversion cycle; cash conversion cycles; "
       "cash-to-cash cycle; cash to cash cycle", DAYS,
       "days inventory outstanding + days sales outstanding - days payable outstanding (365-day year, average "
       "balances of t-1 and t)",
       "inventories inventories@t-1 cost_of_revenue accounts_receivable accounts_receivable@t-1 revenue "
       "accounts_payable accounts_payable@t-1",
       lambda v: 365 * (_avg(v, "inventories") / v[("cost_of_revenue", 0)]
                        + _avg(v, "accounts_receivable") / v[("revenue", 0)]
                        - _avg(v, "accounts_payable") / v[("cost_of_revenue", 0)])),
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
    _f("retention_ratio", "retention ratio", "retention ratio; earnings retention ratio; plowback ratio; "
       "plow-back ratio", PERCENT, "(net income - dividends paid) / net income", "net_income dividends",
       lambda v: (v[("net_income", 0)] - v[("dividends", 0)]) / v[("net_income", 0)] * 100),
    _f("interest_coverage", "interest coverage ratio", "interest coverage; interest coverage ratio; times interest "
       "earned; times interest earned ratio", TIMES, "operating income / interest expense",
       "operating_income interest_expense",
       lambda v: v[("operating_income", 0)] / v[("interest_expense", 0)]),
    _f("receivables_turnover", "receivables turnover", "receivables turnover; receivable turnover; accounts "
       "receivable turnover; receivables turnover ratio; accounts receivable turnover ratio", TIMES,
       "revenue[t] / average of accounts receivable[t-1] and [t]",
       "revenue accounts_receivable accounts_receivable@t-1",
       lambda v: v[("revenue", 0)] / _avg(v, "accounts_receivable")),
    _f("payables_turnover", "payables turnover", "payables turnover; payable turnover; accounts payable turnover; "
       "payables turnover ratio; accounts payable turnover ratio", TIMES,
       "cost of revenue[t] / average of accounts payable[t-1] and [t]",
       "cost_of_revenue accounts_payable accounts_payable@t-1",
       lambda v: v[("cost_of_revenue", 0)] / _avg(v, "accounts_payable")),
    _f("free_cash_flow", "free cash flow", "free cash flow; fcf", MONEY,
       "operating cash flow - capital expenditures", "operating_cash_flow capex",
       lambda v: v[("operating_cash_flow", 0)] - v[("capex", 0)]),
    _f("cash_conversion_ratio", "cash conversion ratio", "cash conversion ratio; cash conversion rate", TIMES,
       "operating cash flow / net income", "operating_cash_flow net_income",
       lambda v: v[("operating_cash_flow", 0)] / v[("net_income", 0)]),
    _f("fixed_assets_to_total_assets", "fixed assets to total assets", "fixed assets to total assets; fixed "
       "assets/total assets; fixed assets as a percentage of total assets", PERCENT,
       "net PP&E / total assets", "ppe_net total_assets",
       lambda v: v[("ppe_net", 0)] / v[("total_assets", 0)] * 100),
    _f("capital_intensity_ratio", "capital intensity ratio", "capital intensity ratio; asset intensity ratio", TIMES,
       "total assets / revenue", "total_assets revenue",
       lambda v: v[("total_assets", 0)] / v[("revenue", 0)]),
    # "Is X capital-intensive?": the textbook measures of capital intensity stated together, no verdict (a
    # threshold depends on the industry compared with); ``compute`` is unused
    _f("capital_intensity", "capital intensity", "capital intensity; capital intensive; capital intensiveness",
       TIMES, "total assets / revenue, capital expenditures / revenue and net PP&E / total assets",
       "total_assets revenue capex ppe_net", lambda v: 0.0,
       members=("capital_intensity_ratio", "capex_to_revenue", "fixed_assets_to_total_assets")),
    # compound annual growth over the years the ask spans ("FY2019 to FY2021", "2-year"): computed by
    # ``answer.computed.compute`` from the line at both ends; ``lines`` names the line, ``compute`` is unused
    _f("revenue_cagr", "revenue CAGR", "revenue cagr; cagr of revenue; cagr in revenue; revenue compound annual "
       "growth rate; compound annual growth rate of revenue; compound annual growth rate in revenue; sales cagr; "
       "net sales cagr; cagr; compound annual growth rate", PERCENT,
       "(revenue[end] / revenue[start]) ^ (1 / years) - 1", "revenue",
       lambda v: 0.0),
)
SPAN_GROWTH = frozenset(["revenue_cagr"])  # figures over the span of years named, not one year
OUTFLOWS = frozenset(["capex", "dividends", "buybacks"])  # printed as negatives in a cash-flow statement
# used by size: an outflow, an add-back or a cost printed in parentheses, whatever its sign
ABSOLUTE = OUTFLOWS | {"depreciation_amortization", "interest_expense"}


@dataclass(frozen=True)
class RatioSpec:
    """A computed ratio a question may name, and the statement line items it is computed from (in the words of the
    us-gaap concepts that report them): what query shaping adds to the BM25 query."""

    key: str
    phrases: tuple[str, ...]
    line_items: tuple[str, ...]


_FORMULA = {f.key: f for f in FORMULAS}


def formula_by_key(key: str) -> Formula:
    """The catalogue's figure ``key`` (a member of a set of figures stated together)."""
    return _FORMULA[key]

_METRIC = {m.key: m for m in METRICS}
# A line whose first concept's name is not the name a statement prints for it: the 90-character
# us-gaap:IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest is printed
# "Income (loss) before income taxes".
_LINE_WORDS = {"pretax_income": "income loss before income taxes"}


def line_words(key: str) -> str:
    """The words of a concept-map line as its statement prints it: its first concept's name in words."""
    return _LINE_WORDS.get(key) or concept_name_words(_METRIC[key].concepts[0])


def _ratio(key: str, plurals: str = "", alternative: int | None = None) -> RatioSpec:
    """The shaping entry of formula ``key``: its phrases plus ``plurals`` ("; "-separated), and the words of its lines
    (of its ``alternative``-th other definition when given: the one a statement prints as a line)."""
    f = _FORMULA[key]
    lines = f.lines if alternative is None else f.alternatives[alternative][0]
    phrases = (*f.phrases, *(x.strip() for x in plurals.split(";") if x.strip()))
    keys = dict.fromkeys(k for k, _ in lines)
    return RatioSpec(key, tuple(dict.fromkeys(phrases)), tuple(line_words(k) for k in keys))


RATIOS: tuple[RatioSpec, ...] = (
    _ratio("gross_margin", "gross profit margins", alternative=0),  # gross profit / revenue: the printed lines
    _ratio("operating_margin"),
    _ratio("net_margin", "net margins; profit margins"),
    _ratio("effective_tax_rate", "effective tax rates"),
    RatioSpec("capital_intensity", ("capital intensive", "capital intensity"),
              tuple(line_words(k) for k in ("capex", "ppe_net", "revenue", "total_assets"))),
)
_RATIO_PATTERNS = phrase_patterns((p, r) for r in RATIOS for p in r.phrases)


def find_ratios(text: str) -> list[tuple[RatioSpec, int, int]]:
    """Every ratio of ``RATIOS`` named in ``text`` (longest phrase first, non-overlapping) with its span, in text
    order."""
    return [(r, a, b) for r, _, a, b in longest_first(_RATIO_PATTERNS, text)]


@dataclass(frozen=True)
class FormulaMatch:
    formula: Formula
    phrase: str
    average_years: bool  # "3 year average X", "average X": the mean of X over the span of years named
    span_years: int | None = None  # "2-year CAGR", "three year average": the number of years the ask states


def _pattern(phrase: str) -> re.Pattern[str]:
    body = r"[\s-]+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![\w&/]){body}(?![\w&/])")


_PATTERNS = tuple(sorted(((_pattern(p), p, f) for f in FORMULAS for p in f.phrases), key=lambda x: -len(x[1])))
AVERAGE_BEFORE = re.compile(r"\baverage\s+(?:\w+\s+){0,2}$")
N_YEAR_AVERAGE = re.compile(r"\b(?:\d+|two|three|four|five)[\s-]years?\s+average\b")
N_YEARS = re.compile(r"\b(\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)[\s-]years?\b")
_NUMBER_WORDS = {w: i for i, w in enumerate(["two", "three", "four", "five", "six", "seven", "eight", "nine",
                                             "ten"], start=2)}


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
        best = (m.start(), _match(f, phrase, low, m.start()))
    return best[1] if best else None


def _match(f: Formula, phrase: str, low: str, start: int) -> FormulaMatch:
    """``f`` named at ``start`` of the lower-case ask ``low``: an average over years when "average" comes before it
    or the ask says "N year average", and the number of years the ask states."""
    avg = bool(AVERAGE_BEFORE.search(low[:start])) or bool(N_YEAR_AVERAGE.search(low))
    n = N_YEARS.search(low)
    span = int(n.group(1)) if n and n.group(1).isdigit() else _NUMBER_WORDS.get(n.group(1)) if n else None
    return FormulaMatch(f, phrase, avg, span)


def metric_formula(metric: MetricSpec) -> Formula:
    """A reported line as a one-line "formula", so a yes / no ask about its direction is answered as a ratio's."""
    return Formula(metric.key, metric.name.lower(), (), MONEY, "as reported", ((metric.key, 0),),
                   lambda v: v[(metric.key, 0)])


# --- figures composed from any one line (a grammar, not a catalogue) -----------------------------------------------
# "SG&A as a % of revenue", "COGS % margin", "R&D to revenue": the line over revenue, in percent
SHARE_OF_REVENUE_AFTER = re.compile(
    r"^\s*(?:(?:%|percent)\s+margin|margin|(?:as\s+)?(?:an?\s+)?(?:%|percent(?:age)?|share|proportion)\s+of\s+"
    r"(?:total\s+|net\s+)*(?:revenues?|sales)|(?:to|/)\s*(?:total\s+|net\s+)*(?:revenues?|sales)(?:\s+ratio)?)\b",
    re.I)
# "operating income growth", "growth in operating income", "year-over-year change in SG&A": the line's change in
# percent of its prior-year value
GROWTH_BEFORE = re.compile(r"\b(?:growth(?:\s+rate)?|(?:(?:year[\s-]over[\s-]year|yoy|annual|percent(?:age)?)\s+)?"
                           r"change)\s+(?:in|of)\s+(?:[\w&.-]+(?:'s)?\s+){0,3}$", re.I)
GROWTH_AFTER = re.compile(r"^\s*(?:growth(?:\s+rate)?|(?:year[\s-]over[\s-]year|yoy)\s+(?:growth|change)|grow|grew)\b",
                          re.I)
PERCENT_WANTED = re.compile(r"%|\bpercent|\bgrowth\b|\brate\b|\bhow (?:fast|quickly)\b", re.I)


def composed_formula(text: str, metric: MetricSpec, start: int, end: int) -> FormulaMatch | None:
    """A figure ``text`` asks of the one line ``metric`` it names at ``start``-``end``, by English grammar rather
    than by a catalogue phrase: the line's share of revenue ("SG&A as a % of revenue", "COGS % margin") or its
    growth in percent ("year-over-year change in operating income ... in percents"), or None. Textbook
    definitions: share = line / revenue; growth = (line[t] - line[t-1]) / |line[t-1]|."""
    if metric.unit != USD:
        return None
    low = text.lower().replace("\u2019", "'")
    before, after = low[:start], low[end:]
    key, name = metric.key, metric.name.lower()
    if key != "revenue" and SHARE_OF_REVENUE_AFTER.search(after):
        f = Formula(f"{key}/revenue", f"{name} as a percent of revenue", (), PERCENT, f"{name} / revenue",
                    ((key, 0), ("revenue", 0)), lambda v: v[(key, 0)] / v[("revenue", 0)] * 100)
    elif (GROWTH_BEFORE.search(before) or GROWTH_AFTER.search(after)) and PERCENT_WANTED.search(low):
        f = Formula(f"{key}@growth", f"{name} growth", (), PERCENT, f"({name}[t] - {name}[t-1]) / |{name}[t-1]|",
                    ((key, 0), (key, -1)), lambda v: (v[(key, 0)] - v[(key, -1)]) / abs(v[(key, -1)]) * 100)
    else:
        return None
    return _match(f, text[start:end], low, start)
