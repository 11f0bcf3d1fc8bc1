"""CI regression gate: a fast golden subset compared with a committed baseline.

The subset is the golden questions answerable from five small recorded filings (AAPL, NVDA, NFLX, TSLA 10-Qs and
the WFC 10-K), ingested with the real embedder into a cached store embedded the way the product embeds (the
``context`` variant) and searched with the product's fusion weights. Tracked metrics are recall@10, MRR@10 and
nDCG@10 of the ``dense``, ``bm25`` and ``hybrid`` arms in the shared-store setting (no filter).

Noise floor: one question of n. A per-question score lies in [0, 1], so changing one question's outcome moves a
mean by at most 1/n; a drop larger than that is more than one question flipping and fails the gate. A rise is
reported (re-baseline with ``equimind eval gate --update-baseline``) but never fails. A tracked metric missing from
the baseline fails too: deleting it from the file does not stop it being gated.

The baseline file keeps its own history: ``history`` lists every baseline ever committed (append only), the last entry
equal to ``metrics``. A value may go down only with a decision record: the entry that lowers it names, per lowered
metric, a ``docs/decisions/NNNN-*.md`` in ``lowered_by``. ``baseline_problems`` states the rules;
tests/evaluation/test_eval_regression.py enforces them (and checks the history against the file's git history).
"""

from __future__ import annotations

import json
import re
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from equimind.core.config import Settings
from equimind.core.errors import NotFoundError
from equimind.evaluation.golden import FilingKey, load_golden, run_golden
from equimind.evaluation.runner import product_variant

GATE_FILINGS: frozenset[FilingKey] = frozenset({
    ("AAPL", "10-Q", date(2025, 8, 1)),
    ("NVDA", "10-Q", date(2025, 8, 27)),
    ("NFLX", "10-Q", date(2025, 7, 18)),
    ("TSLA", "10-Q", date(2025, 7, 24)),
    ("WFC", "10-K", date(2025, 2, 25)),
})
GATE_ARMS: tuple[str, ...] = ("dense", "bm25", "hybrid")
GATE_METRICS: tuple[str, ...] = ("recall_any@10", "mrr@10", "ndcg@10")
GATE_VARIANT = product_variant()  # the product's embedding text (ingest/embed_format.py)
SETTING = f"{GATE_VARIANT}/shared"


def default_baseline_path() -> Path:
    return Path(str(resources.files("equimind.evaluation") / "data" / "baseline_ci.json"))


def tracked(result_metrics: dict[str, Any]) -> tuple[dict[str, float], int]:
    """The tracked means ("<arm>/<metric>" -> mean) and the number of questions they average over."""
    block = result_metrics[SETTING]
    values = {f"{arm}/{m}": float(block["arms"][arm]["metrics"][m]["mean"])
              for arm in GATE_ARMS for m in GATE_METRICS}
    return values, int(block["n_questions"])


def compare_to_baseline(measured: dict[str, float], n: int, baseline: dict[str, float]) -> tuple[bool, list[str]]:
    """(passed, one line per metric). Fails when measured < baseline - 1/n for any tracked metric, and when a
    measured metric has no baseline (or a baseline metric is not measured)."""
    floor = 1.0 / n
    ok = True
    lines = [f"noise floor = 1/{n} = {floor:.4f}"]
    for key in sorted(set(measured) - set(baseline)):
        ok = False
        lines.append(f"FAIL {key}: measured but missing from the baseline, so not gated; restore it")
    for key, base in sorted(baseline.items()):
        if key not in measured:
            ok = False
            lines.append(f"FAIL {key}: tracked in the baseline but not measured")
            continue
        got = measured[key]
        failed = got < base - floor - 1e-12
        ok &= not failed
        lines.append(f"{'FAIL' if failed else 'ok  '} {key}: {got:.4f} (baseline {base:.4f}, diff {got - base:+.4f})")
    return ok, lines


