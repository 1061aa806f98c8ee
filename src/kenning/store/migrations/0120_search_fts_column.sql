-- Vault size (issue 24 §2, decisions C1–C4): the FTS table keeps which columns hold each token, not where
-- (detail=column instead of full). Its position lists were half of search_fts_data because the context column is
-- the previous turn's text again (10k messages: 9.4 MB full, 4.4 MB column). BM25 no longer asks FTS5 for hit
-- counts: they are the forward index's (search_doc_terms, R51 — exact per column counts), so results are the same.
-- A contentless table cannot be re-encoded from itself: it is made again from the vault's documents, with each
-- document's four columns built as the index stage builds them (store/search.py DOC_COLUMNS_SQL, of which the
-- SELECT below is a copy — tests/test_search_fts_column.py checks it). A document whose source changed since it
-- was indexed gets its current columns; the next index run re-indexes it, as it would have.
DROP TABLE IF EXISTS search_fts_vocab;
DROP TABLE IF EXISTS search_fts;
CREATE VIRTUAL TABLE search_fts USING fts5(
  speaker, body, extra, context,
  content='', contentless_delete=1, detail=column,
  tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO search_fts(rowid, speaker, body, extra, context) SELECT * FROM (
WITH self_names(n) AS (
  SELECT name FROM transcript_participants WHERE is_self = 1
  UNION SELECT j.value FROM transcript_participants p, json_each(p.aliases_json) j
  WHERE p.is_self = 1 AND j.type = 'text'),
lex(entity_id, t, aliases_json) AS (
  SELECT em.entity_id, t.canonical_surface, t.aliases_json FROM lexicon_terms t
  JOIN lexicon_builds b ON b.build_id = t.build_id
  JOIN entity_mention_candidates c ON c.detector = 'LEXICON:' || b.build_id
    AND json_extract(c.raw_candidate_json, '$.details.term_id') = t.term_id
  JOIN entity_mentions em ON em.candidate_id = c.candidate_id
  WHERE b.build_version = (SELECT MAX(build_version) FROM lexicon_builds WHERE completed_at_utc IS NOT NULL)
  AND em.entity_id IS NOT NULL),
lex_names(entity_id, v) AS (
  SELECT entity_id, t FROM lex
  UNION SELECT l.entity_id, j.value FROM lex l, json_each(l.aliases_json) j)
SELECT d.doc_rowid, COALESCE(d.speaker, ''), COALESCE(m.text_raw, ''),
  COALESCE((SELECT group_concat(p.text_content, char(10)) FROM message_parts_raw p
            WHERE p.message_id = m.message_id AND p.part_type IN ('image', 'file') AND p.text_content <> ''), ''),
  COALESCE((SELECT q.text_raw FROM messages q WHERE q.conversation_id = m.conversation_id
            AND q.order_index < m.order_index AND q.is_hidden = 0 ORDER BY q.order_index DESC LIMIT 1), '')
FROM search_docs d JOIN messages m ON m.message_id = d.doc_id
WHERE d.doc_kind = 'message' 
UNION ALL
SELECT d.doc_rowid, COALESCE(e.entity_type, ''), COALESCE(e.canonical_name, ''),
  COALESCE((SELECT group_concat(v, char(10)) FROM (
      SELECT j.value AS v FROM json_each(e.aliases_json) j WHERE j.type = 'text'
      UNION SELECT n FROM self_names WHERE e.entity_key = '__SELF__'
      UNION SELECT 'my ' || substr(e.canonical_name, 8) WHERE e.entity_key <> '__SELF__'
        AND substr(e.canonical_name, 1, 7) = 'SELF''s '
      UNION SELECT n || '''s ' || substr(e.canonical_name, 8) FROM self_names WHERE e.entity_key <> '__SELF__'
        AND substr(e.canonical_name, 1, 7) = 'SELF''s '
      UNION SELECT v FROM lex_names WHERE lex_names.entity_id = e.entity_id)
    WHERE v <> '' AND v <> COALESCE(e.canonical_name, '')), ''),
  ''
FROM search_docs d JOIN entities e ON e.entity_id = d.doc_id
WHERE d.doc_kind = 'entity'
);
CREATE VIRTUAL TABLE search_fts_vocab USING fts5vocab(search_fts, row);
