"""The RAG critic: is the curated evidence enough to answer the question as of a date, and if not, what is missing?

Deterministic rules (offline; the same input always gives the same verdict). Five dimensions, each 0–1 with a reason:

* **coverage** — 0.8 × (required aspects covered / required) + 0.2 × (topic terms of the question found in the
  evidence / topic terms); the aspect fraction alone when the question has no topic terms. An aspect is covered by a
  node whose section matches the aspect's sections (Item 1A → risks, Item 7/8 → fundamentals), whose form belongs to
  it (``prices`` → valuation/technicals), or whose text holds ≥ 2 distinct terms of the aspect's lexicon; recent
  events need an event-bearing form (10-Q, 8-K, 6-K, news) filed ≤ 120 days before the as-of date. Names of
  available figures / data kinds cover fundamentals (revenue, eps, companyfacts ...) and valuation/technicals
  (prices, rsi, pe ...); they never cover risks or recent events (a name has no text and no date).
* **recency** — half-life 90 days: 0.5 × 0.5^(newest age / 90) + 0.5 × 0.5^(median age / 90), ages in days before
  the as-of date over dated nodes; 0 when no node is dated.
* **source_diversity** — kinds present among {filings, prices, news} / 3 (node forms and available data names).
* **specificity** — share of nodes holding at least one financial number ($1.2, 35%, 4 million, 1,234, 3.5; bare
  years and item numbers do not count).
* **consistency** — 1 − 0.25 × contradictions (floor 0). A contradiction: sentences of two different documents that
  name the same metric and the same year, one saying it rose and the other that it fell (a lexical heuristic: it
  misses paraphrases and can flag segment-level statements).

**Threshold rule** (``sufficient``): every required aspect covered AND weighted overall (coverage 0.30, recency
0.20, source_diversity 0.15, specificity 0.15, consistency 0.20) ≥ 0.60 AND no dimension below 0.20. The same rule
decides on an LLM's scores, so an LLM cannot declare sufficiency by fiat. Empty evidence: every dimension 0 and
every aspect missing, reason "store returned no evidence".

With a pydantic-ai ``Model`` injected the LLM judges; its output must validate against ``LLMCriticOutput`` and cite
only evidence ids it was given. Invalid output gets one retry; then (or when the call fails) the deterministic critic
answers, ``mode`` is ``deterministic_fallback`` and ``log`` says why.
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Sequence
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from equimind.core.errors import ConfigError
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import split_by_as_of
from equimind.lexicon.aspects import CORE_ASPECTS, Aspect, asks_web_activity, name_aspects, node_aspects
from equimind.lexicon.text import TEXT_CACHE, count_financial_numbers, question_words, split_sentences, topic_terms
from equimind.llm.structured import prompt_sha256, run_structured

if TYPE_CHECKING:
    from pydantic_ai.models import Model


class DataKind(StrEnum):
    """Data the engine can fetch to fill a gap (values match the stored ``form`` where one exists)."""

    COMPANYFACTS = "companyfacts"
    FORM_10K = "10-K"
    FORM_10Q = "10-Q"
    FORM_8K = "8-K"
    NEWS = "news"
    PRICES = "prices"
    WEB = "web"  # job postings and GitHub activity (computed with the market report)


class Dimension(StrEnum):
    COVERAGE = "coverage"
    RECENCY = "recency"
    SOURCE_DIVERSITY = "source_diversity"
    SPECIFICITY = "specificity"
    CONSISTENCY = "consistency"


class CriticMode(StrEnum):
    DETERMINISTIC = "deterministic"
    LLM = "llm"
    FALLBACK = "deterministic_fallback"


FILL_WITH: dict[Aspect, tuple[DataKind, ...]] = {
    Aspect.FUNDAMENTALS: (DataKind.COMPANYFACTS, DataKind.FORM_10K),
    Aspect.RISKS: (DataKind.FORM_10K, DataKind.FORM_10Q),
    Aspect.VALUATION_TECHNICALS: (DataKind.PRICES, DataKind.COMPANYFACTS),
    Aspect.RECENT_EVENTS: (DataKind.FORM_10Q, DataKind.FORM_8K, DataKind.NEWS),
    Aspect.WEB_ACTIVITY: (DataKind.WEB,),
}
FILL_WHY: dict[Aspect, str] = {
    Aspect.FUNDAMENTALS: "XBRL companyfacts and the latest 10-K (MD&A, financial statements)",
    Aspect.RISKS: "Item 1A Risk Factors of the latest 10-K / 10-Q",
    Aspect.VALUATION_TECHNICALS: "daily prices (technicals) with companyfacts EPS for valuation multiples",
    Aspect.RECENT_EVENTS: "the latest 10-Q, 8-Ks and news dated within the recent window",
    Aspect.WEB_ACTIVITY: "job-board postings and GitHub activity figures (configured per ticker)",
}
WEIGHTS: dict[Dimension, float] = {
    Dimension.COVERAGE: 0.30, Dimension.RECENCY: 0.20, Dimension.SOURCE_DIVERSITY: 0.15,
    Dimension.SPECIFICITY: 0.15, Dimension.CONSISTENCY: 0.20,
}
SUFFICIENT_OVERALL = 0.60
DIMENSION_FLOOR = 0.20
RECENCY_HALF_LIFE_DAYS = 90.0
NO_EVIDENCE = "store returned no evidence"
SNIPPET_CHARS = 700

_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_METRICS: dict[str, tuple[str, ...]] = {
    "revenue": ("revenue", "revenues", "net sales"), "gross margin": ("gross margin", "gross margins"),
    "net income": ("net income",), "operating income": ("operating income",),
    "earnings per share": ("earnings per share", "eps"), "cash flow": ("cash flow", "cash flows"),
}
_UP_WORDS = r"increased?|increasing|grew|rose|higher|improved|expanded"
_DOWN_WORDS = r"decreased?|decreasing|declined?|fell|lower|dropped|contracted|weakened"
# the metric, then within six words the direction it moved
_CLAIMS = {m: re.compile(rf"\b(?:{'|'.join(map(re.escape, names))})\b\W+(?:[\w$%.,]+\W+){{0,5}}?"
                         rf"(?:(?P<up>{_UP_WORDS})|(?P<down>{_DOWN_WORDS}))\b", re.IGNORECASE)
           for m, names in _METRICS.items()}


def source_kind(form: str) -> str:
    return "prices" if form == "prices" else "news" if form == "news" else "filings"


@functools.lru_cache(maxsize=TEXT_CACHE)
def _direction_claims(text: str) -> tuple[tuple[str, str, str], ...]:
    """(metric, year, "up" | "down") for each sentence of ``text`` that states one direction for a metric (cached:
    the same passages are read in every round and every run on a ticker)."""
    out: list[tuple[str, str, str]] = []
    for s, e in split_sentences(text):
        sent = text[s:e]
        year = _YEAR.search(sent)
        if year is None:
            continue
        for metric, pat in _CLAIMS.items():
            dirs = {"up" if m.group("up") else "down" for m in pat.finditer(sent)}
            if len(dirs) == 1:
                out.append((metric, year.group(0), dirs.pop()))
    return tuple(out)


def find_contradictions(nodes: Sequence[EvidenceNode]) -> list[str]:
    """Cross-document (metric, year) pairs stated to rise in one document and fall in another.

    A claim is a metric followed within six words by a direction word; its period is the first year the sentence
    names ("decreased to 72.4% for fiscal 2026 compared to 75.1% for fiscal 2025" is a claim about 2026).
    """
    claims: dict[tuple[str, str], dict[str, set[str]]] = {}
    for node in nodes:
        for metric, year, direction in _direction_claims(node.text):
            claims.setdefault((metric, year), {"up": set(), "down": set()})[direction].add(node.doc_id)
    found = []
    for (metric, yr), sides in sorted(claims.items()):
        if any(a != b for a in sides["up"] for b in sides["down"]):
            found.append(f"{metric} {yr}: rose in {len(sides['up'])} document(s), fell in {len(sides['down'])}")
    return found


def _decay(days: float) -> float:
    return float(0.5 ** (max(0.0, days) / RECENCY_HALF_LIFE_DAYS))


# ---------------------------------------------------------------------------------------------------------------
# Schemas (boundary: printed in the log, produced by an LLM)


class DimensionScore(BaseModel):
    model_config = ConfigDict(frozen=True)
    dimension: Dimension
    score: float = Field(ge=0.0, le=1.0)
    reason: str = Field(min_length=1)


class AspectStatus(BaseModel):
    model_config = ConfigDict(frozen=True)
    aspect: Aspect
    covered: bool
    reason: str = Field(min_length=1)
    evidence_ids: list[str] = Field(default_factory=list)


class DataNeed(BaseModel):
    model_config = ConfigDict(frozen=True)
    aspect: Aspect
    kinds: list[DataKind]
    why: str


class LLMCriticOutput(BaseModel):
    """What the LLM critic must return: every dimension and every aspect exactly once."""

    dimensions: list[DimensionScore]
    aspects: list[AspectStatus]
    contradictions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _complete(self) -> LLMCriticOutput:
        dims = sorted(d.dimension.value for d in self.dimensions)
        if dims != sorted(d.value for d in Dimension):
            raise ValueError(f"give each dimension exactly once: {[d.value for d in Dimension]}; got {dims}")
        asp = sorted(a.aspect.value for a in self.aspects if a.aspect in CORE_ASPECTS)
        web = [a for a in self.aspects if a.aspect is Aspect.WEB_ACTIVITY]
        if asp != sorted(a.value for a in CORE_ASPECTS) or len(web) > 1:
            raise ValueError(f"give each aspect exactly once: {[a.value for a in CORE_ASPECTS]} (and "
                             f"{Aspect.WEB_ACTIVITY.value} at most once); got {asp}")
        return self


class CriticVerdict(BaseModel):
    sufficient: bool
    overall: float
    scores: list[DimensionScore]
    aspects: list[AspectStatus]
    missing: list[Aspect]
    needs: list[DataNeed]
    contradictions: list[str] = Field(default_factory=list)
    rule: str
    mode: CriticMode
    log: list[str] = Field(default_factory=list)
    prompt_sha256: str | None = None

    def score(self, dimension: Dimension) -> float:
        return next(s.score for s in self.scores if s.dimension is dimension)

    @property
    def coverage(self) -> float:
        return self.score(Dimension.COVERAGE)

    def to_log(self) -> dict[str, Any]:
        return self.model_dump(mode="json")



# ---------------------------------------------------------------------------------------------------------------
# The agent


class RAGCriticAgent:
    """Scores curated evidence for a question; deterministic offline, LLM-judged when a ``Model`` is injected."""

    def __init__(self, model: Model | None = None, *, required: Sequence[Aspect] = CORE_ASPECTS,
                 threshold: float = SUFFICIENT_OVERALL, floor: float = DIMENSION_FLOOR) -> None:
        if not required:
            raise ConfigError(f"required aspects must not be empty; choose from {[a.value for a in Aspect]}")
        if not 0.0 <= floor <= threshold <= 1.0:
            raise ConfigError(f"need 0 <= floor ({floor}) <= threshold ({threshold}) <= 1")
        self.model = model
        self.required = tuple(dict.fromkeys(Aspect(a) for a in required))
        self.threshold = threshold
        self.floor = floor
        self.rule = (f"sufficient iff all required aspects ({', '.join(a.value for a in self.required)}) covered, "
                     f"weighted overall >= {threshold:.2f} and every dimension >= {floor:.2f}")

    def run(self, question: str, nodes: Sequence[EvidenceNode], as_of: date, available: Sequence[str] = (),
            exclude_terms: Sequence[str] = (), words: Sequence[str] | None = None) -> CriticVerdict:
        """Judge ``nodes`` (plus names of available figures / data kinds) for ``question`` as of ``as_of``;
        ``words``: the question's words as the parse read them (``ParsedQuestion.words``), else read here. A question
        about hiring or engineering activity (``asks_web_activity``) also requires the web-activity aspect."""
        read = tuple(words) if words is not None else question_words(question)
        required = self.required + ((Aspect.WEB_ACTIVITY,) if asks_web_activity(question)
                                    and Aspect.WEB_ACTIVITY not in self.required else ())
        nodes, late = split_by_as_of(nodes, as_of)
        log = [f"ignored {len(late)} node(s) dated after as-of {as_of}"] if late else []
        if not nodes:
            return self._verdict(_empty_scores(), [AspectStatus(aspect=a, covered=False, reason=NO_EVIDENCE)
                                                   for a in Aspect], [], CriticMode.DETERMINISTIC, [*log, NO_EVIDENCE],
                                 required)
        if self.model is None:
            return self._deterministic(read, nodes, as_of, available, exclude_terms, CriticMode.DETERMINISTIC, log,
                                       required)
        known = {n.id for n in nodes}
        outcome = run_structured(self.model, LLMCriticOutput, CRITIC_INSTRUCTIONS,
                                 _prompt(question, nodes, as_of, available), lambda o: _unknown_ids(o, known),
                                 "critic")
        out = outcome.output
        if not isinstance(out, LLMCriticOutput):
            return self._deterministic(read, nodes, as_of, available, exclude_terms, CriticMode.FALLBACK,
                                       [*log, *outcome.log], required)
        aspects = list(out.aspects)
        if not any(a.aspect is Aspect.WEB_ACTIVITY for a in aspects):  # optional for the LLM: read from the names
            aspects += [a for a in _aspect_statuses((), as_of, available) if a.aspect is Aspect.WEB_ACTIVITY]
        verdict = self._verdict(out.dimensions, aspects, out.contradictions, CriticMode.LLM, [*log, *outcome.log],
                                required)
        return verdict.model_copy(update={"prompt_sha256": prompt_sha256(CRITIC_INSTRUCTIONS)})

    def _deterministic(self, words: Sequence[str], nodes: Sequence[EvidenceNode], as_of: date, available: Sequence[str],
                       exclude_terms: Sequence[str], mode: CriticMode, log: list[str],
                       required: tuple[Aspect, ...]) -> CriticVerdict:
        aspects = _aspect_statuses(nodes, as_of, available)
        contradictions = find_contradictions(nodes)
        covered = [a for a in aspects if a.covered and a.aspect in required]
        scores = [
            _coverage(words, nodes, len(covered), len(required), exclude_terms),
            _recency(nodes, as_of), _diversity(nodes, available), _specificity(nodes),
            _consistency(contradictions),
        ]
        return self._verdict(scores, aspects, contradictions, mode, [*log, "deterministic critic rules"], required)

    def _verdict(self, scores: Sequence[DimensionScore], aspects: Sequence[AspectStatus], contradictions: list[str],
                 mode: CriticMode, log: list[str], required: tuple[Aspect, ...]) -> CriticVerdict:
        ordered = sorted(scores, key=lambda s: list(Dimension).index(s.dimension))
        overall = round(sum(WEIGHTS[s.dimension] * s.score for s in ordered), 4)
        status = {a.aspect: a for a in aspects}
        missing = [a for a in Aspect if a in required and not status[a].covered]
        needs = [DataNeed(aspect=a, kinds=list(FILL_WITH[a]), why=FILL_WHY[a]) for a in missing]
        ok = not missing and overall >= self.threshold and all(s.score >= self.floor for s in ordered)
        return CriticVerdict(sufficient=ok, overall=overall, scores=list(ordered),
                             aspects=[status[a] for a in Aspect], missing=missing, needs=needs,
                             contradictions=contradictions, mode=mode, log=log,
                             rule=self.rule if required == self.required else self.rule.replace(
                                 "aspects (", f"aspects ({Aspect.WEB_ACTIVITY.value}, ", 1))


def _empty_scores() -> list[DimensionScore]:
    return [DimensionScore(dimension=d, score=0.0, reason=NO_EVIDENCE) for d in Dimension]


def _aspect_statuses(nodes: Sequence[EvidenceNode], as_of: date, available: Sequence[str]) -> list[AspectStatus]:
    """Every aspect's status (the web-activity aspect is covered only by web-intelligence figure names)."""
    support: dict[Aspect, list[tuple[str, str]]] = {a: [] for a in Aspect}
    for node in nodes:
        for aspect, why in node_aspects(node, as_of).items():
            support[aspect].append((node.id, why))
    for name in available:
        for aspect in name_aspects(name):
            support[aspect].append(("", f"available data '{name}'"))
    out = []
    for aspect in Aspect:
        hits = support[aspect]
        reason = ("; ".join(dict.fromkeys(why for _, why in hits[:3])) if hits
                  else f"no evidence; needs {FILL_WHY[aspect]}")
        out.append(AspectStatus(aspect=aspect, covered=bool(hits), reason=reason,
                                evidence_ids=[i for i, _ in hits if i]))
    return out