def run_gate(settings: Settings, corpus_dir: Path, cache_dir: Path, baseline_path: Path, *,
             update: bool = False, embedder: Any = None, tokenizer: Any = None) -> dict[str, Any]:
    """Run the subset and check (or, with ``update``, rewrite) the baseline. Returns a result part with
    ``metrics.passed`` and ``metrics.lines``."""
    part = run_golden(settings, corpus_dir, cache_dir, variants=(GATE_VARIANT,), arms=GATE_ARMS,
                      settings_names=("shared",), filings=GATE_FILINGS, questions=load_golden(),
                      embedder=embedder, tokenizer=tokenizer)
    measured, n = tracked(part["metrics"])
    if update:
        old = json.loads(baseline_path.read_text(encoding="utf-8")) if baseline_path.is_file() else {}
        base, lowered = updated_baseline(old, measured, n)
        baseline_path.write_text(json.dumps(base, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        passed, lines = True, [f"baseline written to {baseline_path} (n={n})"]
        lines += [f"LOWERED {k}: {old['metrics'][k]:.4f} -> {measured[k]:.4f}; name the decision record "
                  f"(docs/decisions/NNNN-*.md) in history[-1].lowered_by[{k!r}] before committing"
                  for k in lowered]
    else:
        if not baseline_path.is_file():
            raise NotFoundError(f"no baseline at {baseline_path}; create it with `equimind eval gate "
                                "--update-baseline` and commit it")
        base = json.loads(baseline_path.read_text(encoding="utf-8"))
        if int(base["n_questions"]) != n:
            lines = [f"FAIL the subset has {n} questions but the baseline was measured on {base['n_questions']}; "
                     "re-baseline deliberately with --update-baseline"]
            passed = False
        else:
            passed, lines = compare_to_baseline(measured, n, base["metrics"])
    part["metrics"] = {"passed": passed, "lines": lines, "measured": measured, "n_questions": n,
                       "noise_floor": 1.0 / n, "detail": part["metrics"]}
    part["config"]["gate"] = {"baseline": str(baseline_path), "update": update}
    return part


DECISION_RECORD = re.compile(r"docs/decisions/\d{4}-[a-z0-9][a-z0-9-]*\.md")


def gated_keys() -> frozenset[str]:
    """Every "<arm>/<metric>" the gate measures; the baseline must hold each of them."""
    return frozenset(f"{arm}/{m}" for arm in GATE_ARMS for m in GATE_METRICS)


def lowered_metrics(before: dict[str, float], after: dict[str, float]) -> list[str]:
    """The metrics whose value went down from ``before`` to ``after``."""
    return sorted(k for k in after if k in before and after[k] < before[k] - 1e-12)


def updated_baseline(old: dict[str, Any], measured: dict[str, float], n: int) -> tuple[dict[str, Any], list[str]]:
    """(the new baseline file, the metrics it lowers): ``measured`` becomes ``metrics`` and is appended to the
    history. A lowered metric gets ``lowered_by: null``, which the tests reject until a decision record is named."""
    lowered = lowered_metrics(old.get("metrics", {}), measured)
    entry: dict[str, Any] = {"metrics": measured, "n_questions": n, "setting": SETTING}
    if lowered:
        entry["lowered_by"] = dict.fromkeys(lowered)
    base = {"n_questions": n, "metrics": measured, "setting": SETTING,
            "filings": sorted(f"{t} {f} {d}" for t, f, d in GATE_FILINGS),
            "history": [*old.get("history", []), entry]}
    return base, lowered


def baseline_problems(base: dict[str, Any], repo_root: Path) -> list[str]:
    """What is wrong with a baseline file (empty when nothing): its metrics are exactly the gated set; ``history``
    is non-empty, every entry holds the gated set, the last entry is the current baseline; and every value that
    went down from one entry to the next names, in that entry's ``lowered_by``, an existing decision record
    ``docs/decisions/NNNN-*.md`` under ``repo_root`` (and ``lowered_by`` names nothing that did not go down)."""
    keys = gated_keys()
    problems: list[str] = []
    metrics = base.get("metrics", {})
    if set(metrics) != keys:
        problems.append(f"metrics: missing {sorted(keys - set(metrics))}, not gated {sorted(set(metrics) - keys)}")
    history = base.get("history")
    if not isinstance(history, list) or not history:
        return [*problems, "history: missing or empty; every baseline value must be recorded there"]
    for i, entry in enumerate(history):
        if set(entry.get("metrics", {})) != keys:
            problems.append(f"history[{i}]: its metrics are not the gated set {sorted(keys)}")
    last = history[-1]
    for field in ("metrics", "n_questions", "setting"):
        if last.get(field) != base.get(field):
            problems.append(f"history[-1].{field} differs from the baseline's {field}: append the baseline to history")
    for i in range(1, len(history)):
        lowered = lowered_metrics(history[i - 1].get("metrics", {}), history[i].get("metrics", {}))
        records = history[i].get("lowered_by") or {}
        for key in lowered:
            before, after = history[i - 1]["metrics"][key], history[i]["metrics"][key]
            record = records.get(key)
            if not isinstance(record, str) or not DECISION_RECORD.fullmatch(record):
                problems.append(f"history[{i}]: {key} went down {before} -> {after} without a decision record: "
                                "name a docs/decisions/NNNN-*.md in lowered_by")
            elif not (repo_root / record).is_file():
                problems.append(f"history[{i}]: {key} went down {before} -> {after}; its decision record {record} "
                                "does not exist")
        for key in sorted(set(records) - set(lowered)):
            problems.append(f"history[{i}]: lowered_by names {key}, which did not go down")
    return problems
