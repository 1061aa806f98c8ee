-- Vault size (issue 24 §2, decision Y1): the forward index (R51) in 4-byte records instead of 12. Each token gets a
-- small integer id in search_term_docs (the vocabulary, already one row per token key, R54), and a record is one
-- little-endian u32: the token's id in the low 24 bits, its counts per FTS column (speaker, body, extra, context) in
-- the high 8 bits as speaker<<7 | extra<<6 | body<<3 | context when speaker, extra ≤ 1 and body, context ≤ 7
-- (97.6% of records at 100k messages); else the code is 0 and the four counts are one u8 each in `counts`, in
-- record order. A count past a byte or an id past 24 bits: `terms` NULL, hits from FTS5, as before.
-- The old rows cannot be rewritten in SQL: they are emptied and the next index run refills them from the raw layer
-- (search reads hits from FTS5 until then: the same counts, R51); the per-token counts are recounted with them.
DELETE FROM search_doc_terms;
DELETE FROM search_doc_keys;   -- `keys` now holds u32 token ids (LE) of a document whose `terms` is NULL
DROP TABLE search_doc_terms;
CREATE TABLE search_doc_terms (
  doc_rowid INTEGER PRIMARY KEY,        -- search_docs.doc_rowid = search_fts rowid
  length INTEGER NOT NULL,              -- tokens in all columns
  terms BLOB,                           -- sorted u32 records: token id (24 bits) | count code << 24
  counts BLOB                           -- u8 × 4 per record whose code is 0, in record order; NULL when none
);
DROP TABLE search_term_docs;
CREATE TABLE search_term_docs (
  key INTEGER PRIMARY KEY,              -- the token's forward-index key (BLAKE2b, R54)
  docs INTEGER NOT NULL,                -- documents holding it
  id INTEGER NOT NULL                   -- its id in search_doc_terms records (1, 2, … in the order first indexed)
);
CREATE UNIQUE INDEX idx_search_term_docs_id ON search_term_docs(id);
UPDATE search_state SET term_docs_complete = (SELECT COUNT(*) = 0 FROM search_docs);
