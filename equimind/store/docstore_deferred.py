"""The docstore's record of *deferred* embeddings (first-answer indexing, ``ingest/first_answer.py``).

A deferred document is ``indexed`` — searchable by BM25 over all of its chunks, and by the dense leg over the chunks
that have a vector — while the rest of its vectors are still to be computed. The ``deferred`` table lists it with the
number of chunks left; ``IngestPipeline.complete_deferred`` embeds them and clears the row. Marking and clearing
both change the index stamp, so every searcher reloads its exact-search matrix (whose fingerprint includes the
deferred set: ``local_indexes.dense_fingerprint``). A mixin of ``DocStore``: it uses the store's connections.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager


class DeferredEmbeddings:
    """``DocStore`` methods for deferred embeddings (see the module docstring)."""

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # provided by DocStore

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # provided by DocStore

    @staticmethod
    def _bump(conn: sqlite3.Connection) -> None:
        raise NotImplementedError  # provided by DocStore

    def mark_deferred(self, doc_id: str, chunks: int) -> None:
        """Record that ``chunks`` of the document's chunks have no vector yet (0 clears the record)."""
        if chunks <= 0:
            self.clear_deferred(doc_id)
            return
        with self._write() as conn:
            conn.execute("INSERT INTO deferred (doc_id, chunks) VALUES (?, ?) "
                         "ON CONFLICT (doc_id) DO UPDATE SET chunks = excluded.chunks", (doc_id, chunks))
            self._bump(conn)

    def clear_deferred(self, doc_id: str) -> bool:
        """The document's vectors are complete. False when it was not deferred."""
        with self._write() as conn:
            gone = conn.execute("DELETE FROM deferred WHERE doc_id = ?", (doc_id,)).rowcount > 0
            if gone:
                self._bump(conn)
        return gone

    def deferred(self, tickers: tuple[str, ...] = ()) -> dict[str, int]:
        """{doc_id: chunks without a vector} of the deferred documents (of ``tickers`` when given), oldest first."""
        sql = ("SELECT f.doc_id, f.chunks FROM deferred f JOIN documents d ON d.id = f.doc_id"
               + (f" WHERE d.ticker IN ({', '.join('?' * len(tickers))})" if tickers else "")
               + " ORDER BY f.added_at, f.doc_id")
        with self._read() as conn:
            return {str(r[0]): int(r[1]) for r in conn.execute(sql, tickers)}
