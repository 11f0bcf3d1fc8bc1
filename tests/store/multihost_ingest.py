"""A second host in its own process (tests/store/test_multihost.py): ingest generated filings into the PostgreSQL
docstore and Chroma server named by the environment, optionally embedding slowly so the test can kill it mid-way.

    python multihost_ingest.py ingest --seed N --n K

Environment: EQUIMIND_HOME, EQUIMIND_DOCSTORE_URL, EQUIMIND_CHROMA_URL, MULTIHOST_COLLECTION, and
MULTIHOST_SLOW_EMBED_S (seconds to sleep per embedding batch). Prints the ingest report as JSON on its last line.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from ingest_corpus import EMBED_DIM, chunker, make_documents

from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.ingest.pipeline import IngestPipeline
from equimind.store.open import open_docstore
from equimind.store.sparse import BM25Index
from equimind.store.vectors import ChromaVectorStore


class SlowEmbedder(HashEmbedder):
    def __init__(self, dim: int, pause_s: float) -> None:
        super().__init__(dim)
        self.pause_s = pause_s

    def embed(self, texts):  # type: ignore[no-untyped-def]
        time.sleep(self.pause_s)
        return super().embed(texts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["ingest"])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=1)
    args = ap.parse_args()
    settings = Settings()
    settings.ensure_home()
    docstore = open_docstore(settings)
    vectors = ChromaVectorStore.from_settings(settings, os.environ["MULTIHOST_COLLECTION"])
    pause = float(os.environ.get("MULTIHOST_SLOW_EMBED_S", "0"))
    pipe = IngestPipeline(docstore, vectors, BM25Index(settings.bm25_path), SlowEmbedder(EMBED_DIM, pause), chunker(),
                          batch_size=4)
    report = pipe.run(make_documents(args.n, seed=args.seed))
    print(json.dumps({"documents_added": report.documents_added, "documents_completed": report.documents_completed,
                      "failed": [str(f) for f in report.documents_failed]}))


if __name__ == "__main__":
    main()
