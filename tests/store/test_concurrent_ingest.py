"""Searches while one ingest writes: no exceptions, and no half-visible documents (every hit's document is 'indexed'
with all of its chunks in the docstore and the vector store).

* Reader threads (one API worker's thread pool sharing a searcher, plus a second searcher with its own indexes) on
  both vector backends.
* A separate reader process (a second API worker) on the Chroma server. Embedded Chroma is single-process: a
  process that opened the directory cannot read vectors another process wrote afterwards (Chroma raises
  ``InternalError: ... Error finding id``) — ``test_embedded_chroma_is_single_process`` pins that down, and
  docs/scaling.md explains why several processes need the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from ingest_corpus import (
    EMBED_DIM,
    HitChecker,
    ReaderStats,
    chunker,
    expected_chunks,
    make_documents,
    open_searcher,
    pipeline,
    read_loop,
)
from store_backends import VectorBackend

from equimind.core.config import Settings
from equimind.core.documents import Document
from equimind.embedding.embed import HashEmbedder
from equimind.store.docstore import DocStore
from equimind.store.vectors import ChromaVectorStore

N_DOCS = 28
BATCH = 2  # documents per pipeline run: every run rebuilds BM25 and swaps it in while the readers search
READER = Path(__file__).with_name("concurrent_reader.py")


@dataclass
class Home:
    settings: Settings
    docstore: DocStore
    vectors: ChromaVectorStore
    collection: str
    docs: list[Document]
    expected: dict[str, set[str]]

    def ingest(self, docs: list[Document]) -> None:
        pipe = pipeline(self.docstore, self.vectors, self.settings.bm25_path)
        for i in range(0, len(docs), BATCH):
            report = pipe.run(docs[i : i + BATCH])
            assert not report.documents_failed, report.documents_failed


@pytest.fixture()
def home(vector_backend: VectorBackend) -> Iterator[Home]:
    settings = vector_backend.settings(retrieval_mode="hybrid")
    settings.ensure_home()
    docstore = DocStore(settings.docstore_path)
    collection = vector_backend.collection("concurrent")
    vectors = ChromaVectorStore.from_settings(settings, collection)
    docs = make_documents(N_DOCS, seed=5)
    h = Home(settings, docstore, vectors, collection, docs, expected_chunks(docs))
    h.ingest(docs[:4])  # something to find from the first query on
    yield h
    docstore.close()


def assert_clean(stats: ReaderStats, name: str) -> None:
    assert not stats.errors, f"{name} raised during the ingest: {stats.errors}"
    assert not stats.violations, f"{name} saw half-visible documents: {stats.violations}"
    assert stats.searches >= 3 and stats.hits > 0, f"{name} did not search ({stats.searches} searches)"


def assert_all_indexed(h: Home) -> None:
    assert h.docstore.counts()["indexed"] == N_DOCS
    assert h.vectors.count() == sum(len(v) for v in h.expected.values())


@pytest.mark.integration
def test_reader_threads_during_ingest(home: Home) -> None:
    shared = open_searcher(home.settings, home.docstore, home.vectors)  # one worker's searcher, two threads
    own = open_searcher(home.settings, home.docstore, home.vectors)  # a second searcher with its own indexes
    done = threading.Event()
    stats: dict[str, ReaderStats] = {}

    def reader(name: str, searcher: object, offset: int) -> None:
        checker = HitChecker(home.docstore, home.vectors, home.expected)
        stats[name] = read_loop(searcher, checker, done.is_set, offset=offset)  # type: ignore[arg-type]

    threads = [threading.Thread(target=reader, args=(f"thread-{i}", s, i), daemon=True)
               for i, s in enumerate((shared, shared, own))]
    for t in threads:
        t.start()
    try:
        home.ingest(home.docs[4:])
    finally:
        done.set()
        for t in threads:
            t.join(timeout=120)
    assert len(stats) == len(threads), "a reader thread did not finish"
    for name, s in stats.items():
        assert_clean(s, name)
    seen = set().union(*(s.documents_seen for s in stats.values()))
    assert seen - {d.id for d in home.docs[:4]}, "the readers never saw a document ingested while they ran"
    assert_all_indexed(home)
    final = shared.search("export controls risk for advanced chips", mode="bm25", top_k=50)
    assert {h.document.doc_id for h in final.hits} - {d.id for d in home.docs[:4]}


@pytest.mark.integration
@pytest.mark.parametrize("vector_backend", ["server"], indirect=True)
def test_reader_process_during_ingest(home: Home, tmp_path: Path) -> None:
    config = tmp_path / "reader.json"
    config.write_text(json.dumps({"home": str(home.settings.home), "chroma_url": home.settings.chroma_url,
                                  "collection": home.collection,
                                  "expected": {k: sorted(v) for k, v in home.expected.items()}}))
    stop = tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, str(READER), str(config), str(stop)], cwd=READER.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first == "ready", f"reader process failed to start: {first} {proc.stderr.read() if proc.stderr else ''}"
        home.ingest(home.docs[4:])
    finally:
        stop.touch()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"reader process exited {proc.returncode}: {err[-2000:]}"
    got = json.loads(out.strip().splitlines()[-1])
    stats = ReaderStats(searches=got["searches"], hits=got["hits"], documents_seen=set(got["documents_seen"]),
                        errors=got["errors"], violations=got["violations"])
    assert_clean(stats, "reader process")
    assert_all_indexed(home)


EMBEDDED_READER = """
import sys
from equimind.store.vectors import ChromaVectorStore
store = ChromaVectorStore.persistent(sys.argv[1], "single_process")
print("ready", store.count(), flush=True)
sys.stdin.readline()  # the parent writes more vectors, then wakes us
ids = sys.argv[2].split(",")
print("has_ids", len(store.has_ids(ids)), flush=True)
try:
    print("get_vectors", len(store.get_vectors(ids)), flush=True)
except Exception as exc:
    print("error", type(exc).__name__, exc, flush=True)
"""


@pytest.mark.integration
def test_embedded_chroma_is_single_process(tmp_path: Path) -> None:
    """Why multi-process deployments need the Chroma server (chromadb 1.5.9). If this starts failing because a
    newer Chroma reads other processes' writes, update docs/scaling.md ("embedded = one process")."""
    docs = make_documents(2, seed=9)
    pipe_chunks = [c for d in docs for c in chunker().chunk(d)[1]]
    store = ChromaVectorStore.persistent(tmp_path / "chroma", "single_process")
    embed = HashEmbedder(EMBED_DIM).embed
    first, later = pipe_chunks[: len(pipe_chunks) // 2], pipe_chunks[len(pipe_chunks) // 2 :]
    store.upsert(first, embed([c.text for c in first]))
    ids = ",".join(c.id for c in pipe_chunks)
    proc = subprocess.Popen([sys.executable, "-c", EMBEDDED_READER, str(tmp_path / "chroma"), ids],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    assert proc.stdout.readline().split() == ["ready", str(len(first))]
    store.upsert(later, embed([c.text for c in later]))
    out, err = proc.communicate("go\n", timeout=60)
    lines = out.strip().splitlines()
    assert lines[0] == f"has_ids {len(pipe_chunks)}", err  # the metadata (SQLite) is shared...
    assert lines[1].startswith("error InternalError"), lines  # ...the vectors written after it opened are not
