DROP TABLE IF EXISTS audit_anchors;
