"""Refusals where search found it (issue 28): for each FinanceBench dev question an ``eval answers`` run refused,
does the product search's top 10 for the same question text (``EquiMindEngine.search``, the hits ``ask`` reads
first) hold a passage on one of the question's gold evidence pages?

    python -m benchmarks.refusals_search_found RESULT.json STORE_CACHE [--data DIR]

RESULT.json: the ``--json`` output of ``equimind eval answers --parts financebench``; STORE_CACHE: the FinanceBench
store cache that run used (``<--cache>/financebench``). Prints one line per refused question and the count over all
questions. A measurement only: nothing here tunes anything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from equimind.core.config import Settings
from equimind.evaluation.answer_quality import financebench_engine

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = Path(os.environ.get("EQUIMIND_SHARED", ROOT.parent / "shared"))
    ap.add_argument("result", type=Path)
    ap.add_argument("store", type=Path)
    ap.add_argument("--data", type=Path, default=shared / "benchmarks" / "financebench")
    args = ap.parse_args(argv)
    engine, _ = financebench_engine(Settings(), args.data, args.store)
    store = engine.services.docstore
    docs = {r.doc_id: store.get_document(r.doc_id) for r in store.list_documents(status="indexed")}
    rows = json.loads(args.result.read_text(encoding="utf-8"))["metrics"]["answer_correctness"]["financebench"]["rows"]
    questions = {q["financebench_id"]: q for q in (json.loads(line) for line in (args.data / "questions.jsonl")
                                                    .read_text(encoding="utf-8").splitlines() if line.strip())}
    refused = [r for r in rows if r["refused"]]
    found = 0
    for r in refused:
        q = questions[r["id"]]
        gold = {(e["doc_name"], int(e["evidence_page_num"])) for e in q.get("evidence", [])}
        hit = False
        for h in engine.search(q["question"], top_k=10).hits:
            doc = docs.get(h.document.doc_id)
            pages = doc.pages_for(h.start, h.end) if doc is not None else None
            name = dict(doc.meta).get("doc_name") if doc is not None else None
            hit = hit or bool(pages and any((name, p) in gold for p in range(pages[0], pages[1] + 1)))
        found += hit
        print(f"{r['id']} {r['refusal']:18} {'gold page in top 10' if hit else '-':20} {q['question'][:80]}")
    print(f"{found}/{len(rows)} questions refused although search's top 10 held a gold page "
          f"({len(refused)} refused in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
