"""Bounded loopback load test of the REST API: ``POST /api/v1/search`` and ``GET /api/v1/health``.

    python -m benchmarks.api_load [--embedder real|hash] [--requests 600] [--concurrency 8] [--max-seconds 60]

1. builds a temporary EQUIMIND_HOME from the recorded corpus (``--tickers``/``--forms``; or reuse ``--home``);
2. starts ``uvicorn`` in a subprocess on 127.0.0.1 (one worker, the production app from ``create_app``);
3. after a warm-up, sends a fixed number of requests per endpoint with ``--concurrency`` in flight, stopping early at
   ``--max-seconds``; records every latency and every non-200 or transport error;
4. writes benchmarks/results/api_load.json: requests/s, p50/p95/p99 latency, errors, the configuration and the
   machine (benchmarks/machine.py). Client and server share the machine's cores (stated in the result).

``--embedder real`` (default) is the production setting: the bundled all-MiniLM-L6-v2 embeds every query and the
cross-encoder reranks when it is available locally (otherwise the result records the degradation).
``--embedder hash`` uses the hash-based fake embedder and whitespace tokens (a smoke run without torch).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("api_load")
RESULTS = Path(__file__).resolve().parent / "results" / "api_load.json"
REPO = Path(__file__).resolve().parent.parent
TARGET_SEARCH_RPS = 50.0
QUERIES = (
    "export controls on data center GPUs sold to China", "revenue growth by segment", "gross margin drivers",
    "risk factors related to supply chain concentration", "share repurchase program authorization",
    "customer concentration and largest customers", "research and development expenses",
    "inventory provisions and purchase obligations", "income tax rate", "competition in accelerated computing",
    "goodwill and acquisitions", "cash flow from operating activities", "dividends paid to shareholders",
    "manufacturing partners TSMC", "networking revenue", "automotive segment", "stock-based compensation",
    "litigation and legal proceedings", "cybersecurity risk management", "climate and sustainability",
)


# --------------------------------------------------------------------------------------------------------------
# Server side (runs in the subprocess: python -m benchmarks.api_load --serve ...)


def _services(settings: Any, embedder: str) -> Any:
    from equimind.app.services import open_services

    if embedder == "hash":
        from equimind.embedding.embed import HashEmbedder
        from equimind.ingest.tokens import WhitespaceTokenizer

        return open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer())
    return open_services(settings)


def _settings(home: Path, snapshot: Path) -> Any:
    from equimind.core.config import Settings

    return Settings(home=home, snapshot=snapshot)


def serve(home: Path, snapshot: Path, embedder: str, port: int) -> None:
    """The real embedder: exactly what ``equimind serve`` runs. The hash embedder: the same app over fake models."""
    import uvicorn

    from equimind.interfaces.api.app import create_app, limit_torch_threads, run_server

    settings = _settings(home, snapshot)
    if embedder == "real":
        run_server(settings, port=port)
        return
    limit_torch_threads(1)
    uvicorn.run(create_app(settings, _services(settings, embedder)), host="127.0.0.1", port=port,
                log_level="warning")


# --------------------------------------------------------------------------------------------------------------
# Load side


def build_home(home: Path, snapshot: Path, embedder: str, tickers: list[str], forms: list[str]) -> dict[str, Any]:
    from equimind.ingest.documents import documents
    from equimind.sources.snapshot import SnapshotFilingsSource

    services = _services(_settings(home, snapshot), embedder)
    t0 = time.perf_counter()
    raw = SnapshotFilingsSource(snapshot).iter_results(tickers=tickers, forms=forms)
    report = services.pipeline().run(documents(raw))
    services.docstore.close()
    if report.documents_failed:
        raise SystemExit(f"ingest failed: {report.documents_failed}")
    return {"documents": report.documents_added, "chunks": report.chunks_added,
            "seconds": round(time.perf_counter() - t0, 1)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(home: Path, snapshot: Path, embedder: str, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "benchmarks.api_load", "--serve", "--home", str(home), "--snapshot", str(snapshot),
           "--embedder", embedder, "--port", str(port)]
    with log_path.open("wb") as server_log:  # the child keeps its own handle
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=server_log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:]
            raise SystemExit(f"the server exited with code {proc.returncode}:\n{tail}")
        try:
            if httpx.get(base + "/api/v1/health", timeout=30).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.25)
    proc.terminate()
    raise SystemExit("the server did not answer /api/v1/health within 180 s")


async def _run(base: str, kind: str, total: int, concurrency: int, max_seconds: float) -> dict[str, Any]:
    """Send ``total`` requests of one kind with ``concurrency`` in flight; stop early after ``max_seconds``."""
    import httpx

    latencies: list[float] = []
    errors: dict[str, int] = {}
    counter = iter(range(total))
    deadline = time.perf_counter() + max_seconds

    async def worker(client: httpx.AsyncClient) -> None:
        for i in counter:
            if time.perf_counter() > deadline:
                return
            t0 = time.perf_counter()
            try:
                if kind == "search":
                    r = await client.post("/api/v1/search", json={"query": QUERIES[i % len(QUERIES)], "top_k": 10})
                else:
                    r = await client.get("/api/v1/health")
                if r.status_code != 200:
                    errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
                    continue
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            latencies.append((time.perf_counter() - t0) * 1000)

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    return _summary(latencies, errors, wall, total)


def _summary(latencies: list[float], errors: dict[str, int], wall: float, planned: int) -> dict[str, Any]:
    a = np.asarray(latencies) if latencies else np.asarray([np.nan])
    n_err = sum(errors.values())
    return {"planned": planned, "completed": len(latencies), "errors": n_err, "error_kinds": errors,
            "wall_s": round(wall, 2), "requests_per_s": round(len(latencies) / wall, 1) if wall else None,
            "latency_ms": {q: round(float(np.percentile(a, p)), 2) for q, p in (("p50", 50), ("p95", 95),
                                                                               ("p99", 99))}
            | {"mean": round(float(np.mean(a)), 2), "max": round(float(np.max(a)), 2)}}


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), so per-request cost is measurable on a busy machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(proc: subprocess.Popen[bytes], base: str, kind: str, n: int, args: argparse.Namespace) -> dict[str, Any]:
    before = _cpu_seconds(proc.pid)
    out = asyncio.run(_run(base, kind, n, args.concurrency, args.max_seconds))
    after = _cpu_seconds(proc.pid)
    if before is not None and after is not None and out["completed"]:
        cpu_ms = (after - before) * 1000 / out["completed"]
        out["server_cpu_ms_per_request"] = round(cpu_ms, 2)
        cores = os.cpu_count() or 1
        out["cpu_bound_capacity_rps"] = {  # if the server had the cores to itself (ignores the GIL)
            "1_core": round(1000 / cpu_ms, 1), f"{cores}_cores": round(1000 * cores / cpu_ms, 1)}
    return out


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    from benchmarks.machine import machine_info

    load_before = list(os.getloadavg())
    tmp = Path(tempfile.mkdtemp(prefix="equimind-api-load-"))
    home = args.home
    ingest = None
    if home is None:
        home = tmp / "home"
        log.info("indexing %s %s with the %s embedder into %s", args.tickers, args.forms, args.embedder, home)
        ingest = build_home(home, args.snapshot, args.embedder, args.tickers, args.forms)
    proc, base = start_server(home, args.snapshot, args.embedder, tmp / "server.log")
    try:
        health = httpx.get(base + "/api/v1/health", timeout=30).json()
        warmup = asyncio.run(_run(base, "search", args.warmup, args.concurrency, args.max_seconds))
        results = {kind: _measure(proc, base, kind, n, args)
                   for kind, n in (("search", args.requests), ("health", args.health_requests))}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        server_errors = [ln for ln in (tmp / "server.log").read_text(errors="replace").splitlines()
                         if "ERROR" in ln or "Traceback" in ln]
        shutil.rmtree(tmp, ignore_errors=True)
    search = results["search"]
    return {
        "benchmark": "api_load", "machine": machine_info(),
        "config": {"embedder": args.embedder, "concurrency": args.concurrency, "requests": args.requests,
                   "health_requests": args.health_requests, "warmup": args.warmup, "max_seconds": args.max_seconds,
                   "server": "uvicorn, 1 worker, 127.0.0.1, client on the same machine",
                   "search_body": {"top_k": 10, "mode": "server default", "queries": len(QUERIES)}},
        "store": health["store"], "embedder": health["embedder"], "reranker": health["reranker"],
        "degraded": health["degraded"], "ingest": ingest, "warmup": warmup, "results": results,
        "server_log_errors": server_errors[:20],
        "load_average": {"before": load_before, "after": list(os.getloadavg())},
        "target": {"search_rps": TARGET_SEARCH_RPS, "errors": 0,
                   "met": bool(search["requests_per_s"] and search["requests_per_s"] >= TARGET_SEARCH_RPS
                               and search["errors"] == 0 and results["health"]["errors"] == 0
                               and warmup["errors"] == 0)},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--embedder", choices=("real", "hash"), default="real")
    p.add_argument("--snapshot", type=Path, default=REPO.parent / "shared" / "corpus")
    p.add_argument("--home", type=Path, default=None, help="Reuse an indexed EQUIMIND_HOME (same embedder!).")
    p.add_argument("--tickers", nargs="+", default=["NVDA"])
    p.add_argument("--forms", nargs="+", default=["10-K"])
    p.add_argument("--requests", type=int, default=600, help="Search requests (bounded).")
    p.add_argument("--health-requests", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-seconds", type=float, default=60.0, help="Time bound per endpoint.")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.serve:
        serve(args.home, args.snapshot, args.embedder, args.port)
        return
    if not (args.snapshot / "sec").is_dir():
        raise SystemExit(f"no recorded corpus at {args.snapshot}; pass --snapshot ../shared/corpus")
    result = run_benchmark(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    s, h = result["results"]["search"], result["results"]["health"]
    log.info("search: %s req/s, p50 %s ms, p95 %s ms, %d errors; health: %s req/s, p95 %s ms, %d errors -> %s",
             s["requests_per_s"], s["latency_ms"]["p50"], s["latency_ms"]["p95"], s["errors"], h["requests_per_s"],
             h["latency_ms"]["p95"], h["errors"], args.out)


if __name__ == "__main__":
    main()
