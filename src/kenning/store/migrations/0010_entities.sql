-- Entities, time and the personal lexicon (seed 001 stages 2A, 2B, 3).
-- Column names follow the seed; Kenning's additions are marked. Choices: docs/decisions.md E1–E30.

-- §2A.1 entity_mention_candidates: every detector output, kept for audit even when suppressed.
CREATE TABLE entity_mention_candidates (
  candidate_id TEXT PRIMARY KEY,        -- uuid5(["candidate", message_id, detector, start, end, hint, surface_hash]) (E2)
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  detector TEXT NOT NULL,               -- EMAIL, URL, …, NER:<model>, LEXICON:<build_id>
  detector_version TEXT NOT NULL,
  detector_order INTEGER NOT NULL,      -- Kenning: the pinned integer order (§2A.5.1), a winner sort key
  entity_type_hint TEXT NOT NULL,
  char_start INTEGER,
  char_end INTEGER,
  surface_text TEXT,
  surface_hash TEXT NOT NULL,
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  is_eligible INTEGER NOT NULL CHECK (is_eligible IN (0,1)),
  suppressed_by_candidate_id TEXT REFERENCES entity_mention_candidates(candidate_id) DEFERRABLE INITIALLY DEFERRED,
  suppression_reason TEXT CHECK (suppression_reason IN ('OVERLAP_HIGHER_SCORE','INTERSECTS_CODE_FENCE',
    'INTERSECTS_BLOCKQUOTE','INTERSECTS_CITATION','NO_OFFSETS_UNRELIABLE','CODE_LIKE_TOKEN')),
  raw_candidate_json TEXT,
  CHECK ((char_start IS NULL) = (char_end IS NULL)),
  CHECK (char_start IS NULL OR (char_start >= 0 AND char_end > char_start))
);
CREATE INDEX idx_emc_message ON entity_mention_candidates(message_id);
CREATE INDEX idx_emc_detector ON entity_mention_candidates(detector);
CREATE INDEX idx_emc_suppressed_by ON entity_mention_candidates(suppressed_by_candidate_id)
  WHERE suppressed_by_candidate_id IS NOT NULL;   -- the self-FK check on delete needs it

-- §2A.1 entity_mentions: the emitted winners.
CREATE TABLE entity_mentions (
  mention_id TEXT PRIMARY KEY,          -- uuid5(["mention", message_id, candidate_id])
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  entity_id TEXT REFERENCES entities(entity_id),
  candidate_id TEXT NOT NULL REFERENCES entity_mention_candidates(candidate_id),
  detector TEXT NOT NULL,
  detector_version TEXT NOT NULL,
  entity_type_hint TEXT NOT NULL,
  char_start INTEGER,
  char_end INTEGER,
  surface_text TEXT,
  surface_hash TEXT NOT NULL,
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  raw_mention_json TEXT
);
CREATE INDEX idx_em_message ON entity_mentions(message_id);
CREATE INDEX idx_em_entity ON entity_mentions(entity_id);
CREATE UNIQUE INDEX idx_em_candidate ON entity_mentions(candidate_id);

-- §2A.1 time_mentions.
CREATE TABLE time_mentions (
  time_mention_id TEXT PRIMARY KEY,     -- uuid5(["time", message_id, char_start, surface_hash])
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  char_start INTEGER NOT NULL,
  char_end INTEGER NOT NULL,
  surface_text TEXT NOT NULL,
  surface_hash TEXT NOT NULL,
  pattern_id TEXT NOT NULL,
  pattern_precedence INTEGER NOT NULL,
  anchor_time_utc TEXT,
  resolved_type TEXT NOT NULL CHECK (resolved_type IN ('instant','interval','unresolved')),
  valid_from_utc TEXT,
  valid_to_utc TEXT,
  resolution_granularity TEXT CHECK (resolution_granularity IN ('year','month','week','day','minute')),
  timezone_assumed TEXT NOT NULL,
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  raw_parse_json TEXT NOT NULL,
  CHECK (char_start >= 0 AND char_end > char_start),
  CHECK (resolved_type <> 'instant' OR (valid_from_utc IS NOT NULL AND valid_to_utc IS NULL)),
  CHECK (resolved_type <> 'interval' OR (valid_from_utc IS NOT NULL AND valid_to_utc > valid_from_utc)),
  CHECK (resolved_type <> 'unresolved' OR (valid_from_utc IS NULL AND valid_to_utc IS NULL))
);
CREATE INDEX idx_tm_message ON time_mentions(message_id);

