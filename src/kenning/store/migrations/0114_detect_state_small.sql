-- Stage 2A's own bookkeeping made small (issue 24 §2; docs/decisions.md N10, N12).
--
-- detect_message_state: one row per message, keyed by the message's rowid, holding 16 bytes of the sha256 over the
-- message's id and every input its detections depend on. The old row (message_id text, 64-hex hash, run id) was
-- ~150 bytes plus an index on message_id. The hash covers the message id, so a rowid that ever pointed at another
-- message can only cause a recompute, never a wrong skip. The old hashes cannot be carried over (they did not cover
-- the id), so the next stage 2A run detects every message once more and writes the same rows.
DROP TABLE detect_message_state;
CREATE TABLE detect_message_state (
  message_rowid INTEGER PRIMARY KEY,    -- messages.rowid
  input_hash BLOB NOT NULL              -- 16 bytes; x'' (never equal): detect this message again next run (E28)
);

-- The rules NER backend is deterministic code: its runs are replayed by running it again, so its per-message raw
-- output is not kept (N10). Model backends (spaCy, LLM) keep theirs.
DELETE FROM ner_model_run_io WHERE run_id IN (SELECT run_id FROM ner_model_runs WHERE model_name = 'kenning-rules');
UPDATE ner_model_runs SET raw_io_json = json_set(raw_io_json, '$.io_table', json('null'), '$.replay', 'rerun')
WHERE model_name = 'kenning-rules' AND json_valid(raw_io_json);
