"""Context compression: the curated evidence the debate reads, inside a token budget.

Order of the stage (each discard records its reason):

1. **as-of** — nodes filed after the as-of date are dropped (``equimind.core.timeguard``); undated nodes are kept.
2. **exact duplicates** — MD5 of the whitespace-normalised text; the best-scoring copy is kept.
3. **time decay** — ``score × e^(−λ·days)`` with λ = ``Settings.decay_per_day`` (0.05) and ``days`` = days from the
   node's ``filed_at`` to the as-of date (exponential forgetting, as in time-weighted retrieval; Ebbinghaus-style).
   A negative score (a cross-encoder logit) is divided by the factor instead, so older evidence always ranks lower.
   Undated nodes, or no as-of date, get factor 1.
4. **near duplicates** — word k-shingles (k = 3) and Jaccard similarity |A∩B| / |A∪B| (Broder 1997, "On the
   resemblance and containment of documents"). Nodes are visited best decayed score first; a node whose Jaccard with an
   already kept node is ≥ the threshold (0.8) joins that node's cluster and is dropped (leader clustering), so each
   cluster keeps its best-scoring member. All pairwise overlaps come from one sparse product of the node × shingle
   incidence matrix (shingles hashed to 64 bits, cached per passage text), not a set intersection per pair.
5. **packing** — greedy by decayed score: a node is kept if its token count (a real ``Tokenizer``) plus
   ``per_node_overhead`` fits in what is left of the budget, otherwise it is dropped as over budget and the scan goes
   on (a smaller later node may still fit).

Ties are broken by node id, so the result is deterministic.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from equimind.core.errors import ConfigError
from equimind.core.protocols import Tokenizer
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import split_by_as_of
from equimind.lexicon.text import TEXT_CACHE

if TYPE_CHECKING:
    from equimind.core.config import Settings

_WORD = re.compile(r"\w+", re.UNICODE)

DEFAULT_NEAR_DUP_THRESHOLD = 0.8
DEFAULT_SHINGLE_SIZE = 3


# ---------------------------------------------------------------------------------------------------------------
# Pure maths


def normalise_text(text: str) -> str:
    """Whitespace collapsed and trimmed (what the exact-duplicate hash sees)."""
    return " ".join(text.split())


def md5_hex(text: str) -> str:
    """MD5 of the whitespace-normalised text (a fingerprint for exact duplicates, not a security hash)."""
    return hashlib.md5(normalise_text(text).encode("utf-8"), usedforsecurity=False).hexdigest()


def shingles(text: str, k: int = DEFAULT_SHINGLE_SIZE) -> frozenset[tuple[str, ...]]:
    """Set of lower-cased word k-grams; a text shorter than k words is one shingle of all its words."""
    if k < 1:
        raise ValueError("shingle size k must be >= 1")
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return frozenset()
    if len(words) < k:
        return frozenset({tuple(words)})
    return frozenset(zip(*(words[i:] for i in range(k)), strict=False))  # the k-grams (shifted copies), in C


def jaccard(a: frozenset[Any], b: frozenset[Any]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are identical (1.0)."""
    return _jaccard_counts(len(a & b) if len(a) <= len(b) else len(b & a), len(a), len(b))


def decay_factor(days: float, rate: float) -> float:
    """e^(−rate·days); days before the as-of date (never negative here: later nodes were already dropped)."""
    return math.exp(-rate * max(0.0, days))


def decayed_score(score: float, filed_at: date | None, as_of: date | None, rate: float) -> float:
    """Score after exponential time decay; older evidence always ends lower, whatever the sign of the score."""
    if filed_at is None or as_of is None:
        return score
    factor = decay_factor((as_of - filed_at).days, rate)
    return score * factor if score >= 0 else score / factor


# ---------------------------------------------------------------------------------------------------------------
# Stage


