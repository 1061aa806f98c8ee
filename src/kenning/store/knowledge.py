"""SQL for the DOC72 knowledge store (migration 0070): nodes, aliases, edges, provenance, experience, commits.

Only ``kenning.knowledge`` writes through these functions (the single writer); readers may call the ``get_*`` /
``list_*`` / ``find_*`` ones. JSON columns hold sorted-key JSON so equal content is equal bytes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import apsw
import orjson

from kenning.sources.jcs import canonicalize
from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, insert_sql, marks, update_sql

NODE_COLS = ("id", "node_kind", "canonical_name", "alpha", "beta", "confidence", "staleness_state",
             "lifecycle_state", "lifecycle_substate", "created_at", "updated_at", "last_verified_at", "payload",
             "is_active")
ALIAS_COLS = ("id", "node_id", "normalized_alias", "alias_type", "confidence")
EDGE_COLS = ("source_id", "target_id", "relation_type", "confidence", "lifecycle_state", "start_date", "end_date",
             "payload")
PROVENANCE_COLS = ("id", "node_id", "entry_type", "source_description", "source_ref", "citation", "authority_type",
                   "still_current", "confidence_contribution", "supersedes_entry_id", "correction_reason",
                   "jurisdiction_scope", "created_at", "authorial_voice", "author_entity_id", "assertion_type",
                   "verbatim_excerpt", "excerpt_hash", "capture_timestamp", "source_metadata", "email_context",
                   "message_id", "char_start", "char_end")
EXPERIENCE_COLS = ("target_node_id", "total_usage_count", "total_success_count", "total_failure_count",
                   "total_correction_count", "recent_usage_count", "recent_success_count", "recent_failure_count",
                   "recent_correction_count", "last_used_at", "variant_distribution", "context_distribution",
                   "recent_events", "older_event_summary", "overall_trend", "trend_signal")
COMMIT_COLS = ("commit_id", "parent_commit_ids", "kind", "rolled_back_commit_id", "timestamp", "source_event",
               "change_summary", "extraction_prompt_version", "reversible", "idempotency_key", "expected_updated_at",
               "run_id")
MUTATION_COLS = ("commit_id", "ordinal", "type", "target_id", "patch", "reverse_patch")
OUTCOME_COLS = ("event_id", "source_surface", "extracted_item_id", "extracted_item_kind", "outcome", "severity",
                "user_visible", "occurred_at", "commit_id")
AUDIT_COLS = ("extraction_id", "surface", "source_content_ref", "extraction_prompt_version", "significance_score",
              "dispatch_decision", "skip_reason", "error_code", "retry_count", "skip_content_fingerprint",
              "skip_entity_mentions", "items_extracted", "items_promoted", "items_filtered_by_write_gate",
              "knowledge_commit_ids", "extracted_at")

_JSON_COLS = {"payload", "jurisdiction_scope", "source_metadata", "email_context", "variant_distribution",
              "context_distribution", "recent_events", "older_event_summary", "parent_commit_ids", "patch",
              "reverse_patch", "skip_entity_mentions", "knowledge_commit_ids"}

# Tables of the node store in dependency order (parents first): rebuild wipes them in reverse.
TABLES = ("nodes", "aliases", "edges", "provenance_entries", "experience_records", "knowledge_commits",
          "knowledge_commit_mutations", "extraction_outcome_events")


def to_json(value: Any) -> str | None:
    """Sorted-key JSON (decision K2: deterministic like JCS, which differs only in spelling integral floats; JCS
    for what orjson cannot encode, such as lone surrogates)."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return canonicalize(value)


def from_json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def _encode(cols: Sequence[str], values: dict[str, Any]) -> tuple:
    return tuple(to_json(values.get(c)) if c in _JSON_COLS else values.get(c) for c in cols)


def _decode(r: dict[str, Any] | None) -> dict[str, Any] | None:
    if r is None:
        return None
    for c in _JSON_COLS.intersection(r):
        r[c] = from_json(r[c])
    return r


# ---- nodes -------------------------------------------------------------------------------------------------

def get_node(conn: apsw.Connection, node_id: str) -> dict[str, Any] | None:
    return _decode(row(conn, f"SELECT {', '.join(NODE_COLS)} FROM nodes WHERE id=?", (node_id,)))


def node_updated_at(conn: apsw.Connection, node_id: str) -> str | None:
    return scalar(conn, "SELECT updated_at FROM nodes WHERE id=?", (node_id,))


