"""Claim verification and evidence-derived weighting, shared by the offline and LLM paths of the debate.

A claim survives only if every quote is found in the stored canonical text (exact or normalised), no quote overlaps
instruction-like text, and every figure id names a computed figure with a value. Its strength is then derived from
what it cites (the rule tables), never taken from the speaker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from equimind.core.citations import CitationVerifier, check_figures
from equimind.core.errors import NotFoundError
from equimind.core.research import Citation, Figure, Speaker
from equimind.debate.offline import Analysis, figure_strength, shorten
from equimind.debate.records import Basis, BasisKind, DraftClaim, SpanRef, Theme, VerifiedClaim
from equimind.lexicon.injection import injection_spans


@dataclass
class DropLog:
    """Claims dropped during one debate, with the reason for each (shown in the judge's reasoning)."""

    reasons: list[str] = field(default_factory=list)

    def add(self, claim: DraftClaim, reason: str) -> None:
        self.reasons.append(f"{claim.speaker.value} claim “{shorten(claim.text, 80)}” dropped: {reason}")

    @property
    def count(self) -> int:
        return len(self.reasons)


class ClaimVerifier:
    """Verifies DraftClaims against stored text and figures; re-weights LLM claims from their evidence."""

    def __init__(self, verifier: CitationVerifier, figures: Sequence[Figure], analysis: Analysis) -> None:
        self._verifier = verifier
        self._figures = list(figures)
        self._by_id = {f.id: f for f in figures}
        self._analysis = analysis
        self._injected: dict[str, list[tuple[int, int]]] = {}
        for hit in analysis.injections:
            self._injected.setdefault(hit.doc_id, []).append((hit.start, hit.end))
        self.drops = DropLog()

    def verify(self, claim: DraftClaim) -> VerifiedClaim | None:
        if not claim.spans and not claim.figure_ids:
            self.drops.add(claim, "it cites neither a quote nor a figure")
            return None
        reason = check_figures(claim.figure_ids, self._by_id)
        if reason:
            self.drops.add(claim, reason)
            return None
        citations: list[Citation] = []
        for span in claim.spans:
            cit = self._verify_span(claim, span)
            if cit is None:
                return None
            citations.append(cit)
        spans = tuple(SpanRef(c.doc_id, c.start, c.end, c.quote) for c in citations)
        return VerifiedClaim(replace(claim, spans=spans), tuple(citations))

    def _verify_span(self, claim: DraftClaim, span: SpanRef) -> Citation | None:
        try:
            within = (span.start, span.end) if span.end > span.start else None
            check = self._verifier.verify(span.doc_id, span.quote, within=within)
        except NotFoundError:
            self.drops.add(claim, f"document {span.doc_id[:12]} is not in the store")
            return None
        if not check.verified or check.start is None or check.end is None:
            self.drops.add(claim, f"quote not found in document {span.doc_id[:12]} (closest passage similarity "
                                  f"{check.similarity:.2f})")
            return None
        if self._overlaps_injection(span.doc_id, check.start, check.end) or injection_spans(check.passage or ""):
            self.drops.add(claim, "it quotes instruction-like text planted in the document (prompt injection)")
            return None
        return check.citation()

    def _overlaps_injection(self, doc_id: str, start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in self._injected.get(doc_id, ()))

    def evidence_strength(self, side: Speaker, claim: VerifiedClaim) -> tuple[float, Theme | None, Basis | None]:
        """(strength, theme, basis) of the strongest rule signal on ``side`` among what the claim cites: a cue in a
        cited sentence or a figure rule. (0, None, None) when nothing it cites carries a signal for its side: the
        claim is shown but weighs nothing. Theme comes from the rule too, so a speaker cannot relabel a claim to
        contest the other side."""
        best = figure_strength(self._figures, claim.draft.figure_ids, side)
        for c in claim.citations:
            for s in self._analysis.sentence_signals:
                if s.side is side and s.doc_id == c.doc_id and s.start < c.end and c.start < s.end \
                        and s.strength > best[0]:
                    best = (s.strength, s.theme, Basis(BasisKind.CUE, s.cue))
        return best
