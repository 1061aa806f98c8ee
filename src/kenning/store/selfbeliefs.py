"""SQL of the self-belief decomposer (seed 000): experiences, belief nodes, occurrences, tentative links, conflict
edges, stream assignments (migration 0040)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import apsw

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, insert_sql, marks, unique_by_prefix, update_row, update_sql

NODE_COLUMNS = (
    "belief_id", "canonical_text", "canonical_hash", "belief_type", "polarity", "embedding", "activation", "core_score",
    "status", "conflict_count", "created_at", "last_reinforced_at", "statement", "embedding_model", "extractor_version",
    "merged_into_belief_id", "merged_at", "superseded_by_belief_id", "superseded_at", "supersession_reason",
    "score_json", "scored_at",
)
OCCURRENCE_COLUMNS = (
    "occurrence_id", "belief_id", "source_experience_id", "extractor_version", "raw_text", "raw_span", "source_weight",
    "atom_confidence", "epistemic_frame", "epistemic_confidence", "match_confidence", "context_id", "created_at",
    "deleted_at", "message_id", "occurred_at", "belief_type", "atom_polarity", "resolution", "signals_json", "run_id",
)
LINK_COLUMNS = (
    "link_id", "from_belief_id", "to_belief_id", "confidence", "status", "support_both", "support_one",
    "last_support_at", "signals", "extractor_version", "created_at", "updated_at", "status_reason", "merged_at",
)
EDGE_COLUMNS = (
    "edge_id", "node_a_id", "node_b_id", "conflict_type", "detection_method", "evidence", "status", "created_at",
    "resolved_at", "resolution_reason", "observed_at", "resolution_method", "winner_belief_id",
)
ASSIGNMENT_COLUMNS = (
    "assignment_id", "belief_id", "primary_stream", "secondary_stream", "confidence", "migrated_from", "migrated_at",
    "migration_history", "created_at", "updated_at",
)
EXPERIENCE_COLUMNS = (
    "experience_id", "type", "message_id", "conversation_id", "source_kind", "context_kind", "text_start", "text_end",
    "text_sha256", "occurred_at", "metadata_json", "selected_reason_json", "detector_version", "current_version",
    "retired_at", "created_at", "run_id",
)
_NODE_SELECT = ", ".join(f"n.{c}" for c in NODE_COLUMNS if c != "embedding")


# ---- detection ---------------------------------------------------------------------------------------------
def unscanned_messages(conn: apsw.Connection, source_kinds: Sequence[str], roles: Sequence[str],
                       detector_version: int) -> list[dict]:
    """Messages the detector has not read yet (or read before they changed, or with another detector version)."""
    if not source_kinds or not roles:
        return []
    return rows(conn, f"""
        SELECT m.message_id, m.conversation_id, m.role, m.text_raw, m.raw_sha256, m.created_at_utc,
               m.code_fence_ranges_json, m.blockquote_ranges_json, m.citation_ranges_json, m.export_content_type,
               c.source_kind, s.raw_sha256 AS scanned_sha256
        FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id
        LEFT JOIN experience_scan_rows s ON s.message_id = m.message_id   -- the view's rows (Y23): no value joins
        WHERE c.source_kind IN ({marks(len(source_kinds))}) AND m.role IN ({marks(len(roles))})
          AND (s.message_id IS NULL OR s.raw_sha256 <> m.raw_sha256 OR s.detector_version <> ?)
        ORDER BY COALESCE(m.created_at_utc, c.created_at_utc, ''), m.conversation_id, m.order_index""",
                (*source_kinds, *roles, detector_version))


def parts_metadata(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for chunk in chunks(list(message_ids)):
        for r in conn.execute(f"SELECT message_id, metadata_json FROM message_parts WHERE message_id IN "
                              f"({marks(len(chunk))}) AND metadata_json IS NOT NULL ORDER BY message_id, part_index",
                              tuple(chunk)):
            out.setdefault(r[0], []).append(r[1])
    return out


def upsert_scans(conn: apsw.Connection, scans: Sequence[dict]) -> None:
    conn.executemany(
        # the view's trigger replaces a message's earlier scan (Y23: the view keeps reason, time and run id once)
        "INSERT INTO experience_scans(message_id, raw_sha256, detector_version, selected, reason, scanned_at, run_id) "
        "VALUES (:message_id, :raw_sha256, :detector_version, :selected, :reason, :scanned_at, :run_id)", scans)


def profile_text_known(conn: apsw.Connection, context_kind: str, text_sha256: str) -> bool:
    return scalar(conn, "SELECT 1 FROM experiences WHERE context_kind = ? AND text_sha256 = ? AND retired_at IS NULL "
                        "LIMIT 1", (context_kind, text_sha256)) is not None


def get_experience(conn: apsw.Connection, experience_id: str) -> dict | None:
    return row(conn, "SELECT * FROM experiences WHERE experience_id = ?", (experience_id,))


def upsert_experience(conn: apsw.Connection, e: dict) -> bool:
    """Insert (True) or, for a known id, un-retire it (False)."""
    if get_experience(conn, e["experience_id"]) is None:
        conn.execute(insert_sql("experiences", EXPERIENCE_COLUMNS), tuple(e[c] for c in EXPERIENCE_COLUMNS))
        return True
    conn.execute("UPDATE experiences SET retired_at = NULL, selected_reason_json = ?, detector_version = ? "
                 "WHERE experience_id = ?", (e["selected_reason_json"], e["detector_version"], e["experience_id"]))
    return False


def live_experiences_of_message(conn: apsw.Connection, message_id: str) -> list[dict]:
    return rows(conn, "SELECT * FROM experiences WHERE message_id = ? AND retired_at IS NULL", (message_id,))


def retire_experience(conn: apsw.Connection, experience_id: str, at: str) -> list[str]:
    """The message changed: retire the experience and soft-delete its occurrences. Returns the nodes touched."""
    touched = [r[0] for r in conn.execute("SELECT DISTINCT belief_id FROM belief_occurrences WHERE "
                                          "source_experience_id = ? AND deleted_at IS NULL", (experience_id,))]
    conn.execute("UPDATE belief_occurrences SET deleted_at = ? WHERE source_experience_id = ? AND deleted_at IS NULL",
                 (at, experience_id))
    conn.execute("UPDATE experiences SET retired_at = ?, current_version = NULL WHERE experience_id = ?",
                 (at, experience_id))
    return touched


def pending_experiences(conn: apsw.Connection, extractor_version: str, limit: int | None = None,
                        experience_ids: Sequence[str] | None = None) -> list[dict]:
    """Live experiences the version has not processed, oldest first, with their message text."""
    where = ""
    params: list[Any] = [extractor_version]
    if experience_ids is not None:
        where = f" AND e.experience_id IN ({marks(len(experience_ids))})"
        params += list(experience_ids)
    sql = f"""
        SELECT e.*, m.text_raw, m.code_fence_ranges_json, m.blockquote_ranges_json, m.citation_ranges_json
        FROM experiences e JOIN messages m ON m.message_id = e.message_id
        WHERE e.retired_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM experience_runs r WHERE r.experience_id = e.experience_id
                          AND r.extractor_version = ?){where}
        ORDER BY COALESCE(e.occurred_at, ''), e.experience_id"""
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return rows(conn, sql, params)


def count_experiences(conn: apsw.Connection) -> dict[str, int]:
    return {"experiences": int(scalar(conn, "SELECT COUNT(*) FROM experiences WHERE retired_at IS NULL")),
            "scanned": int(scalar(conn, "SELECT COUNT(*) FROM experience_scans"))}


def insert_experience_run(conn: apsw.Connection, r: dict) -> None:
    conn.execute("INSERT INTO experience_runs(experience_id, extractor_version, processed_at, run_id, llm_mode, "
                 "counts_json) VALUES (?,?,?,?,?,?) ON CONFLICT(experience_id, extractor_version) DO UPDATE SET "
                 "processed_at=excluded.processed_at, run_id=excluded.run_id, llm_mode=excluded.llm_mode, "
                 "counts_json=excluded.counts_json",
                 (r["experience_id"], r["extractor_version"], r["processed_at"], r["run_id"], r["llm_mode"],
                  r["counts_json"]))


def set_current_version(conn: apsw.Connection, experience_id: str, version: str | None) -> None:
    conn.execute("UPDATE experiences SET current_version = ? WHERE experience_id = ?", (version, experience_id))


def record_version(conn: apsw.Connection, version: str, parts_json: str, at: str) -> None:
    conn.execute("INSERT INTO extractor_versions(extractor_version, parts_json, first_seen_at) VALUES (?,?,?) "
                 "ON CONFLICT(extractor_version) DO UPDATE SET rolled_back_at = NULL", (version, parts_json, at))


def versions(conn: apsw.Connection) -> list[dict]:
    return rows(conn, """
        SELECT v.extractor_version, v.first_seen_at, v.rolled_back_at,
               (SELECT COUNT(*) FROM experience_runs r WHERE r.extractor_version = v.extractor_version) AS experiences,
               (SELECT COUNT(*) FROM belief_occurrences o WHERE o.extractor_version = v.extractor_version
                AND o.deleted_at IS NULL) AS occurrences
        FROM extractor_versions v ORDER BY v.first_seen_at, v.extractor_version""")


def version_known(conn: apsw.Connection, version: str) -> bool:
    return bool(scalar(conn, "SELECT 1 FROM extractor_versions WHERE extractor_version = ? UNION "
                             "SELECT 1 FROM belief_occurrences WHERE extractor_version = ? LIMIT 1", (version, version)))


# ---- rollback (seed §6) ------------------------------------------------------------------------------------
def rollback_version(conn: apsw.Connection, version: str, at: str) -> dict[str, Any]:
    """Soft-delete the version's occurrences, forget which experiences it processed, and point each experience at
    the newest remaining version that did. Returns counts and the nodes touched."""
    touched = [r[0] for r in conn.execute("SELECT DISTINCT belief_id FROM belief_occurrences WHERE "
                                          "extractor_version = ? AND deleted_at IS NULL", (version,))]
    conn.execute("UPDATE belief_occurrences SET deleted_at = ? WHERE extractor_version = ? AND deleted_at IS NULL",
                 (at, version))
    n_occ = conn.changes()
    exps = [r[0] for r in conn.execute("SELECT experience_id FROM experience_runs WHERE extractor_version = ?",
                                       (version,))]
    conn.execute("DELETE FROM experience_runs WHERE extractor_version = ?", (version,))
    for e in exps:
        latest = scalar(conn, "SELECT extractor_version FROM experience_runs WHERE experience_id = ? "
                              "ORDER BY processed_at DESC, extractor_version DESC LIMIT 1", (e,))
        conn.execute("UPDATE experiences SET current_version = ? WHERE experience_id = ?", (latest, e))
    conn.execute("UPDATE extractor_versions SET rolled_back_at = ? WHERE extractor_version = ?", (at, version))
    return {"occurrences_deleted": n_occ, "experiences_reset": len(exps), "nodes": touched}


# ---- nodes ---------------------------------------------------------------------------------------------------
def node_by_key(conn: apsw.Connection, canonical_hash: str, polarity: str) -> dict | None:
    return row(conn, f"SELECT {_NODE_SELECT} FROM belief_nodes n WHERE n.canonical_hash = ? AND n.polarity = ?",
               (canonical_hash, polarity))


def nodes_by_hash(conn: apsw.Connection, canonical_hash: str) -> list[dict]:
    return rows(conn, f"SELECT {_NODE_SELECT} FROM belief_nodes n WHERE n.canonical_hash = ?", (canonical_hash,))


def nodes_by_ids(conn: apsw.Connection, ids: Sequence[str], with_embedding: bool = False) -> dict[str, dict]:
    cols = "n.*" if with_embedding else _NODE_SELECT
    out: dict[str, dict] = {}
    for chunk in chunks(list(dict.fromkeys(ids))):
        for r in rows(conn, f"SELECT {cols} FROM belief_nodes n WHERE n.belief_id IN ({marks(len(chunk))})", chunk):
            out[r["belief_id"]] = r
    return out


def find_nodes(conn: apsw.Connection, prefix: str) -> list[dict]:
    """Nodes whose id starts with ``prefix`` (what people type from `self list`)."""
    return rows(conn, f"SELECT {_NODE_SELECT} FROM belief_nodes n WHERE n.belief_id LIKE ? || '%' ORDER BY n.belief_id "
                      "LIMIT 5", (prefix,))


def insert_node(conn: apsw.Connection, n: dict) -> None:
    """Raises ``apsw.ConstraintError`` when the (canonical_hash, polarity) — or the id — already exists."""
    cols = [c for c in NODE_COLUMNS if c in n]
    conn.execute(insert_sql("belief_nodes", cols), tuple(n[c] for c in cols))


def update_node(conn: apsw.Connection, belief_id: str, values: dict) -> None:
    update_row(conn, "belief_nodes", "belief_id", belief_id, values)


def nodes_for_text_scan(conn: apsw.Connection, polarity: str | None, limit: int) -> list[tuple[str, str]]:
    """(belief_id, canonical_text) of live nodes, for the text-similarity fallback (§4.9)."""
    where = "merged_into_belief_id IS NULL" + (" AND polarity = ?" if polarity else "")
    params: tuple = (polarity, limit) if polarity else (limit,)
    return [(r[0], r[1]) for r in conn.execute(f"SELECT belief_id, canonical_text FROM belief_nodes WHERE {where} "
                                               "ORDER BY belief_id LIMIT ?", params)]


def count_nodes(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM belief_nodes"))


def scored_node_ids(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT belief_id FROM belief_nodes WHERE merged_into_belief_id IS NULL "
                                       "ORDER BY belief_id")]


def write_scores(conn: apsw.Connection, scores: Sequence[dict]) -> None:
    conn.executemany("UPDATE belief_nodes SET activation = :activation, core_score = :core_score, status = :status, "
                     "conflict_count = :conflict_count, score_json = :score_json, scored_at = :scored_at "
                     "WHERE belief_id = :belief_id", scores)


# ---- occurrences -------------------------------------------------------------------------------------------
def upsert_occurrence(conn: apsw.Connection, o: dict) -> bool:
    """Insert, or refresh (and un-delete) the occurrence of the same (belief, experience, version). True = new."""
    exists = scalar(conn, "SELECT 1 FROM belief_occurrences WHERE occurrence_id = ?", (o["occurrence_id"],))
    if exists is None:
        conn.execute(insert_sql("belief_occurrences", OCCURRENCE_COLUMNS), tuple(o[c] for c in OCCURRENCE_COLUMNS))
        return True
    cols = [c for c in OCCURRENCE_COLUMNS if c not in ("occurrence_id", "created_at")]
    conn.execute(update_sql("belief_occurrences", "occurrence_id", cols),
                 (*(o[c] for c in cols), o["occurrence_id"]))
    return False


_LIVE = ("o.deleted_at IS NULL AND o.extractor_version = e.current_version AND e.retired_at IS NULL")


def live_occurrences(conn: apsw.Connection, belief_ids: Sequence[str]) -> dict[str, list[dict]]:
    """Each node's evidence that counts: not deleted, from the version its experience currently uses."""
    out: dict[str, list[dict]] = {b: [] for b in belief_ids}
    for chunk in chunks(list(dict.fromkeys(belief_ids))):
        for r in rows(conn, f"""
                SELECT o.*, e.conversation_id FROM belief_occurrences o
                JOIN experiences e ON e.experience_id = o.source_experience_id
                WHERE o.belief_id IN ({marks(len(chunk))}) AND {_LIVE}
                ORDER BY COALESCE(o.occurred_at, o.created_at), o.occurrence_id""", chunk):
            out[r["belief_id"]].append(r)
    return out


