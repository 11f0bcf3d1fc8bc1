"""The claim-sentence classifier (debate.claim_model) and its hand-labelled set. Uses the HashEmbedder (no model load):
the classifier is embedder-agnostic, and the real all-MiniLM-L6-v2 evaluation lives in benchmarks.claim_classifier."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from equimind.core.errors import ConfigError
from equimind.debate.claim_model import (
    ASPECTS,
    SIDES,
    ClaimModel,
    LabelledSentence,
    load_labels,
    train,
)
from equimind.embedding.embed import HashEmbedder

LABELS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "claim_sentences.jsonl"

_BULL = ["revenue grew strongly to a record high", "sales increased sharply on strong demand",
         "margins expanded and profit rose", "record growth in orders and strong results"]
_BEAR = ["lawsuit filed alleging antitrust violations", "regulators opened an investigation and lawsuit",
         "antitrust complaint and class action lawsuit", "investigation by regulators into fines"]
_NEUTRAL = ["the notes describe the accounting policy", "see the note for the accounting policy definition",
            "this table presents the accounting policy", "policy definition described in the note"]


def _synthetic() -> list[LabelledSentence]:
    rows = []
    for k, (texts, side, aspect) in enumerate([(_BULL, "bull", "growth"), (_BEAR, "bear", "regulation_legal"),
                                              (_NEUTRAL, "neutral", "other")]):
        for i, t in enumerate(texts):
            rows.append(LabelledSentence(id=f"s{k}{i}", company=f"C{i % 2}", text=t, side=side, aspect=aspect,
                                         selected_by="random"))
    return rows


def test_learns_a_separable_rule() -> None:
    emb = HashEmbedder()
    model = train(_synthetic(), emb, c=10.0)
    preds = model.predict(["strong demand and record revenue growth", "a new antitrust lawsuit and investigation",
                           "the accounting policy note"], emb)
    assert [p.side for p in preds] == ["bull", "bear", "neutral"]
    assert [p.aspect for p in preds] == ["growth", "regulation_legal", "other"]
    assert all(0.0 < p.side_probability <= 1.0 for p in preds)
    assert all(abs(sum(p.side_probabilities.values()) - 1.0) < 1e-9 for p in preds)


def test_two_class_training_predicts_both_classes() -> None:
    emb = HashEmbedder()
    rows = [r for r in _synthetic() if r.side != "neutral"]
    model = train(rows, emb, c=10.0)
    assert model.side.classes == ("bear", "bull")
    preds = model.predict(["record revenue growth", "antitrust lawsuit"], emb)
    assert [p.side for p in preds] == ["bull", "bear"]


def test_save_load_round_trip_is_identical(tmp_path: Path) -> None:
    emb = HashEmbedder()
    model = train(_synthetic(), emb, c=10.0)
    path = model.save(tmp_path / "claim_model.npz")
    loaded = ClaimModel.load(path)
    texts = ["sales increased on demand", "a lawsuit", "policy note", "something unrelated entirely"]
    a, b = model.predict(texts, emb), loaded.predict(texts, emb)
    assert a == b
    assert loaded.embedder_name == emb.name and loaded.dim == emb.dim and loaded.c == 10.0
    np.testing.assert_array_equal(model.side.coef, loaded.side.coef)
    with np.load(path, allow_pickle=False) as z:  # no object arrays: loads without pickle
        assert "side_coef" in z.files


def test_predict_with_another_embedder_raises() -> None:
    model = train(_synthetic(), HashEmbedder(), c=10.0)
    with pytest.raises(ConfigError):
        model.predict(["x y z"], HashEmbedder(dim=64))


def test_labelled_file_parses_and_is_valid() -> None:
    rows = load_labels(LABELS)
    assert len(rows) >= 600
    companies = Counter(r.company for r in rows)
    assert len(companies) >= 10
    assert len({r.id for r in rows}) == len(rows)
    assert {r.side for r in rows} <= set(SIDES) and {r.side for r in rows} == set(SIDES)
    assert {r.aspect for r in rows} <= set(ASPECTS)
    assert all(r.selected_by == "random" or r.selected_by.startswith("cue:") for r in rows)
    assert all(r.text.strip() and r.doc_id for r in rows)
    random_share = sum(r.selected_by == "random" for r in rows) / len(rows)
    assert 0.35 <= random_share <= 0.65


def test_bad_label_is_rejected(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"id": "x", "company": "A", "text": "t", "side": "buy", "aspect": "growth",
                             "selected_by": "random"}) + "\n")
    with pytest.raises(ConfigError):
        load_labels(p)
