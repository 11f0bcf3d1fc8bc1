"""The embedder backends side by side, in one run: torch fp32 (sentence-transformers), ONNX Runtime fp32 and ONNX
Runtime int8 (dynamic, per-channel) of the same all-MiniLM-L6-v2 weights.

    python -m benchmarks.embed_backends [--texts 600] [--rounds 2] [--no-golden] [--out PATH]

- **Throughput**: texts/s on the product's embedding texts (``title-section-v1``: header + a ~200-token child) of the
  recorded NVDA 10-K, in batches of ``embed_batch_size`` (what ``IngestPipeline`` hands the embedder). Rounds
  alternate the backend order (ABC, CBA, ...) so drifting load on the shared machine falls on every backend alike.
- **Agreement with torch fp32**: per-text cosine (min / mean / max), and the overlap of each passage's top-10
  neighbours among the same passages (itself excluded).
- **Retrieval effect**: paired recall@10 on the golden set (``evaluation/golden.py``, variant ``context`` = the
  product format, setting ``shared``), dense and hybrid arms, each backend's own store; the difference to torch with
  a paired-bootstrap 95 % CI, and the decision rule's "one question's worth" (1 / questions).
- **First use**: the time to build each ONNX export in an empty home (``retrieval/onnx_export.py``).

FinanceBench dev is not run here: its store build is 20-40 min per backend on this 2-core machine.
Writes benchmarks/results/embed_backends.json (rewritten after every stage, so a cut run keeps what it measured).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from equimind.app.services import build_embedder, open_services
from equimind.core.config import EmbedBackend, Settings
from equimind.core.protocols import Embedder
from equimind.evaluation.metrics import paired_bootstrap_ci
from equimind.ingest.chunk import ParentChildChunker, embedding_text
from equimind.ingest.documents import to_document
from equimind.sources.snapshot import SnapshotFilingsSource

log = logging.getLogger("embed_backends")
RESULTS = Path(__file__).resolve().parent / "results" / "embed_backends.json"
BACKENDS = tuple(EmbedBackend)
GOLDEN_SETTING = "context/shared"


def product_texts(settings: Settings, n: int) -> list[str]:
    """The first ``n`` embedding texts of the recorded NVDA 10-K, chunked and formatted as the pipeline does."""
    services = open_services(settings)
    source = SnapshotFilingsSource(settings.corpus_dir)
    entry = source.list_entries(tickers=("NVDA",), forms=("10-K",))[0]
    doc = to_document(source.load(entry))
    chunker = ParentChildChunker(services.tokenizer, child_tokens=settings.child_tokens,
                                 parent_tokens=settings.parent_tokens)
    texts = [embedding_text(c, doc.title) for c in chunker.chunk(doc)[1]]
    return texts[:n]


def embed_batched(embedder: Embedder, texts: list[str], batch: int) -> np.ndarray[Any, Any]:
    return np.concatenate([embedder.embed(texts[i : i + batch]) for i in range(0, len(texts), batch)])


def throughput(embedders: dict[EmbedBackend, Embedder], texts: list[str], batch: int, rounds: int,
               vectors: dict[EmbedBackend, np.ndarray[Any, Any]]) -> dict[str, Any]:
    """texts/s per backend; ``vectors`` receives each backend's vectors (for the agreement figures)."""
    seconds: dict[EmbedBackend, list[float]] = {b: [] for b in embedders}
    for r in range(rounds):
        order = list(embedders) if r % 2 == 0 else list(reversed(embedders))
        for b in order:
            t0 = time.perf_counter()
            vectors[b] = embed_batched(embedders[b], texts, batch)
            seconds[b].append(time.perf_counter() - t0)
            log.info("round %d %s: %.1f s", r, b.value, seconds[b][-1])
    torch_rate = len(texts) / float(np.mean(seconds[EmbedBackend.TORCH]))
    out: dict[str, Any] = {}
    for b, s in seconds.items():
        rate = len(texts) / float(np.mean(s))
        out[b.value] = {"runs_s": [round(x, 2) for x in s], "texts_per_s": round(rate, 2),
                        "speedup_vs_torch": round(rate / torch_rate, 3)}
    return out