def occurrence_stats(conn: apsw.Connection, belief_ids: Sequence[str]) -> dict[str, dict]:
    """Per node: live occurrence count, first/last said time (for lists): from dated occurrences only (an undated
    one's row time is the import's, not when it was said; P36)."""
    out: dict[str, dict] = {}
    for chunk in chunks(list(dict.fromkeys(belief_ids))):
        for r in rows(conn, f"""
                SELECT o.belief_id, COUNT(*) AS n, MIN(o.occurred_at) AS first_at,
                       MAX(o.occurred_at) AS last_at
                FROM belief_occurrences o JOIN experiences e ON e.experience_id = o.source_experience_id
                WHERE o.belief_id IN ({marks(len(chunk))}) AND {_LIVE} GROUP BY o.belief_id""", chunk):
            out[r["belief_id"]] = r
    return out


def all_occurrences(conn: apsw.Connection, belief_ids: Sequence[str]) -> dict[str, list[dict]]:
    """Every occurrence, deleted ones included (the ledger keeps their quotes as history)."""
    out: dict[str, list[dict]] = {b: [] for b in belief_ids}
    for chunk in chunks(list(dict.fromkeys(belief_ids))):
        for r in rows(conn, f"SELECT o.*, e.conversation_id FROM belief_occurrences o JOIN experiences e ON "
                            f"e.experience_id = o.source_experience_id WHERE o.belief_id IN ({marks(len(chunk))}) "
                            "ORDER BY COALESCE(o.occurred_at, o.created_at), o.occurrence_id", chunk):
            out[r["belief_id"]].append(r)
    return out


