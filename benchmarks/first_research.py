"""Issue 16's user-facing times and memory, in one run, against one reference measured in the same run.

    python -m benchmarks.first_research [--ticker NVDA] [--api-tickers NVDA,AAPL,TSLA,AMZN] [--skip-api] [--out PATH]

1. **Reference**: plain sentence-transformers (torch, batch 64) embedding 600 product embedding texts of the
   recorded NVDA 10-K (its ~455 children, cycled to 600), timed in a fresh subprocess after its model is loaded (what
   the issue's targets are ratios of).
2. **Cold**: ``equimind research NVDA "Should I invest in NVIDIA?" --snapshot … --as-of 2025-09-30 --json`` on an empty
   home (so the ONNX export, the fetch, parse, chunk and embed of the filings are all inside): the time until the
   result is on stdout (the answer; target ≤ 1.2 × reference), the process's wall time (which also embeds what
   first-answer indexing deferred, after printing), peak RSS (``wait4`` of that child), the run's own stage timings
   and what was ingested.
3. **Warm**: the same command again on that home (the CLI's cold start: imports, model and index load, then the
   run). Target ≤ 0.25 × reference. Peak RSS of one research ≤ 1.5 GiB.
4. **API** (``equimind serve`` in a subprocess, one worker): a first research on each of ``--api-tickers`` (cold per
   ticker), then warm research: 10 sequential requests (p50 ≤ 0.5 s), then 4 concurrent clients on different tickers,
   5 rounds (p95 ≤ 2 s); both rotate five phrasings of the question (``WARM_QUESTIONS``), so a request is rarely a
   repeat of an earlier one; the worker's resident and peak memory (``/proc/PID/status`` VmRSS / VmHWM) after serving.

The machine is shared: the load average before and after is recorded; ratios are the comparable figures.
Writes benchmarks/results/first_research.json (rewritten after each stage, so a cut run keeps what it measured).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info

log = logging.getLogger("first_research")
REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "first_research.json"
QUESTION = "Should I invest in {name}?"
# The warm API phases rotate these, so they measure a server answering new questions on stored tickers, not the
# same request again.
WARM_QUESTIONS = (QUESTION, "Is {name} a buy right now?", "What are the main risks and prospects for {name}?",
                  "Would you recommend {name} stock for a long-term portfolio?", "How attractive is {name} today?")
NAMES = {"NVDA": "NVIDIA", "AAPL": "Apple", "TSLA": "Tesla", "MSFT": "Microsoft", "AMZN": "Amazon",
         "GOOGL": "Alphabet", "META": "Meta", "JPM": "JPMorgan", "NFLX": "Netflix", "XOM": "Exxon"}
AS_OF = "2025-09-30"
REFERENCE_TEXTS = 600
TARGETS = {"cold_ratio": 1.2, "warm_ratio": 0.25, "peak_rss_gib": 1.5, "api_p50_s": 0.5, "api_p95_s": 2.0}

_REFERENCE = """
import json, sys, time
from equimind.core.config import Settings
from benchmarks.embed_backends import product_texts
from sentence_transformers import SentenceTransformer
from equimind.embedding.embed import default_model_path
texts = product_texts(Settings(home=sys.argv[1], snapshot=sys.argv[2]), int(sys.argv[3]))
texts = (texts * (int(sys.argv[3]) // len(texts) + 1))[: int(sys.argv[3])]  # the 10-K has ~455: cycle to 600
model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
model.encode(texts[:8], batch_size=64)
t0 = time.perf_counter()
model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
print(json.dumps({"texts": len(texts), "seconds": round(time.perf_counter() - t0, 2)}))
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EQUIMIND_") or k == "EQUIMIND_SHARED"}
    env["EQUIMIND_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return env


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float | None, int, str, str]:
    """(wall seconds, seconds until the first byte on stdout (the result: the CLI prints it before it embeds what
    first-answer indexing deferred), peak RSS bytes of the child, stdout, stderr)."""
    import threading

    chunks: list[bytes] = []
    first: list[float] = []
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err)

        def read() -> None:
            assert proc.stdout is not None
            while block := proc.stdout.read1(1 << 16):
                if not first:
                    first.append(time.perf_counter() - t0)
                chunks.append(block)

        reader = threading.Thread(target=read)
        reader.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        reader.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stdout, stderr = b"".join(chunks).decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} … exited {proc.returncode}:\n{stderr[-3000:]}")
    return wall, (first[0] if first else None), usage.ru_maxrss * 1024, stdout, stderr


