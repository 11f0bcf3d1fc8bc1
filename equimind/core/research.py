"""The research result: the rating, the debate's claims and citations, the computed figures, the agentic loop's
report, the rating ledger's "since" block (``LedgerDelta``: what changed since the previous rated run on the ticker)
and the ``Recommendation`` every interface prints (Pydantic, validated, JSON-serialisable).
"""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from equimind.core.degraded import Degradation


# Research output
class Rating(StrEnum):
    STRONG_BUY = "STRONG_BUY"
    BUY = "BUY"
    HOLD = "HOLD"
    SELL = "SELL"
    STRONG_SELL = "STRONG_SELL"


class Speaker(StrEnum):
    BULL = "bull"
    BEAR = "bear"
    JUDGE = "judge"


class Citation(BaseModel):
    """A quoted span of a stored document: [start, end) into its canonical text."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    start: int
    end: int
    quote: str
    doc_sha256: str


class Figure(BaseModel):
    """A number in a report with its provenance."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    value: float | None
    unit: str
    as_of: date | None
    formula: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(default_factory=dict)


class Claim(BaseModel):
    model_config = ConfigDict(frozen=True)

    speaker: Speaker
    text: str
    citations: list[Citation] = Field(default_factory=list)
    figure_ids: list[str] = Field(default_factory=list)
    strength: float = 0.5
    signal: str = ""


class IterationLog(BaseModel):
    iteration: int
    queries: list[str] = Field(default_factory=list)
    filters: dict[str, Any] = Field(default_factory=dict)
    hits: list[dict[str, Any]] = Field(default_factory=list)
    fetched: list[dict[str, Any]] = Field(default_factory=list)
    critic: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    since: LedgerDelta | None = None  # the rating ledger: what changed since the previous rated run (None: the first)


class AgenticRAGReport(BaseModel):
    iterations: int
    converged: bool
    coverage: float
    curated_nodes: int
    discarded_nodes: int
    log: list[IterationLog] = Field(default_factory=list)
    # the answerability check's verdict (equimind/answer/answerability.py, ADR 0006); None when it did not run
    answerability: dict[str, Any] | None = None
    # the aspect search after compression (equimind/research/aspects.py): one record per uncovered debate aspect
    aspect_searches: list[dict[str, Any]] = Field(default_factory=list)


class JudgeSynthesis(BaseModel):
    winning_side: Speaker | None
    winning_thesis: str
    key_risks: list[str] = Field(default_factory=list)
    key_catalysts: list[str] = Field(default_factory=list)
    reasoning: list[str] = Field(default_factory=list)


# The rating ledger (memory/ledger.py): what a rated run used, and what changed since the previous one
class LedgerEvidence(BaseModel):
    """A span a run's claims (or its answer) cite: the ledger's id of a piece of evidence is (doc_id, start, end)."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    start: int
    end: int
    quote: str  # the cited text, whitespace collapsed, cut to a short quote (the span gives the whole of it)
    filed_at: date | None = None  # the document's filing date, when the run read the document as a passage
    form: str | None = None
    sides: list[str] = Field(default_factory=list)  # who cited it: "bull", "bear", "answer"


class LedgerFigure(BaseModel):
    """A figure a run read (``Figure`` without its formula inputs), as the ledger keeps it."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    value: float | None
    unit: str
    as_of: date | None
    provenance: dict[str, Any] = Field(default_factory=dict)
    cited: bool = False  # a claim of the run names it


class FigureChange(BaseModel):
    """A figure whose value differs between two ledger entries (matched by figure id); ``old`` or ``new`` is None
    when only one entry has it."""

    id: str
    name: str
    old: LedgerFigure | None
    new: LedgerFigure | None


class LedgerDelta(BaseModel):
    """The "since" block: the previous rated run on the ticker visible at this run's as-of date (the latest ledger
    entry with an as-of date on or before it, a same-day entry only when it ran earlier) against this one."""

    since: date  # the previous entry's as-of date
    previous_run_id: int
    previous_run_at: datetime
    rating_from: Rating | None
    rating_to: Rating | None
    conviction_from: float
    conviction_to: float
    previous_recorded: bool = True  # False: the previous run predates the ledger (no evidence / figures stored)
    evidence_entered: list[LedgerEvidence] = Field(default_factory=list)
    evidence_left: list[LedgerEvidence] = Field(default_factory=list)
    evidence_kept: int = 0
    figures_changed: list[FigureChange] = Field(default_factory=list)

    @property
    def headline(self) -> str:
        """``since 2025-06-30: BUY → HOLD``."""
        def name(r: Rating | None) -> str:
            return r.value if r is not None else "no rating"

        return f"since {self.since}: {name(self.rating_from)} → {name(self.rating_to)}"


class Recommendation(BaseModel):
    ticker: str
    question: str
    as_of: date
    rating: Rating | None
    conviction: float = Field(ge=0.0, le=1.0)
    thesis: str
    refused: bool = False
    refusal_reason: str | None = None
    answer: SerializeAsAny[BaseModel] | None = None  # Answer (answer/record.py): a specific ask; a decision topic
    bull_case: list[Claim] = Field(default_factory=list)
    bear_case: list[Claim] = Field(default_factory=list)
    judge: JudgeSynthesis | None = None
    figures: list[Figure] = Field(default_factory=list)
    agentic_rag: AgenticRAGReport | None = None
    degraded: list[Degradation] = Field(default_factory=list)
    dropped_claims: int = 0
    provider: str = "offline"
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    since: LedgerDelta | None = None  # the rating ledger: what changed since the previous rated run (None: the first)
