-- Search (issue 9, decision R62): the speakers in the index, listed by a loose index scan — one index seek per
-- distinct speaker — instead of grouping every search document (0.34 s at 1M documents, paid by every new Searcher:
-- each `kenning search`, each MCP search call). The existing speaker index is COLLATE NOCASE (the speaker filter);
-- the list keeps speakers that differ only in case apart, so it needs the column's own collation.
CREATE INDEX idx_search_docs_speaker_exact ON search_docs(speaker);
