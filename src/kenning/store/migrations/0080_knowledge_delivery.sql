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
-- §42A.1.4 recent activity is when a node was last evidenced (said, confirmed), not when Kenning stored it.
CREATE INDEX idx_nodes_verified ON nodes(last_verified_at);

-- Each FTS term's document count (fts5vocab over the contentless index): a request word found in too large a share
-- of nodes names nothing in particular, and BM25-ranking all its matches would cost the packet its latency budget.
CREATE VIRTUAL TABLE fts_nodes_vocab USING fts5vocab(fts_nodes, row);

-- A node's current in-edges without reading the rows (hub counts and neighbours, §42A.1.4): the out-direction has
-- idx_edges_current_unique already.
CREATE INDEX idx_edges_target_current ON edges(target_id) WHERE end_date IS NULL;

-- Payload fields the packet filters on, indexed per kind (expression indexes; the queries spell them the same way):
-- a directive's priority class (an "absolute" one applies to every request) and an obligation's deadline.
CREATE INDEX idx_nodes_directive_priority ON nodes(json_extract(payload, '$.priority_class'))
    WHERE node_kind = 'memory_directive';
CREATE INDEX idx_nodes_obligation_due ON nodes(json_extract(payload, '$.deadline.date'))
    WHERE node_kind = 'obligation';

-- The entities a goal or an obligation names in its payload (§29.3 linked_entity_ids / primary_entity_id, §4.7
-- linked_entity_refs), kept by triggers like fts_nodes: derived, never written by hand.
CREATE TABLE node_payload_refs (
    ref_id TEXT NOT NULL,
    node_id TEXT NOT NULL,
    PRIMARY KEY (ref_id, node_id)
) WITHOUT ROWID;
CREATE INDEX idx_node_payload_refs_node ON node_payload_refs(node_id);

CREATE TRIGGER nodes_refs_ai AFTER INSERT ON nodes WHEN NEW.node_kind IN ('goal', 'obligation') BEGIN
  INSERT OR IGNORE INTO node_payload_refs (ref_id, node_id)
  SELECT value, NEW.id FROM json_each(NEW.payload, '$.linked_entity_ids') WHERE type = 'text'
  UNION SELECT value, NEW.id FROM json_each(NEW.payload, '$.linked_entity_refs') WHERE type = 'text'
  UNION SELECT json_extract(NEW.payload, '$.primary_entity_id'), NEW.id
        WHERE json_type(NEW.payload, '$.primary_entity_id') = 'text';
END;

CREATE TRIGGER nodes_refs_au AFTER UPDATE OF payload, node_kind ON nodes BEGIN
  DELETE FROM node_payload_refs WHERE node_id = OLD.id;
  INSERT OR IGNORE INTO node_payload_refs (ref_id, node_id)
  SELECT value, NEW.id FROM json_each(NEW.payload, '$.linked_entity_ids')
    WHERE type = 'text' AND NEW.node_kind IN ('goal', 'obligation')
  UNION SELECT value, NEW.id FROM json_each(NEW.payload, '$.linked_entity_refs')
    WHERE type = 'text' AND NEW.node_kind IN ('goal', 'obligation')
  UNION SELECT json_extract(NEW.payload, '$.primary_entity_id'), NEW.id
        WHERE json_type(NEW.payload, '$.primary_entity_id') = 'text' AND NEW.node_kind IN ('goal', 'obligation');
END;

CREATE TRIGGER nodes_refs_ad AFTER DELETE ON nodes BEGIN
  DELETE FROM node_payload_refs WHERE node_id = OLD.id;
END;

INSERT OR IGNORE INTO node_payload_refs (ref_id, node_id)
SELECT j.value, n.id FROM nodes n, json_each(n.payload, '$.linked_entity_ids') j
  WHERE n.node_kind IN ('goal', 'obligation') AND j.type = 'text'
UNION SELECT j.value, n.id FROM nodes n, json_each(n.payload, '$.linked_entity_refs') j
  WHERE n.node_kind IN ('goal', 'obligation') AND j.type = 'text'
UNION SELECT json_extract(n.payload, '$.primary_entity_id'), n.id FROM nodes n
  WHERE n.node_kind IN ('goal', 'obligation') AND json_type(n.payload, '$.primary_entity_id') = 'text';
