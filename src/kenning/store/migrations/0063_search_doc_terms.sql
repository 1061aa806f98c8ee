-- Search at scale (issue 9, decision R51): a forward index of the FTS5 documents — per document its length in
-- tokens (all columns, as FTS5's docsize) and, per distinct token, its count in each FTS column — so that the
-- shared candidate pool (R40) reads every query word's hits for its documents with one keyed lookup instead of
-- making FTS5 walk the OR of every query word in each pruning step. `terms` packs sorted 12-byte records:
-- 8-byte key (little-endian, the first 8 bytes of BLAKE2b of the token as FTS5's tokenizer stores it) and one
-- count byte per column (speaker, body, extra, context); NULL when a count does not fit a byte (that document's
-- hits are then read from FTS5). Kept by the index stage wherever it writes search_fts; documents indexed before
-- this table existed are filled by the next index run.
CREATE TABLE search_doc_terms (
  doc_rowid INTEGER PRIMARY KEY,        -- search_docs.doc_rowid = search_fts rowid
  length INTEGER NOT NULL,              -- tokens in all columns
  terms BLOB                            -- sorted (key u64 LE, count u8 × 4) records
);
