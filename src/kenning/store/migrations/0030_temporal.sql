-- Temporal reasoning (seed 001 stage 5, §5.1): valid time, lifecycle status, invalidation rules, conflicts,
-- and Kenning's transaction time. Column names follow the seed; Kenning's additions are marked. Choices:
-- docs/decisions.md T1–T20.
--
-- Stage 5 recomputes assertion_temporalized, invalidation_rules and the conflict tables each run (§5.2.1
-- "overwrite"), as rows equal to what they were when nothing changed. assertion_tx_history is append-only:
-- a later ingest adds transaction-time rows and never rewrites earlier ones (T3).

CREATE TABLE invalidation_rules (
  rule_id TEXT PRIMARY KEY,               -- uuid5(["invalidation_rule", predicate_id ?? "__NULL__", subject_entity_type])
  predicate_id TEXT REFERENCES predicates(predicate_id) ON DELETE CASCADE,   -- NULL = wildcard
  subject_entity_type TEXT NOT NULL,      -- entity type or '*'
  is_functional INTEGER NOT NULL CHECK (is_functional IN (0, 1)),
  invalidation_policy TEXT NOT NULL CHECK (invalidation_policy IN ('none', 'close_previous_on_newer_state')),
  notes TEXT                              -- JCS provenance: file sha256, version, load order, predicate_label
);
CREATE INDEX idx_rules_predicate ON invalidation_rules(predicate_id) WHERE predicate_id IS NOT NULL;
CREATE INDEX idx_rules_subject_type ON invalidation_rules(subject_entity_type);

CREATE TABLE assertion_temporalized (
  assertion_id TEXT PRIMARY KEY REFERENCES assertions(assertion_id) ON DELETE CASCADE,
  valid_time_type TEXT NOT NULL CHECK (valid_time_type IN ('instant', 'interval', 'unknown')),
  valid_from_utc TEXT,
  valid_to_utc TEXT,
  valid_until_hint_utc TEXT,
  status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'retracted', 'negated', 'conflicted', 'ineligible')),
  temporal_superseded_by_assertion_id TEXT REFERENCES assertions(assertion_id) ON DELETE SET NULL,
  retracted_by_retraction_id TEXT REFERENCES retractions(retraction_id) ON DELETE SET NULL,
  negated_by_assertion_id TEXT REFERENCES assertions(assertion_id) ON DELETE SET NULL,
  rule_id_applied TEXT REFERENCES invalidation_rules(rule_id) ON DELETE SET NULL,
  raw_temporalize_json TEXT,
  -- Kenning additions (transaction time, T3): when Kenning started believing the assertion and when it stopped
  -- holding it as it was first stated (superseded, retracted or negated); NULL = still held.
  asserted_at_utc TEXT NOT NULL,
  superseded_at_utc TEXT,
  CHECK (valid_time_type <> 'instant' OR valid_to_utc IS NULL),
  CHECK (valid_to_utc IS NULL OR valid_from_utc IS NULL OR valid_to_utc > valid_from_utc)
);
CREATE INDEX idx_temporalized_status ON assertion_temporalized(status);
CREATE INDEX idx_temporalized_valid_from ON assertion_temporalized(valid_from_utc) WHERE valid_from_utc IS NOT NULL;
CREATE INDEX idx_temporalized_superseded_by ON assertion_temporalized(temporal_superseded_by_assertion_id)
  WHERE temporal_superseded_by_assertion_id IS NOT NULL;
CREATE INDEX idx_temporalized_negated_by ON assertion_temporalized(negated_by_assertion_id)
  WHERE negated_by_assertion_id IS NOT NULL;
CREATE INDEX idx_temporalized_retracted_by ON assertion_temporalized(retracted_by_retraction_id)
  WHERE retracted_by_retraction_id IS NOT NULL;

CREATE TABLE conflict_groups (
  conflict_group_id TEXT PRIMARY KEY,     -- uuid5(["conflict", conflict_key])
  conflict_type TEXT NOT NULL CHECK (conflict_type IN ('OBJECT_DISAGREEMENT', 'NEGATION_AMBIGUOUS',
    'RETRACTION_TARGET_NOT_UNIQUE', 'OBJ_TRANSITION_CONFLICT', 'OBJ_CONFIDENCE_TOO_CLOSE', 'SAME_TIME_DUPLICATES')),
  conflict_key TEXT NOT NULL,
  detected_at_utc TEXT NOT NULL,          -- the stage start of the run that first found it (T11)
  raw_conflict_json TEXT
);
CREATE INDEX idx_conflict_groups_type ON conflict_groups(conflict_type);
CREATE UNIQUE INDEX idx_conflict_groups_key ON conflict_groups(conflict_key);

CREATE TABLE conflict_members (
  conflict_group_id TEXT NOT NULL REFERENCES conflict_groups(conflict_group_id) ON DELETE CASCADE,
  assertion_id TEXT NOT NULL REFERENCES assertions(assertion_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX idx_conflict_members_pk ON conflict_members(conflict_group_id, assertion_id);
CREATE INDEX idx_conflict_members_assertion ON conflict_members(assertion_id);
CREATE INDEX idx_conflict_members_group ON conflict_members(conflict_group_id);

-- Kenning: transaction time (T3). One row per version of an assertion's temporal state: what Kenning believed
-- about it from tx_from_utc until tx_to_utc (NULL = still). No foreign key to assertions: history outlives a
-- claim a later extractor no longer makes (its open row is closed with closed_reason WITHDRAWN).
CREATE TABLE assertion_tx_history (
  assertion_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  tx_from_utc TEXT NOT NULL,
  tx_to_utc TEXT,
  status TEXT NOT NULL,
  valid_time_type TEXT NOT NULL,
  valid_from_utc TEXT,
  valid_to_utc TEXT,
  valid_until_hint_utc TEXT,
  temporal_superseded_by_assertion_id TEXT,
  retracted_by_retraction_id TEXT,
  negated_by_assertion_id TEXT,
  rule_id_applied TEXT,
  reason TEXT NOT NULL,                   -- FIRST_SEEN | SUPERSEDED | RETRACTED | NEGATED | CONFLICTED | ... | LATE_KNOWLEDGE
  cause_id TEXT,                          -- the assertion or retraction whose arrival made this version
  closed_reason TEXT,                     -- NULL, or WITHDRAWN when the claim itself went away
  recorded_by_run_id TEXT NOT NULL,
  PRIMARY KEY (assertion_id, version),
  CHECK (tx_to_utc IS NULL OR tx_to_utc >= tx_from_utc)
);
CREATE INDEX idx_tx_history_open ON assertion_tx_history(assertion_id) WHERE tx_to_utc IS NULL;
CREATE INDEX idx_tx_history_from ON assertion_tx_history(tx_from_utc);
