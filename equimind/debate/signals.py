"""The offline analyst's rule tables: text cues, figure rules, hedges, prompt-injection patterns, sentence splitting.

Every threshold lives here, in one place, and is documented in docs/decisions/0003-offline-judge-rule.md. To adjust
a rule, edit its row; ``rules_fingerprint()`` changes with it and is recorded in every offline output.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum

from equimind.core.research import Figure, Speaker
from equimind.debate.records import Theme
from equimind.lexicon.text import TEXT_CACHE

BULL = Speaker.BULL
BEAR = Speaker.BEAR
RULES_VERSION = "1"


# ---------------------------------------------------------------------------------------------------------------
# Text cues: transparent keyword patterns for catalysts (bull) and risks (bear). Case-insensitive.


@dataclass(frozen=True)
class TextCue:
    name: str
    side: Speaker
    theme: Theme
    strength: float
    label: str
    pattern: re.Pattern[str]


def _cue(name: str, side: Speaker, theme: Theme, strength: float, label: str, pattern: str) -> TextCue:
    return TextCue(name, side, theme, strength, label, re.compile(pattern, re.IGNORECASE))


_REV = r"(?<!cost of )\b(?:revenue|revenues|net sales|sales)\b"
_GAP = r"(?:[^.;]|\.(?=\d))"  # any character but a sentence stop; decimal points allowed
TEXT_CUES: tuple[TextCue, ...] = (
    # bull: catalysts and positive results stated in the filing
    _cue("record_results", BULL, Theme.GROWTH, 0.7, "Record results",
         r"\brecord\b" + _GAP + r"{0,40}\b(?:revenue|sales|quarter|year|results|earnings|cash flow)"),
    _cue("revenue_up", BULL, Theme.GROWTH, 0.6, "Revenue growth",
         _REV + _GAP + r"{0,60}?\b(?:up|increased|grew|rose|growth of)\b" + _GAP + r"{0,25}?\d+(?:\.\d+)?\s?%"),
    _cue("earnings_up", BULL, Theme.PROFITABILITY, 0.5, "Earnings growth",
         r"\b(?:net income|operating income|earnings per share|diluted earnings)\b" + _GAP + r"{0,60}?"
         r"\b(?:up|increased|grew|rose)\b"),
    _cue("strong_demand", BULL, Theme.DEMAND, 0.5, "Strong demand",
         r"\b(?:strong|robust|growing|increasing|sustained|record|exceptional) demand\b|"
         r"\bdemand\b" + _GAP + r"{0,40}\b(?:remains|remained|continues to be|was) (?:strong|robust)\b"),
    _cue("margin_expansion", BULL, Theme.PROFITABILITY, 0.5, "Margin expansion",
         r"\b(?:gross|operating) margins? (?:increased|expanded|improved)\b|\bmargin expansion\b"),
    _cue("guidance_raised", BULL, Theme.GUIDANCE, 0.6, "Guidance raised",
         r"\b(?:raised|raising|increased|increasing) (?:our |its |the )?(?:full[- ]year |annual )?"
         r"(?:guidance|outlook|forecast)\b"),
    _cue("product_ramp", BULL, Theme.GROWTH, 0.4, "New products ramping",
         r"\b(?:began shipping|started shipping|launched|introduced (?:our |a |the )?new|"
         r"ramp(?:ed|ing)? (?:of|production|up))\b|\brevenue ramp\b"),
    _cue("backlog_up", BULL, Theme.GROWTH, 0.5, "Backlog growth",
         r"\b(?:backlog|remaining performance obligations)\b" + _GAP + r"{0,60}\b(?:increased|grew|up)\b"),
    _cue("capital_return", BULL, Theme.CAPITAL_RETURN, 0.4, "Capital returned to shareholders",
         r"\b(?:repurchased|share repurchases?|buybacks?|increased (?:our |the )?(?:quarterly )?dividend)\b"),
    # bear: risks stated in the filing
    _cue("export_controls", BEAR, Theme.REGULATION, 0.6, "Export controls",
         r"\bexport (?:controls?|restrictions?|licen[cs]e requirements?|regulations?)\b|\bentity list\b"),
    _cue("trade_tariffs", BEAR, Theme.REGULATION, 0.45, "Tariffs and trade barriers",
         r"\btariffs?\b|\btrade (?:wars?|restrictions?|barriers?|tensions?)\b|\bsanctions\b"),
    _cue("customer_concentration", BEAR, Theme.CONCENTRATION, 0.5, "Customer concentration",
         r"\b(?:a (?:limited|small) number of|few) (?:customers|partners|distributors)\b|"
         r"\bconcentration of (?:our )?(?:customers|revenue|credit risk)\b|\b(?:customer|revenue) concentration\b|"
         r"\b(?:accounted for|represented) (?:approximately )?\d+(?:\.\d+)?\s?% of (?:our )?(?:total )?"
         r"(?:revenue|net sales|accounts receivable)"),
    _cue("supply_constraints", BEAR, Theme.SUPPLY, 0.5, "Supply constraints",
         r"\bsupply (?:constraints?|shortages?)\b|\bsupply chain (?:disruptions?|constraints?)\b|"
         r"\b(?:shortages?|constrained supply|capacity constraints?)\b"),
    _cue("guidance_cut", BEAR, Theme.GUIDANCE, 0.7, "Guidance cut",
         r"\b(?:lowered|lowering|reduced|reducing|cut|withdrew|withdrawn|suspended) (?:our |its |the )?"
         r"(?:full[- ]year |annual )?(?:guidance|outlook|forecast)\b"),
    _cue("revenue_down", BEAR, Theme.GROWTH, 0.55, "Revenue decline",
         _REV + _GAP + r"{0,60}?(?<!-)\b(?:down|decreased|declined|fell)\b"),
    _cue("margin_pressure", BEAR, Theme.PROFITABILITY, 0.5, "Margin pressure",
         r"\b(?:gross|operating) margins? (?:decreased|declined|contracted|compressed)\b|"
         r"\bmargin (?:pressure|compression)\b"),
    _cue("charges", BEAR, Theme.PROFITABILITY, 0.45, "Charges and write-downs",
         r"\b(?:impairments?|write-?downs?|write-?offs?|excess inventory|inventory provisions?|"
         r"restructuring charges?)\b"),
    _cue("demand_weakness", BEAR, Theme.DEMAND, 0.5, "Weakening demand",
         r"\b(?:weak(?:er|ening)?|soft(?:er|ening)?|declining|lower|reduced) demand\b|"
         r"\bdemand\b" + _GAP + r"{0,40}\b(?:diminished|declined|weakened|softened)\b"),
    _cue("competition", BEAR, Theme.COMPETITION, 0.45, "Competitive pressure",
         r"\b(?:intense|increased|intensifying|significant) competition\b|"
         r"\bcompetitive (?:pressures?|disadvantages?)\b|\bprice competition\b|\blose market share\b"),
    _cue("going_concern", BEAR, Theme.LEGAL, 0.8, "Going-concern doubt or material weakness",
         r"\bsubstantial doubt\b" + _GAP + r"{0,60}\bgoing concern\b|\bmaterial weakness(?:es)?\b"),
    _cue("litigation", BEAR, Theme.LEGAL, 0.45, "Litigation and investigations",
         r"\b(?:class action|securities litigation|lawsuits?|antitrust|subpoenas?|investigations? by)\b"),
    _cue("geopolitical", BEAR, Theme.REGULATION, 0.4, "Geopolitical risk",
         r"\bgeopolitical (?:tensions?|risks?|conflicts?|developments?)\b|\bthe war in\b"),
)

NEGATIONS = frozenset({"no", "not", "never", "without", "neither", "nor", "none"})
NEGATION_WINDOW = 3
HEDGES = frozenset({"may", "could", "might", "would", "possible", "potential", "if"})
HEDGE_FACTOR = 0.8
NEW_RISK_BONUS = 0.15
NEW_RISK_PROBE = 80  # characters compared at each end of a risk sentence
MIN_CLAIM_WORDS = 6  # a shorter "sentence" is a heading or a fragment ("Concentration of Revenue"), not a statement
TONE_MIN_POLAR_WORDS = 10
TONE_DELTA = 0.15
TONE_STRENGTH = 0.4
_WORDS = re.compile(r"[a-z]+")


def negated(text: str, match_start: int) -> bool:
    """True when a negation word is among the three words before ``match_start``."""
    before = _WORDS.findall(text[max(0, match_start - 60):match_start].lower())
    return bool(NEGATIONS.intersection(before[-NEGATION_WINDOW:]))


def hedged(text: str) -> bool:
    return bool(HEDGES.intersection(_WORDS.findall(text.lower())))


@functools.lru_cache(maxsize=4 * TEXT_CACHE)
def sentence_cues(sentence: str) -> tuple[tuple[TextCue, ...], float]:
    """The strongest unnegated cue per side in ``sentence`` (in side order of first appearance) and its weight
    factor (HEDGE_FACTOR when hedged). Cached: the same retrieved sentences are read in every run on a ticker."""
    best: dict[Speaker, TextCue] = {}
    for cue in TEXT_CUES:
        m = cue.pattern.search(sentence)
        if m is None or negated(sentence, m.start()):
            continue
        if cue.side not in best or cue.strength > best[cue.side].strength:
            best[cue.side] = cue
    return tuple(best.values()), (HEDGE_FACTOR if hedged(sentence) else 1.0)


# ---------------------------------------------------------------------------------------------------------------
# Figure rules: ONE table. A rule fires when lo < x < hi (None = open); per (figure, relative_to, side) only the
# first matching row fires, so order rows from strongest to weakest.


class ValueKind(StrEnum):
    FRACTION = "fraction"  # 0.12 == 12 %; a unit of %, pct or percent is divided by 100
    MULTIPLE = "multiple"  # e.g. debt/equity 1.5; a % unit is divided by 100
    INDEX = "index"  # RSI 0-100, MACD histogram: used as is
    PRICE = "price"  # currency amounts (prices, EPS) and P/E: used as is


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
    if kind in (ValueKind.INDEX, ValueKind.PRICE):
        return float(fig.value)
    unit = fig.unit.strip().lower()
    if unit in _PERCENT_UNITS:
        return float(fig.value) / 100.0
    return float(fig.value) if unit in _PLAIN_UNITS else None


def rule_fires(rule: FigureRule, x: float) -> bool:
    return (rule.lo is None or x > rule.lo) and (rule.hi is None or x < rule.hi)


# ---------------------------------------------------------------------------------------------------------------
# Prompt injection: instruction-like text inside a filing is data, and never evidence.

INJECTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:instructions?|prompts?|directions|rules|guidelines)\b",
    r"\b(?:you are now|pretend to be|system prompt|developer message)\b",
    r"\b(?:rate|rating|recommend|classify|output)\b[^.\n]{0,40}\b(?:strong[_ ]buy|strong[_ ]sell)\b",
    r"\b(?:call|invoke)\s+(?:the\s+)?[\w.]+\s+(?:tool|function)\b",
    r"</?\s*(?:system|assistant|instructions?)\s*>",
))


# ---------------------------------------------------------------------------------------------------------------
# Sentences

_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+|\n\s*")
_ABBREV = frozenset({"inc", "corp", "co", "ltd", "no", "nos", "mr", "mrs", "ms", "dr", "vs", "etc", "e.g", "i.e",
                     "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "approx",
                     "fig", "st", "u.s", "u.k", "s.a", "n.a"})
_NEXT_OK = re.compile(r"[\"'“‘(\[]?[A-Z0-9$•]")


def _is_boundary(text: str, m: re.Match[str]) -> bool:
    if m.group().startswith("\n"):
        return True
    if not _NEXT_OK.match(text, m.end()):
        return False
    if text[m.start()] != ".":
        return True
    word = text[max(0, m.start() - 12):m.start()].split()[-1:] or [""]
    token = word[0].lower().lstrip("(\"'“")
    return not (token in _ABBREV or len(token) == 1 or "." in token)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence in ``text`` (trimmed; paragraph breaks always end a sentence)."""
    return list(_sentence_spans(text))


