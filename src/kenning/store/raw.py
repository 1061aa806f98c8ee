"""SQL of the raw layer: conversations, messages, message_parts, sources, rejects, raw_archive."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import apsw
import orjson

from kenning.store import rawpack
from kenning.store.connection import rows, scalar
from kenning.store.sqltext import insert_sql, update_sql

CONVERSATION_COLUMNS = (
    "conversation_id", "export_conversation_id", "title", "created_at_utc", "updated_at_utc", "message_count",
    "raw_conversation_json", "source_kind", "current_node_message_id", "raw_sha256", "import_key",
    "first_run_id", "last_changed_run_id",
)
MESSAGE_COLUMNS = (
    "message_id", "conversation_id", "role", "parent_id", "tree_path", "order_index", "created_at_utc",
    "timestamp_quality", "content_type", "text_raw", "text_part_map_json", "code_fence_ranges_json",
    "blockquote_ranges_json", "attachment_count", "raw_message_json", "export_message_id", "export_parent_id",
    "author_name", "recipient", "export_content_type", "is_hidden", "is_current_branch", "citation_ranges_json",
    "raw_sha256", "first_run_id", "last_changed_run_id",
)
PART_COLUMNS = (
    "part_id", "message_id", "part_index", "part_type", "text_content", "mime_type", "file_path",
    "metadata_json", "raw_part_json",
)
# Columns whose change is not a content change (they say when, not what).
_PROVENANCE = {"first_run_id", "last_changed_run_id"}


# What is stored: the seed's columns plus where each derived text lies (rawpack, decisions V1–V6).
_CONV_STORED = (*CONVERSATION_COLUMNS, "raw_conversation_z")
_MSG_STORED = (*MESSAGE_COLUMNS, "raw_at", "raw_len")
_PART_STORED = (*PART_COLUMNS, "raw_at", "raw_len", "text_at", "text_len")
_INS_CONV = insert_sql("conversations", _CONV_STORED)
_INS_MSG = insert_sql("messages", _MSG_STORED)
_INS_PART = insert_sql("message_parts", _PART_STORED)
# Row tuples in column order, built in C (a generator per row was a tenth of stage 1's insert time: J5).
_CONV_ROW = itemgetter(*_CONV_STORED)
_MSG_ROW = itemgetter(*_MSG_STORED)
_PART_ROW = itemgetter(*_PART_STORED)


def conversation_id_by_import_key(conn: apsw.Connection, import_key: str) -> str | None:
    r = conn.execute("SELECT conversation_id FROM conversations WHERE import_key=? LIMIT 1", (import_key,)).fetchone()
    return r[0] if r else None


def get_conversation(conn: apsw.Connection, conversation_id: str) -> dict | None:
    """The conversation row with ``raw_conversation_json`` as the seed defines it (decompressed)."""
    found = rows(conn, "SELECT * FROM conversations WHERE conversation_id=?", (conversation_id,))
    return rawpack.unpack_conversation(found[0]) if found else None


def conversation_raw(conn: apsw.Connection, conversation_id: str) -> str | None:
    """The conversation's JCS text (seed 001 ``raw_conversation_json``), or None when there is no such row."""
    r = conn.execute("SELECT raw_conversation_json, raw_conversation_z FROM conversations WHERE conversation_id=?",
                     (conversation_id,)).fetchone()
    if r is None:
        return None
    return r[0] if r[1] is None else rawpack.inflate(r[1])


def messages_of(conn: apsw.Connection, conversation_id: str) -> dict[str, dict]:
    """The conversation's message rows with ``raw_message_json`` as the seed defines it."""
    found = rows(conn, "SELECT * FROM messages WHERE conversation_id=?", (conversation_id,))
    conv_raw = conversation_raw(conn, conversation_id) if any(r["raw_at"] is not None for r in found) else None
    return {r["message_id"]: rawpack.unpack_message(r, conv_raw) for r in found}


def _part_rows(parts: list[dict], messages: dict[str, dict]) -> list[tuple]:
    return [_PART_ROW(rawpack.pack_part(p, messages.get(p["message_id"]))) for p in parts]


