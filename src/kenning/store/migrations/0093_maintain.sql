-- Nightly upkeep (seed 003 §42, §42A.5–6, §3.6): the maintain DAG's generations and steps (high-water marks,
-- so a killed run resumes), the merge map of folded nodes, the review queues the cleanup fills, fold verdicts,
-- co-occurrence patterns and procedure motifs. Node and edge changes themselves go through the single writer.

-- One generation per `kenning maintain`; a generation that did not finish is resumed by the next run.
CREATE TABLE maintain_runs (
    generation INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    now TEXT NOT NULL,            -- the clock every step of this generation measures ages against
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'degraded')),
    receipt JSON
);

CREATE TABLE maintain_steps (
    generation INTEGER NOT NULL REFERENCES maintain_runs(generation),
    step TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    high_water TEXT,
    counts JSON,
    finished_at TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (generation, step)
);

-- §42 NodeMergeMap{old, new, merged_at, merge_commit_id}.
CREATE TABLE node_merge_map (
    old_node_id TEXT PRIMARY KEY,
    new_node_id TEXT NOT NULL,
    merged_at TEXT NOT NULL,
    merge_commit_id TEXT NOT NULL
);
CREATE INDEX idx_node_merge_map_new ON node_merge_map(new_node_id);

-- §42 queues for a person: near-duplicate merge candidates, contradictions, orphans, stale procedures,
-- §42A.5 standing-procedure / procedure candidates. item_id is deterministic so a rerun adds nothing.
CREATE TABLE maintain_queue (
    item_id TEXT PRIMARY KEY,
    queue TEXT NOT NULL CHECK (queue IN ('merge', 'contradiction', 'orphan', 'stale_procedure',
                                         'standing_procedure_candidate', 'procedure_candidate')),
    node_ids JSON NOT NULL,
    reason TEXT NOT NULL,
    score REAL NOT NULL DEFAULT 0,
    detail JSON,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved', 'dismissed')),
    first_seen_at TEXT NOT NULL
);
CREATE INDEX idx_maintain_queue ON maintain_queue(queue, status, score DESC);

-- §42 FoldDecision{verdict, node_a_id, node_b_id, canonical_name?, canonical_description?, reviewed_by,
-- confidence}; reviewed_by adds 'rule' for the deterministic exact-alias fold (G33).
CREATE TABLE fold_decisions (
    node_a_id TEXT NOT NULL,
    node_b_id TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('FOLD', 'RELATED', 'CONFLICT')),
    canonical_name TEXT,
    canonical_description TEXT,
    reviewed_by TEXT NOT NULL CHECK (reviewed_by IN ('llm', 'human', 'rule')),
    confidence REAL NOT NULL,
    decided_at TEXT NOT NULL,
    prompt_version TEXT,
    PRIMARY KEY (node_a_id, node_b_id)
);

-- §42A.5 CoOccurrencePattern and ProcedureMotif.
CREATE TABLE co_occurrence_patterns (
    pattern_id TEXT PRIMARY KEY,
    entity_ids JSON NOT NULL,
    co_occurrence_count INTEGER NOT NULL,
    distinct_observation_count INTEGER NOT NULL,
    surfaces JSON NOT NULL,
    work_context_ids JSON NOT NULL,
    temporal_span_days REAL NOT NULL,
    temporal_regularity TEXT NOT NULL CHECK (temporal_regularity IN ('none', 'weekly', 'monthly', 'irregular')),
    regularity_confidence REAL NOT NULL,
    suggested_procedure_kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('detected', 'pending_review', 'confirmed', 'dismissed'))
);

CREATE TABLE procedure_motifs (
    motif_id TEXT PRIMARY KEY,
    steps JSON NOT NULL,
    support_count INTEGER NOT NULL,
    success_support_count INTEGER NOT NULL,
    failure_support_count INTEGER NOT NULL,
    suggested_node_kind TEXT NOT NULL CHECK (suggested_node_kind IN ('procedure', 'standing_procedure',
                                                                     'undetermined')),
    status TEXT NOT NULL CHECK (status IN ('detected', 'pending_review', 'confirmed', 'dismissed'))
);

-- Small marks of the upkeep (last VACUUM, the fold high-water mark).
CREATE TABLE maintain_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
