"""The end of a research run: compress the curated evidence, check that a specific ask is answered by what the run
can see (ADR 0006: else refuse, naming the missing terms, without a debate), run the debate, assemble the
Recommendation, and remember the run (hierarchical memory)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from equimind.models import AgenticRAGReport, Degradation, EvidenceNode, JudgeSynthesis, Recommendation
from equimind.timeguard import filter_dated

if TYPE_CHECKING:
    from equimind.agents.critic import CriticVerdict
    from equimind.answerability.check import AnswerabilityVerdict
    from equimind.research import ResearchRun


def conclude(run: ResearchRun, converged: bool, verdict: CriticVerdict, evidence: list[EvidenceNode],
             t_all: float) -> Recommendation:
    from equimind.retrieval.compressor import ContextCompressor

    state = run.state
    t0 = time.perf_counter()
    nodes = filter_dated(evidence, run.as_of)
    comp = ContextCompressor.from_settings(run.settings, run.services.tokenizer).run(nodes, run.as_of)
    run.emit("compress", f"kept {len(comp.kept)} passages ({comp.tokens_used} tokens of {comp.budget}); "
             f"discarded {len(comp.discarded)}", None, reasons=comp.reasons())
    state.time("compress", t0)

    figures = run.figures()
    answer = _answerability(run, nodes)
    if answer.answerable:
        t0 = time.perf_counter()
        outcome = _debate(run).run(run.ticker, run.question, run.as_of, list(comp.kept), figures)
        state.time("debate", t0)
        run.emit("debate", f"{len(outcome.bull_case)} bull and {len(outcome.bear_case)} bear claims verified; "
                 f"{outcome.dropped_claims} dropped", None, rating=outcome.rating.value if outcome.rating else None)
        fields = outcome.recommendation_fields()
    else:
        fields = _refusal_fields(run, answer)

    agentic = AgenticRAGReport(iterations=len(state.logs), converged=converged, coverage=verdict.coverage,
                               curated_nodes=len(comp.kept), discarded_nodes=len(comp.discarded), log=state.logs,
                               answerability=answer.to_log())
    degraded = _merge_degraded(state.degraded, run.state.report.degraded if run.state.report else [],
                               fields.pop("degraded"))
    state.timings["total"] = round((time.perf_counter() - t_all) * 1000, 2)
    rec = Recommendation(ticker=run.ticker, question=run.question, as_of=run.as_of, figures=figures,
                         agentic_rag=agentic, degraded=degraded, timings_ms=dict(state.timings), **fields)
    _remember(run, comp.kept, rec)
    run.emit("done", f"{rec.rating.value if rec.rating else 'REFUSED'} conviction {rec.conviction:.2f}", None)
    return rec


def _answerability(run: ResearchRun, evidence: list[EvidenceNode]) -> AnswerabilityVerdict:
    """Is the question's specific ask answered anywhere in what the run can see? (ADR 0006; decision asks always
    are.) Runs after the loop, so documents fetched on demand count; per-document term sets are cached per home."""
    from equimind.answerability.check import AnswerabilityCheck

    t0 = time.perf_counter()
    cache = run.services._cache.setdefault("answerability_terms", {})
    answer = AnswerabilityCheck(run.services.docstore, cache).run(run.question, run.ticker, run.as_of, evidence,
                                                                  company=run.state.company)
    run.state.time("answerability", t0)
    if answer.answerable:
        msg = f"{answer.analysis.kind.value} ask: answerable ({answer.rule})"
    else:
        msg = f"specific ask not answered by the evidence: refusing ({answer.rule})"
    run.emit("answerability", msg, None, **answer.to_log())
    return answer


def _refusal_fields(run: ResearchRun, answer: AnswerabilityVerdict) -> dict[str, Any]:
    """The Recommendation fields of an answerability refusal: no debate ran, so there are no cases."""
    reason = answer.reason or answer.rule
    found = ", ".join(f"'{w}': {n}" for w, n in answer.doc_freq.items())
    synthesis = JudgeSynthesis(winning_side=None, winning_thesis="", reasoning=[
        f"Refused: {reason}.", f"Answerability rule {answer.rule}.",
        f"Visible documents containing each focus term: {found}."])
    return {"rating": None, "conviction": 0.0, "thesis": f"No recommendation: {reason}.", "refused": True,
            "refusal_reason": reason, "bull_case": [], "bear_case": [], "judge": synthesis, "degraded": [],
            "dropped_claims": 0, "provider": run.settings.provider, "prompt_hashes": {}, "usage": {}}


def _debate(run: ResearchRun) -> Any:
    from equimind.agents.debate import DebateEngine
    from equimind.agents.providers import resolve_api_key

    key = resolve_api_key(run.settings.provider, run.settings.api_key_env())
    return DebateEngine.from_settings(run.settings, run.services.docstore, api_key=key)


def _merge_degraded(*groups: Any) -> list[Degradation]:
    out: list[Degradation] = []
    for group in groups:
        for d in group:
            if not any(o.capability == d.capability and o.reason == d.reason for o in out):
                out.append(d)
    return out


def _remember(run: ResearchRun, kept: Any, rec: Recommendation) -> None:
    from equimind.memory.store import MemoryStore

    memory = MemoryStore.from_settings(run.settings)
    memory.remember(run.ticker, list(kept))
    memory.record_run(run.ticker, run.question, run.as_of, rec.rating,
                      rec.conviction, duration_s=rec.timings_ms.get("total", 0.0) / 1000)
