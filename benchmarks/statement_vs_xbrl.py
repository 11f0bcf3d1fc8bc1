"""The statement-row reader checked against XBRL: every line of the concept map read from each stored 10-K's own
statement rows (``answer/lines.StatementLines``) beside the value the company's companyfacts give for the same fiscal
year (``XbrlLines``), for the companies whose companyfacts are recorded. A check of the reader on ground truth, not
a tuner: every disagreement is printed.

    python -m benchmarks.statement_vs_xbrl STORE/docstore.sqlite COMPANYFACTS_DIR [--json OUT]

e.g. ``.equimind_cache/eval/answers/docstore.sqlite`` and ``$EQUIMIND_SHARED/corpus/sec/companyfacts``. Values agree
within 0.5 % (signs aside: a statement prints an outflow negative, companyfacts positive). The as-of date is the
answer evaluation's (``answer_probe.AS_OF``).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from benchmarks.statement_margins import _fiscal_year
from equimind.answer.lines import StatementLines, XbrlLines
from equimind.core.documents import Origin
from equimind.evaluation.answer_probe import AS_OF
from equimind.lexicon.concepts import METRICS
from equimind.sources.sec_edgar import parse_company_facts

TOLERANCE = 0.005


def compare(db: Path, facts_dir: Path) -> dict[str, Any]:
    """Agreement counts and every disagreement over the 10-Ks of ``db`` whose company has a companyfacts file in
    ``facts_dir`` (matched by the document's CIK)."""
    files = {p.stem.removeprefix("CIK"): p for p in facts_dir.glob("CIK*.json")}
    out: dict[str, Any] = {"agree": 0, "disagree": 0, "xbrl_only": 0, "statement_only": 0, "rows": []}
    with sqlite3.connect(db) as con:
        for doc_id, title, form, meta, text, cik in con.execute(
                "select id, title, form, meta, text, cik from documents"):
            fy = _fiscal_year(meta)
            cik = str(cik or "").zfill(10)
            if not form.upper().startswith("10-K") or fy is None or cik not in files:
                continue
            cf = parse_company_facts(json.loads(files[cik].read_text(encoding="utf-8")), ticker=None,
                                     origin=Origin.SNAPSHOT, location=str(files[cik]))
            xbrl = XbrlLines(cf, AS_OF)
            rows = StatementLines({doc_id: (fy, form)}, {doc_id: text}.__getitem__)
            for m in METRICS:
                for year in (fy, fy - 1):  # the report's year and the prior year it prints
                    xv, sv = xbrl.value(m, year), rows.value(m, year, fy)
                    if xv is None and sv is None:
                        continue
                    if xv is None or sv is None:
                        out["xbrl_only" if sv is None else "statement_only"] += 1
                        continue
                    ok = abs(abs(xv.value) - abs(sv.value)) <= TOLERANCE * max(abs(xv.value), 1e-9)
                    out["agree" if ok else "disagree"] += 1
                    if not ok:
                        out["rows"].append({"document": title, "fiscal_year": year, "line": m.key,
                                            "xbrl": xv.value, "concept": xv.figure.provenance.get("concept"),
                                            "statement": sv.value, "row": sv.figure.provenance.get("row")})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("docstore", type=Path)
    ap.add_argument("companyfacts", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    got = compare(args.docstore, args.companyfacts)
    for r in got["rows"]:
        print(f"{r['document'][:40]:40} {r['fiscal_year']} {r['line']}: XBRL {r['xbrl']:,.2f} ({r['concept']}) vs "
              f"statement {r['statement']:,.2f} [{r['row']}]")
    print(f"agree {got['agree']}, disagree {got['disagree']}, XBRL only {got['xbrl_only']}, "
          f"statement only {got['statement_only']}")
    if args.json:
        args.json.write_text(json.dumps(got, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
