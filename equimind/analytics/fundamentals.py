"""Fundamentals from XBRL companyfacts, point-in-time: revenue, net income, EPS, equity, assets, liabilities, debt,
operating cash flow; then growth (YoY quarter, TTM), margins, ROE, ROA, debt/equity and P/E.

Every number is a ``models.Figure`` whose provenance names the XBRL concept, unit, period and the filing(s) it came
from (accession, filed date, form); ``Figure.as_of`` is the day its last input became public (<= the as-of date),
and for a value defined relative to the latest period (``*_prior``: the same period a year earlier) the day that
latest period became public, so a figure changes with the as-of date exactly when its ``as_of`` says it may.

Splits. XBRL EPS is "as reported": a filing made before a split reports pre-split EPS, later filings restate the
comparatives. Each EPS fact is first put on the share basis in force at the as-of date (divided by the ratios of
splits dated after its filing and on or before the as-of date), so a TTM sum never mixes bases. Splits come from the
price series' split column and, for splits outside the price window, from the XBRL itself: per-share values of the
same period re-reported at a split ratio in a later filing (``xbrl.infer_eps_splits``; only filings made by the
as-of date count). P/E then divides the
price by EPS on the *price series'* basis: Yahoo's history is adjusted for every split up to its last bar, so EPS is
further divided by splits dated after the as-of date up to that bar. Both factors appear in the provenance.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from equimind.analytics.xbrl import (
    QUARTER_DAYS,
    YEAR_DAYS,
    PeriodValue,
    SplitFactor,
    duration_ends,
    infer_eps_splits,
    known_facts,
    latest_duration_end,
    latest_instant,
    merge_splits,
    period_value,
    split_factor_between,
    year_ago_end,
)
from equimind.core.degraded import Degradation
from equimind.core.research import Figure
from equimind.lexicon.forms import PERIODIC_FORMS
from equimind.sources.base import CompanyFacts, XbrlFact

log = logging.getLogger(__name__)

USD, USD_PER_SHARE = "USD", "USD/shares"


@dataclass(frozen=True)
class Metric:
    key: str
    name: str
    concepts: tuple[str, ...]  # first one with the most recent data wins
    unit: str
    flow: bool  # duration (income/cash-flow statement) vs instant (balance sheet)


METRICS: tuple[Metric, ...] = (
    Metric("revenue", "Revenue", ("us-gaap:Revenues", "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",
                                  "us-gaap:SalesRevenueNet"), USD, True),
    Metric("gross_profit", "Gross profit", ("us-gaap:GrossProfit",), USD, True),
    Metric("operating_income", "Operating income", ("us-gaap:OperatingIncomeLoss",), USD, True),
    Metric("net_income", "Net income", ("us-gaap:NetIncomeLoss", "us-gaap:ProfitLoss"), USD, True),
    Metric("eps_diluted", "Diluted EPS", ("us-gaap:EarningsPerShareDiluted", "us-gaap:EarningsPerShareBasic"),
           USD_PER_SHARE, True),
    Metric("operating_cash_flow", "Operating cash flow", ("us-gaap:NetCashProvidedByUsedInOperatingActivities",),
           USD, True),
    Metric("stockholders_equity", "Stockholders' equity", ("us-gaap:StockholdersEquity",
           "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"), USD, False),
    Metric("total_assets", "Total assets", ("us-gaap:Assets",), USD, False),
    Metric("total_liabilities", "Total liabilities", ("us-gaap:Liabilities",), USD, False),
)
EPS_CONCEPTS = ("us-gaap:EarningsPerShareDiluted", "us-gaap:EarningsPerShareBasic")
DEBT_NONCURRENT = "us-gaap:LongTermDebtNoncurrent"
DEBT_CURRENT = ("us-gaap:LongTermDebtCurrent", "us-gaap:DebtCurrent")
DEBT_TOTAL = "us-gaap:LongTermDebt"
COMMERCIAL_PAPER = "us-gaap:CommercialPaper"
SHARES_DILUTED = ("us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding",
                  "us-gaap:WeightedAverageNumberOfShareOutstandingBasicAndDiluted")
CASH = ("us-gaap:CashAndCashEquivalentsAtCarryingValue",
        "us-gaap:CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents")
SHARES = "shares"


@dataclass(frozen=True)
class FundamentalsResult:
    figures: tuple[Figure, ...]
    degraded: tuple[Degradation, ...]
    values: dict[str, PeriodValue]  # the raw point-in-time values behind the figures

    def figure(self, fid: str) -> Figure | None:
        return next((f for f in self.figures if f.id == fid), None)


def choose_concept(cf: CompanyFacts, metric: Metric, as_of: date) -> tuple[str, list[XbrlFact]] | None:
    """The candidate concept with the most recent period known at ``as_of`` (ties: list order)."""
    best: tuple[date, int, str, list[XbrlFact]] | None = None
    for rank, concept in enumerate(metric.concepts):
        facts = known_facts(cf, concept, metric.unit, as_of)
        if not facts:
            continue
        last = max(f.end for f in facts)
        if best is None or (last, -rank) > (best[0], best[1]):
            best = (last, -rank, concept, facts)
    return None if best is None else (best[2], best[3])


class _Builder:
    """Collects figures and degradations for one company at one as-of date."""

    def __init__(self, cf: CompanyFacts, as_of: date, splits: Sequence[tuple[date, float]]) -> None:
        self.cf, self.as_of = cf, as_of
        per_share = [f for c in EPS_CONCEPTS for f in cf.get(c, USD_PER_SHARE) if f.form in PERIODIC_FORMS]
        self.split_events = [e for e in merge_splits(splits, infer_eps_splits(per_share, as_of)) if e.day <= as_of]
        self.figures: list[Figure] = []
        self.degraded: list[Degradation] = []
        self.values: dict[str, PeriodValue] = {}
        self.known: dict[str, date] = {}  # figure id -> its as_of

    def eps_split_factor(self) -> SplitFactor:
        """Puts a per-share fact on the share basis in force at the as-of date."""
        events = [(e.day, e.ratio) for e in self.split_events]
        return lambda f: split_factor_between(events, f.filed, self.as_of)

    def add_value(self, fid: str, name: str, unit: str, pv: PeriodValue | None, formula: str, why: str,
                  *, anchor: str | None = None) -> None:
        """``anchor``: the figure this one is defined relative to (a prior-year value is only meaningful, and its
        ``as_of`` only reached, once the current period it is compared with is known)."""
        if pv is None:
            self.degraded.append(Degradation(capability=f"fundamentals.{fid}", reason=why))
            return
        self.values[fid] = pv
        self.known[fid] = max(pv.known_at, self.known.get(anchor or "", pv.known_at))
        prov: dict[str, Any] = {**pv.provenance(), "origin": self.cf.origin.value, "location": self.cf.location}
        if unit == USD_PER_SHARE:
            prov["share_basis"] = f"as of {self.as_of}"
            prov["splits"] = [{"day": e.day, "ratio": e.ratio, "evidence": e.evidence} for e in self.split_events]
        self.figures.append(Figure(id=fid, name=name, value=pv.value, unit=unit, as_of=self.known[fid],
                                   formula=formula, inputs={}, provenance=prov))

    def add_ratio(self, fid: str, name: str, formula: str, num: str, den: str | tuple[str, str],
                  *, unit: str = "ratio") -> None:
        """num / den (den a pair = average of the two, or the first alone when the second is missing)."""
        n = self.values.get(num)
        pair = den if isinstance(den, tuple) else (den, "")
        d0, d1 = self.values.get(pair[0]), self.values.get(pair[1])
        if n is None or d0 is None:
            missing = num if n is None else pair[0]
            self.degraded.append(Degradation(capability=f"fundamentals.{fid}", reason=f"needs {missing}"))
            return
        den_value = (d0.value + d1.value) / 2 if d1 is not None else d0.value
        used = [num, pair[0]] + ([pair[1]] if d1 is not None else [])
        if d1 is None and isinstance(den, tuple):
            formula = formula.replace(f"avg({pair[0]}, {pair[1]})", pair[0])
        value = None if den_value <= 0 else n.value / den_value
        inputs = {k: self.values[k].value for k in used}
        ends = {k: self.values[k].end for k in used}
        note = "" if value is not None else "denominator <= 0: ratio not meaningful"
        if len({ends[num], ends[pair[0]]}) > 1:
            note = (note + "; " if note else "") + "numerator and denominator end on different dates"
        prov = {"source": "sec_edgar", "figures": used, "period_ends": ends, "note": note}
        self.figures.append(Figure(id=fid, name=name, value=value, unit=unit, formula=formula, inputs=inputs,
                                   as_of=max(self.known[k] for k in used), provenance=prov))

    def add_margin_change(self, fid: str, name: str, num: str) -> None:
        """num_ttm / revenue_ttm − num_ttm_prior / revenue_ttm_prior: the margin's change on a year earlier, in
        fraction points (0.02 = two percentage points)."""
        keys = (f"{num}_ttm", "revenue_ttm", f"{num}_ttm_prior", "revenue_ttm_prior")
        vals = [self.values.get(k) for k in keys]
        if any(v is None for v in vals):
            missing = [k for k, v in zip(keys, vals, strict=True) if v is None]
            self.degraded.append(Degradation(capability=f"fundamentals.{fid}", reason=f"needs {', '.join(missing)}"))
            return
        n, r, n0, r0 = (v.value for v in vals if v is not None)
        value = None if r <= 0 or r0 <= 0 else n / r - n0 / r0
        self.figures.append(Figure(
            id=fid, name=name, value=value, unit="ratio",
            formula=f"{num}_ttm / revenue_ttm - {num}_ttm_prior / revenue_ttm_prior",
            inputs={k: v.value for k, v in zip(keys, vals, strict=True) if v is not None},
            as_of=max(self.known[k] for k in keys),
            provenance={"source": "sec_edgar", "figures": list(keys),
                        "note": "change in fraction points" if value is not None else "revenue <= 0: not meaningful"}))

    def add_growth(self, fid: str, name: str, cur: str, prev: str) -> None:
        c, p = self.values.get(cur), self.values.get(prev)
        if c is None or p is None:
            self.degraded.append(Degradation(capability=f"fundamentals.{fid}",
                                             reason=f"needs {cur} and {prev} (same period one year earlier)"))
            return
        value = None if p.value <= 0 else c.value / p.value - 1.0
        self.figures.append(Figure(
            id=fid, name=name, value=value, unit="ratio", formula=f"{cur} / {prev} - 1",
            inputs={cur: c.value, prev: p.value}, as_of=max(self.known[cur], self.known[prev]),
            provenance={"source": "sec_edgar", "figures": [cur, prev],
                        "note": "" if value is not None else "prior value <= 0: growth not meaningful"}))


def _flows(b: _Builder, metric: Metric) -> None:
    chosen = choose_concept(b.cf, metric, b.as_of)
    k = metric.key
    if chosen is None:
        b.degraded.append(Degradation(capability=f"fundamentals.{k}",
                                      reason=f"no {'/'.join(metric.concepts)} filed by {b.as_of}"))
        return
    concept, facts = chosen
    sf = b.eps_split_factor() if metric.unit == USD_PER_SHARE else None
    end = latest_duration_end(facts)
    assert end is not None
    prior = year_ago_end(duration_ends(facts), end)
    why = f"{concept}: cannot build the period ending {end} from the reported periods"
    b.add_value(f"{k}_ttm", f"{metric.name}, trailing twelve months", metric.unit,
                period_value(facts, end, YEAR_DAYS, split_factor=sf), f"sum of {concept} over the 12 months to end",
                why)
    b.add_value(f"{k}_quarter", f"{metric.name}, latest quarter", metric.unit,
                period_value(facts, end, QUARTER_DAYS, split_factor=sf), f"{concept} over the latest quarter", why)
    if prior is None:
        b.degraded.append(Degradation(capability=f"fundamentals.{k}_growth",
                                      reason=f"{concept}: no period ending about a year before {end}"))
        return
    b.add_value(f"{k}_ttm_prior", f"{metric.name}, TTM one year earlier", metric.unit,
                period_value(facts, prior, YEAR_DAYS, split_factor=sf), f"{concept} over the 12 months to {prior}",
                why, anchor=f"{k}_ttm")
    b.add_value(f"{k}_quarter_prior", f"{metric.name}, same quarter one year earlier", metric.unit,
                period_value(facts, prior, QUARTER_DAYS, split_factor=sf), f"{concept} over the quarter to {prior}",
                why, anchor=f"{k}_quarter")


def _instants(b: _Builder, metric: Metric) -> None:
    chosen = choose_concept(b.cf, metric, b.as_of)
    if chosen is None:
        b.degraded.append(Degradation(capability=f"fundamentals.{metric.key}",
                                      reason=f"no {'/'.join(metric.concepts)} filed by {b.as_of}"))
        return
    concept, facts = chosen
    cur = latest_instant(facts)
    b.add_value(metric.key, metric.name, metric.unit, cur, f"{concept} at the latest balance-sheet date", "")
    year_ago = year_ago_end([f.end for f in facts if f.start is None], cur.end) if cur is not None else None
    if year_ago is not None:  # no balance-sheet date a year earlier: no prior (not the latest one again)
        prior = latest_instant(facts, near=year_ago)
        if prior is not None:
            b.add_value(f"{metric.key}_prior", f"{metric.name}, one year earlier", metric.unit, prior,
                        f"{concept} at the balance-sheet date a year before", "", anchor=metric.key)


def _instant_at(b: _Builder, concept: str, end: date) -> PeriodValue | None:
    return latest_instant([f for f in known_facts(b.cf, concept, USD, b.as_of) if f.end == end])


def _debt(b: _Builder) -> None:
    """Debt = long-term debt (non-current + current portion, else the total) + commercial paper, at one date."""
    nonc = latest_instant(known_facts(b.cf, DEBT_NONCURRENT, USD, b.as_of))
    total = latest_instant(known_facts(b.cf, DEBT_TOTAL, USD, b.as_of))
    base = nonc if nonc is not None and (total is None or nonc.end >= total.end) else total
    if base is None:
        b.degraded.append(Degradation(capability="fundamentals.total_debt",
                                      reason=f"no {DEBT_NONCURRENT} or {DEBT_TOTAL} filed by {b.as_of}"))
        return
    parts = [base]
    if base is nonc:
        cur = next((v for c in DEBT_CURRENT if (v := _instant_at(b, c, base.end)) is not None), None)
        parts += [cur] if cur is not None else []
    cp = _instant_at(b, COMMERCIAL_PAPER, base.end)
    parts += [cp] if cp is not None else []
    comps = tuple(c for p in parts for c in p.components)
    pv = PeriodValue(value=sum(p.value for p in parts), start=None, end=base.end, components=comps)
    names = " + ".join(p.components[0].fact.qualified for p in parts) + f" at {base.end}"
    b.add_value("total_debt", "Total debt", USD, pv, names, "")


def _latest_shares(b: _Builder) -> tuple[str, str, PeriodValue] | None:
    """(concept, span, value) of the diluted weighted-average shares of the latest quarter (a 10-K alone: its fiscal
    year), on the share basis in force at the as-of date: a split after the filing multiplies them as it divides
    EPS."""
    basis = b.eps_split_factor()
    for concept in SHARES_DILUTED:
        facts = known_facts(b.cf, concept, SHARES, b.as_of)
        end = latest_duration_end(facts) if facts else None
        if end is None:
            continue
        for days, span in ((QUARTER_DAYS, "quarter"), (YEAR_DAYS, "fiscal year")):
            pv = period_value(facts, end, days, split_factor=lambda f: 1.0 / basis(f))
            if pv is not None:
                return concept, span, pv
    return None


def _shares_and_cash(b: _Builder) -> None:
    """The inputs of enterprise value: diluted shares (``_latest_shares``) and cash at the latest balance-sheet
    date."""
    shares = _latest_shares(b)
    if shares is None:
        b.degraded.append(Degradation(capability="fundamentals.shares_diluted_quarter",
                                      reason=f"no {' / '.join(SHARES_DILUTED)} for a quarter filed by {b.as_of}"))
    else:
        concept, span, pv = shares
        b.add_value("shares_diluted_quarter", f"Diluted weighted-average shares, latest {span}", SHARES, pv,
                    f"{concept} over the latest {span}, on the share basis at the as-of date", "")
    cash = next((v for c in CASH if (v := latest_instant(known_facts(b.cf, c, USD, b.as_of))) is not None), None)
    b.add_value("cash", "Cash and cash equivalents", USD, cash, "the cash concept at the latest balance-sheet date",
                f"no {' / '.join(CASH)} filed by {b.as_of}")


def compute_fundamentals(
    cf: CompanyFacts, as_of: date, *, splits: Sequence[tuple[date, float]] = (),
) -> FundamentalsResult:
    """Point-in-time fundamentals of one company as of ``as_of`` (see the module docstring)."""
    b = _Builder(cf, as_of, splits)
    for m in METRICS:
        (_flows if m.flow else _instants)(b, m)
    _debt(b)
    _shares_and_cash(b)
    for k, label in (("revenue", "Revenue"), ("net_income", "Net income"), ("eps_diluted", "Diluted EPS")):
        b.add_growth(f"{k}_growth_yoy", f"{label} growth, latest quarter vs a year earlier",
                     f"{k}_quarter", f"{k}_quarter_prior")
        b.add_growth(f"{k}_growth_ttm", f"{label} growth, TTM vs prior TTM", f"{k}_ttm", f"{k}_ttm_prior")
    for k, label in (("gross", "gross_profit"), ("operating", "operating_income"), ("net", "net_income")):
        b.add_ratio(f"{k}_margin_ttm", f"{k.capitalize()} margin (TTM)", f"{label}_ttm / revenue_ttm",
                    f"{label}_ttm", "revenue_ttm")
        b.add_margin_change(f"{k}_margin_change_ttm", f"{k.capitalize()} margin (TTM), change on a year earlier",
                            label)
    b.add_ratio("roe_ttm", "Return on equity (TTM)",
                "net_income_ttm / avg(stockholders_equity, stockholders_equity_prior)",
                "net_income_ttm", ("stockholders_equity", "stockholders_equity_prior"))
    b.add_ratio("roa_ttm", "Return on assets (TTM)", "net_income_ttm / avg(total_assets, total_assets_prior)",
                "net_income_ttm", ("total_assets", "total_assets_prior"))
    b.add_ratio("debt_to_equity", "Debt to equity", "total_debt / stockholders_equity", "total_debt",
                "stockholders_equity")
    return FundamentalsResult(figures=tuple(b.figures), degraded=tuple(b.degraded), values=b.values)


def pe_ratio(eps: PeriodValue, close: float, bar_day: date, as_of: date, price_basis_day: date | None,
             splits: Sequence[tuple[date, float]], *, price_provenance: dict[str, Any]) -> Figure:
    """P/E = close / TTM diluted EPS, with EPS moved to the price series' split basis (see module docstring)."""
    basis = price_basis_day or bar_day
    k = split_factor_between(splits, as_of, basis)
    eps_on_price_basis = eps.value / k
    value = None if eps_on_price_basis <= 0 else close / eps_on_price_basis
    return Figure(
        id="pe_ttm", name="Price / earnings (TTM diluted EPS)", value=value, unit="ratio",
        formula="last_close / (eps_diluted_ttm / split_factor_after_as_of)",
        inputs={"last_close": close, "eps_diluted_ttm": eps.value, "split_factor_after_as_of": k,
                "eps_on_price_basis": eps_on_price_basis},
        as_of=max(bar_day, eps.known_at),
        provenance={"source": "sec_edgar+yahoo_finance", "figures": ["last_close", "eps_diluted_ttm"],
                    "price_bar": bar_day, "price_basis_day": basis, "eps": eps.provenance(),
                    "price": price_provenance,
                    "note": "" if value is not None else "TTM EPS <= 0: P/E not meaningful"},
    )


