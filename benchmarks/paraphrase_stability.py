"""Does the rating depend on how the decision question is worded? (issue 32: the same rating across 5 paraphrases
for each of the 10 recorded tickers.)

    python -m benchmarks.paraphrase_stability [--tickers NVDA,AAPL,...] [--as-of 2025-09-30] [--home DIR]
        [--out benchmarks/results/paraphrase_stability.json]

One process, one home (the first research of a ticker ingests its recorded filings; the paraphrases after it read
the same store), the recorded snapshot (``$EQUIMIND_SHARED/corpus``), the offline analyst. For every ticker and
paraphrase it records how the question was read (decision or specific, its topic words), the rating, conviction and
score, and whether the run refused. A ticker is stable when every paraphrase gets the same rating (refusals
included). The paraphrases below were written before any run, to cover the phrasings the issue names and two more;
none names a topic.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "paraphrase_stability.json"
TICKERS = ("NVDA", "AAPL", "TSLA", "AMZN", "GOOGL", "META", "NFLX", "MSFT", "AMD", "JPM")
NAMES = {"NVDA": "NVIDIA", "AAPL": "Apple", "TSLA": "Tesla", "MSFT": "Microsoft", "AMZN": "Amazon",
         "GOOGL": "Alphabet", "META": "Meta", "JPM": "JPMorgan", "NFLX": "Netflix", "AMD": "AMD"}
PARAPHRASES = ("Should I buy {name}?", "Is {ticker} a good investment?", "{ticker}: buy or sell?",
               "Should I invest in {name}?", "Would you recommend buying {name} stock?")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tickers", default=",".join(TICKERS))
    ap.add_argument("--as-of", default="2025-09-30")
    ap.add_argument("--home", type=Path, default=None, help="a home to reuse (default: a new temporary one)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.core.errors import EquiMindError

    shared = Path(os.environ.get("EQUIMIND_SHARED", REPO.parent / "shared"))
    home = args.home or Path(tempfile.mkdtemp(prefix="equimind-paraphrase-"))
    settings = Settings(home=home, snapshot=(shared / "corpus").resolve(), shared=shared, provider="offline")
    as_of = date.fromisoformat(args.as_of)
    rows: list[dict[str, Any]] = []
    services = open_services(settings)
    try:
        engine = EquiMindEngine(services)
        for t in [x.strip().upper() for x in args.tickers.split(",") if x.strip()]:
            for template in PARAPHRASES:
                q = template.format(name=NAMES.get(t, t), ticker=t)
                parsed = services.question_parser.parse(q, as_of, t)
                row: dict[str, Any] = {"ticker": t, "question": q, "kind": parsed.ask.kind.value,
                                       "topic": [f.word for f in parsed.ask.topic]}
                t0 = time.perf_counter()
                try:
                    rec = engine.research(t, q, as_of)
                    row.update(rating=rec.rating.value if rec.rating else None, conviction=rec.conviction,
                               refused=rec.refused, refusal_reason=rec.refusal_reason)
                except EquiMindError as exc:  # a per-row error, never an aborted run
                    row.update(rating=None, error=str(exc))
                row["seconds"] = round(time.perf_counter() - t0, 1)
                rows.append(row)
                print(f"{t:6} {row.get('rating') or ('REFUSED' if row.get('refused') else 'ERROR'):12} "
                      f"{row.get('conviction') or 0:.3f}  {q}", flush=True)
    finally:
        services.close()
    by_ticker: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_ticker.setdefault(r["ticker"], []).append(r)
    table = {t: {"ratings": [r.get("rating") or ("refused" if r.get("refused") else "error") for r in rs],
                 "stable": len({r.get("rating") or ("refused" if r.get("refused") else "error") for r in rs}) == 1,
                 "convictions": [r.get("conviction") for r in rs]} for t, rs in by_ticker.items()}
    out = {"config": {"as_of": args.as_of, "paraphrases": list(PARAPHRASES), "provider": "offline",
                      "snapshot": "shared/corpus"},
           "machine": machine_info(), "stable_tickers": sum(v["stable"] for v in table.values()),
           "tickers": len(table), "table": table, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"stable: {out['stable_tickers']} of {out['tickers']} tickers → {args.out}")


if __name__ == "__main__":
    main()
