"""Retrieval results (printed by the CLI and the API: Pydantic) and the curated passage the later stages read
(``EvidenceNode``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from equimind.core.degraded import DegradationNote
from equimind.core.documents import Origin, Source


# Retrieval results (printed by CLI/API: Pydantic)
class DocumentRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc_id: str
    ticker: str | None
    company: str | None
    form: str
    filed_at: date | None
    period_end: date | None
    source: Source
    origin: Origin
    title: str
    url: str | None


class StageScores(BaseModel):
    """Every retrieval stage's view of a hit; a missing stage says why in ``*_status``."""

    model_config = ConfigDict(frozen=True)

    dense_rank: int | None = None
    dense_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    rrf_score: float | None = None
    rerank_score: float | None = None
    rerank_status: str = "not requested"


class SearchHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    rank: int
    chunk_id: str
    text: str
    start: int
    end: int
    parent_id: str
    parent_text: str
    parent_start: int
    parent_end: int
    section: str | None
    page_start: int | None = None
    page_end: int | None = None
    document: DocumentRef
    scores: StageScores


class FeedPosition(BaseModel):
    """Which change-feed position of the docstore a search's indexes were at (``served``), against the store's
    (``store``) when it ran. ``behind`` > 0: this host was still catching up, and the result says so."""

    served: int
    store: int
    behind: int


class SearchResult(BaseModel):
    query: str
    sparse_terms: str = Field(default="", description="Words the BM25 leg searched for besides the query (the "
                              "XBRL concept words of the metrics it names; retrieval/query_shape.py).")
    mode: str
    filters: dict[str, Any]
    hits: list[SearchHit]
    auto_filter: str | None = Field(default=None, description="How the filter was parsed from the query's own "
                                    "company / fiscal-year words (None: the caller's filter, or auto-filter off).")
    degraded: list[DegradationNote] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    feed: FeedPosition | None = Field(default=None, description="The docstore change-feed position the search "
                                      "indexes were served from, against the store's (several hosts over one store).")


@dataclass(frozen=True)
class EvidenceNode:
    """A curated passage handed to the agents: the parent span a search hit belongs to, with its scores.

    ``text`` is exactly ``document.text[start:end]``. Figures (computed numbers) travel separately as ``Figure``.
    """

    id: str
    doc_id: str
    start: int
    end: int
    text: str
    ticker: str | None
    company: str | None
    source: Source
    form: str
    filed_at: date | None
    section: str | None
    score: float
    doc_sha256: str
    page_start: int | None = None
    page_end: int | None = None
    queries: tuple[str, ...] = field(default_factory=tuple)
