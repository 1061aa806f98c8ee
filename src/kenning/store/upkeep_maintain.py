"""All SQL of the nightly upkeep (seed 003 §42, §42A.5–6, §3.6): generations and steps of the maintain DAG, the
queues, the merge map, fold verdicts, patterns and motifs, and the read-only aggregates cleanup, hygiene and
health need. Node and edge rows are never written here — that is the single writer's job."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import apsw

from kenning.store.connection import row, rows, scalar
from kenning.store.knowledge import EDGE_COLS, from_json, to_json

_ACTIVE_EDGE = "end_date IS NULL AND COALESCE(lifecycle_state, 'active') = 'active'"


# ---- generations and steps ---------------------------------------------------------------------------------

def latest_generation(conn: apsw.Connection) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM maintain_runs ORDER BY generation DESC LIMIT 1")


def last_finished_generation(conn: apsw.Connection) -> dict[str, Any] | None:
    r = row(conn, "SELECT * FROM maintain_runs WHERE status='ok' ORDER BY generation DESC LIMIT 1")
    if r:
        r["receipt"] = from_json(r["receipt"])
    return r


def insert_generation(conn: apsw.Connection, started_at: str, now: str) -> int:
    conn.execute("INSERT INTO maintain_runs(started_at, now, status) VALUES (?, ?, 'running')", (started_at, now))
    return conn.last_insert_rowid()


def set_generation_status(conn: apsw.Connection, generation: int, status: str, *, finished_at: str | None = None,
                          receipt: dict[str, Any] | None = None) -> None:
    conn.execute("UPDATE maintain_runs SET status=?, finished_at=COALESCE(?, finished_at), "
                 "receipt=COALESCE(?, receipt) WHERE generation=?",
                 (status, finished_at, to_json(receipt) if receipt is not None else None, generation))


def steps_of(conn: apsw.Connection, generation: int) -> dict[str, dict[str, Any]]:
    out = {}
    for r in rows(conn, "SELECT * FROM maintain_steps WHERE generation=?", (generation,)):
        r["counts"] = from_json(r["counts"])
        out[r["step"]] = r
    return out


def put_step(conn: apsw.Connection, generation: int, step: str, status: str, *, high_water: str | None,
             counts: dict[str, Any] | None, finished_at: str, error: str | None = None) -> None:
    conn.execute("INSERT INTO maintain_steps(generation, step, status, high_water, counts, finished_at, error) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(generation, step) DO UPDATE SET status=excluded.status, "
                 "high_water=excluded.high_water, counts=excluded.counts, finished_at=excluded.finished_at, "
                 "error=excluded.error", (generation, step, status, high_water, to_json(counts), finished_at, error))


def last_high_water(conn: apsw.Connection, step: str) -> str | None:
    return scalar(conn, "SELECT s.high_water FROM maintain_steps s WHERE s.step=? AND s.status='ok' "
                        "ORDER BY s.generation DESC LIMIT 1", (step,))


def state_get(conn: apsw.Connection, key: str) -> str | None:
    return scalar(conn, "SELECT value FROM maintain_state WHERE key=?", (key,))


def state_set(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO maintain_state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                 "value=excluded.value", (key, value))


def archived_between(conn: apsw.Connection, since: str, until: str) -> int:
    """Nodes archived/merged by maintain generations finished in [since, until] (the §3.6 VACUUM trigger)."""
    total = 0
    for (receipt,) in conn.execute("SELECT receipt FROM maintain_runs WHERE status='ok' AND finished_at >= ? "
                                   "AND finished_at <= ?", (since, until)):
        r = from_json(receipt) or {}
        total += int(r.get("archived_node_count", 0)) + int(r.get("merged_node_count", 0))
    return total


# ---- queues ------------------------------------------------------------------------------------------------

def queue_add(conn: apsw.Connection, item: dict[str, Any]) -> bool:
    """Add a queue item unless it is already there (whatever its status); True when it is new."""
    conn.execute("INSERT OR IGNORE INTO maintain_queue(item_id, queue, node_ids, reason, score, detail, status, "
                 "first_seen_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
                 (item["item_id"], item["queue"], to_json(item["node_ids"]), item["reason"], item.get("score", 0.0),
                  to_json(item.get("detail")), item["first_seen_at"]))
    return conn.changes() > 0


def queue_items(conn: apsw.Connection, queue: str | None = None, *, status: str | None = "pending",
                limit: int = 100) -> list[dict[str, Any]]:
    where, params = [], []
    if queue:
        where.append("queue=?")
        params.append(queue)
    if status:
        where.append("status=?")
        params.append(status)
    sql = ("SELECT * FROM maintain_queue" + (f" WHERE {' AND '.join(where)}" if where else "")
           + " ORDER BY queue, score DESC, item_id LIMIT ?")
    out = rows(conn, sql, (*params, limit))
    for r in out:
        r["node_ids"], r["detail"] = from_json(r["node_ids"]), from_json(r["detail"])
    return out


def queue_item_by_prefix(conn: apsw.Connection, queue: str, ref: str) -> list[dict[str, Any]]:
    """Items of ``queue`` whose id is ``ref`` or starts with it (a person types the first characters)."""
    out = rows(conn, "SELECT * FROM maintain_queue WHERE queue=? AND (item_id=? OR item_id LIKE ? ESCAPE '\\') "
                     "ORDER BY item_id LIMIT 2", (queue, ref, ref.replace("%", "\\%").replace("_", "\\_") + "%"))
    for r in out:
        r["node_ids"], r["detail"] = from_json(r["node_ids"]), from_json(r["detail"])
    return out


def set_queue_status(conn: apsw.Connection, item_id: str, status: str) -> None:
    conn.execute("UPDATE maintain_queue SET status=? WHERE item_id=?", (status, item_id))


def queue_total(conn: apsw.Connection, queue: str, status: str = "pending") -> int:
    return int(scalar(conn, "SELECT count(*) FROM maintain_queue WHERE queue=? AND status=?", (queue, status)))


def queue_page(conn: apsw.Connection, queue: str, *, status: str, limit: int, offset: int) -> list[dict[str, Any]]:
    out = rows(conn, "SELECT * FROM maintain_queue WHERE queue=? AND status=? ORDER BY score DESC, item_id "
                     "LIMIT ? OFFSET ?", (queue, status, limit, offset))
    for r in out:
        r["node_ids"], r["detail"] = from_json(r["node_ids"]), from_json(r["detail"])
    return out


def queue_counts(conn: apsw.Connection) -> dict[str, int]:
    return {r["queue"]: r["n"] for r in rows(conn, "SELECT queue, count(*) AS n FROM maintain_queue "
                                                   "WHERE status='pending' GROUP BY queue ORDER BY queue")}


def resolve_queue_items_of(conn: apsw.Connection, node_id: str) -> None:
    """A merged node's pending items (its merge candidates, its orphan flag) are settled by the merge."""
    conn.execute("UPDATE maintain_queue SET status='resolved' WHERE status='pending' AND "
                 "EXISTS (SELECT 1 FROM json_each(maintain_queue.node_ids) WHERE value=?)", (node_id,))


