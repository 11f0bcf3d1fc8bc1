-- The whole research result of a run (memory.store: `equimind report RUN_ID`), as on SQLite.
CREATE TABLE reports (run_id BIGINT PRIMARY KEY REFERENCES runs (id), result TEXT NOT NULL);
