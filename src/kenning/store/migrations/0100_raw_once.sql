-- Each piece of raw text stored once (issue 24 §2; docs/decisions.md V1–V6; kenning/store/rawpack.py).
-- The seed's columns keep their names; a derived value is '' / NULL in its column and comes back, byte for byte,
-- through the views below. kenning_deflate / kenning_inflate are registered on every connection (rawpack.register).

ALTER TABLE conversations ADD COLUMN raw_conversation_z BLOB;      -- zlib of the JCS text, when not literal
ALTER TABLE messages ADD COLUMN raw_at INTEGER;                     -- code-point offset in the conversation's JCS
ALTER TABLE messages ADD COLUMN raw_len INTEGER;
ALTER TABLE message_parts ADD COLUMN raw_at INTEGER;                -- code-point offset in the message's JCS
ALTER TABLE message_parts ADD COLUMN raw_len INTEGER;
ALTER TABLE message_parts ADD COLUMN text_at INTEGER;               -- code-point offset in messages.text_raw
ALTER TABLE message_parts ADD COLUMN text_len INTEGER;

-- Existing vaults: rewrite their rows innermost first (a part is placed while its message's text is still there).
UPDATE message_parts SET
  text_at = instr((SELECT m.text_raw FROM messages m WHERE m.message_id = message_parts.message_id), text_content) - 1,
  text_len = length(text_content)
WHERE text_content IS NOT NULL AND instr(text_content, char(0)) = 0   -- substr() stops at a NUL
  AND instr((SELECT m.text_raw FROM messages m WHERE m.message_id = message_parts.message_id), char(0)) = 0
  AND instr((SELECT m.text_raw FROM messages m WHERE m.message_id = message_parts.message_id), text_content) > 0;
UPDATE message_parts SET text_content = NULL WHERE text_at IS NOT NULL;

UPDATE message_parts SET
  raw_at = instr((SELECT m.raw_message_json FROM messages m WHERE m.message_id = message_parts.message_id),
                 raw_part_json) - 1,
  raw_len = length(raw_part_json)
WHERE raw_part_json <> ''
  AND instr((SELECT m.raw_message_json FROM messages m WHERE m.message_id = message_parts.message_id),
            raw_part_json) > 0;
UPDATE message_parts SET raw_part_json = '' WHERE raw_at IS NOT NULL;

UPDATE messages SET
  raw_at = instr((SELECT c.raw_conversation_json FROM conversations c WHERE c.conversation_id = messages.conversation_id),
                 raw_message_json) - 1,
  raw_len = length(raw_message_json)
WHERE raw_message_json <> ''
  AND instr((SELECT c.raw_conversation_json FROM conversations c WHERE c.conversation_id = messages.conversation_id),
            raw_message_json) > 0;
UPDATE messages SET raw_message_json = '' WHERE raw_at IS NOT NULL;

UPDATE conversations SET raw_conversation_z = kenning_deflate(raw_conversation_json), raw_conversation_json = '';

-- Every seed column of each table (seed 001 §1.2 names and meanings; Kenning's additions too), the derived ones
-- filled in: a reader that needs the raw JSON reads these views instead of the tables.
CREATE VIEW conversations_raw AS
SELECT conversation_id, export_conversation_id, title, created_at_utc, updated_at_utc, message_count,
       CASE WHEN raw_conversation_z IS NULL THEN raw_conversation_json
            ELSE kenning_inflate(raw_conversation_z) END AS raw_conversation_json,
       source_kind, current_node_message_id, raw_sha256, import_key, first_run_id, last_changed_run_id
FROM conversations;

CREATE VIEW messages_raw AS
SELECT m.message_id, m.conversation_id, m.role, m.parent_id, m.tree_path, m.order_index, m.created_at_utc,
       m.timestamp_quality, m.content_type, m.text_raw, m.text_part_map_json, m.code_fence_ranges_json,
       m.blockquote_ranges_json, m.attachment_count,
       CASE WHEN m.raw_at IS NULL THEN m.raw_message_json
            ELSE substr((SELECT c.raw_conversation_json FROM conversations_raw c
                         WHERE c.conversation_id = m.conversation_id), m.raw_at + 1, m.raw_len) END AS raw_message_json,
       m.export_message_id, m.export_parent_id, m.author_name, m.recipient, m.export_content_type, m.is_hidden,
       m.is_current_branch, m.citation_ranges_json, m.raw_sha256, m.first_run_id, m.last_changed_run_id
FROM messages m;

CREATE VIEW message_parts_raw AS
SELECT p.part_id, p.message_id, p.part_index, p.part_type,
       CASE WHEN p.text_at IS NULL THEN p.text_content
            ELSE substr((SELECT m.text_raw FROM messages m WHERE m.message_id = p.message_id),
                        p.text_at + 1, p.text_len) END AS text_content,
       p.mime_type, p.file_path, p.metadata_json,
       CASE WHEN p.raw_at IS NULL THEN p.raw_part_json
            ELSE substr((SELECT r.raw_message_json FROM messages_raw r WHERE r.message_id = p.message_id),
                        p.raw_at + 1, p.raw_len) END AS raw_part_json
FROM message_parts p;
