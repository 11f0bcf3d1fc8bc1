"""The end of a research run: compress the curated evidence, check that a specific ask is answered by what the run
can see (ADR 0006: else refuse, naming the missing terms, without a debate), run the debate, assemble the
Recommendation, and remember the run (hierarchical memory). Every collaborator is passed in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from equimind.answer.answerability import AnswerabilityCheck, AnswerabilityVerdict
from equimind.answer.answerer import Answerer
from equimind.answer.record import Answer
from equimind.changes.model import ChangeReport
from equimind.core.research import AgenticRAGReport, Figure, JudgeSynthesis, Recommendation
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import filter_dated
from equimind.debate.debate import DebateEngine
from equimind.debate.required import uncovered_aspects
from equimind.memory.store import MemoryStore
from equimind.query.analysis import AskKind
from equimind.query.parsed import ParsedQuestion
from equimind.research.aspects import AspectSearcher
from equimind.research.critic import CriticVerdict
from equimind.research.events import Emitter, ResearchStage
from equimind.research.state import RunState
from equimind.retrieval.compressor import ContextCompressor


@dataclass
class Concluder:
    """Compressor, answerability check, debate and memory of one run (built by ``research/run.py``)."""

    compressor: ContextCompressor
    answerability: AnswerabilityCheck
    debate: Callable[[], DebateEngine]
    memory: MemoryStore
    provider: str
    emit: Emitter
    answerer: Callable[[], Answerer] | None = None  # a specific ask is answered (issue 14), not rated
    rescope: Callable[[ParsedQuestion, str | None], ParsedQuestion] = lambda pq, company: pq  # the documents the
    # run can see now (``QuestionParser.rescope``): a fetch may have stored new filings
    changes: Callable[[str, date], ChangeReport | None] = lambda ticker, as_of: None  # the risk-factor changes
    # between the ticker's two latest stored filings (``app/changes_run.stored_changes``): debate evidence
    aspect_search: AspectSearcher | None = None  # searches the aspects the kept evidence argues nothing on

    def conclude(self, ask: ParsedQuestion, state: RunState, converged: bool, verdict: CriticVerdict,
                 evidence: list[EvidenceNode], figures: list[Figure], t_all: float) -> Recommendation:
        ask = self.rescope(ask, state.company)
        t0 = time.perf_counter()
        nodes = filter_dated(evidence, ask.as_of)
        comp = self.compressor.run(nodes, ask.as_of)
        self.emit(ResearchStage.COMPRESS, f"kept {len(comp.kept)} passages ({comp.tokens_used} tokens of "
                  f"{comp.budget}); discarded {len(comp.discarded)}", None, reasons=comp.reasons())
        state.time("compress", t0)

        answer = self._answerability(ask, state, nodes)
        read = list(comp.kept)  # what the debate reads: the kept passages and what the aspect search adds
        if answer.answerable and answer.analysis.kind is AskKind.SPECIFIC and self.answerer is not None:
            fields = self._answer_fields(ask, state, nodes)
        elif answer.answerable:
            read, fields = self._debate(ask, state, read, figures)
            if answer.analysis.topic and self.answerer is not None:  # "both": the rating, and above it the answer
                fields["answer"] = self.direct_answer(ask, state, nodes, topic=True)
        else:
            fields = self._refusal_fields(answer)

        agentic = AgenticRAGReport(iterations=len(state.logs), converged=converged, coverage=verdict.coverage,
                                   curated_nodes=len(comp.kept), discarded_nodes=len(comp.discarded),
                                   log=state.logs, answerability=answer.to_log(),
                                   aspect_searches=[a.to_log() for a in state.aspect_searches])
        state.degraded.extend(state.report.degraded if state.report else [])
        state.degraded.extend(fields.pop("degraded"))
        state.timings["total"] = round((time.perf_counter() - t_all) * 1000, 2)
        rec = Recommendation(ticker=ask.ticker, question=ask.text, as_of=ask.as_of, figures=figures,
                             agentic_rag=agentic, degraded=state.degraded.items(), timings_ms=dict(state.timings),
                             **fields)
        known = {n.id for n in nodes}
        rec = self._remember(ask, read, rec, [*nodes, *(n for n in read if n.id not in known)])
        ended = rec.rating.value if rec.rating else "REFUSED" if rec.refused else "ANSWERED"
        self.emit(ResearchStage.DONE, f"{ended} conviction {rec.conviction:.2f}", None)
        return rec

    def _debate(self, ask: ParsedQuestion, state: RunState, kept: list[EvidenceNode],
                figures: list[Figure]) -> tuple[list[EvidenceNode], dict[str, Any]]:
        """The debate over the kept passages plus what the aspect search adds for the aspects they argue nothing on
        (``research/aspects.py``); returns what it read and the Recommendation fields."""
        t0 = time.perf_counter()
        changes = self.changes(ask.ticker, ask.as_of)
        debate = self.debate()
        added: list[EvidenceNode] = []
        if self.aspect_search is not None:
            themes = debate.argued_themes(ask.as_of, kept, figures, changes)
            # the search covers the aspects of a rating; it never makes one: evidence that argues nothing is refused
            added = self.aspect_search.run(uncovered_aspects(themes), kept) if themes else []
        outcome = debate.run(ask.ticker, ask.text, ask.as_of, kept + added, figures, changes,
                             searched={a.aspect: a.said() for a in state.aspect_searches},
                             searched_ids=[n.id for n in added],
                             searched_aspects=[a.aspect for a in state.aspect_searches if a.query is not None])
        state.time("debate", t0)
        self.emit(ResearchStage.DEBATE, f"{len(outcome.bull_case)} bull and {len(outcome.bear_case)} bear "
                  f"claims verified; {outcome.dropped_claims} dropped", None,
                  rating=outcome.rating.value if outcome.rating else None)
        return kept + added, outcome.recommendation_fields()

    def _answerability(self, ask: ParsedQuestion, state: RunState,
                       evidence: list[EvidenceNode]) -> AnswerabilityVerdict:
        """Is the question's specific ask answered anywhere in what the run can see? (ADR 0006; decision asks
        always are.) Runs after the loop, so documents fetched on demand count."""
        t0 = time.perf_counter()
        answer = self.answerability.run(ask, evidence)
        state.time("answerability", t0)
        if answer.answerable:
            msg = f"{answer.analysis.kind.value} ask: answerable ({answer.rule})"
        else:
            msg = f"specific ask not answered by the evidence: refusing ({answer.rule})"
        self.emit(ResearchStage.ANSWERABILITY, msg, None, **answer.to_log())
        return answer

    def direct_answer(self, ask: ParsedQuestion, state: RunState, evidence: list[EvidenceNode], *,
                      topic: bool = False) -> Answer:
        """The Answer to a specific ask over the run's final evidence (``equimind ask`` and research); ``topic``:
        to a decision ask's topic, shown above its rating."""
        assert self.answerer is not None
        t0 = time.perf_counter()
        ans = self.answerer().answer(ask, evidence, topic=topic)
        state.time("answer", t0)
        said = ans.text or (ans.refusal.message if ans.refusal else "")
        self.emit(ResearchStage.ANSWER, f"{ans.support.value}: {said}"[:300], None, support=ans.support.value,
                  sentences=len(ans.sentences))
        return ans

    def _answer_fields(self, ask: ParsedQuestion, state: RunState, evidence: list[EvidenceNode]) -> dict[str, Any]:
        """The Recommendation fields of a specific ask: the answer, no rating and no debate."""
        ans = self.direct_answer(ask, state, evidence)
        reason = ans.refusal.message if ans.refusal else None
        return {"rating": None, "conviction": 0.0, "thesis": ans.text or f"No answer: {reason}.",
                "refused": ans.refused, "refusal_reason": reason, "answer": ans, "bull_case": [], "bear_case": [],
                "judge": None, "degraded": [], "dropped_claims": ans.dropped_sentences, "provider": self.provider,
                "prompt_hashes": {}, "usage": {}}

    def _refusal_fields(self, answer: AnswerabilityVerdict) -> dict[str, Any]:
        """The Recommendation fields of an answerability refusal: no debate ran, so there are no cases."""
        reason = answer.reason or answer.rule
        found = ", ".join(f"'{w}': {n}" for w, n in answer.doc_freq.items())
        synthesis = JudgeSynthesis(winning_side=None, winning_thesis="", reasoning=[
            f"Refused: {reason}.", f"Answerability rule {answer.rule}.",
            f"Visible documents containing each focus term: {found}."])
        return {"rating": None, "conviction": 0.0, "thesis": f"No recommendation: {reason}.", "refused": True,
                "refusal_reason": reason, "bull_case": [], "bear_case": [], "judge": synthesis, "degraded": [],
                "dropped_claims": 0, "provider": self.provider, "prompt_hashes": {}, "usage": {}}

    def _remember(self, ask: ParsedQuestion, kept: Any, rec: Recommendation,
                  nodes: list[EvidenceNode]) -> Recommendation:
        """Remember the evidence and the run (with its rating ledger entry); a rated result gets its "since" block,
        the change from the previous ledger entry visible at its as-of date (``memory/ledger.py``)."""
        self.memory.remember(ask.ticker, list(kept))
        _, since = self.memory.record_research(rec, nodes, duration_s=rec.timings_ms.get("total", 0.0) / 1000)
        return rec.model_copy(update={"since": since}) if since is not None else rec
