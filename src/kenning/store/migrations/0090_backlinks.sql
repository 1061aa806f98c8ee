-- DOC72 §42A.2 back-link pipeline (issue 20; decisions G1–G29). Every table here is a derived projection
-- (§42A.2.3A): rebuildable from the pipeline's tables and the node store (whose verdict commits are in the event
-- log), never a second truth store. Promoted edges themselves live in `edges` and are written by the single writer.

-- §42A.2.3A, seed columns first; then the §42A.2.3 MentionObservation fields promotion and review read (G3).
CREATE TABLE mention_observations_derived (
  append_seq INTEGER PRIMARY KEY AUTOINCREMENT,
  mention_id TEXT NOT NULL UNIQUE,
  observation_id TEXT NOT NULL,
  source_node_id TEXT NOT NULL,
  resolved_node_id TEXT,
  normalized_mention TEXT NOT NULL,
  span_class TEXT NOT NULL,
  state TEXT NOT NULL,
  visibility_class TEXT NOT NULL,
  work_context_id TEXT,
  surface TEXT NOT NULL,
  occurred_at DATETIME NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  mention_text TEXT NOT NULL,
  is_nested INTEGER NOT NULL DEFAULT 0,
  parent_mention_id TEXT,
  group_id TEXT NOT NULL,            -- the outermost span's mention id: nested spans count once (§42A.2.3)
  relation_hypothesis TEXT,
  resolution_method TEXT NOT NULL,
  resolution_confidence REAL NOT NULL DEFAULT 0,
  graph_context_score REAL NOT NULL DEFAULT 0,
  suppression_reason TEXT,
  context_window TEXT NOT NULL DEFAULT '',
  polarity TEXT NOT NULL DEFAULT 'support',  -- support | contradiction (a negative cue in the sentence, G12)
  evidence_bundle_id TEXT            -- sha256(source|target|relation) after pair normalization; NULL: no bundle
);
CREATE INDEX idx_mod_observation ON mention_observations_derived(observation_id);
CREATE INDEX idx_mod_resolved ON mention_observations_derived(resolved_node_id);
CREATE INDEX idx_mod_state ON mention_observations_derived(state);
CREATE INDEX idx_mod_work_context ON mention_observations_derived(work_context_id);
CREATE INDEX idx_mod_append_seq ON mention_observations_derived(append_seq);
CREATE INDEX idx_mod_bundle ON mention_observations_derived(evidence_bundle_id);
CREATE INDEX idx_mod_normalized ON mention_observations_derived(normalized_mention, span_class);

CREATE TABLE backlink_rejections_derived (
  rejection_id TEXT PRIMARY KEY,
  source_node_id TEXT NOT NULL,
  rejected_target_node_id TEXT NOT NULL,
  matched_text_span TEXT NOT NULL,
  rejection_reason TEXT NOT NULL,
  correct_target_node_id TEXT,
  created_at DATETIME NOT NULL
);
CREATE INDEX idx_brd_source_target ON backlink_rejections_derived(source_node_id, rejected_target_node_id);

-- §42A.2.3A plus what §42A.2.17's BackLinkReviewQueueItem carries and the impact × uncertainty × recency order.
CREATE TABLE review_queue_derived (
  queue_item_id TEXT PRIMARY KEY,
  item_kind TEXT NOT NULL,
  primary_ref TEXT NOT NULL,
  title TEXT,
  visibility_class TEXT NOT NULL DEFAULT 'cloud_allowed',
  status TEXT NOT NULL DEFAULT 'pending',
  created_at DATETIME NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  evidence_refs JSON NOT NULL DEFAULT '[]',
  available_actions JSON NOT NULL DEFAULT '[]',
  impact REAL NOT NULL DEFAULT 0,
  uncertainty REAL NOT NULL DEFAULT 0,
  recency REAL NOT NULL DEFAULT 0,
  sort_score REAL NOT NULL DEFAULT 0
);
CREATE INDEX idx_review_queue_status ON review_queue_derived(status, item_kind);
CREATE INDEX idx_review_queue_created ON review_queue_derived(created_at DESC);
CREATE INDEX idx_review_queue_sort ON review_queue_derived(status, sort_score DESC, queue_item_id);

