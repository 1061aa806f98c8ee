-- Foundation: vault metadata, runs and their events, sources, rejects, and the raw layer
-- (seed 001 §1.2 tables with Kenning's additions marked).

CREATE TABLE vault_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  stage TEXT NOT NULL,
  seq INTEGER NOT NULL,                 -- nth run of this stage in this vault
  started_at_utc TEXT NOT NULL,
  finished_at_utc TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','ok','failed')),
  counts_json TEXT,
  config_hash TEXT NOT NULL,
  clock_mode TEXT NOT NULL CHECK (clock_mode IN ('wall','frozen')),
  args_json TEXT,
  error TEXT,
  kenning_version TEXT NOT NULL
);
CREATE INDEX idx_runs_stage ON runs(stage, seq);

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  seq INTEGER NOT NULL,
  level TEXT NOT NULL CHECK (level IN ('DEBUG','INFO','WARN','ERROR')),
  code TEXT NOT NULL,
  message TEXT NOT NULL,
  context_json TEXT,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX idx_run_events_code ON run_events(code);

CREATE TABLE sources (
  source_id TEXT PRIMARY KEY,           -- uuid5(["source", sha256 of the file bytes])
  kind TEXT NOT NULL,                   -- chatgpt_export | transcript | notes | wiki | ...
  path TEXT NOT NULL,                   -- as given when last imported
  sha256 TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  first_run_id TEXT NOT NULL,
  last_run_id TEXT NOT NULL,
  stats_json TEXT
);

CREATE TABLE rejects (
  reject_id TEXT PRIMARY KEY,           -- uuid5(["reject", source sha256, record index, pointer])
  run_id TEXT NOT NULL,
  source_path TEXT NOT NULL,
  source_sha256 TEXT NOT NULL,
  record_index INTEGER,                 -- position of the record in the file (0-based)
  record_ref TEXT,                      -- the export's conversation id, when it could be read
  pointer TEXT,                         -- JSON pointer inside the record (NULL = the whole record)
  action TEXT NOT NULL CHECK (action IN ('skipped','repaired')),
  reason_code TEXT NOT NULL,
  message TEXT NOT NULL,
  raw_text TEXT                         -- the record as it stood in the file (undecodable bytes as U+FFFD)
);
CREATE INDEX idx_rejects_run ON rejects(run_id);

-- Previous raw versions, kept when a newer export changes a conversation or message.
CREATE TABLE raw_archive (
  archive_id TEXT PRIMARY KEY,
  table_name TEXT NOT NULL,
  row_id TEXT NOT NULL,
  replaced_by_run_id TEXT NOT NULL,
  raw_json TEXT NOT NULL
);
CREATE INDEX idx_raw_archive_row ON raw_archive(table_name, row_id);

CREATE TABLE conversations (
  conversation_id TEXT PRIMARY KEY,
  export_conversation_id TEXT,
  title TEXT,
  created_at_utc TEXT,
  updated_at_utc TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  raw_conversation_json TEXT NOT NULL,
  -- Kenning additions
  source_kind TEXT NOT NULL DEFAULT 'chatgpt',
  current_node_message_id TEXT,         -- leaf of the branch the export shows (current_node)
  raw_sha256 TEXT NOT NULL,             -- sha256 of raw_conversation_json
  import_key TEXT NOT NULL,             -- sha256(import config hash + the record's bytes): unchanged-record check
  first_run_id TEXT NOT NULL,
  last_changed_run_id TEXT NOT NULL
);

CREATE INDEX idx_conversations_import_key ON conversations(import_key);

-- Which source files contained which conversations (a conversation can be in many exports).
CREATE TABLE source_conversations (
  source_id TEXT NOT NULL REFERENCES sources(source_id),
  conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id),
  record_index INTEGER NOT NULL,
  PRIMARY KEY (source_id, conversation_id)
);

CREATE TABLE messages (
  message_id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id),
  role TEXT NOT NULL CHECK (role IN ('user','assistant','system','tool','unknown')),
  parent_id TEXT,
  tree_path TEXT NOT NULL,
  order_index INTEGER NOT NULL,
  created_at_utc TEXT,
  timestamp_quality TEXT NOT NULL CHECK (timestamp_quality IN ('original','imputed_parent','imputed_prior','missing')),
  content_type TEXT NOT NULL CHECK (content_type IN ('text','mixed','empty','unknown')),
  text_raw TEXT,
  text_part_map_json TEXT,
  code_fence_ranges_json TEXT,
  blockquote_ranges_json TEXT,
  attachment_count INTEGER NOT NULL DEFAULT 0,
  raw_message_json TEXT NOT NULL,
  -- Kenning additions
  export_message_id TEXT,
  export_parent_id TEXT,
  author_name TEXT,                     -- ChatGPT author.name (python, bio, ...) or a transcript speaker
  recipient TEXT,                       -- 'all' or the tool a message was addressed to
  export_content_type TEXT,
  is_hidden INTEGER NOT NULL DEFAULT 0,
  is_current_branch INTEGER NOT NULL DEFAULT 0,
  citation_ranges_json TEXT,
  raw_sha256 TEXT NOT NULL,
  first_run_id TEXT NOT NULL,
  last_changed_run_id TEXT NOT NULL
);
CREATE INDEX idx_messages_conversation ON messages(conversation_id);
CREATE INDEX idx_messages_order ON messages(conversation_id, order_index);
CREATE INDEX idx_messages_changed ON messages(last_changed_run_id);

CREATE TABLE message_parts (
  part_id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  part_index INTEGER NOT NULL,
  part_type TEXT NOT NULL CHECK (part_type IN ('text','image','file','tool_call','tool_result','other')),
  text_content TEXT,
  mime_type TEXT,
  file_path TEXT,
  metadata_json TEXT,
  raw_part_json TEXT NOT NULL
);
CREATE INDEX idx_parts_message ON message_parts(message_id);
