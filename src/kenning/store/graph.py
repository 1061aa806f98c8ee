"""SQL of stage 6 (seed 001 §6): the read streams of stages 1–5 and the graph tables."""

from __future__ import annotations

from typing import Any

import apsw

from kenning.store.connection import rows, scalar
from kenning.store import temporal as tsql


def load_inputs(conn: apsw.Connection) -> dict[str, Any]:
    """Every stream stage 6 reads, ordered by id (§6.4.1)."""
    assertions = rows(conn, """
        SELECT a.assertion_id, a.message_id, a.subject_entity_id, a.subject_detection_tier, a.predicate_id,
               a.object_entity_id, a.object_detection_tier, a.object_value_type, a.object_value, a.object_signature,
               a.temporal_qualifier_type, a.temporal_qualifier_id, a.modality, a.polarity, a.asserted_role,
               a.has_user_corroboration,
               a.confidence_final, a.surface_text, a.char_start, a.char_end,
               p.canonical_label_norm AS predicate_label, s.canonical_name AS subject_name,
               o.canonical_name AS object_name, t.valid_time_type, t.valid_from_utc, t.valid_to_utc,
               t.valid_until_hint_utc, t.status, t.temporal_superseded_by_assertion_id,
               t.retracted_by_retraction_id, t.negated_by_assertion_id, t.rule_id_applied,
               t.asserted_at_utc AS t_asserted_at_utc, t.superseded_at_utc
        FROM assertions a JOIN assertion_temporalized t ON t.assertion_id = a.assertion_id
        JOIN predicates p ON p.predicate_id = a.predicate_id JOIN entities s ON s.entity_id = a.subject_entity_id
        LEFT JOIN entities o ON o.entity_id = a.object_entity_id ORDER BY a.assertion_id""")
    entities = rows(conn, "SELECT entity_id, entity_type, entity_key, canonical_name, status, salience_score, "
                          "mention_count, first_seen_at_utc, last_seen_at_utc FROM entities WHERE status='active' "
                          "OR entity_id IN (SELECT subject_entity_id FROM assertions) OR entity_id IN "
                          "(SELECT object_entity_id FROM assertions WHERE object_entity_id IS NOT NULL) "
                          "ORDER BY entity_id")
    lex = rows(conn, "SELECT t.term_id, t.build_id, t.term_key, t.canonical_surface, t.score, t.entity_type_hint "
                     "FROM lexicon_terms t WHERE t.build_id = (SELECT build_id FROM lexicon_builds "
                     "ORDER BY build_version DESC LIMIT 1) ORDER BY t.term_id")
    return {
        "assertions": assertions,
        "entities": entities,
        "entity_by_type_key": {(e["entity_type"], e["entity_key"]): e["entity_id"] for e in entities
                               if e["status"] == "active"},
        "predicates": rows(conn, "SELECT * FROM predicates ORDER BY predicate_id"),
        "messages": rows(conn, "SELECT m.message_id, m.conversation_id, m.role, m.created_at_utc, m.order_index, "
                               "m.text_raw, c.title FROM messages m JOIN conversations c USING(conversation_id) "
                               "WHERE m.message_id IN (SELECT message_id FROM assertions UNION "
                               "SELECT retraction_message_id FROM retractions) ORDER BY m.message_id"),
        "retractions": rows(conn, "SELECT * FROM retractions ORDER BY retraction_id"),
        "conflicts": sorted(tsql.conflicts(conn), key=lambda c: c["conflict_group_id"]),
        "lexicon_terms": lex,
        "time_mentions": rows(conn, "SELECT * FROM time_mentions ORDER BY time_mention_id"),
    }


def quality(conn: apsw.Connection) -> dict[str, Any]:
    """§6.0.2 data quality check."""
    n_a = int(scalar(conn, "SELECT COUNT(*) FROM assertions"))
    n_t = int(scalar(conn, "SELECT COUNT(*) FROM assertion_temporalized"))
    vf = int(scalar(conn, "SELECT COUNT(*) FROM assertion_temporalized WHERE valid_from_utc IS NOT NULL"))
    lit = int(scalar(conn, "SELECT COUNT(*) FROM assertions WHERE object_value_type IS NOT NULL"))
    q = int(scalar(conn, "SELECT COUNT(*) FROM assertions WHERE temporal_qualifier_id IS NOT NULL"))
    span = conn.execute("SELECT MIN(valid_from_utc), MAX(valid_from_utc) FROM assertion_temporalized").fetchone()
    return {
        "entities": int(scalar(conn, "SELECT COUNT(*) FROM entities")),
        "predicates": int(scalar(conn, "SELECT COUNT(*) FROM predicates")),
        "assertions": n_a, "temporalized": n_t, "temporalized_coverage": round(n_t / n_a, 4) if n_a else None,
        "status_distribution": tsql.status_counts(conn),
        "valid_from_rate": round(vf / n_t, 4) if n_t else None, "valid_from_span": list(span),
        "literal_object_rate": round(lit / n_a, 4) if n_a else None,
        "self_present": bool(scalar(conn, "SELECT EXISTS(SELECT 1 FROM entities WHERE entity_key='__SELF__' "
                                          "AND entity_type='PERSON' AND status='active')")),
        "time_qualifier_link_rate": round(q / n_a, 4) if n_a else None,
    }


def replace_graph(conn: apsw.Connection, nodes: list[tuple], edges: list[tuple]) -> None:
    conn.execute("DELETE FROM graph_edges")
    conn.execute("DELETE FROM graph_nodes")
    conn.executemany("INSERT INTO graph_nodes(node_id, node_type, source_id, label, metadata_json) "
                     "VALUES (?,?,?,?,?)", nodes)
    conn.executemany("INSERT INTO graph_edges(edge_id, edge_type, src_node_id, dst_node_id, metadata_json) "
                     "VALUES (?,?,?,?,?)", edges)


def all_nodes(conn: apsw.Connection, types: list[str] | None = None) -> list[dict]:
    sql = "SELECT * FROM graph_nodes"
    params: list = []
    if types:
        sql += f" WHERE node_type IN ({','.join('?' * len(types))})"
        params = list(types)
    return rows(conn, sql + " ORDER BY node_type, node_id", params)


def all_edges(conn: apsw.Connection, types: list[str] | None = None) -> list[dict]:
    sql = "SELECT * FROM graph_edges"
    params: list = []
    if types:
        sql += f" WHERE edge_type IN ({','.join('?' * len(types))})"
        params = list(types)
    return rows(conn, sql + " ORDER BY edge_type, edge_id", params)


def graph_counts(conn: apsw.Connection) -> dict[str, Any]:
    return {"nodes_by_type": dict(conn.execute("SELECT node_type, COUNT(*) FROM graph_nodes GROUP BY 1 ORDER BY 1")),
            "edges_by_type": dict(conn.execute("SELECT edge_type, COUNT(*) FROM graph_edges GROUP BY 1 ORDER BY 1"))}
