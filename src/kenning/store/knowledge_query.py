"""SQL for delivering the node store (issue 19; seed 003 §42A.1, §43, §41.4): the typed graph queries, the novelty
gate's candidate sources, briefs, and the context-packet tables of migration 0080.

Reads only, except the packet/session rows. Every query is indexed (primary keys, ``idx_edges_target``,
``idx_alias_search``, ``idx_nodes_kind``, ``idx_nodes_updated``) or bounded by a LIMIT, so the §43 ceilings hold on
a large store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

from kenning.store.connection import row, rows, scalar
from kenning.store.knowledge import from_json, to_json
from kenning.store.sqltext import chunks, marks

_COLS = ("id", "node_kind", "canonical_name", "alpha", "beta", "confidence", "staleness_state", "lifecycle_state",
         "lifecycle_substate", "created_at", "updated_at", "last_verified_at", "payload", "is_active")
NODE_SELECT = ", ".join(f"n.{c}" for c in _COLS)
# §5.7 end states: a node in one of them is history, never delivered.
ENDED_STATES = ("archived", "merged", "split", "retracted")
LIVE = f"n.is_active=1 AND n.lifecycle_state NOT IN ({', '.join(repr(s) for s in ENDED_STATES)})"
# Edge states a delivered edge may have (§42A.6 edge states minus suppressed/archived; a rollback retracts).
_EDGE_LIVE = "coalesce(lifecycle_state, 'active') NOT IN ('retracted', 'suppressed', 'archived')"


def _node(r: dict[str, Any] | None) -> dict[str, Any] | None:
    if r is not None and "payload" in r:
        r["payload"] = from_json(r["payload"]) or {}
    return r


def _nodes(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [_node(r) for r in rs]


# ---- single nodes ------------------------------------------------------------------------------------------

def node_by_id(conn: apsw.Connection, node_id: str) -> dict[str, Any] | None:
    return _node(row(conn, f"SELECT {NODE_SELECT} FROM nodes n WHERE n.id=?", (node_id,)))


def pk_probe(conn: apsw.Connection, node_id: str) -> str | None:
    """The bare primary-key select the benchmark compares every query kind against."""
    return scalar(conn, "SELECT id FROM nodes WHERE id=?", (node_id,))


def nodes_by_ids(conn: apsw.Connection, ids: Sequence[str], *, live: bool = False) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    cond = f" AND {LIVE}" if live else ""
    for part in chunks(list(dict.fromkeys(ids))):
        for r in rows(conn, f"SELECT {NODE_SELECT} FROM nodes n WHERE n.id IN ({marks(len(part))}){cond}", part):
            out[r["id"]] = _node(r)
    return out


def nodes_by_alias(conn: apsw.Connection, aliases: Sequence[str], *, limit: int,
                   kinds: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Live nodes one of whose normalized aliases equals one of ``aliases`` (an indexed equality, §14.4 Tier 1);
    ``matched_alias`` says which. Best confidence first."""
    if not aliases:
        return []
    kind = f" AND n.node_kind IN ({marks(len(kinds))})" if kinds else ""
    sql = (f"SELECT a.normalized_alias AS matched_alias, {NODE_SELECT} FROM aliases a JOIN nodes n ON n.id=a.node_id "
           f"WHERE a.normalized_alias IN ({marks(len(aliases))}) AND {LIVE}{kind} "
           "ORDER BY n.confidence DESC, n.id, a.normalized_alias LIMIT ?")
    return _nodes(rows(conn, sql, (*aliases, *(kinds or ()), limit)))


def nodes_by_name(conn: apsw.Connection, name: str, *, limit: int) -> list[dict[str, Any]]:
    return _nodes(rows(conn, f"SELECT {NODE_SELECT} FROM nodes n WHERE n.canonical_name=? COLLATE NOCASE "
                             "ORDER BY n.is_active DESC, n.confidence DESC, n.id LIMIT ?", (name, limit)))


# ---- edges -------------------------------------------------------------------------------------------------

# What a reader needs to decide whether a promoted (back-link) edge may be shown (§42A.2.12A, G64).
_EDGE_FACTS = ("json_extract(payload, '$.learned_by') AS edge_learned_by, json_extract(payload, '$.visibility_class') "
               "AS edge_visibility, json_extract(payload, '$.evidence_bundle_id') AS edge_bundle_id")


