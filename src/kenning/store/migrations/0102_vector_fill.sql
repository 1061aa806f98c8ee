-- Issue 24 §1: search documents the vector lane leaves out on purpose (tool output, code only, no text; decisions
-- Q3–Q5), so that "how many vectors are still to make" counts only documents that will get one. A row holds for the
-- content it was decided on: a document whose content_sha256 changed is decided again.
CREATE TABLE search_vector_skips (
  doc_rowid INTEGER PRIMARY KEY,        -- search_docs.doc_rowid
  content_sha256 TEXT NOT NULL,         -- search_docs.content_sha256 when the document was skipped
  reason TEXT NOT NULL                  -- skip_role | code_only | empty
);
