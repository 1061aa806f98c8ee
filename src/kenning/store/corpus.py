"""SQL of the conversation corpus (seed 003 §25; issue 18 parts 6–7, decisions I50–I69): thread summaries, their
entity links and decision checkpoints, the `threads` stage's incremental state, and note versions with their
§20B.2 assessment pointers. Everything else in ``kenning.intake.corpus`` is SQL-free."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import orjson

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, insert_sql, marks

THREAD_COLUMNS = ("thread_id", "title_hint", "linked_entity_ids", "key_decisions", "unresolved_items",
                  "checkpoint_summary", "occurred_at", "turn_count", "channel")
CHECKPOINT_COLUMNS = ("decision_id", "thread_id", "description", "reasoning", "linked_entity_ids", "occurred_at",
                      "message_id", "ordinal")
BUILD_COLUMNS = ("thread_id", "conversation_id", "input_hash", "method", "prompt_ref", "llm_call_ids", "built_run_id")
NOTE_VERSION_COLUMNS = ("version_id", "note_id", "path", "content_sha256", "char_count", "content", "prior_version_id",
                        "added_bytes", "decision", "observed_at", "run_id")
_JSON_COLS = ("linked_entity_ids", "key_decisions", "unresolved_items", "llm_call_ids")
_MSG_TIME = "coalesce(m.created_at_utc, c.created_at_utc)"


def _dumps(v: Any) -> str:
    return orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode()


def _decode(r: dict[str, Any]) -> dict[str, Any]:
    for k in _JSON_COLS:
        if k in r and isinstance(r[k], str):
            r[k] = orjson.loads(r[k])
    return r


def has_corpus(conn: apsw.Connection) -> bool:
    """False for a vault from before migration 0088 opened read-only (read commands do not migrate)."""
    return scalar(conn, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='conversation_threads'") is not None


# -- inputs of the threads stage -------------------------------------------------------------------------------

def conversation_fingerprints(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Per conversation: what its thread summary depends on in the raw tables (message ids, raw hashes, branch
    flags, in order) — cheap enough to compute for every conversation on every run."""
    return rows(conn, "SELECT c.conversation_id, c.source_kind, c.title, c.raw_sha256, "
                      "(SELECT group_concat(x, ',') FROM (SELECT m.message_id || ':' || m.raw_sha256 || ':' || "
                      " m.is_current_branch || ':' || m.is_hidden AS x FROM messages m "
                      " WHERE m.conversation_id=c.conversation_id ORDER BY m.order_index, m.message_id)) AS msgs "
                      "FROM conversations c ORDER BY c.conversation_id")


def conversation_entity_ids(conn: apsw.Connection) -> dict[str, list[tuple[str, int]]]:
    """conversation_id → [(entity_id, mention count)] for every canonical entity mentioned in it."""
    out: dict[str, list[tuple[str, int]]] = {}
    for r in rows(conn, "SELECT m.conversation_id, em.entity_id, count(*) AS n FROM entity_mentions em "
                        "JOIN messages m ON m.message_id=em.message_id WHERE em.entity_id IS NOT NULL "
                        "GROUP BY m.conversation_id, em.entity_id ORDER BY m.conversation_id, em.entity_id"):
        out.setdefault(r["conversation_id"], []).append((r["entity_id"], r["n"]))
    return out


