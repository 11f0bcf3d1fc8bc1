"""Count the FinanceBench dev questions whose company the search auto-filter recognises.

A ``QueryFilterParser`` is built over the company names of ``documents.jsonl`` (one fact a document: its company and
``doc_period``); a question counts as recognised when the company its row names is among the companies the parser
reads from the question's words. Printed for the names alone and with the SEC ticker map of the recorded corpus
(registrant tickers and distinctive leading words). A measurement only: nothing here tunes the parser.

Usage: python scripts/company_recognition.py [--data DIR] [--corpus DIR] [--filters PATH]
(``--filters``: another version of ``equimind/query/filters.py`` to measure, e.g. ``git show HEAD:...`` saved to a
file; it is measured on names alone.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _count(parser: Any, questions: list[dict[str, Any]]) -> tuple[int, list[str]]:
    missed = [q["question"] for q in questions if q["company"] not in parser.explain(q["question"]).companies]
    return len(questions) - len(missed), missed


def main() -> None:
    shared = Path(os.environ.get("EQUIMIND_SHARED", "../shared"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=shared / "benchmarks" / "financebench")
    ap.add_argument("--corpus", type=Path, default=shared / "corpus")
    ap.add_argument("--filters", type=Path, default=None)
    ap.add_argument("--show-missed", action="store_true")
    args = ap.parse_args()
    docs, questions = _rows(args.data / "documents.jsonl"), _rows(args.data / "questions.jsonl")
    if args.filters is not None:
        spec = importlib.util.spec_from_file_location("measured_filters", args.filters)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses read their module while the class is made
        spec.loader.exec_module(module)
        facts = [module.DocFacts(d["doc_name"], d["company"], None, int(d["doc_period"])) for d in docs]
        n, _missed = _count(module.QueryFilterParser(facts), questions)
        print(json.dumps({"filters": str(args.filters), "names": n, "questions": len(questions)}))
        return
    from equimind.query.company_identity import registrant_tickers
    from equimind.query.filters import DocFacts, QueryFilterParser
    from equimind.sources.sec_edgar import parse_ticker_map

    facts = [DocFacts(d["doc_name"], d["company"], None, int(d["doc_period"])) for d in docs]
    sec = parse_ticker_map(json.loads((args.corpus / "sec" / "company_tickers.json").read_text(encoding="utf-8")))
    names = {t: info.name for t, info in sec.items()}
    plain, _missed = _count(QueryFilterParser(facts), questions)
    joined, missed_sec = _count(QueryFilterParser(facts, registrant_tickers(facts, names)), questions)
    print(json.dumps({"names": plain, "names_and_sec_map": joined, "questions": len(questions)}))
    if args.show_missed:
        print("\n".join(missed_sec))


if __name__ == "__main__":
    main()
