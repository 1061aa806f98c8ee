-- Vault size (issue 24 §2, decision Y22): search_docs.indexed_run_id (R-era bookkeeping: the run that last indexed
-- a document) is written on every document and read by nothing — re-indexing is decided by content_sha256 and
-- source_changed_run_id, and the runs table says what each run did. A run id is 36 characters: ~3.4 MB at 100k.
ALTER TABLE search_docs DROP COLUMN indexed_run_id;
-- Y23: experience_scans (Kenning's own, migration 0040: one row per message the self-statement detector read) keeps
-- its reason, scan time and run id — three values per run — once in intake_values (Y2's table of repeated codes,
-- times and run ids; declared textless), behind a view of the old name and columns. An insert through the view
-- replaces the message's row (the store's upsert); ~3.5 MB at 100k messages.
ALTER TABLE experience_scans ADD COLUMN reason_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE experience_scans ADD COLUMN scanned_at_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE experience_scans ADD COLUMN run_id_id INTEGER NOT NULL DEFAULT 0;
INSERT OR IGNORE INTO intake_values(value)
    SELECT reason FROM experience_scans UNION SELECT scanned_at FROM experience_scans
    UNION SELECT run_id FROM experience_scans ORDER BY 1;
UPDATE experience_scans SET
    reason_id = (SELECT id FROM intake_values WHERE value = CAST(reason AS TEXT)),
    scanned_at_id = (SELECT id FROM intake_values WHERE value = CAST(scanned_at AS TEXT)),
    run_id_id = (SELECT id FROM intake_values WHERE value = CAST(run_id AS TEXT));
ALTER TABLE experience_scans DROP COLUMN reason;
ALTER TABLE experience_scans DROP COLUMN scanned_at;
ALTER TABLE experience_scans DROP COLUMN run_id;
ALTER TABLE experience_scans RENAME TO experience_scan_rows;
CREATE VIEW experience_scans AS
    SELECT s.message_id, s.raw_sha256, s.detector_version, s.selected, r.value AS reason, t.value AS scanned_at,
           u.value AS run_id
    FROM experience_scan_rows s
    JOIN intake_values r ON r.id = s.reason_id
    JOIN intake_values t ON t.id = s.scanned_at_id
    JOIN intake_values u ON u.id = s.run_id_id;
CREATE TRIGGER experience_scans_insert INSTEAD OF INSERT ON experience_scans BEGIN
    INSERT OR IGNORE INTO intake_values(value) VALUES (NEW.reason), (NEW.scanned_at), (NEW.run_id);
    DELETE FROM experience_scan_rows WHERE message_id = NEW.message_id;
    INSERT INTO experience_scan_rows(message_id, raw_sha256, detector_version, selected, reason_id, scanned_at_id,
        run_id_id)
    VALUES (NEW.message_id, NEW.raw_sha256, NEW.detector_version, NEW.selected,
        (SELECT id FROM intake_values WHERE value = CAST(NEW.reason AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.scanned_at AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.run_id AS TEXT)));
END;
CREATE TRIGGER experience_scans_delete INSTEAD OF DELETE ON experience_scans BEGIN
    DELETE FROM experience_scan_rows WHERE message_id = OLD.message_id;
