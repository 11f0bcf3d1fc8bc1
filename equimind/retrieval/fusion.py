"""Reciprocal Rank Fusion.

Cormack, Clarke & Büttcher (2009), "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning
Methods", SIGIR '09: ``score(d) = Σ_legs w_leg / (k + rank_leg(d))`` with 1-based ranks and k = 60. A document
missing from a leg contributes nothing for that leg.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from equimind.core.errors import ConfigError


@dataclass(frozen=True)
class Fused:
    """One fused item: its RRF score and its 1-based rank in each leg (None where the leg did not return it)."""

    id: str
    score: float
    ranks: tuple[int | None, ...]


def rrf_fuse(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> list[Fused]:
    """Fuse ranked id lists; ties on score are broken by best (lowest) rank, then by id, so the order is stable.

    A duplicate id inside one leg keeps its first (best) rank.
    """
    if k <= 0:
        raise ConfigError(f"RRF k must be a positive integer, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ConfigError(f"got {len(weights)} weights for {len(rankings)} rankings; pass one weight per ranking")
    n_legs = len(rankings)
    ranks: dict[str, list[int | None]] = {}
    scores: dict[str, float] = {}
    for leg, (ranking, w) in enumerate(zip(rankings, weights, strict=True)):
        for pos, item in enumerate(ranking, start=1):
            leg_ranks = ranks.setdefault(item, [None] * n_legs)
            if leg_ranks[leg] is not None:
                continue
            leg_ranks[leg] = pos
            scores[item] = scores.get(item, 0.0) + w / (k + pos)

    def best_rank(item: str) -> int:
        return min((r for r in ranks[item] if r is not None), default=1 << 30)

    order = sorted(scores, key=lambda i: (-scores[i], best_rank(i), i))
    return [Fused(id=i, score=scores[i], ranks=tuple(ranks[i])) for i in order]
