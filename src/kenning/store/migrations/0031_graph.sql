-- The materialized graph (seed 001 stage 6, §6.1): a read-only projection of stages 1–5, rebuilt each run.
CREATE TABLE graph_nodes (
  node_id TEXT PRIMARY KEY,               -- uuid5(["node", node_type, source_id])
  node_type TEXT NOT NULL,
  source_id TEXT NOT NULL,
  label TEXT NOT NULL,
  metadata_json TEXT NOT NULL             -- JCS, with schema_version
);
CREATE INDEX idx_graph_nodes_type ON graph_nodes(node_type, node_id);
CREATE INDEX idx_graph_nodes_source ON graph_nodes(node_type, source_id);

CREATE TABLE graph_edges (
  edge_id TEXT PRIMARY KEY,               -- uuid5(["edge", edge_type, src_node_id, dst_node_id])
  edge_type TEXT NOT NULL,
  src_node_id TEXT NOT NULL REFERENCES graph_nodes(node_id) ON DELETE CASCADE,
  dst_node_id TEXT NOT NULL REFERENCES graph_nodes(node_id) ON DELETE CASCADE,
  metadata_json TEXT
);
CREATE INDEX idx_graph_edges_src ON graph_edges(src_node_id);
CREATE INDEX idx_graph_edges_dst ON graph_edges(dst_node_id);
CREATE INDEX idx_graph_edges_type ON graph_edges(edge_type, edge_id);
