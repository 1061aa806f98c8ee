-- Belief ledger and wiki sources (seed 002 "Belief Revision and Traceability").
-- `wiki_beliefs`, its indexes, the FTS5 table are the seed's text; Kenning's additions are marked.

-- Workspaces: a wiki directory or a named belief space (default `personal`, config beliefs.default_workspace).
CREATE TABLE workspaces (
  slug TEXT PRIMARY KEY,
  root_path TEXT,                       -- the wiki workspace directory on disk (NULL: no files, e.g. chats only)
  created_at TEXT NOT NULL,
  created_in_run TEXT NOT NULL REFERENCES runs(run_id)
);

-- Documents a belief can live in: wiki pages, the raw files they cite, and (for conversation beliefs)
-- one row per conversation, so wiki_beliefs.wiki_document_id is always a real row.
CREATE TABLE documents (
  id TEXT PRIMARY KEY,                  -- uuid5(["document", workspace, kind, path])
  workspace TEXT NOT NULL REFERENCES workspaces(slug) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('wiki_page','raw_source','conversation')),
  path TEXT NOT NULL,                   -- workspace-relative POSIX path; 'conversation/<conversation_id>'
  title TEXT,
  sha256 TEXT,                          -- of the file bytes when last imported (NULL for conversations)
  size_bytes INTEGER,
  conversation_id TEXT REFERENCES conversations(conversation_id),
  created_at TEXT NOT NULL,
  first_run_id TEXT NOT NULL REFERENCES runs(run_id),
  last_changed_run_id TEXT NOT NULL REFERENCES runs(run_id),
  UNIQUE (workspace, kind, path)
);

-- Footnote definitions of wiki pages ([^2]: raw/… p. 3: "quote" <!-- prov:ID -->).
CREATE TABLE wiki_footnotes (
  id TEXT PRIMARY KEY,                  -- uuid5(["footnote", document_id, footnote_key])
  document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  footnote_key TEXT NOT NULL,           -- the label: "2" for [^2]; what belief footnote_ids hold
  raw_path TEXT,                        -- first raw/… path the footnote cites
  page_hint INTEGER,
  definition TEXT NOT NULL,             -- the footnote text as written (continuation lines joined)
  line INTEGER NOT NULL,                -- 1-based line of the definition in the page
  reference_count INTEGER NOT NULL,     -- [^key] references in the page body
  UNIQUE (document_id, footnote_key)
);

-- One verbatim quote anchor: the claim provenance beliefs point to (seed 002 / 06 wiki_claim_provenance).
CREATE TABLE wiki_claim_provenance (
  id TEXT PRIMARY KEY,                  -- the id beliefs cite in provenance_ids
  workspace TEXT NOT NULL REFERENCES workspaces(slug) ON DELETE CASCADE,
  document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,   -- where the citation is made
  footnote_key TEXT,                    -- NULL for conversation provenance
  source_kind TEXT NOT NULL CHECK (source_kind IN ('raw_file','conversation')),
  raw_path TEXT,                        -- workspace-relative path of the cited raw file
  raw_document_id TEXT REFERENCES documents(id) ON DELETE CASCADE,
  conversation_id TEXT REFERENCES conversations(conversation_id),
  message_id TEXT REFERENCES messages(message_id),
  char_start INTEGER NOT NULL,          -- 0-based code points into the raw file text / messages.text_raw
  char_end INTEGER NOT NULL,
  page_hint INTEGER,
  quote TEXT NOT NULL,                  -- verbatim
  quote_hash TEXT NOT NULL,             -- sha256 hex of the quote's UTF-8 bytes
  CHECK (char_end >= char_start),
  CHECK ((source_kind = 'raw_file' AND raw_path IS NOT NULL)
      OR (source_kind = 'conversation' AND conversation_id IS NOT NULL AND message_id IS NOT NULL))
);
CREATE INDEX idx_provenance_document ON wiki_claim_provenance(document_id);
CREATE INDEX idx_provenance_raw ON wiki_claim_provenance(workspace, raw_path) WHERE raw_path IS NOT NULL;
CREATE INDEX idx_provenance_message ON wiki_claim_provenance(message_id) WHERE message_id IS NOT NULL;

