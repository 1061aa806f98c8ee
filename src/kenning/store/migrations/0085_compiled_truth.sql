-- Seed 003 §42A.4.2 compiled truth: the per-node read model (CompiledTruthMirrorSchemaV2 with the render input it
-- was built from) and MirrorBuildLockSchema. Derived and rebuildable; never on the node, never in prompts.
CREATE TABLE compiled_truth (
    node_id TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
    canonical_name TEXT NOT NULL,
    node_kind TEXT NOT NULL,
    visibility_class TEXT NOT NULL DEFAULT 'local_only',
    markdown TEXT NOT NULL,
    render_contract_id TEXT NOT NULL,
    render_input JSON NOT NULL,
    node_hash TEXT NOT NULL,
    relationship_hash TEXT NOT NULL,
    provenance_hash TEXT NOT NULL,
    render_input_hash TEXT NOT NULL,
    rendered_at TEXT NOT NULL,
    schema_version INTEGER NOT NULL DEFAULT 2
);

CREATE TABLE compiled_truth_locks (
    node_id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('building', 'idle')),
    build_started_at TEXT NOT NULL,
    owner_job_id TEXT NOT NULL
);