def neighbors(conn: apsw.Connection, node_id: str, *, limit: int, scan_limit: int,
              edge_types: Sequence[str] | None = None, edge_facts: bool = False) -> list[dict[str, Any]]:
    """§42A.1.4 source 1 (and §43 entity_neighbors): the live nodes a current edge joins to ``node_id``, each with
    the relation and its direction from ``node_id``, best node confidence first. Each direction reads at most
    ``scan_limit`` edges (in index order), so a hub costs the same as any node. ``edge_facts``: also the edge's
    ``edge_learned_by`` / ``edge_visibility`` / ``edge_bundle_id`` (what the promoted-edge gate reads)."""
    rel = f" AND relation_type IN ({marks(len(edge_types))})" if edge_types else ""
    types = tuple(edge_types or ())
    facts = f", {_EDGE_FACTS}" if edge_facts else ""
    outer = ", x.edge_learned_by, x.edge_visibility, x.edge_bundle_id" if edge_facts else ""
    sql = (f"SELECT {NODE_SELECT}, x.relation_type, x.direction, x.edge_confidence, x.start_date{outer} FROM ("
           "SELECT * FROM (SELECT target_id AS other, relation_type, 'out' AS direction, "
           f"confidence AS edge_confidence, start_date{facts} FROM edges WHERE source_id=? AND end_date IS NULL AND {_EDGE_LIVE}{rel} LIMIT ?) "
           f"UNION ALL SELECT * FROM (SELECT source_id, relation_type, 'in', confidence, start_date{facts} FROM edges "
           f"WHERE target_id=? AND source_id<>? AND end_date IS NULL AND {_EDGE_LIVE}{rel} LIMIT ?)) x "
           f"JOIN nodes n ON n.id=x.other WHERE {LIVE} "
           "ORDER BY n.confidence DESC, n.canonical_name, n.id, x.relation_type, x.direction LIMIT ?")
    params = (node_id, *types, scan_limit, node_id, node_id, *types, scan_limit, limit)
    return _nodes(rows(conn, sql, params))


def ended_edges(conn: apsw.Connection, node_id: str, *, limit: int, edge_facts: bool = False) -> list[dict[str, Any]]:
    """Edges of ``node_id`` that stopped holding, most recently ended first (a brief's history)."""
    facts = f", {_EDGE_FACTS}" if edge_facts else ""
    outer = ", x.edge_learned_by, x.edge_visibility, x.edge_bundle_id" if edge_facts else ""
    sql = (f"SELECT {NODE_SELECT}, x.relation_type, x.direction, x.start_date, x.end_date{outer} FROM ("
           f"SELECT target_id AS other, relation_type, 'out' AS direction, start_date, end_date{facts} FROM edges "
           "WHERE source_id=? AND end_date IS NOT NULL UNION ALL "
           f"SELECT source_id, relation_type, 'in', start_date, end_date{facts} FROM edges "
           "WHERE target_id=? AND source_id<>? AND end_date IS NOT NULL) x JOIN nodes n ON n.id=x.other "
           "ORDER BY x.end_date DESC, n.canonical_name, x.relation_type LIMIT ?")
    return _nodes(rows(conn, sql, (node_id, node_id, node_id, limit)))


def capped_degrees(conn: apsw.Connection, ids: Sequence[str], cap: int) -> dict[str, int]:
    """Current edge count of each node, counted only up to ``cap`` per direction (enough to tell a hub: §42A.1.4
    "remove hub nodes above threshold" needs "more than N", never the exact count of a 10 000-edge hub)."""
    out: dict[str, int] = {}
    for part in chunks(list(dict.fromkeys(ids)), 200):
        values = ", ".join("(?)" for _ in part)
        sql = (f"WITH ids(id) AS (VALUES {values}) SELECT id, "
               "(SELECT count(*) FROM (SELECT 1 FROM edges WHERE source_id=ids.id AND end_date IS NULL LIMIT ?)) + "
               "(SELECT count(*) FROM (SELECT 1 FROM edges WHERE target_id=ids.id AND end_date IS NULL LIMIT ?)) "
               "AS degree FROM ids")
        for r in rows(conn, sql, (*part, cap, cap)):
            out[r["id"]] = r["degree"]
    return out


# ---- candidate sources ---------------------------------------------------------------------------------------

