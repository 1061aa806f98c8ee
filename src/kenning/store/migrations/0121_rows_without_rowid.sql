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

-- Z1 also: pending_extraction_audits (migration 0086) is a link table whose primary key is its two columns, so
-- every row was stored twice (the rowid table and the key's index); WITHOUT ROWID keeps it once.
CREATE TABLE pending_extraction_audits_z1 (
    pending_id TEXT NOT NULL REFERENCES pending_extractions(pending_id),
    extraction_id TEXT NOT NULL,
    PRIMARY KEY (pending_id, extraction_id)
) WITHOUT ROWID;
INSERT INTO pending_extraction_audits_z1 SELECT pending_id, extraction_id FROM pending_extraction_audits
    ORDER BY pending_id, extraction_id;
DROP TABLE pending_extraction_audits;
ALTER TABLE pending_extraction_audits_z1 RENAME TO pending_extraction_audits;

-- Z6: an observation's source_version_id (a message's content_version: 32 hex digits of a sha256) and the half of
-- its dedup key the id does not hold (dedup_key_rest, Y25: 32 hex digits) are stored as the 16 bytes they spell
-- when they are exactly 32 lowercase hex digits, else as they are (a note's version id, a conversation's 64-hex
-- raw_sha256, a hand-made key). The view gives back lower(hex(…)) — the same text — so every reader sees the seed's
-- values; the insert trigger converts; the store's version lookup reads the row table with the converted value
-- (kenning.store.intake.version_key) so idx_intake_observations_version still serves it.
UPDATE intake_observation_rows SET source_version_id = unhex(source_version_id)
    WHERE typeof(source_version_id) = 'text' AND length(source_version_id) = 32
      AND source_version_id NOT GLOB '*[^0-9a-f]*';
UPDATE intake_observation_rows SET dedup_key_rest = unhex(dedup_key_rest)
    WHERE typeof(dedup_key_rest) = 'text' AND length(dedup_key_rest) = 32 AND dedup_key_rest NOT GLOB '*[^0-9a-f]*';
DROP VIEW intake_observations;
CREATE VIEW intake_observations AS
    SELECT o.observation_id, t.value AS observed_at, o.surface,
           COALESCE(o.source_ref_other, 'message:' || o.message_id) AS source_ref,
           CASE WHEN typeof(o.source_version_id) = 'blob' THEN lower(hex(o.source_version_id))
                ELSE o.source_version_id END AS source_version_id, o.actor,
           s.value AS memory_mode_snapshot, f.value AS features,
           COALESCE(o.dedup_key_other, substr(o.observation_id, 5) || CASE WHEN typeof(o.dedup_key_rest) = 'blob'
                    THEN lower(hex(o.dedup_key_rest)) ELSE o.dedup_key_rest END) AS dedup_key,
           o.unit_kind, o.conversation_id, o.message_id, r.value AS run_id
    FROM intake_observation_rows o
    JOIN intake_values s ON s.id = o.memory_mode_snapshot_id
    JOIN intake_values f ON f.id = o.features_id
    JOIN intake_values t ON t.id = o.observed_at_id
    JOIN intake_values r ON r.id = o.run_id_id;
CREATE TRIGGER intake_observations_insert INSTEAD OF INSERT ON intake_observations BEGIN
    SELECT RAISE(ABORT, 'NOT NULL constraint failed: intake_observations.dedup_key') WHERE NEW.dedup_key IS NULL;
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: intake_observations.dedup_key')
        WHERE EXISTS (SELECT 1 FROM intake_observation_rows WHERE dedup_key_other = NEW.dedup_key)
           OR EXISTS (SELECT 1 FROM intake_observation_rows
                      WHERE observation_id = 'obs_' || substr(NEW.dedup_key, 1, 32) AND dedup_key_other IS NULL
                        AND dedup_key_rest = CASE WHEN length(substr(NEW.dedup_key, 33)) = 32
                                                   AND substr(NEW.dedup_key, 33) NOT GLOB '*[^0-9a-f]*'
                                                  THEN unhex(substr(NEW.dedup_key, 33))
                                                  ELSE substr(NEW.dedup_key, 33) END);
    INSERT OR IGNORE INTO intake_values(value) VALUES (NEW.memory_mode_snapshot), (NEW.features), (NEW.observed_at),
        (NEW.run_id);
    INSERT INTO intake_observation_rows(observation_id, surface, source_ref_other, source_version_id, actor,
        dedup_key_rest, dedup_key_other, unit_kind, conversation_id, message_id, memory_mode_snapshot_id,
        features_id, observed_at_id, run_id_id)
    VALUES (NEW.observation_id, NEW.surface,
        CASE WHEN NEW.source_ref IS 'message:' || NEW.message_id THEN NULL ELSE NEW.source_ref END,
        CASE WHEN typeof(NEW.source_version_id) = 'text' AND length(NEW.source_version_id) = 32
                  AND NEW.source_version_id NOT GLOB '*[^0-9a-f]*'
             THEN unhex(NEW.source_version_id) ELSE NEW.source_version_id END,
        NEW.actor,
        CASE WHEN NEW.observation_id IS 'obs_' || substr(NEW.dedup_key, 1, 32)
             THEN CASE WHEN length(substr(NEW.dedup_key, 33)) = 32 AND substr(NEW.dedup_key, 33) NOT GLOB '*[^0-9a-f]*'
                       THEN unhex(substr(NEW.dedup_key, 33)) ELSE substr(NEW.dedup_key, 33) END END,
        CASE WHEN NEW.observation_id IS 'obs_' || substr(NEW.dedup_key, 1, 32) THEN NULL ELSE NEW.dedup_key END,
        NEW.unit_kind, NEW.conversation_id, NEW.message_id,
        (SELECT id FROM intake_values WHERE value = CAST(NEW.memory_mode_snapshot AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.features AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.observed_at AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.run_id AS TEXT)));
END;
CREATE TRIGGER intake_observations_delete INSTEAD OF DELETE ON intake_observations BEGIN
    DELETE FROM intake_observation_rows WHERE observation_id = OLD.observation_id;
END;
