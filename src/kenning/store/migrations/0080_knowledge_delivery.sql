-- Knowledge delivery (issue 19; seed 003 §42A.1, §43): context packets with their novelty-gate telemetry, and what
-- each session was already given (so a later packet in the same session does not repeat it).

-- §42A.1.5 NoveltyGateTelemetry per packet: the seed's names in telemetry (JSON), the packet's lines, the node ids
-- that filled the gate and those later referenced (gate_hit_rate = referenced / in gate).
CREATE TABLE context_packets (
    packet_id TEXT PRIMARY KEY,
    session_id TEXT,
    request TEXT NOT NULL,
    primary_node_id TEXT,
    created_at TEXT NOT NULL,
    budget INTEGER NOT NULL,
    tokens_used INTEGER NOT NULL,
    lines JSON NOT NULL,
    gate_node_ids JSON NOT NULL,
    referenced_node_ids JSON NOT NULL DEFAULT '[]',
    gate_hit_rate REAL,
    telemetry JSON NOT NULL
);
CREATE INDEX idx_context_packets_session ON context_packets(session_id, created_at);

-- Novelty: one row per (session, item) the session was given; the first packet that gave it wins.
CREATE TABLE context_session_items (
    session_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    packet_id TEXT NOT NULL,
    given_at TEXT NOT NULL,
    PRIMARY KEY (session_id, item_id)
);

-- The gate's "recently active" source orders by updated_at (§42A.1.4 source 3): without an index that is a sort of
-- every node.
CREATE INDEX idx_nodes_updated ON nodes(updated_at);

-- Each FTS term's document count (fts5vocab over the contentless index): a request word found in too large a share
-- of nodes names nothing in particular, and BM25-ranking all its matches would cost the packet its latency budget.
CREATE VIRTUAL TABLE fts_nodes_vocab USING fts5vocab(fts_nodes, row);