def occurrences_of_experience(conn: apsw.Connection, experience_id: str) -> list[dict]:
    return rows(conn, f"SELECT o.* FROM belief_occurrences o JOIN experiences e ON e.experience_id = "
                      f"o.source_experience_id WHERE o.source_experience_id = ? AND {_LIVE} ORDER BY o.occurrence_id",
                (experience_id,))


def repoint_occurrences(conn: apsw.Connection, from_id: str, to_id: str, at: str) -> tuple[int, int]:
    """Merge: move ``from_id``'s occurrences to ``to_id``; where ``to_id`` already has one for the same
    (experience, version) the moved one is soft-deleted instead. Returns (moved, folded)."""
    moved = folded = 0
    for r in rows(conn, "SELECT occurrence_id, source_experience_id, extractor_version FROM belief_occurrences "
                        "WHERE belief_id = ?", (from_id,)):
        clash = scalar(conn, "SELECT 1 FROM belief_occurrences WHERE belief_id = ? AND source_experience_id = ? AND "
                             "extractor_version = ?", (to_id, r["source_experience_id"], r["extractor_version"]))
        if clash:
            conn.execute("UPDATE belief_occurrences SET deleted_at = COALESCE(deleted_at, ?) WHERE occurrence_id = ?",
                         (at, r["occurrence_id"]))
            folded += 1
        else:
            conn.execute("UPDATE belief_occurrences SET belief_id = ? WHERE occurrence_id = ?", (to_id, r["occurrence_id"]))
            moved += 1
    return moved, folded