def insert_conversation(conn: apsw.Connection, conv: dict, messages: list[dict], parts: list[dict]) -> None:
    conv_raw = conv["raw_conversation_json"]
    stored = rawpack.pack_conversation(conv)
    conn.execute(_INS_CONV, _CONV_ROW(stored))
    conn.executemany(_INS_MSG, [_MSG_ROW(rawpack.pack_message(m, conv_raw)) for m in messages])
    if parts:
        conn.executemany(_INS_PART, _part_rows(parts, {m["message_id"]: m for m in messages}))


def changed_columns(old: dict, new: dict, cols: tuple[str, ...]) -> list[str]:
    return [c for c in cols if c not in _PROVENANCE and old.get(c) != new[c]]


def update_conversation(conn: apsw.Connection, conv: dict, run_id: str) -> None:
    """A changed conversation: its new raw text, and every message's place in it found again (the old
    offsets point into the old text)."""
    cid = conv["conversation_id"]
    old_raw = conversation_raw(conn, cid)
    placed = [(mid, old_raw[at:at + n] if at is not None and old_raw is not None else literal)
              for mid, at, n, literal in conn.execute(
                  "SELECT message_id, raw_at, raw_len, raw_message_json FROM messages WHERE conversation_id=?", (cid,))]
    cols = [c for c in _CONV_STORED if c not in ("conversation_id", "first_run_id")]
    stored = rawpack.pack_conversation({**conv, "last_changed_run_id": run_id})
    conn.execute(update_sql("conversations", "conversation_id", cols), tuple(stored[c] for c in cols) + (cid,))
    new_raw = conv["raw_conversation_json"]
    conn.executemany("UPDATE messages SET raw_message_json=?, raw_at=?, raw_len=? WHERE message_id=?",
                     [(q["raw_message_json"], q["raw_at"], q["raw_len"], mid)
                      for mid, raw in placed for q in (rawpack.pack_message({"raw_message_json": raw}, new_raw),)])


def set_import_key(conn: apsw.Connection, conversation_id: str, import_key: str) -> None:
    conn.execute("UPDATE conversations SET import_key=? WHERE conversation_id=?", (import_key, conversation_id))


def insert_messages(conn: apsw.Connection, messages: list[dict], parts: list[dict]) -> None:
    """Messages added to a stored conversation: their raw text is kept literally until the conversation's own
    raw text is replaced (update_conversation places them then); an older export's extra messages stay literal."""
    if messages:
        conn.executemany(_INS_MSG, [_MSG_ROW(rawpack.pack_message(m, None)) for m in messages])
    if parts:
        conn.executemany(_INS_PART, _part_rows(parts, {m["message_id"]: m for m in messages}))


def update_message(conn: apsw.Connection, msg: dict, cols: list[str], run_id: str) -> None:
    cols = [*cols, "last_changed_run_id"]
    msg = {**msg, "last_changed_run_id": run_id}
    if "raw_message_json" in cols:  # literal until update_conversation places it in the new conversation text
        cols += ["raw_at", "raw_len"]
        msg = rawpack.pack_message(msg, None)
    conn.execute(update_sql("messages", "message_id", cols), tuple(msg[c] for c in cols) + (msg["message_id"],))


def replace_parts(conn: apsw.Connection, message: dict, parts: list[dict]) -> None:
    """``message``: the message's new row (its raw JSON and text_raw, which the parts' texts are placed in)."""
    conn.execute("DELETE FROM message_parts WHERE message_id=?", (message["message_id"],))
    if parts:
        conn.executemany(_INS_PART, _part_rows(parts, {message["message_id"]: message}))


def archive_raw(conn: apsw.Connection, archive_id: str, table: str, row_id: str, run_id: str, raw_json: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO raw_archive(archive_id, table_name, row_id, replaced_by_run_id, raw_json) VALUES (?,?,?,?,?)",
        (archive_id, table, row_id, run_id, raw_json),
    )


