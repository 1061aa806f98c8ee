-- Vault size (issue 24 §2, decision Y1): the forward index (R51) in ~2 bytes a token instead of 12. Each token gets a
-- small integer id in search_term_docs (the vocabulary, already one row per token key, R54). Per document, `terms`
-- holds its token ids ascending as LEB128 varints of the gaps (the first gap is the first id), `codes` one byte per
-- token: its counts per FTS column (speaker, body, extra, context) as speaker<<7 | extra<<6 | body<<3 | context when
-- speaker, extra ≤ 1 and body, context ≤ 7 (97.6% of tokens at 100k messages), else 0 with the four counts as u8
-- each in `counts`, in token order. A count past a byte: the row's blobs are NULL, hits from FTS5, as before.
-- A vault whose counts are complete is recoded here (store/search_recode.py: ids = rank in key order); any other
-- is emptied, and the next index run refills the rows and recounts (search reads FTS5 until then: same counts).
CREATE TEMP TABLE search_y1_state AS SELECT COALESCE((SELECT term_docs_complete FROM search_state WHERE id = 1), 0) = 1
    AS recode;
CREATE TABLE search_term_docs_y1 (
  key INTEGER PRIMARY KEY,              -- the token's forward-index key (BLAKE2b, R54)
  docs INTEGER NOT NULL,                -- documents holding it
  id INTEGER NOT NULL                   -- its id in search_doc_terms records (1, 2, … as first indexed)
);
INSERT INTO search_term_docs_y1(key, docs, id)
  SELECT key, docs, row_number() OVER (ORDER BY key) FROM search_term_docs WHERE (SELECT recode FROM search_y1_state);
DROP TABLE search_term_docs;
ALTER TABLE search_term_docs_y1 RENAME TO search_term_docs;
CREATE UNIQUE INDEX idx_search_term_docs_id ON search_term_docs(id);
CREATE TABLE search_doc_terms_y1 (
  doc_rowid INTEGER PRIMARY KEY,        -- search_docs.doc_rowid = search_fts rowid
  length INTEGER NOT NULL,              -- tokens in all columns
  terms BLOB,                           -- the token ids ascending, varint gaps
  codes BLOB,                           -- a count code per token
  counts BLOB                           -- u8 × 4 per token whose code is 0, in token order; NULL when none
);
INSERT INTO search_doc_terms_y1(doc_rowid, length, terms, codes, counts)
  SELECT doc_rowid, length, kenning_forward_terms(terms), kenning_forward_codes(terms), kenning_forward_counts(terms)
  FROM search_doc_terms
  WHERE (SELECT recode FROM search_y1_state) ORDER BY doc_rowid;
DROP TABLE search_doc_terms;
ALTER TABLE search_doc_terms_y1 RENAME TO search_doc_terms;
-- `keys` now holds the u32 token ids (LE) of a document whose `terms` is NULL
DELETE FROM search_doc_keys WHERE NOT (SELECT recode FROM search_y1_state);
UPDATE search_doc_keys SET keys = kenning_forward_keys(keys);
DELETE FROM search_doc_keys WHERE keys IS NULL;
UPDATE search_state SET term_docs_complete = (SELECT COUNT(*) = 0 FROM search_docs)
  WHERE NOT (SELECT recode FROM search_y1_state);
DROP TABLE temp.search_y1_state;