def recent_nodes(conn: apsw.Connection, since: str, *, limit: int, kinds: Sequence[str]) -> list[dict[str, Any]]:
    """§42A.1.4 source 3: live nodes of ``kinds`` last evidenced (said, confirmed: ``last_verified_at``) after
    ``since``, newest first (walks idx_nodes_verified). Import time is not activity: a re-import of old chats
    makes nothing recent (decision K17)."""
    sql = (f"SELECT {NODE_SELECT} FROM nodes n WHERE n.last_verified_at > ? AND {LIVE} "
           f"AND n.node_kind IN ({marks(len(kinds))}) ORDER BY n.last_verified_at DESC, n.id DESC LIMIT ?")
    return _nodes(rows(conn, sql, (since, *kinds, limit)))


def fts_match(conn: apsw.Connection, match: str, *, limit: int, kinds: Sequence[str] | None = None,
              within: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Live nodes whose fts_nodes row matches ``match`` (an FTS5 expression), best BM25 first, optionally only of
    ``kinds`` or only among the node ids ``within``; ``rank`` is the BM25 score (lower is better)."""
    where = [LIVE]
    params: list[Any] = [match]
    if kinds:
        where.append(f"n.node_kind IN ({marks(len(kinds))})")
        params += list(kinds)
    if within is not None:
        if not within:
            return []
        where.append(f"n.id IN ({marks(len(within))})")
        params += list(within)
    sql = (f"SELECT {NODE_SELECT}, bm25(fts_nodes) AS rank FROM fts_nodes f JOIN nodes n ON n.rowid=f.rowid "
           f"WHERE fts_nodes MATCH ? AND {' AND '.join(where)} ORDER BY rank, n.id LIMIT ?")
    try:
        return _nodes(rows(conn, sql, (*params, limit)))
    except apsw.SQLError:
        return []  # an expression FTS5 cannot parse matches nothing


def fts_kinds(conn: apsw.Connection, match: str, *, limit: int) -> list[dict[str, Any]]:
    """(id, node_kind, rank) of the best ``limit`` live FTS matches — light rows, so one pass can serve several
    kinds; the caller reads the full nodes it keeps (``nodes_by_ids``)."""
    sql = (f"SELECT n.id, n.node_kind, bm25(fts_nodes) AS rank FROM fts_nodes f JOIN nodes n ON n.rowid=f.rowid "
           f"WHERE fts_nodes MATCH ? AND {LIVE} ORDER BY rank, n.id LIMIT ?")
    try:
        return rows(conn, sql, (match, limit))
    except apsw.SQLError:
        return []


def aliases_of(conn: apsw.Connection, node_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in chunks(list(node_ids)):
        for r in rows(conn, f"SELECT node_id, normalized_alias FROM aliases WHERE node_id IN ({marks(len(part))}) "
                            "ORDER BY node_id, normalized_alias", part):
            out.setdefault(r["node_id"], []).append(r["normalized_alias"])
    return out


def term_docs(conn: apsw.Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many nodes each FTS term occurs in (fts_nodes_vocab, migration 0080); absent terms are left out."""
    if not terms:
        return {}
    try:
        found = rows(conn, f"SELECT term, doc FROM fts_nodes_vocab WHERE term IN ({marks(len(terms))})", list(terms))
    except apsw.SQLError:
        return {}  # a vault read-only since before migration 0080: every word is searched
    return {r["term"]: r["doc"] for r in found}


def node_count_estimate(conn: apsw.Connection) -> int:
    """The largest node rowid: the node count without counting (rowids only grow; deletes are rare)."""
    return scalar(conn, "SELECT coalesce(max(rowid), 0) FROM nodes")


def linked_by_payload(conn: apsw.Connection, kind: str, node_ids: Sequence[str], *,
                      limit: int) -> list[dict[str, Any]]:
    """Live nodes of ``kind`` (goal, obligation) whose payload names one of ``node_ids`` (goals'
    linked_entity_ids / primary_entity_id, obligations' linked_entity_refs): node_payload_refs, kept by triggers."""
    if not node_ids:
        return []
    sql = (f"SELECT DISTINCT {NODE_SELECT} FROM node_payload_refs r JOIN nodes n ON n.id=r.node_id "
           f"WHERE r.ref_id IN ({marks(len(node_ids))}) AND n.node_kind=? AND {LIVE} "
           "ORDER BY n.updated_at DESC, n.id LIMIT ?")
    return _nodes(rows(conn, sql, (*node_ids, kind, limit)))


def obligations_due(conn: apsw.Connection, start: str, end: str, *, limit: int) -> list[dict[str, Any]]:
    """Live obligations whose deadline date falls in [start, end] as text (callers widen the window a day either
    side and check the instant themselves: dates carry their own offsets), soonest first."""
    sql = (f"SELECT {NODE_SELECT}, json_extract(n.payload, '$.deadline.date') AS due FROM nodes n "
           f"WHERE n.node_kind='obligation' AND json_extract(n.payload, '$.deadline.date') BETWEEN ? AND ? "
           f"AND {LIVE} ORDER BY due, n.id LIMIT ?")
    return _nodes(rows(conn, sql, (start, end, limit)))


def directives_with_priority(conn: apsw.Connection, classes: Sequence[str], *, limit: int) -> list[dict[str, Any]]:
    """Live memory directives of the given §4A.1.4 priority_class (an "absolute" one applies to every request)."""
    if not classes:
        return []
    sql = (f"SELECT {NODE_SELECT} FROM nodes n WHERE n.node_kind='memory_directive' AND {LIVE} "
           f"AND json_extract(n.payload, '$.priority_class') IN ({marks(len(classes))}) "
           "ORDER BY n.confidence DESC, n.id LIMIT ?")
    return _nodes(rows(conn, sql, (*classes, limit)))


def nodes_of_kind(conn: apsw.Connection, kind: str, *, limit: int) -> list[dict[str, Any]]:
    return _nodes(rows(conn, f"SELECT {NODE_SELECT} FROM nodes n WHERE n.node_kind=? AND {LIVE} "
                             "ORDER BY n.confidence DESC, n.id LIMIT ?", (kind, limit)))


def procedures_of_app(conn: apsw.Connection, app_id: str, *, limit: int) -> list[dict[str, Any]]:
    """Procedures whose §4A.1.3 environment names the application (edges are read separately)."""
    sql = (f"SELECT {NODE_SELECT} FROM nodes n WHERE n.node_kind IN ('procedure', 'standing_procedure') AND {LIVE} "
           "AND json_extract(n.payload, '$.environment.app_entity_id')=? ORDER BY n.confidence DESC, n.id LIMIT ?")
    return _nodes(rows(conn, sql, (app_id, limit)))


def important_people(conn: apsw.Connection, *, limit: int) -> list[dict[str, Any]]:
    """Live people other than the vault owner, most connected first: current edges plus provenance entries (the
    demo's "most important person"; a scan of world entities, fine at a person's scale)."""
    sql = ("SELECT n.id, n.canonical_name, n.confidence, "
           "(SELECT count(*) FROM edges e WHERE e.source_id=n.id AND e.end_date IS NULL) + "
           "(SELECT count(*) FROM edges e WHERE e.target_id=n.id AND e.end_date IS NULL) AS degree, "
           "(SELECT count(*) FROM provenance_entries p WHERE p.node_id=n.id) AS sources "
           f"FROM nodes n WHERE n.node_kind='world_entity' AND {LIVE} "
           "AND json_extract(n.payload, '$.entity_type')='person' "
           "AND coalesce(json_extract(n.payload, '$.is_vault_owner'), 0)=0 "
           "ORDER BY degree + sources DESC, n.confidence DESC, n.canonical_name, n.id LIMIT ?")
    return rows(conn, sql, (limit,))


# ---- provenance and threads ----------------------------------------------------------------------------------

def provenance_summary(conn: apsw.Connection, node_id: str, *, limit: int) -> dict[str, Any]:
    """How much evidence a node has and its newest entries (a brief's "recent activity")."""
    stats = row(conn, "SELECT count(*) AS n, max(created_at) AS last, min(created_at) AS first, "
                      "count(DISTINCT message_id) AS messages FROM provenance_entries WHERE node_id=?", (node_id,))
    latest = rows(conn, "SELECT created_at, entry_type, source_description, verbatim_excerpt, message_id "
                        "FROM provenance_entries WHERE node_id=? ORDER BY created_at DESC, id LIMIT ?",
                  (node_id, limit))
    return {**(stats or {}), "latest": latest}


def threads_of_nodes(conn: apsw.Connection, node_ids: Sequence[str], *, limit: int) -> list[dict[str, Any]]:
    """Conversations whose messages the nodes' provenance cites, most recently cited first (§43 related_threads)."""
    if not node_ids:
        return []
    sql = ("SELECT c.conversation_id, c.title, count(DISTINCT p.message_id) AS cited_messages, "
           "count(*) AS entries, min(coalesce(p.created_at, m.created_at_utc)) AS first_at, "
           "max(coalesce(p.created_at, m.created_at_utc)) AS last_at, group_concat(DISTINCT p.node_id) AS node_ids "
           "FROM provenance_entries p JOIN messages m ON m.message_id=p.message_id "
           "JOIN conversations c ON c.conversation_id=m.conversation_id "
           f"WHERE p.node_id IN ({marks(len(node_ids))}) AND p.message_id IS NOT NULL "
           "GROUP BY c.conversation_id ORDER BY last_at DESC, c.conversation_id LIMIT ?")
    return rows(conn, sql, (*node_ids, limit))


# ---- context packets (migration 0080) -----------------------------------------------------------------------

def session_items(conn: apsw.Connection, session_id: str) -> set[str]:
    return {r["item_id"] for r in rows(conn, "SELECT item_id FROM context_session_items WHERE session_id=?",
                                       (session_id,))}


def insert_packet(conn: apsw.Connection, packet: dict[str, Any], given: Sequence[str]) -> None:
    """One packet's row and, when it belongs to a session, the items it gave (first packet wins)."""
    conn.execute("INSERT OR REPLACE INTO context_packets (packet_id, session_id, request, primary_node_id, "
                 "created_at, budget, tokens_used, lines, gate_node_ids, referenced_node_ids, gate_hit_rate, "
                 "telemetry) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (packet["packet_id"], packet["session_id"], packet["request"], packet["primary_node_id"],
                  packet["created_at"], packet["budget"], packet["tokens_used"], to_json(packet["lines"]),
                  to_json(packet["gate_node_ids"]), to_json(packet.get("referenced_node_ids") or []),
                  packet.get("gate_hit_rate"), to_json(packet["telemetry"])))
    if packet["session_id"]:
        conn.executemany("INSERT OR IGNORE INTO context_session_items (session_id, item_id, packet_id, given_at) "
                         "VALUES (?, ?, ?, ?)",
                         [(packet["session_id"], i, packet["packet_id"], packet["created_at"]) for i in given])


