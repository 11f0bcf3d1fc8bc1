"""Line-item and composed-figure asks of our own (issue 28), answered over the recorded filings and judged against
values computed from the recorded SEC companyfacts.

The questions (``benchmarks/data/line_item_asks.json``) ask for:
- reported lines the concept map does not list, named by their us-gaap labels or short forms ("SG&A",
  "net cash used in investing activities", "accumulated deficit");
- figures composed from one line (a share of revenue, a growth rate);
- the new catalogue figures (interest coverage, retention ratio, capital intensity, a stability ask).

They were written after the rules and tune nothing. Each gold value is computed here from the concepts and period
ends the file names, from the companyfacts of ``--corpus``. A question is correct when a figure or stated value of
the answer equals the gold within 0.1 % (``evaluation.answer_probe.value_matches``).

The store is the ``eval answers`` golden store (all recorded filings). It is opened at the as-of date of the golden
set, with the snapshot as its source and the offline analyst. Run it with whatever ``equimind`` is first on
PYTHONPATH, to compare two commits over the same store:

    python -m benchmarks.line_item_asks --store .equimind_cache/eval/answers --json OUT
    PYTHONPATH=<other tree> python -m benchmarks.line_item_asks --store ... --json OUT_BEFORE
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import date
from pathlib import Path
from typing import Any

from equimind.core.config import Settings
from equimind.evaluation.answer_probe import AS_OF, run_probe, wilson
from equimind.evaluation.answers import _open_engine
from equimind.evaluation.golden import GoldenQuestion

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "benchmarks" / "data" / "line_item_asks.json"


def _facts(corpus: Path) -> dict[str, dict[str, Any]]:
    """us-gaap facts by ticker, for the companies of the recorded companyfacts."""
    tickers: dict[int, list[str]] = {}
    for v in json.loads((corpus / "sec" / "company_tickers.json").read_text(encoding="utf-8")).values():
        tickers.setdefault(int(v["cik_str"]), []).append(v["ticker"])  # one CIK, several share classes
    out: dict[str, dict[str, Any]] = {}
    for f in sorted((corpus / "sec" / "companyfacts").glob("CIK*.json")):
        raw = json.loads(f.read_text(encoding="utf-8"))
        for t in tickers.get(int(raw["cik"]), [str(raw["cik"])]):
            out[t] = raw["facts"]["us-gaap"]
    return out


def _value(facts: dict[str, Any], concept: str, end: str) -> float:
    """The concept's value for the year or the balance ending ``end``, from a 10-K (a year-long duration for a flow)."""
    rows = [r for r in facts[concept]["units"]["USD"] if r["end"] == end and r["form"] == "10-K"]
    flows = [r for r in rows if r.get("start") and 350 <= _days(r["start"], r["end"]) <= 380]
    chosen = flows or [r for r in rows if not r.get("start")]
    if not chosen:
        raise KeyError(f"{concept} has no 10-K value ending {end}")
    return float(chosen[0]["val"])


def _days(start: str, end: str) -> int:
    return (date.fromisoformat(end) - date.fromisoformat(start)).days


def gold_value(facts: dict[str, Any], g: dict[str, str]) -> float:
    a = _value(facts, g["a"], g["end"])
    kind = g["kind"]
    if kind == "line":
        return a
    if kind == "growth":
        prior = _value(facts, g["a"], g["prior"])
        return (a - prior) / abs(prior) * 100
    b = _value(facts, g["b"], g["end"])
    if kind == "share":
        return a / b * 100
    if kind == "ratio":
        return a / b
    if kind in ("retention", "margin"):  # (net income - dividends) / net income; (revenue - cost) / revenue
        return (a - b) / a * 100
    raise ValueError(f"unknown gold kind {kind!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = Path(os.environ.get("EQUIMIND_SHARED", ROOT.parent / "shared"))
    ap.add_argument("--corpus", type=Path, default=shared / "corpus")
    ap.add_argument("--store", type=Path, required=True, help="the `eval answers` golden store (its cache folder)")
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args(argv)
    facts = _facts(args.corpus)
    spec = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    questions = [GoldenQuestion(q["id"], "numeric_xbrl", q["question"], None, (q["ticker"],), (),
                                {"value": gold_value(facts[q["ticker"]], q["gold"]), **q["gold"]})
                 for q in spec["questions"]]
    engine = _open_engine(Settings(), args.corpus, args.store, None)
    result = run_probe(engine, engine.services.answerer(), questions, {}, AS_OF)
    rows = result["rows"]
    for r, q in zip(rows, questions, strict=True):
        r["gold_value"] = q.xbrl["value"] if q.xbrl else None
    k = sum(r["verdict"] == "correct" for r in rows)
    refused = sum(r["verdict"] == "refused" for r in rows)
    out = {"benchmark": "line_item_asks", "as_of": AS_OF.isoformat(), "n": len(rows), "correct": k,
           "correct_share": round(k / len(rows), 3), "correct_ci95": [round(x, 3) for x in wilson(k, len(rows))],
           "refused": refused, "rows": rows}
    args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{k}/{len(rows)} correct ({refused} refused); rows in {args.json}")
    for r in rows:
        print(f"  {r['id']} {r['verdict']:8} {r['question'][:70]!r}: {(r['answer'] or r['refusal'] or '')[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
