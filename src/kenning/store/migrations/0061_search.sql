-- Search index (issue 9): one registry of searchable documents, a contentless FTS5 index over them, and the
-- registry of vector spaces (one sqlite-vec table per embedding model, created when first used).
-- Turns/messages are indexed now; assertions, beliefs and entities add rows with their own doc_kind later.
-- Contentless (R6): the text lives once, in messages.text_raw; the index stores only what BM25 needs, and
-- contentless_delete=1 lets a changed message be deleted and re-inserted.

CREATE TABLE search_docs (
  doc_rowid INTEGER PRIMARY KEY,        -- rowid in search_fts and in every search_vec_* table
  doc_kind TEXT NOT NULL,               -- 'message' (later: 'assertion', 'belief', 'entity')
  doc_id TEXT NOT NULL,                 -- messages.message_id, …
  conversation_id TEXT,
  speaker TEXT,                         -- messages.author_name, else the role
  role TEXT,
  occurred_at_utc TEXT,                 -- messages.created_at_utc (a transcript turn: its session's time)
  position INTEGER,                     -- messages.order_index: neighbours for adjacency
  event_start TEXT,                     -- the first time expression in the text, resolved against its date
  event_end TEXT,                       --   (YYYY-MM-DD, inclusive; retrieve.when, R8); issue 4's time layer replaces it
  content_sha256 TEXT NOT NULL,         -- sha256 of the indexed fields: unchanged text is never re-indexed
  source_changed_run_id TEXT,           -- messages.last_changed_run_id when indexed
  indexed_run_id TEXT NOT NULL,
  UNIQUE (doc_kind, doc_id)
);
CREATE INDEX idx_search_docs_position ON search_docs(conversation_id, position);
CREATE INDEX idx_search_docs_time ON search_docs(occurred_at_utc);
CREATE INDEX idx_search_docs_speaker ON search_docs(speaker COLLATE NOCASE);
CREATE INDEX idx_search_docs_event ON search_docs(event_start, event_end);

CREATE VIRTUAL TABLE search_fts USING fts5(
  speaker, body, extra, context,
  content='', contentless_delete=1,
  tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TABLE search_vector_spaces (
  space TEXT PRIMARY KEY,               -- e.g. minilm_384, hash_384
  backend TEXT NOT NULL,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL,
  table_name TEXT NOT NULL,
  created_run_id TEXT NOT NULL
);

-- Which documents are embedded in which space, from which indexed text.
CREATE TABLE search_vector_state (
  space TEXT NOT NULL REFERENCES search_vector_spaces(space),
  doc_rowid INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL,
  PRIMARY KEY (space, doc_rowid)
);
