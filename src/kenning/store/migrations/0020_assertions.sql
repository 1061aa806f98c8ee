-- Assertions (seed 001 stage 4, §4.1): predicates, assertions, retractions.
-- Column names follow the seed; Kenning's additions are marked. Choices: docs/decisions.md A1–A30.
-- llm_extraction_runs / llm_extraction_calls belong to the model layer (migration 0002) and are shared.

-- §4.1 predicates: the normalized relation vocabulary.
CREATE TABLE predicates (
  predicate_id TEXT PRIMARY KEY,        -- uuid5(["pred", canonical_label_norm])
  canonical_label TEXT NOT NULL,        -- NFKC, trimmed, internal whitespace collapsed
  canonical_label_norm TEXT NOT NULL,   -- lowercase(canonical_label)
  inverse_label TEXT,
  category TEXT,
  arity INTEGER NOT NULL CHECK (arity IN (1, 2, 3)),
  value_type_constraint TEXT,
  first_seen_at_utc TEXT,               -- A14: MIN(asserted_at_utc) of its assertions, recomputed with the counts
  assertion_count INTEGER NOT NULL DEFAULT 0,
  raw_predicate_json TEXT
);
CREATE UNIQUE INDEX idx_predicates_label_norm ON predicates(canonical_label_norm);

-- §4.1 assertions: one row per grounded claim.
CREATE TABLE assertions (
  assertion_id TEXT PRIMARY KEY,        -- uuid5(["assertion", assertion_key, sha256_hex(raw_assertion_json)])
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  assertion_key TEXT NOT NULL,          -- JCS([message_id, subject, predicate, object_signature, char_start, modality, polarity])
  fact_key TEXT NOT NULL,               -- JCS([subject, predicate, object_signature])
  subject_entity_id TEXT NOT NULL REFERENCES entities(entity_id),
  subject_detection_tier INTEGER CHECK (subject_detection_tier BETWEEN 1 AND 4),
  predicate_id TEXT NOT NULL REFERENCES predicates(predicate_id),
  object_entity_id TEXT REFERENCES entities(entity_id),
  object_detection_tier INTEGER CHECK (object_detection_tier BETWEEN 1 AND 4),
  object_value_type TEXT CHECK (object_value_type IN ('string','number','boolean','date','json')),
  object_value TEXT,                    -- JCS of the literal value
  object_signature TEXT NOT NULL,
  temporal_qualifier_type TEXT CHECK (temporal_qualifier_type IN ('at','since','until','during')),
  temporal_qualifier_id TEXT REFERENCES time_mentions(time_mention_id) ON DELETE SET NULL,  -- A2: 2A may recompute
  modality TEXT NOT NULL CHECK (modality IN ('state','fact','preference','intention','question')),
  polarity TEXT NOT NULL CHECK (polarity IN ('positive','negative')),
  asserted_role TEXT NOT NULL CHECK (asserted_role IN ('user','assistant')),
  asserted_at_utc TEXT,
  confidence_extraction REAL NOT NULL CHECK (confidence_extraction BETWEEN 0 AND 1),
  confidence_grounding REAL NOT NULL CHECK (confidence_grounding BETWEEN 0 AND 1),
  confidence_final REAL NOT NULL CHECK (confidence_final BETWEEN 0 AND 1),
  has_user_corroboration INTEGER NOT NULL CHECK (has_user_corroboration IN (0,1)),
  superseded_by_assertion_id TEXT REFERENCES assertions(assertion_id) DEFERRABLE INITIALLY DEFERRED,
  supersession_type TEXT CHECK (supersession_type IN ('retraction','correction','temporal_end')),
  char_start INTEGER,
  char_end INTEGER,
  surface_text TEXT,
  extraction_method TEXT NOT NULL CHECK (extraction_method IN ('rule_based','llm','hybrid')),
  extraction_model TEXT,
  raw_assertion_json TEXT NOT NULL,     -- JCS; run-invariant only (A3), so the id is stable
  -- Kenning additions
  corroboration_json TEXT,              -- A3: §4.6.7 corroboration details (kept out of raw_assertion_json)
  CHECK ((char_start IS NULL) = (char_end IS NULL)),
  CHECK (char_start IS NULL OR (char_start >= 0 AND char_end > char_start)),
  CHECK ((superseded_by_assertion_id IS NULL) = (supersession_type IS NULL)),
  -- §4.1 object model: exactly one of entity object, literal object, or unary
  CHECK (
    (object_entity_id IS NOT NULL AND object_value_type IS NULL AND object_value IS NULL
       AND object_signature = 'E:' || object_entity_id)
    OR (object_entity_id IS NULL AND object_value_type IS NOT NULL AND object_value IS NOT NULL
       AND object_detection_tier IS NULL AND object_signature LIKE 'V:%')
    OR (object_entity_id IS NULL AND object_value_type IS NULL AND object_value IS NULL
       AND object_detection_tier IS NULL AND object_signature = 'N:__NONE__')
  )
);
CREATE INDEX idx_assertions_message ON assertions(message_id);
CREATE UNIQUE INDEX idx_assertions_key ON assertions(assertion_key);
CREATE INDEX idx_assertions_fact_key ON assertions(fact_key);
CREATE INDEX idx_assertions_subject ON assertions(subject_entity_id);
CREATE INDEX idx_assertions_predicate ON assertions(predicate_id);
CREATE INDEX idx_assertions_object_entity ON assertions(object_entity_id) WHERE object_entity_id IS NOT NULL;
CREATE INDEX idx_assertions_temporal_qualifier ON assertions(temporal_qualifier_id)
  WHERE temporal_qualifier_id IS NOT NULL;