-- §42A.2.3 LinkEvidenceBundle materialized (NP03) + the evidence score it was promoted on.
CREATE TABLE evidence_bundles_derived (
  evidence_bundle_id TEXT PRIMARY KEY,
  source_node_id TEXT NOT NULL,
  target_node_id TEXT NOT NULL,
  relation_type TEXT NOT NULL,
  support_mention_ids JSON NOT NULL DEFAULT '[]',
  contradiction_mention_ids JSON NOT NULL DEFAULT '[]',
  support_count INTEGER NOT NULL DEFAULT 0,
  contradiction_count INTEGER NOT NULL DEFAULT 0,
  distinct_observation_count INTEGER NOT NULL DEFAULT 0,
  distinct_surface_count INTEGER NOT NULL DEFAULT 0,
  distinct_work_context_count INTEGER NOT NULL DEFAULT 0,
  visibility_class TEXT NOT NULL DEFAULT 'cloud_allowed',
  last_supported_at DATETIME,
  hub_penalty REAL NOT NULL DEFAULT 0,
  salience_score REAL NOT NULL DEFAULT 0,
  evidence_score REAL NOT NULL DEFAULT 0,
  user_verdict TEXT NOT NULL DEFAULT 'none',
  promotion_state TEXT NOT NULL DEFAULT 'candidate_relation'
);
CREATE INDEX idx_ebd_source ON evidence_bundles_derived(source_node_id);
CREATE INDEX idx_ebd_target ON evidence_bundles_derived(target_node_id);

-- §42A.2.16 SuppressMentionPatternCommand, kept so Stage 2 marks matching mentions suppressed.
CREATE TABLE backlink_suppressions (
  pattern_id TEXT PRIMARY KEY,
  normalized_mention TEXT NOT NULL,
  span_class TEXT NOT NULL,
  scope TEXT NOT NULL,
  work_context_id TEXT,
  surface TEXT,
  reason TEXT NOT NULL,
  created_at DATETIME NOT NULL
);

-- §42A.2.11 Tier4UnresolvedQueueItem.
CREATE TABLE backlink_tier4_queue (
  queue_item_id TEXT PRIMARY KEY,
  mention_id TEXT NOT NULL UNIQUE,
  observation_id TEXT NOT NULL,
  source_node_id TEXT NOT NULL,
  span_text TEXT NOT NULL,
  context_window TEXT NOT NULL,
  candidate_set JSON NOT NULL,
  execution_requirement TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'queued',
  retry_count INTEGER NOT NULL DEFAULT 0,
  next_retry_at DATETIME,
  last_error_code TEXT,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE INDEX idx_tier4_status ON backlink_tier4_queue(status);

-- §42A.2.12 EntityCreationCandidate.
CREATE TABLE entity_creation_candidates (
  candidate_id TEXT PRIMARY KEY,
  suggested_canonical_name TEXT NOT NULL,
  suggested_node_kind TEXT NOT NULL,
  normalized_mention TEXT NOT NULL,
  source_observation_ids JSON NOT NULL,
  source_surface TEXT NOT NULL,
  linked_work_context_id TEXT,
  detection_method TEXT NOT NULL DEFAULT 'backlink_unresolved_span',
  span_class TEXT NOT NULL,
  visibility_class TEXT NOT NULL,
  confidence REAL NOT NULL DEFAULT 0.3,
  salience REAL NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'pending_review',
  created_at DATETIME NOT NULL
);
CREATE INDEX idx_ecc_status ON entity_creation_candidates(status, created_at);

-- §42A.2.15 BackLinkCooldown (one row per source node) and the aggregation watermark (§42A.2.3 NP03).
CREATE TABLE backlink_cooldown (
  node_id TEXT PRIMARY KEY,
  last_backlinked_at DATETIME NOT NULL
);
CREATE TABLE backlink_state (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- Which observations (messages) Stage 1 has scanned, by the hash of the text it read: a message is scanned once.
CREATE TABLE backlink_observations (
  observation_id TEXT PRIMARY KEY,
  input_hash TEXT NOT NULL,
  degraded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_backlink_observations_hash ON backlink_observations(input_hash);
