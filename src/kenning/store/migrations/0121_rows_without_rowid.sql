-- Vault size (issue 24 §2, decisions Z1–Z2). Three row tables keyed by a text id with no other index (Y20's
-- extraction_audit_rows and intake_dispatch_decision_rows, Y23's experience_scan_rows) kept each key twice: once
-- in the table with its rowid and again in the primary key's automatic index. As WITHOUT ROWID tables the key is
-- stored once, in the table's own b-tree. Nothing reads their rowids; the views of the seed's names and their
-- triggers name the tables, which keep their names and columns in the same order (each is built anew under a
-- temporary name, filled, and renamed over the old one, so the views and triggers read the new table; the renames
-- run with legacy_alter_table on, which skips the check that every view resolves while the old table is gone).
PRAGMA legacy_alter_table=ON;
CREATE TABLE extraction_audit_rows_z1 (
    extraction_id TEXT PRIMARY KEY,
    source_content_ref TEXT NOT NULL,
    significance_score REAL NOT NULL,
    dispatch_decision TEXT NOT NULL CHECK (dispatch_decision IN ('skip', 'shallow', 'deep', 'defer')),
    error_code TEXT,
    retry_count INTEGER NOT NULL DEFAULT 0,
    skip_content_fingerprint TEXT,
    skip_entity_mentions JSON,
    items_extracted INTEGER NOT NULL DEFAULT 0,
    items_promoted INTEGER NOT NULL DEFAULT 0,
    items_filtered_by_write_gate INTEGER NOT NULL DEFAULT 0,
    surface_id INTEGER NOT NULL DEFAULT 0,
    extraction_prompt_version_id INTEGER NOT NULL DEFAULT 0,
    skip_reason_id INTEGER,
    knowledge_commit_ids_id INTEGER NOT NULL DEFAULT 0,
    extracted_at_id INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO extraction_audit_rows_z1 SELECT extraction_id, source_content_ref, significance_score, dispatch_decision,
    error_code, retry_count, skip_content_fingerprint, skip_entity_mentions, items_extracted, items_promoted,
    items_filtered_by_write_gate, surface_id, extraction_prompt_version_id, skip_reason_id, knowledge_commit_ids_id,
    extracted_at_id FROM extraction_audit_rows ORDER BY extraction_id;
DROP TABLE extraction_audit_rows;
ALTER TABLE extraction_audit_rows_z1 RENAME TO extraction_audit_rows;

CREATE TABLE intake_dispatch_decision_rows_z1 (
    observation_id TEXT PRIMARY KEY REFERENCES "intake_observation_rows"(observation_id),
    decision TEXT NOT NULL CHECK (decision IN ('skip', 'shallow', 'deep', 'defer')),
    score REAL NOT NULL,
    queue_class_id INTEGER NOT NULL DEFAULT 0,
    reason_codes_id INTEGER NOT NULL DEFAULT 0,
    persistence_mode_id INTEGER NOT NULL DEFAULT 0,
    created_at_id INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO intake_dispatch_decision_rows_z1 SELECT observation_id, decision, score, queue_class_id, reason_codes_id,
    persistence_mode_id, created_at_id FROM intake_dispatch_decision_rows ORDER BY observation_id;
DROP TABLE intake_dispatch_decision_rows;
ALTER TABLE intake_dispatch_decision_rows_z1 RENAME TO intake_dispatch_decision_rows;

CREATE TABLE experience_scan_rows_z1 (
    message_id TEXT PRIMARY KEY REFERENCES messages(message_id),
    raw_sha256 TEXT NOT NULL,                     -- messages.raw_sha256 when scanned
    detector_version INTEGER NOT NULL,
    selected INTEGER NOT NULL CHECK (selected IN (0, 1)),
    reason_id INTEGER NOT NULL DEFAULT 0,
    scanned_at_id INTEGER NOT NULL DEFAULT 0,
    run_id_id INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO experience_scan_rows_z1 SELECT message_id, raw_sha256, detector_version, selected, reason_id,
    scanned_at_id, run_id_id FROM experience_scan_rows ORDER BY message_id;
DROP TABLE experience_scan_rows;
ALTER TABLE experience_scan_rows_z1 RENAME TO experience_scan_rows;
PRAGMA legacy_alter_table=OFF;

-- Z2: idx_intake_observations_message (Kenning's own, migration 0086; seed 003 names no index on the table) serves
-- no query: forget collects observations by conversation OR message — one scan of the rows, which a multi-index OR
-- needed both indexes to avoid — and nothing else selects observations by message (EXPLAIN QUERY PLAN in the test).
DROP INDEX IF EXISTS idx_intake_observations_message;
