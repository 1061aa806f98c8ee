-- Vault size (issue 24 §2, decision Y20): extraction_audit (seed 003 §38) and intake_dispatch_decisions (§20A.2)
-- have one row per observation, skips included, and most of their text columns are the same few values on every
-- row: the surface, the prompt version, the skip reason ('score_dispatch,below_shallow_threshold' …), '[]' commit
-- ids and one extraction time per run; the queue class, reason codes, persistence mode and creation time of a
-- decision. Each such value is stored once in Y2's intake_values and a row keeps its id. The seed's tables come back
-- under their names and column order as views; inserts and deletes on a view go to the row table through triggers
-- (an insert replaces the row of the same key, as the store's INSERT OR REPLACE did; the outer statement must not
-- carry a conflict clause, which would override the inner INSERT OR IGNORE of the values). The CHECKs of the moved
-- columns are kept by the insert triggers. skip_entity_mentions stays a column: it can name a person's entities.
ALTER TABLE extraction_audit ADD COLUMN surface_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_audit ADD COLUMN extraction_prompt_version_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_audit ADD COLUMN skip_reason_id INTEGER;                -- NULL: no skip reason
ALTER TABLE extraction_audit ADD COLUMN knowledge_commit_ids_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_audit ADD COLUMN extracted_at_id INTEGER NOT NULL DEFAULT 0;
INSERT OR IGNORE INTO intake_values(value)
    SELECT surface FROM extraction_audit UNION SELECT extraction_prompt_version FROM extraction_audit
    UNION SELECT skip_reason FROM extraction_audit WHERE skip_reason IS NOT NULL
    UNION SELECT knowledge_commit_ids FROM extraction_audit UNION SELECT extracted_at FROM extraction_audit
    ORDER BY 1;
-- CAST … AS TEXT: JSON and DATETIME columns have NUMERIC affinity (Y2: a scan per lookup otherwise)
UPDATE extraction_audit SET
    surface_id = (SELECT id FROM intake_values WHERE value = CAST(surface AS TEXT)),
    extraction_prompt_version_id = (SELECT id FROM intake_values WHERE value = CAST(extraction_prompt_version AS TEXT)),
    skip_reason_id = (SELECT id FROM intake_values WHERE value = CAST(skip_reason AS TEXT)),
    knowledge_commit_ids_id = (SELECT id FROM intake_values WHERE value = CAST(knowledge_commit_ids AS TEXT)),
    extracted_at_id = (SELECT id FROM intake_values WHERE value = CAST(extracted_at AS TEXT));
ALTER TABLE extraction_audit DROP COLUMN surface;
ALTER TABLE extraction_audit DROP COLUMN extraction_prompt_version;
ALTER TABLE extraction_audit DROP COLUMN skip_reason;
ALTER TABLE extraction_audit DROP COLUMN knowledge_commit_ids;
ALTER TABLE extraction_audit DROP COLUMN extracted_at;
ALTER TABLE extraction_audit RENAME TO extraction_audit_rows;
CREATE VIEW extraction_audit AS
    SELECT a.extraction_id, s.value AS surface, a.source_content_ref, p.value AS extraction_prompt_version,
           a.significance_score, a.dispatch_decision, r.value AS skip_reason, a.error_code, a.retry_count,
           a.skip_content_fingerprint, a.skip_entity_mentions, a.items_extracted, a.items_promoted,
           a.items_filtered_by_write_gate, k.value AS knowledge_commit_ids, t.value AS extracted_at
    FROM extraction_audit_rows a
    JOIN intake_values s ON s.id = a.surface_id
    JOIN intake_values p ON p.id = a.extraction_prompt_version_id
    LEFT JOIN intake_values r ON r.id = a.skip_reason_id
    JOIN intake_values k ON k.id = a.knowledge_commit_ids_id
    JOIN intake_values t ON t.id = a.extracted_at_id;
CREATE TRIGGER extraction_audit_insert INSTEAD OF INSERT ON extraction_audit BEGIN
    INSERT OR IGNORE INTO intake_values(value) VALUES (NEW.surface), (NEW.extraction_prompt_version),
        (NEW.skip_reason), (NEW.knowledge_commit_ids), (NEW.extracted_at);
    DELETE FROM extraction_audit_rows WHERE extraction_id = NEW.extraction_id;
    INSERT INTO extraction_audit_rows(extraction_id, source_content_ref, significance_score, dispatch_decision,
        error_code, retry_count, skip_content_fingerprint, skip_entity_mentions, items_extracted, items_promoted,
        items_filtered_by_write_gate, surface_id, extraction_prompt_version_id, skip_reason_id,
        knowledge_commit_ids_id, extracted_at_id)
    VALUES (NEW.extraction_id, NEW.source_content_ref, NEW.significance_score, NEW.dispatch_decision,
        NEW.error_code, NEW.retry_count, NEW.skip_content_fingerprint, NEW.skip_entity_mentions,
        NEW.items_extracted, NEW.items_promoted, NEW.items_filtered_by_write_gate,
        (SELECT id FROM intake_values WHERE value = CAST(NEW.surface AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.extraction_prompt_version AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.skip_reason AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.knowledge_commit_ids AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.extracted_at AS TEXT)));