def reference(home: Path, snapshot: Path) -> dict[str, Any]:
    _, _, _rss, out, _ = _timed([sys.executable, "-c", _REFERENCE, str(home), str(snapshot), str(REFERENCE_TEXTS)],
                            _env(home))
    res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    res["texts_per_s"] = round(res["texts"] / res["seconds"], 2)
    return res


def cli_research(home: Path, snapshot: Path, ticker: str) -> dict[str, Any]:
    exe = shutil.which("equimind") or str(Path(sys.executable).parent / "equimind")
    cmd = [exe, "research", ticker, QUESTION.format(name=NAMES.get(ticker, ticker)), "--snapshot", str(snapshot),
           "--as-of", AS_OF, "--json"]
    wall, answer, rss, out, err = _timed(cmd, _env(home))
    body = json.loads(out)
    fetched = [f for it in body["agentic_rag"]["log"] for f in it.get("fetched", [])]
    return {"answer_s": round(answer or wall, 2), "wall_s": round(wall, 2), "peak_rss_mib": round(rss / 2**20, 1),
            "after_answer": [ln for ln in err.splitlines() if "deferred" in ln or "done:" in ln],
            "rating": body["rating"],
            "conviction": body["conviction"], "timings_ms": body["timings_ms"],
            "fetched": [{"kind": f["kind"], "outcome": f["outcome"]} for f in fetched],
            "degraded": [d["capability"] for d in body["degraded"]]}


# --- API ------------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _proc_memory(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)  # kB -> MiB
    return out


async def _research(client: Any, base: str, ticker: str, question: str = QUESTION) -> float:
    t0 = time.perf_counter()
    r = await client.post(f"{base}/api/v1/research", json={
        "ticker": ticker, "question": question.format(name=NAMES.get(ticker, ticker)), "as_of": AS_OF})
    if r.status_code != 200:
        raise SystemExit(f"research {ticker}: HTTP {r.status_code} {r.text[:500]}")
    return time.perf_counter() - t0


async def _api_phases(base: str, tickers: list[str]) -> dict[str, Any]:
    import httpx

    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=900) as client:
        out["first_research_s"] = {t: round(await _research(client, base, t), 2) for t in tickers}
        t0 = time.perf_counter()  # the server embeds what first-answer indexing deferred in the background
        while (await client.get(f"{base}/api/v1/health")).json()["store"].get("deferred", 0):
            await asyncio.sleep(0.5)
        out["background_indexing_s"] = round(time.perf_counter() - t0, 2)
        seq = [await _research(client, base, tickers[i % len(tickers)], WARM_QUESTIONS[i % len(WARM_QUESTIONS)])
               for i in range(10)]
        out["warm_sequential"] = {"n": len(seq), "p50_s": round(statistics.median(seq), 3),
                                  "max_s": round(max(seq), 3)}
        conc: list[float] = []
        for round_ in range(5):
            phrasing = [WARM_QUESTIONS[(round_ + i) % len(WARM_QUESTIONS)] for i in range(4)]
            conc += await asyncio.gather(*(_research(client, base, t, q)
                                           for t, q in zip(tickers[:4], phrasing, strict=False)))
        conc.sort()
        out["warm_concurrent"] = {"clients": min(4, len(tickers)), "n": len(conc),
                                  "p50_s": round(statistics.median(conc), 3),
                                  "p95_s": round(conc[max(0, round(0.95 * len(conc)) - 1)], 3),
                                  "max_s": round(conc[-1], 3)}
    return out