def _coverage(words: Sequence[str], nodes: Sequence[EvidenceNode], covered: int, required: int,
              exclude_terms: Sequence[str]) -> DimensionScore:
    aspect_part = covered / required
    terms = topic_terms(words, exclude_terms)
    if not terms:
        return DimensionScore(dimension=Dimension.COVERAGE, score=round(aspect_part, 4),
                              reason=f"{covered}/{required} required aspects covered; question has no topic terms")
    text = " ".join(n.text.lower() for n in nodes)
    found = [t for t in terms if re.search(rf"\b{re.escape(t)}", text)]
    score = 0.8 * aspect_part + 0.2 * len(found) / len(terms)
    return DimensionScore(dimension=Dimension.COVERAGE, score=round(score, 4),
                          reason=f"{covered}/{required} required aspects covered; question terms found "
                                 f"{len(found)}/{len(terms)} ({', '.join(terms)})")


def _recency(nodes: Sequence[EvidenceNode], as_of: date) -> DimensionScore:
    ages = sorted((as_of - n.filed_at).days for n in nodes if n.filed_at is not None)
    if not ages:
        return DimensionScore(dimension=Dimension.RECENCY, score=0.0, reason="no dated evidence")
    newest, median = ages[0], statistics.median(ages)
    score = 0.5 * _decay(newest) + 0.5 * _decay(median)
    return DimensionScore(dimension=Dimension.RECENCY, score=round(score, 4),
                          reason=f"newest evidence {newest} days before as-of, median {median:g} days "
                                 f"(half-life {RECENCY_HALF_LIFE_DAYS:g} days)")


