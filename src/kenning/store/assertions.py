"""SQL of stage 4 (seed 001 §4): predicates, assertions, retractions, the inputs stage 4 reads, and the queries
stage 5 and the CLI use."""

from __future__ import annotations

import hashlib
from typing import Any, Iterable, Iterator

import apsw
import orjson

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, insert_sql, marks, update_sql

ASSERTION_COLUMNS = (
    "assertion_id", "message_id", "assertion_key", "fact_key", "subject_entity_id", "subject_detection_tier",
    "predicate_id", "object_entity_id", "object_detection_tier", "object_value_type", "object_value",
    "object_signature", "temporal_qualifier_type", "temporal_qualifier_id", "modality", "polarity", "asserted_role",
    "asserted_at_utc", "confidence_extraction", "confidence_grounding", "confidence_final", "has_user_corroboration",
    "superseded_by_assertion_id", "supersession_type", "char_start", "char_end", "surface_text", "extraction_method",
    "extraction_model", "raw_assertion_json", "corroboration_json",
)
# Columns that may change without the assertion's identity changing (docs/decisions.md A3).
ASSERTION_MUTABLE = ("confidence_final", "has_user_corroboration", "corroboration_json",
                     "superseded_by_assertion_id", "supersession_type")
RETRACTION_COLUMNS = (
    "retraction_id", "retraction_message_id", "target_assertion_id", "target_fact_key", "retraction_type",
    "replacement_assertion_id", "confidence", "char_start", "char_end", "surface_text", "raw_retraction_json",
)
PREDICATE_COLUMNS = ("predicate_id", "canonical_label", "canonical_label_norm", "inverse_label", "category", "arity",
                     "value_type_constraint", "first_seen_at_utc", "assertion_count", "raw_predicate_json")


def table_exists(conn: apsw.Connection, name: str) -> bool:
    return scalar(conn, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)) is not None


# -- speakers and transcripts ------------------------------------------------------------------------------------


def transcript_participants(conn: apsw.Connection) -> dict[str, list[dict[str, Any]]]:
    """conversation_id → participants (name, participant_key, aliases, is_self); {} when the table is absent."""
    if not table_exists(conn, "transcript_participants"):
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for conv, key, name, aliases, is_self in conn.execute(
            "SELECT conversation_id, participant_key, name, aliases_json, is_self FROM transcript_participants "
            "ORDER BY conversation_id, participant_key"):
        out.setdefault(conv, []).append({"participant_key": key, "name": name,
                                         "aliases": orjson.loads(aliases) if aliases else [], "is_self": bool(is_self)})
    return out