-- ---- seed 002 "Required and optional fields" (verbatim) --------------------------------------------
CREATE TABLE wiki_beliefs (
  belief_id TEXT PRIMARY KEY,
  workspace TEXT NOT NULL REFERENCES workspaces(slug) ON DELETE CASCADE,

  -- The belief itself (REQUIRED)
  statement TEXT NOT NULL,        -- natural-language claim, ≤ 280 chars, verbatim or paraphrased from the wiki page
  topic TEXT NOT NULL,            -- top-level subject area (matches a topic directory or a stable label)

  -- Optional structured form (best-effort, may be NULL)
  subject TEXT,                   -- noun phrase: "OAuth refresh endpoint", "Acme Corp", "auth-flow"
  predicate TEXT,                 -- relation: "is_at", "depends_on", "was_decided_by", "has_value"
  object TEXT,                    -- noun phrase: "/auth/v2/refresh", "Maya", "JWT"

  -- Where it lives (REQUIRED)
  wiki_document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  wiki_section_anchor TEXT,       -- markdown heading anchor for the section the belief lives under
  footnote_ids TEXT NOT NULL,     -- JSON array of footnote IDs in the wiki page, e.g. ["1","2"]
  provenance_ids TEXT NOT NULL,   -- JSON array of wiki_claim_provenance.id values

  -- Temporal envelope of the wiki's belief (REQUIRED for current, NULL for historical)
  asserted_at TEXT NOT NULL,      -- when the wiki started believing this
  asserted_in_run TEXT NOT NULL REFERENCES runs(run_id),
  superseded_at TEXT,             -- when the wiki stopped believing this (NULL = current)
  superseded_by_belief_id TEXT REFERENCES wiki_beliefs(belief_id),
  superseded_in_run TEXT REFERENCES runs(run_id),
  supersession_reason TEXT,       -- 'contradicted_by_new_source'|'elaborated'|'manual_correction'|'source_drifted'

  -- Source-level temporal validity (when the SOURCE itself says the fact applies)
  source_valid_from TEXT,         -- e.g. "RFC 0034 says this took effect 2026-03-15"
  source_valid_to TEXT,           -- e.g. "RFC 0034 says deprecation 2027-01"

  -- Derived signals
  supporting_count INTEGER NOT NULL DEFAULT 1,  -- number of provenance entries supporting this belief
  contradicting_belief_ids TEXT,  -- JSON array of belief_ids that disagree (lint-populated)
  confidence_hint TEXT,           -- 'single_source'|'multi_source'|'authoritative'|'contested'

  created_at TEXT NOT NULL,

  CHECK (supersession_reason IS NULL OR superseded_at IS NOT NULL),
  CHECK (length(statement) <= 280)
);

CREATE INDEX idx_beliefs_workspace_topic ON wiki_beliefs(workspace, topic);
CREATE INDEX idx_beliefs_workspace_current ON wiki_beliefs(workspace) WHERE superseded_at IS NULL;
CREATE INDEX idx_beliefs_subject_predicate ON wiki_beliefs(workspace, subject, predicate) WHERE subject IS NOT NULL;
CREATE INDEX idx_beliefs_wiki_doc ON wiki_beliefs(wiki_document_id);
CREATE INDEX idx_beliefs_asserted_at ON wiki_beliefs(workspace, asserted_at DESC);
CREATE INDEX idx_beliefs_superseded_at ON wiki_beliefs(workspace, superseded_at DESC) WHERE superseded_at IS NOT NULL;
-- Kenning addition: predecessors of a belief (the supersession chain walked backwards) by index, not scan.
CREATE INDEX idx_beliefs_superseded_by ON wiki_beliefs(superseded_by_belief_id) WHERE superseded_by_belief_id IS NOT NULL;

-- FTS over statement for free-text "why do I believe X" queries
CREATE VIRTUAL TABLE wiki_beliefs_fts USING fts5(
  statement, topic, subject, predicate, object,
  content='wiki_beliefs', content_rowid='rowid',
  tokenize='unicode61 remove_diacritics 2'
);

