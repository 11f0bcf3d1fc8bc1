"""DocStore: round trip, idempotency, status/stamp, filters, transactions, concurrent reads while writing.

The contract tests (every test taking ``store``) run against both backends: SQLite under a temporary home, and
PostgreSQL (a database of its own per test on the session's server, ``pg_url`` in tests/conftest.py)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import date
from pathlib import Path

import pytest

from equimind.core.documents import Chunk, Document, FilterSpec, Origin, PageSpan, Parent, Section, Source, date_to_int
from equimind.core.errors import ConfigError, NotFoundError
from equimind.store.docstore import DocStore


def make_doc(n: int, ticker: str | None = "NVDA", filed: date | None = date(2024, 2, 21), form: str = "10-K",
             words: int = 60) -> tuple[Document, list[Parent], list[Chunk]]:
    text = " ".join(f"w{n}_{i}" for i in range(words))
    key = f"k{n}"
    doc = Document(id=Document.make_id(key, text), source_key=key, ticker=ticker, cik="1045810", company="NVIDIA",
                   source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form=form, filed_at=filed,
                   period_end=date(2024, 1, 28), url="https://sec.example/x", title=f"doc {n}", text=text,
                   sections=(Section("Item 1", 0, 40), Section("Item 7", 40, len(text))),
                   pages=(PageSpan(0, 0, 100), PageSpan(1, 100, len(text))), meta=(("accession", f"a{n}"),))
    half = len(text) // 2
    parents = [Parent(f"{doc.id}:p0", doc.id, 0, half, "Item 1"), Parent(f"{doc.id}:p1", doc.id, half, len(text),
                                                                         "Item 7")]
    chunks = []
    for p in parents:
        for s, e in ((p.start, p.start + 20), (p.start + 20, p.end)):
            chunks.append(Chunk(id=Chunk.make_id(doc.id, s, e), doc_id=doc.id, parent_id=p.id, start=s, end=e,
                                parent_start=p.start, parent_end=p.end, section=p.section, text=text[s:e],
                                ticker=ticker, source=Source.SEC_EDGAR, form=form,
                                filed_at=date_to_int(filed) if filed else 0, page_start=0, page_end=1))
    return doc, parents, chunks


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> DocStore:
    if request.param == "sqlite":
        return DocStore(tmp_path / "docstore.sqlite")
    from equimind.store.docstore_pg import PgDocStore

    return PgDocStore(request.getfixturevalue("pg_url"))


def stored_child_texts(store: DocStore) -> dict[str, str | None]:
    """The chunks table's own text column (NULL when the text is the document's span), read around the store."""
    if isinstance(store.path, Path):
        return dict(sqlite3.connect(store.path).execute("SELECT id, text FROM chunks").fetchall())
    import psycopg

    with psycopg.connect(store.url) as conn:  # type: ignore[attr-defined]
        return dict(conn.execute("SELECT id, text FROM chunks").fetchall())


def integrity_errors() -> tuple[type[Exception], ...]:
    import psycopg

    return (sqlite3.IntegrityError, psycopg.IntegrityError)


def test_round_trip_and_idempotency(store: DocStore) -> None:
    doc, parents, chunks = make_doc(1)
    assert store.add_document_with_chunks(doc, parents, chunks) is True
    assert store.add_document(doc) is False and store.add_document_with_chunks(doc, parents, chunks) is False
    store.add_chunks(doc.id, parents, chunks)
    assert store.get_document(doc.id) == doc
    assert store.get_document_text(doc.id) == doc.text
    assert store.counts() == {"documents": 1, "indexed": 0, "pending": 1, "deferred": 0, "parents": 2,
                              "chunks": 4}
    assert store.get_chunks([c.id for c in chunks] + ["nope"]) == {c.id: c for c in chunks}
    assert store.chunks_for_document(doc.id) == sorted(chunks, key=lambda c: c.start)
    assert store.get_parent(parents[1].id) == parents[1]
    assert store.get_text_spans([(doc.id, 3, 17)]) == [doc.text[3:17]]
    assert store.has_document(doc.id) and not store.has_document("x")
    with pytest.raises(NotFoundError):
        store.get_document("x")
    with pytest.raises(NotFoundError):
        store.get_parent("x")


def test_child_text_is_stored_once_unless_it_differs_from_the_span(store: DocStore) -> None:
    doc, parents, chunks = make_doc(2)
    odd = Chunk(**{**chunks[0].__dict__, "text": "Item 1 > " + chunks[0].text})  # e.g. a heading prefix
    store.add_document_with_chunks(doc, parents, [odd, *chunks[1:]])
    assert stored_child_texts(store) == {odd.id: odd.text, **{c.id: None for c in chunks[1:]}}
    assert store.get_chunks([odd.id])[odd.id].text == odd.text
    assert next(iter(store.iter_chunks(only_indexed=False))).text == odd.text


def test_status_and_index_stamp(store: DocStore) -> None:
    doc, parents, chunks = make_doc(3)
    s0 = store.index_stamp()
    store.add_document_with_chunks(doc, parents, chunks)
    assert store.index_stamp() == s0 and store.document_status(doc.id) == "pending"
    assert list(store.iter_chunks()) == [] and len(list(store.iter_chunks(only_indexed=False))) == 4
    store.set_status(doc.id, "indexed")
    s1 = store.index_stamp()
    assert s1 != s0 and store.document_status(doc.id) == "indexed"
    store.set_status(doc.id, "indexed")
    assert store.index_stamp() == s1  # no change, no new stamp
    stamp, snap = store.indexed_snapshot()
    assert stamp == s1 and {c.id for c in snap} == {c.id for c in chunks}
    assert store.indexed_chunk_ids([chunks[0].id, "nope"]) == {chunks[0].id}
    with pytest.raises(ConfigError, match="pending"):
        store.set_status(doc.id, "done")
    with pytest.raises(NotFoundError):
        store.set_status("nope", "indexed")
    assert store.document_status("nope") is None
    assert store.delete_document(doc.id) is True and store.index_stamp() != s1
    assert store.delete_document(doc.id) is False
    assert store.counts() == {"documents": 0, "indexed": 0, "pending": 0, "deferred": 0, "parents": 0,
                              "chunks": 0}


def test_list_documents_filter_matches_reference_semantics(store: DocStore) -> None:
    specs = [(10, "NVDA", date(2022, 2, 1), "10-K"), (11, "NVDA", date(2024, 5, 1), "10-Q"),
             (12, "WMT", date(2023, 3, 1), "10-K"), (13, None, None, "8-K")]
    docs = {}
    for n, t, d, f in specs:
        doc, parents, chunks = make_doc(n, t, d, f)
        store.add_document_with_chunks(doc, parents, chunks)
        docs[doc.id] = chunks[0]
    filters = [FilterSpec(), FilterSpec(tickers=("NVDA",)), FilterSpec(since=date(2023, 1, 1)),
               FilterSpec(until=date(2023, 12, 31)), FilterSpec(forms=("10-K", "8-K")), FilterSpec(tickers=("",)),
               FilterSpec(tickers=("NVDA", "WMT"), since=date(2022, 6, 1), until=date(2024, 1, 1))]
    for flt in filters:
        got = {r.doc_id for r in store.list_documents(flt)}
        assert got == {i for i, c in docs.items() if flt.matches(c)}, flt
    dated = [r.filed_at for r in store.list_documents()]
    assert dated[0] == date(2024, 5, 1)  # newest first
    assert store.list_documents(status="indexed") == []


def test_add_with_chunks_is_one_transaction(store: DocStore) -> None:
    doc, parents, chunks = make_doc(4)
    bad = Chunk(**{**chunks[0].__dict__, "id": "bad", "end": len(doc.text) + 5})
    with pytest.raises(ConfigError, match="outside"):
        store.add_document_with_chunks(doc, parents, [*chunks, bad])
    assert not store.has_document(doc.id)
    orphan = Chunk(**{**chunks[0].__dict__, "id": "orphan", "parent_id": "missing-parent"})
    with pytest.raises(integrity_errors()):
        store.add_document_with_chunks(doc, parents, [*chunks, orphan])
    assert not store.has_document(doc.id)
    with pytest.raises(ConfigError, match="do not belong"):
        store.add_chunks(doc.id, parents, [Chunk(**{**chunks[0].__dict__, "doc_id": "other"})])


def test_schema_version_is_stamped_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    DocStore(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    with pytest.raises(ConfigError, match="re-ingest"):
        DocStore(path)


def test_readers_see_whole_documents_while_one_writer_ingests(store: DocStore) -> None:
    n_docs = 40
    batch = [make_doc(100 + i, words=200) for i in range(n_docs)]
    done = threading.Event()
    errors: list[BaseException] = []
    observations: list[int] = []

    reading = threading.Event()  # the writer starts once a reader is running (a loaded machine starves threads)

    def writer() -> None:
        reading.wait(30)
        try:
            for doc, parents, chunks in batch:
                store.add_document_with_chunks(doc, parents, chunks)
                store.set_status(doc.id, "indexed")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            done.set()

    def reader() -> None:
        try:
            while not done.is_set():
                counts = store.counts()
                assert counts["chunks"] == 4 * counts["documents"]  # a document never shows without its chunks
                for ref in store.list_documents(status="indexed"):
                    assert len(store.chunks_for_document(ref.doc_id)) == 4
                observations.append(counts["documents"])
                reading.set()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert store.counts()["indexed"] == n_docs
    assert observations and min(observations) < n_docs  # readers really ran while the writer was writing


def test_fingerprint_and_known_tickers_follow_the_indexed_set(store: DocStore) -> None:
    from equimind.store.indexfiles import fingerprint

    a, b = make_doc(20, "NVDA"), make_doc(21, "WMT")
    for doc, parents, chunks in (a, b):
        store.add_document_with_chunks(doc, parents, chunks)
    stamp0, fp0 = store.indexed_fingerprint()
    assert fp0 == fingerprint([]) and store.known_tickers() == set()
    assert store.known_tickers(only_indexed=False) == {"NVDA", "WMT"}
    store.set_status(a[0].id, "indexed")
    stamp1, fp1 = store.indexed_fingerprint()
    assert stamp1 != stamp0 and fp1 == fingerprint(c.id for c in a[2])
    assert store.known_tickers() == {"NVDA"}


def test_indexed_doc_ids_follow_the_index_stamp(store: DocStore) -> None:
    """What a result's corpus_signature hashes: only indexed documents, read with the stamp that caches it."""
    a, b = make_doc(30, "NVDA"), make_doc(31, "WMT")
    for doc, parents, chunks in (a, b):
        store.add_document_with_chunks(doc, parents, chunks)
    stamp0, ids0 = store.indexed_doc_ids()
    assert ids0 == [] and stamp0 == store.index_stamp()
    store.set_status(a[0].id, "indexed")
    stamp1, ids1 = store.indexed_doc_ids()
    assert ids1 == [a[0].id] and stamp1 != stamp0 and stamp1 == store.index_stamp()
    store.set_status(b[0].id, "indexed")
    assert sorted(store.indexed_doc_ids()[1]) == sorted([a[0].id, b[0].id])
    store.delete_document(a[0].id)
    stamp3, ids3 = store.indexed_doc_ids()
    assert ids3 == [b[0].id] and stamp3 not in (stamp0, stamp1)