def insert_node(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("nodes", NODE_COLS), _encode(NODE_COLS, values))


def _update(conn: apsw.Connection, table: str, allowed: Sequence[str], row_id: str, values: dict[str, Any]) -> None:
    """Set the ``allowed`` columns present in ``values`` on the row ``id = row_id`` (JSON columns encoded)."""
    cols = sorted(c for c in values if c in allowed and c not in ("id", "node_id"))
    if cols:
        conn.execute(update_sql(table, "id", cols), (*_encode(cols, values), row_id))


def update_node(conn: apsw.Connection, node_id: str, values: dict[str, Any]) -> None:
    _update(conn, "nodes", NODE_COLS, node_id, values)


def delete_node(conn: apsw.Connection, node_id: str) -> None:
    conn.execute("DELETE FROM nodes WHERE id=?", (node_id,))


def get_aliases(conn: apsw.Connection, node_id: str) -> list[dict[str, Any]]:
    return rows(conn, f"SELECT {', '.join(ALIAS_COLS)} FROM aliases WHERE node_id=? ORDER BY id", (node_id,))


def insert_alias(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("aliases", ALIAS_COLS), _encode(ALIAS_COLS, values))


def update_alias(conn: apsw.Connection, alias_id: str, values: dict[str, Any]) -> None:
    _update(conn, "aliases", ALIAS_COLS, alias_id, values)


def delete_alias(conn: apsw.Connection, alias_id: str) -> None:
    conn.execute("DELETE FROM aliases WHERE id=?", (alias_id,))


def get_provenance(conn: apsw.Connection, node_id: str) -> list[dict[str, Any]]:
    return [_decode(r) for r in rows(conn, f"SELECT {', '.join(PROVENANCE_COLS)} FROM provenance_entries "
                                           "WHERE node_id=? ORDER BY created_at, id", (node_id,))]


def insert_provenance(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("provenance_entries", PROVENANCE_COLS), _encode(PROVENANCE_COLS, values))


def update_provenance(conn: apsw.Connection, entry_id: str, values: dict[str, Any]) -> None:
    _update(conn, "provenance_entries", PROVENANCE_COLS, entry_id, values)


def delete_provenance(conn: apsw.Connection, entry_id: str) -> None:
    conn.execute("DELETE FROM provenance_entries WHERE id=?", (entry_id,))


def get_experience(conn: apsw.Connection, node_id: str) -> dict[str, Any] | None:
    return _decode(row(conn, f"SELECT {', '.join(EXPERIENCE_COLS)} FROM experience_records WHERE target_node_id=?",
                       (node_id,)))


def put_experience(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("experience_records", EXPERIENCE_COLS, "INSERT OR REPLACE"),
                 _encode(EXPERIENCE_COLS, values))


def delete_experience(conn: apsw.Connection, node_id: str) -> None:
    conn.execute("DELETE FROM experience_records WHERE target_node_id=?", (node_id,))


# ---- edges -------------------------------------------------------------------------------------------------

def get_edge(conn: apsw.Connection, source_id: str, relation_type: str, target_id: str,
             start_date: str) -> dict[str, Any] | None:
    return _decode(row(conn, f"SELECT {', '.join(EDGE_COLS)} FROM edges WHERE source_id=? AND relation_type=? "
                             "AND target_id=? AND start_date=?", (source_id, relation_type, target_id, start_date)))


def current_edge(conn: apsw.Connection, source_id: str, relation_type: str, target_id: str) -> dict[str, Any] | None:
    return _decode(row(conn, f"SELECT {', '.join(EDGE_COLS)} FROM edges WHERE source_id=? AND relation_type=? "
                             "AND target_id=? AND end_date IS NULL", (source_id, relation_type, target_id)))


def insert_edge(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("edges", EDGE_COLS), _encode(EDGE_COLS, values))


def update_edge(conn: apsw.Connection, key: tuple[str, str, str, str], values: dict[str, Any]) -> None:
    cols = sorted(c for c in values if c in ("confidence", "lifecycle_state", "end_date", "payload"))
    if cols:
        conn.execute(f"UPDATE edges SET {', '.join(f'{c}=?' for c in cols)} WHERE source_id=? AND relation_type=? "
                     "AND target_id=? AND start_date=?", (*_encode(cols, values), *key))


