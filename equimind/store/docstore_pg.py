"""The document store on PostgreSQL (``EQUIMIND_DOCSTORE_URL=postgresql://…``): the same contract as the SQLite
``DocStore`` (the same tests run against both), shared by every host that points at the same database.

What differs from SQLite, and why:

* **Connections** come from the process's pool (``store.pg``); a statement outside a transaction borrows one for
  itself. ``_read`` is a ``REPEATABLE READ, READ ONLY`` transaction (one snapshot, like SQLite's WAL read);
  ``_write`` a ``READ COMMITTED`` one. Two hosts writing the same document: ``ON CONFLICT DO NOTHING`` on ids that
  are hashes of the content, so one copy with identical ids.
* **The change feed.** ``_bump`` (every change of the indexed set: a document indexed or deleted, chunks added to
  an indexed one, embeddings deferred or completed, a re-embedding) advances ``meta.generation`` *under that row's
  lock*, appends the new position to ``feed`` and sends ``NOTIFY equimind_feed, '<position>'``, delivered at commit.
  The row lock orders the positions by commit, so a reader that sees position N also sees every change up to N.
  ``feed_position()`` is the position; the index stamp is ``instance:position`` as on SQLite.
* **Text**: PostgreSQL ``text`` cannot hold U+0000. Parsed documents never carry it (``ingest.parse`` drops it); a
  document that does is refused with an error naming it, and nothing else of the batch is lost.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from equimind.core.documents import Chunk, Document, Parent
from equimind.core.errors import ConfigError
from equimind.core.lru import LRU
from equimind.store.docstore import SPAN_CACHE, DocStore
from equimind.store.pg import PgConnection, pool_for, redacted, unavailable_as_error

FEED_CHANNEL = "equimind_feed"


class _Borrowed:
    """Outside a transaction: each statement borrows a pooled connection and reads its rows before returning it."""

    def __init__(self, store: PgDocStore) -> None:
        self._store = store

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Rows:
        with self._store._pooled() as conn:
            cur = conn.execute(sql, params)
            rows = cur.fetchall() if cur.description is not None else []
            return _Rows(rows, cur.rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._store._pooled() as conn:
            return conn.executemany(sql, rows)

    in_transaction = False


class _Rows:
    """The rows of one statement, read in full (what ``sqlite3.Cursor`` offers the store: fetchone/all, iteration)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._i = 0
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        if self._i >= len(self._rows):
            return None
        self._i += 1
        return self._rows[self._i - 1]

    def fetchall(self) -> list[Any]:
        rest, self._i = self._rows[self._i :], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _Snapshot(PgConnection):
    """A connection held for one long read (``iter_chunks``): ``close()`` gives it back to the pool."""

    def __init__(self, pool: Any, where: str) -> None:
        with unavailable_as_error(where):
            raw = pool.getconn()
        super().__init__(raw, where)
        self._pool = pool

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.in_transaction:
                self.raw.execute("ROLLBACK")
        self._pool.putconn(self.raw)


class PgDocStore(DocStore):
    """The docstore on PostgreSQL. Safe to share between threads; one pool per process and URL."""

    _JOIN = "JOIN"
    _ORDER = "seq"

    def __init__(self, url: str, pool_size: int | None = None, timeout_s: float | None = None) -> None:
        self.url = url
        self.where = redacted(url)
        self.path = self.where  # type: ignore[assignment]  # what messages name
        self._pool = pool_for(url, max_size=pool_size, timeout_s=timeout_s)  # migrates the database
        self._local = threading.local()
        self._spans: LRU[tuple[str, int, int], str] = LRU(SPAN_CACHE)
        self.own_position = 0  # the last feed position a write of this process committed

    def __repr__(self) -> str:
        return f"PgDocStore({self.where})"

    # ------------------------------------------------------------------ connections
    @contextlib.contextmanager
    def _pooled(self) -> Iterator[PgConnection]:
        with unavailable_as_error(self.where), self._pool.connection() as raw:
            yield PgConnection(raw, self.where)

    def _conn(self) -> Any:
        tx: PgConnection | None = getattr(self._local, "tx", None)
        return tx if tx is not None else _Borrowed(self)

    @contextlib.contextmanager
    def _tx(self, begin: str) -> Iterator[Any]:
        if getattr(self._local, "tx", None) is not None:  # nested: already inside one transaction
            yield self._local.tx
            return
        with self._pooled() as conn:
            try:
                with conn.transaction(begin):
                    self._local.tx = conn
                    yield conn
            finally:
                self._local.tx = None
            if conn.bumped is not None:  # this process's own change: its searches must see it (read-your-writes)
                self.own_position = max(self.own_position, conn.bumped)

    def _write(self) -> Any:
        return self._tx("BEGIN")

    def _read(self) -> Any:
        return self._tx("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def _snapshot_conn(self) -> Any:
        conn = _Snapshot(self._pool, self.where)
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return conn

    def close(self) -> None:
        """Nothing to close per store: the pool is the process's (``store.pg.close_pools`` at exit)."""

    @staticmethod
    def _bump(conn: Any) -> None:
        position = conn.execute("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
                                "WHERE key = 'generation' RETURNING value").fetchone()[0]
        conn.execute("INSERT INTO feed (position) VALUES (?)", (int(position),))
        conn.execute("SELECT pg_notify(?, ?)", (FEED_CHANNEL, str(position)))
        conn.bumped = int(position)

    @staticmethod
    def _insert_count(conn: Any, sql: str, rows: list[tuple[object, ...]]) -> int:
        return int(conn.executemany(sql, rows))

    # ------------------------------------------------------------------ what SQLite stores and PostgreSQL cannot
    @staticmethod
    def _check_text(doc: Document, chunks: Sequence[Chunk] = ()) -> None:
        if "\x00" in doc.text or any("\x00" in c.text for c in chunks):
            raise ConfigError(f"document {doc.id} ({doc.title}) holds a NUL character, which PostgreSQL text cannot "
                              "store; re-parse it (equimind.ingest.parse drops NULs) and ingest it again")

    def add_document(self, doc: Document) -> bool:
        self._check_text(doc)
        return super().add_document(doc)

    def add_document_with_chunks(self, doc: Document, parents: Sequence[Parent], chunks: Sequence[Chunk]) -> bool:
        self._check_text(doc, chunks)
        return super().add_document_with_chunks(doc, parents, chunks)

    # ------------------------------------------------------------------ the feed
    def feed_position(self) -> int:
        """The change feed's position: the number of changes of the indexed set so far."""
        return int(self._conn().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