def agreement(vectors: dict[EmbedBackend, np.ndarray[Any, Any]], k: int = 10) -> dict[str, Any]:
    ref = vectors[EmbedBackend.TORCH]

    def neighbours(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        sims = v @ v.T
        np.fill_diagonal(sims, -np.inf)
        return np.argsort(-sims, axis=1, kind="stable")[:, :k]

    ref_nn = neighbours(ref)
    out: dict[str, Any] = {}
    for b, v in vectors.items():
        cos = np.sum(v * ref, axis=1)
        nn = neighbours(v)
        overlap = np.mean([len(set(x) & set(y)) / k for x, y in zip(nn, ref_nn, strict=True)])
        out[b.value] = {"cosine_to_torch": {"min": round(float(cos.min()), 5), "mean": round(float(cos.mean()), 5),
                                            "max": round(float(cos.max()), 5)},
                        f"top{k}_neighbour_overlap": round(float(overlap), 4)}
    return out


def golden(embedders: dict[EmbedBackend, Embedder], settings: Settings, root: Path,
           tickers: tuple[str, ...] | None, save: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Each backend's golden run; ``save`` gets the figures after every backend (a cut run keeps what finished)."""
    from equimind.evaluation.golden import run_golden

    per_query: dict[EmbedBackend, list[dict[str, Any]]] = {}
    out: dict[str, Any] = {"setting": GOLDEN_SETTING, "tickers": list(tickers or []) or "all", "arms": {},
                           "store": "built (parse, chunk, embed) with torch; "
                           "each other backend re-embeds a copy of it (the harness reindexes a store stamped with "
                           "another embedder), so all three hold the same chunks", "seconds": {}, "ingest": {}}
    order = [EmbedBackend.TORCH, EmbedBackend.ONNX_INT8, EmbedBackend.ONNX]  # the decision's pair first
    for b in order:
        t0 = time.perf_counter()
        if b is not EmbedBackend.TORCH:
            shutil.copytree(root / f"golden-{EmbedBackend.TORCH.value}", root / f"golden-{b.value}")
        res = run_golden(settings, settings.corpus_dir, root / f"golden-{b.value}", variants=("context",),
                         arms=("dense", "hybrid"), settings_names=("shared",), tickers=tickers,
                         embedder=embedders[b])
        per_query[b] = res["metrics"][GOLDEN_SETTING]["per_query_recall@10"]
        ingest = res["config"]["ingest"]["context"]
        out["seconds"][b.value] = round(time.perf_counter() - t0, 1)
        out["ingest"][b.value] = {k: ingest.get(k) for k in ("cached", "stamp", "reindex_seconds", "chunks_added",
                                                               "seconds") if k in ingest}
        log.info("golden %s done in %.0f s", b.value, time.perf_counter() - t0)
        out.update(paired(per_query))
        save(out)
    return out


def paired(per_query: dict[EmbedBackend, list[dict[str, Any]]]) -> dict[str, Any]:
    """recall@10 per backend and arm, and each backend minus torch over the same questions (paired bootstrap)."""
    torch_rows = per_query[EmbedBackend.TORCH]
    n = len(torch_rows)
    out: dict[str, Any] = {"questions": n, "one_question": round(1.0 / n, 4), "arms": {}}
    for arm in ("dense", "hybrid"):
        ref = [row[arm] for row in torch_rows]
        arm_out: dict[str, Any] = {}
        for b, rows in per_query.items():
            assert [r["id"] for r in rows] == [r["id"] for r in torch_rows]
            mine = [row[arm] for row in rows]
            ci = paired_bootstrap_ci(mine, ref, seed=0)
            arm_out[b.value] = {"recall@10": round(float(np.mean(mine)), 4),
                                "minus_torch": {"diff": round(ci.estimate, 4), "ci_low": round(ci.low, 4),
                                                "ci_high": round(ci.high, 4)},
                                "questions_changed": int(sum(1 for x, y in zip(mine, ref, strict=True) if x != y)),
                                "within_one_question": abs(ci.estimate) <= 1.0 / n + 1e-12}
        out["arms"][arm] = arm_out
    return out


def _write(path: Path, out: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--texts", type=int, default=400)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--no-golden", action="store_true", help="skip the golden-set store builds (~3 x 5-10 min)")
    p.add_argument("--golden-tickers", help="only these companies' golden questions and filings (e.g. NVDA,AAPL)")
    p.add_argument("--skip-speed", action="store_true",
                   help="keep the throughput / agreement figures already in --out; run only the golden part")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger().handlers[0].addFilter(lambda r: r.name != "root")  # onnxruntime.quantization's chatter
    root = Path(tempfile.mkdtemp(prefix="embed-backends-"))
    t_start = time.perf_counter()
    try:
        base = Settings(home=root / "home")
        texts = product_texts(base, args.texts)
        out: dict[str, Any] = {"benchmark": "embed_backends", "machine": machine_info(), "config": {
            "texts": len(texts), "source": "recorded NVDA 10-K, title-section-v1 embedding texts of the product "
            "chunker (child ~200 tokens)", "batch_size": base.embed_batch_size, "rounds": args.rounds,
            "int8": "onnxruntime.quantization.quantize_dynamic, QInt8, per-channel weights"}}
        embedders: dict[EmbedBackend, Embedder] = {}
        out["first_use_s"] = {}
        for b in BACKENDS:
            t0 = time.perf_counter()
            embedders[b] = build_embedder(base.model_copy(update={"embed_backend": b}))
            out["first_use_s"][b.value] = round(time.perf_counter() - t0, 2)  # onnx: export built in an empty home
        out["names"] = {b.value: e.name for b, e in embedders.items()}
        for e in embedders.values():
            e.embed(texts[:8])  # warm-up
        if args.skip_speed:
            old = json.loads(args.out.read_text())
            out.update({k: old[k] for k in ("throughput", "agreement", "speed_measured_at") if k in old})
        else:
            vectors: dict[EmbedBackend, np.ndarray[Any, Any]] = {}
            out["throughput"] = throughput(embedders, texts, base.embed_batch_size, args.rounds, vectors)
            out["agreement"] = agreement(vectors)
            out["speed_measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _write(args.out, out)
        if not args.no_golden:
            tickers = tuple(args.golden_tickers.split(",")) if args.golden_tickers else None
            out["golden"] = golden(embedders, base, root, tickers,
                                   lambda part: _write(args.out, {**out, "golden": part}))
        out["financebench"] = {"skipped": "its store build is 20-40 min per backend on this 2-core machine"}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out["total_runtime_s"] = round(time.perf_counter() - t_start, 1)
    _write(args.out, out)
    log.info("wrote %s in %.0f s", args.out, out["total_runtime_s"])


if __name__ == "__main__":
    main()
