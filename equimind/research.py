"""One research run: the DB-first agentic RAG loop, then compression, debate and the cited Recommendation.

Loop (at most ``settings.max_iterations`` rounds, stop as soon as the critic says the evidence is sufficient):
  1. search the store (ticker + as-of filter in both retrieval legs) with the question / rewritten sub-queries;
  2. the critic scores the curated evidence on five dimensions and names the missing aspects;
  3. if insufficient: fetch exactly the data kinds that would fill the missing aspects and are not stored yet
     (filings dated on or before as-of, prices + companyfacts figures, news), ingest them, and rewrite the queries.
Every round is logged (queries, filters, hits with scores, fetches with reasons, critic scores, stage timings).
"""

from __future__ import annotations

import logging
import time
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from equimind.errors import ConfigError
from equimind.models import (
    Degradation,
    EvidenceNode,
    Figure,
    FilterSpec,
    IterationLog,
    Recommendation,
    SearchHit,
)
from equimind.timeguard import as_of_filter, filter_dated

if TYPE_CHECKING:
    from equimind.agents.critic import CriticVerdict
    from equimind.engine import EquiMindEngine, EventSink
    from equimind.market import MarketReport, MarketSources

log = logging.getLogger(__name__)

FILING_KINDS = ("10-K", "10-Q", "8-K")
MARKET_KINDS = ("prices", "companyfacts")


@dataclass
class _State:
    nodes: dict[str, EvidenceNode] = field(default_factory=dict)
    report: MarketReport | None = None
    logs: list[IterationLog] = field(default_factory=list)
    degraded: list[Degradation] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    fetched_kinds: set[str] = field(default_factory=set)
    company: str | None = None

    def degrade(self, capability: str, reason: str) -> None:
        if not any(d.capability == capability and d.reason == reason for d in self.degraded):
            self.degraded.append(Degradation(capability=capability, reason=reason))

    def time(self, stage: str, t0: float) -> float:
        ms = (time.perf_counter() - t0) * 1000
        self.timings[stage] = round(self.timings.get(stage, 0.0) + ms, 2)
        return round(ms, 2)


