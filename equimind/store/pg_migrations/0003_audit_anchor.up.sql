-- The audit chain's anchor: each host's audit log (security.audit) also records its HMAC'd tip here, so deleting
-- or rolling back a log together with its .tip file on one host is still detected.
CREATE TABLE audit_anchors (
  log_id TEXT PRIMARY KEY,        -- host name and the log's absolute path
  seq BIGINT NOT NULL,
  hash TEXT NOT NULL,
  key_id TEXT NOT NULL,
  hmac TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
