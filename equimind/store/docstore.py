"""The document store: SQLite holding every document's canonical text (stored once), its parents and child chunks.

WAL journal, foreign keys on, one connection per thread (readers never block the single writer, and the writer
never blocks readers). Writes take ``BEGIN IMMEDIATE`` so two writers queue on ``busy_timeout`` instead of
deadlocking. The schema version is stamped in ``PRAGMA user_version``.

A chunk's text is not stored when it equals its span of the canonical text (the usual case) and is read back with
SQL ``substr``; measured at 20k chunks: 30 MB instead of 52 MB, hydrating 10 hits 0.84 ms instead of 0.65 ms.

A document is ``pending`` until every one of its chunks has been embedded and stored, then ``indexed``; only indexed
documents are searchable. The store keeps an *index stamp* (``index_stamp()``) that changes whenever the set of
indexed chunks changes (or their vectors are all re-embedded), so the derived search indexes (BM25, exact-search
matrix) know when they are stale. The ``meta`` table also records the *embedding stamp* (embedder name and
embedding-text format of the vectors, see ``equimind.ingest.embed_format``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from equimind.core.documents import Chunk, Document, FilterSpec, Parent
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.lru import LRU
from equimind.core.search import DocumentRef
from equimind.store import docstore_schema as sch
from equimind.store.docstore_deferred import DeferredEmbeddings
from equimind.store.indexfiles import fingerprint

log = logging.getLogger(__name__)
SPAN_CACHE = 4096  # parent passages (~3.5 KB each) a docstore keeps in memory



@dataclass(frozen=True)
class Passage:
    """A stored child chunk with its document's metadata and its parent's text (``text[parent_start:parent_end]``)."""

    chunk: Chunk
    document: DocumentRef
    parent_text: str


class DocStore(DeferredEmbeddings):
    """SQLite document store. Safe to share between threads (each thread gets its own connection)."""

    own_position = 0  # shared stores (PostgreSQL): the last feed position this process's own writes reached
    _JOIN = "CROSS JOIN"  # SQLite: CROSS JOIN keeps the chunks table driving the join (PostgreSQL: a plain JOIN)
    _ORDER = "rowid"  # the column that keeps documents in insertion order

    def __init__(self, path: Path | str, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._timeout = busy_timeout_s
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._spans: LRU[tuple[str, int, int], str] = LRU(SPAN_CACHE)  # see get_text_spans
        self._init_schema()

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """Several SELECTs that must see one snapshot (WAL: never blocks, never blocked by the writer)."""
        conn = self._conn()
        if conn.in_transaction:  # nested: already inside one snapshot
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this store opened (call once no thread uses it any more)."""
        with self._all_lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.ProgrammingError):
                    conn.close()
            self._all.clear()
        self._local = threading.local()

    def _init_schema(self) -> None:
        conn = self._conn()
        conn.execute("PRAGMA journal_mode = WAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, sch.SCHEMA_VERSION):
            raise ConfigError(
                f"docstore {self.path} has schema version {version}, this EquiMind expects {sch.SCHEMA_VERSION}; "
                "delete it (and the indexes beside it) and re-ingest"
            )
        with self._write() as c:
            for stmt in filter(None, (s.strip() for s in sch.SCHEMA.split(";"))):
                c.execute(stmt)
            c.execute("INSERT INTO meta (key, value) VALUES ('instance', ?) ON CONFLICT DO NOTHING",
                      (uuid.uuid4().hex,))
            c.execute("INSERT INTO meta (key, value) VALUES ('generation', '0') ON CONFLICT DO NOTHING")
            c.execute(f"PRAGMA user_version = {sch.SCHEMA_VERSION}")

    @staticmethod
    def _bump(conn: sqlite3.Connection) -> None:
        """The indexed set changed: advance the generation (the feed position; see ``feed_position``)."""
        conn.execute(sch.BUMP_GENERATION)

    def index_stamp(self) -> str:
        """Changes whenever the set of indexed chunks changes (also unique per database file)."""
        rows = dict(self._conn().execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')"))
        return f"{rows['instance']}:{rows['generation']}"

    def feed_position(self) -> int:
        """How many changes of the indexed set this store has seen (the generation in the index stamp; on
        PostgreSQL, the change feed's position)."""
        return int(self._conn().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    # ------------------------------------------------------------------ embedding stamp
    def embedding_stamp(self) -> tuple[str, str] | None:
        """(embedder name, embedding-text format) the stored vectors were made with, if recorded."""
        rows = dict(self._conn().execute(
            "SELECT key, value FROM meta WHERE key IN ('embed_model', 'embed_text_format')"))
        if "embed_model" not in rows or "embed_text_format" not in rows:
            return None
        return str(rows["embed_model"]), str(rows["embed_text_format"])

    def set_embedding_stamp(self, embedder: str, text_format: str, *, bump_generation: bool = False) -> None:
        """Record how the stored vectors were made. ``bump_generation`` (after re-embedding every vector) changes the
        index stamp in the same transaction, so every searcher reloads its exact-search matrix."""
        with self._write() as conn:
            conn.executemany(sch.SET_META, [("embed_model", embedder), ("embed_text_format", text_format)])
            if bump_generation:
                self._bump(conn)

    def has_chunks(self) -> bool:
        """Does the store hold any chunk (pending or indexed)?"""
        return self._conn().execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    # ------------------------------------------------------------------ documents
    def add_document(self, doc: Document) -> bool:
        """Insert a document (status 'pending'). False if a document with this id already exists."""
        with self._write() as conn:
            return conn.execute(sch.INSERT_DOCUMENT, sch.document_params(doc)).rowcount == 1

    def add_document_with_chunks(self, doc: Document, parents: Sequence[Parent], chunks: Sequence[Chunk]) -> bool:
        """Document + parents + chunks in one transaction. Returns True if the document was new."""
        self._check_children(doc.id, parents, chunks)
        with self._write() as conn:
            new = conn.execute(sch.INSERT_DOCUMENT, sch.document_params(doc)).rowcount == 1
            self._insert_children(conn, doc.id, doc.text, parents, chunks)
        return new

    def has_document(self, doc_id: str) -> bool:
        return self._conn().execute("SELECT 1 FROM documents WHERE id = ?", (doc_id,)).fetchone() is not None

    def document_status(self, doc_id: str) -> str | None:
        row = self._conn().execute("SELECT status FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return None if row is None else str(row[0])

    def statuses(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """doc_id -> status for the ids that exist."""
        out: dict[str, str] = {}
        for batch in sch.batches(list(dict.fromkeys(doc_ids))):
            q = f"SELECT id, status FROM documents WHERE id IN ({','.join('?' * len(batch))})"
            out.update((r[0], r[1]) for r in self._conn().execute(q, batch))
        return out

    def set_status(self, doc_id: str, status: str) -> None:
        if status not in sch.STATUSES:
            raise ConfigError(f"unknown document status {status!r}; valid: {', '.join(sch.STATUSES)}")
        with self._write() as conn:
            row = conn.execute("SELECT status FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"document {doc_id} is not in the docstore; ingest it first")
            if row[0] != status:
                conn.execute("UPDATE documents SET status = ? WHERE id = ?", (status, doc_id))
                self._bump(conn)

    def get_document(self, doc_id: str) -> Document:
        row = self._conn().execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"document {doc_id} is not in the docstore; ingest it first")
        return sch.row_to_document(row)

    def get_document_text(self, doc_id: str) -> str:
        row = self._conn().execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"document {doc_id} is not in the docstore; ingest it first")
        return str(row[0])

    def get_text_spans(self, spans: Sequence[tuple[str, int, int]]) -> list[str]:
        """``document.text[start:end]`` for each (doc_id, start, end), read by SQL ``substr`` (no full-text copy).
        The last ``SPAN_CACHE`` spans read are kept (see ``docstore_schema.span_texts``)."""
        return sch.span_texts(self._conn(), spans, self._spans)

    def get_refs(self, doc_ids: Iterable[str]) -> dict[str, DocumentRef]:
        """DocumentRef (metadata without text) for the ids that exist."""
        out: dict[str, DocumentRef] = {}
        for batch in sch.batches(list(dict.fromkeys(doc_ids))):
            q = f"SELECT {sch.DOC_META_COLUMNS} FROM documents WHERE id IN ({','.join('?' * len(batch))})"
            out.update((r["id"], sch.row_to_ref(r)) for r in self._conn().execute(q, batch))
        return out

    def list_documents(self, filter: FilterSpec | None = None, status: str | None = None) -> list[DocumentRef]:
        """Document metadata (no text), newest filing first, optionally filtered."""
        where, args = sch.filter_sql(filter)
        if status is not None:
            where += " AND status = ?"
            args.append(status)
        q = f"SELECT {sch.DOC_META_COLUMNS} FROM documents WHERE {where} ORDER BY filed_int DESC, id"
        return [sch.row_to_ref(r) for r in self._conn().execute(q, args)]

    def list_documents_with_meta(self, status: str | None = None) -> list[tuple[DocumentRef, dict[str, str]]]:
        """Every document's metadata and its source ``meta`` pairs (fiscal_year, doc_name ...), without the text."""
        where, args = ("status = ?", [status]) if status is not None else ("1 = 1", [])
        q = f"SELECT {sch.DOC_META_COLUMNS}, meta FROM documents WHERE {where} ORDER BY filed_int DESC, id"
        return [(sch.row_to_ref(r), {str(k): str(v) for k, v in json.loads(r["meta"])})
                for r in self._conn().execute(q, args)]

    def delete_document(self, doc_id: str) -> bool:
        """Remove a document with its parents and chunks (the vector store is the caller's to clean).

        Returns False if the document was absent."""
        with self._write() as conn:
            row = conn.execute("SELECT status FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                return False
            conn.execute("DELETE FROM deferred WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM parents WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
            if row[0] == "indexed":
                self._bump(conn)
        return True

    # ------------------------------------------------------------------ parents and chunks
    @staticmethod
    def _check_children(doc_id: str, parents: Sequence[Parent], chunks: Sequence[Chunk]) -> None:
        items: list[Parent | Chunk] = [*parents, *chunks]
        wrong = [x.id for x in items if x.doc_id != doc_id]
        if wrong:
            raise ConfigError(f"{len(wrong)} parents/chunks do not belong to document {doc_id} (e.g. {wrong[0]})")

    def _insert_children(
        self, conn: sqlite3.Connection, doc_id: str, text: str, parents: Sequence[Parent], chunks: Sequence[Chunk]
    ) -> None:
        n = len(text)
        items: list[Parent | Chunk] = [*parents, *chunks]
        bad = [x.id for x in items if not 0 <= x.start <= x.end <= n]
        if bad:
            raise ConfigError(f"{len(bad)} spans fall outside document {doc_id} (length {n}), e.g. {bad[0]}")
        conn.executemany(sch.INSERT_PARENT, [sch.parent_params(p) for p in parents])
        added = self._insert_count(conn, sch.INSERT_CHUNK, [sch.chunk_params(c, text) for c in chunks])
        status = conn.execute("SELECT status FROM documents WHERE id = ?", (doc_id,)).fetchone()
        if added and status is not None and status[0] == "indexed":
            self._bump(conn)

    @staticmethod
    def _insert_count(conn: sqlite3.Connection, sql: str, rows: list[tuple[object, ...]]) -> int:
        """Run an insert for each row; how many rows it added."""
        before = conn.total_changes
        conn.executemany(sql, rows)
        return conn.total_changes - before

    def add_chunks(self, doc_id: str, parents: Sequence[Parent], chunks: Sequence[Chunk]) -> None:
        """Add parents and chunks of a stored document (idempotent: existing ids are left as they are)."""
        self._check_children(doc_id, parents, chunks)
        with self._write() as conn:
            row = conn.execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"document {doc_id} is not in the docstore; add_document it first")
            self._insert_children(conn, doc_id, str(row[0]), parents, chunks)

    def get_chunks(self, ids: Iterable[str], only_indexed: bool = False) -> dict[str, Chunk]:
        """Chunks by id (absent ids are left out; with ``only_indexed``, so are chunks of non-indexed documents)."""
        out: dict[str, Chunk] = {}
        status = "AND d.status = 'indexed'" if only_indexed else ""
        for batch in sch.batches(list(dict.fromkeys(ids))):
            q = (f"SELECT {sch.CHUNK_COLUMNS}, {sch.CHUNK_TEXT_SQL} AS t FROM chunks c {self._JOIN} documents d "
                 f"ON d.id = c.doc_id WHERE c.id IN ({','.join('?' * len(batch))}) {status}")
            out.update((r["id"], sch.row_to_chunk(r, r["t"])) for r in self._conn().execute(q, batch))
        return out

    def passages(self, ids: Iterable[str], only_indexed: bool = True) -> dict[str, Passage]:
        """Chunk + its document's metadata + its parent's text, read from one snapshot (what a search hit shows)."""
        with self._read():
            chunks = self.get_chunks(ids, only_indexed=only_indexed)
            refs = self.get_refs({c.doc_id for c in chunks.values()})
            spans = list(dict.fromkeys((c.doc_id, c.parent_start, c.parent_end) for c in chunks.values()))
            texts = dict(zip(spans, self.get_text_spans(spans), strict=True))
        return {cid: Passage(c, refs[c.doc_id], texts[(c.doc_id, c.parent_start, c.parent_end)])
                for cid, c in chunks.items()}

    def indexed_chunk_ids(self, ids: Iterable[str]) -> set[str]:
        """The given chunk ids whose document is currently 'indexed'."""
        out: set[str] = set()
        for batch in sch.batches(list(dict.fromkeys(ids))):
            q = (f"SELECT c.id FROM chunks c {self._JOIN} documents d ON d.id = c.doc_id "
                 f"WHERE d.status = 'indexed' AND c.id IN ({','.join('?' * len(batch))})")
            out.update(r[0] for r in self._conn().execute(q, batch))
        return out

    def get_parent(self, parent_id: str) -> Parent:
        row = self._conn().execute('SELECT id, doc_id, start, "end", section FROM parents WHERE id = ?',
                                   (parent_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"parent {parent_id} is not in the docstore")
        return Parent(id=row[0], doc_id=row[1], start=row[2], end=row[3], section=row[4])

    def chunks_for_document(self, doc_id: str) -> list[Chunk]:
        with self._read() as conn:
            text = self.get_document_text(doc_id)
            rows = conn.execute(
                f"SELECT {sch.CHUNK_COLUMNS}, c.text AS t FROM chunks c WHERE c.doc_id = ? ORDER BY c.start, c.id",
                (doc_id,),
            ).fetchall()
        return [sch.row_to_chunk(r, r["t"] if r["t"] is not None else text[r["start"] : r["end"]]) for r in rows]

    def iter_chunks(self, only_indexed: bool = True) -> Iterator[Chunk]:
        """Every chunk (of indexed documents by default), document by document; each text read once per document.

        Reads from one snapshot: a concurrent writer's later commits are not seen half-way through.
        """
        conn = self._snapshot_conn()
        try:
            yield from sch.chunks_in(conn, only_indexed, self._ORDER)
            conn.execute("COMMIT")
        finally:
            conn.close()

    def indexed_snapshot(self) -> tuple[str, list[Chunk]]:
        """(index_stamp, every chunk of every indexed document), read in one transaction so they agree."""
        conn = self._snapshot_conn()
        try:
            rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')"))
            chunks = list(sch.chunks_in(conn, True, self._ORDER))
            conn.execute("COMMIT")
        finally:
            conn.close()
        return f"{rows['instance']}:{rows['generation']}", chunks

    def indexed_fingerprint(self) -> tuple[str, str]:
        """(index_stamp, fingerprint of the indexed chunk-id set) from one snapshot — cheap: ids only, no text."""
        with self._read() as conn:
            rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')"))
            ids = [r[0] for r in conn.execute(
                "SELECT c.id FROM chunks c WHERE c.doc_id IN (SELECT id FROM documents WHERE status = 'indexed')")]
        return f"{rows['instance']}:{rows['generation']}", fingerprint(ids)

    def indexed_doc_ids(self) -> tuple[str, list[str]]:
        """(index_stamp, ids of the indexed documents) from one snapshot (what a result's corpus_signature hashes);
        a document with deferred embeddings is listed as ``<id>~deferred`` (its dense results are not final)."""
        with self._read() as conn:
            rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'generation')"))
            ids = [r[0] for r in conn.execute(
                "SELECT d.id || CASE WHEN f.doc_id IS NULL THEN '' ELSE '~deferred' END FROM documents d "
                "LEFT JOIN deferred f ON f.doc_id = d.id WHERE d.status = 'indexed'")]
        return f"{rows['instance']}:{rows['generation']}", ids

    def known_tickers(self, only_indexed: bool = True) -> set[str]:
        """Tickers with stored (by default: searchable) documents."""
        where = "AND status = 'indexed'" if only_indexed else ""
        q = f"SELECT DISTINCT ticker FROM documents WHERE ticker IS NOT NULL {where}"
        return {r[0] for r in self._conn().execute(q)}

    def _snapshot_conn(self) -> sqlite3.Connection:
        # Its own connection: an iterator may outlive the call, and must not hold the thread's connection in a tx.
        conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("BEGIN")
        return conn

    def counts(self) -> dict[str, int]:
        with self._read() as conn:
            docs = dict(conn.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
            return {
                "documents": sum(docs.values()),
                "indexed": docs.get("indexed", 0),
                "pending": docs.get("pending", 0),
                "deferred": conn.execute("SELECT COUNT(*) FROM deferred").fetchone()[0],
                "parents": conn.execute("SELECT COUNT(*) FROM parents").fetchone()[0],
                "chunks": conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
            }
