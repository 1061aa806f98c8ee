-- Search at scale (issue 9, decision R54): how many documents hold each token, kept by the index stage from the
-- forward rows it writes and deletes (search_doc_terms, R51), so that a query word's document frequency is one
-- keyed lookup instead of an fts5vocab count — a walk of the word's whole doclist (17.5 ms for a word in 619k of
-- 1M documents). `key` = the token's forward-index key (first 8 bytes of BLAKE2b of the token as FTS5's tokenizer
-- stores it, little-endian, as a signed 64-bit integer). search_state.term_docs_complete = 1 once every search
-- document is counted (at once on an empty index; for documents indexed before this table, by the next index run).
CREATE TABLE search_term_docs (
  key INTEGER PRIMARY KEY,
  docs INTEGER NOT NULL
);
ALTER TABLE search_state ADD COLUMN term_docs_complete INTEGER NOT NULL DEFAULT 0;
UPDATE search_state SET term_docs_complete = (SELECT COUNT(*) = 0 FROM search_docs);
-- The distinct token keys (u64 LE each) of a document whose forward row is NULL (a count past a byte, R51), so that
-- its counts can be taken back when it is deleted (search_fts is contentless). A vault whose NULL rows predate
-- this table cannot be counted (term_docs_complete = -1: fts5vocab until a full `kenning reindex`).
CREATE TABLE search_doc_keys (
  doc_rowid INTEGER PRIMARY KEY,
  keys BLOB NOT NULL
);
