"""SQL of the miners (issue 18): rejected options (§20B) and the messages the stand-in extract stage reads."""

from __future__ import annotations

import hashlib
from typing import Any, Iterator

import apsw

from kenning.store.connection import rows


def record_rejected_option(conn: apsw.Connection, *, kind: str, name: str, quote: str,
                           suggestion_message_id: str | None, rejection_message_id: str | None,
                           conversation_id: str | None, recorded_at: str) -> None:
    oid = hashlib.sha256(f"{kind}\x1f{name.casefold()}\x1f{rejection_message_id}".encode()).hexdigest()[:32]
    conn.execute("INSERT OR IGNORE INTO mining_rejected_options(option_id, node_kind, name, quote, "
                 "suggestion_message_id, rejection_message_id, conversation_id, recorded_at) "
                 "VALUES (?,?,?,?,?,?,?,?)",
                 (oid, kind, name[:500], quote[:500], suggestion_message_id, rejection_message_id, conversation_id,
                  recorded_at))


def rejected_options(conn: apsw.Connection, kind: str | None = None) -> list[dict[str, Any]]:
    sql = ("SELECT option_id, node_kind, name, quote, suggestion_message_id, rejection_message_id, conversation_id, "
           "recorded_at FROM mining_rejected_options")
    if kind:
        return rows(conn, sql + " WHERE node_kind=? ORDER BY recorded_at, option_id", (kind,))
    return rows(conn, sql + " ORDER BY recorded_at, option_id")


def conversation_messages(conn: apsw.Connection) -> Iterator[dict[str, Any]]:
    """Every visible text message in conversation order (conversation_id, order_index, message_id)."""
    cols = ("message_id", "conversation_id", "role", "created_at_utc", "text_raw")
    for r in conn.execute("SELECT message_id, conversation_id, role, created_at_utc, text_raw FROM messages "
                          "WHERE is_hidden=0 AND text_raw IS NOT NULL AND role IN ('user','assistant') "
                          "ORDER BY conversation_id, order_index, message_id"):
        yield dict(zip(cols, r))


def entities_in_span(conn: apsw.Connection, message_id: str, start: int, end: int) -> list[str]:
    """Canonical entities (not the user) a message mentions inside [start, end): what a mined goal or obligation
    names (H2)."""
    return [r["entity_id"] for r in rows(
        conn, "SELECT DISTINCT em.entity_id FROM entity_mentions em JOIN entities e ON e.entity_id=em.entity_id "
              "WHERE em.message_id=? AND em.char_start < ? AND em.char_end > ? AND e.entity_key <> '__SELF__' "
              "ORDER BY em.char_start, em.entity_id", (message_id, end, start))]


def live_entity_nodes(conn: apsw.Connection, node_ids: list[str]) -> set[str]:
    if not node_ids:
        return set()
    marks = ",".join("?" * len(node_ids))
    return {r["id"] for r in rows(conn, f"SELECT id FROM nodes WHERE id IN ({marks}) AND is_active=1 "
                                        "AND node_kind='world_entity'", node_ids)}


def entity_nodes_named(conn: apsw.Connection, normalized: list[str]) -> dict[str, list[str]]:
    """normalized alias → live world-entity node ids carrying it (the user's own node excluded)."""
    if not normalized:
        return {}
    marks = ",".join("?" * len(normalized))
    out: dict[str, list[str]] = {}
    for r in rows(conn, f"SELECT DISTINCT a.normalized_alias AS alias, n.id FROM aliases a JOIN nodes n "
                        f"ON n.id=a.node_id WHERE a.normalized_alias IN ({marks}) AND n.is_active=1 "
                        "AND n.node_kind='world_entity' "
                        "AND coalesce(json_extract(n.payload, '$.is_vault_owner'), 0) = 0 "
                        "ORDER BY n.id", normalized):
        out.setdefault(r["alias"], []).append(r["id"])
    return out
