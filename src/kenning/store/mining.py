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
