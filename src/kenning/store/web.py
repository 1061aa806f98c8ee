"""Reads the local web UI needs that no other module offers yet: sources, a few headline counts, what changed
after a moment, conversations page by page with the branch the export shows, and the extracted items of one
conversation (for marking them in its text). Read-only; every query is bounded (LIMIT or an index)."""

from __future__ import annotations

from typing import Any, Sequence

import apsw

from kenning.store.connection import rows, scalar

# The headline counts on the home page. COUNT(*) on these is an index scan of one table each; the full
# `table_counts` (every table, incl. the search index's millions of term rows) is too slow for a page at 100k.
HEADLINE_TABLES = ("conversations", "messages", "entities", "assertions", "belief_nodes", "wiki_beliefs", "nodes",
                   "edges", "rejects")


def _exists(conn: apsw.Connection, table: str) -> bool:
    return scalar(conn, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)) is not None


def headline_counts(conn: apsw.Connection) -> dict[str, int]:
    return {t: int(scalar(conn, f'SELECT COUNT(*) FROM "{t}"')) for t in HEADLINE_TABLES if _exists(conn, t)}


def sources(conn: apsw.Connection, limit: int = 50) -> list[dict[str, Any]]:
    return rows(conn, "SELECT s.source_id, s.kind, s.path, s.size_bytes, r.finished_at_utc AS last_import "
                      "FROM sources s LEFT JOIN runs r ON r.run_id = s.last_run_id "
                      "ORDER BY r.finished_at_utc DESC, s.source_id LIMIT ?", (limit,))


def runs_after(conn: apsw.Connection, since: str, limit: int = 50) -> list[dict[str, Any]]:
    """Runs that finished after ``since`` (the user's last visit), newest first."""
    return rows(conn, "SELECT run_id, stage, status, started_at_utc, finished_at_utc, counts_json FROM runs "
                      "WHERE finished_at_utc > ? ORDER BY finished_at_utc DESC, seq DESC LIMIT ?", (since, limit))


def commits_after(conn: apsw.Connection, since: str, limit: int = 50) -> list[dict[str, Any]]:
    if not _exists(conn, "knowledge_commits"):
        return []
    return rows(conn, "SELECT commit_id, kind, source_event, change_summary, timestamp AS created_at "
                      "FROM knowledge_commits WHERE timestamp > ? ORDER BY seq DESC LIMIT ?", (since, limit))


def vault_version(conn: apsw.Connection) -> tuple:
    """Changes whenever a run finishes or a knowledge commit lands: the key of the UI's in-process caches."""
    runs = scalar(conn, "SELECT max(rowid) FROM runs")
    commits = scalar(conn, "SELECT max(seq) FROM knowledge_commits") if _exists(conn, "knowledge_commits") else None
    return (runs, commits)


def list_conversations(conn: apsw.Connection, *, limit: int = 50, offset: int = 0,
                       title: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """Newest first; ``title`` filters by a case-insensitive substring of the title."""
    where, params = "", []
    if title:
        where, params = " WHERE title LIKE ? ESCAPE '\\'", [
            "%" + title.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"]
    total = int(scalar(conn, "SELECT COUNT(*) FROM conversations" + where, params))
    found = rows(conn, "SELECT conversation_id, title, created_at_utc, updated_at_utc, message_count, source_kind "
                       f"FROM conversations{where} ORDER BY created_at_utc DESC, conversation_id LIMIT ? OFFSET ?",
                 (*params, limit, offset))
    return found, total


def conversation_header(conn: apsw.Connection, conversation_id: str) -> dict[str, Any] | None:
    found = rows(conn, "SELECT conversation_id, title, created_at_utc, updated_at_utc, message_count, source_kind, "
                       "current_node_message_id FROM conversations WHERE conversation_id=?", (conversation_id,))
    return found[0] if found else None


def conversation_messages(conn: apsw.Connection, conversation_id: str, *,
                          branch_only: bool = True) -> list[dict[str, Any]]:
    """The messages of one conversation in order; ``branch_only`` keeps the branch the user saw (the export's
    current_node path, ``is_current_branch``) and drops hidden ones."""
    cond = " AND is_current_branch=1 AND is_hidden=0" if branch_only else ""
    return rows(conn, "SELECT message_id, role, author_name, created_at_utc, timestamp_quality, text_raw, "
                      "is_current_branch, is_hidden, parent_id FROM messages "
                      f"WHERE conversation_id=?{cond} ORDER BY order_index, message_id", (conversation_id,))


def message_with_conversation(conn: apsw.Connection, message_id: str) -> dict[str, Any] | None:
    found = rows(conn, "SELECT m.message_id, m.role, m.author_name, m.created_at_utc, m.text_raw, m.conversation_id, "
                       "c.title FROM messages m JOIN conversations c USING(conversation_id) WHERE m.message_id=?",
                 (message_id,))
    return found[0] if found else None


def _in(ids: Sequence[str]) -> str:
    return ",".join("?" * len(ids))


def items_of_messages(conn: apsw.Connection, message_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Extracted items with a character span in these messages: entity mentions and assertions (stage 2A, 4)."""
    out: list[dict[str, Any]] = []
    for i in range(0, len(message_ids), 400):
        chunk = list(message_ids[i:i + 400])
        if _exists(conn, "entity_mentions"):
            out += rows(conn, "SELECT 'entity' AS item, m.message_id, m.char_start, m.char_end, m.surface_text AS surface, "
                              "e.canonical_name AS label, e.entity_type AS detail FROM entity_mentions m "
                              f"LEFT JOIN entities e USING(entity_id) WHERE m.message_id IN ({_in(chunk)}) "
                              "AND m.char_start IS NOT NULL", chunk)
        if _exists(conn, "assertions"):
            out += rows(conn, "SELECT 'fact' AS item, a.message_id, a.char_start, a.char_end, a.surface_text AS surface, "
                              "p.canonical_label_norm AS label, a.polarity AS detail FROM assertions a "
                              f"JOIN predicates p USING(predicate_id) WHERE a.message_id IN ({_in(chunk)}) "
                              "AND a.char_start IS NOT NULL", chunk)
    out.sort(key=lambda r: (r["message_id"], r["char_start"], -(r["char_end"] or 0), r["item"]))
    return out


def entity_by_name(conn: apsw.Connection, name: str) -> dict[str, Any] | None:
    """The most salient seed-001 entity with this canonical name (any case), to join a DOC72 node to its mentions."""
    if not _exists(conn, "entities"):
        return None
    found = rows(conn, "SELECT entity_id, canonical_name, entity_type FROM entities WHERE canonical_name=? "
                       "COLLATE NOCASE AND status='active' "
                       "ORDER BY salience_score IS NULL, salience_score DESC, mention_count DESC, entity_id LIMIT 1", (name,))
    return found[0] if found else None


def list_nodes_for_review(conn: apsw.Connection, *, limit: int = 50) -> list[dict[str, Any]]:
    """DOC72 nodes waiting for a person: suggested or observed (not confirmed), most recently touched first."""
    if not _exists(conn, "nodes"):
        return []
    return rows(conn, "SELECT id FROM nodes WHERE is_active=1 AND lifecycle_state IN ('suggested','observed') "
                      "ORDER BY updated_at DESC, id LIMIT ?", (limit,))
