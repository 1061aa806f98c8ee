-- Issue 18 (I72): incognito conversations whose derived rows the keep-raw purge has removed. Every deriving stage
-- skips incognito content, so a purged conversation stays clean; the row goes when no rule covers the
-- conversation any more, so turning a mode on again purges again. Ids and a time only: no content.
CREATE TABLE incognito_purges (
    conversation_id TEXT PRIMARY KEY,
    purged_at DATETIME NOT NULL
) WITHOUT ROWID;
