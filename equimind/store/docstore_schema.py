"""SQLite schema of the document store and the row <-> record conversions (no connection handling here)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import date
from typing import Any

from equimind.core.documents import Chunk, Document, FilterSpec, Origin, PageSpan, Parent, Section, Source, date_to_int
from equimind.core.errors import NotFoundError
from equimind.core.lru import LRU
from equimind.core.search import DocumentRef

SCHEMA_VERSION = 1
BATCH = 500  # ids per IN (...) query, well under SQLite's variable limit
STATUSES: tuple[str, ...] = ("pending", "indexed")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    source_key TEXT NOT NULL,
    ticker TEXT,
    cik TEXT,
    company TEXT,
    source TEXT NOT NULL,
    origin TEXT NOT NULL,
    form TEXT NOT NULL,
    filed_at TEXT,
    filed_int INTEGER NOT NULL,
    period_end TEXT,
    url TEXT,
    title TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'indexed')),
    added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    sections TEXT NOT NULL,
    pages TEXT NOT NULL,
    meta TEXT NOT NULL,
    -- last: small columns are read without walking the (overflow) pages of a long canonical text
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_ticker_date ON documents (ticker, filed_int);
CREATE TABLE IF NOT EXISTS parents (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    section TEXT
);
CREATE INDEX IF NOT EXISTS parents_doc ON parents (doc_id);
-- text is NULL when the child text is exactly documents.text[start:end] (the usual case: text is stored once)
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    parent_id TEXT NOT NULL REFERENCES parents (id) ON DELETE CASCADE,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    parent_start INTEGER NOT NULL,
    parent_end INTEGER NOT NULL,
    section TEXT,
    text TEXT,
    ticker TEXT,
    source TEXT NOT NULL,
    form TEXT NOT NULL,
    filed_at INTEGER NOT NULL,
    page_start INTEGER,
    page_end INTEGER
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id, start);
-- first-answer indexing (ingest/first_answer.py): an indexed document some of whose chunks have no vector yet
CREATE TABLE IF NOT EXISTS deferred (
    doc_id TEXT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    chunks INTEGER NOT NULL,
    added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""

DOC_META_COLUMNS = (
    "id, source_key, ticker, cik, company, source, origin, form, filed_at, period_end, url, title, status"
)
CHUNK_COLUMNS = (
    "c.id, c.doc_id, c.parent_id, c.start, c.\"end\", c.parent_start, c.parent_end, c.section, "
    "c.ticker, c.source, c.form, c.filed_at, c.page_start, c.page_end"
)
# The child text: the stored override, else the span of the canonical text (SQLite substr is 1-based, in characters).
CHUNK_TEXT_SQL = "COALESCE(c.text, substr(d.text, c.start + 1, c.\"end\" - c.start))"


def _iso(d: date | None) -> str | None:
    return d.isoformat() if d else None


def _date(s: str | None) -> date | None:
    return date.fromisoformat(s) if s else None


def document_params(doc: Document) -> tuple[Any, ...]:
    sections = json.dumps([[s.name, s.start, s.end] for s in doc.sections])
    pages = json.dumps([[p.number, p.start, p.end] for p in doc.pages])
    meta = json.dumps([[k, v] for k, v in doc.meta])
    return (
        doc.id, doc.source_key, doc.ticker, doc.cik, doc.company, doc.source.value, doc.origin.value, doc.form,
        _iso(doc.filed_at), date_to_int(doc.filed_at) if doc.filed_at else 0, _iso(doc.period_end), doc.url,
        doc.title, doc.text, sections, pages, meta,
    )


# The statements below are plain SQL both backends run (SQLite >= 3.24 and PostgreSQL); ``?`` placeholders are
# rewritten for psycopg by ``docstore_pg``.
INSERT_DOCUMENT = (
    "INSERT INTO documents (id, source_key, ticker, cik, company, source, origin, form, filed_at, "
    "filed_int, period_end, url, title, text, sections, pages, meta) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT DO NOTHING"
)
INSERT_PARENT = 'INSERT INTO parents (id, doc_id, start, "end", section) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING'
INSERT_CHUNK = (
    'INSERT INTO chunks (id, doc_id, parent_id, start, "end", parent_start, parent_end, section, text, '
    "ticker, source, form, filed_at, page_start, page_end) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT DO NOTHING"
)
SET_META = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
BUMP_GENERATION = "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'"


def parent_params(p: Parent) -> tuple[Any, ...]:
    return (p.id, p.doc_id, p.start, p.end, p.section)


def chunk_params(c: Chunk, doc_text: str) -> tuple[Any, ...]:
    text = None if doc_text[c.start : c.end] == c.text else c.text
    return (
        c.id, c.doc_id, c.parent_id, c.start, c.end, c.parent_start, c.parent_end, c.section, text, c.ticker,
        c.source.value, c.form, c.filed_at, c.page_start, c.page_end,
    )


def row_to_document(r: sqlite3.Row) -> Document:
    return Document(
        id=r["id"], source_key=r["source_key"], ticker=r["ticker"], cik=r["cik"], company=r["company"],
        source=Source(r["source"]), origin=Origin(r["origin"]), form=r["form"], filed_at=_date(r["filed_at"]),
        period_end=_date(r["period_end"]), url=r["url"], title=r["title"], text=r["text"],
        sections=tuple(Section(n, s, e) for n, s, e in json.loads(r["sections"])),
        pages=tuple(PageSpan(n, s, e) for n, s, e in json.loads(r["pages"])),
        meta=tuple((k, v) for k, v in json.loads(r["meta"])),
    )


def row_to_ref(r: sqlite3.Row) -> DocumentRef:
    return DocumentRef(
        doc_id=r["id"], ticker=r["ticker"], company=r["company"], form=r["form"], filed_at=_date(r["filed_at"]),
        period_end=_date(r["period_end"]), source=Source(r["source"]), origin=Origin(r["origin"]),
        title=r["title"], url=r["url"],
    )


def row_to_chunk(r: sqlite3.Row, text: str) -> Chunk:
    return Chunk(
        id=r["id"], doc_id=r["doc_id"], parent_id=r["parent_id"], start=r["start"], end=r["end"],
        parent_start=r["parent_start"], parent_end=r["parent_end"], section=r["section"], text=text,
        ticker=r["ticker"], source=Source(r["source"]), form=r["form"], filed_at=r["filed_at"],
        page_start=r["page_start"], page_end=r["page_end"],
    )


def filter_sql(flt: FilterSpec | None, date_col: str = "filed_int") -> tuple[str, list[Any]]:
    """SQL ``WHERE`` fragment (on the documents table) with the same semantics as ``FilterSpec.matches``."""
    if flt is None or flt.is_empty():
        return "1 = 1", []
    parts: list[str] = []
    args: list[Any] = []

    def among(col: str, values: tuple[str, ...]) -> None:
        parts.append(f"{col} IN ({','.join('?' * len(values))})")
        args.extend(values)

    if flt.tickers:
        among("COALESCE(ticker, '')", flt.tickers)
    if flt.sources:
        among("source", tuple(s.value for s in flt.sources))
    if flt.forms:
        among("form", flt.forms)
    if flt.doc_ids:
        among("id", flt.doc_ids)
    if flt.since:
        parts.append(f"{date_col} >= ?")
        args.append(date_to_int(flt.since))
    if flt.until:
        parts.append(f"{date_col} <= ?")
        args.append(date_to_int(flt.until))
    return " AND ".join(parts), args


def chunks_in(conn: sqlite3.Connection, only_indexed: bool, order: str = "rowid") -> Iterator[Chunk]:
    """Every chunk of every (indexed) document, document by document in insertion order (``order``: the column
    that keeps it: SQLite's ``rowid``, PostgreSQL's ``seq``)."""
    where = "WHERE status = 'indexed'" if only_indexed else ""
    doc_ids = [r[0] for r in conn.execute(f"SELECT id FROM documents {where} ORDER BY {order}")]
    q = f"SELECT {CHUNK_COLUMNS}, c.text AS t FROM chunks c WHERE c.doc_id = ? ORDER BY c.start, c.id"
    for doc_id in doc_ids:
        text = conn.execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()[0]
        for r in conn.execute(q, (doc_id,)).fetchall():
            yield row_to_chunk(r, r["t"] if r["t"] is not None else text[r["start"] : r["end"]])


def span_texts(conn: sqlite3.Connection, spans: Sequence[tuple[str, int, int]],
               cache: LRU[tuple[str, int, int], str]) -> list[str]:
    """``document.text[start:end]`` for each (doc_id, start, end) by SQL ``substr``, through ``cache``: a document id
    is a hash of its text, so a span of it never changes (a research run's searches read the same parents again)."""
    out: list[str] = []
    for key in spans:
        text = cache.get(key)
        if text is None:
            doc_id, start, end = key
            row = conn.execute("SELECT substr(text, ?, ?) FROM documents WHERE id = ?",
                               (start + 1, max(0, end - start), doc_id)).fetchone()
            if row is None:
                raise NotFoundError(f"document {doc_id} is not in the docstore; ingest it first")
            text = str(row[0])
            cache.put(key, text)
        out.append(text)
    return out


def batches(items: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), BATCH):
        yield items[i : i + BATCH]
