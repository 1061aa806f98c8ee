-- DOC72 intake funnel (seed 003 §20A, §13.4, §22–24, §38; issue 18 parts 1–3; decisions I1–I19).
-- The audit trail reuses 0070's extraction_audit (§38); everything here is the funnel's own state.

-- §20A.2 IntakeObservationEnvelope, one row per imported unit version. dedup_key = hash(surface + source_ref +
-- source_version_id) is unique: the same unit seen again is the same observation (I2).
CREATE TABLE intake_observations (
    observation_id TEXT PRIMARY KEY,
    observed_at DATETIME NOT NULL,
    surface TEXT NOT NULL,
    source_ref TEXT NOT NULL,
    source_version_id TEXT,
    actor TEXT NOT NULL CHECK (actor IN ('user', 'agent', 'system')),
    memory_mode_snapshot JSON NOT NULL,
    features JSON NOT NULL,
    dedup_key TEXT NOT NULL,
    -- Kenning additions: which unit it is, so the drain can rebuild the extractor's Observation.
    unit_kind TEXT NOT NULL,
    conversation_id TEXT,
    message_id TEXT,
    run_id TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_intake_observations_dedup ON intake_observations(dedup_key);
CREATE INDEX idx_intake_observations_conversation ON intake_observations(conversation_id);
CREATE INDEX idx_intake_observations_message ON intake_observations(message_id);
CREATE INDEX idx_intake_observations_version ON intake_observations(source_version_id);

-- §20A.2 IntakeDispatchDecision, exactly one per observation (skips included: never a silent skip).
CREATE TABLE intake_dispatch_decisions (
    observation_id TEXT PRIMARY KEY REFERENCES intake_observations(observation_id),
    decision TEXT NOT NULL CHECK (decision IN ('skip', 'shallow', 'deep', 'defer')),
    queue_class TEXT NOT NULL CHECK (queue_class IN ('critical_non_drop', 'high_priority', 'normal', 'background')),
    reason_codes JSON NOT NULL,
    score REAL NOT NULL,
    persistence_mode TEXT NOT NULL CHECK (persistence_mode IN ('accessible_only', 'episodic_recall',
                                                                'candidate_graph', 'durable_graph')),
    created_at DATETIME NOT NULL
);
CREATE INDEX idx_intake_decisions_decision ON intake_dispatch_decisions(decision);

-- §3.1 / §20A.3 pending_extractions, the seed's columns and indexes verbatim; observation_id and depth are
-- Kenning additions (I8): which observation the row extracts and at what depth (deep downgrades to shallow).
CREATE TABLE pending_extractions (
    pending_id TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL,
    source_ref TEXT NOT NULL,
    from_version_id TEXT,
    to_version_id TEXT,
    queued_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    priority TEXT NOT NULL DEFAULT 'normal',
    retries INTEGER NOT NULL DEFAULT 0,
    max_retries INTEGER NOT NULL DEFAULT 3,
    max_age_hours INTEGER NOT NULL DEFAULT 168,
    status TEXT NOT NULL DEFAULT 'queued',
    error_code TEXT,
    -- Kenning additions
    observation_id TEXT,
    depth TEXT NOT NULL DEFAULT 'shallow'
);
CREATE UNIQUE INDEX idx_pending_extractions_idempotency
ON pending_extractions(idempotency_key);
CREATE INDEX idx_pending_extractions_status_updated
ON pending_extractions(status, updated_at);

-- Which extraction attempt produced which audit record (§38 keeps knowledge_commit_ids; this keeps the queue row).
CREATE TABLE pending_extraction_audits (
    pending_id TEXT NOT NULL REFERENCES pending_extractions(pending_id),
    extraction_id TEXT NOT NULL,
    PRIMARY KEY (pending_id, extraction_id)
);

-- §13.4 memory modes set by a person (`kenning mode`, `kenning ingest --incognito`); config rules add to these.
-- scope: 'conversation' (a conversation id) or 'source' (an imported file's resolved path, for --incognito).
CREATE TABLE memory_mode_rules (
    scope TEXT NOT NULL CHECK (scope IN ('conversation', 'source')),
    scope_value TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('incognito')),
    activated_at DATETIME NOT NULL,
    activated_by TEXT NOT NULL CHECK (activated_by IN ('user', 'policy')),
    PRIMARY KEY (scope, scope_value)
);

-- §23 DailyExtractionBudget usage, one row per UTC day of the run clock; limits live in config (intake.budget).
CREATE TABLE extraction_budget_days (
    day TEXT PRIMARY KEY,
    deep_used INTEGER NOT NULL DEFAULT 0,
    critical_used INTEGER NOT NULL DEFAULT 0,
    tokens_used INTEGER NOT NULL DEFAULT 0,
    usd_used REAL NOT NULL DEFAULT 0,
    deferred INTEGER NOT NULL DEFAULT 0,
    deep_by_surface JSON NOT NULL DEFAULT '{}',   -- deep slots taken per surface (browser, note, document caps)
    last_reset_at DATETIME NOT NULL
);
