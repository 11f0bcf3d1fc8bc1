"""Context compressor: exact dedup, near-dup clustering, time decay and budget packing, with hand-computed numbers."""

from __future__ import annotations

import math
import random
import re
from datetime import date

import pytest

from equimind.core.config import Settings
from equimind.core.documents import Source
from equimind.core.errors import ConfigError
from equimind.core.protocols import Tokenizer
from equimind.core.search import EvidenceNode
from equimind.retrieval.compressor import (
    ContextCompressor,
    DiscardReason,
    decay_factor,
    decayed_score,
    jaccard,
    md5_hex,
    shingles,
)

AS_OF = date(2024, 6, 30)


class SpaceTokenizer:
    """One token per whitespace-separated word (a fake satisfying protocols.Tokenizer)."""

    name = "space"

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(r"\S+", text)]

    def count(self, text: str) -> int:
        return len(text.split())


def node(nid: str, text: str, score: float, filed: date | None = AS_OF) -> EvidenceNode:
    return EvidenceNode(id=nid, doc_id="doc-" + nid, start=0, end=len(text), text=text, ticker="NVDA", company=None,
                        source=Source.SEC_EDGAR, form="10-K", filed_at=filed, section=None, score=score,
                        doc_sha256="x")


def words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_tokenizer_fake_satisfies_protocol() -> None:
    assert isinstance(SpaceTokenizer(), Tokenizer)


def test_shingles_and_jaccard_by_hand() -> None:
    a = shingles("the cat sat on the mat", 3)
    assert a == {("the", "cat", "sat"), ("cat", "sat", "on"), ("sat", "on", "the"), ("on", "the", "mat")}
    b = shingles("The cat sat on the hat", 3)  # case-insensitive; shares 3 of 4 shingles
    assert jaccard(a, b) == pytest.approx(3 / 5)
    assert shingles("two words", 3) == {("two", "words")}
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_md5_ignores_whitespace_only() -> None:
    assert md5_hex("Revenue  rose\n 10%") == md5_hex("Revenue rose 10%")
    assert md5_hex("Revenue rose 10%") != md5_hex("revenue rose 10%")


def test_decay_numbers() -> None:
    assert decay_factor(10, 0.05) == pytest.approx(math.exp(-0.5))  # 0.60653
    assert decayed_score(2.0, date(2024, 6, 20), AS_OF, 0.05) == pytest.approx(2.0 * 0.6065306597)
    assert decayed_score(-2.0, date(2024, 6, 20), AS_OF, 0.05) == pytest.approx(-2.0 / 0.6065306597)
    assert decayed_score(2.0, None, AS_OF, 0.05) == 2.0
    assert decayed_score(2.0, AS_OF, AS_OF, 0.05) == 2.0


def test_exact_duplicate_keeps_best_scoring_copy() -> None:
    text = "Data center revenue was $10.3 billion, up 141% from a year ago."
    res = ContextCompressor(SpaceTokenizer(), budget=1000).run(
        [node("low", text, 0.2), node("high", "  " + text, 0.9), node("other", "Gaming revenue fell.", 0.5)], AS_OF)
    assert [n.id for n in res.kept] == ["high", "other"]
    (dup,) = res.discarded
    assert (dup.node.id, dup.reason, dup.of) == ("low", DiscardReason.DUPLICATE, "high")
    assert "duplicate of high" in dup.detail


def test_near_duplicate_threshold_by_hand() -> None:
    base = words(20)  # 18 shingles
    near = words(19) + " changed"  # last shingle differs: J = 17 / 19 = 0.8947
    far = words(10) + " " + words(10, "x")  # shares the first 8 shingles: J = 8 / 28 = 0.2857
    nodes = [node("base", base, 0.9), node("near", near, 0.95), node("far", far, 0.1)]
    res = ContextCompressor(SpaceTokenizer(), budget=1000, near_dup_threshold=0.8).run(nodes, AS_OF)
    assert [n.id for n in res.kept] == ["near", "far"]  # "near" scores higher, so it leads the cluster
    (nd,) = res.discarded
    assert (nd.node.id, nd.reason, nd.of) == ("base", DiscardReason.NEAR_DUPLICATE, "near")
    assert "jaccard 0.895" in nd.detail
    strict = ContextCompressor(SpaceTokenizer(), budget=1000, near_dup_threshold=0.9).run(nodes, AS_OF)
    assert len(strict.kept) == 3  # 0.8947 < 0.9


