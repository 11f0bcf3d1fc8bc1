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
  quick ratio ("acid-test") = (current assets - inventories) / current liabilities; operating cash flow ratio =
  operating cash flow / current liabilities;
* cash conversion cycle = days inventory outstanding + days sales outstanding - days payable outstanding, each
  over average balances and a 365-day year, payables over cost of revenue;
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from equimind.answer.lines import LineValue
from equimind.answer.record import AnswerFigure, AnswerSentence, Method, StatedValue
from equimind.answer.values import in_asked_scale, scale_word
from equimind.lexicon.concepts import METRICS, MetricSpec
from equimind.lexicon.formulas import (
    ABSOLUTE,
    DAYS,
    PERCENT,
    SPAN_GROWTH,
    TIMES,
    Formula,
    FormulaMatch,
    Line,
    formula_by_key,
)
from equimind.lexicon.line_items import load_line_items

_METRICS = {m.key: m for m in METRICS}


@dataclass(frozen=True)
class Computed:
    sentence: AnswerSentence | None
    reason: str  # where the inputs came from, or which input is missing
    missing: tuple[str, ...] = ()  # the lines not found, one per definition of the figure (cost of revenue, and
    # gross profit for the alternative), when a missing line stopped it


def line_spec(key: str) -> MetricSpec:
    """A line of a formula: a concept-map key, or a concept named by its XBRL label (a reported line item asked
    about: ``lexicon.line_items``)."""
    return _METRICS.get(key) or load_line_items().specs[key]


LineLookup = Callable[[MetricSpec, int, int], LineValue | None]


def _year_values(f: Formula, lines: tuple[Line, ...], year: int, lookup: LineLookup, t: int,
                 got: dict[tuple[str, int], LineValue]) -> tuple[dict[Line, float] | None, str, str]:
    """The definition's line values at ``year``, or None with the first missing line named and its key."""
    out: dict[Line, float] = {}
    for key, off in lines:
        y = year + off
        if (key, y) not in got:
            lv = lookup(line_spec(key), y, t)
            if lv is None:
                return None, f"{line_spec(key).name.lower()} for fiscal {y}", key
            got[(key, y)] = lv
        v = got[(key, y)].value
        out[(key, off)] = abs(v) if key in ABSOLUTE else v
    return out, "", ""


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


def amount(value: float) -> str:
    """An input line as the answer states it: millions from a million up, else the number as read."""
    sign = "-" if value < 0 else ""
    v = abs(value)
    return f"{sign}${v / 1e6:,.0f} million" if v >= 1e6 else f"{sign}{v:,.0f}"


# lines a ratio may only be taken over when positive: a company with negative equity has no return on equity or
# debt-to-equity ratio that means anything (Boeing's fiscal 2022 net loss over its negative equity reads +33%)
POSITIVE_BASES = frozenset({"stockholders_equity"})