@functools.lru_cache(maxsize=TEXT_CACHE)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if not _is_boundary(text, m):
            continue
        end = m.start() + (0 if m.group().startswith("\n") else len(m.group().rstrip()))
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        seg = text[s:e]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            out.append((s + lead, s + trail))
    return tuple(out)


def injection_spans(text: str) -> list[tuple[int, int]]:
    """Sentences of ``text`` that contain instruction-like text (whole sentences, merged, sorted)."""
    hits = [m.span() for p in INJECTION_PATTERNS for m in p.finditer(text)]
    if not hits:
        return []
    flagged = {(s, e) for s, e in split_sentences(text) for hs, he in hits if hs < e and s < he}
    return sorted(flagged)


def tables_repr() -> str:
    """Every table and constant above as text (hashed with the judge's constants into the rules fingerprint)."""
    cues = [(c.name, c.side.value, c.theme.value, c.strength, c.pattern.pattern) for c in TEXT_CUES]
    constants = (HEDGE_FACTOR, NEW_RISK_BONUS, NEW_RISK_PROBE, TONE_MIN_POLAR_WORDS, TONE_DELTA, TONE_STRENGTH)
    parts = [RULES_VERSION, repr(cues), repr(FIGURE_RULES), repr(sorted(FIGURE_ALIASES.items())),
             repr(sorted(NEGATIONS)), repr(sorted(HEDGES)), repr(constants),
             repr([p.pattern for p in INJECTION_PATTERNS])]
    return "\n".join(parts)
