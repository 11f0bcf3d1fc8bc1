"""Write ``equimind/lexicon/data/xbrl_labels.json``: the us-gaap concepts the recorded companies report in USD in a
10-K or 10-Q, each with its standard label, unit and kind (flow or balance), read from the SEC companyfacts files of
the recorded corpus. ``equimind/lexicon/line_items.py`` derives the phrases a question may name each by.

Only the taxonomy's own labels are read; no question of any benchmark is. A concept whose label says "Deprecated" is
left out; so is one with no label.

Usage: python scripts/build_line_labels.py [--corpus DIR] [--out PATH] [--check]
(``--check``: exit 1 when the file on disk differs from what the corpus gives.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "equimind" / "lexicon" / "data" / "xbrl_labels.json"
FORMS = frozenset(["10-K", "10-Q", "10-K/A", "10-Q/A"])
FORMAT = 1


def build(corpus: Path) -> dict[str, Any]:
    folder = corpus / "sec" / "companyfacts"
    files = sorted(folder.glob("CIK*.json"))
    if not files:
        raise SystemExit(f"no companyfacts files under {folder}; pass --corpus (the recorded corpus folder)")
    concepts: dict[str, dict[str, Any]] = {}
    for f in files:
        facts = json.loads(f.read_text(encoding="utf-8")).get("facts", {}).get("us-gaap", {})
        for name, body in sorted(facts.items()):
            label = body.get("label")
            rows = [r for r in body.get("units", {}).get("USD", []) if r.get("form") in FORMS]
            if not label or "deprecated" in label.lower() or not rows:
                continue
            entry = concepts.setdefault(f"us-gaap:{name}", {"label": label, "flows": 0, "instants": 0})
            entry["flows"] += sum(1 for r in rows if r.get("start"))
            entry["instants"] += sum(1 for r in rows if not r.get("start"))
    rows_out = [{"concept": c, "label": e["label"], "unit": "USD", "flow": e["flows"] > e["instants"]}
                for c, e in sorted(concepts.items())]
    return {"format": FORMAT,
            "provenance": {"source": "SEC XBRL companyfacts of the recorded corpus (sec/companyfacts), us-gaap "
                                     "standard labels; USD facts filed in a 10-K or 10-Q; deprecated concepts left out",
                           "files": [f.name for f in files], "built_by": "python scripts/build_line_labels.py"},
            "concepts": rows_out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = Path(os.environ.get("EQUIMIND_SHARED", ROOT.parent / "shared"))
    ap.add_argument("--corpus", type=Path, default=shared / "corpus")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = json.dumps(build(args.corpus), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{args.out} differs from the corpus: rerun without --check")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(json.loads(text)['concepts'])} concepts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