END;
-- Y24: backlink_observations.input_hash (Kenning's own, migration 0090: the sha256 of the text back-link Stage 1
-- read, looked up to skip a text seen before) is kept as its first 16 bytes instead of 64 hex characters, in the
-- row and in its index (N12's width): 96 bytes a message fewer, ~9 MB at 100k messages.
UPDATE backlink_observations SET input_hash = unhex(substr(input_hash, 1, 32)) WHERE typeof(input_hash) = 'text';
-- Y25: an intake observation's id is 'obs_' || the first 32 characters of its dedup_key (intake.envelope), so the
-- row keeps only the rest of the key (dedup_key_rest) and the view puts it back; a key that does not give the id
-- (none the funnel writes) is kept whole in dedup_key_other. The unique index on dedup_key goes: a key that gives
-- the id is unique because the id is the primary key; the insert trigger checks a new key against the others (one
-- primary-key probe, one probe of the small partial index). ~13 MB at 100k messages (the key's first half in the
-- row, and the 64-character index).
DROP VIEW intake_observations;
DROP INDEX idx_intake_observations_dedup;
ALTER TABLE intake_observation_rows ADD COLUMN dedup_key_rest TEXT;    -- NULL: the key is in dedup_key_other
ALTER TABLE intake_observation_rows ADD COLUMN dedup_key_other TEXT;   -- NULL: 'obs_' || key[:32] is the id
UPDATE intake_observation_rows SET
    dedup_key_rest = CASE WHEN observation_id = 'obs_' || substr(dedup_key, 1, 32) THEN substr(dedup_key, 33) END,
    dedup_key_other = CASE WHEN observation_id = 'obs_' || substr(dedup_key, 1, 32) THEN NULL ELSE dedup_key END;
ALTER TABLE intake_observation_rows DROP COLUMN dedup_key;
CREATE UNIQUE INDEX idx_intake_observations_dedup_other ON intake_observation_rows(dedup_key_other)
    WHERE dedup_key_other IS NOT NULL;
CREATE VIEW intake_observations AS
    SELECT o.observation_id, t.value AS observed_at, o.surface,
           COALESCE(o.source_ref_other, 'message:' || o.message_id) AS source_ref, o.source_version_id, o.actor,
           s.value AS memory_mode_snapshot, f.value AS features,
           COALESCE(o.dedup_key_other, substr(o.observation_id, 5) || o.dedup_key_rest) AS dedup_key,
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
                        AND dedup_key_rest = substr(NEW.dedup_key, 33));
    INSERT OR IGNORE INTO intake_values(value) VALUES (NEW.memory_mode_snapshot), (NEW.features), (NEW.observed_at),
        (NEW.run_id);
    INSERT INTO intake_observation_rows(observation_id, surface, source_ref_other, source_version_id, actor,
        dedup_key_rest, dedup_key_other, unit_kind, conversation_id, message_id, memory_mode_snapshot_id,
        features_id, observed_at_id, run_id_id)
    VALUES (NEW.observation_id, NEW.surface,
        CASE WHEN NEW.source_ref IS 'message:' || NEW.message_id THEN NULL ELSE NEW.source_ref END,
        NEW.source_version_id, NEW.actor,
        CASE WHEN NEW.observation_id IS 'obs_' || substr(NEW.dedup_key, 1, 32) THEN substr(NEW.dedup_key, 33) END,
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
-- Y26: idx_messages_changed (migration 0001, Kenning's own: seed 001 names only the primary key,
-- idx_messages_conversation and idx_messages_order) serves no query: no statement selects messages by
-- last_changed_run_id; the index stage compares it with search_docs.source_changed_run_id while it walks the
-- messages in conversation order (idx_messages_order). ~4.7 MB at 100k messages, and one index less per insert.
DROP INDEX IF EXISTS idx_messages_changed;
-- Y27: search_docs.content_sha256 (Kenning's own: the hash of a document's indexed fields, compared to tell an
-- unchanged document, and copied into search_vector_skips) is kept as the first 16 bytes of the sha256 instead of
-- 64 hex characters (retrieve.docs.content_hash); both tables are converted so their join still matches. An empty
-- string (the "index this entity again" mark) stays as it is. ~4.5 MB at 100k messages.
UPDATE search_docs SET content_sha256 = unhex(substr(content_sha256, 1, 32))
    WHERE typeof(content_sha256) = 'text' AND length(content_sha256) = 64;
UPDATE search_vector_skips SET content_sha256 = unhex(substr(content_sha256, 1, 32))
    WHERE typeof(content_sha256) = 'text' AND length(content_sha256) = 64;
