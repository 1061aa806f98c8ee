-- Issue 24 §2, the vector lane (decisions X1–X3): store each vector once and each text once.
--
-- X2: vector_items.text becomes NULL where the text is derived from its source: the search space's items (one per
-- search document; ~80 MB at 100k messages) get their text from search_docs + messages through the vector fill's
-- rules (kenning.retrieve.vector_fill.texts_for) when a model migration re-embeds them. The small spaces (belief
-- and graph nodes, threads) keep their text: nothing else holds it in the form that was embedded.
-- The table is rebuilt (SQLite cannot drop NOT NULL); vids and AUTOINCREMENT's high-water mark are kept, so a
-- vid is still never reused.
CREATE TABLE vector_items_x2 (
  vid INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale vector can never be taken for a new item
  space TEXT NOT NULL,                  -- which collection (e.g. "belief_nodes", "graph_nodes", "search")
  item_id TEXT NOT NULL,
  kind TEXT,                            -- optional label to filter on (e.g. a node kind)
  text TEXT,                            -- NULL: derived from the item's source when needed (X2)
  text_sha256 TEXT NOT NULL,            -- sha256 of the embedded text: change detection and the cache's key (X1)
  rev INTEGER NOT NULL,                 -- change counter: a migration re-embeds items changed after it started
  updated_at_utc TEXT NOT NULL,
  UNIQUE (space, item_id)
);
INSERT INTO vector_items_x2(vid, space, item_id, kind, text, text_sha256, rev, updated_at_utc)
  SELECT vid, space, item_id, kind, CASE WHEN space = 'search' THEN NULL ELSE text END, text_sha256, rev,
         updated_at_utc FROM vector_items ORDER BY vid;
DELETE FROM sqlite_sequence WHERE name = 'vector_items_x2';
INSERT INTO sqlite_sequence(name, seq)
  SELECT 'vector_items_x2', MAX(seq) FROM (SELECT seq FROM sqlite_sequence WHERE name = 'vector_items'
                                           UNION ALL SELECT MAX(vid) FROM vector_items_x2) WHERE seq IS NOT NULL
  HAVING COUNT(*) > 0;
DROP TABLE vector_items;
ALTER TABLE vector_items_x2 RENAME TO vector_items;
CREATE INDEX idx_vector_items_rev ON vector_items(rev);
-- X1: the embedding cache looks an identical text up here (text_sha256 → vid → the vec0 row).
CREATE INDEX idx_vector_items_sha ON vector_items(text_sha256);

-- X1: a vector the active vec0 table holds (an item with the same text, same model and dimension) is not kept a
-- second time in the cache. Rows with no vec0 twin (queries, texts of removed items) stay.
DELETE FROM embedding_cache WHERE EXISTS (
  SELECT 1 FROM vector_items i JOIN vector_tables t ON t.status = 'active'
  WHERE i.text_sha256 = embedding_cache.text_sha256 AND t.model_id = embedding_cache.model_id
    AND t.dimension = embedding_cache.dimension);