-- External-content FTS stays in step through triggers (SQLite FTS5 §4.4.3). Supersession updates do not
-- touch the indexed columns, so they do not rewrite the index.
CREATE TRIGGER wiki_beliefs_fts_ai AFTER INSERT ON wiki_beliefs BEGIN
  INSERT INTO wiki_beliefs_fts(rowid, statement, topic, subject, predicate, object)
  VALUES (new.rowid, new.statement, new.topic, new.subject, new.predicate, new.object);
END;
CREATE TRIGGER wiki_beliefs_fts_ad AFTER DELETE ON wiki_beliefs BEGIN
  INSERT INTO wiki_beliefs_fts(wiki_beliefs_fts, rowid, statement, topic, subject, predicate, object)
  VALUES ('delete', old.rowid, old.statement, old.topic, old.subject, old.predicate, old.object);
END;
CREATE TRIGGER wiki_beliefs_fts_au AFTER UPDATE OF statement, topic, subject, predicate, object ON wiki_beliefs BEGIN
  INSERT INTO wiki_beliefs_fts(wiki_beliefs_fts, rowid, statement, topic, subject, predicate, object)
  VALUES ('delete', old.rowid, old.statement, old.topic, old.subject, old.predicate, old.object);
  INSERT INTO wiki_beliefs_fts(rowid, statement, topic, subject, predicate, object)
  VALUES (new.rowid, new.statement, new.topic, new.subject, new.predicate, new.object);
END;

-- Kenning addition: provenance_ids as rows, so "which beliefs cite this quote" and "the quotes of these
-- beliefs" are index lookups. Derived from wiki_beliefs.provenance_ids and written with it.
CREATE TABLE belief_provenance (
  belief_id TEXT NOT NULL REFERENCES wiki_beliefs(belief_id) ON DELETE CASCADE,
  provenance_id TEXT NOT NULL REFERENCES wiki_claim_provenance(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  PRIMARY KEY (belief_id, provenance_id)
) WITHOUT ROWID;
CREATE INDEX idx_belief_provenance_prov ON belief_provenance(provenance_id);

-- When Kenning first saw each belief (and first saw it superseded). Not derived from the sidecars and never
-- deleted by a rebuild: it is what keeps asserted_in_run / superseded_in_run / created_at stable across
-- `kenning reindex --rebuild-beliefs` (docs/decisions.md W5).
CREATE TABLE belief_sightings (
  belief_id TEXT PRIMARY KEY,
  workspace TEXT NOT NULL,
  first_seen_run TEXT NOT NULL REFERENCES runs(run_id),
  first_seen_at TEXT NOT NULL,
  superseded_seen_run TEXT REFERENCES runs(run_id),
  superseded_seen_at TEXT
);

-- Explicit user decisions (`beliefs supersede`, `beliefs verify --mark-drifted`). Re-applied after every
-- import, publish and rebuild, so a correction outlives the files and feeds it corrects (W9).
CREATE TABLE belief_overrides (
  override_id TEXT PRIMARY KEY,
  workspace TEXT NOT NULL,
  belief_id TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('supersede','mark_drifted')),
  superseded_by_belief_id TEXT,
  reason TEXT NOT NULL CHECK (reason IN ('contradicted_by_new_source','elaborated','manual_correction','source_drifted')),
  at TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  note TEXT
);
CREATE INDEX idx_belief_overrides_belief ON belief_overrides(workspace, belief_id);

-- The verifier's model-judged findings (statement support, supersession sanity), one row per belief and
-- check: the latest outcome for the latest input. `not_checked` is never a pass (W12).
CREATE TABLE wiki_verifier_findings (
  workspace TEXT NOT NULL,
  belief_id TEXT NOT NULL,
  check_name TEXT NOT NULL CHECK (check_name IN ('coverage','provenance_link','supersession_sanity','statement_support')),
  outcome TEXT NOT NULL CHECK (outcome IN ('passed','failed','not_checked','warning')),
  vote TEXT,
  judge TEXT NOT NULL,
  input_hash TEXT NOT NULL,
  detail TEXT,
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  PRIMARY KEY (workspace, belief_id, check_name)
);
