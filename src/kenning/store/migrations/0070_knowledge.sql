-- DOC72 knowledge store (seed 003 §3.2–§3.4, §33, §34, §37, §38, §34.8). Canonical, not a cache (§28): user
-- feedback lives only here and in the event log. Every row change goes through knowledge/writer.py.

-- §3.2, column names and defaults seed-exact; lifecycle_substate is §5.7 NodeLifecycleMetadata's second field.
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    node_kind TEXT NOT NULL,
    canonical_name TEXT NOT NULL,
    alpha REAL NOT NULL DEFAULT 2.0,
    beta REAL NOT NULL DEFAULT 2.0,
    confidence REAL NOT NULL DEFAULT 0.5,
    staleness_state TEXT NOT NULL DEFAULT 'fresh',
    lifecycle_state TEXT NOT NULL DEFAULT 'observed',
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    last_verified_at DATETIME,
    payload JSON,
    is_active BOOLEAN DEFAULT 1,
    lifecycle_substate TEXT
);
CREATE INDEX idx_nodes_kind ON nodes(node_kind, is_active);
CREATE INDEX idx_nodes_lifecycle ON nodes(lifecycle_state, is_active);
CREATE INDEX idx_nodes_name ON nodes(canonical_name COLLATE NOCASE);

CREATE TABLE aliases (
    id TEXT PRIMARY KEY,
    node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    normalized_alias TEXT NOT NULL,
    alias_type TEXT NOT NULL,
    confidence REAL DEFAULT 0.8
);
CREATE INDEX idx_alias_search ON aliases(normalized_alias);
CREATE INDEX idx_alias_node ON aliases(node_id);

CREATE TABLE edges (
    source_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    target_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    relation_type TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 0.5,
    lifecycle_state TEXT DEFAULT 'active',
    start_date DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    end_date DATETIME,
    payload JSON,
    PRIMARY KEY (source_id, target_id, relation_type, start_date)
);
CREATE INDEX idx_edges_target ON edges(target_id, relation_type);
CREATE UNIQUE INDEX idx_edges_current_unique ON edges(source_id, target_id, relation_type) WHERE end_date IS NULL;

CREATE TABLE experience_records (
    target_node_id TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
    total_usage_count INTEGER DEFAULT 0,
    total_success_count INTEGER DEFAULT 0,
    total_failure_count INTEGER DEFAULT 0,
    total_correction_count INTEGER DEFAULT 0,
    recent_usage_count INTEGER DEFAULT 0,
    recent_success_count INTEGER DEFAULT 0,
    recent_failure_count INTEGER DEFAULT 0,
    recent_correction_count INTEGER DEFAULT 0,
    last_used_at DATETIME,
    variant_distribution JSON,
    context_distribution JSON,
    recent_events JSON,
    older_event_summary JSON,
    overall_trend TEXT DEFAULT 'new',
    trend_signal TEXT
);
CREATE INDEX idx_experience_last_used ON experience_records(last_used_at);

-- §3.2 columns, then §33.3's epistemic fields and §33.3A's immutable snapshot (excerpt_hash, capture_timestamp,
-- source_metadata), then where in Kenning's raw layer the excerpt sits (message + character span), so a node's
-- provenance verifies against raw like a ledger quote does.
CREATE TABLE provenance_entries (
    id TEXT PRIMARY KEY,
    node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    entry_type TEXT NOT NULL,
    source_description TEXT,
    source_ref TEXT,
    citation TEXT,
    authority_type TEXT,
    still_current TEXT,
    confidence_contribution REAL,
    supersedes_entry_id TEXT,
    correction_reason TEXT,
    jurisdiction_scope JSON,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    authorial_voice TEXT,
    author_entity_id TEXT,
    assertion_type TEXT,
    verbatim_excerpt TEXT,
    excerpt_hash TEXT,
    capture_timestamp DATETIME,
    source_metadata JSON,
    email_context JSON,
    message_id TEXT,
    char_start INTEGER,
    char_end INTEGER
);
CREATE INDEX idx_provenance_node ON provenance_entries(node_id);
CREATE INDEX idx_provenance_entries_message ON provenance_entries(message_id);

-- §3.4 with the modern SQLite apsw brings: contentless_delete lets the seed's DELETE triggers work as written.
CREATE VIRTUAL TABLE fts_nodes USING fts5(
    canonical_name,
    searchable_text,
    tokenize='unicode61',
    content='',
    contentless_delete=1
);

CREATE TRIGGER nodes_ai AFTER INSERT ON nodes BEGIN
  INSERT INTO fts_nodes(rowid, canonical_name, searchable_text)
  VALUES (NEW.rowid, NEW.canonical_name,
          NEW.canonical_name || ' ' ||
          COALESCE((SELECT GROUP_CONCAT(normalized_alias, ' ') FROM aliases WHERE node_id = NEW.id), '') || ' ' ||
          COALESCE(json_extract(NEW.payload, '$.description'), ''));
END;

CREATE TRIGGER nodes_au AFTER UPDATE ON nodes BEGIN
  DELETE FROM fts_nodes WHERE rowid = OLD.rowid;
  INSERT INTO fts_nodes(rowid, canonical_name, searchable_text)
  VALUES (NEW.rowid, NEW.canonical_name,
          NEW.canonical_name || ' ' ||
          COALESCE((SELECT GROUP_CONCAT(normalized_alias, ' ') FROM aliases WHERE node_id = NEW.id), '') || ' ' ||
          COALESCE(json_extract(NEW.payload, '$.description'), ''));
END;

