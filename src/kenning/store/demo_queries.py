"""Small read-only summaries the demo prints."""

from __future__ import annotations

import apsw


def conversations_per_month(conn: apsw.Connection) -> list[tuple[str, int]]:
    return [tuple(r) for r in conn.execute(
        "SELECT substr(created_at_utc, 1, 7) AS m, COUNT(*) FROM conversations WHERE created_at_utc IS NOT NULL "
        "GROUP BY m ORDER BY m")]


def content_kinds(conn: apsw.Connection) -> list[tuple[str, int]]:
    return [tuple(r) for r in conn.execute(
        "SELECT part_type, COUNT(*) FROM message_parts GROUP BY part_type ORDER BY COUNT(*) DESC")]


def timestamp_quality(conn: apsw.Connection) -> list[tuple[str, int]]:
    return [tuple(r) for r in conn.execute(
        "SELECT timestamp_quality, COUNT(*) FROM messages GROUP BY 1 ORDER BY COUNT(*) DESC")]


def branchy_conversations(conn: apsw.Connection, limit: int) -> list[tuple[str, int, int]]:
    return [tuple(r) for r in conn.execute(
        "SELECT c.title, COUNT(*), SUM(m.is_current_branch) FROM messages m JOIN conversations c USING(conversation_id) "
        "GROUP BY m.conversation_id HAVING COUNT(*) > SUM(m.is_current_branch) ORDER BY COUNT(*) - SUM(m.is_current_branch) "
        "DESC, c.conversation_id LIMIT ?", (limit,))]