CREATE INDEX idx_assertions_superseded_by ON assertions(superseded_by_assertion_id)
  WHERE superseded_by_assertion_id IS NOT NULL;   -- the self-FK check on delete needs it

-- §4.1 retractions: explicit retractions and corrections of earlier claims.
CREATE TABLE retractions (
  retraction_id TEXT PRIMARY KEY,       -- uuid5(["retraction", message_id, char_start, char_end]) (+ pattern id when spanless, A9)
  retraction_message_id TEXT NOT NULL REFERENCES messages(message_id),
  target_assertion_id TEXT REFERENCES assertions(assertion_id) DEFERRABLE INITIALLY DEFERRED,
  target_fact_key TEXT,
  retraction_type TEXT NOT NULL CHECK (retraction_type IN ('full','correction','temporal_bound')),
  replacement_assertion_id TEXT REFERENCES assertions(assertion_id) DEFERRABLE INITIALLY DEFERRED,
  confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  char_start INTEGER,
  char_end INTEGER,
  surface_text TEXT,
  raw_retraction_json TEXT NOT NULL,
  CHECK ((char_start IS NULL) = (char_end IS NULL)),
  CHECK (char_start IS NULL OR (char_start >= 0 AND char_end > char_start))
);
CREATE INDEX idx_retractions_message ON retractions(retraction_message_id);
CREATE INDEX idx_retractions_target ON retractions(target_assertion_id) WHERE target_assertion_id IS NOT NULL;
CREATE INDEX idx_retractions_fact_key ON retractions(target_fact_key) WHERE target_fact_key IS NOT NULL;
CREATE INDEX idx_retractions_replacement ON retractions(replacement_assertion_id)
  WHERE replacement_assertion_id IS NOT NULL;

-- Kenning: entities stage 4 created while grounding (§4.6.1 step 8, and transcript speakers). They are left
-- out of the entity resolution index while nothing else mentions them, so a rerun resolves exactly as the
-- first run did (A11).
CREATE TABLE assertion_created_entities (
  entity_id TEXT PRIMARY KEY REFERENCES entities(entity_id),
  reason TEXT NOT NULL CHECK (reason IN ('grounding_fallback','kin_descriptor','transcript_speaker')),
  surface TEXT NOT NULL,
  first_run_id TEXT NOT NULL
);

-- §4.7.5: entity assertion counts, only maintained when assertions.update_entity_assertion_counts is on.
ALTER TABLE entities ADD COLUMN assertion_count INTEGER;
