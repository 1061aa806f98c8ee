"""What the MCP `sql` tool may read (decision H5): temporary views, named like the tables they filter, installed
on the tool's own read-only connection. They leave out incognito conversations and everything derived only from
them (§13.4, §20A) and the promoted edges the agent's edge gate blocks (§42A.2.12A). Everything else — the raw
archive, FTS and vector tables, audit tables, knowledge_commits, the main.* tables themselves — is refused by the
read guard, which run_readonly_sql applies to every column a statement reads."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import apsw

from kenning.store.connection import rows
from kenning.store.knowledge import from_json

_HIDDEN = "SELECT id FROM temp._kn_hidden_nodes"
_INCOG = "SELECT conversation_id FROM temp._kn_incognito"
# view → its definition over main (each a plain filter of one table, every column kept)
VIEWS: dict[str, str] = {
    "nodes": f"SELECT * FROM main.nodes WHERE id NOT IN ({_HIDDEN})",
    "aliases": f"SELECT * FROM main.aliases WHERE node_id NOT IN ({_HIDDEN})",
    "edges": (f"SELECT * FROM main.edges WHERE rowid NOT IN (SELECT rid FROM temp._kn_blocked_edges) "
              f"AND source_id NOT IN ({_HIDDEN}) AND target_id NOT IN ({_HIDDEN})"),
    "provenance_entries": (f"SELECT * FROM main.provenance_entries WHERE node_id NOT IN ({_HIDDEN}) AND "
                           "(message_id IS NULL OR message_id NOT IN (SELECT message_id FROM main.messages "
                           f"WHERE conversation_id IN ({_INCOG})))"),
    "experience_records": f"SELECT * FROM main.experience_records WHERE target_node_id NOT IN ({_HIDDEN})",
    "messages": f"SELECT * FROM main.messages WHERE conversation_id NOT IN ({_INCOG})",
    "conversations": f"SELECT * FROM main.conversations WHERE conversation_id NOT IN ({_INCOG})",
    "conversation_threads": f"SELECT * FROM main.conversation_threads WHERE thread_id NOT IN ({_INCOG})",
    "decision_checkpoints": f"SELECT * FROM main.decision_checkpoints WHERE thread_id NOT IN ({_INCOG})",
    "thread_entity_links": f"SELECT * FROM main.thread_entity_links WHERE thread_id NOT IN ({_INCOG})",
}


def promoted_edges(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Edges the back-link pipeline promoted (the only ones the edge gate may hold back), with their rowid."""
    out = rows(conn, "SELECT rowid AS rid, source_id, target_id, payload FROM main.edges "
                     "WHERE json_extract(payload, '$.learned_by') IS NOT NULL")
    for r in out:
        r["payload"] = from_json(r["payload"]) or {}
    return out


def install(conn: apsw.Connection, incognito: Iterable[str], blocked_edges: Iterable[int]) -> None:
    """Create the filter tables and the views on this connection (temp schema: nothing reaches the vault file)."""
    existing = {r["name"] for r in rows(conn, "SELECT name FROM main.sqlite_schema WHERE type='table'")}
    (qo,) = conn.execute("PRAGMA query_only").fetchone()
    conn.execute("PRAGMA query_only=OFF")   # the temp schema only; the vault itself was opened read-only
    try:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS _kn_incognito(conversation_id TEXT PRIMARY KEY) WITHOUT ROWID;"
                     "CREATE TEMP TABLE IF NOT EXISTS _kn_hidden_nodes(id TEXT PRIMARY KEY) WITHOUT ROWID;"
                     "CREATE TEMP TABLE IF NOT EXISTS _kn_blocked_edges(rid INTEGER PRIMARY KEY);"
                     "DELETE FROM temp._kn_incognito; DELETE FROM temp._kn_hidden_nodes;"
                     "DELETE FROM temp._kn_blocked_edges;")
        conn.executemany("INSERT OR IGNORE INTO temp._kn_incognito VALUES (?)", [(c,) for c in incognito])
        conn.executemany("INSERT OR IGNORE INTO temp._kn_blocked_edges VALUES (?)", [(r,) for r in blocked_edges])
        if conn.execute("SELECT 1 FROM temp._kn_incognito LIMIT 1").fetchone():
            # a node every message-backed provenance entry of which cites an incognito conversation
            conn.execute("INSERT INTO temp._kn_hidden_nodes SELECT p.node_id FROM main.provenance_entries p "
                         "JOIN main.messages m ON m.message_id=p.message_id GROUP BY p.node_id "
                         f"HAVING sum(m.conversation_id IN ({_INCOG})) = count(*)")
        for name, body in VIEWS.items():
            conn.execute(f'DROP VIEW IF EXISTS temp."{name}"')
            if name in existing:
                conn.execute(f'CREATE TEMP VIEW "{name}" AS {body}')
    finally:
        if qo:
            conn.execute("PRAGMA query_only=ON")


def uninstall(conn: apsw.Connection) -> None:
    """Drop the views again: while they exist they shadow main's tables for every reader on this connection
    (the incognito scan itself reads ``conversations``)."""
    (qo,) = conn.execute("PRAGMA query_only").fetchone()
    conn.execute("PRAGMA query_only=OFF")
    try:
        for name in VIEWS:
            conn.execute(f'DROP VIEW IF EXISTS temp."{name}"')
    finally:
        if qo:
            conn.execute("PRAGMA query_only=ON")


# A CTE named like a view would read main's table under the view's name; such statements are refused.
_COMMENT = re.compile(r"/\*.*?(?:\*/|$)|--[^\n]*", re.S)


def cte_shadowing(sql: str) -> str | None:
    """The exposed view a WITH clause of ``sql`` redefines (``WITH messages AS (…)``), else None."""
    text = _COMMENT.sub(" ", sql)
    names = "|".join(VIEWS)
    m = re.search(rf"""(?:^|[\s,(])[\"'`\[]?({names})[\"'`\]]?\s*(?:\([^()]*\))?\s*as\s*(?:not\s+)?"""
                  rf"""(?:materialized\s*)?\(""", text, re.I)
    return m.group(1).lower() if m else None


def first_word(sql: str) -> str:
    m = re.match(r"\s*([A-Za-z]+)", _COMMENT.sub(" ", sql))
    return m.group(1).lower() if m else ""


def read_guard(table: str | None, column: str | None, database: str | None, view: str | None) -> str | None:
    """Why reading ``database.table.column`` (inside ``view``, if any) is refused, else None."""
    if column == "":   # a row count or existence check reads no value
        return None
    t = (table or "").lower()
    if database == "temp" and t in VIEWS:
        return None
    if view is not None and view.lower() in VIEWS and database in ("main", "temp"):
        return None
    return (f"table {table!r} is not readable through this tool; it reads these views: {', '.join(VIEWS)} "
            "(incognito conversations and what only they support, and edges the agent may not see, are left out)")
