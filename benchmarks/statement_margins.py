"""Statement-row margins of every stored annual report, and every figure called undefined (a check, not a tuner).

For each 10-K of the given docstores (the ``eval answers`` stores: the recorded filings' and FinanceBench's PDFs),
gross, operating and net margin are computed from the filing's own statement rows (``answer/lines.StatementLines``,
no XBRL) for its fiscal year; a margin that cannot be computed is either "missing" (the passages would answer) or
"UNDEFINED" (``answer/undefined.undefined_figure``: the income statement has no such line and none it could be
summed from). Every UNDEFINED line is a claim the product would make to a user: read them.

    python -m benchmarks.statement_margins STORE/docstore.sqlite [STORE/docstore.sqlite ...] [--all] [--json OUT]

``--all``: every computed figure of ``lexicon.formulas`` (but the multi-year CAGR) instead of the three margins, with
a count per figure of the reports it is computed for: where a figure is missing for many filings, a line name the
statement readers do not know is the usual cause (``answer/lines.ROLE_LINES``).

e.g. ``.equimind_cache/eval/answers/docstore.sqlite`` and ``.equimind_cache/eval/financebench/cells/docstore.sqlite``
after ``equimind eval answers``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from equimind.answer.computed import compute
from equimind.answer.lines import StatementLines
from equimind.answer.undefined import undefined_figure
from equimind.lexicon.formulas import FORMULAS, FormulaMatch, formula_by_key

MARGINS = ("gross_margin", "operating_margin", "net_margin")
EVERY = tuple(f.key for f in FORMULAS if f.key != "revenue_cagr")  # --all: a CAGR needs a span of years


def _fiscal_year(meta: str | None) -> int | None:
    try:
        raw = json.loads(meta or "{}")
    except ValueError:
        return None
    fy = (raw if isinstance(raw, dict) else dict(raw)).get("fiscal_year")
    return int(fy) if str(fy or "").isdigit() else None


def margins(db: Path, keys: tuple[str, ...] = MARGINS) -> list[dict[str, Any]]:
    """One row per 10-K of the docstore at ``db``: its title, fiscal year and each figure of ``keys`` (value,
    missing or UNDEFINED with the reason)."""
    out: list[dict[str, Any]] = []
    with sqlite3.connect(db) as con:
        for doc_id, title, form, meta, text in con.execute("select id, title, form, meta, text from documents"):
            fy = _fiscal_year(meta)
            if not form.upper().startswith("10-K") or fy is None:
                continue
            lines = StatementLines({doc_id: (fy, form)}, {doc_id: text}.__getitem__)
            row: dict[str, Any] = {"document": title, "fiscal_year": fy}
            for key in keys:
                f = formula_by_key(key)
                got = compute(FormulaMatch(f, f.name, False), [fy], title, "-",
                              lambda m, y, t, sl=lines: sl.value(m, y, t))
                if got.sentence is not None:
                    row[key] = got.sentence.values[0].text
                else:
                    undefined = undefined_figure(f, got, lines, title, "-", fy)
                    row[key] = f"{'UNDEFINED' if undefined else 'missing'}: {got.reason}"
            out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("docstores", type=Path, nargs="+")
    ap.add_argument("--all", action="store_true", help="every computed figure, not only the three margins")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    keys = EVERY if args.all else MARGINS
    rows = [r for db in args.docstores for r in margins(db, keys)]
    for r in rows:
        print(f"{r['document'][:60]:60} {r['fiscal_year']}  " + "; ".join(f"{k}={r[k]}" for k in keys))
    undefined = [(r["document"], k) for r in rows for k in keys if str(r[k]).startswith("UNDEFINED")]
    computed = {k: sum(1 for r in rows if not str(r[k]).startswith(("missing", "UNDEFINED"))) for k in keys}
    print(f"{len(rows)} annual reports; computed per figure: {computed}")
    print(f"{len(undefined)} figures called undefined: {undefined}")
    if args.json:
        out = {"rows": rows, "undefined": undefined, "computed": computed, "reports": len(rows)}
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
