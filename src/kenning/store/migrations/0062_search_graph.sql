-- Search, part 2 (issue 9): vectors move to the model layer's vector index (space 'search', decisions R15), so the
-- search-only vector registry goes; the graph's own signals get what query-time matching needs.

-- R15: search vectors are vector_items of space 'search' (item_id = search_docs.doc_rowid). The old per-model
-- sqlite-vec tables (search_vec_<backend>_<dim>) are dropped here when they have the default names and by the
-- index stage otherwise; the next index run embeds every document into the vector index.
DROP TABLE IF EXISTS search_vec_minilm_384;
DROP TABLE IF EXISTS search_vec_hash_384;
DROP TABLE IF EXISTS search_vector_state;
DROP TABLE IF EXISTS search_vector_spaces;

-- A change counter the index stage bumps whenever it writes: in-memory per-document metadata (speaker, times,
-- kind) used to filter the vector lanes is valid for one version.
CREATE TABLE search_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
);
INSERT INTO search_state(id, version) VALUES (1, 0);

-- Every name that refers to an entity — canonical name, aliases, nicknames, lexicon terms — normalised
-- (casefolded, whitespace collapsed), so the entity lane finds the entities a query names with index lookups.
-- Kept by the index stage from entities / lexicon_terms (R18).
CREATE TABLE search_entity_names (
  name_norm TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  source TEXT NOT NULL,                 -- canonical | alias | lexicon
  PRIMARY KEY (name_norm, entity_id)
) WITHOUT ROWID;
CREATE INDEX idx_search_entity_names_entity ON search_entity_names(entity_id);

-- Document frequency per term, read by the FTS lane to search rare terms first and cap common ones (R19).
CREATE VIRTUAL TABLE search_fts_vocab USING fts5vocab(search_fts, row);
