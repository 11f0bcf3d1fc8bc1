"""Several hosts over one PostgreSQL docstore and one Chroma server (issue: a research desk, not a laptop).

Each "host" has its own EQUIMIND_HOME (its own BM25 and matrix files) and shares only PostgreSQL and the Chroma
server. Tested for real on loopback:

* a filing ingested on host A becomes searchable on host B through the change feed (NOTIFY, poll as fallback), and
  the same search returns the same top 10 on both, with the feed position it was served from;
* a host killed with ``kill -9`` in the middle of a document: no other host serves any of it, and a re-run completes
  it;
* two hosts ingesting the same filing at once: one copy, identical ids;
* a lagging host answers from the indexes it has and says how far behind it is;
* the migrations go up and down.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from ingest_corpus import HitChecker, expected_chunks, make_documents, open_searcher, pipeline

from equimind.core.config import Settings
from equimind.core.documents import Document
from equimind.retrieval.search import HybridSearcher
from equimind.store.docstore_pg import PgDocStore
from equimind.store.feed import FeedFollower
from equimind.store.vectors import ChromaVectorStore

HOST_SCRIPT = Path(__file__).with_name("multihost_ingest.py")
pytestmark = pytest.mark.integration


@dataclass
class Host:
    settings: Settings
    docstore: PgDocStore
    vectors: ChromaVectorStore
    searcher: HybridSearcher
    follower: FeedFollower | None = None

    def ingest(self, docs: list[Document]) -> None:
        report = pipeline(self.docstore, self.vectors, self.settings.bm25_path).run(docs)
        assert not report.documents_failed, report.documents_failed

    def top10(self, query: str) -> list[str]:
        return [h.chunk_id for h in self.searcher.search(query, mode="hybrid", top_k=10).hits]


@dataclass
class Desk:
    pg_url: str
    chroma_url: str
    collection: str
    root: Path

    def settings(self, name: str) -> Settings:
        return Settings(home=self.root / name, shared=self.root / "no-shared", chroma_url=self.chroma_url,
                        docstore_url=self.pg_url, retrieval_mode="hybrid", feed_poll_s=0.5)

    def host(self, name: str, follow: bool = True) -> Host:
        settings = self.settings(name)
        settings.ensure_home()
        docstore = PgDocStore(self.pg_url)
        vectors = ChromaVectorStore.from_settings(settings, self.collection)
        searcher = open_searcher(settings, docstore, vectors)
        follower = FeedFollower(docstore, searcher.indexes, poll_s=0.5).start() if follow else None
        return Host(settings, docstore, vectors, searcher, follower)


@pytest.fixture()
def desk(pg_url: str, chroma_server_url: str, tmp_path: Path) -> Iterator[Desk]:
    d = Desk(pg_url, chroma_server_url, f"desk-{uuid.uuid4().hex[:10]}", tmp_path)
    yield d
    import chromadb

    client = chromadb.HttpClient(host=chroma_server_url.split("//")[1].split(":")[0],
                                 port=int(chroma_server_url.rsplit(":", 1)[1]))
    with contextlib.suppress(Exception):  # never created
        client.delete_collection(d.collection)


def stop(*hosts: Host) -> None:
    for h in hosts:
        if h.follower is not None:
            h.follower.stop()


def test_a_filing_ingested_on_a_is_searchable_on_b_with_the_same_top10(desk: Desk) -> None:
    a, b = desk.host("a"), desk.host("b")
    try:
        docs = make_documents(6, seed=11)
        lags = []
        for doc in docs:
            t0 = time.monotonic()
            a.ingest([doc])
            position = a.docstore.feed_position()
            assert b.follower is not None and b.follower.wait_until(position, timeout_s=10), \
                f"host B did not reach feed position {position} within 10 s ({b.follower.stats if b.follower else ''})"
            lags.append(time.monotonic() - t0)
        assert b.follower.stats.wakeups_notify >= 1  # woken by NOTIFY, not only by the poll
        for query in ("export controls risk for advanced chips", "free cash flow and share repurchases"):
            ra = a.searcher.search(query, mode="hybrid", top_k=10)
            rb = b.searcher.search(query, mode="hybrid", top_k=10)
            assert [h.chunk_id for h in ra.hits] == [h.chunk_id for h in rb.hits] and len(rb.hits) == 10
            assert rb.feed is not None and rb.feed.behind == 0 and rb.feed.served == b.docstore.feed_position()
            assert {h.document.doc_id for h in rb.hits} <= {d.id for d in docs}
        assert a.settings.bm25_path != b.settings.bm25_path and (b.settings.bm25_path / "CURRENT").exists()
    finally:
        stop(a, b)


def test_a_lagging_host_serves_what_it_has_and_says_how_far_behind(desk: Desk) -> None:
    a, b = desk.host("a"), desk.host("b", follow=False)
    try:
        a.ingest(make_documents(2, seed=12))
        before = b.top10("cloud subscription revenue growth")
        b.searcher.indexes.serve_while_rebuilding = True
        with b.searcher.indexes._lock:  # a rebuild in progress on host B (what its follower holds while it works)
            a.ingest(make_documents(4, seed=13)[2:])
            lagging = b.searcher.search("cloud subscription revenue growth", mode="hybrid", top_k=10)
        assert [h.chunk_id for h in lagging.hits] == before  # the indexes it had, not half of the new ones
        assert lagging.feed is not None and lagging.feed.behind >= 1
        assert any("behind the shared docstore" in str(d) for d in lagging.degraded), lagging.degraded
        caught_up = b.searcher.search("cloud subscription revenue growth", mode="hybrid", top_k=10)
        assert caught_up.feed is not None and caught_up.feed.behind == 0 and not caught_up.degraded
    finally:
        stop(a, b)


def test_a_host_never_serves_stale_indexes_over_its_own_writes(desk: Desk) -> None:
    """Read-your-writes: a research run that fetched and indexed a filing searches it next, even while its
    follower is rebuilding; only other hosts' changes may be served late (and said so)."""
    a = desk.host("a", follow=False)
    a.ingest(make_documents(2, seed=16))
    a.top10("cloud subscription revenue growth")
    a.searcher.indexes.serve_while_rebuilding = True
    new = make_documents(3, seed=17)[2]
    rebuilding = threading.Event()

    def hold() -> None:  # the follower's rebuild in progress for 1 s
        with a.searcher.indexes._lock:
            rebuilding.set()
            time.sleep(1.0)

    a.ingest([new])
    holder = threading.Thread(target=hold)
    holder.start()
    rebuilding.wait(5)
    result = a.searcher.search(new.text.split(". ")[0], mode="hybrid", top_k=10)
    holder.join()
    assert result.feed is not None and result.feed.behind == 0
    assert any(h.document.doc_id == new.id for h in result.hits)


