-- Research memory and the rating ledger (equimind.memory.store, format 2) beside the documents, so every host
-- sees the same runs and ledger. Dates stay ISO text, as in the SQLite file, so both stores compare them alike.
CREATE TABLE evidence (
  id TEXT PRIMARY KEY, ticker TEXT NOT NULL, date TEXT NOT NULL, doc_id TEXT NOT NULL, start INTEGER NOT NULL,
  "end" INTEGER NOT NULL, digest TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL, form TEXT NOT NULL,
  section TEXT, score DOUBLE PRECISION NOT NULL, stored_at TEXT NOT NULL);
CREATE INDEX evidence_ticker_date ON evidence (ticker, date);
CREATE TABLE summaries (
  ticker TEXT NOT NULL, level TEXT NOT NULL, period TEXT NOT NULL, start TEXT NOT NULL, "end" TEXT NOT NULL,
  items TEXT NOT NULL, PRIMARY KEY (ticker, level, period));
CREATE TABLE runs (
  id BIGSERIAL PRIMARY KEY, ticker TEXT NOT NULL, question TEXT NOT NULL, as_of TEXT NOT NULL,
  rating TEXT, conviction DOUBLE PRECISION NOT NULL, run_at TEXT NOT NULL, duration_s DOUBLE PRECISION);
CREATE INDEX runs_ticker_as_of ON runs (ticker, as_of);
CREATE TABLE ledger_runs (run_id BIGINT PRIMARY KEY REFERENCES runs (id));
CREATE TABLE ledger_evidence (
  run_id BIGINT NOT NULL REFERENCES runs (id), pos INTEGER NOT NULL, doc_id TEXT NOT NULL, start INTEGER NOT NULL,
  "end" INTEGER NOT NULL, quote TEXT NOT NULL, filed_at TEXT, form TEXT, sides TEXT NOT NULL,
  PRIMARY KEY (run_id, doc_id, start, "end"));
CREATE INDEX ledger_evidence_doc ON ledger_evidence (doc_id);
CREATE TABLE ledger_figures (
  run_id BIGINT NOT NULL REFERENCES runs (id), pos INTEGER NOT NULL, figure_id TEXT NOT NULL, name TEXT NOT NULL,
  value DOUBLE PRECISION, unit TEXT NOT NULL, as_of TEXT, provenance TEXT NOT NULL, cited INTEGER NOT NULL,
  PRIMARY KEY (run_id, figure_id));
