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
