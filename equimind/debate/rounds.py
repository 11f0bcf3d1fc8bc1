"""The LLM side of the debate: briefs, openings, rebuttal rounds and the judge's synthesis.

An LLM claim becomes a DraftClaim citing the evidence item it quotes; the debate then verifies it and its weight is
re-derived from what it cites (``ClaimVerifier.evidence_strength``). A failed call falls back to the offline
analyst's output for that step and is recorded in ``degraded`` (or re-raised in strict mode).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from equimind.core.research import JudgeSynthesis, Speaker
from equimind.core.search import EvidenceNode
from equimind.debate import judge as rule
from equimind.debate.llm_analyst import LLMAnalyst, case_brief, judge_brief
from equimind.debate.offline import OfflineAnalyst, claim_id, order_nodes, rank_key
from equimind.debate.records import Author, ClaimKind, DraftClaim, SpanRef, VerifiedClaim
from equimind.debate.schemas import ArguedClaim, CaseOutput, JudgeOutput
from equimind.llm.calls import CallRecord, LLMCallError

if TYPE_CHECKING:
    from equimind.debate.state import RunState

_SIDE_WORD = {Speaker.BULL: "bull", Speaker.BEAR: "bear", None: "balanced"}


def order_claims(pool: Sequence[VerifiedClaim]) -> list[VerifiedClaim]:
    """Openings strongest first, then rebuttals; ties broken by ``rank_key`` (deterministic)."""
    return sorted(pool, key=lambda v: (v.draft.kind is ClaimKind.REBUTTAL, rank_key(v.draft)))


def _other(side: Speaker) -> Speaker:
    return Speaker.BEAR if side is Speaker.BULL else Speaker.BULL


class LLMRounds:
    """Runs the LLM agents for one debate and feeds their verified claims into the run's pool."""

    def __init__(self, llm: LLMAnalyst, state: RunState, *, strict: bool) -> None:
        self.llm = llm
        self.state = state
        self.strict = strict
        self.nodes: dict[str, EvidenceNode] = {f"E{i}": n for i, n in enumerate(order_nodes(state.evidence), 1)}
        self._flagged = {(h.doc_id, h.start, h.end) for h in state.analysis.injections}

    # ---- briefs ---------------------------------------------------------------------------------------------

    def _evidence_items(self) -> list[dict[str, Any]]:
        items = []
        for eid, n in self.nodes.items():
            text = n.text
            for doc_id, s, e in sorted(self._flagged, key=lambda x: -x[1]):
                if doc_id == n.doc_id and n.start <= s and e <= n.end:
                    text = text[:s - n.start] + "[removed: instruction-like text]" + text[e - n.start:]
            items.append({"evidence_id": eid, "ticker": n.ticker, "form": n.form, "section": n.section,
                          "filed_at": n.filed_at, "text": text})
        return items

    def _figure_items(self) -> list[dict[str, Any]]:
        return [{"figure_id": f.id, "name": f.name, "value": f.value, "unit": f.unit, "as_of": f.as_of,
                 "formula": f.formula} for f in self.state.figures if f.value is not None]

    def _claims_view(self, side: Speaker) -> list[dict[str, Any]]:
        return [{"claim_id": v.id, "kind": v.draft.kind.value, "theme": v.draft.theme.value, "text": v.draft.text}
                for v in order_claims(self.state.pool) if v.draft.speaker is side]

    def _brief(self, side: Speaker, phase: str) -> str:
        s = self.state
        return case_brief(ticker=s.ticker, question=s.question, as_of=s.as_of, phase=phase,
                          evidence=self._evidence_items(), figures=self._figure_items(),
                          own=self._claims_view(side), opponent=self._claims_view(_other(side)))

    # ---- conversion -----------------------------------------------------------------------------------------

    def _draft(self, side: Speaker, argued: ArguedClaim, opponent_ids: set[str]) -> DraftClaim:
        spans: list[SpanRef] = []
        dates = []
        for q in argued.citations:
            node = self.nodes.get(q.evidence_id)
            # An unknown evidence id keeps an unverifiable reference, so the claim is dropped and counted.
            doc_id, lo, hi = (node.doc_id, node.start, node.end) if node else (f"unknown:{q.evidence_id}", 0, 0)
            spans.append(SpanRef(doc_id, lo, hi, q.quote))
            if node is not None and node.filed_at is not None:
                dates.append(node.filed_at)
        dates += [f.as_of for f in self.state.figures if f.id in argued.figure_ids and f.as_of is not None]
        is_rebuttal = argued.rebuts is not None and argued.rebuts in opponent_ids
        kind = ClaimKind.REBUTTAL if is_rebuttal else ClaimKind.OPENING
        signal = f"llm{'-rebuttal' if is_rebuttal else ''}:{argued.theme.value}"
        keys = [q.quote for q in argued.citations] + list(argued.figure_ids) + [argued.rebuts or ""]
        return DraftClaim(id=claim_id(side, kind, signal, keys), speaker=side, text=argued.text, theme=argued.theme,
                          strength=0.0, signal=signal, spans=tuple(spans), figure_ids=tuple(argued.figure_ids),
                          kind=kind, rebuts=argued.rebuts if is_rebuttal else None, author=Author.LLM,
                          evidence_date=max(dates) if dates else None)

    def _accept(self, side: Speaker, output: CaseOutput) -> None:
        """Verify each claim, then set its strength (and theme if the model's is unsupported) from the evidence."""
        opponent_ids = {v.id for v in self.state.pool if v.draft.speaker is not side}
        accepted: list[VerifiedClaim] = []
        for argued in output.claims:
            draft = self._draft(side, argued, opponent_ids)
            verified = self.state.checker.verify(draft)
            if verified is None:
                continue
            strength, theme, basis = self.state.checker.evidence_strength(side, verified)
            final_theme = theme or argued.theme
            prefix = "llm-rebuttal" if verified.draft.kind is ClaimKind.REBUTTAL else "llm"
            draft = replace(verified.draft, strength=round(strength, 4), theme=final_theme, basis=basis,
                            signal=f"{prefix}:{final_theme.value}")
            accepted.append(VerifiedClaim(draft, verified.citations))
        self.state.add_verified(accepted)

    # ---- rounds ---------------------------------------------------------------------------------------------

    async def _call(self, side: Speaker, phase: str, round_no: int) -> tuple[CaseOutput | None, CallRecord, str]:
        """(output or None, accounting, failure message); strict mode re-raises the failure."""
        try:
            output, record = await self.llm.argue(side, self._brief(side, phase), round_no)
        except LLMCallError as exc:
            if self.strict:
                raise
            return None, exc.record, str(exc)
        return output, record, ""

    async def _both(self, phase: str, round_no: int) -> list[tuple[Speaker, CaseOutput | None]]:
        """Both sides concurrently; records and degradations are added in a fixed order (bull, then bear)."""
        results = await asyncio.gather(self._call(Speaker.BULL, phase, round_no),
                                       self._call(Speaker.BEAR, phase, round_no))
        out: list[tuple[Speaker, CaseOutput | None]] = []
        for side, (output, record, failure) in zip((Speaker.BULL, Speaker.BEAR), results, strict=True):
            self.state.calls.append(record)
            if output is None:
                fallback = "offline analyst's opening case" if round_no == 0 else "offline analyst's rebuttal"
                self.state.degrade(f"llm:{side.value}", f"{failure}; the {fallback} is used")
            out.append((side, output))
        return out

    async def openings(self) -> None:
        for side, output in await self._both("opening", 0):
            if output is not None:
                self._accept(side, output)

    async def rebuttals(self, round_no: int, analyst: OfflineAnalyst) -> None:
        for side, output in await self._both(f"rebuttal round {round_no}", round_no):
            if output is not None:
                self._accept(side, output)
                continue
            drafts = [v.draft for v in self.state.pool]
            rebutted = {d.rebuts for d in drafts if d.rebuts is not None}
            r = analyst.rebut(side, [d for d in drafts if d.speaker is side],
                              [d for d in drafts if d.speaker is not side], {x for x in rebutted if x})
            if r is not None:
                self.state.add([r])

    # ---- judge ----------------------------------------------------------------------------------------------

    async def judge(self, verdict: rule.Verdict, base: JudgeSynthesis) -> tuple[JudgeSynthesis, str]:
        """The LLM writes the synthesis; the rule's rating stands (its proposal is recorded, never applied)."""
        weights = {w.claim.id: w.weight for w in verdict.weighted}
        claims = [{"claim_id": v.id, "side": v.draft.speaker.value, "kind": v.draft.kind.value,
                   "theme": v.draft.theme.value, "weight": weights.get(v.id, 0.0), "text": v.draft.text}
                  for v in order_claims(self.state.pool)]
        s = self.state
        brief = judge_brief(ticker=s.ticker, question=s.question, as_of=s.as_of, claims=claims,
                            verdict={"score": verdict.score, "rating": verdict.rating.value,
                                     "conviction": verdict.conviction, "reasoning": list(verdict.reasoning)})
        out, record = await self.llm.judge(brief)
        s.calls.append(record)
        return self._merge(out, verdict, base)

    def _merge(self, out: JudgeOutput, verdict: rule.Verdict, base: JudgeSynthesis) -> tuple[JudgeSynthesis, str]:
        texts = {v.id: v.draft for v in self.state.pool}
        risks = [texts[i].text for i in out.key_risk_ids if i in texts and texts[i].speaker is Speaker.BEAR]
        cats = [texts[i].text for i in out.key_catalyst_ids if i in texts and texts[i].speaker is Speaker.BULL]
        agrees = out.winning_side == _SIDE_WORD[verdict.winning_side]
        thesis = out.winning_thesis if agrees else verdict.thesis
        notes = [f"LLM judge: {line}" for line in (*out.contradictions, *out.reasoning)]
        if out.proposed_rating is not verdict.rating:
            notes.append(f"LLM judge proposed {out.proposed_rating.value}; the rule over verified evidence gives "
                         f"{verdict.rating.value}, which stands (ADR 0003).")
        if not agrees:
            notes.append(f"LLM judge named '{out.winning_side}' the winner against the rule's "
                         f"'{_SIDE_WORD[verdict.winning_side]}'; the rule's thesis is used.")
        synthesis = base.model_copy(update={"key_risks": risks or base.key_risks,
                                            "key_catalysts": cats or base.key_catalysts,
                                            "reasoning": [*base.reasoning, *notes]})
        return synthesis, thesis