# ---- merge map and fold verdicts ---------------------------------------------------------------------------

def insert_merge(conn: apsw.Connection, old: str, new: str, merged_at: str, commit_id: str) -> None:
    conn.execute("INSERT OR IGNORE INTO node_merge_map(old_node_id, new_node_id, merged_at, merge_commit_id) "
                 "VALUES (?, ?, ?, ?)", (old, new, merged_at, commit_id))


def merge_map(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM node_merge_map ORDER BY merged_at, old_node_id")


def resolve_merged(conn: apsw.Connection, node_id: str) -> str:
    """Follow the merge map to the node that now stands for ``node_id``."""
    seen = {node_id}
    while True:
        nxt = scalar(conn, "SELECT new_node_id FROM node_merge_map WHERE old_node_id=?", (node_id,))
        if nxt is None or nxt in seen:
            return node_id
        seen.add(nxt)
        node_id = nxt


def fold_decision(conn: apsw.Connection, a: str, b: str) -> dict[str, Any] | None:
    return row(conn, "SELECT * FROM fold_decisions WHERE node_a_id=? AND node_b_id=?", (a, b))


def put_fold_decision(conn: apsw.Connection, d: dict[str, Any]) -> None:
    conn.execute("INSERT OR REPLACE INTO fold_decisions(node_a_id, node_b_id, verdict, canonical_name, "
                 "canonical_description, reviewed_by, confidence, decided_at, prompt_version) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (d["node_a_id"], d["node_b_id"], d["verdict"], d.get("canonical_name"),
                  d.get("canonical_description"), d["reviewed_by"], d["confidence"], d["decided_at"],
                  d.get("prompt_version")))


