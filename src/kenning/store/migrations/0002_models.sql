-- Model layer (issue 3): logged LLM calls (seed 001 §4.1, with Kenning's additions marked), the embedding
-- cache, and the registry of sqlite-vec tables (DOC72 §3.3 / §3.7). The vec0 tables themselves are created
-- at run time by kenning.store.vectors, because their dimension comes from config.

-- One row per LLM-using stage execution (seed 001 §4.1 llm_extraction_runs).
CREATE TABLE llm_extraction_runs (
  run_id TEXT PRIMARY KEY,              -- uuid5(["llm_run", started_at_utc, model_name, stage_run_id, name])
  model_name TEXT NOT NULL,
  model_version TEXT,                   -- what the endpoint reported (response "model"), when it answered
  config_json TEXT NOT NULL,            -- JCS of the llm config in force (no API key)
  started_at_utc TEXT NOT NULL,
  completed_at_utc TEXT,
  messages_processed INTEGER NOT NULL DEFAULT 0,
  assertions_extracted INTEGER NOT NULL DEFAULT 0,
  raw_stats_json TEXT,                  -- calls_total/succeeded/failed, avg_latency_ms, retry_distribution, tokens…
  -- Kenning additions
  stage_run_id TEXT REFERENCES runs(run_id),  -- the pipeline run whose transaction wrote this row
  name TEXT NOT NULL,                   -- what the stage used the model for (e.g. "assertions", "atomizer")
  mode TEXT NOT NULL CHECK (mode IN ('live','replay')),
  endpoint TEXT,                        -- base URL with any credentials removed; NULL in replay
  extractor_version TEXT,               -- kenning.llm.version.extractor_version(...) of the stage, if given
  prompt_versions_json TEXT,            -- {"name": "name@vN#sha12"} of prompts used
  status TEXT NOT NULL CHECK (status IN ('running','ok','budget_exhausted','failed'))
);
CREATE INDEX idx_llm_runs_stage_run ON llm_extraction_runs(stage_run_id);

-- One row per attempt sent to the model (or answered from the log in replay) (seed 001 §4.1 llm_extraction_calls).
CREATE TABLE llm_extraction_calls (
  call_id TEXT PRIMARY KEY,             -- uuid5(["llm_call", run_id, message_id, retry_count, request_sha256, item_key])
  run_id TEXT NOT NULL REFERENCES llm_extraction_runs(run_id),
  message_id TEXT REFERENCES messages(message_id),
  request_json TEXT NOT NULL,           -- JCS of the full request body (the whole prompt; never headers or keys)
  response_json TEXT,                   -- JCS of the full response body; a non-JSON body is kept as a JSON string
  call_timestamp_utc TEXT NOT NULL,
  retry_count INTEGER NOT NULL,         -- 0-based attempt number within this item (transport retries and repair)
  seed_honored INTEGER,                 -- 0/1 if determinable, NULL otherwise (always NULL: no endpoint reports it)
  parse_success INTEGER NOT NULL CHECK (parse_success IN (0,1)),
  raw_io_json TEXT NOT NULL,            -- JCS: timing, HTTP status, request id, endpoint (redacted), attempt kind
  -- Kenning additions
  item_key TEXT,                        -- the caller's discriminator when one message yields several requests
  prompt_name TEXT NOT NULL,
  prompt_version TEXT NOT NULL,         -- "name@vN#sha12" (content hash of the prompt file)
  schema_name TEXT NOT NULL,
  model TEXT NOT NULL,
  attempt_kind TEXT NOT NULL CHECK (attempt_kind IN ('initial','retry','repair','skipped')),  -- skipped: budget
  request_sha256 TEXT NOT NULL,         -- sha256 of request_json: what replay looks answers up by
  http_status INTEGER,
  latency_ms REAL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  total_tokens INTEGER,
  parsed_json TEXT,                     -- JCS of the validated result (parse_success = 1)
  error TEXT,                           -- why this attempt failed (transport, JSON, schema), keys redacted
  error_code TEXT,                      -- MALFORMED_OUTPUT | HTTP_429 | TIMEOUT | CONNECTION | BUDGET_EXHAUSTED | …
  mode TEXT NOT NULL CHECK (mode IN ('live','replay')),
  replayed_from_call_id TEXT            -- in replay: the stored call whose response was used
);
CREATE INDEX idx_llm_calls_run ON llm_extraction_calls(run_id);
CREATE INDEX idx_llm_calls_message ON llm_extraction_calls(message_id);
CREATE INDEX idx_llm_calls_request ON llm_extraction_calls(request_sha256);

-- Embedding cache: a text embedded once per model and dimension.
CREATE TABLE embedding_cache (
  model_id TEXT NOT NULL,               -- e.g. "minilm:all-MiniLM-L6-v2", "hash:kenning-hash-v1"
  dimension INTEGER NOT NULL,
  text_sha256 TEXT NOT NULL,
  vector BLOB NOT NULL,                 -- little-endian float32, L2-normalized
  created_at_utc TEXT NOT NULL,
  PRIMARY KEY (model_id, dimension, text_sha256)
) WITHOUT ROWID;

-- What is indexed: the text of every item, so a model migration can re-embed it (DOC72 §3.7).
-- vid is the rowid of the item's vector in the vec0 tables.
CREATE TABLE vector_items (
  vid INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale vector can never be taken for a new item
  space TEXT NOT NULL,                  -- which collection (e.g. "belief_nodes", "graph_nodes", "messages")
  item_id TEXT NOT NULL,
  kind TEXT,                            -- optional label to filter on (e.g. a node kind)
  text TEXT NOT NULL,
  text_sha256 TEXT NOT NULL,
  rev INTEGER NOT NULL,                 -- change counter: a migration re-embeds items changed after it started
  updated_at_utc TEXT NOT NULL,
  UNIQUE (space, item_id)
);
CREATE INDEX idx_vector_items_rev ON vector_items(rev);

-- The vec0 tables, one per embedding model generation. Exactly one is active; at most one is building.
-- (DOC72 §3.7's never-defined system_config: active_model_id, embedding_dimension, migration_in_progress.)
CREATE TABLE vector_tables (
  table_name TEXT PRIMARY KEY,          -- vec_items_g<generation>
  generation INTEGER NOT NULL UNIQUE,
  model_id TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active','building','retired')),
  created_at_utc TEXT NOT NULL,
  activated_at_utc TEXT,
  retired_at_utc TEXT,
  built_through_rev INTEGER NOT NULL DEFAULT 0,   -- building: items with rev <= this are embedded
  version TEXT NOT NULL                 -- content token, changed by every write (in-memory mirrors check it)
);
CREATE UNIQUE INDEX ux_vector_tables_active ON vector_tables(status) WHERE status = 'active';
CREATE UNIQUE INDEX ux_vector_tables_building ON vector_tables(status) WHERE status = 'building';

CREATE TABLE vector_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  last_rev INTEGER NOT NULL
);
INSERT INTO vector_state(id, last_rev) VALUES (1, 0);