class ResearchRun:
    """Not reusable: one instance per research call (keeps the run's mutable state)."""

    def __init__(self, engine: EquiMindEngine, ticker: str, question: str, as_of: date,
                 on_event: EventSink | None) -> None:
        if not question.strip():
            raise ConfigError("the question is empty; ask something, e.g. \"Should I invest in NVIDIA?\"")
        self.engine = engine
        self.services = engine.services
        self.settings = engine.settings
        self.ticker = ticker
        self.question = question.strip()
        self.as_of = as_of
        self._sink = on_event
        self.state = _State()

    # ------------------------------------------------------------------------------------------------------------
    def emit(self, stage: str, message: str, iteration: int | None = None, **data: Any) -> None:
        log.info("[%s] %s", stage, message)
        if self._sink is not None:
            from equimind.engine import ResearchEvent

            self._sink(ResearchEvent(stage=stage, iteration=iteration, message=message, data=data))

    def run(self) -> Recommendation:
        from equimind.agents.critic import RAGCriticAgent
        from equimind.agents.rewriter import QueryRewriter
        from equimind.market import sources_for

        t_all = time.perf_counter()
        sources = sources_for(self.settings)
        try:
            for d in sources.unavailable:
                self.state.degrade(d.capability, d.reason)
            self._mode = sources.mode.value
            self._load_cached_report()
            model = self._llm_model()
            critic, rewriter = RAGCriticAgent(model), QueryRewriter(model)
            converged, verdict = self._loop(critic, rewriter, sources)
            self._ensure_figures(sources)
            evidence = self._final_evidence(rewriter)
        finally:
            sources.close()
        return self._conclude(converged, verdict, evidence, t_all)

    def _figure_cache(self) -> Any:
        from equimind.store.figures import FigureCache

        return FigureCache(self.settings.home / "figures.sqlite")

    def _load_cached_report(self) -> None:
        """DB-first figures: reuse the market report computed by an earlier run for the same ticker and as-of."""
        from equimind.market import MarketReport

        with closing(self._figure_cache()) as cache:
            raw = cache.get(self.ticker, self.as_of, self._mode)
        if raw is not None:
            self.set_report(MarketReport.model_validate_json(raw), store=False)
            self.emit("figures", f"reused {len(self.figures())} stored figures computed for as-of {self.as_of}")

    def set_report(self, report: MarketReport, *, store: bool) -> None:
        self.state.report = report
        self.state.company = report.company or self.state.company
        if store:
            with closing(self._figure_cache()) as cache:
                cache.put(self.ticker, self.as_of, self._mode, report.model_dump_json())

    def _llm_model(self) -> Any:
        from equimind.agents.llm_factory import model_for_settings

        model, reason = model_for_settings(self.settings)
        if reason:
            self.state.degrade("llm", reason)
        return model

    # ------------------------------------------------------------------------------------------------------------
    def _loop(self, critic: Any, rewriter: Any, sources: MarketSources) -> tuple[bool, CriticVerdict]:
        queries: list[tuple[str, FilterSpec | None]] = [(self.question, None)]
        verdict: CriticVerdict | None = None
        for it in range(1, self.settings.max_iterations + 1):
            entry = IterationLog(iteration=it)
            self._search(it, queries, entry)
            verdict = self._critic(it, critic, entry)
            self.state.logs.append(entry)
            if verdict.sufficient:
                return True, verdict
            if it == self.settings.max_iterations:
                break
            self._fetch(it, verdict, sources, entry)
            queries = self._rewrite(it, rewriter, verdict, entry)
        assert verdict is not None
        return False, verdict

    def _base_filter(self) -> FilterSpec:
        return as_of_filter(FilterSpec(tickers=(self.ticker,)), self.as_of)

    def _ensure_figures(self, sources: MarketSources) -> None:
        """The debate argues from figures too: when the loop converged on stored text alone and no figures exist
        for this as-of date yet, compute them now (logged on the last iteration like any other fetch)."""
        if self.state.report is not None or not self.state.logs:
            return
        from equimind.research_fetch import Fetcher

        record = Fetcher(self, sources).fetch("prices", "figures for the debate: none computed for this as-of yet")
        self.state.logs[-1].fetched.append(record)
        self.emit("fetch", f"prices: {record['outcome']}", self.state.logs[-1].iteration, **record)

    def _final_evidence(self, rewriter: Any) -> list[EvidenceNode]:
        """What the debate reads: one fixed retrieval over every aspect (the question plus multi-perspective
        sub-queries), so the evidence depends on what is stored, not on the round in which the loop converged."""
        from equimind.analytics.aspects import Aspect

        t0 = time.perf_counter()
        loop_nodes, self.state.nodes = self.state.nodes, {}
        res = rewriter.run(self.question, list(Aspect), ticker=self.ticker, company=self.state.company,
                           as_of=self.as_of, base_filter=self._base_filter())
        entry = IterationLog(iteration=0)
        self._search(0, [(self.question, None)] + [(q.text, q.filters) for q in res.queries], entry, emit=False)
        final, self.state.nodes = self.state.nodes, loop_nodes
        self.state.time("final_retrieval", t0)
        self.emit("curate", f"final retrieval over all aspects: {len(final)} passages "
                  f"({len(entry.queries)} queries)", None, queries=entry.queries)
        return filter_dated(sorted(final.values(), key=lambda n: n.id), self.as_of)

    def _search(self, it: int, queries: list[tuple[str, FilterSpec | None]], entry: IterationLog, *,
                emit: bool = True) -> None:
        t0 = time.perf_counter()
        base = self._base_filter()
        entry.filters = _filter_log(base)
        stored = self.services.docstore.counts().get("indexed", 0)
        for text, hint in queries:
            flt = as_of_filter(_merge(base, hint), self.as_of)
            if not stored:
                entry.queries.append(text)
                continue
            result = self.engine.search(text, flt, mode=None, top_k=self.settings.top_k)
            for d in result.degraded:
                cap, _, reason = d.partition(": ")
                self.state.degrade(cap or "search", reason or d)
            entry.queries.append(text)
            for hit in result.hits:
                self._add_node(hit, text)
                entry.hits.append(_hit_log(text, hit))
        entry.timings_ms["search"] = self.state.time("search", t0)
        if emit:
                self.emit("search", f"{len(queries)} quer{'y' if len(queries) == 1 else 'ies'}: {len(entry.hits)} "
                      f"hits, {len(self.state.nodes)} distinct passages", it, queries=entry.queries,
                      hits=len(entry.hits), empty_store=not stored)

    def _add_node(self, hit: SearchHit, query: str) -> None:
        score = hit.scores.rerank_score if hit.scores.rerank_score is not None else (hit.scores.rrf_score or 0.0)
        prev = self.state.nodes.get(hit.parent_id)
        if prev is not None:
            if score > prev.score:
                from dataclasses import replace

                self.state.nodes[hit.parent_id] = replace(prev, score=score, queries=(*prev.queries, query))
            return
        doc = hit.document
        self.state.company = self.state.company or doc.company
        self.state.nodes[hit.parent_id] = EvidenceNode(
            id=hit.parent_id, doc_id=doc.doc_id, start=hit.parent_start, end=hit.parent_end, text=hit.parent_text,
            ticker=doc.ticker, company=doc.company, source=doc.source, form=doc.form, filed_at=doc.filed_at,
            section=hit.section, score=float(score), doc_sha256=self._doc_sha(doc.doc_id),
            page_start=hit.page_start, page_end=hit.page_end, queries=(query,))

    def _doc_sha(self, doc_id: str) -> str:
        cache: dict[str, str] = self.services._cache.setdefault("doc_sha", {})
        if doc_id not in cache:
            cache[doc_id] = self.services.docstore.get_document(doc_id).sha256
        return cache[doc_id]

    def _available(self) -> list[str]:
        kinds = {d.form for d in self.services.docstore.list_documents(self._base_filter())}
        names = sorted(kinds)
        if self.state.report is not None:
            names += [f.id for f in self.state.report.figures() if f.value is not None]
            if self.state.report.fundamentals:
                names.append("companyfacts")
        return names

    def _critic(self, it: int, critic: Any, entry: IterationLog) -> CriticVerdict:
        t0 = time.perf_counter()
        nodes = filter_dated(list(self.state.nodes.values()), self.as_of)
        exclude = [self.ticker, *(self.state.company or "").split()]
        verdict: CriticVerdict = critic.run(self.question, nodes, self.as_of, self._available(),
                                            exclude_terms=exclude)
        entry.critic = verdict.to_log()
        entry.timings_ms["critic"] = self.state.time("critic", t0)
        miss = ", ".join(m.value for m in verdict.missing) or "none"
        self.emit("critic", f"{'sufficient' if verdict.sufficient else 'insufficient'} (overall "
                  f"{verdict.overall:.2f}, coverage {verdict.coverage:.2f}); missing: {miss}", it,
                  sufficient=verdict.sufficient, overall=verdict.overall, missing=[m.value for m in verdict.missing])
        return verdict

    # ------------------------------------------------------------------------------------------------------------
    def _fetch(self, it: int, verdict: CriticVerdict, sources: MarketSources, entry: IterationLog) -> None:
        from equimind.research_fetch import Fetcher

        t0 = time.perf_counter()
        kinds: dict[str, str] = {}
        for need in verdict.needs:
            for k in need.kinds:
                kinds.setdefault(k.value, f"critic: {need.aspect.value} missing ({need.why})")
        fetcher = Fetcher(self, sources)
        for kind, why in kinds.items():
            if kind in self.state.fetched_kinds:
                continue
            self.state.fetched_kinds.add(kind)
            record = fetcher.fetch(kind, why)
            entry.fetched.append(record)
            self.emit("fetch", f"{kind}: {record['outcome']}", it, **record)
        entry.timings_ms["fetch"] = self.state.time("fetch", t0)

    def _rewrite(self, it: int, rewriter: Any, verdict: CriticVerdict,
                 entry: IterationLog) -> list[tuple[str, FilterSpec | None]]:
        t0 = time.perf_counter()
        missing = list(verdict.missing) or [a.aspect for a in verdict.aspects]
        res = rewriter.run(self.question, missing, ticker=self.ticker, company=self.state.company,
                           as_of=self.as_of, base_filter=self._base_filter())
        queries = [(self.question, None)] + [(q.text, q.filters) for q in res.queries]
        entry.timings_ms["rewrite"] = self.state.time("rewrite", t0)
        self.emit("rewrite", f"{len(res.queries)} sub-queries for {', '.join(m.value for m in missing)}", it,
                  queries=[q.text for q in res.queries])
        return queries

    # ------------------------------------------------------------------------------------------------------------
    def _conclude(self, converged: bool, verdict: CriticVerdict, evidence: list[EvidenceNode],
                  t_all: float) -> Recommendation:
        from equimind.research_conclude import conclude

        return conclude(self, converged, verdict, evidence, t_all)

    def figures(self) -> list[Figure]:
        if self.state.report is None:
            return []
        return filter_dated([f for f in self.state.report.figures() if f.value is not None], self.as_of)


