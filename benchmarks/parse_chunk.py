"""Parse + chunk time and chunk counts for the recorded corpus filings and the FinanceBench PDFs.

    python -m benchmarks.parse_chunk [--no-pdfs] [--shared ../shared]

Writes benchmarks/results/parse_chunk.json (with machine info) and prints it. Chunking uses the embedder's real
tokenizer (all-MiniLM-L6-v2 tokenizer.json) with the default 200/800-token children/parents.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info
from equimind.core.documents import Document
from equimind.ingest.chunk import ParentChildChunker
from equimind.ingest.tokens import HFTokenizer

log = logging.getLogger("parse_chunk")
RESULTS = Path(__file__).resolve().parent / "results" / "parse_chunk.json"
REPO = Path(__file__).resolve().parent.parent


def measure(doc: Document, parse_s: float, chunker: ParentChildChunker, tok: HFTokenizer) -> dict[str, Any]:
    t0 = time.perf_counter()
    parents, children = chunker.chunk(doc)
    chunk_s = time.perf_counter() - t0
    sizes = [tok.count(c.text) for c in children]
    return {
        "title": doc.title, "form": doc.form, "chars": len(doc.text), "pages": len(doc.pages),
        "sections": len(doc.sections), "section_names": [s.name for s in doc.sections],
        "parse_s": round(parse_s, 3), "chunk_s": round(chunk_s, 3),
        "parents": len(parents), "children": len(children),
        "child_tokens": {"mean": round(statistics.mean(sizes), 1), "max": max(sizes), "min": min(sizes),
                         "over_budget": sum(s > chunker.child_tokens for s in sizes)} if sizes else {},
    }


def run_filings(corpus: Path, chunker: ParentChildChunker, tok: HFTokenizer) -> list[dict[str, Any]]:
    from equimind.ingest.documents import to_document
    from equimind.sources.snapshot import SnapshotFilingsSource

    source = SnapshotFilingsSource(corpus)
    out = []
    for entry in source.list_entries(forms=("10-K", "10-Q", "8-K")):
        t0 = time.perf_counter()
        doc = to_document(source.load(entry))
        row = measure(doc, time.perf_counter() - t0, chunker, tok)
        row["file"] = entry.path.name
        row["bytes"] = entry.path.stat().st_size
        out.append(row)
        log.info("%s: parse %.2fs chunk %.2fs -> %d children", entry.path.name, row["parse_s"], row["chunk_s"],
                 row["children"])
    return out


def run_pdfs(financebench: Path, chunker: ParentChildChunker, tok: HFTokenizer) -> list[dict[str, Any]]:
    from equimind.ingest.documents import to_document
    from equimind.sources.local import LocalFileSource

    rows = [json.loads(line) for line in (financebench / "documents.jsonl").read_text().splitlines() if line.strip()]
    mapping = {r["doc_name"]: {k: str(v) for k, v in r.items()} for r in rows}
    source = LocalFileSource(financebench / "pdfs", metadata=mapping)
    out = []
    for path in source.files():
        t0 = time.perf_counter()
        doc = to_document(source.load(path))
        row = measure(doc, time.perf_counter() - t0, chunker, tok)
        row["file"] = path.name
        row["bytes"] = path.stat().st_size
        out.append(row)
        log.info("%s: parse %.2fs chunk %.2fs -> %d children", path.name, row["parse_s"], row["chunk_s"],
                 row["children"])
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {}
    return {
        "documents": len(rows),
        "parse_s": {"total": round(sum(r["parse_s"] for r in rows), 2), "max": max(r["parse_s"] for r in rows)},
        "chunk_s": {"total": round(sum(r["chunk_s"] for r in rows), 2), "max": max(r["chunk_s"] for r in rows)},
        "children": sum(r["children"] for r in rows), "parents": sum(r["parents"] for r in rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--no-pdfs", action="store_true", help="skip the FinanceBench PDFs (pypdf takes minutes)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    tok = HFTokenizer.from_model_dir()
    chunker = ParentChildChunker(tok, child_tokens=200, parent_tokens=800)
    filings = run_filings(args.shared / "corpus", chunker, tok)
    pdfs = [] if args.no_pdfs else run_pdfs(args.shared / "benchmarks" / "financebench", chunker, tok)
    result = {
        "machine": machine_info(("edgartools", "pypdf", "tokenizers", "lxml", "equimind")),
        "settings": {"child_tokens": 200, "parent_tokens": 800, "tokenizer": tok.name},
        "filings": {"summary": summary(filings), "documents": filings},
        "pdfs": {"summary": summary(pdfs), "documents": pdfs},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    print(json.dumps({"filings": result["filings"]["summary"], "pdfs": result["pdfs"]["summary"]}, indent=1))


if __name__ == "__main__":
    main()
