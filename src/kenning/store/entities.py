"""SQL of stages 2B and 3 (lexicon, entities, canonicalization) and the entity/mention/time lookups later
stages and the CLI use."""

from __future__ import annotations

from typing import Any, Iterator

import apsw

from kenning.store.connection import row, rows, scalar

ENTITY_COLUMNS = ("entity_id", "entity_type", "entity_key", "canonical_name", "aliases_json", "status",
                  "first_seen_at_utc", "last_seen_at_utc", "mention_count", "conversation_count", "salience_score",
                  "raw_stats_json")


# -- lexicon -------------------------------------------------------------------------------------------------------

def next_build_version(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COALESCE(MAX(build_version), 0) + 1 FROM lexicon_builds"))


def insert_build(conn: apsw.Connection, b: dict[str, Any]) -> None:
    conn.execute("INSERT INTO lexicon_builds(build_id, build_version, config_json, started_at_utc, completed_at_utc, "
                 "candidates_total, terms_selected, raw_stats_json, pipeline_run_id) VALUES (:build_id, "
                 ":build_version, :config_json, :started_at_utc, NULL, 0, 0, NULL, :pipeline_run_id)", b)


def finish_build(conn: apsw.Connection, build_id: str, completed: str, total: int, selected: int, stats: str) -> None:
    conn.execute("UPDATE lexicon_builds SET completed_at_utc=?, candidates_total=?, terms_selected=?, raw_stats_json=? "
                 "WHERE build_id=?", (completed, total, selected, stats, build_id))


def insert_term_candidates(conn: apsw.Connection, cand_rows: list[tuple]) -> None:
    conn.executemany(
        "INSERT INTO lexicon_term_candidates(candidate_id, build_id, generator, term_key, canonical_surface, "
        "aliases_json, total_count, user_weighted_count, conversation_count, code_likeness_ratio, context_diversity, "
        "score, is_selected, rejection_reason, evidence_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", cand_rows)


def insert_terms(conn: apsw.Connection, term_rows: list[tuple]) -> None:
    conn.executemany("INSERT INTO lexicon_terms(term_id, build_id, candidate_id, term_key, canonical_surface, "
                     "aliases_json, score, entity_type_hint) VALUES (?,?,?,?,?,?,?,?)", term_rows)


def latest_build(conn: apsw.Connection) -> dict | None:
    return row(conn, "SELECT * FROM lexicon_builds WHERE completed_at_utc IS NOT NULL "
                     "ORDER BY build_version DESC LIMIT 1")


def terms_of_build(conn: apsw.Connection, build_id: str) -> list[dict]:
    return rows(conn, "SELECT * FROM lexicon_terms WHERE build_id=? ORDER BY score DESC, term_key", (build_id,))


def term_candidates_of_build(conn: apsw.Connection, build_id: str, *, selected: bool | None = None,
                             limit: int | None = None) -> list[dict]:
    sql = "SELECT * FROM lexicon_term_candidates WHERE build_id=?"
    params: list = [build_id]
    if selected is not None:
        sql += " AND is_selected=?"
        params.append(1 if selected else 0)
    sql += " ORDER BY is_selected DESC, score DESC, user_weighted_count DESC, term_key"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return rows(conn, sql, params)


def rejection_counts(conn: apsw.Connection, build_id: str) -> dict[str, int]:
    return dict(conn.execute("SELECT rejection_reason, COUNT(*) FROM lexicon_term_candidates WHERE build_id=? AND "
                             "rejection_reason IS NOT NULL GROUP BY rejection_reason ORDER BY 1", (build_id,)))


# -- entities -------------------------------------------------------------------------------------------------------

def iter_mentions_for_entities(conn: apsw.Connection) -> Iterator[tuple]:
    """(mention_id, entity_id, entity_type_hint, surface_text, detector, confidence, raw_mention_json, role,
    conversation_id, created_at_utc, order_index, message_id) for every emitted mention."""
    yield from conn.execute(
        "SELECT em.mention_id, em.entity_id, em.entity_type_hint, em.surface_text, em.detector, em.confidence, "
        "em.raw_mention_json, m.role, m.conversation_id, m.created_at_utc, m.order_index, m.message_id "
        "FROM entity_mentions em JOIN messages m ON m.message_id = em.message_id")


def all_entities(conn: apsw.Connection) -> dict[str, dict]:
    return {r["entity_id"]: r for r in rows(conn, "SELECT * FROM entities")}


def insert_entities(conn: apsw.Connection, ent_rows: list[tuple]) -> None:
    conn.executemany(f"INSERT INTO entities ({', '.join(ENTITY_COLUMNS)}) VALUES ({', '.join('?' * len(ENTITY_COLUMNS))})",
                     ent_rows)


def update_entity_stats(conn: apsw.Connection, updates: list[tuple]) -> None:
    """[(aliases_json, first_seen, last_seen, mention_count, conversation_count, salience, raw_stats_json, id)]."""
    conn.executemany("UPDATE entities SET aliases_json=?, first_seen_at_utc=?, last_seen_at_utc=?, mention_count=?, "
                     "conversation_count=?, salience_score=?, raw_stats_json=? WHERE entity_id=?", updates)


def link_mentions(conn: apsw.Connection, links: list[tuple[str, str]]) -> None:
    """[(entity_id, mention_id)]."""
    conn.executemany("UPDATE entity_mentions SET entity_id=? WHERE mention_id=?", links)


def max_message_time(conn: apsw.Connection) -> str | None:
    return scalar(conn, "SELECT MAX(created_at_utc) FROM messages")


# -- stage 3 --------------------------------------------------------------------------------------------------------

def next_canon_seq(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COUNT(*) + 1 FROM entity_canonicalization_runs"))


def insert_canon_run(conn: apsw.Connection, r: dict[str, Any]) -> None:
    conn.execute("INSERT INTO entity_canonicalization_runs(run_id, method, model_name, model_version, config_json, "
                 "started_at_utc, completed_at_utc, entities_processed, names_changed, raw_stats_json, pipeline_run_id)"
                 " VALUES (:run_id, :method, NULL, NULL, :config_json, :started_at_utc, NULL, 0, 0, NULL, "
                 ":pipeline_run_id)", r)


def finish_canon_run(conn: apsw.Connection, run_id: str, completed: str, processed: int, changed: int,
                     stats: str) -> None:
    conn.execute("UPDATE entity_canonicalization_runs SET completed_at_utc=?, entities_processed=?, names_changed=?, "
                 "raw_stats_json=? WHERE run_id=?", (completed, processed, changed, stats, run_id))


def insert_name_history(conn: apsw.Connection, hist_rows: list[tuple]) -> None:
    conn.executemany("INSERT INTO entity_canonical_name_history(history_id, entity_id, run_id, previous_name, "
                     "canonical_name, selection_method, confidence, selected_at_utc, raw_selection_json) "
                     "VALUES (?,?,?,?,?,?,?,?,?)", hist_rows)


def set_canonical_names(conn: apsw.Connection, updates: list[tuple[str, str]]) -> None:
    """[(canonical_name, entity_id)]."""
    conn.executemany("UPDATE entities SET canonical_name=? WHERE entity_id=?", updates)


def active_entities_ordered(conn: apsw.Connection, salience_first: bool) -> list[dict]:
    order = ("salience_score IS NULL, salience_score DESC, entity_type, entity_key, entity_id" if salience_first
             else "entity_type, entity_key, entity_id")
    return rows(conn, f"SELECT entity_id, entity_type, entity_key, canonical_name, salience_score FROM entities "
                      f"WHERE status='active' ORDER BY {order}")


def mentions_for_canonicalization(conn: apsw.Connection) -> Iterator[tuple]:
    """(entity_id, mention_id, surface_text, detector, confidence, role, created_at_utc, conversation_id,
    order_index, message_id) ordered by entity."""
    yield from conn.execute(
        "SELECT em.entity_id, em.mention_id, em.surface_text, em.detector, em.confidence, m.role, m.created_at_utc, "
        "m.conversation_id, m.order_index, m.message_id FROM entity_mentions em "
        "JOIN messages m ON m.message_id = em.message_id WHERE em.entity_id IS NOT NULL ORDER BY em.entity_id")


def history_of(conn: apsw.Connection, entity_id: str) -> list[dict]:
    return rows(conn, "SELECT * FROM entity_canonical_name_history WHERE entity_id=? ORDER BY selected_at_utc, "
                      "history_id", (entity_id,))


# -- lookups for stage 4 and the CLI ------------------------------------------------------------------------------------

def list_entities(conn: apsw.Connection, entity_type: str | None = None, limit: int | None = None,
                  include_empty: bool = False) -> list[dict]:
    sql = "SELECT * FROM entities WHERE status='active'"
    params: list = []
    if entity_type:
        sql += " AND entity_type=?"
        params.append(entity_type)
    if not include_empty:
        sql += " AND mention_count > 0"
    sql += " ORDER BY salience_score IS NULL, salience_score DESC, mention_count DESC, canonical_name, entity_id"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return rows(conn, sql, params)


def count_entities(conn: apsw.Connection, entity_type: str | None = None) -> int:
    """How many ``list_entities`` lists without a limit (for "showing 50 of 1,234")."""
    sql = "SELECT COUNT(*) FROM entities WHERE status='active' AND mention_count > 0"
    params: list = []
    if entity_type:
        sql += " AND entity_type=?"
        params.append(entity_type)
    return int(conn.execute(sql, params).fetchone()[0])


def get_entity(conn: apsw.Connection, entity_id: str) -> dict | None:
    return row(conn, "SELECT * FROM entities WHERE entity_id=?", (entity_id,))


def entity_by_key(conn: apsw.Connection, entity_type: str, entity_key: str) -> dict | None:
    return row(conn, "SELECT * FROM entities WHERE entity_type=? AND entity_key=? AND status='active'",
               (entity_type, entity_key))


def entities_by_name(conn: apsw.Connection, name: str) -> list[dict]:
    """Active entities whose canonical name equals ``name`` (case-insensitive), best first."""
    return rows(conn, "SELECT * FROM entities WHERE status='active' AND canonical_name = ? COLLATE NOCASE "
                      "ORDER BY salience_score IS NULL, salience_score DESC, entity_id", (name,))


def entities_by_alias(conn: apsw.Connection, alias: str) -> list[dict]:
    """Active entities with ``alias`` among their aliases (case-insensitive), best first."""
    return rows(conn, "SELECT e.* FROM entities e, json_each(e.aliases_json) a WHERE e.status='active' AND "
                      "a.value = ? COLLATE NOCASE GROUP BY e.entity_id "
                      "ORDER BY e.salience_score IS NULL, e.salience_score DESC, e.entity_id", (alias,))


def mentions_of_entity(conn: apsw.Connection, entity_id: str, limit: int | None = None) -> list[dict]:
    sql = ("SELECT em.mention_id, em.message_id, em.char_start, em.char_end, em.surface_text, em.detector, "
           "em.confidence, m.role, m.created_at_utc, m.timestamp_quality, m.conversation_id, c.title, m.text_raw "
           "FROM entity_mentions em JOIN messages m ON m.message_id = em.message_id "
           "JOIN conversations c ON c.conversation_id = m.conversation_id WHERE em.entity_id=? "
           "ORDER BY m.created_at_utc IS NULL, m.created_at_utc, m.conversation_id, m.order_index, em.char_start")
    params: list = [entity_id]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return rows(conn, sql, params)


def mentions_of_message(conn: apsw.Connection, message_id: str) -> list[dict]:
    """Emitted mentions of one message with their entity and reliability inputs (for assertion extraction)."""
    return rows(conn, "SELECT em.*, e.entity_type, e.entity_key, e.canonical_name FROM entity_mentions em "
                      "LEFT JOIN entities e ON e.entity_id = em.entity_id WHERE em.message_id=? "
                      "ORDER BY em.char_start IS NULL, em.char_start, em.char_end", (message_id,))


def time_mentions_of_message(conn: apsw.Connection, message_id: str) -> list[dict]:
    return rows(conn, "SELECT * FROM time_mentions WHERE message_id=? ORDER BY char_start", (message_id,))


def best_detector_tiers(conn: apsw.Connection) -> dict[str, str]:
    """entity_id → the detectors of its mentions (callers map them to tiers with detect.detectors.detector_tier)."""
    return dict(conn.execute("SELECT entity_id, group_concat(DISTINCT detector) FROM entity_mentions "
                             "WHERE entity_id IS NOT NULL GROUP BY entity_id"))


def entities_by_key(conn: apsw.Connection, key: str) -> list[dict[str, Any]]:
    """Active entities with this normalized key, most salient first."""
    return rows(conn, "SELECT * FROM entities WHERE status='active' AND entity_key=? "
                      "ORDER BY salience_score DESC, entity_id", (key,))


def entities_by_id_prefix(conn: apsw.Connection, prefix: str) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM entities WHERE entity_id LIKE ? ORDER BY entity_id", (prefix + "%",))
