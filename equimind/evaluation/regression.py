"""CI regression gate: a fast golden subset compared with a committed baseline.

The subset is the golden questions answerable from five small recorded filings (AAPL, NVDA, NFLX, TSLA 10-Qs and
the WFC 10-K), ingested with the real embedder into a cached store embedded the way the product embeds (the
``context`` variant) and searched with the product's fusion weights. Tracked metrics are recall@10, MRR@10 and
nDCG@10 of the ``dense``, ``bm25`` and ``hybrid`` arms in the shared-store setting (no filter).

Noise floor: one question of n. A per-question score lies in [0, 1], so changing one question's outcome moves a
mean by at most 1/n; a drop larger than that is more than one question flipping and fails the gate. A rise is
reported (re-baseline with ``equimind eval gate --update-baseline``) but never fails.
"""

from __future__ import annotations

import json
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
    """(passed, one line per metric). Fails when measured < baseline - 1/n for any tracked metric."""
    floor = 1.0 / n
    ok = True
    lines = [f"noise floor = 1/{n} = {floor:.4f}"]
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
        baseline_path.write_text(json.dumps({"n_questions": n, "metrics": measured, "setting": SETTING,
                                             "filings": sorted(f"{t} {f} {d}" for t, f, d in GATE_FILINGS)},
                                            indent=2, sort_keys=True) + "\n", encoding="utf-8")
        passed, lines = True, [f"baseline written to {baseline_path} (n={n})"]
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
