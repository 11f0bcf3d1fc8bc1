"""The adversarial debate: bull and bear build cases from the same evidence, rebut each other for
``Settings.debate_rounds`` rounds, and the judge resolves them into a rating (see
docs/decisions/0003-offline-judge-rule.md).

The offline analyst always runs: its claims are deterministic signals over the evidence and form the base of both
cases. With an LLM, the bull/bear agents add argued claims and rebuttals, and the LLM judge writes the synthesis. In
both modes every claim is verified against the stored text before it counts, its weight comes from what it cites, and
the rating is the judge rule's, so text planted in a filing cannot move it (ADR 0003, "Prompt injection").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any

from equimind.changes.model import ChangeReport
from equimind.core.citations import CitationVerifier, TextLookup
from equimind.core.config import Settings
from equimind.core.degraded import Degradation
from equimind.core.errors import ConfigError, NotFoundError, ParseError
from equimind.core.protocols import Embedder
from equimind.core.research import Claim, Figure, JudgeSynthesis, Rating, Speaker
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import split_by_as_of
from equimind.debate import judge as rule
from equimind.debate.claim_model import ClaimJudge, claim_judge_for
from equimind.debate.llm_analyst import LLMAnalyst
from equimind.debate.offline import OfflineAnalyst
from equimind.debate.records import ClaimKind, DraftClaim
from equimind.debate.required import aspect_coverage, check_required
from equimind.debate.rounds import LLMRounds, order_claims
from equimind.debate.state import RunState
from equimind.debate.verify import ClaimVerifier
from equimind.lexicon.lm_lists import Lexicon, load_lexicon
from equimind.llm.calls import LLMCallError

logger = logging.getLogger(__name__)
MAX_ROUNDS = 5


@dataclass(frozen=True)
class DebateOutcome:
    """What the debate hands the engine; ``recommendation_fields()`` maps it onto models.Recommendation."""

    bull_case: tuple[Claim, ...]
    bear_case: tuple[Claim, ...]
    judge: JudgeSynthesis | None
    rating: Rating | None
    conviction: float
    thesis: str
    dropped_claims: int
    refused: bool
    refusal_reason: str | None
    degraded: tuple[Degradation, ...]
    prompt_hashes: dict[str, str]
    usage: dict[str, Any]
    provider: str
    score: float | None = None

    def recommendation_fields(self) -> dict[str, Any]:
        return {"rating": self.rating, "conviction": self.conviction, "thesis": self.thesis,
                "refused": self.refused, "refusal_reason": self.refusal_reason, "bull_case": list(self.bull_case),
                "bear_case": list(self.bear_case), "judge": self.judge, "degraded": list(self.degraded),
                "dropped_claims": self.dropped_claims, "provider": self.provider,
                "prompt_hashes": dict(self.prompt_hashes), "usage": dict(self.usage)}


class DebateEngine:
    """``run(ticker, question, as_of, evidence, figures) -> DebateOutcome``; ``arun`` inside an event loop."""

    def __init__(self, settings: Settings, llm: LLMAnalyst | None, text_lookup: TextLookup, *,
                 lexicon: Lexicon | None = None, max_claims_per_side: int = 8, strict: bool = False,
                 lexicon_note: str | None = None, claim_judge: ClaimJudge | None = None,
                 claim_judge_note: str | None = None) -> None:
        if not 0 <= settings.debate_rounds <= MAX_ROUNDS:
            raise ConfigError(f"debate_rounds must be between 0 and {MAX_ROUNDS} (EQUIMIND_DEBATE_ROUNDS); "
                              f"got {settings.debate_rounds}")
        if max_claims_per_side < 1:
            raise ConfigError("max_claims_per_side must be at least 1")
        self.rounds = settings.debate_rounds
        self.llm = llm
        self.lexicon = lexicon
        self.strict = strict
        self._lookup = text_lookup
        self._max_claims = max_claims_per_side
        self._lexicon_note = lexicon_note
        self._claim_judge, self._claim_judge_note = claim_judge, claim_judge_note

    @classmethod
    def from_settings(cls, settings: Settings, text_lookup: TextLookup, *, api_key: str | None,
                      provider: str | None = None, model: str | None = None, strict: bool = False,
                      embedder: Embedder | None = None) -> DebateEngine:
        """The entrypoint's one call: the LLM analyst for ``provider`` (None for offline; ConfigError naming the
        variable when a key is missing), the LM lexicon from ``settings.corpus_dir / "sentiment"`` (when absent,
        tone signals are off and every outcome says why in ``degraded``) and the claim classifier over ``embedder``
        (off, and said in ``degraded``, when the embedder is not the one it was trained for)."""
        llm = LLMAnalyst.from_settings(settings, api_key=api_key, provider=provider, model=model)
        try:
            lexicon, note = load_lexicon(settings.corpus_dir / "sentiment"), None
        except (NotFoundError, ParseError) as exc:
            lexicon, note = None, str(exc)
        judge, judge_note = claim_judge_for(embedder)
        return cls(settings, llm, text_lookup, lexicon=lexicon, strict=strict, lexicon_note=note,
                   claim_judge=judge, claim_judge_note=judge_note)

    def run(self, ticker: str, question: str, as_of: date, evidence: Sequence[EvidenceNode],
            figures: Sequence[Figure], changes: ChangeReport | None = None, *,
            searched: Mapping[str, str] | None = None, searched_ids: Collection[str] = (),
            searched_aspects: Collection[str] = ()) -> DebateOutcome:
        """Synchronous entry. Inside a running event loop it runs on a worker thread with its own loop (blocking
        the caller); async code should ``await arun(...)`` instead. ``searched``: aspect -> what the research's
        aspect search did for it, said in the judge's "Aspects" line; ``searched_ids``: the passages it added (read
        for claims, not for the tone shift); ``searched_aspects``: the aspects it searched (its passages argue
        those only, one claim each)."""
        coro = self.arun(ticker, question, as_of, evidence, figures, changes, searched=searched,
                         searched_ids=searched_ids, searched_aspects=searched_aspects)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coro)
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, coro).result()

    def _analyst(self, verifier: CitationVerifier) -> OfflineAnalyst:
        return OfflineAnalyst(self.lexicon, max_claims_per_side=self._max_claims,
                              prior_normalised=lambda d: verifier.normalised(d).text, claim_judge=self._claim_judge)

    def argued_themes(self, as_of: date, evidence: Sequence[EvidenceNode], figures: Sequence[Figure],
                      changes: ChangeReport | None = None) -> list[str]:
        """The themes of the offline analyst's opening claims over this evidence (what the debate would argue
        before verification and rebuttals): the research's aspect search reads it to find the uncovered aspects."""
        ev, figs = split_by_as_of(evidence, as_of)[0], split_by_as_of(figures, as_of)[0]
        analysis = self._analyst(CitationVerifier(self._lookup)).analyse(ev, figs, _dated(changes, as_of)[0])
        return [c.theme.value for c in (*analysis.bull, *analysis.bear)]

    async def arun(self, ticker: str, question: str, as_of: date, evidence: Sequence[EvidenceNode],
                   figures: Sequence[Figure], changes: ChangeReport | None = None, *,
                   searched: Mapping[str, str] | None = None, searched_ids: Collection[str] = (),
                   searched_aspects: Collection[str] = ()) -> DebateOutcome:
        verifier = CitationVerifier(self._lookup)
        analyst = self._analyst(verifier)
        ev, late_ev = split_by_as_of(evidence, as_of)
        figs, late_figs = split_by_as_of(figures, as_of)
        changes, state_note = _dated(changes, as_of)
        analysis = analyst.analyse(ev, figs, changes, searched=frozenset(searched_ids),
                                   searched_aspects=frozenset(searched_aspects))
        state = RunState(ticker, question, as_of, list(ev), list(figs), analysis,
                         ClaimVerifier(verifier, figs, analysis), searched=dict(searched or {}))
        if state_note:
            state.degrade("as_of", state_note)
        if late_ev or late_figs:
            state.degrade("as_of", f"{len(late_ev)} evidence node(s) and {len(late_figs)} figure(s) dated after "
                                   f"{as_of} were excluded")
        self._note_analysis(state)
        if self._claim_judge_note:
            state.degrade("claim_classifier", f"off: {self._claim_judge_note}; the cue table alone picks the "
                          "sentences argued (its bull claims were right 0.45 of the time on the labelled set)")
        for capability, reason in check_required(figs).missing:
            state.degrade(capability, reason)
        if not ev and not figs:
            return self._refuse(state, "no evidence or figures dated on or before the as-of date were supplied")
        state.add(analysis.bull + analysis.bear)
        llm_rounds = LLMRounds(self.llm, state, strict=self.strict) if self.llm is not None else None
        if llm_rounds is not None:
            await llm_rounds.openings()
        state.trim(self._max_claims)
        if not any(v.draft.kind is ClaimKind.OPENING for v in state.pool):
            return self._refuse(state, self._no_claims_reason(state))
        for round_no in range(1, self.rounds + 1):
            if llm_rounds is not None:
                await llm_rounds.rebuttals(round_no, analyst)
            else:
                self._offline_round(state, analyst)
        state.trim(self._max_claims)
        verdict = rule.judge([v.draft for v in state.pool], as_of)
        synthesis, thesis = await self._synthesis(state, verdict, llm_rounds)
        return self._outcome(state, verdict, synthesis, thesis)

    def _note_analysis(self, state: RunState) -> None:
        for hit in state.analysis.injections:
            state.degrade("prompt_injection_guard",
                          f"instruction-like text in document {hit.doc_id[:12]} at [{hit.start}, {hit.end}) was "
                          f"excluded from the evidence: “{hit.text[:120]}”")
        for note in state.analysis.notes:
            state.degrade("sentiment_lexicon", f"{note} ({self._lexicon_note})" if self._lexicon_note else note)

    def _no_claims_reason(self, state: RunState) -> str:
        if state.checker.drops.count:
            return (f"no claim survived citation verification ({state.checker.drops.count} dropped); refusing "
                    "rather than guessing")
        return "the evidence and figures produced no bull or bear signal; refusing rather than guessing"

    def _offline_round(self, state: RunState, analyst: OfflineAnalyst) -> None:
        drafts = [v.draft for v in state.pool]
        rebutted = {d.rebuts for d in drafts if d.rebuts}
        new: list[DraftClaim] = []
        for side, other in ((Speaker.BULL, Speaker.BEAR), (Speaker.BEAR, Speaker.BULL)):
            own = [d for d in drafts if d.speaker is side]
            opp = [d for d in drafts if d.speaker is other]
            r = analyst.rebut(side, own, opp, {x for x in rebutted if x})
            if r is not None:
                new.append(r)
        state.add(new)

    async def _synthesis(self, state: RunState, verdict: rule.Verdict,
                         llm_rounds: LLMRounds | None) -> tuple[JudgeSynthesis, str]:
        trimmed = ([f"{state.trimmed} verified claim(s) beyond the per-side case limit ({self._max_claims} text "
                    "claims, 2 per rule row) were set aside, weakest first."] if state.trimmed else [])
        base = JudgeSynthesis(winning_side=verdict.winning_side, winning_thesis=verdict.thesis,
                              key_risks=list(verdict.key_risks), key_catalysts=list(verdict.key_catalysts),
                              reasoning=[*state.checker.drops.reasons, *trimmed, *state.analysis.conflicts,
                                         *verdict.reasoning, *_required_line(state)])
        if llm_rounds is None:
            return base, verdict.thesis
        try:
            return await llm_rounds.judge(verdict, base)
        except LLMCallError as exc:
            if self.strict:
                raise
            state.calls.append(exc.record)
            state.degrade("llm:judge", f"{exc}; the rule's synthesis is used")
            return base, verdict.thesis

    def _hashes(self) -> dict[str, str]:
        hashes = {f"offline-rules@v{rule.RULES_VERSION}": rule.rules_fingerprint()}
        if self._claim_judge is not None:
            hashes["claim-model"] = self._claim_judge.digest
        if self.llm is not None:
            hashes.update(self.llm.prompt_hashes)
        return hashes

    def _usage(self, state: RunState) -> dict[str, Any]:
        costs = [c.cost_usd for c in state.calls if c.cost_usd is not None]
        return {"provider": self.llm.label if self.llm else "offline", "calls": [c.as_dict() for c in state.calls],
                "requests": sum(c.requests for c in state.calls),
                "input_tokens": sum(c.input_tokens for c in state.calls),
                "output_tokens": sum(c.output_tokens for c in state.calls),
                "cost_usd": round(sum(costs), 6) if costs else None}

    def _cases(self, state: RunState) -> tuple[tuple[Claim, ...], tuple[Claim, ...]]:
        ordered = order_claims(state.pool)
        return (tuple(v.to_model() for v in ordered if v.draft.speaker is Speaker.BULL),
                tuple(v.to_model() for v in ordered if v.draft.speaker is Speaker.BEAR))

    def _refuse(self, state: RunState, reason: str) -> DebateOutcome:
        bull, bear = self._cases(state)
        synthesis = JudgeSynthesis(winning_side=None, winning_thesis="",
                                   reasoning=[*state.checker.drops.reasons, f"Refused: {reason}."])
        return DebateOutcome(bull_case=bull, bear_case=bear, judge=synthesis, rating=None, conviction=0.0,
                             thesis=f"No recommendation: {reason}.", dropped_claims=state.checker.drops.count,
                             refused=True, refusal_reason=reason, degraded=tuple(state.degraded.items()),
                             prompt_hashes=self._hashes(), usage=self._usage(state),
                             provider=self.llm.label if self.llm else "offline")

    def _outcome(self, state: RunState, verdict: rule.Verdict, synthesis: JudgeSynthesis,
                 thesis: str) -> DebateOutcome:
        bull, bear = self._cases(state)
        weights = {w.claim.id: w.weight for w in verdict.weighted}
        logger.info("debate %s: %s (S=%+.3f, conviction %.3f, %d claims, %d dropped)", state.ticker,
                    verdict.rating.value, verdict.score, verdict.conviction, len(weights),
                    state.checker.drops.count)
        return DebateOutcome(bull_case=bull, bear_case=bear, judge=replace_thesis(synthesis, thesis),
                             rating=verdict.rating, conviction=verdict.conviction, thesis=thesis,
                             dropped_claims=state.checker.drops.count, refused=False, refusal_reason=None,
                             degraded=tuple(state.degraded.items()), prompt_hashes=self._hashes(),
                             usage=self._usage(state),
                             provider=self.llm.label if self.llm else "offline", score=verdict.score)


def _dated(changes: ChangeReport | None, as_of: date) -> tuple[ChangeReport | None, str | None]:
    """The filing change report when its newer filing is dated on or before ``as_of``, else None and why."""
    if changes is not None and changes.new.filed_at is not None and changes.new.filed_at > as_of:
        return None, f"the filing change report ends {changes.new.filed_at}, after {as_of}: not used"
    return changes, None


def replace_thesis(synthesis: JudgeSynthesis, thesis: str) -> JudgeSynthesis:
    return synthesis.model_copy(update={"winning_thesis": thesis})


def _required_line(state: RunState) -> list[str]:
    stated = check_required(state.figures).stated
    docs = sorted({(n.form, n.filed_at.isoformat() if n.filed_at else "undated") for n in state.evidence})
    read = (f"the {len(state.evidence)} passages read ({', '.join(f'{f} filed {d}' for f, d in docs[:4])}"
            f"{', …' if len(docs) > 4 else ''}) and {len(state.figures)} figures")
    themes = [v.draft.theme.value for v in state.pool if v.draft.kind is ClaimKind.OPENING]
    return ([f"Required figures — {'; '.join(stated)}."] if stated else []) + [
        f"Aspects — {'; '.join(aspect_coverage(themes, read, state.searched))}."]
