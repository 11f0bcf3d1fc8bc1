"""``make bench``: every benchmark, one after the other, each in a fresh process (so memory, torch threads and
caches of one do not leak into the next), writing its own benchmarks/results/*.json.

    python -m benchmarks.run_all [--only NAME ...] [--skip NAME ...] [--quick] [--list]

``--quick`` is a smoke run (10k chunks, no model timings, fewer requests) whose results go to a temporary
directory (except ingest_bench, which has no --out and writes benchmarks/results/ingest.json as usual).

A benchmark whose module is absent, or that needs the recorded data (EQUIMIND_SHARED) or the PostgreSQL server
binaries when they are missing, is skipped with the reason.
A failed benchmark does not stop the others; the exit status is 1 if any failed.
The summary (status, seconds, command of each) goes to benchmarks/results/run_all.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info

log = logging.getLogger("run_all")
REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "run_all.json"


@dataclass(frozen=True)
class Bench:
    name: str  # module benchmarks.<name>
    args: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()  # arguments for --quick (a smoke run in a few minutes)
    has_out: bool = True  # takes --out (quick runs write to a temporary directory, not benchmarks/results)
    needs_shared: bool = False
    needs_postgres: bool = False  # starts a throwaway cluster with scripts/postgres.sh (its binaries must be installed)
    timeout_s: int = 3600


def shared_dir() -> Path:
    return Path(os.environ.get("EQUIMIND_SHARED", str(REPO.parent / "shared"))).resolve()


def benchmarks() -> list[Bench]:
    corpus = str(shared_dir() / "corpus")
    return [
        Bench("search_bench", quick=("--sizes", "10000", "--skip-models")),
        Bench("scaling_bench", quick=("--sizes", "10000")),
        Bench("ingest_bench", has_out=False, needs_shared=True),
        Bench("embed_backends", needs_shared=True, quick=("--texts", "64", "--rounds", "1", "--no-golden")),
        Bench("hnsw_sweep", quick=("--size", "10000", "--efs", "50", "400", "--queries", "20")),
        Bench("first_research", needs_shared=True, quick=("--skip-api",)),
        Bench("api_load", args=("--snapshot", corpus), needs_shared=True,
              quick=("--snapshot", corpus, "--embedder", "hash", "--requests", "100", "--health-requests", "50")),
        # `equimind changes`: precision on the hand-labelled samples, heading recall, and the speed of the largest
        # 10-K against 10-K diff (parses the FinanceBench PDFs itself)
        Bench("changes_sample", needs_shared=True, quick=("--speed-runs", "1")),
        # the reworded check's two numbers, chosen leave-company-out on the labelled added / removed changes
        Bench("changes_elsewhere", needs_shared=True),
        # the offline analyst's claims: the labelled sentences scored leave-company-out (cues vs the classifier), and
        # the rating across five paraphrases of the decision question for the ten recorded tickers (ADR 0019)
        Bench("claim_classifier"),
        # the aspect search's words per debate aspect, k chosen leave-company-out on the labelled sentences (ADR 0020)
        Bench("aspect_queries", needs_shared=True),
        Bench("paraphrase_stability", needs_shared=True, quick=("--tickers", "NVDA,TSLA")),
        # two hosts over one PostgreSQL docstore + Chroma server: A-indexed -> B-searchable latency, identical top 10;
        # `equimind serve --workers 1/2/4` search throughput; one worker's memory on PostgreSQL vs SQLite
        Bench("multihost_bench", needs_postgres=True, quick=("--quick",), timeout_s=900),
    ]


def skip_reason(bench: Bench) -> str | None:
    if importlib.util.find_spec(f"benchmarks.{bench.name}") is None:
        return f"benchmarks/{bench.name}.py is not present"
    if bench.needs_shared and not (shared_dir() / "corpus").is_dir():
        return f"needs the recorded corpus at {shared_dir() / 'corpus'}; set EQUIMIND_SHARED"
    if bench.needs_postgres and not postgres_binaries():
        return "needs the PostgreSQL server binaries (scripts/postgres.sh bindir found none; apt install postgresql)"
    return None


def postgres_binaries() -> bool:
    try:
        res = subprocess.run(["bash", str(REPO / "scripts" / "postgres.sh"), "bindir"], capture_output=True,
                             timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


def run(bench: Bench, quick_dir: Path | None) -> dict[str, Any]:
    reason = skip_reason(bench)
    cmd = [sys.executable, "-m", f"benchmarks.{bench.name}", *(bench.quick if quick_dir else bench.args)]
    if quick_dir is not None and bench.has_out:
        cmd += ["--out", str(quick_dir / f"{bench.name}.json")]
    if reason is not None:
        log.warning("skipping %s: %s", bench.name, reason)
        return {"status": "skipped", "reason": reason}
    log.info("running %s", " ".join(cmd[1:]))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO, timeout=bench.timeout_s, check=False)
        status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
    except subprocess.TimeoutExpired:
        status = f"failed (timeout after {bench.timeout_s} s)"
    seconds = round(time.perf_counter() - t0, 1)
    log.info("%s: %s in %.0f s", bench.name, status, seconds)
    return {"status": status, "seconds": seconds, "command": " ".join(cmd[1:])}


def main(argv: list[str] | None = None) -> int:
    names = [b.name for b in benchmarks()]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="+", choices=names, help="run just these")
    p.add_argument("--skip", nargs="+", choices=names, default=[], help="do not run these")
    p.add_argument("--quick", action="store_true",
                   help="smaller sizes / fewer requests, results in a temporary directory (a smoke run)")
    p.add_argument("--list", action="store_true", help="print the benchmarks and exit")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    chosen = [b for b in benchmarks() if (not args.only or b.name in args.only) and b.name not in args.skip]
    if args.list:
        for b in benchmarks():
            print(f"{b.name:15} {skip_reason(b) or 'available'}")
        return 0
    quick_dir = Path(tempfile.mkdtemp(prefix="equimind-bench-quick-")) if args.quick else None
    if quick_dir is not None:
        log.info("quick run: results go to %s (benchmarks/results is left alone)", quick_dir)
        args.out = quick_dir / "run_all.json" if args.out == RESULTS else args.out
    t0 = time.perf_counter()
    summary = {b.name: run(b, quick_dir) for b in chosen}
    out = {"benchmark": "run_all", "machine": machine_info(), "quick": args.quick, "runs": summary,
           "total_runtime_s": round(time.perf_counter() - t0, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    failed = [name for name, r in summary.items() if r["status"].startswith("failed")]
    log.info("done in %.0f s; failed: %s", out["total_runtime_s"], ", ".join(failed) or "none")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
