-- Issue 18 parts 6–7 (decisions I50–I69). Seed 003 §3.2 / §25: the conversation corpus, kept apart from the
-- node graph: one summary row per conversation, its entity links, and the decisions taken in it. The two seed
-- tables are exactly as the seed writes them; what Kenning needs besides (incremental state, checkpoints,
-- note versions) lives in tables of its own so the seed's stay exact.

CREATE TABLE IF NOT EXISTS conversation_threads (
    thread_id TEXT PRIMARY KEY,
    title_hint TEXT,
    linked_entity_ids JSON,
    key_decisions JSON,
    unresolved_items JSON,
    checkpoint_summary TEXT,
    occurred_at DATETIME,
    turn_count INTEGER,
    channel TEXT
);
CREATE INDEX IF NOT EXISTS idx_threads_occurred ON conversation_threads(occurred_at DESC);

CREATE TABLE IF NOT EXISTS thread_entity_links (
    thread_id TEXT REFERENCES conversation_threads(thread_id),
    entity_id TEXT REFERENCES nodes(id) ON DELETE CASCADE,
    PRIMARY KEY (thread_id, entity_id)
);
CREATE INDEX IF NOT EXISTS idx_thread_entity ON thread_entity_links(entity_id);

-- §25.1 DecisionCheckpoint, plus the message it was read from (provenance to the quote).
CREATE TABLE IF NOT EXISTS decision_checkpoints (
    decision_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES conversation_threads(thread_id),
    description TEXT NOT NULL,
    reasoning TEXT,
    linked_entity_ids JSON,
    occurred_at DATETIME,
    message_id TEXT,
    ordinal INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_checkpoints_thread ON decision_checkpoints(thread_id, ordinal);

-- Incremental state of the `threads` stage (I52): a thread is rebuilt only when its input hash changes.
CREATE TABLE IF NOT EXISTS thread_builds (
    thread_id TEXT PRIMARY KEY REFERENCES conversation_threads(thread_id),
    conversation_id TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    method TEXT NOT NULL CHECK (method IN ('extractive', 'abstractive', 'extractive_fallback')),
    prompt_ref TEXT,
    llm_call_ids JSON,
    built_run_id TEXT NOT NULL
);

-- §20B.2 note versions: every version of a note kept losslessly (content + its hash), with the session-close
-- decision taken on it (I60–I63).
CREATE TABLE IF NOT EXISTS note_versions (
    version_id TEXT PRIMARY KEY,
    note_id TEXT NOT NULL,
    path TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    char_count INTEGER NOT NULL,
    content TEXT NOT NULL,
    prior_version_id TEXT,
    added_bytes INTEGER,
    decision TEXT NOT NULL,
    observed_at DATETIME NOT NULL,
    run_id TEXT NOT NULL,
    UNIQUE (note_id, content_sha256)
);
CREATE INDEX IF NOT EXISTS idx_note_versions_note ON note_versions(note_id, observed_at);

-- §20B.2 NoteAssessmentPointer (+ when the last deep/shallow extraction was queued, for skip_double_extract).
CREATE TABLE IF NOT EXISTS note_assessment_pointers (
    note_id TEXT PRIMARY KEY,
    last_knowledge_assessed_version_id TEXT NOT NULL,
    pending_extraction_id TEXT,
    extraction_baseline_version_id TEXT,
    last_extracted_at DATETIME,
    updated_at DATETIME NOT NULL
);