def experience_atoms(conn: apsw.Connection, experience_ids: Sequence[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for chunk in chunks(list(experience_ids)):
        for r in rows(conn, f"""
                SELECT o.source_experience_id, n.canonical_text, n.belief_type, n.polarity, o.epistemic_frame, o.raw_text
                FROM belief_occurrences o JOIN belief_nodes n ON n.belief_id = o.belief_id
                JOIN experiences e ON e.experience_id = o.source_experience_id
                WHERE o.source_experience_id IN ({marks(len(chunk))}) AND {_LIVE}
                ORDER BY o.source_experience_id, o.occurrence_id""", chunk):
            out.setdefault(r["source_experience_id"], []).append(r)
    return out


def experiences_for_export(conn: apsw.Connection) -> list[dict]:
    return rows(conn, """SELECT e.experience_id, e.message_id, e.occurred_at, e.text_start, e.text_end,
                                e.selected_reason_json, e.metadata_json, e.source_kind, e.context_kind, m.text_raw
                         FROM experiences e JOIN messages m ON m.message_id = e.message_id
                         WHERE e.retired_at IS NULL ORDER BY e.experience_id""")


# ---- tentative links ---------------------------------------------------------------------------------------
def get_link(conn: apsw.Connection, a: str, b: str) -> dict | None:
    lo, hi = (a, b) if a < b else (b, a)
    return row(conn, "SELECT * FROM tentative_links WHERE from_belief_id = ? AND to_belief_id = ?", (lo, hi))


def links_between(conn: apsw.Connection, a: str, others: Sequence[str]) -> dict[str, dict]:
    """``{other: link}`` for the links between ``a`` and each of ``others`` that exist (one query per chunk)."""
    out: dict[str, dict] = {}
    for chunk in chunks([o for o in dict.fromkeys(others) if o != a]):
        q = marks(len(chunk))
        for r in rows(conn, f"SELECT * FROM tentative_links WHERE (from_belief_id = ? AND to_belief_id IN ({q})) "
                            f"OR (to_belief_id = ? AND from_belief_id IN ({q}))", (a, *chunk, a, *chunk)):
            out[r["to_belief_id"] if r["from_belief_id"] == a else r["from_belief_id"]] = r
    return out


def get_link_by_id(conn: apsw.Connection, link_id: str) -> dict | None:
    return unique_by_prefix(conn, "tentative_links", "link_id", link_id)


def insert_link(conn: apsw.Connection, link: dict) -> None:
    conn.execute(insert_sql("tentative_links", LINK_COLUMNS), tuple(link.get(c) for c in LINK_COLUMNS))


def update_link(conn: apsw.Connection, link_id: str, values: dict) -> None:
    update_row(conn, "tentative_links", "link_id", link_id, values)


def links_of(conn: apsw.Connection, belief_id: str, statuses: Iterable[str] = ("pending",)) -> list[dict]:
    st = list(statuses)
    return rows(conn, f"SELECT * FROM tentative_links WHERE (from_belief_id = ? OR to_belief_id = ?) AND status IN "
                      f"({marks(len(st))}) ORDER BY link_id", (belief_id, belief_id, *st))


def list_links(conn: apsw.Connection, statuses: Sequence[str]) -> list[dict]:
    return rows(conn, f"SELECT * FROM tentative_links WHERE status IN ({marks(len(statuses))}) "
                      "ORDER BY confidence DESC, link_id", tuple(statuses))


def delete_link(conn: apsw.Connection, link_id: str) -> None:
    conn.execute("DELETE FROM tentative_links WHERE link_id = ?", (link_id,))


# ---- conflict edges ----------------------------------------------------------------------------------------
def get_edge(conn: apsw.Connection, a: str, b: str) -> dict | None:
    lo, hi = (a, b) if a < b else (b, a)
    return row(conn, "SELECT * FROM conflict_edges WHERE node_a_id = ? AND node_b_id = ?", (lo, hi))


def get_edge_by_id(conn: apsw.Connection, edge_id: str) -> dict | None:
    return unique_by_prefix(conn, "conflict_edges", "edge_id", edge_id)


def insert_edge(conn: apsw.Connection, e: dict) -> None:
    conn.execute(insert_sql("conflict_edges", EDGE_COLUMNS), tuple(e.get(c) for c in EDGE_COLUMNS))


def update_edge(conn: apsw.Connection, edge_id: str, values: dict) -> None:
    update_row(conn, "conflict_edges", "edge_id", edge_id, values)


def edges_of(conn: apsw.Connection, belief_ids: Sequence[str], status: str | None = "active") -> list[dict]:
    out: dict[str, dict] = {}
    for chunk in chunks(list(dict.fromkeys(belief_ids))):
        st = " AND status = ?" if status else ""
        params = (*chunk, *chunk, *((status,) if status else ()))
        for r in rows(conn, f"SELECT * FROM conflict_edges WHERE (node_a_id IN ({marks(len(chunk))}) OR node_b_id IN "
                            f"({marks(len(chunk))})){st} ORDER BY edge_id", params):
            out[r["edge_id"]] = r
    return list(out.values())


def list_edges(conn: apsw.Connection, statuses: Sequence[str]) -> list[dict]:
    return rows(conn, f"SELECT * FROM conflict_edges WHERE status IN ({marks(len(statuses))}) "
                      "ORDER BY COALESCE(observed_at, created_at) DESC, edge_id", tuple(statuses))


def delete_edge(conn: apsw.Connection, edge_id: str) -> None:
    conn.execute("DELETE FROM conflict_edges WHERE edge_id = ?", (edge_id,))


def active_conflict_counts(conn: apsw.Connection, belief_ids: Sequence[str], since: str | None = None
                           ) -> dict[str, int]:
    """Active edges per node (all of them, or those observed at/after ``since``)."""
    out = {b: 0 for b in belief_ids}
    for e in edges_of(conn, belief_ids, "active"):
        if since is not None and (e["observed_at"] or e["created_at"]) < since:
            continue
        for b in (e["node_a_id"], e["node_b_id"]):
            if b in out:
                out[b] += 1
    return out


# ---- stream assignments ------------------------------------------------------------------------------------
def get_assignment(conn: apsw.Connection, belief_id: str) -> dict | None:
    return row(conn, "SELECT * FROM stream_assignments WHERE belief_id = ?", (belief_id,))


def assignments_of(conn: apsw.Connection, belief_ids: Sequence[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for chunk in chunks(list(dict.fromkeys(belief_ids))):
        for r in rows(conn, f"SELECT * FROM stream_assignments WHERE belief_id IN ({marks(len(chunk))})", chunk):
            out[r["belief_id"]] = r
    return out


def insert_assignment(conn: apsw.Connection, a: dict) -> None:
    conn.execute(insert_sql("stream_assignments", ASSIGNMENT_COLUMNS), tuple(a.get(c) for c in ASSIGNMENT_COLUMNS))


def update_assignment(conn: apsw.Connection, belief_id: str, values: dict) -> None:
    update_row(conn, "stream_assignments", "belief_id", belief_id, values)


# ---- surfacing (seed §8.2) ---------------------------------------------------------------------------------
SURFACE_ORDER = {
    "activation": "bn.activation DESC, bn.core_score DESC, bn.belief_id",
    "core": "bn.core_score DESC, bn.activation DESC, bn.belief_id",
    "evidence": "(SELECT COUNT(*) FROM belief_occurrences o JOIN experiences e ON e.experience_id = "
                f"o.source_experience_id WHERE o.belief_id = bn.belief_id AND {_LIVE}) DESC, bn.activation DESC, "
                "bn.belief_id",
}


def surface(conn: apsw.Connection, *, stream: str | None, status: str | None, limit: int,
            include_inactive: bool = False, order: str = "activation") -> list[dict]:
    """§8.2: nodes joined with their stream assignment, filtered by stream / status, most active first (or by
    core score, or by how often they were said)."""
    where = ["1=1"]
    params: list[Any] = []
    if stream:
        where.append("sa.primary_stream = ?")
        params.append(stream)
    if status:
        where.append("bn.status = ?")
        params.append(status)
    if not include_inactive:
        where.append("bn.merged_into_belief_id IS NULL AND bn.superseded_at IS NULL")
        where.append("EXISTS (SELECT 1 FROM belief_occurrences o JOIN experiences e ON e.experience_id = "
                     f"o.source_experience_id WHERE o.belief_id = bn.belief_id AND {_LIVE})")
    params.append(limit)
    cols = ", ".join(f"bn.{c}" for c in NODE_COLUMNS if c != "embedding")
    return rows(conn, f"""
        SELECT {cols}, sa.primary_stream, sa.secondary_stream, sa.confidence AS stream_confidence,
               sa.migrated_from, sa.migrated_at
        FROM belief_nodes bn
        JOIN stream_assignments sa ON bn.belief_id = sa.belief_id
        WHERE {' AND '.join(where)}
        ORDER BY {SURFACE_ORDER[order]}
        LIMIT ?""", params)


def table_counts(conn: apsw.Connection) -> dict[str, int]:
    out = {}
    for t in ("experiences", "belief_nodes", "belief_occurrences", "tentative_links", "conflict_edges",
              "stream_assignments"):
        out[t] = int(scalar(conn, f"SELECT COUNT(*) FROM {t}"))
    return out


def message_text(conn: apsw.Connection, message_id: str) -> str | None:
    return scalar(conn, "SELECT text_raw FROM messages WHERE message_id = ?", (message_id,))


def message_texts(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for chunk in chunks(list(dict.fromkeys(message_ids))):
        for r in rows(conn, f"SELECT m.message_id, m.conversation_id, m.text_raw, m.created_at_utc, c.title "
                            f"FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id "
                            f"WHERE m.message_id IN ({marks(len(chunk))})", chunk):
            out[r["message_id"]] = r
    return out
