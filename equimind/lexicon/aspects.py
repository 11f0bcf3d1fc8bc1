"""The four research aspects and the rules by which one piece of evidence covers them.

An aspect is covered by a node whose section matches the aspect's sections (Item 1A → risks, Item 7/8 →
fundamentals), whose form belongs to it (``prices`` → valuation/technicals), or whose text holds ≥ 2 distinct terms of
the aspect's lexicon; recent events need an event-bearing form (10-Q, 8-K, 6-K, news) filed ≤ 120 days before the
as-of date. Names of available figures / data kinds cover fundamentals and valuation/technicals. Shared by the critic
(``research.critic``), the query rewriter and research memory; pure, no agent code.

Source: hand-written. The section names are those of SEC Regulation S-K (Item 1A Risk Factors, Item 7 MD&A, Item 7A
market risk, Item 8 financial statements); the terms are the wording of those sections and of common market-data
measures (P/E, RSI, MACD, Bollinger bands); the event forms are SEC names (``lexicon.forms``).
"""

from __future__ import annotations

import functools
import re
from datetime import date
from enum import StrEnum

from equimind.core.search import EvidenceNode
from equimind.lexicon.forms import CURRENT_REPORT_FORMS, QUARTERLY_FORMS
from equimind.lexicon.text import TEXT_CACHE


class Aspect(StrEnum):
    FUNDAMENTALS = "fundamentals"
    RISKS = "risks"
    VALUATION_TECHNICALS = "valuation_technicals"
    RECENT_EVENTS = "recent_events"
    WEB_ACTIVITY = "web_activity"  # hiring (job postings) and engineering activity (GitHub): required when asked


CORE_ASPECTS: tuple[Aspect, ...] = (Aspect.FUNDAMENTALS, Aspect.RISKS, Aspect.VALUATION_TECHNICALS,
                                    Aspect.RECENT_EVENTS)
# A question that names one of these asks about hiring or engineering activity (whole words, case-insensitive).
WEB_ACTIVITY_WORDS: tuple[str, ...] = ("hiring", "hire", "hires", "job", "jobs", "job postings", "openings",
                                       "open roles", "headcount", "recruiting", "github", "commits", "open source",
                                       "open-source", "developers", "contributors", "engineering activity")
_WEB_WORDS = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(w) for w in sorted(WEB_ACTIVITY_WORDS, key=len)[::-1])
                        + r")(?![\w-])", re.IGNORECASE)


def asks_web_activity(question: str) -> bool:
    """Whether the question asks about hiring or engineering activity (then the critic requires that aspect)."""
    return _WEB_WORDS.search(question) is not None


RECENT_WINDOW_DAYS = 120
MIN_TERM_HITS = 2

_TERMS: dict[Aspect, tuple[str, ...]] = {
    Aspect.FUNDAMENTALS: ("revenue", "revenues", "net income", "gross margin", "operating income", "net sales",
                          "earnings per share", "cash flow", "operating expenses", "cost of revenue", "segment",
                          "results of operations", "balance sheet", "liquidity", "total assets", "operating margin"),
    Aspect.RISKS: ("risk", "risks", "uncertain", "uncertainty", "adversely", "adverse effect", "could harm",
                   "competition", "competitive", "export control", "export controls", "litigation", "regulatory",
                   "concentration", "supply chain", "tariff", "tariffs", "cybersecurity", "volatility"),
    Aspect.VALUATION_TECHNICALS: ("p/e", "price-to-earnings", "price to earnings", "earnings multiple",
                                  "valuation multiple", "forward earnings", "market capitalization", "price target",
                                  "enterprise value", "ev/ebitda", "closing price", "moving average", "rsi",
                                  "relative strength index", "macd", "bollinger", "52-week", "trading volume"),
    Aspect.RECENT_EVENTS: (),
    Aspect.WEB_ACTIVITY: (),
}
_SECTIONS: dict[Aspect, tuple[str, ...]] = {
    Aspect.FUNDAMENTALS: ("item 7", "item 8", "management's discussion", "management’s discussion",
                          "financial statements", "results of operations"),
    Aspect.RISKS: ("item 1a", "risk factors", "item 7a", "market risk"),
    Aspect.VALUATION_TECHNICALS: (),
    Aspect.RECENT_EVENTS: (),
    Aspect.WEB_ACTIVITY: (),
}
_EVENT_FORMS = QUARTERLY_FORMS | CURRENT_REPORT_FORMS | {"news"}
_NAME_TOKENS: dict[Aspect, frozenset[str]] = {
    Aspect.FUNDAMENTALS: frozenset({"companyfacts", "revenue", "revenues", "eps", "margin", "income", "cash", "fcf",
                                    "roe", "roa", "debt", "assets", "sales", "ebitda", "fundamentals", "growth"}),
    Aspect.VALUATION_TECHNICALS: frozenset({"price", "prices", "close", "rsi", "macd", "sma", "ema", "bollinger",
                                            "pe", "ps", "pb", "ev", "valuation", "momentum", "volatility", "beta",
                                            "technicals", "drawdown", "returns"}),
    Aspect.WEB_ACTIVITY: frozenset({"jobs", "github"}),  # the ids of the web-intelligence figures
}
_TERM_PATTERNS = {a: re.compile(rf"(?<![\w/-])(?:{'|'.join(re.escape(t) for t in sorted(terms, key=len)[::-1])})"
                                r"(?![\w/-])", re.IGNORECASE) for a, terms in _TERMS.items() if terms}


def term_hits(text: str, aspect: Aspect) -> list[str]:
    """Distinct lexicon terms of ``aspect`` in ``text`` (lower-cased, in order of first appearance)."""
    return list(_term_hits(text, aspect))


@functools.lru_cache(maxsize=TEXT_CACHE)
def _term_hits(text: str, aspect: Aspect) -> tuple[str, ...]:
    # Cached: the critic asks this of the same retrieved passages in every round and every run on a ticker.
    pat = _TERM_PATTERNS.get(aspect)
    return tuple(dict.fromkeys(m.group(0).lower() for m in pat.finditer(text))) if pat else ()


def node_aspects(node: EvidenceNode, as_of: date) -> dict[Aspect, str]:
    """The aspects one node supports, each with the rule that fired."""
    out: dict[Aspect, str] = {}
    section = (node.section or "").lower()
    for aspect in (Aspect.FUNDAMENTALS, Aspect.RISKS, Aspect.VALUATION_TECHNICALS):
        sec = next((s for s in _SECTIONS[aspect] if s in section), None)
        hits = term_hits(node.text, aspect)
        if sec:
            out[aspect] = f"section '{node.section}'"
        elif aspect is Aspect.VALUATION_TECHNICALS and node.form == "prices":
            out[aspect] = "price data"
        elif len(hits) >= MIN_TERM_HITS:
            out[aspect] = "terms " + ", ".join(hits[:3])
    if node.form in _EVENT_FORMS and node.filed_at and 0 <= (as_of - node.filed_at).days <= RECENT_WINDOW_DAYS:
        out[Aspect.RECENT_EVENTS] = f"{node.form} filed {node.filed_at}"
    return out


def name_aspects(name: str) -> list[Aspect]:
    tokens = set(re.split(r"[^a-z0-9]+", name.lower()))
    return [a for a, vocab in _NAME_TOKENS.items() if tokens & vocab]

