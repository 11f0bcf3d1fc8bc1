"""Research memory's records (Pydantic at the boundary, frozen dataclass inside): evidence entries, period
summaries, research runs, the snapshot the interfaces print, the delta engine's fetch plan, and the rating ledger's
entries and history (``equimind ledger``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError
from equimind.core.research import LedgerDelta, LedgerEvidence, LedgerFigure, Rating
from equimind.core.timeguard import as_of_filter

FORMAT_VERSION = 2  # 2: the rating ledger's tables (memory/store.py migrates a format-1 file in place)


class Level(StrEnum):
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"


TOP_K: dict[Level, int] = {Level.DAILY: 5, Level.WEEKLY: 8, Level.MONTHLY: 10, Level.QUARTERLY: 12}


@dataclass(frozen=True)
class EvidenceEntry:
    id: str
    ticker: str
    date: date
    doc_id: str
    start: int
    end: int
    digest: str
    text: str
    source: str
    form: str
    section: str | None
    score: float


class SummaryItem(BaseModel):
    model_config = ConfigDict(frozen=True)  # shared by the summaries cache (memory/summaries.py)

    text: str
    score: float
    date: date
    doc_id: str
    start: int
    end: int
    source: str
    form: str


class PeriodSummary(BaseModel):
    ticker: str
    level: Level
    period: str
    start: date
    end: date
    partial: bool = False
    items: list[SummaryItem] = Field(default_factory=list)


class ResearchRun(BaseModel):
    id: int
    ticker: str
    question: str
    as_of: date
    rating: Rating | None
    conviction: float
    run_at: datetime
    duration_s: float | None = None


class EvidenceRef(BaseModel):
    id: str
    date: date
    doc_id: str
    start: int
    end: int
    digest: str
    source: str
    form: str
    section: str | None


class MemorySnapshot(BaseModel):
    """What ``equimind memory TICKER --json`` prints."""

    ticker: str
    as_of: date | None
    format_version: int = FORMAT_VERSION
    evidence_count: int
    evidence: list[EvidenceRef]
    summaries: list[PeriodSummary]
    runs: list[ResearchRun]
    last_research: ResearchRun | None


class FetchDecision(BaseModel):
    kind: str
    fetch: bool
    since: date | None
    until: date
    stored: int
    reason: str


class FetchPlan(BaseModel):
    ticker: str
    as_of: date
    last_research: ResearchRun | None
    decisions: list[FetchDecision]

    def to_fetch(self) -> list[FetchDecision]:
        return [d for d in self.decisions if d.fetch]

    def filter_for(self, kind: str) -> FilterSpec:
        d = next((x for x in self.decisions if x.kind == kind), None)
        if d is None:
            raise ConfigError(f"kind {kind!r} was not planned; planned: {[x.kind for x in self.decisions]}")
        return as_of_filter(FilterSpec(tickers=(self.ticker,), since=d.since, forms=(kind,)), self.as_of)


class LedgerEntry(BaseModel):
    """One rated research run in the ledger: its as-of date, rating, conviction, and the evidence and figures it used.
    ``recorded`` is False for a run stored before the ledger existed (memory format 1): its rating is known, its
    evidence and figures are not."""

    run_id: int
    ticker: str
    question: str
    as_of: date
    run_at: datetime
    rating: Rating | None
    conviction: float
    recorded: bool = True
    evidence: list[LedgerEvidence] = Field(default_factory=list)
    figures: list[LedgerFigure] = Field(default_factory=list)


class LedgerRow(BaseModel):
    """A ledger entry and its change from the entry before it (None for the first)."""

    entry: LedgerEntry
    evidence_count: int | None  # None: not recorded (a run from before the ledger)
    figures_count: int | None
    change: LedgerDelta | None = None


class LedgerHistory(BaseModel):
    """What ``equimind ledger TICKER --json`` and ``GET /api/v1/ledger/{ticker}`` return: the rated runs visible at
    ``as_of`` (none dated after it), oldest first."""

    ticker: str
    as_of: date | None
    rule: str
    entries: list[LedgerRow]