def _diversity(nodes: Sequence[EvidenceNode], available: Sequence[str]) -> DimensionScore:
    kinds = {source_kind(n.form) for n in nodes}
    for name in available:
        low = name.lower()
        if Aspect.VALUATION_TECHNICALS in name_aspects(name):
            kinds.add("prices")
        elif "news" in low:
            kinds.add("news")
        elif Aspect.FUNDAMENTALS in name_aspects(name):
            kinds.add("filings")
    absent = [k for k in ("filings", "prices", "news") if k not in kinds]
    return DimensionScore(dimension=Dimension.SOURCE_DIVERSITY, score=round(len(kinds) / 3, 4),
                          reason=f"present: {', '.join(sorted(kinds)) or 'none'}; "
                                 f"absent: {', '.join(absent) or 'none'}")


def _specificity(nodes: Sequence[EvidenceNode]) -> DimensionScore:
    if not nodes:
        return DimensionScore(dimension=Dimension.SPECIFICITY, score=0.0, reason="no evidence text")
    with_numbers = sum(1 for n in nodes if count_financial_numbers(n.text))
    return DimensionScore(dimension=Dimension.SPECIFICITY, score=round(with_numbers / len(nodes), 4),
                          reason=f"{with_numbers}/{len(nodes)} nodes contain financial numbers")


