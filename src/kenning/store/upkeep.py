"""SQL of the §42A.2 back-link pipeline (issue 20 parts 1–3; ``kenning.upkeep``): the derived tables of migration
0090 and the few node-store reads resolution needs. Writes here touch only the derived tables; nodes and edges
change only through the single writer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import apsw
import orjson

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, digest_key, marks

_MSG_TIME = "coalesce(m.created_at_utc, c.created_at_utc)"
MENTION_COLS = ("mention_id", "observation_id", "source_node_id", "resolved_node_id", "normalized_mention",
                "span_class", "state", "visibility_class", "work_context_id", "surface", "occurred_at",
                "start_offset", "end_offset", "mention_text", "is_nested", "parent_mention_id", "group_id",
                "relation_hypothesis", "resolution_method", "resolution_confidence", "graph_context_score",
                "suppression_reason", "context_window", "polarity", "evidence_bundle_id")
BUNDLE_COLS = ("evidence_bundle_id", "source_node_id", "target_node_id", "relation_type", "support_mention_ids",
               "contradiction_mention_ids", "support_count", "contradiction_count", "distinct_observation_count",
               "distinct_surface_count", "distinct_work_context_count", "visibility_class", "last_supported_at",
               "hub_penalty", "salience_score", "evidence_score", "user_verdict", "promotion_state")
QUEUE_COLS = ("queue_item_id", "item_kind", "primary_ref", "title", "visibility_class", "status", "created_at",
              "description", "evidence_refs", "available_actions", "impact", "uncertainty", "recency", "sort_score")
# Z5: a placed window is read back from its message's text (context_at, context_len: code points into text_raw)
_CONTEXT = ("CASE WHEN d.context_at IS NULL THEN d.context_window ELSE coalesce(substr((SELECT x.text_raw FROM "
            "messages x WHERE x.message_id = d.observation_id), d.context_at + 1, d.context_len), '') END")
_MENTION_SELECT = ", ".join(f"{_CONTEXT} AS context_window" if c == "context_window" else f"d.{c}"
                            for c in MENTION_COLS)
_JSON = ("support_mention_ids", "contradiction_mention_ids", "evidence_refs", "available_actions", "candidate_set",
         "source_observation_ids")


def _dec(r: dict[str, Any] | None) -> dict[str, Any] | None:
    if r is None:
        return None
    for k in _JSON:
        if k in r and isinstance(r[k], str):
            r[k] = orjson.loads(r[k])
    return r


def _enc(v: Any) -> Any:
    return orjson.dumps(v).decode() if isinstance(v, (list, dict)) else v


# ---- state ---------------------------------------------------------------------------------------------------

def state_get(conn: apsw.Connection, key: str) -> str | None:
    return scalar(conn, "SELECT value FROM backlink_state WHERE key=?", (key,))


def state_set(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO backlink_state(key, value) VALUES (?,?) ON CONFLICT(key) DO UPDATE SET "
                 "value=excluded.value", (key, value))


# ---- observations (messages) ---------------------------------------------------------------------------------

def pending_observations(conn: apsw.Connection, limit: int, skip_json: str = "[]") -> list[dict[str, Any]]:
    """Messages with text that Stage 1 has not scanned yet, in the pipeline's stable order: what people and the
    assistant said (system and tool messages name nothing of the owner's; the owner's custom instructions, hidden
    in the export, are their own words and stay in). Conversations in ``skip_json`` (a JSON array: incognito,
    I70) are passed over and stay unscanned."""
    return rows(conn, f"SELECT m.message_id, m.conversation_id, m.role, {_MSG_TIME} AS occurred_at, m.text_raw, "
                      "m.code_fence_ranges_json, c.source_kind FROM messages m JOIN conversations c ON c.conversation_id=m.conversation_id "
                      "LEFT JOIN backlink_observations b ON b.observation_id=m.message_id "
                      "WHERE b.observation_id IS NULL AND m.text_raw IS NOT NULL AND m.text_raw<>'' "
                      "AND m.role IN ('user','assistant','unknown') "
                      "AND m.conversation_id NOT IN (SELECT value FROM json_each(?)) "
                      "ORDER BY m.conversation_id, m.order_index, m.message_id LIMIT ?", (skip_json, limit))


def mark_observations(conn: apsw.Connection, marks_: Iterable[tuple[str, str, int]]) -> None:
    conn.executemany("INSERT OR REPLACE INTO backlink_observations(observation_id, input_hash, degraded) "
                     "VALUES (?,?,?)", [(o, digest_key(h), d) for o, h, d in marks_])


def scanned_hashes(conn: apsw.Connection, hashes: Sequence[str]) -> set[str]:
    """Which of these hex digests (of texts) were scanned before: the digests as given."""
    by_key = {digest_key(h): h for h in hashes}
    out: set[str] = set()
    for part in chunks(sorted(by_key)):
        out |= {by_key[r[0]] for r in conn.execute(f"SELECT input_hash FROM backlink_observations WHERE input_hash "
                                                   f"IN ({marks(len(part))})", part)}
    return out


def entity_spans(conn: apsw.Connection, message_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Stage 2A/3 mentions resolved to an active entity, with the entity's type."""
    out: list[dict[str, Any]] = []
    for part in chunks(list(message_ids)):
        out += rows(conn, "SELECT em.message_id, em.entity_id, em.char_start, em.char_end, em.surface_text, "
                          "e.entity_type FROM entity_mentions em JOIN entities e ON e.entity_id=em.entity_id "
                          f"WHERE em.message_id IN ({marks(len(part))}) AND em.char_start IS NOT NULL "
                          "AND e.status='active' ORDER BY em.message_id, em.char_start, em.char_end", part)
    return out


