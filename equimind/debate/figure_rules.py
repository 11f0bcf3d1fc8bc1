"""The offline analyst's figure rules: ONE table of thresholds on computed figures (growth, margins, returns,
leverage, valuation, momentum, tone change), and the aliases by which a figure's id or name finds its row.

Source: hand-written thresholds, documented in docs/decisions/0003-offline-judge-rule.md. A rule fires when
lo < x < hi (None = open); per (figure, relative_to, side) only the first matching row fires, so rows are ordered from
strongest to weakest. Every row is part of the rules fingerprint (``debate.judge.tables_repr``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from equimind.core.research import Figure, Speaker
from equimind.debate.records import Theme

BULL = Speaker.BULL
BEAR = Speaker.BEAR


class ValueKind(StrEnum):
    FRACTION = "fraction"  # 0.12 == 12 %; a unit of %, pct or percent is divided by 100
    MULTIPLE = "multiple"  # e.g. debt/equity 1.5; a % unit is divided by 100
    INDEX = "index"  # RSI 0-100, MACD histogram: used as is
    PRICE = "price"  # currency amounts (prices, EPS) and P/E: used as is
    NOISE_Z = "noise_z"  # a change figure's Poisson-noise z (inputs["z"] = (new - old) / sqrt(new + old))


@dataclass(frozen=True)
class FigureRule:
    figure: str
    side: Speaker
    lo: float | None
    hi: float | None
    strength: float
    theme: Theme
    template: str  # fields: {value} {ref} {x} (x = value / ref - 1 for relative rules, else value)
    kind: ValueKind
    relative_to: str | None = None


def _r(figure: str, side: Speaker, lo: float | None, hi: float | None, strength: float, theme: Theme,
       template: str, kind: ValueKind, relative_to: str | None = None) -> FigureRule:
    return FigureRule(figure, side, lo, hi, strength, theme, template, kind, relative_to)


_F, _M, _I, _P = ValueKind.FRACTION, ValueKind.MULTIPLE, ValueKind.INDEX, ValueKind.PRICE
_Z = ValueKind.NOISE_Z
_G, _PR, _V = Theme.GROWTH, Theme.PROFITABILITY, Theme.VALUATION
FIGURE_RULES: tuple[FigureRule, ...] = (
    _r("revenue_growth_yoy", BULL, 0.25, None, 0.8, _G, "Revenue grew {value:.1%} year over year", _F),
    _r("revenue_growth_yoy", BULL, 0.05, None, 0.5, _G, "Revenue grew {value:.1%} year over year", _F),
    _r("revenue_growth_yoy", BEAR, None, -0.10, 0.8, _G, "Revenue fell {value:.1%} year over year", _F),
    _r("revenue_growth_yoy", BEAR, None, 0.0, 0.5, _G, "Revenue fell {value:.1%} year over year", _F),
    _r("revenue_growth_ttm", BULL, 0.25, None, 0.6, _G, "Trailing-twelve-month revenue grew {value:.1%}", _F),
    _r("revenue_growth_ttm", BULL, 0.05, None, 0.4, _G, "Trailing-twelve-month revenue grew {value:.1%}", _F),
    _r("revenue_growth_ttm", BEAR, None, 0.0, 0.5, _G, "Trailing-twelve-month revenue fell {value:.1%}", _F),
    _r("net_income_growth_yoy", BULL, 0.20, None, 0.6, _PR, "Net income grew {value:.1%} year over year", _F),
    _r("net_income_growth_yoy", BEAR, None, -0.10, 0.6, _PR, "Net income fell {value:.1%} year over year", _F),
    _r("gross_margin", BULL, 0.50, None, 0.4, _PR, "Gross margin is high at {value:.1%}", _F),
    _r("gross_margin", BEAR, None, 0.20, 0.4, _PR, "Gross margin is thin at {value:.1%}", _F),
    _r("operating_margin", BULL, 0.25, None, 0.5, _PR, "Operating margin is strong at {value:.1%}", _F),
    _r("operating_margin", BEAR, None, 0.05, 0.5, _PR, "Operating margin is weak at {value:.1%}", _F),
    _r("net_margin", BULL, 0.20, None, 0.4, _PR, "Net margin is {value:.1%}", _F),
    _r("net_margin", BEAR, None, 0.0, 0.6, _PR, "The company is loss-making (net margin {value:.1%})", _F),
    # the margin's trend: a change of three points of revenue on a year earlier (stated, not fitted; ADR 0019)
    _r("operating_margin_change_ttm", BULL, 0.03, None, 0.4, _PR,
       "Operating margin (TTM) widened: {value:+.1%} of revenue on a year earlier", _F),
    _r("operating_margin_change_ttm", BEAR, None, -0.03, 0.5, _PR,
       "Operating margin (TTM) narrowed: {value:+.1%} of revenue on a year earlier", _F),
    _r("roe", BULL, 0.20, None, 0.4, _PR, "Return on equity is {value:.1%}", _F),
    _r("roe", BEAR, None, 0.05, 0.4, _PR, "Return on equity is only {value:.1%}", _F),
    _r("roa", BULL, 0.10, None, 0.3, _PR, "Return on assets is {value:.1%}", _F),
    _r("roa", BEAR, None, 0.0, 0.4, _PR, "Return on assets is negative ({value:.1%})", _F),
    _r("debt_to_equity", BEAR, 2.0, None, 0.6, Theme.LEVERAGE, "Leverage is high: debt/equity {value:.2f}", _M),
    _r("debt_to_equity", BULL, None, 0.5, 0.3, Theme.LEVERAGE, "Balance sheet is light: debt/equity {value:.2f}",
       _M),
    _r("pe_ttm", BEAR, 60.0, None, 0.7, _V, "Valuation is stretched: P/E (TTM) {value:.1f}", _P),
    _r("pe_ttm", BEAR, 35.0, None, 0.5, _V, "Valuation is rich: P/E (TTM) {value:.1f}", _P),
    _r("pe_ttm", BEAR, None, 0.0, 0.5, _V, "P/E (TTM) is negative ({value:.1f}): no earnings support", _P),
    _r("pe_ttm", BULL, 0.0, 15.0, 0.5, _V, "Valuation is undemanding: P/E (TTM) {value:.1f}", _P),
    _r("eps_ttm", BEAR, None, 0.0, 0.5, _PR, "Trailing EPS is negative ({value:.2f})", _P),
    _r("rsi_14", BEAR, 70.0, None, 0.4, Theme.MOMENTUM, "RSI(14) at {value:.0f} is overbought (above 70)", _I),
    _r("rsi_14", BULL, None, 30.0, 0.4, Theme.MOMENTUM, "RSI(14) at {value:.0f} is oversold (below 30)", _I),
    _r("macd_hist", BULL, 0.0, None, 0.25, Theme.MOMENTUM, "MACD histogram is positive ({value:.2f})", _I),
    _r("macd_hist", BEAR, None, 0.0, 0.25, Theme.MOMENTUM, "MACD histogram is negative ({value:.2f})", _I),
    _r("return_3m", BULL, 0.15, None, 0.4, Theme.MOMENTUM, "The stock returned {value:.1%} over three months", _F),
    _r("return_3m", BEAR, None, -0.15, 0.4, Theme.MOMENTUM, "The stock returned {value:.1%} over three months", _F),
    _r("risk_factors_negative_change", BEAR, 2.0, None, 0.4, Theme.TONE,
       "Risk-factor language turned more negative: {value:+.1f} negative words per 1,000 vs the prior filing", _I),
    _r("risk_factors_negative_change", BULL, None, -2.0, 0.3, Theme.TONE,
       "Risk-factor language eased: {value:+.1f} negative words per 1,000 vs the prior filing", _I),
    _r("news_tone", BULL, 0.2, None, 0.25, Theme.TONE, "News headline tone is positive ({value:+.2f})", _I),
    _r("news_tone", BEAR, None, -0.2, 0.25, Theme.TONE, "News headline tone is negative ({value:+.2f})", _I),
    # web intelligence (docs/decisions/0018-web-intelligence-rules.md): a change counts only beyond twice its
    # Poisson noise (|z| > 2), a significance level, not a fitted threshold; weak strengths, as for tone
    _r("jobs_change_90d", BULL, 2.0, None, 0.25, Theme.ACTIVITY,
       "Open job postings rose {change:+.0%} in 90 days ({old:.0f} → {new:.0f}; z {value:+.1f})", _Z),
    _r("jobs_change_90d", BEAR, None, -2.0, 0.25, Theme.ACTIVITY,
       "Open job postings fell {change:+.0%} in 90 days ({old:.0f} → {new:.0f}; z {value:+.1f})", _Z),
    _r("github_commits_change_qoq", BULL, 2.0, None, 0.15, Theme.ACTIVITY,
       "Public GitHub commits rose {change:+.0%} on the prior quarter ({old:.0f} → {new:.0f}; z {value:+.1f})", _Z),
    _r("github_commits_change_qoq", BEAR, None, -2.0, 0.15, Theme.ACTIVITY,
       "Public GitHub commits fell {change:+.0%} on the prior quarter ({old:.0f} → {new:.0f}; z {value:+.1f})", _Z),
    _r("volatility_realised", BEAR, 0.60, None, 0.3, Theme.VOLATILITY,
       "Realised volatility is high at {value:.1%} annualised", _F),
    _r("last_close", BULL, 0.0, None, 0.4, Theme.MOMENTUM,
       "Price {value:.2f} is {x:+.1%} vs its 200-day average ({ref:.2f})", _P, "sma_200"),
    _r("last_close", BEAR, None, 0.0, 0.4, Theme.MOMENTUM,
       "Price {value:.2f} is {x:+.1%} vs its 200-day average ({ref:.2f})", _P, "sma_200"),
    _r("sma_50", BULL, 0.0, None, 0.3, Theme.MOMENTUM,
       "50-day average ({value:.2f}) is above the 200-day ({ref:.2f})", _P, "sma_200"),
    _r("sma_50", BEAR, None, 0.0, 0.3, Theme.MOMENTUM,
       "50-day average ({value:.2f}) is below the 200-day ({ref:.2f})", _P, "sma_200"),
    _r("last_close", BEAR, None, -0.30, 0.4, Theme.MOMENTUM,
       "Price is {x:.1%} below its 52-week high ({ref:.2f})", _P, "52w_high"),
    _r("last_close", BULL, -0.05, None, 0.25, Theme.MOMENTUM,
       "Price is within 5% of its 52-week high ({ref:.2f})", _P, "52w_high"),
    _r("last_close", BEAR, None, 0.05, 0.35, Theme.MOMENTUM,
       "Price is within 5% of its 52-week low ({ref:.2f})", _P, "52w_low"),
)

# Other ids/names for the same figure (lower-case), including the ids equimind.analytics emits (gross_margin_ttm,
# roe_ttm, high_52w, realized_vol_252d, ...). Figures matching no key are ignored, never guessed.
FIGURE_ALIASES: dict[str, str] = {
    "gross_margin_ttm": "gross_margin", "operating_margin_ttm": "operating_margin", "net_margin_ttm": "net_margin",
    "roe_ttm": "roe", "roa_ttm": "roa", "realized_vol_252d": "volatility_realised",
    "rsi": "rsi_14", "rsi14": "rsi_14", "pe": "pe_ttm", "pe_ratio": "pe_ttm", "p_e_ttm": "pe_ttm",
    "close": "last_close", "price": "last_close", "high_52w": "52w_high", "low_52w": "52w_low",
    "realized_volatility": "volatility_realised", "volatility_realized": "volatility_realised",
    "debt_equity": "debt_to_equity", "return_63d": "return_3m", "macd_histogram": "macd_hist",
    "eps_diluted_ttm": "eps_ttm",
}
_PERCENT_UNITS = frozenset({"%", "pct", "percent", "percentage"})
_PLAIN_UNITS = frozenset({"", "ratio", "fraction", "x", "decimal", "multiple", "times"})


def canonical_figure_key(fig: Figure) -> str | None:
    """The rule-table key for a figure: its id, else its name (each through FIGURE_ALIASES); None when neither is
    a key the table knows (the figure is then ignored, never guessed)."""
    known = {r.figure for r in FIGURE_RULES} | {r.relative_to for r in FIGURE_RULES if r.relative_to}
    for candidate in (fig.id, fig.name):
        key = candidate.strip().lower()
        key = FIGURE_ALIASES.get(key, key)
        if key in known:
            return key
    return None


def figure_value(fig: Figure, kind: ValueKind) -> float | None:
    """The figure's value on the rule's scale, or None when it has no value or an unusable unit."""
    if fig.value is None:
        return None
    if kind is ValueKind.NOISE_Z:
        z = fig.inputs.get("z")
        return float(z) if isinstance(z, int | float) else None
    if kind in (ValueKind.INDEX, ValueKind.PRICE):
        return float(fig.value)
    unit = fig.unit.strip().lower()
    if unit in _PERCENT_UNITS:
        return float(fig.value) / 100.0
    return float(fig.value) if unit in _PLAIN_UNITS else None


def rule_fires(rule: FigureRule, x: float) -> bool:
    return (rule.lo is None or x > rule.lo) and (rule.hi is None or x < rule.hi)