def _consistency(contradictions: list[str]) -> DimensionScore:
    score = max(0.0, 1.0 - 0.25 * len(contradictions))
    reason = ("no contradictions found" if not contradictions
              else f"{len(contradictions)} contradiction(s): " + "; ".join(contradictions[:3]))
    return DimensionScore(dimension=Dimension.CONSISTENCY, score=score, reason=reason)


def _unknown_ids(out: LLMCriticOutput, known: set[str]) -> str | None:
    bad = sorted({i for a in out.aspects for i in a.evidence_ids if i not in known})
    return f"these evidence ids were not given: {bad[:5]}; cite only ids from the evidence list" if bad else None


def _prompt(question: str, nodes: Sequence[EvidenceNode], as_of: date, available: Sequence[str]) -> str:
    lines = [f"Question: {question}", f"As-of date: {as_of.isoformat()}",
             f"Computed figures / data available: {', '.join(available) or 'none'}", "Evidence:"]
    for n in nodes:
        lines.append(f"[{n.id}] form={n.form} filed={n.filed_at or 'undated'} section={n.section or '-'} "
                     f"source={n.source.value}")
        lines.append(n.text[:SNIPPET_CHARS])
    if not nodes:
        lines.append("(none)")
    return "\n".join(lines)


CRITIC_INSTRUCTIONS = """You are the evidence critic of an equity research system.
Judge whether the evidence given is enough to answer the question as of the as-of date. Use only the evidence given.
Score each of the five dimensions from 0 to 1 with a one-sentence reason:
- coverage: how well the evidence covers the aspects fundamentals, risks, valuation_technicals, recent_events;
- recency: how recent the evidence is relative to the as-of date;
- source_diversity: whether filings, prices and news are all represented;
- specificity: whether the evidence contains concrete numbers;
- consistency: 1 when the evidence does not contradict itself, lower for each contradiction.
For each of the four aspects say whether it is covered, why, and which evidence ids (in brackets) support it.
List every contradiction you find. Return every dimension and every aspect exactly once."""
