"""The mutable bookkeeping of one debate run, shared by the debate engine and its LLM rounds (its own module, so
``agents/debate.py`` and ``agents/rounds.py`` do not import each other)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from equimind.core.degraded import Degradations
from equimind.core.research import Figure, Speaker
from equimind.core.search import EvidenceNode
from equimind.debate.offline import Analysis, select_case
from equimind.debate.records import ClaimKind, DraftClaim, VerifiedClaim
from equimind.debate.verify import ClaimVerifier
from equimind.llm.calls import CallRecord


@dataclass
class RunState:
    """Mutable bookkeeping of one run (never shared between runs)."""

    ticker: str
    question: str
    as_of: date
    evidence: list[EvidenceNode]
    figures: list[Figure]
    analysis: Analysis
    checker: ClaimVerifier
    degraded: Degradations = field(default_factory=Degradations)
    calls: list[CallRecord] = field(default_factory=list)
    pool: list[VerifiedClaim] = field(default_factory=list)
    trimmed: int = 0
    searched: dict[str, str] = field(default_factory=dict)  # aspect -> what the research's aspect search did

    def degrade(self, capability: str, reason: str) -> None:
        self.degraded.add(capability, reason)

    def add(self, claims: Sequence[DraftClaim]) -> None:
        """Verify, then pool (failures are dropped and counted by the checker)."""
        self.add_verified([v for d in claims if (v := self.checker.verify(d)) is not None])

    def add_verified(self, claims: Sequence[VerifiedClaim]) -> None:
        """An opening that cites evidence already pooled on its side (overlapping span or shared figure) replaces the
        pooled claim when at least as strong, else is discarded: no evidence is counted twice."""
        for v in claims:
            if v.draft.kind is ClaimKind.REBUTTAL:
                self.pool = [p for p in self.pool if _key(p) != _key(v)] + [v]
                continue
            same = [p for p in self.pool if p.draft.kind is ClaimKind.OPENING
                    and p.draft.speaker is v.draft.speaker and _overlaps(p, v)]
            if any(p.draft.strength > v.draft.strength for p in same):
                continue
            self.pool = [p for p in self.pool if p not in same] + [v]

    def trim(self, max_text_claims: int) -> None:
        """Keep each side's opening case as the judge reads it (``select_case``), and every rebuttal."""
        keep: list[VerifiedClaim] = []
        for side in (Speaker.BULL, Speaker.BEAR):
            openings = {v.id: v for v in self.pool if v.draft.kind is ClaimKind.OPENING and v.draft.speaker is side}
            kept = select_case([v.draft for v in openings.values()], max_text_claims)
            self.trimmed += len(openings) - len(kept)
            keep += [openings[d.id] for d in kept]
        self.pool = keep + [v for v in self.pool if v.draft.kind is ClaimKind.REBUTTAL]


def _key(v: VerifiedClaim) -> tuple[Any, ...]:
    d = v.draft
    return (d.speaker, d.kind, d.rebuts, tuple((c.doc_id, c.start, c.end) for c in v.citations), d.figure_ids)


def _overlaps(a: VerifiedClaim, b: VerifiedClaim) -> bool:
    if set(a.draft.figure_ids) & set(b.draft.figure_ids):
        return True
    return any(x.doc_id == y.doc_id and x.start < y.end and y.start < x.end
               for x in a.citations for y in b.citations)