def participants(conn: apsw.Connection, conversation_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in chunks(sorted(set(conversation_ids))):
        for r in rows(conn, "SELECT DISTINCT conversation_id, author_name FROM messages WHERE author_name IS NOT "
                            f"NULL AND conversation_id IN ({marks(len(part))}) ORDER BY 1, 2", part):
            out.setdefault(r["conversation_id"], []).append(r["author_name"])
    return out


# ---- node store reads ------------------------------------------------------------------------------------------

def entity_nodes(conn: apsw.Connection) -> dict[str, str]:
    """Kenning entity id → its active world_entity node (the bridge's K60 link)."""
    return {r["eid"]: r["id"] for r in rows(
        conn, "SELECT id, json_extract(payload, '$.kenning_entity_id') AS eid FROM nodes WHERE "
              "node_kind='world_entity' AND is_active=1 AND lifecycle_state NOT IN ('retracted','archived','merged') "
              "AND json_extract(payload, '$.kenning_entity_id') IS NOT NULL ORDER BY id")}


def owner_node(conn: apsw.Connection) -> str | None:
    return scalar(conn, "SELECT id FROM nodes WHERE node_kind='world_entity' AND is_active=1 AND "
                        "json_extract(payload, '$.is_vault_owner') ORDER BY id LIMIT 1")


def node_facts(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for part in chunks(sorted(set(ids))):
        for r in rows(conn, "SELECT id, node_kind, canonical_name, updated_at, confidence, alpha, beta, "
                            "json_extract(payload, '$.scope') AS scope, is_active, lifecycle_state "
                            f"FROM nodes WHERE id IN ({marks(len(part))})", part):
            out[r["id"]] = r
    return out


def alias_exact(conn: apsw.Connection, forms: Sequence[str], limit: int,
                kinds: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """§42A.2.8 Pass A against aliases.normalized_alias."""
    kind = f" AND n.node_kind IN ({marks(len(kinds))})" if kinds else ""
    return rows(conn, "SELECT DISTINCT n.id, n.canonical_name, a.alias_type, a.normalized_alias FROM aliases a "
                      "JOIN nodes n ON a.node_id=n.id WHERE n.is_active=1 AND n.lifecycle_state NOT IN "
                      f"('retracted','archived','merged') AND a.normalized_alias IN ({marks(len(forms))}){kind} "
                      f"ORDER BY n.id LIMIT {int(limit)}", [*forms, *(kinds or [])])


def alias_known(conn: apsw.Connection, normalized: str, kinds: Sequence[str]) -> bool:
    return scalar(conn, "SELECT 1 FROM aliases a JOIN nodes n ON n.id=a.node_id WHERE a.normalized_alias=? AND "
                        f"n.is_active=1 AND n.node_kind IN ({marks(len(kinds))}) LIMIT 1",
                  [normalized, *kinds]) is not None


def fts_candidates(conn: apsw.Connection, match: str, limit: int,
                   kinds: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """§42A.2.8 Pass B: bm25 over fts_nodes (lower rank = better)."""
    kind = f" AND n.node_kind IN ({marks(len(kinds))})" if kinds else ""
    try:
        return rows(conn, "SELECT n.id, n.canonical_name, bm25(fts_nodes) AS rank FROM fts_nodes JOIN nodes n ON "
                          "fts_nodes.rowid=n.rowid WHERE fts_nodes MATCH ? AND n.is_active=1 AND n.lifecycle_state "
                          f"NOT IN ('retracted','archived','merged'){kind} ORDER BY rank, n.id LIMIT ?",
                    [match, *(kinds or []), limit])
    except apsw.SQLError:
        return []


def node_aliases(conn: apsw.Connection, node_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in chunks(sorted(set(node_ids))):
        for r in rows(conn, f"SELECT node_id, normalized_alias FROM aliases WHERE node_id IN ({marks(len(part))}) "
                            "ORDER BY node_id, normalized_alias", part):
            out.setdefault(r["node_id"], []).append(r["normalized_alias"])
    return out


def edge_between(conn: apsw.Connection, a: str, b: str) -> bool:
    return scalar(conn, "SELECT 1 FROM edges WHERE end_date IS NULL AND ((source_id=?1 AND target_id=?2) OR "
                        "(source_id=?2 AND target_id=?1)) LIMIT 1", (a, b)) is not None


def prior_evidence(conn: apsw.Connection, candidate: str, anchors: Sequence[str], min_conf: float) -> tuple[float, int]:
    """§42A.2.9 term 2: Σ confidence and distinct learned_by of current edges between the candidate and anchors."""
    if not anchors:
        return 0.0, 0
    r = row(conn, "SELECT SUM(confidence) AS w, COUNT(DISTINCT json_extract(payload, '$.learned_by')) AS d "
                  f"FROM edges WHERE end_date IS NULL AND confidence > ? AND ((source_id=? AND target_id IN "
                  f"({marks(len(anchors))})) OR (target_id=? AND source_id IN ({marks(len(anchors))})))",
            [min_conf, candidate, *anchors, candidate, *anchors])
    return float((r or {}).get("w") or 0.0), int((r or {}).get("d") or 0)


def degree(conn: apsw.Connection, node_id: str) -> int:
    """§42A.2.4 hub degree: the node's current edges (ended history does not make a hub)."""
    return int(scalar(conn, "SELECT (SELECT count(*) FROM edges WHERE source_id=?1 AND end_date IS NULL) + "
                            "(SELECT count(*) FROM edges WHERE target_id=?1 AND end_date IS NULL)", (node_id,)))


def current_edge(conn: apsw.Connection, src: str, rel: str, tgt: str) -> dict[str, Any] | None:
    r = row(conn, "SELECT source_id, target_id, relation_type, confidence, lifecycle_state, start_date, payload "
                  "FROM edges WHERE source_id=? AND relation_type=? AND target_id=? AND end_date IS NULL",
            (src, rel, tgt))
    if r and r["payload"]:
        r["payload"] = orjson.loads(r["payload"])
    return r


def retracted_bundle_edge(conn: apsw.Connection, src: str, rel: str, tgt: str) -> bool:
    """A promoted edge a person rolled back (lifecycle retracted): the pipeline must not promote it again."""
    return scalar(conn, "SELECT 1 FROM edges WHERE source_id=? AND relation_type=? AND target_id=? AND "
                        "lifecycle_state='retracted' AND json_extract(payload, '$.learned_by')='backlink_pipeline_v2' "
                        "LIMIT 1", (src, rel, tgt)) is not None


def promoted_edges(conn: apsw.Connection) -> list[dict[str, Any]]:
    out = rows(conn, "SELECT source_id, target_id, relation_type, confidence, lifecycle_state, start_date, payload "
                     "FROM edges WHERE end_date IS NULL AND json_extract(payload, '$.learned_by')="
                     "'backlink_pipeline_v2' ORDER BY source_id, relation_type, target_id")
    for r in out:
        r["payload"] = orjson.loads(r["payload"])
    return out


def review_provenance(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every review verdict the node store holds (entry_type backlink_review), in the order they were recorded —
    the canonical record the derived verdicts, rejections and suppressions are rebuilt from (G15)."""
    out = rows(conn, "SELECT node_id, source_ref, correction_reason, source_metadata, created_at FROM "
                     "provenance_entries WHERE entry_type='backlink_review' ORDER BY rowid")
    for r in out:
        r["source_metadata"] = orjson.loads(r["source_metadata"]) if r["source_metadata"] else {}
    return out


# ---- mentions --------------------------------------------------------------------------------------------------

def _placed(r: dict[str, Any], texts: dict[str, str]) -> tuple[Any, ...]:
    """A mention's values with its context window placed in its message's text where it lies there verbatim (Z5:
    context_at, context_len; the column then holds ''); else the window stays literal."""
    text, w = texts.get(r.get("observation_id") or ""), r.get("context_window") or ""
    at = text.find(w) if w and text and "\x00" not in text else -1
    if at < 0:
        return (*(r.get(c) for c in MENTION_COLS), None, None)
    return (*("" if c == "context_window" else r.get(c) for c in MENTION_COLS), at, len(w))


def insert_mentions(conn: apsw.Connection, mention_rows: Sequence[dict[str, Any]],
                    texts: dict[str, str] | None = None) -> int:
    """INSERT OR IGNORE on mention_id (§42A.2.3 NP02); returns how many were new. ``texts``: observation id → the
    message's ``text_raw`` the windows were cut from (Z5)."""
    start = conn.total_changes()
    conn.executemany(f"INSERT OR IGNORE INTO mention_observations_derived({', '.join(MENTION_COLS)}, context_at, "
                     f"context_len) VALUES ({marks(len(MENTION_COLS) + 2)})",
                     [_placed(r, texts or {}) for r in mention_rows])
    return conn.total_changes() - start


def max_append_seq(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT coalesce(max(append_seq), 0) FROM mention_observations_derived"))


def bundles_touched_after(conn: apsw.Connection, seq: int) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT evidence_bundle_id FROM mention_observations_derived WHERE "
                                       "append_seq > ? AND evidence_bundle_id IS NOT NULL ORDER BY 1", (seq,))]


def all_bundle_ids_in_mentions(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT evidence_bundle_id FROM mention_observations_derived "
                                       "WHERE evidence_bundle_id IS NOT NULL ORDER BY 1")]


def mentions_of_bundles(conn: apsw.Connection, bundle_ids: Sequence[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in chunks(list(bundle_ids)):
        out += rows(conn, f"SELECT d.append_seq, {_MENTION_SELECT} FROM mention_observations_derived d WHERE "
                          f"d.evidence_bundle_id IN ({marks(len(part))}) ORDER BY d.append_seq", part)
    return out


def get_mention(conn: apsw.Connection, mention_id: str) -> dict[str, Any] | None:
    return row(conn, f"SELECT d.append_seq, {_MENTION_SELECT} FROM mention_observations_derived d WHERE "
                     "d.mention_id=?", (mention_id,))


def first_mention(conn: apsw.Connection, mention_id: str) -> dict[str, Any] | None:
    return row(conn, "SELECT mention_id, resolution_method, graph_context_score FROM mention_observations_derived "
                     "WHERE mention_id=? LIMIT 1", (mention_id,))


def retarget_mention(conn: apsw.Connection, mention_id: str, target: str, relation: str, bundle: str) -> None:
    """A person's retarget (§42A.2.16): resolved_node_id is the mutable field; identity stays."""
    conn.execute("UPDATE mention_observations_derived SET resolved_node_id=?, relation_hypothesis=?, "
                 "evidence_bundle_id=?, resolution_method='user_corrected', state='user_verified' WHERE mention_id=?",
                 (target, relation, bundle, mention_id))


def rekey_bundle_mentions(conn: apsw.Connection, old_bundle: str, relation: str, new_bundle: str) -> list[str]:
    ids = [r[0] for r in conn.execute("SELECT mention_id FROM mention_observations_derived WHERE "
                                      "evidence_bundle_id=?", (old_bundle,))]
    conn.execute("UPDATE mention_observations_derived SET relation_hypothesis=?, evidence_bundle_id=? WHERE "
                 "evidence_bundle_id=?", (relation, new_bundle, old_bundle))
    return ids


def suppress_mentions(conn: apsw.Connection, normalized: str, span_class: str, scope: str,
                      work_context_id: str | None, surface: str | None, reason: str) -> list[str]:
    """Mark matching mentions suppressed; returns the bundles they fed."""
    where = ["normalized_mention=?", "span_class=?"]
    params: list[Any] = [normalized, span_class]
    if scope == "work_context":
        where.append("work_context_id=?")
        params.append(work_context_id)
    elif scope == "surface_specific":
        where.append("surface=?")
        params.append(surface)
    cond = " AND ".join(where)
    bundles = [r[0] for r in conn.execute(f"SELECT DISTINCT evidence_bundle_id FROM mention_observations_derived "
                                          f"WHERE {cond} AND evidence_bundle_id IS NOT NULL ORDER BY 1", params)]
    conn.execute(f"UPDATE mention_observations_derived SET state='suppressed', suppression_reason=? WHERE {cond}",
                 [reason[:120], *params])
    return bundles


def resolved_nodes_of_pattern(conn: apsw.Connection, normalized: str, span_class: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT resolved_node_id FROM mention_observations_derived WHERE "
                                       "normalized_mention=? AND span_class=? AND resolved_node_id IS NOT NULL "
                                       "ORDER BY 1", (normalized, span_class))]


def unresolved_groups(conn: apsw.Connection, classes: Sequence[str]) -> list[dict[str, Any]]:
    """§42A.2.12 gate 2's counts per normalized span seen unresolved (not suppressed)."""
    return rows(conn, "SELECT normalized_mention, span_class, min(mention_text) AS mention_text, "
                      "count(DISTINCT observation_id) AS observations, count(DISTINCT surface) AS surfaces, "
                      "group_concat(DISTINCT observation_id) AS observation_ids, min(surface) AS surface, "
                      "min(work_context_id) AS work_context_id, max(occurred_at) AS last_seen, "
                      "group_concat(DISTINCT visibility_class) AS visibilities "
                      "FROM mention_observations_derived WHERE resolved_node_id IS NULL AND state<>'suppressed' "
                      f"AND span_class IN ({marks(len(classes))}) GROUP BY normalized_mention, span_class "
                      "ORDER BY normalized_mention, span_class", list(classes))


def mention_counts(conn: apsw.Connection) -> dict[str, int]:
    r = row(conn, "SELECT count(*) AS mentions, sum(resolved_node_id IS NOT NULL) AS resolved, "
                  "sum(state='suppressed') AS suppressed FROM mention_observations_derived")
    return {k: int(v or 0) for k, v in (r or {}).items()}


# ---- bundles ---------------------------------------------------------------------------------------------------

def upsert_bundle(conn: apsw.Connection, b: dict[str, Any]) -> None:
    cols = BUNDLE_COLS
    conn.execute(f"INSERT INTO evidence_bundles_derived({', '.join(cols)}) VALUES ({marks(len(cols))}) "
                 f"ON CONFLICT(evidence_bundle_id) DO UPDATE SET "
                 + ", ".join(f"{c}=excluded.{c}" for c in cols[1:]), [_enc(b[c]) for c in cols])


def delete_bundle(conn: apsw.Connection, bundle_id: str) -> None:
    conn.execute("DELETE FROM evidence_bundles_derived WHERE evidence_bundle_id=?", (bundle_id,))


def get_bundle(conn: apsw.Connection, bundle_id: str) -> dict[str, Any] | None:
    return _dec(row(conn, f"SELECT {', '.join(BUNDLE_COLS)} FROM evidence_bundles_derived WHERE "
                          "evidence_bundle_id=?", (bundle_id,)))


def find_bundles(conn: apsw.Connection, prefix: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT evidence_bundle_id FROM evidence_bundles_derived WHERE "
                                       "evidence_bundle_id LIKE ? ORDER BY 1 LIMIT 3", (prefix + "%",))]


def candidate_bundles(conn: apsw.Connection) -> list[dict[str, Any]]:
    """§42A.2.4 loadCandidateEvidenceBundles: everything not suppressed."""
    return [_dec(r) for r in rows(conn, f"SELECT {', '.join(BUNDLE_COLS)} FROM evidence_bundles_derived WHERE "
                                        "promotion_state<>'suppressed' ORDER BY evidence_bundle_id")]


def all_bundles(conn: apsw.Connection) -> list[dict[str, Any]]:
    return [_dec(r) for r in rows(conn, f"SELECT {', '.join(BUNDLE_COLS)} FROM evidence_bundles_derived "
                                        "ORDER BY evidence_bundle_id")]


def bundles_with_verdict(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT evidence_bundle_id FROM evidence_bundles_derived WHERE "
                                       "user_verdict<>'none' OR promotion_state='suppressed' ORDER BY 1")]


def rejections(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM backlink_rejections_derived ORDER BY rejection_id")


def set_promotion_state(conn: apsw.Connection, bundle_id: str, state: str) -> None:
    conn.execute("UPDATE evidence_bundles_derived SET promotion_state=? WHERE evidence_bundle_id=?",
                 (state, bundle_id))


def bundle_counts(conn: apsw.Connection) -> dict[str, int]:
    out = {r[0]: int(r[1]) for r in conn.execute("SELECT promotion_state, count(*) FROM evidence_bundles_derived "
                                                 "GROUP BY 1")}
    out["total"] = sum(out.values())
    return out


# ---- rejections and suppressions (rebuilt from review provenance) ----------------------------------------------

def replace_rejections(conn: apsw.Connection, rejections: Sequence[dict[str, Any]]) -> None:
    conn.execute("DELETE FROM backlink_rejections_derived")
    conn.executemany("INSERT OR REPLACE INTO backlink_rejections_derived(rejection_id, source_node_id, "
                     "rejected_target_node_id, matched_text_span, rejection_reason, correct_target_node_id, "
                     "created_at) VALUES (:rejection_id, :source_node_id, :rejected_target_node_id, "
                     ":matched_text_span, :rejection_reason, :correct_target_node_id, :created_at)", list(rejections))


def rejected_pairs(conn: apsw.Connection, sources: Sequence[str], target: str) -> bool:
    if not sources:
        return False
    return scalar(conn, "SELECT 1 FROM backlink_rejections_derived WHERE rejected_target_node_id=? AND "
                        f"source_node_id IN ({marks(len(sources))}) LIMIT 1", [target, *sources]) is not None


def replace_suppressions(conn: apsw.Connection, patterns: Sequence[dict[str, Any]]) -> None:
    conn.execute("DELETE FROM backlink_suppressions")
    conn.executemany("INSERT OR REPLACE INTO backlink_suppressions(pattern_id, normalized_mention, span_class, "
                     "scope, work_context_id, surface, reason, created_at) VALUES (:pattern_id, "
                     ":normalized_mention, :span_class, :scope, :work_context_id, :surface, :reason, :created_at)",
                     list(patterns))


def suppressions(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM backlink_suppressions ORDER BY pattern_id")


def unsuppress_all(conn: apsw.Connection) -> None:
    conn.execute("UPDATE mention_observations_derived SET state=CASE WHEN evidence_bundle_id IS NULL THEN "
                 "'observed_mention' ELSE 'candidate_relation' END, suppression_reason=NULL WHERE state='suppressed'")


# ---- Tier 4 queue, Tier 5 candidates ---------------------------------------------------------------------------

def enqueue_tier4(conn: apsw.Connection, item: dict[str, Any]) -> None:
    cols = ("queue_item_id", "mention_id", "observation_id", "source_node_id", "span_text", "context_window",
            "candidate_set", "execution_requirement", "status", "retry_count", "created_at", "updated_at")
    conn.execute(f"INSERT OR IGNORE INTO backlink_tier4_queue({', '.join(cols)}) VALUES ({marks(len(cols))})",
                 [_enc(item[c]) for c in cols])


def tier4_due(conn: apsw.Connection, now: str, limit: int) -> list[dict[str, Any]]:
    return [_dec(r) for r in rows(conn, "SELECT * FROM backlink_tier4_queue WHERE status IN ('queued','failed') AND "
                                        "(next_retry_at IS NULL OR next_retry_at <= ?) ORDER BY created_at, "
                                        "queue_item_id LIMIT ?", (now, limit))]


def update_tier4(conn: apsw.Connection, queue_item_id: str, **values: Any) -> None:
    sets = ", ".join(f"{k}=?" for k in values)
    conn.execute(f"UPDATE backlink_tier4_queue SET {sets} WHERE queue_item_id=?", [*values.values(), queue_item_id])


def observation_context(conn: apsw.Connection, observation_id: str, *, exclude_span: tuple[int, int] | None = None,
                        limit: int = 20) -> dict[str, Any]:
    """For the Tier 4 prompt: the observation's conversation title and the names already resolved in it, except
    at the span being asked about (so the question reads the same after its answer: replayable)."""
    title = scalar(conn, "SELECT c.title FROM messages m JOIN conversations c ON c.conversation_id=m.conversation_id "
                         "WHERE m.message_id=?", (observation_id,))
    start, end = exclude_span or (-1, -1)
    names = [r[0] for r in conn.execute(
        "SELECT DISTINCT n.canonical_name FROM mention_observations_derived d JOIN nodes n ON n.id=d.resolved_node_id "
        "WHERE d.observation_id=? AND NOT (d.start_offset=? AND d.end_offset=?) ORDER BY 1 LIMIT ?",
        (observation_id, start, end, limit))]
    return {"title": title, "known_names": names}


def tier4_status(conn: apsw.Connection) -> dict[str, int]:
    return {r[0]: int(r[1]) for r in conn.execute("SELECT status, count(*) FROM backlink_tier4_queue GROUP BY 1")}


def resolve_mention(conn: apsw.Connection, mention_id: str, node_id: str, method: str, confidence: float) -> None:
    conn.execute("UPDATE mention_observations_derived SET resolved_node_id=?, resolution_method=?, "
                 "resolution_confidence=? WHERE mention_id=?", (node_id, method, confidence, mention_id))


def resolve_pattern(conn: apsw.Connection, normalized: str, node_id: str) -> None:
    conn.execute("UPDATE mention_observations_derived SET resolved_node_id=?, resolution_method='user_corrected' "
                 "WHERE normalized_mention=? AND resolved_node_id IS NULL", (node_id, normalized))


def decided_resolutions(conn: apsw.Connection, observation_id: str) -> dict[tuple[int, int], str]:
    """(start, end) → node of this observation's spans a model or a person resolved (Tier 4, retarget)."""
    return {(r[0], r[1]): r[2] for r in conn.execute(
        "SELECT start_offset, end_offset, resolved_node_id FROM mention_observations_derived WHERE observation_id=? "
        "AND resolution_method IN ('llm_closed_set','user_corrected') AND resolved_node_id IS NOT NULL "
        "ORDER BY append_seq", (observation_id,))}


def forget_observations(conn: apsw.Connection) -> None:
    conn.execute("DELETE FROM backlink_observations")


def rescan_observation(conn: apsw.Connection, observation_id: str) -> None:
    conn.execute("DELETE FROM backlink_observations WHERE observation_id=?", (observation_id,))


def candidate_exists(conn: apsw.Connection, candidate_id: str) -> bool:
    return scalar(conn, "SELECT 1 FROM entity_creation_candidates WHERE candidate_id=?", (candidate_id,)) is not None


def candidates_created_on(conn: apsw.Connection, day: str) -> int:
    return int(scalar(conn, "SELECT count(*) FROM entity_creation_candidates WHERE substr(created_at,1,10)=?",
                      (day,)))


def insert_candidate(conn: apsw.Connection, c: dict[str, Any]) -> None:
    cols = ("candidate_id", "suggested_canonical_name", "suggested_node_kind", "normalized_mention",
            "source_observation_ids", "source_surface", "linked_work_context_id", "span_class", "visibility_class",
            "confidence", "salience", "status", "created_at")
    conn.execute(f"INSERT OR IGNORE INTO entity_creation_candidates({', '.join(cols)}) VALUES ({marks(len(cols))})",
                 [_enc(c[k]) for k in cols])


def pending_candidates(conn: apsw.Connection) -> list[dict[str, Any]]:
    return [_dec(r) for r in rows(conn, "SELECT * FROM entity_creation_candidates WHERE status='pending_review' "
                                        "ORDER BY candidate_id")]


def set_candidate_status(conn: apsw.Connection, candidate_id: str, status: str) -> None:
    conn.execute("UPDATE entity_creation_candidates SET status=? WHERE candidate_id=?", (status, candidate_id))


# ---- cooldown --------------------------------------------------------------------------------------------------

def touch_cooldown(conn: apsw.Connection, node_ids: Iterable[str], now: str) -> None:
    conn.executemany("INSERT INTO backlink_cooldown(node_id, last_backlinked_at) VALUES (?,?) ON CONFLICT(node_id) "
                     "DO UPDATE SET last_backlinked_at=excluded.last_backlinked_at", [(n, now) for n in node_ids])


def cooled_nodes(conn: apsw.Connection, since: str) -> set[str]:
    return {r[0] for r in conn.execute("SELECT node_id FROM backlink_cooldown WHERE last_backlinked_at >= ?",
                                       (since,))}


def reset_cooldown(conn: apsw.Connection, node_ids: Iterable[str]) -> None:
    conn.executemany("DELETE FROM backlink_cooldown WHERE node_id=?", [(n,) for n in node_ids])


# ---- review queue ----------------------------------------------------------------------------------------------

def replace_pending_queue(conn: apsw.Connection, items: Sequence[dict[str, Any]]) -> None:
    """Pending items are recomputed each run; resolved/dismissed rows are kept (history of the queue)."""
    conn.execute("DELETE FROM review_queue_derived WHERE status='pending'")
    conn.executemany(f"INSERT OR REPLACE INTO review_queue_derived({', '.join(QUEUE_COLS)}) VALUES "
                     f"({marks(len(QUEUE_COLS))})", [[_enc(i[c]) for c in QUEUE_COLS] for i in items])


def queue_page(conn: apsw.Connection, *, status: str, item_kind: str | None, offset: int,
               limit: int) -> tuple[list[dict[str, Any]], int]:
    where, params = ["status=?"], [status]
    if item_kind:
        where.append("item_kind=?")
        params.append(item_kind)
    cond = " AND ".join(where)
    total = int(scalar(conn, f"SELECT count(*) FROM review_queue_derived WHERE {cond}", params))
    items = [_dec(r) for r in rows(conn, f"SELECT {', '.join(QUEUE_COLS)} FROM review_queue_derived WHERE {cond} "
                                         "ORDER BY sort_score DESC, queue_item_id LIMIT ? OFFSET ?",
                                   [*params, limit, offset])]
    return items, total


def set_queue_status(conn: apsw.Connection, primary_ref: str, status: str) -> None:
    conn.execute("UPDATE review_queue_derived SET status=? WHERE primary_ref=? AND status='pending'",
                 (status, primary_ref))