END;
CREATE TRIGGER extraction_audit_delete INSTEAD OF DELETE ON extraction_audit BEGIN
    DELETE FROM extraction_audit_rows WHERE extraction_id = OLD.extraction_id;
END;

ALTER TABLE intake_dispatch_decisions ADD COLUMN queue_class_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_dispatch_decisions ADD COLUMN reason_codes_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_dispatch_decisions ADD COLUMN persistence_mode_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intake_dispatch_decisions ADD COLUMN created_at_id INTEGER NOT NULL DEFAULT 0;
INSERT OR IGNORE INTO intake_values(value)
    SELECT queue_class FROM intake_dispatch_decisions UNION SELECT reason_codes FROM intake_dispatch_decisions
    UNION SELECT persistence_mode FROM intake_dispatch_decisions UNION SELECT created_at FROM intake_dispatch_decisions
    ORDER BY 1;
UPDATE intake_dispatch_decisions SET
    queue_class_id = (SELECT id FROM intake_values WHERE value = CAST(queue_class AS TEXT)),
    reason_codes_id = (SELECT id FROM intake_values WHERE value = CAST(reason_codes AS TEXT)),
    persistence_mode_id = (SELECT id FROM intake_values WHERE value = CAST(persistence_mode AS TEXT)),
    created_at_id = (SELECT id FROM intake_values WHERE value = CAST(created_at AS TEXT));
ALTER TABLE intake_dispatch_decisions DROP COLUMN queue_class;
ALTER TABLE intake_dispatch_decisions DROP COLUMN reason_codes;
ALTER TABLE intake_dispatch_decisions DROP COLUMN persistence_mode;
ALTER TABLE intake_dispatch_decisions DROP COLUMN created_at;
ALTER TABLE intake_dispatch_decisions RENAME TO intake_dispatch_decision_rows;
CREATE VIEW intake_dispatch_decisions AS
    SELECT d.observation_id, d.decision, q.value AS queue_class, r.value AS reason_codes, d.score,
           p.value AS persistence_mode, c.value AS created_at
    FROM intake_dispatch_decision_rows d
    JOIN intake_values q ON q.id = d.queue_class_id
    JOIN intake_values r ON r.id = d.reason_codes_id
    JOIN intake_values p ON p.id = d.persistence_mode_id
    JOIN intake_values c ON c.id = d.created_at_id;
CREATE TRIGGER intake_dispatch_decisions_insert INSTEAD OF INSERT ON intake_dispatch_decisions BEGIN
    SELECT RAISE(ABORT, 'CHECK constraint failed: queue_class')
        WHERE NEW.queue_class NOT IN ('critical_non_drop', 'high_priority', 'normal', 'background');
    SELECT RAISE(ABORT, 'CHECK constraint failed: persistence_mode')
        WHERE NEW.persistence_mode NOT IN ('accessible_only', 'episodic_recall', 'candidate_graph', 'durable_graph');
    INSERT OR IGNORE INTO intake_values(value) VALUES (NEW.queue_class), (NEW.reason_codes), (NEW.persistence_mode),
        (NEW.created_at);
    DELETE FROM intake_dispatch_decision_rows WHERE observation_id = NEW.observation_id;
    INSERT INTO intake_dispatch_decision_rows(observation_id, decision, score, queue_class_id, reason_codes_id,
        persistence_mode_id, created_at_id)
    VALUES (NEW.observation_id, NEW.decision, NEW.score,
        (SELECT id FROM intake_values WHERE value = CAST(NEW.queue_class AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.reason_codes AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.persistence_mode AS TEXT)),
        (SELECT id FROM intake_values WHERE value = CAST(NEW.created_at AS TEXT)));
END;
CREATE TRIGGER intake_dispatch_decisions_delete INSTEAD OF DELETE ON intake_dispatch_decisions BEGIN
    DELETE FROM intake_dispatch_decision_rows WHERE observation_id = OLD.observation_id;
END;
-- Y21: idx_intake_decisions_decision (Kenning's own, migration 0086) serves no query: nothing selects decisions by
-- their decision; they are read by observation id (the key), joined by it, or grouped with reason codes (which the
-- view joins in, so the grouping sorts either way). ~2 MB at 100k messages.
DROP INDEX IF EXISTS idx_intake_decisions_decision;
