"""One research run, wired from ``Services``: DB-first figures → the agentic loop → final all-aspect retrieval →
the conclusion (compression, answerability, debate, memory) → the cited Recommendation."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from equimind.analytics.market import MarketReport
from equimind.answer.answerability import AnswerabilityCheck
from equimind.answer.record import Answer
from equimind.app.changes_run import stored_changes
from equimind.core.research import Figure, Recommendation
from equimind.core.search import EvidenceNode, SearchResult
from equimind.core.timeguard import filter_dated
from equimind.debate.debate import DebateEngine
from equimind.ingest.first_answer import CAPABILITY as DEFERRED
from equimind.ingest.first_answer import run_note
from equimind.lexicon.aspect_queries import load_aspect_queries
from equimind.query.parsed import ParsedQuestion
from equimind.research.aspects import AspectSearcher
from equimind.research.conclude import Concluder
from equimind.research.critic import CriticVerdict, RAGCriticAgent
from equimind.research.events import Emitter, EventSink, ResearchStage
from equimind.research.fetch import Fetcher
from equimind.research.loop import ResearchLoop, SearchFn, evidence_node
from equimind.research.rewriter import QueryRewriter
from equimind.research.state import RunState
from equimind.retrieval.compressor import ContextCompressor

if TYPE_CHECKING:
    from equimind.app.services import Services


class ResearchRun:
    """Not reusable: one instance per research call (keeps the run's mutable state)."""

    def __init__(self, services: Services, question: ParsedQuestion, on_event: EventSink | None, *,
                 search: SearchFn, product_search: Callable[[], SearchResult] | None = None) -> None:
        self.services = services
        self.settings = services.settings
        self.ask = question
        self.emit = Emitter(on_event)
        self.state = RunState()
        self._search = search
        self._product_search = product_search  # ``equimind search`` of the question: what ``answer`` reads first
        self._aspects: AspectSearcher | None = None  # set by _gather: the debate's aspect search (the loop's filter)

    def run(self) -> Recommendation:
        t_all = time.perf_counter()
        converged, verdict, evidence = self._gather()
        return self._concluder().conclude(self.ask, self.state, converged, verdict, evidence, self.figures(), t_all)

    def answer(self) -> Answer:
        """The direct answer to a specific ask over the same DB-first retrieval (on-demand fetch included); the
        answerability refusal (ADR 0006) applies first, a decision ask is refused with the command that rates it."""
        t_all = time.perf_counter()
        _, _, evidence = self._gather()
        evidence = self._with_product_search(evidence)
        concluder = self._concluder()
        ask = concluder.rescope(self.ask, self.state.company)
        ans = concluder.direct_answer(ask, self.state, filter_dated(evidence, self.ask.as_of))
        self.state.timings["total"] = round((time.perf_counter() - t_all) * 1000, 2)
        extra = [str(d) for d in self.state.degraded.items() if str(d) not in ans.degraded]
        return ans.model_copy(update={"degraded": [*ans.degraded, *extra], "timings_ms": dict(self.state.timings),
                                      "agentic_rag": [log.model_dump(mode="json") for log in self.state.logs]})

    def _with_product_search(self, evidence: list[EvidenceNode]) -> list[EvidenceNode]:
        """One retrieval for ``ask`` and ``search``: the hits ``equimind search`` returns for the question (its
        company and fiscal-year filter, in its rank order) come first, then the run's own evidence not among
        them; so ``ask`` reads at least what ``search`` shows."""
        if self._product_search is None:
            return evidence
        t0 = time.perf_counter()
        result = self._product_search()
        self.state.degraded.extend(d for d in result.degraded if d.capability != DEFERRED)
        first = list({h.parent_id: evidence_node(h, self.ask.text, self.services.doc_sha) for h in result.hits
                      }.values())
        seen = {n.id for n in first}
        self.state.time("product_search", t0)
        return [*first, *(n for n in evidence if n.id not in seen)]

    def _gather(self) -> tuple[bool, CriticVerdict, list[EvidenceNode]]:
        s = self.services
        sources = s.sources
        self.state.degraded.extend(sources.market.unavailable)
        self._mode = sources.mode.value
        self._load_cached_report()
        model, reason = s.llm
        if reason:
            self.state.degraded.add("llm", reason)
        rewriter = QueryRewriter(model)
        fetcher = Fetcher(s.docstore, s.pipeline, sources, self.state, ticker=self.ask.ticker, as_of=self.ask.as_of,
                          settings=self.settings, on_report=lambda r: self.set_report(r, store=True))
        loop = ResearchLoop(question=self.ask,
                            max_iterations=self.settings.max_iterations, search=self._search,
                            critic=RAGCriticAgent(model), rewriter=rewriter, fetcher=fetcher, docstore=s.docstore,
                            state=self.state, emit=self.emit, doc_sha=s.doc_sha)
        converged, verdict = loop.run()
        loop.ensure_figures()
        evidence = loop.final_evidence()
        self._aspects = AspectSearcher(search=self._search, base_filter=loop.base_filter(), as_of=self.ask.as_of,
                                       queries=load_aspect_queries(), state=self.state, emit=self.emit,
                                       doc_sha=s.doc_sha)
        deferred = sum(s.docstore.deferred((self.ask.ticker,)).values())
        if deferred:
            self.state.degraded.add(DEFERRED, run_note(self.ask.ticker, deferred))
        return converged, verdict, evidence

    def _concluder(self) -> Concluder:
        s = self.services
        return Concluder(
            compressor=ContextCompressor.from_settings(self.settings, s.tokenizer),
            answerability=AnswerabilityCheck(s.docstore, s.answerability_terms),
            debate=lambda: DebateEngine.from_settings(self.settings, s.docstore, api_key=s.llm_api_key(),
                                                      embedder=s.embedder),
            memory=s.memory, provider=self.settings.provider, emit=self.emit, answerer=s.answerer,
            rescope=s.question_parser.rescope, changes=lambda t, d: stored_changes(s, t, d),
            aspect_search=self._aspects)

    def _load_cached_report(self) -> None:
        """DB-first figures: reuse the market report computed by an earlier run for the same ticker and as-of."""
        raw = self.services.figure_cache.get(self.ask.ticker, self.ask.as_of, self._mode)
        if raw is not None:
            self.set_report(MarketReport.model_validate_json(raw), store=False)
            self.emit(ResearchStage.FIGURES, f"reused {len(self.figures())} stored figures computed for as-of "
                      f"{self.ask.as_of}")

    def set_report(self, report: MarketReport, *, store: bool) -> None:
        self.state.report = report
        self.state.company = report.company or self.state.company
        if store:
            self.services.figure_cache.put(self.ask.ticker, self.ask.as_of, self._mode, report.model_dump_json())

    def figures(self) -> list[Figure]:
        if self.state.report is None:
            return []
        return filter_dated([f for f in self.state.report.figures() if f.value is not None], self.ask.as_of)
