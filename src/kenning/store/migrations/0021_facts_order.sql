-- Issue 9 §4 (decisions B40–B41): `kenning facts` lists a subject's assertions oldest message first, LIMIT 200.
-- The order is the message's (created_at_utc IS NULL, created_at_utc, conversation_id, order_index), then
-- char_start, assertion_id; with it only on messages, the owner's ~all rows were joined and sorted before LIMIT.
-- message_order_key is that message part as one text, kept by triggers (never by code), so an index on
-- (filter column, message_order_key) serves the filter AND the order:
--   '0' || created_at_utc  (or '1' when NULL: NULL times last)  || x'01' || conversation_id
--   || x'01' || zero-padded order_index
-- x'01' sorts below every character of a timestamp or id, so the text compares exactly as the tuple.
ALTER TABLE assertions ADD COLUMN message_order_key TEXT;

UPDATE assertions SET message_order_key = (
  SELECT CASE WHEN m.created_at_utc IS NULL THEN '1' ELSE '0' || m.created_at_utc END || char(1)
         || m.conversation_id || char(1) || printf('%012d', m.order_index)
  FROM messages m WHERE m.message_id = assertions.message_id);

CREATE TRIGGER assertions_order_key_insert AFTER INSERT ON assertions BEGIN
  UPDATE assertions SET message_order_key = (
    SELECT CASE WHEN m.created_at_utc IS NULL THEN '1' ELSE '0' || m.created_at_utc END || char(1)
           || m.conversation_id || char(1) || printf('%012d', m.order_index)
    FROM messages m WHERE m.message_id = NEW.message_id)
  WHERE rowid = NEW.rowid;
END;

CREATE TRIGGER assertions_order_key_message AFTER UPDATE OF message_id ON assertions BEGIN
  UPDATE assertions SET message_order_key = (
    SELECT CASE WHEN m.created_at_utc IS NULL THEN '1' ELSE '0' || m.created_at_utc END || char(1)
           || m.conversation_id || char(1) || printf('%012d', m.order_index)
    FROM messages m WHERE m.message_id = NEW.message_id)
  WHERE rowid = NEW.rowid;
END;

CREATE TRIGGER messages_order_key AFTER UPDATE OF created_at_utc, conversation_id, order_index ON messages BEGIN
  UPDATE assertions SET message_order_key =
    CASE WHEN NEW.created_at_utc IS NULL THEN '1' ELSE '0' || NEW.created_at_utc END || char(1)
    || NEW.conversation_id || char(1) || printf('%012d', NEW.order_index)
  WHERE message_id = NEW.message_id;
END;

-- the filter column, then the order, then the columns `facts`' other filters test (so a row that fails them is
-- rejected from the index entry, never read from the table: SQLite defers the table seek); the old single-column
-- indexes are prefixes of these
DROP INDEX idx_assertions_subject;
DROP INDEX idx_assertions_predicate;
DROP INDEX idx_assertions_object_entity;
CREATE INDEX idx_assertions_subject_order
  ON assertions(subject_entity_id, message_order_key, predicate_id, asserted_role, modality);
CREATE INDEX idx_assertions_object_order
  ON assertions(object_entity_id, message_order_key, predicate_id, asserted_role, modality)
  WHERE object_entity_id IS NOT NULL;
CREATE INDEX idx_assertions_predicate_order
  ON assertions(predicate_id, message_order_key, subject_entity_id, object_entity_id, asserted_role, modality);
CREATE INDEX idx_assertions_order ON assertions(message_order_key, asserted_role, modality);
