-- The document store on PostgreSQL: the same tables as the SQLite store (docstore_schema.SCHEMA), plus the change
-- feed that per-host search indexes follow. Applied by equimind.store.pg_migrate under an advisory lock.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    seq BIGSERIAL UNIQUE,  -- insertion order (SQLite's rowid)
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
    added_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    sections TEXT NOT NULL,
    pages TEXT NOT NULL,
    meta TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX documents_ticker_date ON documents (ticker, filed_int);
CREATE TABLE parents (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    section TEXT
);
CREATE INDEX parents_doc ON parents (doc_id);
CREATE TABLE chunks (
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
CREATE INDEX chunks_doc ON chunks (doc_id, start);
CREATE TABLE deferred (
    doc_id TEXT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    chunks INTEGER NOT NULL,
    added_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
-- The change feed: one row per change of the indexed set, numbered by meta.generation (advanced under that row's
-- lock, so positions become visible in commit order), announced by NOTIFY equimind_feed at commit.
CREATE TABLE feed (
    position BIGINT PRIMARY KEY,
    at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO meta (key, value) VALUES ('instance', md5(random()::text || clock_timestamp()::text)), ('generation', '0');