def upsert_source(conn: apsw.Connection, source: dict) -> None:
    conn.execute(
        "INSERT INTO sources(source_id, kind, path, sha256, size_bytes, first_run_id, last_run_id, stats_json) "
        "VALUES (:source_id, :kind, :path, :sha256, :size_bytes, :run_id, :run_id, :stats_json) "
        "ON CONFLICT(source_id) DO UPDATE SET path=excluded.path, last_run_id=excluded.last_run_id, "
        "stats_json=excluded.stats_json",
        source,
    )


def get_source(conn: apsw.Connection, source_id: str) -> dict | None:
    found = rows(conn, "SELECT * FROM sources WHERE source_id=?", (source_id,))
    if not found:
        return None
    src = found[0]
    src["stats"] = orjson.loads(src["stats_json"]) if src["stats_json"] else {}
    return src


def any_source_of_size(conn: apsw.Connection, size: int) -> bool:
    """Was any file of exactly ``size`` bytes imported? (None was: a file of that size cannot be one seen before.)"""
    return conn.execute("SELECT 1 FROM sources WHERE size_bytes=? LIMIT 1", (size,)).fetchone() is not None


def touch_source(conn: apsw.Connection, source_id: str, run_id: str) -> None:
    conn.execute("UPDATE sources SET last_run_id=? WHERE source_id=?", (run_id, source_id))


def link_source_conversations(conn: apsw.Connection, links: list[tuple[str, str, int]]) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO source_conversations(source_id, conversation_id, record_index) VALUES (?,?,?)", links
    )


def insert_reject(conn: apsw.Connection, reject: dict[str, Any]) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO rejects(reject_id, run_id, source_path, source_sha256, record_index, record_ref, pointer, "
        "action, reason_code, message, raw_text) VALUES (:reject_id, :run_id, :source_path, :source_sha256, "
        ":record_index, :record_ref, :pointer, :action, :reason_code, :message, :raw_text)",
        reject,
    )


def list_rejects(conn: apsw.Connection, limit: int = 100) -> list[dict]:
    return rows(conn, "SELECT reject_id, run_id, source_path, record_index, record_ref, pointer, action, reason_code, "
                      "message, length(raw_text) AS raw_chars FROM rejects ORDER BY rowid DESC LIMIT ?", (limit,))


def get_reject(conn: apsw.Connection, reject_id: str) -> dict | None:
    found = rows(conn, "SELECT * FROM rejects WHERE reject_id=? OR reject_id LIKE ?", (reject_id, reject_id + "%"))
    return found[0] if len(found) == 1 else None


def replace_participants(conn: apsw.Connection, conversation_id: str, participants: list[dict]) -> None:
    conn.execute("DELETE FROM transcript_participants WHERE conversation_id=?", (conversation_id,))
    conn.executemany(
        "INSERT INTO transcript_participants(conversation_id, participant_key, name, aliases_json, is_self) "
        "VALUES (:conversation_id, :participant_key, :name, :aliases_json, :is_self)", participants)


def participants(conn: apsw.Connection, conversation_ids: list[str] | None = None) -> list[dict]:
    """Declared participants (with aliases) of transcript sessions; all of them when no ids are given."""
    if conversation_ids is None:
        return rows(conn, "SELECT * FROM transcript_participants ORDER BY conversation_id, participant_key")
    out: list[dict] = []
    for i in range(0, len(conversation_ids), 500):
        chunk = conversation_ids[i:i + 500]
        out += rows(conn, f"SELECT * FROM transcript_participants WHERE conversation_id IN "
                          f"({','.join('?' * len(chunk))}) ORDER BY conversation_id, participant_key", chunk)
    return out


def message_texts(conn: apsw.Connection, message_ids: list[str]) -> list[dict]:
    out: list[dict] = []
    for i in range(0, len(message_ids), 500):
        chunk = message_ids[i:i + 500]
        out += rows(conn, f"SELECT message_id, text_raw FROM messages WHERE message_id IN ({','.join('?' * len(chunk))})",
                    chunk)
    return out


def message_text(conn: apsw.Connection, message_id: str) -> str | None:
    """One message's ``text_raw`` (what every offset points into), or None when the message is gone."""
    return scalar(conn, "SELECT text_raw FROM messages WHERE message_id=?", (message_id,))
