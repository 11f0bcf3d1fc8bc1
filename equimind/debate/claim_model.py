"""A learned claim-sentence classifier: is a filing sentence a bull claim, a bear claim or neutral, and what aspect
is it about? Two multinomial logistic regressions over the sentence's embedding (all-MiniLM-L6-v2 by default, the
repo's ``SentenceTransformerEmbedder``), trained from the hand-labelled set ``benchmarks/data/claim_sentences.jsonl``
(labelling rules: benchmarks/data/README-claims.md; leave-company-out evaluation: ``benchmarks.claim_classifier``).

Not wired into the offline analyst: it is measured against the cue table (``debate.cues``) first. Training uses
scikit-learn (lbfgs, deterministic); a trained model is a small ``.npz`` of coefficient arrays (no pickle), and
prediction needs numpy only. The model records the embedder's name and dimension; predicting with a different
embedder raises.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from equimind.core.errors import ConfigError
from equimind.core.protocols import Embedder

SIDES: tuple[str, ...] = ("bull", "bear", "neutral")
ASPECTS: tuple[str, ...] = ("growth", "margins", "valuation", "balance_sheet", "capital_return", "concentration",
                            "regulation_legal", "supply", "competition", "guidance", "macro", "other")
DEFAULT_C = 1.0
MAX_ITER = 5000
FORMAT = "equimind-claim-model/1"


@dataclass(frozen=True)
class LabelledSentence:
    id: str
    company: str
    text: str
    side: str
    aspect: str
    selected_by: str
    doc_id: str = ""
    section: str = ""
    note: str = ""


@dataclass(frozen=True)
class ClaimPrediction:
    side: str
    side_probability: float
    aspect: str
    aspect_probability: float
    side_probabilities: dict[str, float]


def load_labels(path: Path | str) -> list[LabelledSentence]:
    """The labelled sentences of a jsonl file; raises ConfigError on a row with a missing field or an unknown label."""
    out: list[LabelledSentence] = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            try:
                item = LabelledSentence(id=row["id"], company=row["company"], text=row["text"], side=row["side"],
                                        aspect=row["aspect"], selected_by=row["selected_by"],
                                        doc_id=row.get("doc_id", ""), section=row.get("section", ""),
                                        note=row.get("note", ""))
            except KeyError as exc:
                raise ConfigError(f"{path}:{n}: missing field {exc}") from exc
            if item.side not in SIDES or item.aspect not in ASPECTS:
                raise ConfigError(f"{path}:{n}: unknown label side={item.side!r} aspect={item.aspect!r}")
            out.append(item)
    return out


@dataclass(frozen=True)
class LinearHead:
    """A softmax over ``classes``: p = softmax(X @ coef.T + intercept)."""

    classes: tuple[str, ...]
    coef: np.ndarray[Any, Any]  # (n_classes, dim) float64
    intercept: np.ndarray[Any, Any]  # (n_classes,) float64

    def proba(self, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        z = np.asarray(x, dtype=np.float64) @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        out: np.ndarray[Any, Any] = e / e.sum(axis=1, keepdims=True)
        return out


def fit_head(x: np.ndarray[Any, Any], labels: Sequence[str], c: float = DEFAULT_C) -> LinearHead:
    """Multinomial L2 logistic regression (lbfgs; deterministic). One class only: a constant head."""
    from sklearn.linear_model import LogisticRegression

    classes = tuple(sorted(set(labels)))
    dim = x.shape[1]
    if len(classes) == 1:
        return LinearHead(classes, np.zeros((1, dim)), np.zeros(1))
    clf = LogisticRegression(C=c, max_iter=MAX_ITER)
    clf.fit(np.asarray(x, dtype=np.float64), list(labels))
    coef = np.asarray(clf.coef_, dtype=np.float64)
    intercept = np.asarray(clf.intercept_, dtype=np.float64)
    if len(classes) == 2:  # sklearn's binary form: one row for classes[1]; softmax of [0, z] is the same sigmoid
        coef = np.vstack([np.zeros((1, dim)), coef])
        intercept = np.concatenate([[0.0], intercept])
    if tuple(str(k) for k in clf.classes_) != classes:
        raise AssertionError("sklearn class order differs from sorted labels")
    return LinearHead(classes, coef, intercept)


@dataclass(frozen=True)
class ClaimModel:
    side: LinearHead
    aspect: LinearHead
    embedder_name: str
    dim: int
    c: float = DEFAULT_C

    def predict_vectors(self, x: np.ndarray[Any, Any]) -> list[ClaimPrediction]:
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ConfigError(f"claim model expects {self.dim}-dim vectors, got shape {x.shape}")
        ps, pa = self.side.proba(x), self.aspect.proba(x)
        out = []
        for row_s, row_a in zip(ps, pa, strict=True):
            i, j = int(np.argmax(row_s)), int(np.argmax(row_a))
            out.append(ClaimPrediction(self.side.classes[i], float(row_s[i]), self.aspect.classes[j],
                                       float(row_a[j]),
                                       {k: float(v) for k, v in zip(self.side.classes, row_s, strict=True)}))
        return out

    def predict(self, texts: Sequence[str], embedder: Embedder) -> list[ClaimPrediction]:
        """(side, aspect, probabilities) for each text, embedded with ``embedder`` (must be the training one)."""
        if embedder.name != self.embedder_name or embedder.dim != self.dim:
            raise ConfigError(f"claim model was trained on {self.embedder_name} ({self.dim}-dim) vectors; "
                              f"got embedder {embedder.name} ({embedder.dim}-dim)")
        if not texts:
            return []
        return self.predict_vectors(np.asarray(embedder.embed(list(texts))))

    def save(self, path: Path | str) -> Path:
        """Write the coefficients as a numpy ``.npz`` (strings as unicode arrays; loads without pickle)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("wb") as fh:
            np.savez(fh, format=np.array(FORMAT), embedder_name=np.array(self.embedder_name),
                     dim=np.array(self.dim), c=np.array(self.c),
                     side_classes=np.array(self.side.classes), side_coef=self.side.coef,
                     side_intercept=self.side.intercept,
                     aspect_classes=np.array(self.aspect.classes), aspect_coef=self.aspect.coef,
                     aspect_intercept=self.aspect.intercept)
        return p

    @classmethod
    def load(cls, path: Path | str) -> ClaimModel:
        with np.load(Path(path), allow_pickle=False) as z:
            if str(z["format"]) != FORMAT:
                raise ConfigError(f"{path} is not a claim model ({FORMAT})")
            return cls(side=LinearHead(tuple(str(s) for s in z["side_classes"]), z["side_coef"],
                                       z["side_intercept"]),
                       aspect=LinearHead(tuple(str(s) for s in z["aspect_classes"]), z["aspect_coef"],
                                         z["aspect_intercept"]),
                       embedder_name=str(z["embedder_name"]), dim=int(z["dim"]), c=float(z["c"]))


