"""SQL of stage 5 (seed 001 §5): reads of stages 1–4, the stage-5 tables, transaction-time history, and the
queries the CLI uses (bitemporal facts, history, conflicts)."""

from __future__ import annotations

from typing import Any, Iterator

import apsw

from kenning.store.connection import rows, scalar
from kenning.store.sqltext import insert_sql

TEMPORALIZED_COLUMNS = (
    "assertion_id", "valid_time_type", "valid_from_utc", "valid_to_utc", "valid_until_hint_utc", "status",
    "temporal_superseded_by_assertion_id", "retracted_by_retraction_id", "negated_by_assertion_id", "rule_id_applied",
    "raw_temporalize_json", "asserted_at_utc", "superseded_at_utc")
HISTORY_COLUMNS = (
    "assertion_id", "version", "tx_from_utc", "tx_to_utc", "status", "valid_time_type", "valid_from_utc",
    "valid_to_utc", "valid_until_hint_utc", "temporal_superseded_by_assertion_id", "retracted_by_retraction_id",
    "negated_by_assertion_id", "rule_id_applied", "reason", "cause_id", "closed_reason", "recorded_by_run_id")
STAGE4_TABLES = ("messages", "entities", "time_mentions", "assertions", "retractions", "predicates")


def missing_tables(conn: apsw.Connection, names: tuple[str, ...] = STAGE4_TABLES) -> list[str]:
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return [n for n in names if n not in have]


def iter_stage5_assertions(conn: apsw.Connection) -> Iterator[dict]:
    """Every assertion in §5.3.1 order with what stage 5 needs of its message, predicate and subject."""
    cur = conn.execute(
        "SELECT a.assertion_id, a.message_id, a.fact_key, a.subject_entity_id, a.subject_detection_tier, "
        "a.predicate_id, a.object_entity_id, a.object_detection_tier, a.object_signature, a.temporal_qualifier_type, "
        "a.temporal_qualifier_id, a.modality, a.polarity, a.asserted_role, a.asserted_at_utc, a.confidence_final, "
        "a.has_user_corroboration, a.superseded_by_assertion_id, a.supersession_type, a.char_start, a.char_end, "
        "json_extract(a.raw_assertion_json, '$.extraction.aspect') AS aspect, "
        "m.conversation_id, m.order_index, m.timestamp_quality, m.export_content_type, "
        "c.created_at_utc AS conversation_created_at_utc, p.canonical_label_norm AS predicate_label, "
        "e.entity_type AS subject_entity_type FROM assertions a JOIN messages m ON m.message_id = a.message_id "
        "JOIN conversations c ON c.conversation_id = m.conversation_id "
        "JOIN predicates p ON p.predicate_id = a.predicate_id JOIN entities e ON e.entity_id = a.subject_entity_id "
        "ORDER BY m.conversation_id, m.order_index, m.message_id, a.assertion_id")
    try:
        names = [d[0] for d in cur.getdescription()]
    except apsw.ExecutionCompleteError:   # no assertions at all
        return
    for r in cur:
        yield dict(zip(names, r))


def message_texts(conn: apsw.Connection) -> dict[str, str]:
    """Texts of the messages that hold an assertion and a resolved time mention (sentence bounds need them)."""
    return dict(conn.execute(
        "SELECT m.message_id, m.text_raw FROM messages m WHERE m.message_id IN (SELECT message_id FROM assertions) "
        "AND m.message_id IN (SELECT message_id FROM time_mentions WHERE resolved_type IN ('instant','interval'))"))


def time_mentions_of_assertion_messages(conn: apsw.Connection) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows(conn, "SELECT time_mention_id, message_id, char_start, char_end, surface_text, resolved_type, "
                        "valid_from_utc, valid_to_utc, confidence FROM time_mentions WHERE message_id IN "
                        "(SELECT message_id FROM assertions) ORDER BY message_id, char_start, time_mention_id"):
        out.setdefault(r["message_id"], []).append(r)
    return out


