-- Seed 000 (HTN self-belief decomposer): the seed's five tables (§3, names and columns as given) plus the
-- experiences they are read from. Kenning additions are marked; docs/decisions.md S-entries explain them.

-- Experience(type='self_definition'): a window of one message's text_raw that holds first-person
-- self-statements, and why the detector selected it (issue 7 "Input").
CREATE TABLE experiences (
  experience_id TEXT PRIMARY KEY,               -- uuid5(["experience", message_id, text_start, text_end])
  type TEXT NOT NULL CHECK (type = 'self_definition'),
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id),
  source_kind TEXT NOT NULL,                    -- conversations.source_kind: chatgpt | transcript | note
  context_kind TEXT,                            -- user_editable_context for the "about me" profile
  text_start INTEGER NOT NULL,                  -- the window of messages.text_raw read (code points)
  text_end INTEGER NOT NULL,
  text_sha256 TEXT NOT NULL,                    -- of that window
  occurred_at TEXT,                             -- when it was said (messages.created_at_utc)
  metadata_json TEXT,                           -- Experience.metadata (e.g. {"mode": "journaling"})
  selected_reason_json TEXT NOT NULL,           -- why: [{"cue", "text", "start", "end"}, …]
  detector_version INTEGER NOT NULL,
  current_version TEXT,                         -- the extractor version whose occurrences count (S6)
  retired_at TEXT,                              -- the message changed: re-detected as a new experience
  created_at TEXT NOT NULL,
  run_id TEXT NOT NULL,
  UNIQUE (message_id, text_start, text_end)
);
CREATE INDEX idx_experiences_message ON experiences(message_id);

-- Every message the detector has looked at, selected or not, so a rerun reads only new or changed ones.
CREATE TABLE experience_scans (
  message_id TEXT PRIMARY KEY REFERENCES messages(message_id),
  raw_sha256 TEXT NOT NULL,                     -- messages.raw_sha256 when scanned
  detector_version INTEGER NOT NULL,
  selected INTEGER NOT NULL CHECK (selected IN (0, 1)),
  reason TEXT NOT NULL,                         -- self_statement | no_self_statement | duplicate_profile | …
  scanned_at TEXT NOT NULL,
  run_id TEXT NOT NULL
);