def test_two_hosts_ingesting_the_same_filing_keep_one_copy(desk: Desk) -> None:
    a, b = desk.host("a", follow=False), desk.host("b", follow=False)
    docs = make_documents(4, seed=14)
    errors: list[BaseException] = []

    def run(h: Host) -> None:
        try:
            h.ingest(docs)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(h,)) for h in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    want = expected_chunks(docs)
    counts = a.docstore.counts()
    assert counts["documents"] == counts["indexed"] == 4
    assert counts["chunks"] == sum(len(v) for v in want.values())
    for d in docs:
        assert {c.id for c in a.docstore.chunks_for_document(d.id)} == want[d.id]
    assert a.vectors.count() == counts["chunks"]


def test_kill_9_mid_document_is_never_served_and_a_rerun_completes_it(desk: Desk, tmp_path: Path) -> None:
    b = desk.host("b")
    try:
        settings = desk.settings("a")
        env = {**os.environ, "EQUIMIND_HOME": str(settings.home), "EQUIMIND_DOCSTORE_URL": desk.pg_url,
               "EQUIMIND_CHROMA_URL": desk.chroma_url, "MULTIHOST_COLLECTION": desk.collection,
               "MULTIHOST_SLOW_EMBED_S": "0.5", "PYTHONPATH": str(Path(__file__).parent)}
        proc = subprocess.Popen([sys.executable, str(HOST_SCRIPT), "ingest", "--seed", "15", "--n", "1"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        doc = make_documents(1, seed=15)[0]
        deadline = time.monotonic() + 60
        while b.docstore.document_status(doc.id) != "pending":  # its text, parents and chunks are committed
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "host A never stored the document"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert b.docstore.document_status(doc.id) == "pending"
        result = b.searcher.search(doc.text.split(". ")[0], mode="hybrid", top_k=10)
        assert all(h.document.doc_id != doc.id for h in result.hits)
        assert doc.id not in {r.doc_id for r in b.docstore.list_documents(status="indexed")}
        rerun = subprocess.run([sys.executable, str(HOST_SCRIPT), "ingest", "--seed", "15", "--n", "1"],
                               env={**env, "MULTIHOST_SLOW_EMBED_S": "0"}, capture_output=True, text=True,
                               timeout=120, check=False)
        assert rerun.returncode == 0, rerun.stderr
        report = json.loads(rerun.stdout.strip().splitlines()[-1])
        assert report["documents_completed"] == 1, report
        assert b.docstore.document_status(doc.id) == "indexed"
        position = b.docstore.feed_position()
        assert b.follower is not None and b.follower.wait_until(position, 10)
        checker = HitChecker(b.docstore, b.vectors, expected_chunks([doc]))
        found = b.searcher.search(doc.text.split(". ")[0], mode="hybrid", top_k=10)
        assert any(h.document.doc_id == doc.id for h in found.hits)
        assert not checker.violations(found, None)
    finally:
        stop(b)


def test_migrations_go_down_and_up(pg_url: str) -> None:
    import psycopg

    from equimind.store.pg import PgConnection, migrate, migrations

    PgDocStore(pg_url)  # applies every migration
    newest = migrations()[-1].version
    with psycopg.connect(pg_url, autocommit=True) as raw:
        conn = PgConnection(raw, "test")
        tables = {r[0] for r in raw.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert {"documents", "chunks", "feed", "runs", "ledger_runs"} <= tables
        assert migrate(conn, 0) == [f"down {m.version:04d}_{m.name}" for m in reversed(migrations())]
        left = {r[0] for r in raw.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert left == {"schema_migrations"}
        assert migrate(conn) == [f"up {m.version:04d}_{m.name}" for m in migrations()]
        assert migrate(conn) == []  # idempotent
        assert [r[0] for r in raw.execute("SELECT version FROM schema_migrations ORDER BY version")] == \
            list(range(1, newest + 1))
