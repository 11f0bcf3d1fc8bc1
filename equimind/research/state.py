"""The mutable state of one research run, and the typed records its log is written from.

``FetchRecord`` and ``HitRecord`` are what the loop keeps; ``to_log()`` gives the JSON the Recommendation's
``agentic_rag.log`` carries (the keys each record has, in the order it has always printed them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from equimind.core.degraded import Degradations
from equimind.core.documents import FilterSpec
from equimind.core.research import IterationLog
from equimind.core.search import EvidenceNode, SearchHit

if TYPE_CHECKING:
    from equimind.analytics.market import MarketReport
    from equimind.core.documents import Document
    from equimind.ingest.pipeline import IngestReport
    from equimind.research.aspects import AspectSearch


@dataclass(frozen=True)
class FetchedDocument:
    doc_id: str
    form: str
    filed_at: date | None
    title: str

    @classmethod
    def of(cls, doc: Document) -> FetchedDocument:
        return cls(doc.id, doc.form, doc.filed_at, doc.title)

    def to_log(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "form": self.form, "filed_at": self.filed_at, "title": self.title}


@dataclass(frozen=True)
class Ingested:
    """What one on-demand ingest did (the outcome line and the documents it read, at most 20 listed)."""

    outcome: str
    documents: tuple[FetchedDocument, ...] = ()
    documents_total: int | None = None
    failed: tuple[dict[str, Any], ...] | None = None
    figures: int | None = None

    @classmethod
    def nothing(cls, outcome: str) -> Ingested:
        return cls(outcome)

    @classmethod
    def of(cls, docs: list[Document], report: IngestReport) -> Ingested:
        later = (f" ({report.chunks_deferred} of them embedded after the answer: first-answer indexing)"
                 if report.chunks_deferred else "")
        return cls(outcome=f"ingested {report.documents_added + report.documents_completed} new document(s), "
                           f"{report.documents_skipped} already stored, "
                           f"{report.chunks_added + report.chunks_deferred} chunks{later}",
                   documents=tuple(FetchedDocument.of(d) for d in docs[:20]), documents_total=len(docs),
                   failed=tuple(f.model_dump() for f in report.documents_failed))


@dataclass(frozen=True)
class FetchRecord:
    """One on-demand fetch: the data kind, why the critic asked for it, and what came of it."""

    kind: str
    why: str
    mode: str
    result: Ingested | None = None  # None: the fetch failed or had no source (``outcome`` says which)
    outcome: str = ""
    ms: float = 0.0

    def to_log(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "why": self.why, "mode": self.mode}
        if self.result is None:
            out["outcome"] = self.outcome
        else:
            r = self.result
            out["outcome"] = r.outcome
            out["documents"] = [d.to_log() for d in r.documents]
            if r.documents_total is not None:
                out["documents_total"] = r.documents_total
            if r.failed is not None:
                out["failed"] = list(r.failed)
            if r.figures is not None:
                out["figures"] = r.figures
        out["ms"] = self.ms
        return out


@dataclass(frozen=True)
class HitRecord:
    """One search hit as the iteration log shows it."""

    query: str
    hit: SearchHit

    def to_log(self) -> dict[str, Any]:
        h, s = self.hit, self.hit.scores
        return {"query": self.query, "rank": h.rank, "chunk_id": h.chunk_id, "doc_id": h.document.doc_id,
                "form": h.document.form, "filed_at": h.document.filed_at, "section": h.section,
                "span": [h.start, h.end], "dense_rank": s.dense_rank, "bm25_rank": s.bm25_rank,
                "rrf": s.rrf_score, "rerank": s.rerank_score, "rerank_status": s.rerank_status}


@dataclass
class RunState:
    """Not shared between runs: the curated passages, the market report, the iteration logs, what degraded."""

    nodes: dict[str, EvidenceNode] = field(default_factory=dict)
    report: MarketReport | None = None
    logs: list[IterationLog] = field(default_factory=list)
    degraded: Degradations = field(default_factory=Degradations)
    timings: dict[str, float] = field(default_factory=dict)
    fetched_kinds: set[str] = field(default_factory=set)
    company: str | None = None
    aspect_searches: list[AspectSearch] = field(default_factory=list)  # research/aspects.py, after compression

    def time(self, stage: str, t0: float) -> float:
        ms = (time.perf_counter() - t0) * 1000
        self.timings[stage] = round(self.timings.get(stage, 0.0) + ms, 2)
        return round(ms, 2)


def filter_log(flt: FilterSpec) -> dict[str, Any]:
    return {"tickers": list(flt.tickers), "since": flt.since, "until": flt.until,
            "forms": list(flt.forms), "sources": [s.value for s in flt.sources]}


def merge_filters(base: FilterSpec, hint: FilterSpec | None) -> FilterSpec:
    """The rewriter's hint narrows the base filter (forms, dates); the ticker always stays."""
    if hint is None:
        return base
    since = max([d for d in (base.since, hint.since) if d], default=None)
    until = min([d for d in (base.until, hint.until) if d], default=None)
    if since and until and since > until:
        since = None
    return FilterSpec(tickers=base.tickers, since=since, until=until, sources=hint.sources or base.sources,
                      forms=hint.forms or base.forms)
