-- Issue 23 §1 `kenning forget`: what was forgotten, when, and how much — never the content (decision P3).
CREATE TABLE forget_log (
  forget_id TEXT PRIMARY KEY,
  forgotten_at_utc TEXT NOT NULL,
  selector TEXT NOT NULL,               -- conversation | source | between | matching (the argument is not kept)
  conversations INTEGER NOT NULL,
  messages INTEGER NOT NULL,
  counts_json TEXT NOT NULL,            -- rows removed per table, rows redacted per table
  vacuumed INTEGER NOT NULL DEFAULT 0
);

-- A re-import skips these conversations unless `--include-forgotten` (decision P4). The id is Kenning's opaque
-- uuid5 of the export's conversation id: it names no content.
CREATE TABLE forgotten_conversations (
  conversation_id TEXT PRIMARY KEY,
  forget_id TEXT NOT NULL REFERENCES forget_log(forget_id)
) WITHOUT ROWID;
