"""Does prefixing each child with "document title | section" before embedding help dense retrieval?

    python -m benchmarks.embed_prefix [--docs N] [--shared ../shared]

FinanceBench dev PDFs (a subset, several years of the same companies so the title must discriminate), chunked with
the default 200/800 chunker, embedded twice with all-MiniLM-L6-v2: the bare child text, and ``embedding_text``
(title + section header). Dense exact cosine over the subset as one shared store (no filter); page-level recall@k
(a question hits when a top-k child's page range overlaps one of its evidence pages). Writes
benchmarks/results/embed_prefix.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_info
from equimind.core.documents import Chunk, Document
from equimind.ingest.chunk import ParentChildChunker, embedding_text
from equimind.ingest.tokens import HFTokenizer

log = logging.getLogger("embed_prefix")
RESULTS = Path(__file__).resolve().parent / "results" / "embed_prefix.json"
REPO = Path(__file__).resolve().parent.parent
DOCS = ("BOEING_2022_10K", "BOEING_2018_10K", "BESTBUY_2023_10K", "BESTBUY_2024Q2_10Q", "BESTBUY_2019_10K",
        "AMAZON_2017_10K", "AMAZON_2019_10K", "NETFLIX_2017_10K", "COSTCO_2021_10K",
        "FOOTLOCKER_2022_8K_dated-2022-05-20", "FOOTLOCKER_2022_8K_dated_2022-08-19")


def recall_at(ranked: list[list[Chunk]], questions: list[dict[str, Any]], k: int) -> float:
    hits = 0
    for chunks, q in zip(ranked, questions, strict=True):
        pages = {(e["doc_name"], e["evidence_page_num"]) for e in q["evidence"]}
        for c in chunks[:k]:
            if c.page_start is not None and c.page_end is not None and any(
                    (c.doc_id, p) in pages for p in range(c.page_start, c.page_end + 1)):
                hits += 1
                break
    return round(hits / len(questions), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--docs", type=int, default=len(DOCS))
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from equimind.embedding.embed import SentenceTransformerEmbedder
    from equimind.ingest.documents import to_document
    from equimind.sources.local import LocalFileSource

    fb = args.shared / "benchmarks" / "financebench"
    meta = {r["doc_name"]: {k: str(v) for k, v in r.items()}
            for r in map(json.loads, (fb / "documents.jsonl").read_text().splitlines()) if r}
    names = DOCS[:args.docs]
    source = LocalFileSource([fb / "pdfs" / f"{n}.pdf" for n in names], metadata=meta)
    chunker = ParentChildChunker(HFTokenizer.from_model_dir())
    docs: dict[str, Document] = {}
    children: list[Chunk] = []
    for path in source.files():
        doc = to_document(source.load(path))
        docs[path.stem] = doc
        # key chunks by doc_name so evidence pages can be matched
        children.extend(replace(c, doc_id=path.stem) for c in chunker.chunk(doc)[1])
    questions = [q for q in map(json.loads, (fb / "questions.jsonl").read_text().splitlines())
                 if q and q["doc_name"] in names]
    embedder = SentenceTransformerEmbedder()
    qv = embedder.embed([q["question"] for q in questions])
    out: dict[str, Any] = {"documents": list(names), "children": len(children), "questions": len(questions)}
    for variant in ("bare", "title+section"):
        texts = [c.text if variant == "bare" else embedding_text(c, docs[c.doc_id].title) for c in children]
        t0 = time.perf_counter()
        cv = embedder.embed(texts)
        log.info("%s: embedded %d children in %.0fs", variant, len(texts), time.perf_counter() - t0)
        order = np.argsort(-(qv @ cv.T), axis=1)[:, :10]
        ranked = [[children[j] for j in row] for row in order]
        out[variant] = {f"recall@{k}": recall_at(ranked, questions, k) for k in (1, 5, 10)}
        out[variant]["embed_s"] = round(time.perf_counter() - t0, 1)
        out[variant]["right_doc@10"] = round(sum(any(c.doc_id == q["doc_name"] for c in r)
                                                 for r, q in zip(ranked, questions, strict=True)) / len(questions), 3)
    result = {"machine": machine_info(), "result": out}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
