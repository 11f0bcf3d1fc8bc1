"""Query rewriter: turns the critic's missing aspects into targeted sub-queries with filter hints.

Deterministic offline rule: for each missing aspect, in the order given, up to ``per_aspect`` templates (three
perspectives per aspect, below) are filled with the question's topic terms (``analytics.text.topic_terms``: question
words minus stopwords, evaluative words such as "growth"/"sustainable", the ticker and the company name). With no
topic terms the company name, else the ticker, stands in. E.g. "Is NVDA's data-center growth sustainable?" with RISKS
missing gives "risk factors data center demand concentration export controls".

Each query carries a ``FilterSpec`` hint: the ticker, the forms that hold the aspect (10-K/10-Q for fundamentals and
risks, 10-Q / 8-K / news for recent events), ``since = as_of − 120 days`` for recent events, and ``until`` capped at
the as-of date (``timeguard.as_of_filter``); plus the data kinds to fetch if the store has nothing (``FILL_WITH``).

With a pydantic-ai ``Model`` injected, the LLM writes the query texts (validated against ``LLMRewriteOutput``: every
missing aspect gets a query and no other aspect does); filters and fetch kinds still come from the aspect. Invalid
output gets one retry, then the templates answer and ``log`` says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError
from equimind.core.timeguard import as_of_filter
from equimind.lexicon.aspects import RECENT_WINDOW_DAYS, Aspect
from equimind.lexicon.text import topic_terms
from equimind.llm.structured import prompt_sha256, run_structured
from equimind.research.critic import FILL_WITH, CriticMode, DataKind

if TYPE_CHECKING:
    from pydantic_ai.models import Model

logger = logging.getLogger(__name__)

_FILINGS = ("10-K", "10-Q")

# aspect -> (perspective, template, forms); "{t}" is replaced by the topic terms.
TEMPLATES: dict[Aspect, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    Aspect.FUNDAMENTALS: (
        ("financial results", "{t} revenue growth gross margin operating income", _FILINGS),
        ("segment drivers", "{t} segment revenue drivers results of operations", _FILINGS),
        ("cash and balance sheet", "{t} cash flow liquidity capital expenditures", _FILINGS),
    ),
    Aspect.RISKS: (
        ("risk factors", "risk factors {t} demand concentration export controls", _FILINGS),
        ("competition and supply", "{t} competition supply chain constraints could adversely affect", _FILINGS),
        ("regulation and litigation", "{t} regulatory litigation uncertainty", (*_FILINGS, "8-K")),
    ),
    Aspect.VALUATION_TECHNICALS: (
        ("valuation", "{t} valuation earnings per share share price multiple", ()),
        ("market data", "{t} stock price market capitalization trading volume", ()),
        ("capital returns", "{t} share repurchases dividends market value of common stock", ("10-K",)),
    ),
    Aspect.RECENT_EVENTS: (
        ("latest quarter", "{t} latest quarter results compared with prior quarter", ("10-Q",)),
        ("announcements", "{t} announced agreement acquisition launch", ("8-K", "news")),
        ("outlook", "{t} outlook guidance next quarter expects", ("10-Q", "8-K", "news")),
    ),
    Aspect.WEB_ACTIVITY: (),  # figures, not passages: the critic asks the fetcher for them (DataKind.WEB)
}

REWRITER_INSTRUCTIONS = """You write search queries for an equity research retrieval system
(BM25 + dense search over SEC filings, prices and news). For each missing aspect listed, write 1 to 3 short keyword
queries (at most 20 words each), each from a different perspective, about the company and the question's topic.
Aspects: fundamentals (revenue, margins, segments, cash flow), risks (risk factors, competition, regulation,
concentration), valuation_technicals (valuation multiples, share price, technical indicators), recent_events (latest
quarter, announcements, guidance). Only write queries for the missing aspects given, and give each query its aspect
and a short perspective label."""


@dataclass(frozen=True)
class SubQuery:
    text: str
    aspect: Aspect
    perspective: str
    filters: FilterSpec
    fetch: tuple[DataKind, ...]

    def to_log(self) -> dict[str, Any]:
        f = self.filters
        return {"text": self.text, "aspect": self.aspect.value, "perspective": self.perspective,
                "filters": {"tickers": list(f.tickers), "forms": list(f.forms),
                            "since": f.since.isoformat() if f.since else None,
                            "until": f.until.isoformat() if f.until else None},
                "fetch": [k.value for k in self.fetch]}


@dataclass(frozen=True)
class RewriteResult:
    queries: tuple[SubQuery, ...]
    mode: CriticMode
    log: tuple[str, ...] = ()
    prompt_sha256: str | None = None

    @property
    def texts(self) -> list[str]:
        return [q.text for q in self.queries]

    def to_log(self) -> dict[str, Any]:
        return {"queries": [q.to_log() for q in self.queries], "mode": self.mode.value, "log": list(self.log),
                "prompt_sha256": self.prompt_sha256}


class LLMSubQuery(BaseModel):
    aspect: Aspect
    perspective: str = Field(min_length=1, max_length=60)
    text: str = Field(min_length=3, max_length=200)


class LLMRewriteOutput(BaseModel):
    queries: list[LLMSubQuery] = Field(min_length=1)


class QueryRewriter:
    """Writes sub-queries for missing aspects: templates offline, an LLM when a ``Model`` is injected."""

    def __init__(self, model: Model | None = None, *, per_aspect: int = 3,
                 recent_days: int = RECENT_WINDOW_DAYS) -> None:
        if not 1 <= per_aspect <= 3:
            raise ConfigError(f"per_aspect must be 1, 2 or 3 (templates per aspect), got {per_aspect}")
        if recent_days <= 0:
            raise ConfigError(f"recent_days must be a positive number of days, got {recent_days}")
        self.model = model
        self.per_aspect = per_aspect
        self.recent_days = recent_days

    def run(self, question: str, missing: Sequence[Aspect], *, ticker: str | None = None,
            company: str | None = None, as_of: date | None = None,
            base_filter: FilterSpec | None = None, words: Sequence[str] | None = None) -> RewriteResult:
        """Sub-queries for the ``missing`` aspects; ``words``: the question's words as the parse read them
        (``ParsedQuestion.words``), else read here."""
        aspects = list(dict.fromkeys(Aspect(a) for a in missing))
        if not aspects:
            return RewriteResult((), CriticMode.DETERMINISTIC, ("no missing aspects; nothing to rewrite",))
        exclude = [x for x in (ticker, company) if x]
        terms = " ".join(topic_terms(question if words is None else words, exclude)) or company or ticker or ""
        hint = _Hints(ticker, as_of, base_filter, self.recent_days)
        if self.model is None:
            return RewriteResult(self._templated(aspects, terms, hint), CriticMode.DETERMINISTIC,
                                 (f"templates filled with '{terms}'",))
        prompt = _prompt(question, aspects, ticker, company, as_of, terms)
        outcome = run_structured(self.model, LLMRewriteOutput, REWRITER_INSTRUCTIONS, prompt,
                                 lambda o: _check(o, aspects), "rewriter")
        out = outcome.output
        if not isinstance(out, LLMRewriteOutput):
            return RewriteResult(self._templated(aspects, terms, hint), CriticMode.FALLBACK,
                                 (*outcome.log, f"templates filled with '{terms}'"))
        queries: list[SubQuery] = []
        for aspect in aspects:
            mine = [q for q in out.queries if q.aspect is aspect][: self.per_aspect]
            queries.extend(hint.make(" ".join(q.text.split()), aspect, q.perspective, None) for q in mine)
        return RewriteResult(tuple(_unique(queries)), CriticMode.LLM, outcome.log,
                             prompt_sha256(REWRITER_INSTRUCTIONS))

    def _templated(self, aspects: list[Aspect], terms: str, hint: _Hints) -> tuple[SubQuery, ...]:
        queries = [hint.make(" ".join(template.format(t=terms).split()), aspect, perspective, forms)
                   for aspect in aspects
                   for perspective, template, forms in TEMPLATES[aspect][: self.per_aspect]]
        return tuple(_unique(queries))


@dataclass(frozen=True)
class _Hints:
    ticker: str | None
    as_of: date | None
    base: FilterSpec | None
    recent_days: int

    def make(self, text: str, aspect: Aspect, perspective: str, forms: tuple[str, ...] | None) -> SubQuery:
        return SubQuery(text=text, aspect=aspect, perspective=perspective, filters=self.filters(aspect, forms),
                        fetch=FILL_WITH[aspect])

    def filters(self, aspect: Aspect, forms: tuple[str, ...] | None) -> FilterSpec:
        base = self.base or FilterSpec()
        if forms is None:  # LLM query: the union of the aspect's template forms
            forms = tuple(dict.fromkeys(f for _, _, fs in TEMPLATES[aspect] for f in fs)) if all(
                fs for _, _, fs in TEMPLATES[aspect]) else ()
        since = base.since
        if aspect is Aspect.RECENT_EVENTS and self.as_of is not None:
            recent = self.as_of - timedelta(days=self.recent_days)
            since = recent if since is None else max(since, recent)
        tickers = base.tickers or ((self.ticker,) if self.ticker else ())
        spec = FilterSpec(tickers=tickers, since=since, until=base.until, sources=base.sources,
                          forms=base.forms or forms, doc_ids=base.doc_ids)
        return as_of_filter(spec, self.as_of)


def _unique(queries: list[SubQuery]) -> list[SubQuery]:
    seen: set[str] = set()
    out = []
    for q in queries:
        key = q.text.lower()
        if key and key not in seen:
            seen.add(key)
            out.append(q)
    return out


def _check(out: LLMRewriteOutput, aspects: list[Aspect]) -> str | None:
    given = {q.aspect for q in out.queries}
    extra = sorted(a.value for a in given - set(aspects))
    lacking = [a.value for a in aspects if a not in given]
    if extra or lacking:
        return (f"write queries only for the missing aspects {[a.value for a in aspects]}; "
                f"missing queries for {lacking}, queries for aspects not asked {extra}")
    return None


def _prompt(question: str, aspects: list[Aspect], ticker: str | None, company: str | None, as_of: date | None,
            terms: str) -> str:
    return "\n".join([
        f"Question: {question}", f"Ticker: {ticker or '-'}", f"Company: {company or '-'}",
        f"As-of date: {as_of.isoformat() if as_of else '-'}", f"Topic terms: {terms or '-'}",
        f"Missing aspects: {', '.join(a.value for a in aspects)}",
    ])