-- Which extractor version processed which experience (seed §6 "Backfill: skip experiences already processed
-- by current version"; an experience with no atoms has no occurrence to say so).
CREATE TABLE experience_runs (
  experience_id TEXT NOT NULL REFERENCES experiences(experience_id),
  extractor_version TEXT NOT NULL,
  processed_at TEXT NOT NULL,
  run_id TEXT NOT NULL,
  llm_mode TEXT NOT NULL,
  counts_json TEXT,
  PRIMARY KEY (experience_id, extractor_version)
);

-- What each extractor version hashed (kenning.llm.version.extractor_version_parts), for inspection.
CREATE TABLE extractor_versions (
  extractor_version TEXT PRIMARY KEY,
  parts_json TEXT NOT NULL,
  first_seen_at TEXT NOT NULL,
  rolled_back_at TEXT
);

-- §3.1 BeliefNode: one node per canonical meaning (canonical text + polarity, S1).
CREATE TABLE belief_nodes (
  belief_id TEXT PRIMARY KEY,                   -- uuid5(["belief_node", canonical_hash, polarity])
  canonical_text TEXT NOT NULL,
  canonical_hash TEXT NOT NULL,                 -- SHA256(canonical_text)[:32]
  belief_type TEXT NOT NULL CHECK (belief_type IN ('TRAIT','VALUE','PREFERENCE','CAPABILITY_LIMIT',
                                   'FEELING_STATE','META_BELIEF','RELATIONAL','BELIEF_ABOUT_SELF')),
  polarity TEXT NOT NULL CHECK (polarity IN ('affirm','deny')),
  embedding BLOB,                               -- float32 little-endian, embedding_model's dimension
  activation REAL NOT NULL DEFAULT 0,
  core_score REAL NOT NULL DEFAULT 0 CHECK (core_score >= 0 AND core_score <= 1),
  status TEXT NOT NULL DEFAULT 'surface' CHECK (status IN ('surface','developing','core')),
  conflict_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,                     -- first extraction (transaction time)
  last_reinforced_at TEXT,                      -- last occurrence added
  -- Kenning
  statement TEXT NOT NULL,                      -- the first-person sentence shown and published (≤ 280)
  embedding_model TEXT,                         -- model id of `embedding`
  extractor_version TEXT NOT NULL,              -- the version that created the node
  merged_into_belief_id TEXT REFERENCES belief_nodes(belief_id),   -- `kenning self merge`
  merged_at TEXT,
  superseded_by_belief_id TEXT REFERENCES belief_nodes(belief_id), -- conflict resolution (§8.4)
  superseded_at TEXT,
  supersession_reason TEXT,
  score_json TEXT,                              -- the parts of the last core score (support, spread, …)
  scored_at TEXT,
  UNIQUE (canonical_hash, polarity),
  UNIQUE (canonical_text, polarity)
);

-- §3.2 BeliefOccurrence: evidence linking a node to an experience.
CREATE TABLE belief_occurrences (
  occurrence_id TEXT PRIMARY KEY,               -- uuid5(["belief_occurrence", belief_id, experience, version])
  belief_id TEXT NOT NULL REFERENCES belief_nodes(belief_id),
  source_experience_id TEXT NOT NULL REFERENCES experiences(experience_id),
  extractor_version TEXT NOT NULL,
  raw_text TEXT NOT NULL,                       -- the atom before canonicalization
  raw_span TEXT NOT NULL,                       -- JSON [{"start", "end"}, …] into messages.text_raw
  source_weight REAL NOT NULL,
  atom_confidence REAL NOT NULL,
  epistemic_frame TEXT NOT NULL,                -- JSON {temporal_scope, modality, degree, conditional}
  epistemic_confidence REAL NOT NULL,
  match_confidence REAL NOT NULL,
  context_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT,                              -- soft delete (rollback)
  -- Kenning
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  occurred_at TEXT,                             -- when it was said (the experience's message time)
  belief_type TEXT NOT NULL,
  atom_polarity TEXT,                           -- what the atomizer said (polarity itself comes from the rules)
  resolution TEXT NOT NULL CHECK (resolution IN ('match','no_match','uncertain')),
  signals_json TEXT,
  run_id TEXT NOT NULL,
  UNIQUE (belief_id, source_experience_id, extractor_version)
);
CREATE INDEX idx_occurrences_belief ON belief_occurrences(belief_id);
CREATE INDEX idx_occurrences_experience ON belief_occurrences(source_experience_id);
CREATE INDEX idx_occurrences_version ON belief_occurrences(extractor_version);

-- §3.3 TentativeLink: uncertain identity between two nodes, ordered pair (invariant 3 enforced here).
CREATE TABLE tentative_links (
  link_id TEXT PRIMARY KEY,
  from_belief_id TEXT NOT NULL REFERENCES belief_nodes(belief_id),
  to_belief_id TEXT NOT NULL REFERENCES belief_nodes(belief_id),
  confidence REAL NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','accepted','rejected')),
  support_both INTEGER NOT NULL DEFAULT 0,
  support_one INTEGER NOT NULL DEFAULT 0,
  last_support_at TEXT,
  signals TEXT,
  extractor_version TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- Kenning
  status_reason TEXT,                           -- auto_accept | auto_reject | user | merged | rolled_back
  merged_at TEXT,                               -- set by `kenning self merge` (never automatically)
  CHECK (from_belief_id < to_belief_id),
  UNIQUE (from_belief_id, to_belief_id)
);

-- §3.4 ConflictEdge: contradiction or tension between two nodes (stored with node_a_id < node_b_id).
CREATE TABLE conflict_edges (
  edge_id TEXT PRIMARY KEY,
  node_a_id TEXT NOT NULL REFERENCES belief_nodes(belief_id),
  node_b_id TEXT NOT NULL REFERENCES belief_nodes(belief_id),
  conflict_type TEXT NOT NULL CHECK (conflict_type IN ('contradiction','tension')),
  detection_method TEXT NOT NULL CHECK (detection_method IN ('polarity_flip','semantic_opposition')),
  evidence TEXT NOT NULL,                       -- JSON {similarity, occurrence_ids, …}
  status TEXT NOT NULL CHECK (status IN ('active','resolved')),
  created_at TEXT NOT NULL,
  resolved_at TEXT,
  resolution_reason TEXT,
  -- Kenning
  observed_at TEXT,                             -- said time of the newest evidence (conflict-penalty window)
  resolution_method TEXT CHECK (resolution_method IN ('temporal_precedence','evidence_weight','user_override',
                                                      'dismissed','rolled_back','merged')),
  winner_belief_id TEXT REFERENCES belief_nodes(belief_id),
  CHECK (node_a_id < node_b_id),
  UNIQUE (node_a_id, node_b_id)
);

-- §3.5 StreamAssignment: one per node, with its migration history.
CREATE TABLE stream_assignments (
  assignment_id TEXT PRIMARY KEY,
  belief_id TEXT NOT NULL UNIQUE REFERENCES belief_nodes(belief_id),
  primary_stream TEXT NOT NULL CHECK (primary_stream IN ('identity','state','meta','relational')),
  secondary_stream TEXT CHECK (secondary_stream IN ('identity','state','meta','relational')),
  confidence REAL NOT NULL,
  migrated_from TEXT,
  migrated_at TEXT,
  migration_history TEXT NOT NULL DEFAULT '[]', -- JSON [{from, to, at, reason[, trigger]}, …]
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Invariant 5 (ratchet): an identity assignment never leaves identity unless the history's last entry names
-- an explicit demotion trigger.
CREATE TRIGGER stream_assignments_ratchet BEFORE UPDATE OF primary_stream ON stream_assignments
WHEN OLD.primary_stream = 'identity' AND NEW.primary_stream <> 'identity'
     AND json_extract(NEW.migration_history, '$[#-1].trigger') IS NULL
BEGIN
  SELECT RAISE(ABORT, 'ratchet: an identity stream assignment cannot be demoted without an explicit trigger');
END;