def delete_edge(conn: apsw.Connection, key: tuple[str, str, str, str]) -> None:
    conn.execute("DELETE FROM edges WHERE source_id=? AND relation_type=? AND target_id=? AND start_date=?", key)


def edges_of(conn: apsw.Connection, node_id: str, *, current_only: bool = False,
             limit: int | None = None) -> list[dict[str, Any]]:
    cur = " AND end_date IS NULL" if current_only else ""
    lim = f" LIMIT {int(limit)}" if limit else ""
    sql = (f"SELECT * FROM (SELECT {', '.join(EDGE_COLS)} FROM edges WHERE source_id=?{cur} UNION ALL "
           f"SELECT {', '.join(EDGE_COLS)} FROM edges WHERE target_id=? AND source_id<>?{cur}) "
           f"ORDER BY end_date IS NOT NULL, start_date DESC, relation_type, source_id, target_id{lim}")
    return [_decode(r) for r in rows(conn, sql, (node_id, node_id, node_id))]


def edge_degree(conn: apsw.Connection, node_id: str) -> int:
    return scalar(conn, "SELECT (SELECT count(*) FROM edges WHERE source_id=?1 AND end_date IS NULL) + "
                        "(SELECT count(*) FROM edges WHERE target_id=?1 AND end_date IS NULL)", (node_id,))


_ID_PREFIX = re.compile(r"[0-9a-f-]{6,36}")


# ---- lookups -----------------------------------------------------------------------------------------------

