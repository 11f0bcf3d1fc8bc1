"""A reader *process* for test_concurrent_ingest.py: opens the same home (docstore, BM25 directory, and the
embedded Chroma directory or the Chroma server) and searches until a stop file appears, then prints its stats as
one JSON line.

    python tests/store/concurrent_reader.py CONFIG_JSON STOP_FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ingest_corpus import HitChecker, open_searcher, read_loop

from equimind.core.config import Settings
from equimind.store.docstore import DocStore
from equimind.store.vectors import ChromaVectorStore


def main(config_path: str, stop_file: str) -> None:
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    settings = Settings(home=Path(config["home"]), chroma_url=config["chroma_url"], retrieval_mode="hybrid")
    docstore = DocStore(settings.docstore_path)
    vectors = ChromaVectorStore.from_settings(settings, config["collection"])
    expected = {k: set(v) for k, v in config["expected"].items()}
    searcher = open_searcher(settings, docstore, vectors)
    stop = Path(stop_file)
    print("ready", flush=True)
    stats = read_loop(searcher, HitChecker(docstore, vectors, expected), stop.exists, offset=1)
    docstore.close()
    print(json.dumps(stats.as_dict()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