-- §2A.1 ner_model_runs, one per NER backend run; per-message raw I/O in ner_model_run_io (E8).
CREATE TABLE ner_model_runs (
  run_id TEXT PRIMARY KEY,              -- uuid5(["ner_run", pipeline run_id, model_name, model_version]) (E2)
  model_name TEXT NOT NULL,
  model_version TEXT NOT NULL,
  config_json TEXT NOT NULL,
  started_at_utc TEXT NOT NULL,
  completed_at_utc TEXT,
  raw_io_json TEXT,
  pipeline_run_id TEXT                  -- Kenning: the runs row of the stage that made it
);

CREATE TABLE ner_model_run_io (         -- Kenning: one row per message a NER run saw (replayable)
  run_id TEXT NOT NULL REFERENCES ner_model_runs(run_id),
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  input_sha256 TEXT NOT NULL,           -- sha256 of the exact text_raw given to the model
  chunks_json TEXT NOT NULL,            -- [[offset, length], …] of the chunks sent
  output_json TEXT NOT NULL,            -- the backend's raw output, offsets relative to the whole text
  PRIMARY KEY (run_id, message_id)
);
CREATE INDEX idx_ner_io_input ON ner_model_run_io(input_sha256);

-- Kenning: what stage 2A last computed per message, so a rerun redoes only messages that changed (E10).
CREATE TABLE detect_message_state (
  message_id TEXT PRIMARY KEY REFERENCES messages(message_id),
  input_hash TEXT NOT NULL,
  run_id TEXT NOT NULL
);

-- Kenning: the input fingerprint each whole-corpus stage (2B, 3) last ran on (E10).
CREATE TABLE stage_fingerprints (
  stage TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  run_id TEXT NOT NULL
);

-- §2B.1 entities.
CREATE TABLE entities (
  entity_id TEXT PRIMARY KEY,           -- uuid5(["entity", entity_type, entity_key])
  entity_type TEXT NOT NULL CHECK (entity_type IN ('EMAIL','URL','DOI','UUID','HASH_HEX','IP_ADDRESS','PHONE',
    'FILEPATH','BARE_DOMAIN','PERSON','ORG','LOCATION','CUSTOM_TERM','OTHER',
    'ARXIV','CVE','ORCID','GIT_SHA','HANDLE','HASHTAG','PRODUCT')),   -- the last seven: E13
  entity_key TEXT NOT NULL,
  canonical_name TEXT NOT NULL,
  aliases_json TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  first_seen_at_utc TEXT,
  last_seen_at_utc TEXT,
  mention_count INTEGER NOT NULL DEFAULT 0,
  conversation_count INTEGER NOT NULL DEFAULT 0,
  salience_score REAL,
  raw_stats_json TEXT
);
CREATE UNIQUE INDEX entities_active_uniq ON entities(entity_type, entity_key) WHERE status='active';
CREATE INDEX idx_entities_name ON entities(canonical_name COLLATE NOCASE);

-- §2B.1 lexicon_builds.
CREATE TABLE lexicon_builds (
  build_id TEXT PRIMARY KEY,            -- uuid5(["lexicon_build", started_at_utc, build_version]) (E2)
  build_version INTEGER NOT NULL UNIQUE,
  config_json TEXT NOT NULL,
  started_at_utc TEXT NOT NULL,
  completed_at_utc TEXT,
  candidates_total INTEGER NOT NULL DEFAULT 0,
  terms_selected INTEGER NOT NULL DEFAULT 0,
  raw_stats_json TEXT,
  pipeline_run_id TEXT                  -- Kenning
);

