-- Vault size (issue 24 §2, decisions Y2, Y3): an intake observation's memory_mode_snapshot (~230 bytes) and features
-- (~190 bytes) JSON are the same few values on most rows (one snapshot and ~17k feature sets in 98k rows at 100k
-- messages), observed_at and run_id are one value per import run, and source_ref is 'message:' || message_id on
-- 95% of rows. Each distinct value is stored once in intake_values and a row keeps its id; source_ref is kept only
-- where it is not derived. The seed's §20A.2 columns come back under their names through the view
-- `intake_observations`; inserts and deletes on the view go to the row table through triggers, so every reader and
-- writer keeps using the seed's name. The table keeps its rowids and its other columns (the decisions' and queue's
-- foreign keys follow its rename).
CREATE TABLE intake_values (
    id INTEGER PRIMARY KEY,
    value TEXT NOT NULL UNIQUE                -- a JSON value (canonical JCS: equal content, equal bytes), a time, a run id
);
INSERT OR IGNORE INTO intake_values(value)
    SELECT memory_mode_snapshot FROM intake_observations UNION SELECT features FROM intake_observations
    UNION SELECT observed_at FROM intake_observations UNION SELECT run_id FROM intake_observations
    ORDER BY 1;
ALTER TABLE intake_observations ADD COLUMN memory_mode_snapshot_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_observations ADD COLUMN features_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_observations ADD COLUMN observed_at_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_observations ADD COLUMN run_id_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_observations ADD COLUMN source_ref_other TEXT;   -- NULL: 'message:' || message_id
-- CAST … AS TEXT: the JSON and DATETIME columns have NUMERIC affinity, which would make each lookup a scan of
-- intake_values instead of a probe of its unique index (122 s of CPU at 100k messages instead of ~2)
UPDATE intake_observations SET
    memory_mode_snapshot_id = (SELECT id FROM intake_values WHERE value = CAST(memory_mode_snapshot AS TEXT)),
    features_id = (SELECT id FROM intake_values WHERE value = CAST(features AS TEXT)),
    observed_at_id = (SELECT id FROM intake_values WHERE value = CAST(observed_at AS TEXT)),
    run_id_id = (SELECT id FROM intake_values WHERE value = CAST(run_id AS TEXT)),
    source_ref_other = CASE WHEN source_ref IS 'message:' || message_id THEN NULL ELSE source_ref END;
ALTER TABLE intake_observations DROP COLUMN memory_mode_snapshot;
ALTER TABLE intake_observations DROP COLUMN features;
ALTER TABLE intake_observations DROP COLUMN observed_at;
ALTER TABLE intake_observations DROP COLUMN run_id;
ALTER TABLE intake_observations DROP COLUMN source_ref;
ALTER TABLE intake_observations RENAME TO intake_observation_rows;
CREATE VIEW intake_observations AS
    SELECT o.observation_id, t.value AS observed_at, o.surface,
           COALESCE(o.source_ref_other, 'message:' || o.message_id) AS source_ref, o.source_version_id, o.actor,
           s.value AS memory_mode_snapshot, f.value AS features, o.dedup_key, o.unit_kind, o.conversation_id,
           o.message_id, r.value AS run_id
    FROM intake_observation_rows o
    JOIN intake_values s ON s.id = o.memory_mode_snapshot_id
    JOIN intake_values f ON f.id = o.features_id
    JOIN intake_values t ON t.id = o.observed_at_id
    JOIN intake_values r ON r.id = o.run_id_id;
CREATE TRIGGER intake_observations_insert INSTEAD OF INSERT ON intake_observations BEGIN
    INSERT OR IGNORE INTO intake_values(value) VALUES (NEW.memory_mode_snapshot), (NEW.features), (NEW.observed_at),
        (NEW.run_id);
    INSERT INTO intake_observation_rows(observation_id, surface, source_ref_other, source_version_id, actor,
        dedup_key, unit_kind, conversation_id, message_id, memory_mode_snapshot_id, features_id, observed_at_id,
        run_id_id)
    VALUES (NEW.observation_id, NEW.surface,
        CASE WHEN NEW.source_ref IS 'message:' || NEW.message_id THEN NULL ELSE NEW.source_ref END,
        NEW.source_version_id, NEW.actor, NEW.dedup_key, NEW.unit_kind, NEW.conversation_id, NEW.message_id,
        (SELECT id FROM intake_values WHERE value = CAST(NEW.memory_mode_snapshot AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.features AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.observed_at AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.run_id AS TEXT)));
END;
CREATE TRIGGER intake_observations_delete INSTEAD OF DELETE ON intake_observations BEGIN
    DELETE FROM intake_observation_rows WHERE observation_id = OLD.observation_id;
END;
-- Y3: extraction_audit's index on source_content_ref (a Kenning addition of migration 0070, not the seed's) serves
-- no query: the only reader by source is forget's instr() match, a scan either way; 5.3 MB at 100k messages.
DROP INDEX IF EXISTS idx_extraction_audit_source;
