"""The end of a research run: compress the curated evidence, run the debate, assemble the Recommendation,
and remember the run (hierarchical memory)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from equimind.models import AgenticRAGReport, Degradation, EvidenceNode, Recommendation
from equimind.timeguard import filter_dated

if TYPE_CHECKING:
    from equimind.agents.critic import CriticVerdict
    from equimind.research import ResearchRun


def conclude(run: ResearchRun, converged: bool, verdict: CriticVerdict, evidence: list[EvidenceNode],
             t_all: float) -> Recommendation:
    from equimind.compressor import ContextCompressor

    state = run.state
    t0 = time.perf_counter()
    nodes = filter_dated(evidence, run.as_of)
    comp = ContextCompressor.from_settings(run.settings, run.services.tokenizer).run(nodes, run.as_of)
    run.emit("compress", f"kept {len(comp.kept)} passages ({comp.tokens_used} tokens of {comp.budget}); "
             f"discarded {len(comp.discarded)}", None, reasons=comp.reasons())
    state.time("compress", t0)

    t0 = time.perf_counter()
    figures = run.figures()
    outcome = _debate(run).run(run.ticker, run.question, run.as_of, list(comp.kept), figures)
    state.time("debate", t0)
    run.emit("debate", f"{len(outcome.bull_case)} bull and {len(outcome.bear_case)} bear claims verified; "
             f"{outcome.dropped_claims} dropped", None, rating=outcome.rating.value if outcome.rating else None)

    agentic = AgenticRAGReport(iterations=len(state.logs), converged=converged, coverage=verdict.coverage,
                               curated_nodes=len(comp.kept), discarded_nodes=len(comp.discarded), log=state.logs)
    fields = outcome.recommendation_fields()
    degraded = _merge_degraded(state.degraded, run.state.report.degraded if run.state.report else [],
                               fields.pop("degraded"))
    state.timings["total"] = round((time.perf_counter() - t_all) * 1000, 2)
    rec = Recommendation(ticker=run.ticker, question=run.question, as_of=run.as_of, figures=figures,
                         agentic_rag=agentic, degraded=degraded, timings_ms=dict(state.timings), **fields)
    _remember(run, comp.kept, rec)
    run.emit("done", f"{rec.rating.value if rec.rating else 'REFUSED'} conviction {rec.conviction:.2f}", None)
    return rec


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
    from equimind.memory import MemoryStore

    memory = MemoryStore.from_settings(run.settings)
    memory.remember(run.ticker, list(kept))
    memory.record_run(run.ticker, run.question, run.as_of, rec.rating,
                      rec.conviction, duration_s=rec.timings_ms.get("total", 0.0) / 1000)