CREATE TRIGGER nodes_ad AFTER DELETE ON nodes BEGIN
  DELETE FROM fts_nodes WHERE rowid = OLD.rowid;
END;

CREATE TRIGGER aliases_ai AFTER INSERT ON aliases BEGIN
  DELETE FROM fts_nodes WHERE rowid = (SELECT rowid FROM nodes WHERE id = NEW.node_id);
  INSERT INTO fts_nodes(rowid, canonical_name, searchable_text)
  SELECT n.rowid, n.canonical_name,
         n.canonical_name || ' ' ||
         COALESCE((SELECT GROUP_CONCAT(normalized_alias, ' ') FROM aliases WHERE node_id = NEW.node_id), '') || ' ' ||
         COALESCE(json_extract(n.payload, '$.description'), '')
  FROM nodes n WHERE n.id = NEW.node_id;
END;

CREATE TRIGGER aliases_au AFTER UPDATE ON aliases BEGIN
  DELETE FROM fts_nodes WHERE rowid = (SELECT rowid FROM nodes WHERE id = NEW.node_id);
  INSERT INTO fts_nodes(rowid, canonical_name, searchable_text)
  SELECT n.rowid, n.canonical_name,
         n.canonical_name || ' ' ||
         COALESCE((SELECT GROUP_CONCAT(normalized_alias, ' ') FROM aliases WHERE node_id = NEW.node_id), '') || ' ' ||
         COALESCE(json_extract(n.payload, '$.description'), '')
  FROM nodes n WHERE n.id = NEW.node_id;
END;

CREATE TRIGGER aliases_ad AFTER DELETE ON aliases BEGIN
  DELETE FROM fts_nodes WHERE rowid = (SELECT rowid FROM nodes WHERE id = OLD.node_id);
  INSERT INTO fts_nodes(rowid, canonical_name, searchable_text)
  SELECT n.rowid, n.canonical_name,
         n.canonical_name || ' ' ||
         COALESCE((SELECT GROUP_CONCAT(normalized_alias, ' ') FROM aliases WHERE node_id = OLD.node_id), '') || ' ' ||
         COALESCE(json_extract(n.payload, '$.description'), '')
  FROM nodes n WHERE n.id = OLD.node_id;
END;

-- §37 KnowledgeCommit; seq orders the history (the event log exports in seq order and rebuild replays it).
CREATE TABLE knowledge_commits (
    seq INTEGER PRIMARY KEY,
    commit_id TEXT NOT NULL UNIQUE,
    parent_commit_ids JSON NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('forward', 'rollback')),
    rolled_back_commit_id TEXT,
    timestamp DATETIME NOT NULL,
    source_event TEXT NOT NULL,
    change_summary TEXT NOT NULL,
    extraction_prompt_version TEXT,
    reversible INTEGER NOT NULL DEFAULT 1,
    idempotency_key TEXT UNIQUE,
    expected_updated_at TEXT,
    run_id TEXT
);
CREATE INDEX idx_knowledge_commits_rolled_back ON knowledge_commits(rolled_back_commit_id);

CREATE TABLE knowledge_commit_mutations (
    commit_id TEXT NOT NULL REFERENCES knowledge_commits(commit_id),
    ordinal INTEGER NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('create', 'update', 'archive', 'edge_create', 'edge_remove')),
    target_id TEXT NOT NULL,
    patch JSON NOT NULL,
    reverse_patch JSON NOT NULL,
    PRIMARY KEY (commit_id, ordinal)
);
CREATE INDEX idx_knowledge_mutations_target ON knowledge_commit_mutations(target_id);

-- §38 ExtractionAuditRecord, one per extraction; knowledge_commit_ids links the commits it produced.
CREATE TABLE extraction_audit (
    extraction_id TEXT PRIMARY KEY,
    surface TEXT NOT NULL,
    source_content_ref TEXT NOT NULL,
    extraction_prompt_version TEXT NOT NULL,
    significance_score REAL NOT NULL,
    dispatch_decision TEXT NOT NULL CHECK (dispatch_decision IN ('skip', 'shallow', 'deep', 'defer')),
    skip_reason TEXT,
    error_code TEXT,
    retry_count INTEGER NOT NULL DEFAULT 0,
    skip_content_fingerprint TEXT,
    skip_entity_mentions JSON,
    items_extracted INTEGER NOT NULL DEFAULT 0,
    items_promoted INTEGER NOT NULL DEFAULT 0,
    items_filtered_by_write_gate INTEGER NOT NULL DEFAULT 0,
    knowledge_commit_ids JSON NOT NULL,
    extracted_at DATETIME NOT NULL
);
CREATE INDEX idx_extraction_audit_source ON extraction_audit(source_content_ref);

-- §34.8 ExtractionOutcomeEvent: what the §6.5 quality gates' rolling precision is computed from.
CREATE TABLE extraction_outcome_events (
    event_id TEXT PRIMARY KEY,
    source_surface TEXT NOT NULL,
    extracted_item_id TEXT,
    extracted_item_kind TEXT NOT NULL,
    outcome TEXT NOT NULL,
    severity TEXT,
    user_visible INTEGER NOT NULL DEFAULT 1,
    occurred_at DATETIME NOT NULL,
    commit_id TEXT
);
CREATE INDEX idx_outcome_kind_time ON extraction_outcome_events(extracted_item_kind, occurred_at);
CREATE INDEX idx_outcome_item ON extraction_outcome_events(extracted_item_id);
CREATE INDEX idx_outcome_commit ON extraction_outcome_events(commit_id);

-- Small key/value marks of the node store's derived work (e.g. how far node vectors are embedded, §3.3).
CREATE TABLE knowledge_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