# ---- cleanup reads -----------------------------------------------------------------------------------------

def lifecycle_candidates(conn: apsw.Connection, kinds: Sequence[str], states: Sequence[str]) -> list[dict[str, Any]]:
    """Active nodes of ``kinds`` in a candidate state, with when they entered it (their last promotion, else
    creation) and whether a person vouched for them (never auto-archived)."""
    kq, sq = ",".join("?" * len(kinds)), ",".join("?" * len(states))
    return rows(conn, f"""
        SELECT n.id, n.node_kind, n.lifecycle_state, n.created_at,
               (SELECT max(e.occurred_at) FROM extraction_outcome_events e
                 WHERE e.extracted_item_id = n.id AND e.outcome = 'promoted') AS promoted_at,
               EXISTS (SELECT 1 FROM provenance_entries p WHERE p.node_id = n.id
                        AND p.entry_type IN ('user_confirmation', 'user_correction')) AS user_verified
        FROM nodes n
        WHERE n.is_active = 1 AND n.node_kind IN ({kq}) AND n.lifecycle_state IN ({sq})
        ORDER BY n.id""", (*kinds, *states))


def active_names(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT id, node_kind, canonical_name, lifecycle_state, alpha, beta, created_at, "
                      "json_extract(payload, '$.never_fold') AS never_fold FROM nodes WHERE is_active = 1 "
                      "ORDER BY id")