def ev_to_sales(res: FundamentalsResult, close: float, bar_day: date, as_of: date, price_basis_day: date | None,
                splits: Sequence[tuple[date, float]], *, price_provenance: dict[str, Any]) -> Figure | None:
    """EV / sales = (close × diluted shares + total debt − cash) / TTM revenue: the valuation that still means
    something when earnings are negative. Shares move to the price series' split basis as EPS does for P/E. None
    when an input is missing (the missing input's own degraded line says why)."""
    v = res.values
    shares, revenue = v.get("shares_diluted_quarter"), v.get("revenue_ttm")
    if shares is None or revenue is None or revenue.value <= 0:
        return None  # the caller names what is missing
    debt, cash = v.get("total_debt"), v.get("cash")
    k = split_factor_between(splits, as_of, price_basis_day or bar_day)
    market_cap = close * shares.value * k
    ev = market_cap + (debt.value if debt else 0.0) - (cash.value if cash else 0.0)
    known = [shares.known_at, revenue.known_at, bar_day] + [x.known_at for x in (debt, cash) if x is not None]
    missing = [n for n, x in (("total_debt", debt), ("cash", cash)) if x is None]
    return Figure(
        id="ev_to_sales_ttm", name="Enterprise value / sales (TTM)", value=ev / revenue.value, unit="ratio",
        formula="(last_close × shares_diluted_quarter × split_factor_after_as_of + total_debt − cash) / revenue_ttm",
        inputs={"last_close": close, "shares_diluted_quarter": shares.value, "split_factor_after_as_of": k,
                "market_cap": market_cap, "total_debt": debt.value if debt else None,
                "cash": cash.value if cash else None, "enterprise_value": ev, "revenue_ttm": revenue.value},
        as_of=max(known),
        provenance={"source": "sec_edgar+yahoo_finance", "figures": ["last_close", "shares_diluted_quarter",
                                                                     "total_debt", "cash", "revenue_ttm"],
                    "shares": shares.provenance(), "revenue": revenue.provenance(), "price": price_provenance,
                    "note": f"taken as 0: {', '.join(missing)}" if missing else ""})
