"""Ingest throughput: the whole pipeline (parse → chunk → embed → docstore + Chroma + BM25) vs the embedder alone on
the same chunk texts, measured in the same run. Target: pipeline >= 0.85 x embedder-only (chunks/s).

Run: python -m benchmarks.ingest_bench [--tickers NVDA,AAPL]  → benchmarks/results/ingest.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"


def _shared() -> Path:
    return Path(os.environ.get("EQUIMIND_SHARED", str(Path(__file__).resolve().parents[2] / "shared")))


def run(tickers: tuple[str, ...], forms: tuple[str, ...]) -> dict[str, Any]:
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.ingest.chunk import ParentChildChunker
    from equimind.ingest.documents import to_document
    from equimind.sources.snapshot import SnapshotFilingsSource

    corpus = _shared() / "corpus"
    home = Path(tempfile.mkdtemp(prefix="equimind-ingest-bench-"))
    try:
        settings = Settings(home=home, snapshot=corpus)
        services = open_services(settings)
        embedder = services.embedder  # loaded once, outside both timings
        source = SnapshotFilingsSource(corpus)
        entries = source.list_entries(tickers=tickers, forms=forms)

        # embedder alone on exactly the texts the pipeline embeds, measured before AND after the pipeline (mean),
        # so drifting load on a shared machine affects both sides alike
        chunker = ParentChildChunker(services.tokenizer, child_tokens=settings.child_tokens,
                                     parent_tokens=settings.parent_tokens)
        texts = [c.text for e in entries for c in chunker.chunk(to_document(source.load(e)))[1]]

        def embed_alone() -> float:
            t = time.perf_counter()
            for i in range(0, len(texts), settings.embed_batch_size):
                embedder.embed(texts[i:i + settings.embed_batch_size])
            return time.perf_counter() - t

        before = embed_alone()
        t0 = time.perf_counter()
        report = services.pipeline().run(to_document(source.load(e)) for e in entries)
        # the search indexes (BM25 + dense matrix) are rebuilt lazily on the first search: count that too
        services.searcher().search("revenue", None, mode="hybrid")
        pipeline_s = time.perf_counter() - t0

        after = embed_alone()
        embed_s = (before + after) / 2

        n = report.chunks_added
        return {
            "documents": len(entries), "chunks": n, "texts_embedded_alone": len(texts),
            "pipeline_s": round(pipeline_s, 2), "embedder_only_s": round(embed_s, 2),
            "embedder_only_runs_s": [round(before, 2), round(after, 2)],
            "pipeline_chunks_per_s": round(n / pipeline_s, 2), "embedder_chunks_per_s": round(len(texts) / embed_s, 2),
            "ratio_pipeline_vs_embedder": round((n / pipeline_s) / (len(texts) / embed_s), 3),
            "target_ratio": 0.85, "pipeline_stage_s": report.timings_s,
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tickers", default="NVDA,AAPL")
    ap.add_argument("--forms", default="10-K,10-Q")
    args = ap.parse_args(argv)
    result = {"benchmark": "ingest", "machine": machine_info(),
              "config": {"tickers": args.tickers, "forms": args.forms,
                         "note": "pipeline time includes HTML parsing, chunking, embedding, SQLite, Chroma upsert "
                                 "and the BM25/dense-matrix rebuild"},
              "result": run(tuple(args.tickers.split(",")), tuple(args.forms.split(",")))}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ingest.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps(result["result"], indent=2, default=str))
    return result


if __name__ == "__main__":
    main()