def test_near_duplicate_clustering_equals_pairwise_jaccard_leader_clustering() -> None:
    """The compressor's overlaps come from one sparse product over hashed shingles; the kept set, the leader each
    discard names and its Jaccard must equal plain pairwise leader clustering with ``jaccard(shingles(...))``."""
    rng = random.Random(7)
    vocab = [f"t{i}" for i in range(40)]
    bases = [[rng.choice(vocab) for _ in range(30)] for _ in range(6)]
    texts = ["", "— —"]  # no words, so no shingles: identical to each other (Jaccard 1.0), yet not exact copies
    while len(texts) < 62:
        w = list(rng.choice(bases))
        for _ in range(rng.randint(0, 3)):  # one edit keeps J ~0.8, more fall below
            w[rng.randrange(len(w))] = rng.choice(vocab)
        text = " ".join(w[: rng.randint(27, 30)])
        if text not in texts:  # exact copies are the exact-duplicate stage's, not this one's
            texts.append(text)
    nodes = [node(f"n{i:02d}", t, 1.0 - i / 100) for i, t in enumerate(texts)]
    res = ContextCompressor(SpaceTokenizer(), budget=10**6, near_dup_threshold=0.8).run(nodes, AS_OF)
    leaders: list[tuple[str, frozenset[tuple[str, ...]]]] = []
    expected: dict[str, tuple[str, float]] = {}
    for n in nodes:
        sh = shingles(n.text)
        match = next(((lid, j) for lid, lsh in leaders if (j := jaccard(sh, lsh)) >= 0.8), None)
        if match is None:
            leaders.append((n.id, sh))
        else:
            expected[n.id] = match
    assert [n.id for n in res.kept] == [lid for lid, _ in leaders]
    near = {d.node.id: d for d in res.discarded if d.reason is DiscardReason.NEAR_DUPLICATE}
    assert {k: d.of for k, d in near.items()} == {k: lid for k, (lid, _) in expected.items()}
    assert all(f"jaccard {expected[k][1]:.3f}" in d.detail for k, d in near.items())
    assert 5 < len(near) < 55  # the case mixes clustered and distinct nodes


def test_decay_reorders_and_decides_cluster_leader() -> None:
    text_old = words(20)
    text_new = words(19) + " fresh"
    old = node("old", text_old, 1.0, filed=date(2024, 6, 10))  # 1.0 * e^-1 = 0.3679
    new = node("new", text_new, 0.5, filed=AS_OF)  # 0.5 * e^0 = 0.5
    res = ContextCompressor(SpaceTokenizer(), budget=1000).run([old, new], AS_OF)
    assert [n.id for n in res.kept] == ["new"]
    assert res.kept[0].score == pytest.approx(0.5)
    assert res.discarded[0].of == "new"
    no_decay = ContextCompressor(SpaceTokenizer(), budget=1000, decay_per_day=0.0).run([old, new], AS_OF)
    assert [n.id for n in no_decay.kept] == ["old"]


def test_kept_scores_are_decayed_values() -> None:
    res = ContextCompressor(SpaceTokenizer(), budget=1000).run([node("a", "alpha beta", 3.0, date(2024, 6, 16))],
                                                               AS_OF)
    assert res.kept[0].score == pytest.approx(3.0 * math.exp(-0.05 * 14))  # 1.4898


def test_greedy_packing_skips_what_does_not_fit() -> None:
    nodes = [node("a", words(6, "a"), 0.9), node("b", words(5, "b"), 0.8), node("c", words(3, "c"), 0.7),
             node("d", words(1, "d"), 0.6)]
    res = ContextCompressor(SpaceTokenizer(), budget=10).run(nodes, AS_OF)
    # a (6) fits -> 4 left; b (5) does not; c (3) fits -> 1 left; d (1) fits -> 0 left
    assert [n.id for n in res.kept] == ["a", "c", "d"]
    assert res.tokens_used == 10
    (over,) = res.discarded
    assert (over.node.id, over.reason) == ("b", DiscardReason.OVER_BUDGET)
    assert "needs 5 tokens, 4 left of 10" in over.detail
    with_overhead = ContextCompressor(SpaceTokenizer(), budget=10, per_node_overhead=2).run(nodes, AS_OF)
    assert [n.id for n in with_overhead.kept] == ["a"]  # 8 used; c would cost 5


def test_planted_future_nodes_are_discarded_with_reason() -> None:
    nodes = [node("now", "alpha beta", 0.1), node("future", "gamma delta", 99.0, filed=date(2024, 7, 1))]
    res = ContextCompressor(SpaceTokenizer(), budget=100).run(nodes, AS_OF)
    assert [n.id for n in res.kept] == ["now"]
    assert [(d.node.id, d.reason) for d in res.discarded] == [("future", DiscardReason.AFTER_AS_OF)]
    assert res.reasons() == {"after_as_of": 1}


def test_deterministic_whatever_the_input_order() -> None:
    nodes = [node(f"n{i}", words(5 + i % 4, f"t{i % 3}"), score=0.5, filed=date(2024, 6, 1 + i)) for i in range(12)]
    comp = ContextCompressor(SpaceTokenizer(), budget=25)
    a = comp.run(nodes, AS_OF)
    b = comp.run(list(reversed(nodes)), AS_OF)
    assert a.to_log() == b.to_log()
    assert len(a.kept) + len(a.discarded) == len(nodes)


def test_settings_and_validation(settings: Settings) -> None:
    comp = ContextCompressor.from_settings(settings, SpaceTokenizer())
    assert (comp.budget, comp.decay_per_day) == (6000, 0.05)
    with pytest.raises(ConfigError, match="positive"):
        ContextCompressor(SpaceTokenizer(), budget=0)
    with pytest.raises(ConfigError, match=r"\(0, 1\]"):
        ContextCompressor(SpaceTokenizer(), near_dup_threshold=1.5)
    with pytest.raises(ConfigError, match="decay_per_day"):
        ContextCompressor(SpaceTokenizer(), decay_per_day=-1)