def api(home: Path, snapshot: Path, tickers: list[str], log_path: Path) -> dict[str, Any]:
    import httpx

    port = _free_port()
    exe = shutil.which("equimind") or str(Path(sys.executable).parent / "equimind")
    with log_path.open("wb") as server_log:
        proc = subprocess.Popen([exe, "serve", "--port", str(port), "--snapshot", str(snapshot)], cwd=REPO,
                                env=_env(home), stdout=server_log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"server exited {proc.returncode}: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=30).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.25)
            if time.perf_counter() - t0 > 300:
                raise SystemExit("server not ready in 300 s")
        result: dict[str, Any] = {"ready_s": round(time.perf_counter() - t0, 2), "memory_mib_at_ready":
                                  _proc_memory(proc.pid)}
        result.update(asyncio.run(_api_phases(base, tickers)))
        result["memory_mib_after"] = _proc_memory(proc.pid)
        return result
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ticker", default="NVDA")
    ap.add_argument("--api-tickers", default="NVDA,AAPL,TSLA,AMZN")
    ap.add_argument("--skip-api", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    shared = Path(os.environ.get("EQUIMIND_SHARED", REPO.parent / "shared"))
    snapshot = shared / "corpus"
    result: dict[str, Any] = {"benchmark": "first_research", "machine": machine_info(), "targets": TARGETS,
                              "config": {"ticker": args.ticker, "as_of": AS_OF, "reference_texts": REFERENCE_TEXTS,
                                         "embed_backend": "default (Settings.embed_backend)"},
                              "load_average_before": os.getloadavg()}

    def save() -> None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")

    with tempfile.TemporaryDirectory(prefix="first-research-") as tmp:
        root = Path(tmp)
        result["reference"] = ref = reference(root / "ref-home", snapshot)
        log.info("reference: %s", ref)
        save()
        home = root / "home"
        result["cold"] = cold = cli_research(home, snapshot, args.ticker)
        cold["ratio_to_reference"] = round(cold["answer_s"] / ref["seconds"], 3)
        cold["wall_ratio_to_reference"] = round(cold["wall_s"] / ref["seconds"], 3)
        log.info("cold: %s", cold)
        save()
        result["warm"] = warm = cli_research(home, snapshot, args.ticker)
        warm["ratio_to_reference"] = round(warm["wall_s"] / ref["seconds"], 3)
        warm["same_result_as_cold"] = (warm["rating"], warm["conviction"]) == (cold["rating"], cold["conviction"])
        log.info("warm: %s", warm)
        save()
        if not args.skip_api:
            tickers = [t.strip().upper() for t in args.api_tickers.split(",") if t.strip()]
            result["api"] = api(root / "api-home", snapshot, tickers, root / "server.log")
            log.info("api: %s", result["api"])
    result["load_average_after"] = os.getloadavg()
    result["verdict"] = verdict(result)
    save()
    print(json.dumps(result["verdict"], indent=1))


def verdict(r: dict[str, Any]) -> dict[str, Any]:
    v: dict[str, Any] = {
        "cold_ratio": {"value": r["cold"]["ratio_to_reference"], "target": TARGETS["cold_ratio"]},
        "warm_ratio": {"value": r["warm"]["ratio_to_reference"], "target": TARGETS["warm_ratio"]},
        "peak_rss_gib_one_research": {"value": round(max(r["cold"]["peak_rss_mib"], r["warm"]["peak_rss_mib"]) / 1024,
                                                     3), "target": TARGETS["peak_rss_gib"]}}
    if "api" in r:
        v["api_warm_p50_s"] = {"value": r["api"]["warm_sequential"]["p50_s"], "target": TARGETS["api_p50_s"]}
        v["api_concurrent_p95_s"] = {"value": r["api"]["warm_concurrent"]["p95_s"], "target": TARGETS["api_p95_s"]}
    for item in v.values():
        item["met"] = item["value"] <= item["target"]
    return v


if __name__ == "__main__":
    main()
