"""The ``Answer`` record: a direct, cited answer to a specific ask, or a refusal that says what was searched and
what is missing (issue 14). Pydantic: it crosses the boundary to the CLI, the API, MCP and the dashboard.

Every sentence rests on verified quotes (doc id, [start, end) into the canonical text, the quoted text, the
document's sha256) and/or figures (value, unit, period and provenance: XBRL concept, fiscal year/period, form,
accession, filed date, or the formula of a computed value). A sentence whose support could not be verified is
dropped and counted in ``dropped_sentences``; with nothing verified the answer is a refusal.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from equimind.query.kinds import AnswerKind


class Support(StrEnum):
    SUPPORTED = "supported"  # every part of the ask answered by verified quotes / figures
    PARTIAL = "partial"  # some parts answered (one side of a comparison)
    REFUSED = "refused"


class Method(StrEnum):
    XBRL = "xbrl"  # a reported fact from XBRL companyfacts as filed by the as-of date
    EXTRACTIVE = "extractive"  # a sentence or table row of the retrieved passages
    LLM = "llm"  # a model's sentence backed by verified quotes
    COMPUTED = "computed"  # a ratio / growth rate computed from reported lines (XBRL or statement rows), formula given


class RefusalReason(StrEnum):
    NOT_ANSWERABLE = "not_answerable"  # the answerability check (ADR 0006): the ask's terms are not in the documents
    NO_VALUE_OF_TYPE = "no_value_of_type"  # the passages hold the terms but no value of the asked type
    NO_PASSAGES = "no_passages"  # nothing was retrieved / no passage holds the question's terms
    NOTHING_VERIFIED = "nothing_verified"  # the LLM's sentences all failed verification
    LLM_REFUSED = "llm_refused"  # the model said the passages do not answer
    DECISION_ASK = "decision_ask"  # a decision ask: the debate rates it
    PERIOD_NOT_ENDED = "period_not_ended"  # the asked period ends after the as-of date: nothing reports it yet


NO_VALUE_OF_TYPE_TEXT = "the retrieved passages hold the question's terms but no value of the asked type"


class Quote(BaseModel):
    """A verified span of a stored document."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    start: int
    end: int
    text: str
    doc_sha256: str
    role: str = "evidence"  # "evidence", "row", "header" (the table header naming the period), "unit" (the line
    # stating a table's unit, "(In millions)"), "caption"


class AnswerFigure(BaseModel):
    """A number with its period and provenance (XBRL fact or a computed value's formula)."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: float
    unit: str
    period_start: date | None = None  # None: an instant (balance sheet) at period_end
    period_end: date | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)


class StatedValue(BaseModel):
    """A value as written in a quoted span ("$115,186" in a table "(In millions)"), normalised to ``number``."""

    model_config = ConfigDict(frozen=True)

    text: str
    number: float | None = None  # normalised: scale applied, percent as written (19 for "19%")
    unit: str = ""  # "USD", "%", "count", "date", "name"
    period: str | None = None  # the column header or sentence words naming the period


class AnswerSentence(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    method: Method
    subject: str | None = None  # the ticker this sentence answers for (comparisons)
    quotes: list[Quote] = Field(default_factory=list)
    figures: list[AnswerFigure] = Field(default_factory=list)
    values: list[StatedValue] = Field(default_factory=list)
    score: float | None = None


class PassageRead(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc_id: str
    start: int
    end: int
    score: float
    ticker: str | None = None
    form: str | None = None
    filed_at: date | None = None


class Refusal(BaseModel):
    model_config = ConfigDict(frozen=True)

    reason: RefusalReason
    message: str  # what was searched and what is missing, naming the fix
    searched: dict[str, Any] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)


class Answer(BaseModel):
    question: str
    ticker: str
    as_of: date
    kind: AnswerKind
    support: Support
    sentences: list[AnswerSentence] = Field(default_factory=list, max_length=3)
    passages_searched: list[PassageRead] = Field(default_factory=list)
    refusal: Refusal | None = None
    dropped_sentences: int = 0
    parsed_question: dict[str, Any] = Field(default_factory=dict)  # the question as parsed once (query/parsed.py)
    degraded: list[str] = Field(default_factory=list)  # capabilities unavailable and why (e.g. no companyfacts)
    # per side of the ask (issue 27): the answer strategies tried in order, the one that decided and why each earlier
    # one passed ({"side", "periods", "decided_by", "steps": [{"strategy", "outcome", "why"}]}; answer/strategies.py)
    strategies: list[dict[str, Any]] = Field(default_factory=list)
    # set by ``equimind ask`` (research/run.py): the DB-first loop's rounds (queries, hits, fetches) and stage timings
    agentic_rag: list[dict[str, Any]] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    @property
    def refused(self) -> bool:
        return self.support is Support.REFUSED

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)