def train_vectors(x: np.ndarray[Any, Any], sides: Sequence[str], aspects: Sequence[str], *, embedder_name: str,
                  c: float = DEFAULT_C) -> ClaimModel:
    return ClaimModel(side=fit_head(x, sides, c), aspect=fit_head(x, aspects, c), embedder_name=embedder_name,
                      dim=int(x.shape[1]), c=c)


def train(rows: Sequence[LabelledSentence], embedder: Embedder, c: float = DEFAULT_C) -> ClaimModel:
    """Both heads trained on ``rows`` embedded with ``embedder``."""
    if not rows:
        raise ConfigError("no labelled sentences to train on")
    x = np.asarray(embedder.embed([r.text for r in rows]))
    return train_vectors(x, [r.side for r in rows], [r.aspect for r in rows], embedder_name=embedder.name, c=c)


def train_from_jsonl(path: Path | str, embedder: Embedder, c: float = DEFAULT_C) -> ClaimModel:
    return train(load_labels(path), embedder, c)


# ---- the analyst's use: a neutral veto over cue claims (ADR 0019) ----------------------------------------------

MODEL_PATH = Path(__file__).parent / "data" / "claim_model.npz"
NEUTRAL_VETO = 0.5  # p(neutral) at or above which a cue's sentence is not a claim; fixed at one half, not fitted


@dataclass(frozen=True)
class ClaimJudge:
    """The shipped claim model with the embedder it was trained for: reads which cue sentences are neutral text
    (definitions, accounting policy, boilerplate), the classifier's reliable skill on the labelled set. It never
    moves a claim to the other side: the cue's side stands or the sentence is set aside."""

    model: ClaimModel
    embedder: Embedder
    digest: str

    def neutral(self, texts: Sequence[str]) -> list[float]:
        return [p.side_probabilities.get("neutral", 0.0) for p in self.model.predict(texts, self.embedder)]


def claim_judge_for(embedder: Embedder | None, path: Path = MODEL_PATH) -> tuple[ClaimJudge | None, str | None]:
    """(judge, None), or (None, why it is off) when there is no embedder, no model file, or the embedder is not
    the one the model was trained on (tests' hash embedder; a custom model)."""
    if embedder is None:
        return None, "no sentence embedder was given to the debate"
    try:
        raw = path.read_bytes()
        model = ClaimModel.load(path)
    except (OSError, ValueError, KeyError, ConfigError) as exc:
        return None, f"the claim model {path} cannot be read ({exc}); reinstall EquiMind"
    if embedder.name != model.embedder_name or embedder.dim != model.dim:
        return None, (f"the claim model reads {model.embedder_name} vectors and this store embeds with "
                      f"{embedder.name}; unset EQUIMIND_EMBED_MODEL (the default is {model.embedder_name}) to "
                      "turn it on")
    return ClaimJudge(model, embedder, hashlib.sha256(raw).hexdigest()), None