def compute(match: FormulaMatch, years: Sequence[int], company: str, ticker: str, lookup: LineLookup,
            decimals: int | None = None, asked_scale: float | None = None, each_year: bool = False) -> Computed:
    """The figure ``match`` names for the last of ``years`` (or their mean, for an average over the span; or, with
    ``each_year``, for every year named and the change between the first and the last), from ``lookup``'s lines;
    ``Computed.sentence`` None with the missing input named when a line is not found."""
    f = match.formula
    t = max(years)
    if f.key in SPAN_GROWTH:
        return _cagr(match, years, company, ticker, lookup, decimals)
    if f.members:
        return _members(match, t, company, ticker, lookup, decimals)
    if each_year and len(set(years)) > 1 and not match.average_years:
        return _each_year(match, sorted(set(years)), company, ticker, lookup, decimals, asked_scale)
    span = list(range(min(years), t + 1)) if match.average_years and len(years) > 1 else [t]
    got: dict[tuple[str, int], LineValue] = {}
    per_year: list[float] = []
    for y in span:
        values, missing, keys = None, "", []
        for lines, fn in ((f.lines, f.compute), *f.alternatives):
            values, gap, key = _year_values(f, lines, y, lookup, t, got)
            missing = missing or gap  # the definition's own line is named first (gross profit is the fallback)
            keys.append(key)
            if values is not None:
                try:
                    per_year.append(fn(values))
                except ZeroDivisionError:
                    return Computed(None, f"{f.name}: a zero denominator in fiscal {y}")
                break
        if values is None:
            return Computed(None, f"{f.name}: no {missing} found", tuple(dict.fromkeys(k for k in keys if k)))
    negative = [(y, lv) for (k, y), lv in sorted(got.items(), key=lambda kv: kv[0][1]) if k in POSITIVE_BASES
                and lv.value <= 0]
    if negative:  # a return on, or a debt to, a negative equity is no ratio of the company's
        y, lv = negative[0]
        return Computed(None, f"{f.name}: {lv.figure.name.lower()} is not positive in fiscal {y} "
                              f"({amount(lv.value)}), so the ratio is not meaningful")
    value = sum(per_year) / len(per_year)
    shown = format_figure(value, f, decimals, asked_scale)
    period = f"fiscal {span[0]}-{span[-1]} average" if len(span) > 1 else f"fiscal {t}"
    inputs = "; ".join(f"{lv.figure.name.lower()} fiscal {y} {amount(lv.value)}" for (_, y), lv in sorted(
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
    inputs = "; ".join(dict.fromkeys(f"{fig.name.lower()} fiscal {y} {amount(fig.value)}" for y, s in zip(
        years, sentences, strict=True) for fig in s.figures[1:]))
    return Computed(AnswerSentence(text=f"{text} ({inputs}).", method=Method.COMPUTED, subject=ticker,
                                   quotes=list(dict.fromkeys(q for s in sentences for q in s.quotes)),
                                   figures=[fig for s in sentences for fig in s.figures],
                                   values=[v for s in sentences for v in s.values]), reason)


def _members(match: FormulaMatch, t: int, company: str, ticker: str, lookup: LineLookup,
             decimals: int | None) -> Computed:
    """A set of figures stated together ("capital intensity": ``Formula.members``) for fiscal ``t``, each computed
    from its lines; those that cannot be computed are named. No verdict: whether the figures make a company
    capital-intensive depends on the industry they are compared with, and the sentence says so (no threshold)."""
    f = match.formula
    done: list[tuple[Formula, AnswerSentence]] = []
    missing: list[str] = []
    for key in f.members:
        member = formula_by_key(key)
        got = compute(FormulaMatch(member, member.name, False), [t], company, ticker, lookup, decimals)
        if got.sentence is None:
            missing.append(got.reason)
        else:
            done.append((member, got.sentence))
    if not done:
        return Computed(None, f"{f.name}: {missing[0]}" if missing else f"{f.name}: nothing to compute")
    stated = "; ".join(f"{m.name} ({m.text}) {s.values[0].text}" for m, s in done)
    gaps = f" Not computed: {'; '.join(missing)}." if missing else ""
    text = (f"{company}'s {f.name} in fiscal {t}: {stated}.{gaps} No threshold is applied: what these figures mean "
            f"depends on the industry the company is compared with. Computed from its reported lines")
    return _years_sentence(text, ticker, [t] * len(done), [s for _, s in done],
                           f"computed {f.name} ({len(done)} of {len(f.members)} figures)")


def _each_year(match: FormulaMatch, years: list[int], company: str, ticker: str, lookup: LineLookup,
               decimals: int | None, asked_scale: float | None) -> Computed:
    """The figure for each named year, then the change from the first to the last (percentage points for a
    percent, the difference otherwise), one sentence citing every input."""
    found = _per_year(match, years, company, ticker, lookup, decimals, asked_scale)
    if isinstance(found, Computed):
        return found
    sentences, reason = found
    f = match.formula
    values = [s.figures[0].value for s in sentences]
    change = _change(f, values[-1] - values[0], decimals, asked_scale)
    stated = ", ".join(f"fiscal {y}: {s.values[0].text}" for y, s in zip(years, sentences, strict=True))
    steps = ""
    if len(years) > 2:  # over three years or more: the largest move from one year to the next as well
        i = max(range(1, len(values)), key=lambda k: abs(values[k] - values[k - 1]))
        steps = (f"; the largest change from one year to the next is "
                 f"{_change(f, values[i] - values[i - 1], decimals, asked_scale)} (fiscal {years[i - 1]} to "
                 f"fiscal {years[i]})")
    text = (f"{company}'s {f.name} was {stated}; the change from fiscal {years[0]} to fiscal {years[-1]} is "
            f"{change}{steps}. Each is computed as {f.text} from its reported lines")
    return _years_sentence(text, ticker, years, sentences, reason)


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


def _cagr(match: FormulaMatch, years: Sequence[int], company: str, ticker: str, lookup: LineLookup,
          decimals: int | None) -> Computed:
    """Compound annual growth of the formula's line from the first to the last year the ask names ("FY2019 to
    FY2021"), or over the number of years it states before the one year it names ("the 2-year CAGR to FY2021"):
    (end / start) ^ (1 / years) - 1, both ends cited."""
    f = match.formula
    end = max(years)
    start = min(years) if len(set(years)) > 1 else end - (match.span_years or 0)
    if start >= end:
        return Computed(None, f"{f.name}: the ask names one fiscal year and no span of years to grow over")
    metric = line_spec(f.lines[0][0])
    got = {y: lookup(metric, y, end) for y in (start, end)}
    missing = [y for y, lv in got.items() if lv is None]
    if missing:
        return Computed(None, f"{f.name}: no {metric.name.lower()} for fiscal {missing[0]} found")
    a, b = got[start], got[end]
    assert a is not None and b is not None
    if a.value <= 0 or b.value <= 0:
        return Computed(None, f"{f.name}: a compound growth rate needs positive values at both ends")
    n = end - start
    value = ((b.value / a.value) ** (1 / n) - 1) * 100
    shown = format_figure(value, f, decimals, None)
    text = (f"{company}'s {metric.name.lower()} compound annual growth rate from fiscal {start} to fiscal {end} "
            f"({n} year{'s' if n != 1 else ''}) was {shown}, computed as {f.text} from its reported lines "
            f"({metric.name.lower()} fiscal {start} {amount(a.value)}; fiscal {end} {amount(b.value)}).")
    period = f"fiscal {start}-{end}"
    fig = AnswerFigure(name=f.name, value=value, unit=f.unit, provenance={
        "formula": f.text, "computed": True, "period": period, "inputs_from": sorted({a.source, b.source}),
        "inputs": [{"line": lv.figure.name, "fiscal_year": y, "value": lv.value, **lv.figure.provenance}
                   for y, lv in ((start, a), (end, b))]})
    sentence = AnswerSentence(text=text, method=Method.COMPUTED, subject=ticker,
                              quotes=list(dict.fromkeys([*a.quotes, *b.quotes])), figures=[fig, a.figure, b.figure],
                              values=[StatedValue(text=shown, number=value, unit=f.unit, period=period)])
    return Computed(sentence, f"computed {f.name} from {' and '.join(sorted({a.source, b.source}))} lines")