def _merge(base: FilterSpec, hint: FilterSpec | None) -> FilterSpec:
    """The rewriter's hint narrows the base filter (forms, dates); the ticker always stays."""
    if hint is None:
        return base
    since = max([d for d in (base.since, hint.since) if d], default=None)
    until = min([d for d in (base.until, hint.until) if d], default=None)
    if since and until and since > until:
        since = None
    return FilterSpec(tickers=base.tickers, since=since, until=until, sources=hint.sources or base.sources,
                      forms=hint.forms or base.forms)


def _filter_log(flt: FilterSpec) -> dict[str, Any]:
    return {"tickers": list(flt.tickers), "since": flt.since, "until": flt.until,
            "forms": list(flt.forms), "sources": [s.value for s in flt.sources]}


def _hit_log(query: str, hit: SearchHit) -> dict[str, Any]:
    s = hit.scores
    return {"query": query, "rank": hit.rank, "chunk_id": hit.chunk_id, "doc_id": hit.document.doc_id,
            "form": hit.document.form, "filed_at": hit.document.filed_at, "section": hit.section,
            "span": [hit.start, hit.end], "dense_rank": s.dense_rank, "bm25_rank": s.bm25_rank,
            "rrf": s.rrf_score, "rerank": s.rerank_score, "rerank_status": s.rerank_status}