def transcript_conversation_ids(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT conversation_id FROM conversations WHERE source_kind='transcript'")]


def participants_digest(conn: apsw.Connection) -> str | None:
    if not table_exists(conn, "transcript_participants"):
        return None
    h = hashlib.sha256()
    for r in conn.execute("SELECT conversation_id, participant_key, name, aliases_json, is_self "
                          "FROM transcript_participants ORDER BY conversation_id, participant_key"):
        h.update(orjson.dumps(list(r)))
    return h.hexdigest()


# -- entities ----------------------------------------------------------------------------------------------------


def entity_exists(conn: apsw.Connection, entity_id: str) -> dict | None:
    return row(conn, "SELECT entity_id, entity_type, entity_key, canonical_name FROM entities WHERE entity_id=?",
               (entity_id,))


def iter_entities_for_index(conn: apsw.Connection) -> Iterator[tuple]:
    """(entity_id, type, key, canonical_name, aliases_json, salience, mention_count, first_seen, last_seen,
    detectors) of every active entity stage 4 may resolve to: entities stage 4 itself created are left out while
    nothing else mentions them (docs/decisions.md A11)."""
    yield from conn.execute(
        "SELECT e.entity_id, e.entity_type, e.entity_key, e.canonical_name, e.aliases_json, e.salience_score, "
        "e.mention_count, e.first_seen_at_utc, e.last_seen_at_utc, d.detectors FROM entities e "
        "LEFT JOIN (SELECT entity_id, group_concat(DISTINCT detector) AS detectors FROM entity_mentions "
        "WHERE entity_id IS NOT NULL GROUP BY entity_id) d ON d.entity_id = e.entity_id "
        "WHERE e.status='active' AND NOT (e.mention_count = 0 AND e.entity_id IN "
        "(SELECT entity_id FROM assertion_created_entities)) ORDER BY e.entity_id")


def insert_created_entities(conn: apsw.Connection, ent_rows: list[tuple], created_rows: list[tuple]) -> None:
    """Entities made while grounding: ``entities`` rows (as stage 2B would write a never-mentioned entity) plus
    their ``assertion_created_entities`` marker. Existing ids are left alone."""
    if ent_rows:
        conn.executemany(
            "INSERT OR IGNORE INTO entities(entity_id, entity_type, entity_key, canonical_name, aliases_json, status, "
            "first_seen_at_utc, last_seen_at_utc, mention_count, conversation_count, salience_score, raw_stats_json) "
            "VALUES (?,?,?,?,?,'active',NULL,NULL,0,0,0.0,?)", ent_rows)
    if created_rows:
        conn.executemany("INSERT OR IGNORE INTO assertion_created_entities(entity_id, reason, surface, first_run_id) "
                         "VALUES (?,?,?,?)", created_rows)


def delete_unused_created_entities(conn: apsw.Connection) -> int:
    """Entities stage 4 created that nothing uses any more (no assertion, mention or name history): their marker
    and their row go (docs/decisions.md A11). Returns how many."""
    ids = [r[0] for r in conn.execute(
        "SELECT c.entity_id FROM assertion_created_entities c WHERE "
        "NOT EXISTS (SELECT 1 FROM assertions a WHERE a.subject_entity_id = c.entity_id) AND "
        "NOT EXISTS (SELECT 1 FROM assertions a WHERE a.object_entity_id = c.entity_id) AND "
        "NOT EXISTS (SELECT 1 FROM entity_mentions em WHERE em.entity_id = c.entity_id) AND "
        "NOT EXISTS (SELECT 1 FROM entity_canonical_name_history h WHERE h.entity_id = c.entity_id) "
        "ORDER BY c.entity_id")]
    if ids:
        conn.executemany("DELETE FROM assertion_created_entities WHERE entity_id=?", [(i,) for i in ids])
        conn.executemany("DELETE FROM entities WHERE entity_id=?", [(i,) for i in ids])
    return len(ids)


def ensure_person_entity(conn: apsw.Connection, entity_id: str, key: str, name: str, reason: str,
                         run_id: str | None) -> None:
    from kenning.sources.jcs import canonicalize

    insert_created_entities(conn, [(entity_id, "PERSON", key, name, canonicalize([name]),
                                    canonicalize({"created_by": "stage4", "reason": reason}))],
                            [(entity_id, reason, name, run_id or "")])


def set_entity_assertion_counts(conn: apsw.Connection, enabled: bool) -> None:
    """§4.7.5: only when configured; otherwise the column stays NULL (stage 2 values are preserved)."""
    if enabled:
        conn.execute("UPDATE entities SET assertion_count = (SELECT COUNT(*) FROM assertions a WHERE "
                     "a.subject_entity_id = entities.entity_id OR a.object_entity_id = entities.entity_id)")
    else:
        conn.execute("UPDATE entities SET assertion_count = NULL WHERE assertion_count IS NOT NULL")


# -- stage-4 inputs ----------------------------------------------------------------------------------------------


def conversation_ids(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT conversation_id FROM messages WHERE text_raw IS NOT NULL ORDER BY conversation_id")]


_MSG_COLS = ("message_id", "conversation_id", "role", "order_index", "created_at_utc", "timestamp_quality",
             "text_raw", "code_fence_ranges_json", "blockquote_ranges_json", "citation_ranges_json", "author_name",
             "recipient", "is_hidden", "export_content_type", "parent_id", "context_kinds", "part_types",
             "source_kind", "title")


def messages_of_conversations(conn: apsw.Connection, conv_ids: list[str]) -> list[dict[str, Any]]:
    """Every message of these conversations in the seed's order (conversation_id, order_index, message_id), with
    the content kinds of its parts (hidden reasoning, model memory, …) and the conversation's source kind."""
    out: list[dict[str, Any]] = []
    for chunk in chunks(conv_ids):
        q = ",".join("?" * len(chunk))
        for r in conn.execute(
                f"SELECT m.message_id, m.conversation_id, m.role, m.order_index, m.created_at_utc, m.timestamp_quality, "
                f"m.text_raw, m.code_fence_ranges_json, m.blockquote_ranges_json, m.citation_ranges_json, "
                f"m.author_name, m.recipient, m.is_hidden, m.export_content_type, m.parent_id, "
                f"(SELECT group_concat(DISTINCT json_extract(p.metadata_json, '$.context_kind')) FROM message_parts p "
                f" WHERE p.message_id = m.message_id), "
                f"(SELECT group_concat(DISTINCT p.part_type) FROM message_parts p WHERE p.message_id = m.message_id), "
                f"c.source_kind, c.title FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id "
                f"WHERE m.conversation_id IN ({q})", chunk):
            out.append(dict(zip(_MSG_COLS, r)))
    out.sort(key=lambda m: (m["conversation_id"], m["order_index"], m["message_id"]))
    return out


def mentions_of_conversations(conn: apsw.Connection, conv_ids: list[str]) -> dict[str, list[tuple]]:
    """message_id → [(char_start, char_end, entity_id, detector, confidence, entity_type, surface_text)] sorted."""
    out: dict[str, list[tuple]] = {}
    for chunk in chunks(conv_ids):
        q = ",".join("?" * len(chunk))
        for r in conn.execute(
                f"SELECT em.message_id, em.char_start, em.char_end, em.entity_id, em.detector, em.confidence, "
                f"e.entity_type, em.surface_text FROM entity_mentions em JOIN messages m ON m.message_id = em.message_id "
                f"LEFT JOIN entities e ON e.entity_id = em.entity_id WHERE m.conversation_id IN ({q}) "
                f"AND em.entity_id IS NOT NULL", chunk):
            out.setdefault(r[0], []).append(tuple(r[1:]))
    for v in out.values():
        v.sort(key=lambda t: (t[0] is None, t[0] or 0, t[1] or 0, t[2]))
    return out


_TIME_COLS = ("time_mention_id", "message_id", "char_start", "char_end", "surface_text", "resolved_type",
              "valid_from_utc", "valid_to_utc", "resolution_granularity", "confidence")


def time_mentions_of_conversations(conn: apsw.Connection, conv_ids: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for chunk in chunks(conv_ids):
        q = ",".join("?" * len(chunk))
        for r in conn.execute(
                f"SELECT t.time_mention_id, t.message_id, t.char_start, t.char_end, t.surface_text, t.resolved_type, "
                f"t.valid_from_utc, t.valid_to_utc, t.resolution_granularity, t.confidence FROM time_mentions t "
                f"JOIN messages m ON m.message_id = t.message_id WHERE m.conversation_id IN ({q})", chunk):
            d = dict(zip(_TIME_COLS, r))
            out.setdefault(d["message_id"], []).append(d)
    for v in out.values():
        v.sort(key=lambda t: (t["char_start"], t["time_mention_id"]))
    return out


def message_digest(conn: apsw.Connection) -> str:
    """What stage 4 reads of the raw layer, in one hash: ids, raw bytes, tree order."""
    h = hashlib.sha256()
    for r in conn.execute("SELECT message_id, raw_sha256, order_index, conversation_id FROM messages "
                          "ORDER BY message_id"):
        h.update(orjson.dumps(list(r)))
    return h.hexdigest()


# -- predicates --------------------------------------------------------------------------------------------------


def all_predicates(conn: apsw.Connection) -> dict[str, dict]:
    return {r["canonical_label_norm"]: r for r in rows(conn, "SELECT * FROM predicates")}


def insert_predicates(conn: apsw.Connection, pred_rows: list[tuple]) -> None:
    if pred_rows:
        conn.executemany(insert_sql("predicates", PREDICATE_COLUMNS), pred_rows)


def refresh_predicate_stats(conn: apsw.Connection) -> int:
    """§4.7.5: assertion_count recomputed by COUNT (and first_seen_at_utc as the earliest asserted_at, A14).
    Returns how many rows changed."""
    before = conn.total_changes()
    conn.execute(
        "UPDATE predicates SET assertion_count = s.n, first_seen_at_utc = s.first FROM ("
        " SELECT p.predicate_id AS pid, COUNT(a.assertion_id) AS n, MIN(a.asserted_at_utc) AS first "
        " FROM predicates p LEFT JOIN assertions a ON a.predicate_id = p.predicate_id GROUP BY p.predicate_id) s "
        "WHERE predicates.predicate_id = s.pid AND (predicates.assertion_count IS NOT s.n "
        "OR predicates.first_seen_at_utc IS NOT s.first)")
    return int(conn.total_changes() - before)


def count_model_assertions(conn: apsw.Connection) -> int:
    """§4.8.1 ``assertions_extracted``: rows whose extraction_method is llm or hybrid."""
    return int(conn.execute("SELECT COUNT(*) FROM assertions WHERE extraction_method IN ('llm', 'hybrid')"
                            ).fetchone()[0])


# -- assertions and retractions: diff-based writes ------------------------------------------------------------------


def _rows_of_conversations(conn: apsw.Connection, select_from: str, conv_ids: list[str]) -> dict[str, tuple]:
    """first column -> row of ``select_from`` (a SELECT … JOIN messages m …) for messages of these conversations."""
    out: dict[str, tuple] = {}
    for chunk in chunks(conv_ids):
        q = ",".join("?" * len(chunk))
        for r in conn.execute(f"{select_from} WHERE m.conversation_id IN ({q})", chunk):
            out[r[0]] = tuple(r)
    return out


def assertions_of_conversations(conn: apsw.Connection, conv_ids: list[str]) -> dict[str, tuple]:
    """assertion_id → the stored row (ASSERTION_COLUMNS order) of every assertion in these conversations."""
    cols = ", ".join(f"a.{c}" for c in ASSERTION_COLUMNS)
    return _rows_of_conversations(
        conn, f"SELECT {cols} FROM assertions a JOIN messages m ON m.message_id = a.message_id", conv_ids)


def retractions_of_conversations(conn: apsw.Connection, conv_ids: list[str]) -> dict[str, tuple]:
    cols = ", ".join(f"r.{c}" for c in RETRACTION_COLUMNS)
    return _rows_of_conversations(
        conn, f"SELECT {cols} FROM retractions r JOIN messages m ON m.message_id = r.retraction_message_id", conv_ids)


def stored_conversation_ids(conn: apsw.Connection) -> set[str]:
    """Conversations that hold stage-4 rows (assertions or retractions)."""
    return {r[0] for r in conn.execute(
        "SELECT DISTINCT m.conversation_id FROM assertions a JOIN messages m ON m.message_id = a.message_id "
        "UNION SELECT DISTINCT m.conversation_id FROM retractions r JOIN messages m "
        "ON m.message_id = r.retraction_message_id")}


def delete_assertions(conn: apsw.Connection, ids: list[str]) -> None:
    if not ids:
        return
    params = [(i,) for i in ids]
    # links into rows about to go are cleared first; the stage recomputes the links it still wants
    conn.executemany("UPDATE assertions SET superseded_by_assertion_id=NULL, supersession_type=NULL "
                     "WHERE superseded_by_assertion_id=?", params)
    conn.executemany("UPDATE retractions SET target_assertion_id=NULL WHERE target_assertion_id=?", params)
    conn.executemany("UPDATE retractions SET replacement_assertion_id=NULL WHERE replacement_assertion_id=?", params)
    conn.executemany("DELETE FROM assertions WHERE assertion_id=?", params)


def insert_assertions(conn: apsw.Connection, a_rows: list[tuple]) -> None:
    if a_rows:
        conn.executemany(insert_sql("assertions", ASSERTION_COLUMNS), a_rows)


def update_assertions(conn: apsw.Connection, a_rows: list[tuple]) -> None:
    """Full rows (ASSERTION_COLUMNS order), matched by assertion_id: a stored row that drifted (a link cleared by
    an upstream recompute, a new corroboration) is brought back to what stage 4 computes now."""
    if a_rows:
        cols = ASSERTION_COLUMNS[1:]
        conn.executemany(update_sql("assertions", "assertion_id", cols),
                         [(*r[1:], r[0]) for r in a_rows])


def delete_retractions(conn: apsw.Connection, ids: list[str]) -> None:
    if ids:
        conn.executemany("DELETE FROM retractions WHERE retraction_id=?", [(i,) for i in ids])


def insert_retractions(conn: apsw.Connection, r_rows: list[tuple]) -> None:
    if r_rows:
        conn.executemany(insert_sql("retractions", RETRACTION_COLUMNS), r_rows)


def update_retractions(conn: apsw.Connection, r_rows: list[tuple]) -> None:
    """Full rows (RETRACTION_COLUMNS order); matched by retraction_id."""
    if r_rows:
        cols = RETRACTION_COLUMNS[1:]
        conn.executemany(update_sql("retractions", "retraction_id", cols),
                         [(*r[1:], r[0]) for r in r_rows])


def set_assertion_key_unique(conn: apsw.Connection, unique: bool) -> None:
    """§4.7.2 keep_all needs the UNIQUE index on assertion_key dropped; the other policies keep it."""
    info = row(conn, "SELECT sql FROM sqlite_master WHERE type='index' AND name='idx_assertions_key'")
    is_unique = bool(info and "UNIQUE" in (info["sql"] or "").upper())
    if info and is_unique == unique:
        return
    conn.execute("DROP INDEX IF EXISTS idx_assertions_key")
    conn.execute(f"CREATE {'UNIQUE ' if unique else ''}INDEX idx_assertions_key ON assertions(assertion_key)")


# -- global links (retractions that look beyond their conversation) ---------------------------------------------------


def retractions_needing_global_links(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT r.*, m.conversation_id, m.order_index, m.created_at_utc FROM retractions r "
                      "JOIN messages m ON m.message_id = r.retraction_message_id "
                      "WHERE json_extract(r.raw_retraction_json, '$.target.scope') = 'global' "
                      "ORDER BY r.retraction_message_id, r.char_start, r.retraction_id")


def assertions_by_fact_keys(conn: apsw.Connection, fact_keys: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for chunk in chunks(sorted(set(fact_keys))):
        q = ",".join("?" * len(chunk))
        for r in rows(conn, f"SELECT a.assertion_id, a.fact_key, a.asserted_at_utc, a.polarity, a.modality, "
                            f"a.message_id, a.subject_entity_id, a.asserted_role, m.order_index, m.conversation_id "
                            f"FROM assertions a JOIN messages m ON m.message_id = a.message_id "
                            f"WHERE a.fact_key IN ({q})", chunk):
            out.setdefault(r["fact_key"], []).append(r)
    return out


def assertions_about_entities(conn: apsw.Connection, entity_ids: list[str]) -> dict[str, list[dict]]:
    """entity_id → assertions whose subject or object it is."""
    out: dict[str, list[dict]] = {}
    for chunk in chunks(sorted(set(entity_ids))):
        q = ",".join("?" * len(chunk))
        for r in rows(conn, f"SELECT a.assertion_id, a.fact_key, a.asserted_at_utc, a.polarity, a.modality, "
                            f"a.subject_entity_id, a.object_entity_id, a.message_id, a.asserted_role, m.order_index, "
                            f"m.conversation_id FROM assertions a JOIN messages m ON m.message_id = a.message_id "
                            f"WHERE a.subject_entity_id IN ({q}) OR a.object_entity_id IN ({q})", chunk + chunk):
            for eid in {r["subject_entity_id"], r["object_entity_id"]} & set(chunk):
                out.setdefault(eid, []).append(r)
    return out


def set_retraction_targets(conn: apsw.Connection, updates: list[tuple]) -> None:
    """[(target_assertion_id, target_fact_key, raw_retraction_json, retraction_id)]."""
    if updates:
        conn.executemany("UPDATE retractions SET target_assertion_id=?, target_fact_key=?, raw_retraction_json=? "
                         "WHERE retraction_id=?", updates)


# -- reads for stage 5, the CLI and the demo ------------------------------------------------------------------------


def assertion(conn: apsw.Connection, assertion_id: str) -> dict | None:
    return row(conn, "SELECT * FROM assertions WHERE assertion_id=?", (assertion_id,))


def iter_assertions_in_order(conn: apsw.Connection) -> Iterator[dict]:
    """Every assertion with its message's order keys, in stage 5's order (conversation_id, order_index, message_id,
    assertion_id), joined with the message time quality and the predicate label stage 5 needs."""
    cur = conn.execute(
        "SELECT a.*, m.conversation_id, m.order_index, m.timestamp_quality, p.canonical_label_norm AS predicate_label, "
        "e.entity_type AS subject_entity_type FROM assertions a JOIN messages m ON m.message_id = a.message_id "
        "JOIN predicates p ON p.predicate_id = a.predicate_id JOIN entities e ON e.entity_id = a.subject_entity_id "
        "ORDER BY m.conversation_id, m.order_index, m.message_id, a.assertion_id")
    names = [d[0] for d in cur.getdescription()]
    for r in cur:
        yield dict(zip(names, r))


def retractions_in_order(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT r.*, m.role, m.created_at_utc, m.conversation_id, m.order_index FROM retractions r "
                      "JOIN messages m ON m.message_id = r.retraction_message_id "
                      "ORDER BY r.retraction_message_id, r.char_start, r.retraction_id")


def predicate_by_label(conn: apsw.Connection, label_norm: str) -> dict | None:
    return row(conn, "SELECT * FROM predicates WHERE canonical_label_norm=?", (label_norm,))


FACTS_SELECT = (
    "SELECT a.assertion_id, a.message_id, a.subject_entity_id, s.canonical_name AS subject_name, "
    "s.entity_type AS subject_type, p.canonical_label AS predicate, p.category AS predicate_category, "
    "p.inverse_label, a.object_entity_id, o.canonical_name AS object_name, o.entity_type AS object_type, "
    "a.object_value_type, a.object_value, a.modality, a.polarity, a.asserted_role, a.asserted_at_utc, "
    "a.confidence_extraction, a.confidence_grounding, a.confidence_final, a.has_user_corroboration, "
    "a.superseded_by_assertion_id, a.supersession_type, a.char_start, a.char_end, a.surface_text, "
    "a.extraction_method, a.extraction_model, json_extract(a.raw_assertion_json, '$.extraction.aspect') AS aspect, "
    "a.temporal_qualifier_type, t.surface_text AS qualifier_surface, "
    "t.valid_from_utc AS qualifier_from, t.valid_to_utc AS qualifier_to, m.created_at_utc, "
    "m.timestamp_quality, m.text_raw, m.role AS message_role, m.author_name, m.is_current_branch, "
    "c.title AS conversation_title, "
    "c.conversation_id, (SELECT group_concat(r.retraction_type || ':' || r.retraction_id) FROM retractions r "
    " WHERE r.target_assertion_id = a.assertion_id) AS retracted_by "
    "FROM assertions a JOIN predicates p ON p.predicate_id = a.predicate_id "
    "JOIN entities s ON s.entity_id = a.subject_entity_id LEFT JOIN entities o ON o.entity_id = a.object_entity_id "
    "JOIN messages m ON m.message_id = a.message_id JOIN conversations c ON c.conversation_id = m.conversation_id "
    "LEFT JOIN time_mentions t ON t.time_mention_id = a.temporal_qualifier_id")
# `kenning facts`' order: oldest message first (no time last), then position in the message
FACTS_ORDER = (" ORDER BY m.created_at_utc IS NULL, m.created_at_utc, c.conversation_id, m.order_index, "
               "a.char_start, a.assertion_id")


def facts(conn: apsw.Connection, *, subject_ids: list[str] | None = None, predicate_norms: list[str] | None = None,
          role: str | None = None, include_questions: bool = True, limit: int | None = None,
          offset: int = 0) -> list[dict]:
    """Assertions for ``kenning facts``: with subject/object names, predicate, quote, message date, conversation
    title, and whether a later correction or retraction points at them — in ``FACTS_ORDER``, the first ``limit``
    after skipping ``offset`` (a page: callers that filter further read page after page, never every row).

    Two steps (B40–B41): the ids first, each filter column one indexed arm ordered by ``message_order_key`` (the
    message part of ``FACTS_ORDER`` as one text, migration 0021), arms merged by UNION (an OR over two columns
    would defeat both indexes), LIMIT taken there; then the full rows of those ids only, ordered by FACTS_ORDER."""
    pick = facts_pick(conn, subject_ids=subject_ids, predicate_norms=predicate_norms, role=role,
                      include_questions=include_questions, limit=limit, offset=offset)
    if pick is None:
        return []
    ids_sql, params = pick
    sql = (f"WITH picked AS MATERIALIZED ({ids_sql}) " + FACTS_SELECT
           + " WHERE a.assertion_id IN (SELECT assertion_id FROM picked)" + FACTS_ORDER)
    return rows(conn, sql, params)


def facts_pick(conn: apsw.Connection, *, subject_ids: list[str] | None = None,
               predicate_norms: list[str] | None = None, role: str | None = None, include_questions: bool = True,
               limit: int | None = None, offset: int = 0) -> tuple[str, list[Any]] | None:
    """The ids step of ``facts``: (SQL, params) of the first ``limit`` assertion ids in order after ``offset``, or
    None when a predicate filter names no predicate."""
    rest: list[str] = []
    rest_params: list[Any] = []
    arms: list[tuple[str, Any]] = []
    if predicate_norms:
        q = marks(len(predicate_norms))
        pids = [r for (r,) in conn.execute(f"SELECT predicate_id FROM predicates WHERE canonical_label_norm IN ({q}) "
                                           f"OR category IN ({q}) ORDER BY predicate_id",
                                           tuple(predicate_norms) + tuple(predicate_norms))]
        if not pids:
            return None
        if subject_ids and not _predicate_drives(conn, subject_ids, pids):
            rest.append(f"+a.predicate_id IN ({marks(len(pids))})")
            rest_params += pids
        else:
            arms += [("a.predicate_id", pid) for pid in pids]
            if subject_ids:  # the subject side as a row filter (B43)
                q = marks(len(subject_ids))
                rest.append(f"(+a.subject_entity_id IN ({q}) OR +a.object_entity_id IN ({q}))")
                rest_params += list(subject_ids) + list(subject_ids)
                subject_ids = None
    if subject_ids:
        arms += [(col, sid) for sid in dict.fromkeys(subject_ids)
                 for col in ("a.subject_entity_id", "a.object_entity_id")]
    if role:
        rest.append("+a.asserted_role=?")
        rest_params.append(role)
    if not include_questions:
        rest.append("+a.modality <> 'question'")
    pick = "SELECT a.assertion_id, a.message_order_key AS k, a.char_start AS cs FROM assertions a"
    params: list[Any] = []
    if arms:
        parts = []
        for col, value in arms:
            parts.append(f"{pick} WHERE {' AND '.join([f'{col}=?'] + rest)}")
            params += [value] + rest_params
        ids_sql = " UNION ".join(parts)
    else:  # every assertion (but --role / --no-questions): the key's own index, read in order
        ids_sql = pick + " INDEXED BY idx_assertions_order" + (f" WHERE {' AND '.join(rest)}" if rest else "")
        params += rest_params
    ids_sql += " ORDER BY k, cs, assertion_id"
    if limit is not None or offset:
        ids_sql += " LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
    return ids_sql, params


def count_facts(conn: apsw.Connection, *, subject_ids: list[str] | None = None,
                predicate_norms: list[str] | None = None, role: str | None = None,
                include_questions: bool = True) -> int:
    """How many assertions ``facts`` would list without a limit (for "showing 200 of 2,068")."""
    pick = facts_pick(conn, subject_ids=subject_ids, predicate_norms=predicate_norms, role=role,
                      include_questions=include_questions)
    if pick is None:
        return 0
    ids_sql, params = pick
    return int(scalar(conn, f"SELECT COUNT(*) FROM ({ids_sql})", params))


def facts_by_ids(conn: apsw.Connection, ids: Iterable[str]) -> list[dict]:
    """``facts`` rows of these assertions (unknown ids skipped; order: by chunk, unspecified) — for commands that
    need a few assertions' views, not every one (B44)."""
    out: list[dict] = []
    for part in chunks(sorted(set(ids))):
        out += rows(conn, FACTS_SELECT + f" WHERE a.assertion_id IN ({marks(len(part))})", part)
    return out


PREDICATE_DRIVE_CAP = 20000  # B43: count at most this many index entries to choose the driving side


def _predicate_drives(conn: apsw.Connection, subject_ids: list[str], pids: list[str]) -> bool:
    """With both --about and --predicate: whether the predicate side has fewer rows than the subject side (so its
    indexes lead and the subject is the row filter). Counts read index entries only, each capped."""
    cap = PREDICATE_DRIVE_CAP
    count = lambda col, v, c: scalar(conn, f"SELECT COUNT(*) FROM (SELECT 1 FROM assertions a WHERE {col}=? LIMIT ?)",  # noqa: E731
                                     (v, c))
    n_pred = 0
    for pid in pids:
        n_pred += count("a.predicate_id", pid, cap + 1 - n_pred)
        if n_pred > cap:
            return False
    n_subj = 0
    for sid in subject_ids:
        for col in ("a.subject_entity_id", "a.object_entity_id"):
            n_subj += count(col, sid, n_pred + 1 - n_subj)
            if n_subj > n_pred:
                return True
    return False


def assertion_counts(conn: apsw.Connection) -> dict[str, Any]:
    return {
        "assertions": int(scalar(conn, "SELECT COUNT(*) FROM assertions")),
        "retractions": int(scalar(conn, "SELECT COUNT(*) FROM retractions")),
        "predicates_used": int(scalar(conn, "SELECT COUNT(*) FROM predicates WHERE assertion_count > 0")),
        "by_role": dict(conn.execute("SELECT asserted_role, COUNT(*) FROM assertions GROUP BY 1 ORDER BY 1")),
        "by_modality": dict(conn.execute("SELECT modality, COUNT(*) FROM assertions GROUP BY 1 ORDER BY 1")),
    }


def iter_rows(conn: apsw.Connection, sql: str, params: Iterable = ()) -> Iterator[tuple]:
    yield from conn.execute(sql, tuple(params))