-- §2B.1 lexicon_term_candidates.
CREATE TABLE lexicon_term_candidates (
  candidate_id TEXT PRIMARY KEY,        -- uuid5(["lex_cand", build_id, generator, term_key])
  build_id TEXT NOT NULL REFERENCES lexicon_builds(build_id),
  generator TEXT NOT NULL CHECK (generator IN ('TITLE_CASE','ALLCAPS','CAMEL_CASE','HASHTAG','HANDLE','QUOTED',
    'NOUN_CHUNK')),
  term_key TEXT NOT NULL,
  canonical_surface TEXT NOT NULL,
  aliases_json TEXT NOT NULL,
  total_count INTEGER NOT NULL,
  user_weighted_count REAL NOT NULL,
  conversation_count INTEGER NOT NULL,
  code_likeness_ratio REAL NOT NULL,
  context_diversity REAL NOT NULL,
  score REAL,
  is_selected INTEGER NOT NULL CHECK (is_selected IN (0,1)),
  rejection_reason TEXT CHECK (rejection_reason IN ('BELOW_MIN_COUNT','BELOW_MIN_CONV','DENYLIST','CODE_HEAVY',
    'LOW_DIVERSITY','CAP_EXCEEDED')),
  evidence_json TEXT NOT NULL,
  CHECK ((is_selected = 1) = (rejection_reason IS NULL))
);
CREATE INDEX idx_lex_cand_build ON lexicon_term_candidates(build_id);
CREATE UNIQUE INDEX idx_lex_cand_key ON lexicon_term_candidates(build_id, term_key);

-- §2B.1 lexicon_terms.
CREATE TABLE lexicon_terms (
  term_id TEXT PRIMARY KEY,             -- uuid5(["lex_term", build_id, term_key])
  build_id TEXT NOT NULL REFERENCES lexicon_builds(build_id),
  candidate_id TEXT NOT NULL REFERENCES lexicon_term_candidates(candidate_id),
  term_key TEXT NOT NULL,
  canonical_surface TEXT NOT NULL,
  aliases_json TEXT NOT NULL,
  score REAL NOT NULL,
  entity_type_hint TEXT NOT NULL
);
CREATE INDEX idx_lexicon_terms_build ON lexicon_terms(build_id);
CREATE INDEX idx_lexicon_terms_key ON lexicon_terms(term_key);

-- §3.1 entity_canonicalization_runs.
CREATE TABLE entity_canonicalization_runs (
  run_id TEXT PRIMARY KEY,              -- uuid5(["canon_run", started_at_utc, method, seq]) (E2)
  method TEXT NOT NULL CHECK (method IN ('detector_role_weighted','assertion_informed','llm_assisted','hybrid')),
  model_name TEXT,
  model_version TEXT,
  config_json TEXT NOT NULL,
  started_at_utc TEXT NOT NULL,
  completed_at_utc TEXT,
  entities_processed INTEGER NOT NULL DEFAULT 0,
  names_changed INTEGER NOT NULL DEFAULT 0,
  raw_stats_json TEXT,
  pipeline_run_id TEXT                  -- Kenning
);

-- §3.1 entity_canonical_name_history.
CREATE TABLE entity_canonical_name_history (
  history_id TEXT PRIMARY KEY,          -- uuid5(["canon_hist", entity_id, run_id])
  entity_id TEXT NOT NULL REFERENCES entities(entity_id),
  run_id TEXT NOT NULL REFERENCES entity_canonicalization_runs(run_id),
  previous_name TEXT,
  canonical_name TEXT NOT NULL,
  selection_method TEXT NOT NULL,
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  selected_at_utc TEXT NOT NULL,
  raw_selection_json TEXT NOT NULL
);
CREATE INDEX idx_canonical_history_entity ON entity_canonical_name_history(entity_id);
CREATE INDEX idx_canonical_history_run ON entity_canonical_name_history(run_id);
