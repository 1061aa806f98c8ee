-- Vault size (issue 24 §2, decisions Z3–Z4): the vector lane's per-item bookkeeping.
--
-- Z3: vector_items.text_sha256 (one per indexed item, looked up through idx_vector_items_sha to find a text's
-- vector in vec0, X1) and embedding_cache.text_sha256 (the cache's key) keep the first 16 bytes of the sha256
-- instead of 64 hex characters — N12's, Y24's and Y27's width for the same purpose. Both are converted alike, so a
-- cache row and the item of the same text still carry the same key (forget compares them directly). The store
-- converts at its boundary (kenning.store.vectors.text_key): callers still speak hex digests.
UPDATE vector_items SET text_sha256 = unhex(substr(text_sha256, 1, 32)) WHERE typeof(text_sha256) = 'text';
UPDATE embedding_cache SET text_sha256 = unhex(substr(text_sha256, 1, 32)) WHERE typeof(text_sha256) = 'text';
-- Z4: vector_items.updated_at_utc (Kenning's own) was written on every item and read by nothing: which items a
-- model migration re-embeds is decided by rev, and the runs table says when each run wrote.
ALTER TABLE vector_items DROP COLUMN updated_at_utc;

-- Z5: a back-link mention's context_window (Kenning's own column of mention_observations_derived — seed 003 §42A.2
-- puts it in the mention record, not in the derived table's SQL) is a slice of the observed message's text_raw
-- (the sentence holding the span and the one before, §42A.2.10): it is kept as where it lies in that text
-- (context_at, context_len: code points, as V2 places part texts) and the column holds ''. A window not found
-- verbatim, or in a text holding NUL (which SQLite's substr cannot slice past), stays literal with NULL offsets.
-- The store's readers give the column back (kenning.store.upkeep); SQL instr finds the same first occurrence as
-- Python's str.find, so a migrated vault stores what a fresh run stores.
ALTER TABLE mention_observations_derived ADD COLUMN context_at INTEGER;
ALTER TABLE mention_observations_derived ADD COLUMN context_len INTEGER;
UPDATE mention_observations_derived SET
    context_at = (SELECT instr(m.text_raw, mention_observations_derived.context_window) - 1 FROM messages m
                  WHERE m.message_id = mention_observations_derived.observation_id),
    context_len = length(context_window)
WHERE context_window <> '' AND EXISTS (
    SELECT 1 FROM messages m WHERE m.message_id = mention_observations_derived.observation_id
    AND instr(m.text_raw, char(0)) = 0 AND instr(m.text_raw, mention_observations_derived.context_window) > 0);
UPDATE mention_observations_derived SET context_window = '' WHERE context_at IS NOT NULL;
