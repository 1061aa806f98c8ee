-- Vault size (issue 24 §2, decisions Y2, Y3): an intake observation's memory_mode_snapshot (~300 bytes) and features
-- (~200 bytes) JSON are the same few values on most rows (one snapshot and ~17k feature sets in 98k rows at 100k
-- messages): each distinct value is stored once in intake_json_values and a row keeps its id. The seed's
-- §20A.2 columns come back under their names through the view `intake_observations`; inserts and deletes on the
-- view go to the row table through triggers, so every reader and writer keeps using the seed's name.
-- The table keeps its rowids and every other column (the decisions' and queue's foreign keys follow its rename).
CREATE TABLE intake_json_values (
    id INTEGER PRIMARY KEY,
    value JSON NOT NULL UNIQUE                -- canonical JSON (JCS): equal content is equal bytes
);
INSERT OR IGNORE INTO intake_json_values(value)
    SELECT memory_mode_snapshot FROM intake_observations UNION SELECT features FROM intake_observations
    ORDER BY 1;
ALTER TABLE intake_observations ADD COLUMN memory_mode_snapshot_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_observations ADD COLUMN features_id INTEGER NOT NULL DEFAULT 0;
UPDATE intake_observations SET
    memory_mode_snapshot_id = (SELECT id FROM intake_json_values WHERE value = memory_mode_snapshot),
    features_id = (SELECT id FROM intake_json_values WHERE value = features);
ALTER TABLE intake_observations DROP COLUMN memory_mode_snapshot;
ALTER TABLE intake_observations DROP COLUMN features;
ALTER TABLE intake_observations RENAME TO intake_observation_rows;
CREATE VIEW intake_observations AS
    SELECT o.observation_id, o.observed_at, o.surface, o.source_ref, o.source_version_id, o.actor,
           s.value AS memory_mode_snapshot, f.value AS features, o.dedup_key, o.unit_kind, o.conversation_id,
           o.message_id, o.run_id
    FROM intake_observation_rows o
    JOIN intake_json_values s ON s.id = o.memory_mode_snapshot_id
    JOIN intake_json_values f ON f.id = o.features_id;
CREATE TRIGGER intake_observations_insert INSTEAD OF INSERT ON intake_observations BEGIN
    INSERT OR IGNORE INTO intake_json_values(value) VALUES (NEW.memory_mode_snapshot);
    INSERT OR IGNORE INTO intake_json_values(value) VALUES (NEW.features);
    INSERT INTO intake_observation_rows(observation_id, observed_at, surface, source_ref, source_version_id, actor,
        dedup_key, unit_kind, conversation_id, message_id, run_id, memory_mode_snapshot_id, features_id)
    VALUES (NEW.observation_id, NEW.observed_at, NEW.surface, NEW.source_ref, NEW.source_version_id, NEW.actor,
        NEW.dedup_key, NEW.unit_kind, NEW.conversation_id, NEW.message_id, NEW.run_id,
        (SELECT id FROM intake_json_values WHERE value = NEW.memory_mode_snapshot),
        (SELECT id FROM intake_json_values WHERE value = NEW.features));
END;
CREATE TRIGGER intake_observations_delete INSTEAD OF DELETE ON intake_observations BEGIN
    DELETE FROM intake_observation_rows WHERE observation_id = OLD.observation_id;
END;
-- Y3: extraction_audit's index on source_content_ref (a Kenning addition of migration 0070, not the seed's) serves
-- no query: the only reader by source is forget's instr() match, a scan either way; 5.3 MB at 100k messages.
DROP INDEX IF EXISTS idx_extraction_audit_source;
