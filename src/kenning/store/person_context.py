"""SQL of the person part of a context packet (decision H4): what the vault holds about one person node — its
current edges with the quote each was learned from, what the user said mentioning them, the threads with them and
the directives that name them. Every read is by node id through an index, or bounded by a LIMIT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

from kenning.store.connection import rows
from kenning.store.knowledge import from_json
from kenning.store.knowledge_query import LIVE, NODE_SELECT, _nodes
from kenning.store.sqltext import marks

_EDGE_LIVE = "coalesce(e.lifecycle_state, 'active') NOT IN ('retracted', 'suppressed', 'archived')"


def current_edges(conn: apsw.Connection, node_id: str, *, limit: int) -> list[dict[str, Any]]:
    """The node's current edges (either direction) with the other node's name and the edge payload (its quote)."""
    sql = ("SELECT * FROM (SELECT e.relation_type, 'out' AS direction, e.target_id AS other_id, e.payload, "
           f"e.start_date FROM edges e WHERE e.source_id=? AND e.end_date IS NULL AND {_EDGE_LIVE} LIMIT ?) "
           "UNION ALL SELECT * FROM (SELECT e.relation_type, 'in', e.source_id, e.payload, e.start_date FROM edges e "
           f"WHERE e.target_id=? AND e.source_id<>? AND e.end_date IS NULL AND {_EDGE_LIVE} LIMIT ?)")
    out = rows(conn, sql, (node_id, limit, node_id, node_id, limit))
    for r in out:
        r["payload"] = from_json(r["payload"]) or {}
    return out


def quotes_about(conn: apsw.Connection, node_id: str, *, limit: int) -> list[dict[str, Any]]:
    """Message-backed quotes in the node's provenance, latest first, one per distinct text."""
    return rows(conn, "SELECT verbatim_excerpt AS quote, message_id, max(created_at) AS at, entry_type, "
                      "authorial_voice FROM provenance_entries WHERE node_id=? AND message_id IS NOT NULL "
                      "AND verbatim_excerpt IS NOT NULL AND trim(verbatim_excerpt) <> '' "
                      "GROUP BY verbatim_excerpt ORDER BY at DESC, verbatim_excerpt LIMIT ?", (node_id, limit))


def threads_with(conn: apsw.Connection, node_id: str, *, limit: int) -> list[dict[str, Any]]:
    """Conversation threads linked to the node, most recent first."""
    out = rows(conn, "SELECT t.thread_id, t.title_hint, t.occurred_at, t.key_decisions, t.unresolved_items, "
                     "t.checkpoint_summary FROM thread_entity_links l JOIN conversation_threads t "
                     "ON t.thread_id=l.thread_id WHERE l.entity_id=? ORDER BY t.occurred_at DESC, t.thread_id "
                     "LIMIT ?", (node_id, limit))
    for r in out:
        r["key_decisions"] = from_json(r["key_decisions"]) or []
        r["unresolved_items"] = from_json(r["unresolved_items"]) or []
    return out


def latest_checkpoint(conn: apsw.Connection, thread_id: str) -> dict[str, Any] | None:
    found = rows(conn, "SELECT description, message_id, occurred_at FROM decision_checkpoints WHERE thread_id=? "
                       "ORDER BY occurred_at DESC, ordinal DESC LIMIT 1", (thread_id,))
    return found[0] if found else None


def directives_naming(conn: apsw.Connection, names: Sequence[str], *, limit: int) -> list[dict[str, Any]]:
    """Live memory directives whose name or payload mentions one of ``names`` (case-insensitive substring; the
    caller checks word boundaries)."""
    names = [n for n in names if n]
    if not names:
        return []
    cond = " OR ".join(["instr(lower(n.canonical_name || ' ' || coalesce(n.payload, '')), ?) > 0"] * len(names))
    sql = (f"SELECT {NODE_SELECT} FROM nodes n WHERE n.node_kind='memory_directive' AND {LIVE} AND ({cond}) "
           "ORDER BY n.confidence DESC, n.id LIMIT ?")
    return _nodes(rows(conn, sql, (*[n.lower() for n in names], limit)))


def node_names(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    return {r["id"]: r for r in rows(conn, f"SELECT id, canonical_name, payload FROM nodes WHERE id IN "
                                           f"({marks(len(ids))})", list(ids))}
