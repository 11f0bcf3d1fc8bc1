"""The DB-first agentic RAG loop of one research run.

At most ``max_iterations`` rounds, stopping as soon as the critic says the evidence is sufficient:
  1. search the store (ticker + as-of filter in both retrieval legs) with the question / rewritten sub-queries;
  2. the critic scores the curated evidence on five dimensions and names the missing aspects;
  3. if insufficient: fetch exactly the data kinds that would fill the missing aspects and are not stored yet
     (filings dated on or before as-of, prices + companyfacts figures, news), ingest them, and rewrite the queries.
Every round is logged (queries, filters, hits with scores, fetches with reasons, critic scores, stage timings).
The loop is given its collaborators: a search callable, the critic, the rewriter and the fetcher.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from equimind.core.documents import FilterSpec
from equimind.core.research import IterationLog
from equimind.core.search import EvidenceNode, SearchHit, SearchResult
from equimind.core.timeguard import as_of_filter, filter_dated
from equimind.ingest.first_answer import CAPABILITY as DEFERRED
from equimind.lexicon.aspects import CORE_ASPECTS
from equimind.lexicon.text import question_words
from equimind.query.analysis import AskKind
from equimind.query.parsed import ParsedQuestion
from equimind.query.shape import ShapedQuery
from equimind.research.critic import CriticVerdict, RAGCriticAgent
from equimind.research.events import Emitter, ResearchStage
from equimind.research.fetch import Fetcher
from equimind.research.rewriter import QueryRewriter
from equimind.research.state import FetchRecord, HitRecord, RunState, filter_log, merge_filters
from equimind.store.docstore import DocStore

# (query text, filter, the parsed question's shaped query when the text is the question itself, else None: the
# searcher shapes a generated sub-query as any search text)
SearchFn = Callable[[str, FilterSpec, ShapedQuery | None], SearchResult]
Query = tuple[str, FilterSpec | None]


def evidence_node(hit: SearchHit, query: str, doc_sha: Callable[[str], str]) -> EvidenceNode:
    """A search hit's parent passage as the evidence the answer and the debate read."""
    score = hit.scores.rerank_score if hit.scores.rerank_score is not None else (hit.scores.rrf_score or 0.0)
    doc = hit.document
    return EvidenceNode(
        id=hit.parent_id, doc_id=doc.doc_id, start=hit.parent_start, end=hit.parent_end, text=hit.parent_text,
        ticker=doc.ticker, company=doc.company, source=doc.source, form=doc.form, filed_at=doc.filed_at,
        section=hit.section, score=float(score), doc_sha256=doc_sha(doc.doc_id),
        page_start=hit.page_start, page_end=hit.page_end, queries=(query,))


# What a decision ask with no topic ("Should I buy NVIDIA?", "NVDA: buy or sell?") is researched as: its words name
# no subject beyond the company (the search is filtered to it), so every such paraphrase reads the same evidence
# and reaches the same rating. A decision ask with a topic ("Is data-center growth sustainable?") keeps its words.
DECISION_RESEARCH_TEXT = "Should I invest in this company?"


def research_text(question: ParsedQuestion) -> str:
    """The text the loop searches, criticises and rewrites: the question, or for a decision ask without a topic
    the one text every paraphrase of it shares."""
    ask = question.ask
    return DECISION_RESEARCH_TEXT if ask.kind is AskKind.DECISION and not ask.topic else question.text