class DiscardReason(StrEnum):
    AFTER_AS_OF = "after_as_of"
    DUPLICATE = "duplicate"
    NEAR_DUPLICATE = "near_duplicate"
    OVER_BUDGET = "over_budget"


@dataclass(frozen=True)
class Discarded:
    """A node left out, why, and (for duplicates) the id of the kept node it duplicates."""

    node: EvidenceNode
    reason: DiscardReason
    detail: str
    of: str | None = None

    def to_log(self) -> dict[str, Any]:
        return {"id": self.node.id, "doc_id": self.node.doc_id, "reason": self.reason.value, "of": self.of,
                "detail": self.detail}


@dataclass(frozen=True)
class CompressionResult:
    """Kept nodes (score replaced by the decayed score, best first) and every discarded node with its reason."""

    kept: tuple[EvidenceNode, ...]
    discarded: tuple[Discarded, ...]
    tokens_used: int
    budget: int
    token_counts: tuple[tuple[str, int], ...] = ()

    def reasons(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.discarded:
            out[d.reason.value] = out.get(d.reason.value, 0) + 1
        return out

    def to_log(self) -> dict[str, Any]:
        return {"kept": [n.id for n in self.kept], "discarded": [d.to_log() for d in self.discarded],
                "tokens_used": self.tokens_used, "budget": self.budget, "discard_counts": self.reasons()}


class ContextCompressor:
    """Dedup, near-dedup, decay and pack curated evidence into a token budget (see the module docstring)."""

    def __init__(self, tokenizer: Tokenizer, *, budget: int = 6000, decay_per_day: float = 0.05,
                 near_dup_threshold: float = DEFAULT_NEAR_DUP_THRESHOLD, shingle_size: int = DEFAULT_SHINGLE_SIZE,
                 per_node_overhead: int = 0) -> None:
        if budget <= 0:
            raise ConfigError(f"context token budget must be a positive integer, got {budget}")
        if decay_per_day < 0 or not math.isfinite(decay_per_day):
            raise ConfigError(f"decay_per_day must be a finite number >= 0 (0 disables decay), got {decay_per_day}")
        if not 0.0 < near_dup_threshold <= 1.0:
            raise ConfigError(f"near_dup_threshold must be in (0, 1] (1 = exact shingle sets only), got "
                              f"{near_dup_threshold}")
        if shingle_size < 1:
            raise ConfigError(f"shingle_size must be >= 1 word, got {shingle_size}")
        if per_node_overhead < 0:
            raise ConfigError(f"per_node_overhead must be >= 0 tokens, got {per_node_overhead}")
        self.tokenizer = tokenizer
        self.budget = budget
        self.decay_per_day = decay_per_day
        self.near_dup_threshold = near_dup_threshold
        self.shingle_size = shingle_size
        self.per_node_overhead = per_node_overhead

    @classmethod
    def from_settings(cls, settings: Settings, tokenizer: Tokenizer, **overrides: Any) -> ContextCompressor:
        kwargs: dict[str, Any] = {"budget": settings.context_token_budget, "decay_per_day": settings.decay_per_day}
        kwargs.update(overrides)
        return cls(tokenizer, **kwargs)

    def run(self, nodes: Sequence[EvidenceNode], as_of: date | None) -> CompressionResult:
        discarded: list[Discarded] = []
        passed, late = split_by_as_of(nodes, as_of)
        discarded.extend(Discarded(n, DiscardReason.AFTER_AS_OF, f"filed {n.filed_at}, after as-of {as_of}")
                         for n in late)
        decayed = sorted((replace(n, score=decayed_score(n.score, n.filed_at, as_of, self.decay_per_day))
                          for n in passed), key=_rank_key)
        unique = self._dedup_exact(decayed, discarded)
        distinct = self._dedup_near(unique, discarded)
        kept, used, counts = self._pack(distinct, discarded)
        return CompressionResult(kept=tuple(kept), discarded=tuple(discarded), tokens_used=used, budget=self.budget,
                                 token_counts=tuple(counts))

    def _dedup_exact(self, nodes: list[EvidenceNode], discarded: list[Discarded]) -> list[EvidenceNode]:
        first: dict[str, str] = {}
        out: list[EvidenceNode] = []
        for n in nodes:  # best first, so the kept copy is the best-scoring one
            digest = md5_hex(n.text)
            if digest in first:
                discarded.append(Discarded(n, DiscardReason.DUPLICATE, f"duplicate of {first[digest]} (md5 {digest})",
                                           of=first[digest]))
                continue
            first[digest] = n.id
            out.append(n)
        return out

    def _dedup_near(self, nodes: list[EvidenceNode], discarded: list[Discarded]) -> list[EvidenceNode]:
        """Leader clustering over the exact pairwise shingle overlaps (``_overlaps``: one sparse product)."""
        sets = [_shingle_ids(n.text, self.shingle_size) for n in nodes]
        sizes = [len(a) for a in sets]
        inter = _overlaps(sets).tolist()
        leaders: list[int] = []
        for i, n in enumerate(nodes):
            match = next(((k, j) for k in leaders
                          if (j := _jaccard_counts(inter[i][k], sizes[i], sizes[k])) >= self.near_dup_threshold), None)
            if match is not None:
                leader, j = nodes[match[0]], match[1]
                discarded.append(Discarded(n, DiscardReason.NEAR_DUPLICATE,
                                           f"near-duplicate of {leader.id} (jaccard {j:.3f})", of=leader.id))
                continue
            leaders.append(i)
        return [nodes[i] for i in leaders]

    def _pack(self, nodes: list[EvidenceNode],
              discarded: list[Discarded]) -> tuple[list[EvidenceNode], int, list[tuple[str, int]]]:
        kept: list[EvidenceNode] = []
        counts: list[tuple[str, int]] = []
        used = 0
        for n in nodes:
            cost = self.tokenizer.count(n.text) + self.per_node_overhead
            if used + cost <= self.budget:
                kept.append(n)
                counts.append((n.id, cost))
                used += cost
            else:
                discarded.append(Discarded(n, DiscardReason.OVER_BUDGET,
                                           f"over budget: needs {cost} tokens, {self.budget - used} left of "
                                           f"{self.budget}"))
        return kept, used, counts


def _jaccard_counts(inter: int, a: int, b: int) -> float:
    """``jaccard`` from the sizes of two sets and of their intersection."""
    return 1.0 if a == 0 and b == 0 else inter / (a + b - inter)


@functools.lru_cache(maxsize=TEXT_CACHE)
def _shingle_ids(text: str, k: int) -> np.ndarray[Any, Any]:
    """``shingles`` as sorted distinct 64-bit hashes (cached per text: ~5 KB for a passage, where the set of tuples
    takes ~60 KB; the same passages are compressed in every run on a ticker). Two distinct shingles sharing a hash
    has probability ~2^-64 per pair."""
    out: np.ndarray[Any, Any] = np.unique(np.fromiter(map(hash, shingles(text, k)), dtype=np.int64))
    out.flags.writeable = False
    return out


def _overlaps(sets: Sequence[np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    """|A_i ∩ A_j| for every pair, from one sparse product of the node × shingle incidence matrix."""
    if not sets:
        return np.zeros((0, 0), dtype=np.int64)
    cols = np.concatenate(sets)
    rows = np.repeat(np.arange(len(sets)), [len(a) for a in sets])
    _, col_ids = np.unique(cols, return_inverse=True)
    incidence = sparse.csr_matrix((np.ones(len(cols), dtype=np.int64), (rows, col_ids)),
                                  shape=(len(sets), int(col_ids.max(initial=-1)) + 1))
    out: np.ndarray[Any, Any] = (incidence @ incidence.T).toarray()
    return out


def _rank_key(n: EvidenceNode) -> tuple[float, str]:
    return (-n.score, n.id)