def session_packets(conn: apsw.Connection, session_id: str) -> list[dict[str, Any]]:
    out = rows(conn, "SELECT packet_id, created_at, gate_node_ids, referenced_node_ids, gate_hit_rate "
                     "FROM context_packets WHERE session_id=? ORDER BY created_at, packet_id", (session_id,))
    for r in out:
        r["gate_node_ids"] = from_json(r["gate_node_ids"])
        r["referenced_node_ids"] = from_json(r["referenced_node_ids"])
    return out


def set_packet_references(conn: apsw.Connection, packet_id: str, referenced: Sequence[str],
                          hit_rate: float | None) -> None:
    conn.execute("UPDATE context_packets SET referenced_node_ids=?, gate_hit_rate=? WHERE packet_id=?",
                 (to_json(sorted(referenced)), hit_rate, packet_id))


def get_packet(conn: apsw.Connection, packet_id: str) -> dict[str, Any] | None:
    r = row(conn, "SELECT * FROM context_packets WHERE packet_id=?", (packet_id,))
    if r is not None:
        for c in ("lines", "gate_node_ids", "referenced_node_ids", "telemetry"):
            r[c] = from_json(r[c])
    return r


def hit_rate_totals(conn: apsw.Connection, *, session_id: str | None = None,
                    since: str | None = None) -> dict[str, int]:
    """Σ referenced and Σ in-gate over packets (a rate over many packets weighs each gate entry once)."""
    where, params = ["json_array_length(gate_node_ids) > 0"], []
    if session_id is not None:
        where.append("session_id=?")
        params.append(session_id)
    if since is not None:
        where.append("created_at>=?")
        params.append(since)
    r = row(conn, "SELECT count(*) AS packets, coalesce(sum(json_array_length(referenced_node_ids)), 0) AS referenced, "
                  "coalesce(sum(json_array_length(gate_node_ids)), 0) AS in_gate FROM context_packets WHERE "
                  + " AND ".join(where), params)
    return dict(r or {"packets": 0, "referenced": 0, "in_gate": 0})