def retractions_for_stage5(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT r.retraction_id, r.retraction_message_id, r.target_assertion_id, r.target_fact_key, "
                      "r.retraction_type, r.replacement_assertion_id, r.confidence, r.char_start, r.char_end, "
                      "r.surface_text, r.raw_retraction_json, m.role, m.created_at_utc, m.timestamp_quality, c.source_kind "
                      "FROM retractions r JOIN messages m ON m.message_id = r.retraction_message_id "
                      "JOIN conversations c ON c.conversation_id = m.conversation_id "
                      "ORDER BY r.retraction_message_id, r.char_start, r.retraction_id")


def predicate_ids(conn: apsw.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT canonical_label_norm, predicate_id FROM predicates"))


def entity_salience(conn: apsw.Connection) -> dict[str, float | None]:
    return dict(conn.execute("SELECT entity_id, salience_score FROM entities"))


def conflict_detected_at(conn: apsw.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT conflict_key, detected_at_utc FROM conflict_groups"))


def stored_history(conn: apsw.Connection) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows(conn, f"SELECT {', '.join(HISTORY_COLUMNS)} FROM assertion_tx_history "
                        f"ORDER BY assertion_id, version"):
        r["key"] = (r["status"], r["valid_time_type"], r["valid_from_utc"], r["valid_to_utc"],
                    r["valid_until_hint_utc"], r["temporal_superseded_by_assertion_id"],
                    r["retracted_by_retraction_id"], r["negated_by_assertion_id"], r["rule_id_applied"])
        out.setdefault(r["assertion_id"], []).append(r)
    return out


def clear_stage5(conn: apsw.Connection) -> None:
    """§5.2.1: the recomputed tables start empty each run (the history does not)."""
    conn.execute("DELETE FROM conflict_members")
    conn.execute("DELETE FROM conflict_groups")
    conn.execute("DELETE FROM assertion_temporalized")
    conn.execute("DELETE FROM invalidation_rules")


def insert_rules(conn: apsw.Connection, rule_rows: list[tuple]) -> None:
    conn.executemany("INSERT INTO invalidation_rules(rule_id, predicate_id, subject_entity_type, is_functional, "
                     "invalidation_policy, notes) VALUES (?,?,?,?,?,?)", rule_rows)


def insert_temporalized(conn: apsw.Connection, t_rows: list[tuple]) -> None:
    conn.executemany(insert_sql("assertion_temporalized", TEMPORALIZED_COLUMNS), t_rows)


def insert_conflicts(conn: apsw.Connection, groups: list[tuple], members: list[tuple]) -> None:
    conn.executemany("INSERT INTO conflict_groups(conflict_group_id, conflict_type, conflict_key, detected_at_utc, "
                     "raw_conflict_json) VALUES (?,?,?,?,?)", groups)
    conn.executemany("INSERT INTO conflict_members(conflict_group_id, assertion_id) VALUES (?,?)", members)


def close_history(conn: apsw.Connection, updates: list[tuple]) -> None:
    """[(tx_to, closed_reason, assertion_id, version)]."""
    conn.executemany("UPDATE assertion_tx_history SET tx_to_utc=?, closed_reason=? WHERE assertion_id=? AND version=?",
                     updates)


def insert_history(conn: apsw.Connection, h_rows: list[tuple]) -> None:
    conn.executemany(insert_sql("assertion_tx_history", HISTORY_COLUMNS), h_rows)


# -- reads for the CLI ------------------------------------------------------------------------------------------


def functional_predicate_labels(conn: apsw.Connection) -> set[str]:
    """Predicate labels some invalidation rule makes functional (one state closes the previous one)."""
    return {r[0] for r in conn.execute(
        "SELECT DISTINCT p.canonical_label_norm FROM invalidation_rules r JOIN predicates p ON p.predicate_id = "
        "r.predicate_id WHERE r.is_functional = 1 AND r.invalidation_policy = 'close_previous_on_newer_state'")}


def has_stage5(conn: apsw.Connection) -> bool:
    return bool(scalar(conn, "SELECT EXISTS(SELECT 1 FROM assertion_temporalized)"))


def temporal_of(conn: apsw.Connection, assertion_ids: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for i in range(0, len(assertion_ids), 500):
        chunk = assertion_ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        for r in rows(conn, f"SELECT * FROM assertion_temporalized WHERE assertion_id IN ({q})", chunk):
            out[r["assertion_id"]] = r
    return out


def versions_at(conn: apsw.Connection, assertion_ids: list[str], believed_at: str) -> dict[str, dict]:
    """The version of each assertion Kenning held at transaction time ``believed_at`` (absent = not yet known)."""
    out: dict[str, dict] = {}
    for i in range(0, len(assertion_ids), 500):
        chunk = assertion_ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        for r in rows(conn, f"SELECT * FROM assertion_tx_history WHERE assertion_id IN ({q}) AND tx_from_utc <= ? "
                            f"AND (tx_to_utc IS NULL OR tx_to_utc > ?)", [*chunk, believed_at, believed_at]):
            out[r["assertion_id"]] = r
    return out


def history_rows(conn: apsw.Connection, assertion_ids: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for i in range(0, len(assertion_ids), 500):
        chunk = assertion_ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        for r in rows(conn, f"SELECT * FROM assertion_tx_history WHERE assertion_id IN ({q}) "
                            f"ORDER BY assertion_id, version", chunk):
            out.setdefault(r["assertion_id"], []).append(r)
    return out


def conflicts(conn: apsw.Connection, types: list[str] | None = None) -> list[dict]:
    sql = "SELECT * FROM conflict_groups"
    params: list[Any] = []
    if types:
        sql += f" WHERE conflict_type IN ({','.join('?' * len(types))})"
        params = list(types)
    sql += " ORDER BY conflict_type, conflict_key"
    groups = rows(conn, sql, params)
    for g in groups:
        g["member_ids"] = [r[0] for r in conn.execute(
            "SELECT assertion_id FROM conflict_members WHERE conflict_group_id=? ORDER BY assertion_id",
            (g["conflict_group_id"],))]
    return groups


def retraction(conn: apsw.Connection, retraction_id: str) -> dict | None:
    found = rows(conn, "SELECT r.*, m.created_at_utc, m.text_raw FROM retractions r JOIN messages m ON "
                       "m.message_id = r.retraction_message_id WHERE r.retraction_id=?", (retraction_id,))
    return found[0] if found else None


def feed_rows(conn: apsw.Connection) -> list[dict]:
    """The user-grounded, non-question claims with their stage-5 state, for the conversation belief feed."""
    return rows(conn, """
        SELECT a.assertion_id, a.message_id, a.char_start, a.char_end, a.surface_text, a.polarity, a.modality,
               a.object_value, a.supersession_type, s.canonical_name AS subject_name, s.entity_key AS subject_key,
               o.canonical_name AS object_name, p.canonical_label_norm AS predicate, p.category,
               m.conversation_id, m.text_raw, t.status, t.valid_from_utc, t.valid_to_utc, t.valid_until_hint_utc,
               t.asserted_at_utc, t.superseded_at_utc, t.temporal_superseded_by_assertion_id,
               t.negated_by_assertion_id, json_extract(t.raw_temporalize_json, '$.has_explicit_valid_time') AS explicit
        FROM assertions a JOIN assertion_temporalized t USING(assertion_id)
        JOIN predicates p USING(predicate_id) JOIN entities s ON s.entity_id = a.subject_entity_id
        LEFT JOIN entities o ON o.entity_id = a.object_entity_id JOIN messages m ON m.message_id = a.message_id
        WHERE (a.asserted_role = 'user' OR a.has_user_corroboration = 1) AND a.modality <> 'question'
        ORDER BY a.assertion_id""")


def status_counts(conn: apsw.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT status, COUNT(*) FROM assertion_temporalized GROUP BY status ORDER BY status"))