def find_nodes(conn: apsw.Connection, text: str, *, limit: int = 10) -> list[dict[str, Any]]:
    """Nodes a person may mean by ``text``: the id, an id prefix (≥ 6 chars), the exact name (any case), an alias."""
    found = rows(conn, "SELECT id FROM nodes WHERE id=?", (text,))
    if not found and len(text) >= 6 and _ID_PREFIX.fullmatch(text):
        # a range on the primary key (LIKE would scan every node)
        found = rows(conn, "SELECT id FROM nodes WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                     (text, text + "\U0010ffff", limit))
    if not found:
        found = rows(conn, "SELECT id FROM nodes WHERE canonical_name=? COLLATE NOCASE "
                           "ORDER BY is_active DESC, confidence DESC, id LIMIT ?", (text, limit))
    if not found:
        found = rows(conn, "SELECT DISTINCT a.node_id AS id FROM aliases a JOIN nodes n ON n.id=a.node_id "
                           "WHERE a.normalized_alias=? ORDER BY n.is_active DESC, n.confidence DESC, n.id LIMIT ?",
                     (text.casefold(), limit))
    return [get_node(conn, r["id"]) for r in found]


def list_nodes(conn: apsw.Connection, *, kind: str | None = None, lifecycle: str | None = None,
               active: bool | None = True, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
    where, params = [], []
    if kind:
        where.append("node_kind=?")
        params.append(kind)
    if lifecycle:
        where.append("lifecycle_state=?")
        params.append(lifecycle)
    if active is not None:
        where.append("is_active=?")
        params.append(1 if active else 0)
    sql = (f"SELECT {', '.join(NODE_COLS)} FROM nodes" + (f" WHERE {' AND '.join(where)}" if where else "")
           + " ORDER BY node_kind, confidence DESC, canonical_name, id LIMIT ? OFFSET ?")
    return [_decode(r) for r in rows(conn, sql, (*params, limit, offset))]


def count_nodes(conn: apsw.Connection, *, kind: str | None = None, lifecycle: str | None = None,
                active: bool | None = True) -> int:
    where, params = [], []
    for col, val in (("node_kind", kind), ("lifecycle_state", lifecycle)):
        if val:
            where.append(f"{col}=?")
            params.append(val)
    if active is not None:
        where.append("is_active=?")
        params.append(1 if active else 0)
    return scalar(conn, "SELECT count(*) FROM nodes" + (f" WHERE {' AND '.join(where)}" if where else ""), params)


def kind_counts(conn: apsw.Connection) -> dict[str, int]:
    return {r["node_kind"]: r["n"] for r in rows(
        conn, "SELECT node_kind, count(*) AS n FROM nodes WHERE is_active=1 GROUP BY node_kind ORDER BY node_kind")}


def fts_node_ids(conn: apsw.Connection, match: str, *, limit: int = 10) -> list[str]:
    return [r["id"] for r in rows(conn, "SELECT n.id FROM fts_nodes f JOIN nodes n ON n.rowid=f.rowid "
                                        "WHERE fts_nodes MATCH ? ORDER BY bm25(fts_nodes) LIMIT ?", (match, limit))]


def node_ids_with_message(conn: apsw.Connection, message_ids: Sequence[str]) -> list[str]:
    out: set[str] = set()
    for part in chunks(list(message_ids)):
        out.update(r["node_id"] for r in rows(
            conn, f"SELECT DISTINCT node_id FROM provenance_entries WHERE message_id IN ({marks(len(part))})", part))
    return sorted(out)


# ---- commits -----------------------------------------------------------------------------------------------

def head_commit_id(conn: apsw.Connection) -> str | None:
    return scalar(conn, "SELECT commit_id FROM knowledge_commits ORDER BY seq DESC LIMIT 1")


def commit_by_idempotency_key(conn: apsw.Connection, key: str) -> dict[str, Any] | None:
    return _decode(row(conn, f"SELECT seq, {', '.join(COMMIT_COLS)} FROM knowledge_commits WHERE idempotency_key=?",
                       (key,)))


def get_commit(conn: apsw.Connection, commit_id: str) -> dict[str, Any] | None:
    c = _decode(row(conn, f"SELECT seq, {', '.join(COMMIT_COLS)} FROM knowledge_commits WHERE commit_id=?",
                    (commit_id,)))
    if c is None and len(commit_id) >= 6:
        found = rows(conn, "SELECT commit_id FROM knowledge_commits WHERE commit_id LIKE ? || '%' LIMIT 2",
                     (commit_id,))
        if len(found) == 1:
            return get_commit(conn, found[0]["commit_id"])
    if c is not None:
        c["mutations"] = get_mutations(conn, c["commit_id"])
    return c


def get_mutations(conn: apsw.Connection, commit_id: str) -> list[dict[str, Any]]:
    return [_decode(r) for r in rows(conn, f"SELECT {', '.join(MUTATION_COLS)} FROM knowledge_commit_mutations "
                                           "WHERE commit_id=? ORDER BY ordinal", (commit_id,))]


def insert_commit(conn: apsw.Connection, values: dict[str, Any], mutations: Iterable[dict[str, Any]]) -> int:
    """Insert a commit and its mutations; ``values["seq"]``, when given (a rebuild), keeps the logged order."""
    cols = (("seq",) if values.get("seq") is not None else ()) + COMMIT_COLS
    conn.execute(insert_sql("knowledge_commits", cols), _encode(cols, values))
    seq = conn.last_insert_rowid()
    conn.executemany(insert_sql("knowledge_commit_mutations", MUTATION_COLS),
                     [_encode(MUTATION_COLS, m) for m in mutations])
    return seq


def rolled_back_ids(conn: apsw.Connection) -> set[str]:
    return {r["rolled_back_commit_id"] for r in rows(
        conn, "SELECT rolled_back_commit_id FROM knowledge_commits WHERE rolled_back_commit_id IS NOT NULL")}


def rollbacks_of(conn: apsw.Connection, commit_id: str) -> list[str]:
    return [r["commit_id"] for r in rows(conn, "SELECT commit_id FROM knowledge_commits WHERE rolled_back_commit_id=? "
                                               "ORDER BY seq", (commit_id,))]


def list_commits(conn: apsw.Connection, *, node_id: str | None = None, limit: int = 50,
                 after_seq: int | None = None) -> list[dict[str, Any]]:
    if node_id:
        sql = (f"SELECT seq, {', '.join(COMMIT_COLS)} FROM knowledge_commits WHERE commit_id IN "
               "(SELECT commit_id FROM knowledge_commit_mutations WHERE target_id=? OR target_id LIKE ? || '|%' "
               "OR target_id LIKE '%|' || ? || '|%') ORDER BY seq DESC LIMIT ?")
        found = rows(conn, sql, (node_id, node_id, node_id, limit))
    elif after_seq is not None:
        found = rows(conn, f"SELECT seq, {', '.join(COMMIT_COLS)} FROM knowledge_commits WHERE seq>? ORDER BY seq "
                           "LIMIT ?", (after_seq, limit))
    else:
        found = rows(conn, f"SELECT seq, {', '.join(COMMIT_COLS)} FROM knowledge_commits ORDER BY seq DESC LIMIT ?",
                     (limit,))
    return [_decode(r) for r in found]


def max_commit_seq(conn: apsw.Connection) -> int:
    return scalar(conn, "SELECT coalesce(max(seq), 0) FROM knowledge_commits")


def commit_seq(conn: apsw.Connection, commit_id: str) -> int | None:
    return scalar(conn, "SELECT seq FROM knowledge_commits WHERE commit_id=?", (commit_id,))


def commit_count(conn: apsw.Connection) -> int:
    return scalar(conn, "SELECT count(*) FROM knowledge_commits")


def node_commit_events(conn: apsw.Connection, node_id: str) -> list[dict[str, Any]]:
    """(timestamp, source_event) of every commit touching the node, oldest first — the hysteresis history."""
    return rows(conn, "SELECT c.timestamp, c.source_event, c.kind FROM knowledge_commits c WHERE c.commit_id IN "
                      "(SELECT commit_id FROM knowledge_commit_mutations WHERE target_id=?) ORDER BY c.seq",
                (node_id,))


# ---- outcome events and audit ------------------------------------------------------------------------------

def insert_outcome_event(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("extraction_outcome_events", OUTCOME_COLS, "INSERT OR IGNORE"),
                 _encode(OUTCOME_COLS, values))


def outcome_events(conn: apsw.Connection, *, kind: str | None = None, since: str | None = None,
                   commit_id: str | None = None, item_id: str | None = None) -> list[dict[str, Any]]:
    where, params = [], []
    for col, op, val in (("extracted_item_kind", "=", kind), ("occurred_at", ">=", since),
                         ("commit_id", "=", commit_id), ("extracted_item_id", "=", item_id)):
        if val is not None:
            where.append(f"{col}{op}?")
            params.append(val)
    return rows(conn, f"SELECT {', '.join(OUTCOME_COLS)} FROM extraction_outcome_events"
                      + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY occurred_at, event_id",
                params)


def insert_audit(conn: apsw.Connection, values: dict[str, Any]) -> None:
    # a plain INSERT: the view's trigger replaces the row of the same id (Y20); an outer OR REPLACE would override
    # the trigger's INSERT OR IGNORE into intake_values
    conn.execute(insert_sql("extraction_audit", AUDIT_COLS), _encode(AUDIT_COLS, values))


def get_audit(conn: apsw.Connection, extraction_id: str) -> dict[str, Any] | None:
    return _decode(row(conn, f"SELECT {', '.join(AUDIT_COLS)} FROM extraction_audit WHERE extraction_id=?",
                       (extraction_id,)))


# ---- whole-store operations --------------------------------------------------------------------------------

def wipe(conn: apsw.Connection) -> None:
    """Empty the node store (for a rebuild from the event log; the caller holds the transaction)."""
    for table in reversed(TABLES):
        conn.execute(f"DELETE FROM {table}")


def dump(conn: apsw.Connection) -> dict[str, list[dict[str, Any]]]:
    """Every row of the node store in a stable order, without SQLite rowids: equal dumps = equal content."""
    order = {"nodes": "id", "aliases": "id", "edges": "source_id, relation_type, target_id, start_date",
             "provenance_entries": "id", "experience_records": "target_node_id", "knowledge_commits": "seq",
             "knowledge_commit_mutations": "commit_id, ordinal", "extraction_outcome_events": "event_id"}
    return {t: rows(conn, f"SELECT * FROM {t} ORDER BY {order[t]}") for t in TABLES}


def fts_rows(conn: apsw.Connection, node_id: str) -> int:
    return scalar(conn, "SELECT count(*) FROM fts_nodes f JOIN nodes n ON n.rowid=f.rowid WHERE n.id=?", (node_id,))


# ---- derived-work marks ------------------------------------------------------------------------------------

def state_get(conn: apsw.Connection, key: str) -> str | None:
    return scalar(conn, "SELECT value FROM knowledge_state WHERE key=?", (key,))


def state_set(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO knowledge_state(key, value) VALUES (?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                 (key, value))


def nodes_changed_after(conn: apsw.Connection, updated_at: str, node_id: str, limit: int) -> list[dict[str, Any]]:
    """Nodes changed after the (updated_at, id) mark, in that order: what the vector index has not seen yet."""
    return [_decode(r) for r in rows(
        conn, "SELECT id, node_kind, canonical_name, payload, is_active, lifecycle_state, updated_at FROM nodes "
              "WHERE (updated_at, id) > (?, ?) ORDER BY updated_at, id LIMIT ?", (updated_at, node_id, limit))]