def message_entity_ids(conn: apsw.Connection, conversation_id: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in rows(conn, "SELECT DISTINCT em.message_id, em.entity_id FROM entity_mentions em "
                        "JOIN messages m ON m.message_id=em.message_id "
                        "WHERE m.conversation_id=? AND em.entity_id IS NOT NULL ORDER BY em.message_id, em.entity_id",
                  (conversation_id,)):
        out.setdefault(r["message_id"], []).append(r["entity_id"])
    return out


def self_entity_id(conn: apsw.Connection) -> str | None:
    return scalar(conn, "SELECT entity_id FROM entities WHERE entity_key='__SELF__' ORDER BY entity_id LIMIT 1")


def existing_nodes(conn: apsw.Connection, node_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for chunk in chunks(list(node_ids)):
        found |= {r["id"] for r in rows(conn, f"SELECT id FROM nodes WHERE is_active=1 AND id IN ({marks(len(chunk))})",
                                        list(chunk))}
    return found


def thread_messages(conn: apsw.Connection, conversation_id: str) -> list[dict[str, Any]]:
    """The turns a thread summary reads: the current branch, visible, in order."""
    return rows(conn, f"SELECT m.message_id, m.role, m.author_name, m.text_raw, {_MSG_TIME} AS at, m.order_index "
                      "FROM messages m JOIN conversations c ON c.conversation_id=m.conversation_id "
                      "WHERE m.conversation_id=? AND m.is_current_branch=1 AND m.is_hidden=0 "
                      "AND m.role IN ('user','assistant','unknown') ORDER BY m.order_index, m.message_id",
                (conversation_id,))


def conversation(conn: apsw.Connection, conversation_id: str) -> dict[str, Any] | None:
    return row(conn, "SELECT conversation_id, title, source_kind, created_at_utc, updated_at_utc FROM conversations "
                     "WHERE conversation_id=?", (conversation_id,))


# -- thread rows -------------------------------------------------------------------------------------------------

def builds(conn: apsw.Connection) -> dict[str, dict[str, Any]]:
    return {r["thread_id"]: r for r in rows(conn, "SELECT thread_id, input_hash, method FROM thread_builds")}


def replace_thread(conn: apsw.Connection, thread: dict[str, Any], links: Sequence[str],
                   checkpoints: Sequence[dict[str, Any]], build: dict[str, Any]) -> None:
    """One thread's summary, links, checkpoints and build state, replaced together."""
    tid = thread["thread_id"]
    conn.execute("DELETE FROM decision_checkpoints WHERE thread_id=?", (tid,))
    conn.execute("DELETE FROM thread_entity_links WHERE thread_id=?", (tid,))
    values = {k: (_dumps(v) if k in _JSON_COLS else v) for k, v in thread.items()}
    conn.execute(insert_sql("conversation_threads", THREAD_COLUMNS, "INSERT OR REPLACE"),
                 [values[c] for c in THREAD_COLUMNS])
    conn.executemany("INSERT INTO thread_entity_links(thread_id, entity_id) VALUES (?,?)", [(tid, e) for e in links])
    conn.executemany(insert_sql("decision_checkpoints", CHECKPOINT_COLUMNS),
                     [[_dumps(c[k]) if k == "linked_entity_ids" else c[k] for k in CHECKPOINT_COLUMNS]
                      for c in checkpoints])
    b = {k: (_dumps(v) if k in _JSON_COLS and v is not None else v) for k, v in build.items()}
    conn.execute(insert_sql("thread_builds", BUILD_COLUMNS, "INSERT OR REPLACE"), [b[c] for c in BUILD_COLUMNS])


def threads(conn: apsw.Connection, *, entity_ids: Sequence[str] | None = None, limit: int | None = None
            ) -> list[dict[str, Any]]:
    """Thread summaries, most recent first; with ``entity_ids`` only those linked to one of them."""
    where, params = "", []
    if entity_ids is not None:
        if not entity_ids:
            return []
        where = (f"WHERE t.thread_id IN (SELECT thread_id FROM thread_entity_links "
                 f"WHERE entity_id IN ({marks(len(entity_ids))}))")
        params = list(entity_ids)
    sql = (f"SELECT {', '.join('t.' + c for c in THREAD_COLUMNS)}, b.method FROM conversation_threads t "
           f"LEFT JOIN thread_builds b ON b.thread_id=t.thread_id {where} "
           "ORDER BY t.occurred_at IS NULL, t.occurred_at DESC, t.thread_id")
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_decode(r) for r in rows(conn, sql, params)]


def recent_threads(conn: apsw.Connection, since: str, until: str, limit: int) -> list[dict[str, Any]]:
    """Threads whose last turn falls in [since, until], most recent first (continuity for context packets, I77)."""
    sql = (f"SELECT {', '.join('t.' + c for c in THREAD_COLUMNS)}, b.method FROM conversation_threads t "
           "LEFT JOIN thread_builds b ON b.thread_id=t.thread_id WHERE t.occurred_at >= ? AND t.occurred_at <= ? "
           "ORDER BY t.occurred_at DESC, t.thread_id LIMIT ?")
    return [_decode(r) for r in rows(conn, sql, (since, until, int(limit)))]


def thread(conn: apsw.Connection, thread_id: str) -> dict[str, Any] | None:
    r = row(conn, f"SELECT {', '.join('t.' + c for c in THREAD_COLUMNS)}, b.method FROM conversation_threads t "
                  "LEFT JOIN thread_builds b ON b.thread_id=t.thread_id WHERE t.thread_id=?", (thread_id,))
    return _decode(r) if r else None


def checkpoints(conn: apsw.Connection, thread_id: str) -> list[dict[str, Any]]:
    return [_decode(r) for r in rows(conn, f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM decision_checkpoints "
                                           "WHERE thread_id=? ORDER BY ordinal", (thread_id,))]


def node_names(conn: apsw.Connection, node_ids: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for chunk in chunks(list(node_ids)):
        for r in rows(conn, f"SELECT id, canonical_name FROM nodes WHERE id IN ({marks(len(chunk))})", list(chunk)):
            out[r["id"]] = r["canonical_name"]
    return out


def find_entity_nodes(conn: apsw.Connection, text: str) -> list[dict[str, Any]]:
    """World-entity nodes named ``text``: by id, by canonical name, else by alias (case-insensitive)."""
    found = rows(conn, "SELECT id, canonical_name FROM nodes WHERE id=? AND is_active=1", (text,))
    if found:
        return found
    found = rows(conn, "SELECT id, canonical_name FROM nodes WHERE canonical_name=? COLLATE NOCASE AND is_active=1 "
                       "AND node_kind='world_entity' ORDER BY id", (text,))
    if found:
        return found
    return rows(conn, "SELECT DISTINCT n.id, n.canonical_name FROM aliases a JOIN nodes n ON n.id=a.node_id "
                      "WHERE a.normalized_alias=? AND n.is_active=1 AND n.node_kind='world_entity' ORDER BY n.id",
                (text.strip().casefold(),))


def linked_thread_count(conn: apsw.Connection, node_ids: Sequence[str]) -> int:
    if not node_ids:
        return 0
    return int(scalar(conn, f"SELECT count(DISTINCT thread_id) FROM thread_entity_links "
                            f"WHERE entity_id IN ({marks(len(node_ids))})", list(node_ids)) or 0)


# -- note versions (§20B.2) --------------------------------------------------------------------------------------

def note_pointer(conn: apsw.Connection, note_id: str) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM note_assessment_pointers WHERE note_id=?", (note_id,))


def note_version(conn: apsw.Connection, version_id: str) -> dict[str, Any] | None:
    return row(conn, f"SELECT {', '.join(NOTE_VERSION_COLUMNS)} FROM note_versions WHERE version_id=?", (version_id,))


def note_version_by_hash(conn: apsw.Connection, note_id: str, content_sha256: str) -> dict[str, Any] | None:
    return row(conn, f"SELECT {', '.join(NOTE_VERSION_COLUMNS)} FROM note_versions WHERE note_id=? "
                     "AND content_sha256=?", (note_id, content_sha256))


def insert_note_version(conn: apsw.Connection, version: dict[str, Any]) -> None:
    conn.execute(insert_sql("note_versions", NOTE_VERSION_COLUMNS), [version[c] for c in NOTE_VERSION_COLUMNS])


def upsert_note_pointer(conn: apsw.Connection, p: dict[str, Any]) -> None:
    cols = ("note_id", "last_knowledge_assessed_version_id", "pending_extraction_id",
            "extraction_baseline_version_id", "last_extracted_at", "updated_at")
    conn.execute(insert_sql("note_assessment_pointers", cols, "INSERT OR REPLACE"), [p.get(c) for c in cols])


def note_versions(conn: apsw.Connection, note_id: str) -> list[dict[str, Any]]:
    return rows(conn, f"SELECT {', '.join(NOTE_VERSION_COLUMNS)} FROM note_versions WHERE note_id=? "
                      "ORDER BY observed_at, version_id", (note_id,))


def thread_count(conn: apsw.Connection) -> int:
    return conn.execute("SELECT count(*) FROM conversation_threads").fetchone()[0]
