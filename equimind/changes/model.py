"""What ``equimind changes`` returns: a ranked list of changes between two filings, each cited on both sides.

Pydantic at the boundary (the CLI's ``--json``, the REST API and the MCP tool print these models as they are).
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from pydantic import BaseModel, Field

FORMAT_VERSION = 1


class ChangeKind(StrEnum):
    ADDED = "added"  # in the new filing only (a new risk factor, or a paragraph with no counterpart)
    REMOVED = "removed"  # in the old filing only
    REWORDED = "reworded"  # the same paragraph, different words (``similarity`` says how close)
    FIGURES_CHANGED = "figures_changed"  # the same sentence with different numbers (``figures``: old -> new)


class FilingRef(BaseModel):
    """One side of the comparison."""

    doc_id: str
    ticker: str | None
    company: str | None
    form: str
    filed_at: date | None
    period_end: date | None
    accession: str | None
    title: str


class Side(BaseModel):
    """A cited span of one filing: ``quote`` is ``text[start:end]`` of document ``doc_id`` and has passed the same
    span check as an answer's citation (``core.citations.verify_spans``)."""

    doc_id: str
    start: int
    end: int
    quote: str
    section: str
    extent: tuple[int, int] | None = None  # the whole risk factor (heading and body) when the quote is its heading


class FigureDelta(BaseModel):
    """One figure of a sentence, old -> new; ``relative`` = |new - old| / |old| (None when old is 0)."""

    old_text: str
    new_text: str
    old_value: float
    new_value: float
    unit: str
    relative: float | None


class Change(BaseModel):
    rank: int
    kind: ChangeKind
    section: str  # the section key (risk_factors, mdna, business, notes, ...)
    risk_factor: str | None = None  # the risk factor's heading (new side, else old) when the change is inside one
    is_risk_factor: bool = False  # an added / removed change that is a whole risk factor
    similarity: float | None = None  # reworded and figures_changed: how alike the two paragraphs are (0-1)
    figures: list[FigureDelta] = Field(default_factory=list)
    negative_delta: int = 0  # Loughran-McDonald negative words, new minus old
    uncertainty_delta: int = 0  # Loughran-McDonald uncertainty words, new minus old
    tier: int  # 0: risk factor added / removed; 1: figures changed; 2: everything else (the ranking rule)
    materiality: float  # the key inside a tier (see ``RANKING_RULE``)
    inserted: list[str] = Field(default_factory=list)  # reworded: the runs of words the new side added (first 5)
    deleted: list[str] = Field(default_factory=list)  # reworded: the runs of words the old side had (first 5)
    # reworded: the counterpart was found elsewhere in the other filing by the reworded check (the paragraph holding
    # most of its sentences), not aligned as the same paragraph: its word counts compare two different paragraphs
    elsewhere: bool = False
    old: Side | None = None
    new: Side | None = None
    summary: str


class SectionPair(BaseModel):
    """How one section of the old filing was matched to the new one."""

    key: str
    old_name: str | None
    new_name: str | None
    old_paragraphs: int
    new_paragraphs: int
    unchanged: int
    tables_skipped: int
    mode: str  # "full" | "risk_factor_update" | "old_only" | "new_only" | "skipped" | "unparsed"
    note: str = ""
    moved_elsewhere: int = 0  # paragraphs not new after all: their sentences are elsewhere in the other filing
    reworded_elsewhere: int = 0  # paragraphs not new after all: reworded elsewhere in the other filing (``reworded``)
    fragments: int = 0  # captions and fragments without a sentence: not reported as added / removed


class ChangeReport(BaseModel):
    format_version: int = FORMAT_VERSION
    ticker: str | None
    company: str | None
    as_of: date | None
    old: FilingRef
    new: FilingRef
    pairing: str  # why these two filings were compared
    sections: list[SectionPair]
    changes: list[Change]
    counts: dict[str, int]
    dates_only: int = 0  # sentences whose only difference is a year rolled forward: not reported as changes
    ranking_rule: str
    citations_checked: int = 0
    citations_failed: int = 0
    degraded: list[str] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