def payloads_of(conn: apsw.Connection, node_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    ids = sorted(set(node_ids))
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for nid, payload in conn.execute(f"SELECT id, payload FROM nodes WHERE id IN ({','.join('?' * len(chunk))})",
                                         chunk):
            out[nid] = from_json(payload) or {}
    return out


def nodes_updated_since(conn: apsw.Connection, since: str | None, kinds: Sequence[str],
                        limit: int) -> list[dict[str, Any]]:
    kq = ",".join("?" * len(kinds))
    return [{**r, "payload": from_json(r["payload"])} for r in rows(
        conn, f"SELECT id, node_kind, canonical_name, payload FROM nodes WHERE is_active = 1 AND node_kind IN ({kq}) "
              "AND updated_at > ? ORDER BY updated_at DESC, id LIMIT ?", (*kinds, since or "", limit))]


def shared_alias_groups(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Active nodes of one kind that share a normalized alias: (kind, alias, node ids)."""
    out = rows(conn, """
        SELECT n.node_kind, a.normalized_alias, json_group_array(DISTINCT a.node_id) AS node_ids
        FROM aliases a JOIN nodes n ON n.id = a.node_id
        WHERE n.is_active = 1
        GROUP BY n.node_kind, a.normalized_alias
        HAVING count(DISTINCT a.node_id) > 1
        ORDER BY n.node_kind, a.normalized_alias""")
    for r in out:
        r["node_ids"] = sorted(from_json(r["node_ids"]))
    return out


def aliases_by_node(conn: apsw.Connection, node_ids: Iterable[str]) -> dict[str, set[str]]:
    ids = sorted(set(node_ids))
    out: dict[str, set[str]] = {i: set() for i in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for r in conn.execute(f"SELECT node_id, normalized_alias FROM aliases WHERE node_id IN "
                              f"({','.join('?' * len(chunk))})", chunk):
            out[r[0]].add(r[1])
    return out


def context_of(conn: apsw.Connection, node_ids: Iterable[str]) -> dict[str, set[str]]:
    """What surrounds each node: its current edges' other ends ("n:<id>") and the threads it was seen in
    ("t:<thread>") — the shared context that makes a typo pair worth a person's look (G34)."""
    ids = sorted(set(node_ids))
    out: dict[str, set[str]] = {i: set() for i in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        q = ",".join("?" * len(chunk))
        for s, t in conn.execute(f"SELECT source_id, target_id FROM edges WHERE end_date IS NULL AND source_id IN "
                                 f"({q}) UNION ALL SELECT source_id, target_id FROM edges WHERE end_date IS NULL "
                                 f"AND target_id IN ({q})", (*chunk, *chunk)):
            if s in out:
                out[s].add("n:" + t)
            if t in out:
                out[t].add("n:" + s)
        for nid, thread in conn.execute(
                f"SELECT p.node_id, COALESCE(m.conversation_id, json_extract(p.source_metadata, '$.thread_id')) "
                f"FROM provenance_entries p LEFT JOIN messages m ON m.message_id = p.message_id "
                f"WHERE p.node_id IN ({q})", chunk):
            if thread:
                out[nid].add("t:" + thread)
    return out


def contradicted_nodes(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Active nodes whose provenance both supports and contradicts them (§42 conflicting provenance)."""
    return rows(conn, """
        SELECT p.node_id AS id, sum(p.confidence_contribution > 0) AS supporting,
               sum(p.confidence_contribution < 0) AS contradicting
        FROM provenance_entries p JOIN nodes n ON n.id = p.node_id
        WHERE n.is_active = 1
        GROUP BY p.node_id
        HAVING sum(p.confidence_contribution > 0) > 0 AND sum(p.confidence_contribution < 0) > 0
        ORDER BY p.node_id""")


def orphan_nodes(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Active nodes with no current active edge (§42: orphan flag)."""
    return rows(conn, f"""
        SELECT n.id, n.node_kind, n.lifecycle_state, n.created_at FROM nodes n
        WHERE n.is_active = 1
          AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.source_id = n.id AND {_ACTIVE_EDGE})
          AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.target_id = n.id AND {_ACTIVE_EDGE})
        ORDER BY n.id""")


def old_traces(conn: apsw.Connection, before: str) -> list[dict[str, Any]]:
    return rows(conn, "SELECT id, canonical_name, created_at, payload FROM nodes WHERE node_kind = "
                      "'execution_trace' AND is_active = 1 AND created_at < ? ORDER BY created_at, id", (before,))


def stale_procedures(conn: apsw.Connection, verified_before: str, limit: int) -> list[dict[str, Any]]:
    return rows(conn, """
        SELECT id, node_kind, canonical_name, confidence, staleness_state,
               COALESCE(last_verified_at, created_at) AS verified_at
        FROM nodes
        WHERE node_kind IN ('procedure', 'standing_procedure') AND is_active = 1
          AND (staleness_state <> 'fresh' OR COALESCE(last_verified_at, created_at) < ?)
        ORDER BY confidence DESC, verified_at, id LIMIT ?""", (verified_before, limit))


def old_usage_events(conn: apsw.Connection, before: str) -> list[dict[str, Any]]:
    """Experience records holding usage events older than ``before`` in their recent window (§42: UsageEvents
    older than 30 d on non-Tier-A nodes become counters)."""
    return rows(conn, """
        SELECT x.target_node_id AS id, n.node_kind, n.lifecycle_state, json_extract(n.payload, '$.entity_type')
               AS entity_type,
               (SELECT count(*) FROM json_each(x.recent_events) j
                 WHERE json_extract(j.value, '$.used_at') < ?) AS old_events
        FROM experience_records x JOIN nodes n ON n.id = x.target_node_id
        WHERE n.is_active = 1 ORDER BY x.target_node_id""", (before,))


# ---- hygiene reads -----------------------------------------------------------------------------------------

def learned_edges(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Current edges a pipeline learned (payload.learned_by), active or observed (the back-link pipeline promotes
    to ``observed`` unless a person approved): the promoted edges hygiene decays."""
    out = rows(conn, f"SELECT {', '.join(EDGE_COLS)} FROM edges WHERE end_date IS NULL AND "
                     "COALESCE(lifecycle_state, 'active') IN ('active', 'observed') AND "
                     "json_extract(payload, '$.learned_by') IS NOT NULL ORDER BY source_id, relation_type, target_id")
    for r in out:
        r["payload"] = from_json(r["payload"])
    return out


def has_table(conn: apsw.Connection, name: str) -> bool:
    return bool(scalar(conn, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", (name,)))


def table_columns(conn: apsw.Connection, name: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({name})")}


BUNDLES = "evidence_bundles_derived"  # the back-link pipeline's table (migration 0090)


def bundle_support_count(conn: apsw.Connection, bundle_id: str) -> int:
    """A back-link bundle's support count (0 when the vault has no back-link tables or no such bundle)."""
    if not has_table(conn, BUNDLES):
        return 0
    return int(scalar(conn, f"SELECT support_count FROM {BUNDLES} WHERE evidence_bundle_id=?", (bundle_id,)) or 0)


def return_bundle_to_candidate(conn: apsw.Connection, bundle_id: str) -> bool:
    """§42A.6: a demoted edge's evidence bundle goes back to ``candidate_relation`` with its support kept (a
    suppressed bundle stays suppressed). A no-op (False) in a vault without the back-link tables."""
    if not has_table(conn, BUNDLES):
        return False
    conn.execute(f"UPDATE {BUNDLES} SET promotion_state='candidate_relation' WHERE evidence_bundle_id=? AND "
                 "promotion_state NOT IN ('suppressed', 'candidate_relation')", (bundle_id,))
    return conn.changes() > 0


# ---- co-occurrence and motifs ------------------------------------------------------------------------------

def observations(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Where active nodes were seen: one row per (node, message or source), with the thread it belongs to (the
    conversation, else the source), its position there, when, and on which surface."""
    return rows(conn, """
        SELECT DISTINCT p.node_id,
               COALESCE(m.conversation_id, json_extract(p.source_metadata, '$.thread_id'), p.source_ref, p.id)
                 AS thread_id,
               COALESCE(m.order_index, json_extract(p.source_metadata, '$.position'), 0) AS position,
               COALESCE(m.created_at_utc, p.created_at) AS occurred_at,
               COALESCE(json_extract(p.source_metadata, '$.surface'), 'chat') AS surface,
               json_extract(p.source_metadata, '$.work_context_id') AS work_context_id
        FROM provenance_entries p
        JOIN nodes n ON n.id = p.node_id AND n.is_active = 1
        LEFT JOIN messages m ON m.message_id = p.message_id
        WHERE p.entry_type NOT IN ('user_confirmation', 'user_rejection', 'user_correction')
        ORDER BY thread_id, position, p.node_id""")


def node_degrees(conn: apsw.Connection) -> dict[str, int]:
    out: dict[str, int] = {}
    for nid, d in conn.execute(f"""
            SELECT id, count(*) FROM (
              SELECT source_id AS id FROM edges WHERE {_ACTIVE_EDGE}
              UNION ALL SELECT target_id AS id FROM edges WHERE {_ACTIVE_EDGE})
            GROUP BY id"""):
        out[nid] = d
    return out


def upsert_pattern(conn: apsw.Connection, p: dict[str, Any]) -> bool:
    """Insert a pattern, or refresh its counts keeping a person's status; True when something changed."""
    before = row(conn, "SELECT * FROM co_occurrence_patterns WHERE pattern_id=?", (p["pattern_id"],))
    vals = (to_json(p["entity_ids"]), p["co_occurrence_count"], p["distinct_observation_count"],
            to_json(p["surfaces"]), to_json(p["work_context_ids"]), p["temporal_span_days"],
            p["temporal_regularity"], p["regularity_confidence"], p["suggested_procedure_kind"])
    if before is None:
        conn.execute("INSERT INTO co_occurrence_patterns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (p["pattern_id"], *vals, p["status"]))
        return True
    old = (before["entity_ids"], before["co_occurrence_count"], before["distinct_observation_count"],
           before["surfaces"], before["work_context_ids"], before["temporal_span_days"],
           before["temporal_regularity"], before["regularity_confidence"], before["suggested_procedure_kind"])
    if old == vals:
        return False
    conn.execute("UPDATE co_occurrence_patterns SET entity_ids=?, co_occurrence_count=?, "
                 "distinct_observation_count=?, surfaces=?, work_context_ids=?, temporal_span_days=?, "
                 "temporal_regularity=?, regularity_confidence=?, suggested_procedure_kind=? WHERE pattern_id=?",
                 (*vals, p["pattern_id"]))
    return True


def upsert_motif(conn: apsw.Connection, m: dict[str, Any]) -> bool:
    before = row(conn, "SELECT * FROM procedure_motifs WHERE motif_id=?", (m["motif_id"],))
    vals = (to_json(m["steps"]), m["support_count"], m["success_support_count"], m["failure_support_count"],
            m["suggested_node_kind"])
    if before is None:
        conn.execute("INSERT INTO procedure_motifs VALUES (?, ?, ?, ?, ?, ?, ?)", (m["motif_id"], *vals, m["status"]))
        return True
    if (before["steps"], before["support_count"], before["success_support_count"],
            before["failure_support_count"], before["suggested_node_kind"]) == vals:
        return False
    conn.execute("UPDATE procedure_motifs SET steps=?, support_count=?, success_support_count=?, "
                 "failure_support_count=?, suggested_node_kind=? WHERE motif_id=?", (*vals, m["motif_id"]))
    return True


def patterns(conn: apsw.Connection) -> list[dict[str, Any]]:
    out = rows(conn, "SELECT * FROM co_occurrence_patterns ORDER BY distinct_observation_count DESC, pattern_id")
    for r in out:
        for k in ("entity_ids", "surfaces", "work_context_ids"):
            r[k] = from_json(r[k])
    return out


def motifs(conn: apsw.Connection) -> list[dict[str, Any]]:
    out = rows(conn, "SELECT * FROM procedure_motifs ORDER BY support_count DESC, motif_id")
    for r in out:
        r["steps"] = from_json(r["steps"])
    return out


# ---- health ------------------------------------------------------------------------------------------------

def density_counts(conn: apsw.Connection) -> dict[str, Any]:
    return row(conn, f"""
        SELECT (SELECT count(*) FROM nodes WHERE is_active = 1) AS total_nodes,
               (SELECT count(*) FROM edges WHERE {_ACTIVE_EDGE}) AS total_edges,
               (SELECT count(*) FROM edges WHERE {_ACTIVE_EDGE}
                  AND json_extract(payload, '$.learned_by') = 'backlink_pipeline_v2') AS promoted_edges,
               (SELECT count(*) FROM edges WHERE {_ACTIVE_EDGE} AND confidence < ?1) AS weak_edges,
               (SELECT count(*) FROM edges WHERE {_ACTIVE_EDGE}
                  AND (relation_type = 'semantically_related' OR relation_type LIKE 'learned\\_%' ESCAPE '\\'))
                 AS generic_edges,
               (SELECT count(*) FROM edges WHERE {_ACTIVE_EDGE} AND confidence < ?2) AS low_utility_edges,
               (SELECT count(*) FROM provenance_entries WHERE message_id IS NOT NULL) AS provenance_mentions
        """, (0.3, 0.1)) or {}


def scalar_or_none(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    try:
        return scalar(conn, sql, params)
    except apsw.SQLError:
        return None


def node_names(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        for r in rows(conn, f"SELECT id, canonical_name, node_kind FROM nodes WHERE id IN "
                            f"({','.join('?' * len(chunk))})", chunk):
            out[r["id"]] = r
    return out


def debt_inputs(conn: apsw.Connection, since: str, low_confidence: float) -> dict[str, Any]:
    return row(conn, """
        SELECT (SELECT count(*) FROM nodes WHERE is_active = 1) AS active_nodes,
               (SELECT count(*) FROM nodes WHERE is_active = 1 AND lifecycle_state = 'suggested') AS suggested,
               (SELECT count(*) FROM maintain_queue WHERE status = 'pending' AND queue <> 'orphan') AS queued,
               (SELECT count(*) FROM nodes WHERE is_active = 1 AND confidence < ?2) AS low_confidence,
               (SELECT count(*) FROM maintain_queue WHERE status = 'pending' AND queue = 'contradiction')
                 AS contradictions,
               (SELECT count(*) FROM extraction_outcome_events WHERE occurred_at >= ?1
                  AND outcome = 'confirmed') AS confirmed_7d,
               (SELECT count(*) FROM extraction_outcome_events WHERE occurred_at >= ?1
                  AND outcome IN ('rejected', 'corrected')) AS wrong_7d
        """, (since, low_confidence)) or {}


def bundle_support_counts(conn: apsw.Connection) -> list[int]:
    return [r[0] for r in conn.execute(f"SELECT support_count FROM {BUNDLES}")]


def bundle_state_share(conn: apsw.Connection, states: Sequence[str]) -> float | None:
    """The share of evidence bundles in ``states`` (None when there are none)."""
    total = scalar_or_none(conn, f"SELECT count(*) FROM {BUNDLES}")
    n = scalar_or_none(conn, f"SELECT count(*) FROM {BUNDLES} WHERE promotion_state IN ({','.join('?' * len(states))})",
                       tuple(states))
    return round(n / total, 6) if total else None
