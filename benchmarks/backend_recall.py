"""Paired recall@10 of two embedder backends from two `equimind eval retrieval --variants context` result files
run on the same code over copies of one store (the second re-embedded with the other backend by the harness).

    python -m benchmarks.backend_recall TORCH.json INT8.json [--label golden] [--out PATH]

Per arm of every context setting and for the product block: recall@10 of each, how many questions went up and
down, the net change in questions and whether it is within "one question's worth" (|net| <= 1: recall@10 moved by
at most 1/n) — ADR 0008's rule for adopting a backend.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _pairs(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], key: str) -> dict[str, Any]:
    a = {r["id"]: float(r[key]) for r in rows_a}
    b = {r["id"]: float(r[key]) for r in rows_b}
    if set(a) != set(b):
        raise SystemExit(f"the two results cover different questions ({len(set(a) ^ set(b))} differ)")
    up = sorted(q for q in a if b[q] > a[q])
    down = sorted(q for q in a if b[q] < a[q])
    n = len(a)
    return {"n": n, "a": round(sum(a.values()) / n, 4), "b": round(sum(b.values()) / n, 4), "up": len(up),
            "down": len(down), "net_questions": round(sum(b[q] - a[q] for q in a), 3), "moved_up": up,
            "moved_down": down, "within_one_question": abs(sum(b[q] - a[q] for q in a)) <= 1}


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for setting, block in a["metrics"].items():
        if not setting.startswith("context/") or not isinstance(block, dict):
            continue
        other = b["metrics"][setting]["per_query_recall@10"]
        for arm in block["arms"]:
            out[f"{setting}/{arm}"] = _pairs(block["per_query_recall@10"], other, arm)
    out["product"] = _pairs(a["metrics"]["product"]["per_query"], b["metrics"]["product"]["per_query"], "recall@10")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    a, b = json.loads(args.a.read_text()), json.loads(args.b.read_text())
    result = {"label": args.label, "a": {"file": str(args.a), "embedder": a["config"].get("embedder"),
                                         "git": a.get("git")},
              "b": {"file": str(args.b), "embedder": b["config"].get("embedder"), "git": b.get("git")},
              "comparisons": compare(a, b)}
    for name, c in result["comparisons"].items():
        print(f"{name:34s} {c['a']:.4f} -> {c['b']:.4f}  up {c['up']} down {c['down']} net {c['net_questions']:+} "
              f"{'within one question' if c['within_one_question'] else 'MORE than one question'}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