class ResearchLoop:
    """Not reusable: one instance per research call (it fills the run's state)."""

    def __init__(self, *, question: ParsedQuestion, max_iterations: int, search: SearchFn,
                 critic: RAGCriticAgent, rewriter: QueryRewriter, fetcher: Fetcher, docstore: DocStore,
                 state: RunState, emit: Emitter, doc_sha: Callable[[str], str]) -> None:
        self.parsed = question
        self.question, self.ticker, self.as_of = research_text(question), question.ticker, question.as_of
        self.words = question_words(self.question) if self.question != question.text else question.words
        self.max_iterations = max_iterations
        self._search_fn, self.critic, self.rewriter, self.fetcher = search, critic, rewriter, fetcher
        self.docstore, self.state, self.emit, self._doc_sha = docstore, state, emit, doc_sha

    def run(self) -> tuple[bool, CriticVerdict]:
        queries: list[Query] = [(self.question, None)]
        verdict: CriticVerdict | None = None
        for it in range(1, self.max_iterations + 1):
            entry = IterationLog(iteration=it)
            self.search(it, queries, entry)
            verdict = self._critic(it, entry)
            self.state.logs.append(entry)
            if verdict.sufficient:
                return True, verdict
            if it == self.max_iterations:
                break
            self._fetch(it, verdict, entry)
            queries = self._rewrite(it, verdict, entry)
        assert verdict is not None
        return False, verdict

    def base_filter(self) -> FilterSpec:
        return as_of_filter(FilterSpec(tickers=(self.ticker,)), self.as_of)

    def ensure_figures(self) -> None:
        """The debate argues from figures too: when the loop converged on stored text alone and no figures exist
        for this as-of date yet, compute them now (logged on the last iteration like any other fetch)."""
        if self.state.report is not None or not self.state.logs:
            return
        record = self.fetcher.fetch("prices", "figures for the debate: none computed for this as-of yet")
        self._log_fetch(self.state.logs[-1], record)

    def final_evidence(self) -> list[EvidenceNode]:
        """What the debate reads: one fixed retrieval over every aspect (the question plus multi-perspective
        sub-queries), so the evidence depends on what is stored, not on the round in which the loop converged."""
        t0 = time.perf_counter()
        loop_nodes, self.state.nodes = self.state.nodes, {}
        res = self.rewriter.run(self.question, list(CORE_ASPECTS), ticker=self.ticker, company=self.state.company,
                                as_of=self.as_of, base_filter=self.base_filter(), words=self.words)
        entry = IterationLog(iteration=0)
        self.search(0, [(self.question, None)] + [(q.text, q.filters) for q in res.queries], entry, emit=False)
        final, self.state.nodes = self.state.nodes, loop_nodes
        self.state.time("final_retrieval", t0)
        self.emit(ResearchStage.CURATE, f"final retrieval over all aspects: {len(final)} passages "
                  f"({len(entry.queries)} queries)", None, queries=entry.queries)
        return filter_dated(sorted(final.values(), key=lambda n: n.id), self.as_of)

    def search(self, it: int, queries: list[Query], entry: IterationLog, *, emit: bool = True) -> None:
        t0 = time.perf_counter()
        base = self.base_filter()
        entry.filters = filter_log(base)
        stored = self.docstore.counts().get("indexed", 0)
        for text, hint in queries:
            entry.queries.append(text)
            if not stored:
                continue
            shaped = self.parsed.shaped if text == self.parsed.text else None
            result = self._search_fn(text, as_of_filter(merge_filters(base, hint), self.as_of), shaped)
            # deferred embeddings: one run-level line instead (ResearchRun), not one per search scope
            self.state.degraded.extend(d for d in result.degraded if d.capability != DEFERRED)
            for hit in result.hits:
                self._add_node(hit, text)
                entry.hits.append(HitRecord(text, hit).to_log())
        entry.timings_ms["search"] = self.state.time("search", t0)
        if emit:
            self.emit(ResearchStage.SEARCH, f"{len(queries)} quer{'y' if len(queries) == 1 else 'ies'}: "
                      f"{len(entry.hits)} hits, {len(self.state.nodes)} distinct passages", it,
                      queries=entry.queries, hits=len(entry.hits), empty_store=not stored)

    def _add_node(self, hit: SearchHit, query: str) -> None:
        node = evidence_node(hit, query, self._doc_sha)
        prev = self.state.nodes.get(hit.parent_id)
        if prev is not None:
            if node.score > prev.score:
                self.state.nodes[hit.parent_id] = replace(prev, score=node.score, queries=(*prev.queries, query))
            return
        self.state.company = self.state.company or hit.document.company
        self.state.nodes[hit.parent_id] = node

    def _available(self) -> list[str]:
        kinds = {d.form for d in self.docstore.list_documents(self.base_filter())}
        names = sorted(kinds)
        if self.state.report is not None:
            names += [f.id for f in self.state.report.figures() if f.value is not None]
            if self.state.report.fundamentals:
                names.append("companyfacts")
        return names

    def _critic(self, it: int, entry: IterationLog) -> CriticVerdict:
        t0 = time.perf_counter()
        nodes = filter_dated(list(self.state.nodes.values()), self.as_of)
        exclude = [self.ticker, *(self.state.company or "").split()]
        verdict = self.critic.run(self.question, nodes, self.as_of, self._available(), exclude_terms=exclude,
                                  words=self.words)
        entry.critic = verdict.to_log()
        entry.timings_ms["critic"] = self.state.time("critic", t0)
        miss = ", ".join(m.value for m in verdict.missing) or "none"
        self.emit(ResearchStage.CRITIC, f"{'sufficient' if verdict.sufficient else 'insufficient'} (overall "
                  f"{verdict.overall:.2f}, coverage {verdict.coverage:.2f}); missing: {miss}", it,
                  sufficient=verdict.sufficient, overall=verdict.overall, missing=[m.value for m in verdict.missing])
        return verdict

    def _fetch(self, it: int, verdict: CriticVerdict, entry: IterationLog) -> None:
        t0 = time.perf_counter()
        kinds: dict[str, str] = {}
        for need in verdict.needs:
            for k in need.kinds:
                kinds.setdefault(k.value, f"critic: {need.aspect.value} missing ({need.why})")
        for kind, why in kinds.items():
            if kind in self.state.fetched_kinds:
                continue
            self.state.fetched_kinds.add(kind)
            self._log_fetch(entry, self.fetcher.fetch(kind, why), it)
        entry.timings_ms["fetch"] = self.state.time("fetch", t0)

    def _log_fetch(self, entry: IterationLog, record: FetchRecord, it: int | None = None) -> None:
        log = record.to_log()
        entry.fetched.append(log)
        self.emit(ResearchStage.FETCH, f"{record.kind}: {log['outcome']}", entry.iteration if it is None else it,
                  **log)

    def _rewrite(self, it: int, verdict: CriticVerdict, entry: IterationLog) -> list[Query]:
        t0 = time.perf_counter()
        missing = list(verdict.missing) or [a.aspect for a in verdict.aspects]
        res = self.rewriter.run(self.question, missing, ticker=self.ticker, company=self.state.company,
                                as_of=self.as_of, base_filter=self.base_filter(), words=self.words)
        queries: list[Query] = [(self.question, None)] + [(q.text, q.filters) for q in res.queries]
        entry.timings_ms["rewrite"] = self.state.time("rewrite", t0)
        self.emit(ResearchStage.REWRITE, f"{len(res.queries)} sub-queries for "
                  f"{', '.join(m.value for m in missing)}", it, queries=[q.text for q in res.queries])
        return queries
