"""SQL for the ingest → node-store bridge (issue 17 part 9, ``knowledge/bridge.py``): what the pipeline's tables
hold (entities and their mentions, stage-4/5 assertions with the statements that ended them, the latest lexicon)
and the few facts about the node store's history the bridge must respect (what a person rolled back).

Read-only: the bridge writes only through the single writer. A message's time is its own ``created_at_utc``, else
its conversation's (custom instructions carry no time of their own; decision K66)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import orjson

from kenning.store import knowledge as ksql
from kenning.store.connection import rows, scalar
from kenning.store.sqltext import chunks, marks

_MSG_TIME = "coalesce({m}.created_at_utc, (SELECT created_at_utc FROM conversations WHERE conversation_id={m}." \
            "conversation_id))"


def _time(alias: str) -> str:
    return _MSG_TIME.format(m=alias)


def self_entity(conn: apsw.Connection) -> dict[str, Any] | None:
    """The vault owner's entity (stage 4's SELF, key ``__SELF__``)."""
    found = rows(conn, "SELECT entity_id, entity_type, entity_key, canonical_name, aliases_json FROM entities "
                       "WHERE entity_key='__SELF__' AND status='active' ORDER BY entity_id LIMIT 1")
    return found[0] if found else None


def entities(conn: apsw.Connection, entity_ids: Sequence[str] | None = None,
             types: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Active entities of ``types`` (or with these ids), with how often the vault owner named them."""
    where, params = ["e.status='active'"], []
    if types is not None:
        where.append(f"e.entity_type IN ({marks(len(types))})")
        params.extend(types)
    out: list[dict[str, Any]] = []
    groups = [None] if entity_ids is None else list(chunks(list(entity_ids)))
    for part in groups:
        w = list(where)
        p = list(params)
        if part is not None:
            w.append(f"e.entity_id IN ({marks(len(part))})")
            p.extend(part)
        out += rows(conn, "SELECT e.entity_id, e.entity_type, e.entity_key, e.canonical_name, e.aliases_json, "
                          "e.mention_count, e.conversation_count, e.first_seen_at_utc, "
                          "(SELECT count(*) FROM entity_mentions em JOIN messages m ON m.message_id=em.message_id "
                          " WHERE em.entity_id=e.entity_id AND m.role='user') AS user_mentions "
                          f"FROM entities e WHERE {' AND '.join(w)} ORDER BY e.entity_id", p)
    return out


def entity_mentions(conn: apsw.Connection, entity_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Spanned mentions of these entities, per entity the owner's first (then others'), oldest first."""
    out: list[dict[str, Any]] = []
    for part in chunks(list(entity_ids)):
        out += rows(conn, "SELECT em.entity_id, em.mention_id, em.message_id, em.char_start, em.char_end, "
                          f"em.surface_text, m.role, m.conversation_id, {_time('m')} AS message_time "
                          "FROM entity_mentions em JOIN messages m ON m.message_id=em.message_id "
                          f"WHERE em.entity_id IN ({marks(len(part))}) AND em.char_start IS NOT NULL "
                          "ORDER BY em.entity_id, m.role<>'user', message_time, em.mention_id", part)
    return out


def messages(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """message_id → role, time, text and the conversation's title."""
    out: dict[str, dict[str, Any]] = {}
    for part in chunks(sorted(set(message_ids))):
        for r in rows(conn, f"SELECT m.message_id, m.role, m.conversation_id, {_time('m')} AS message_time, "
                            "m.text_raw, c.title AS conversation_title FROM messages m "
                            "JOIN conversations c ON c.conversation_id=m.conversation_id "
                            f"WHERE m.message_id IN ({marks(len(part))})", part):
            out[r["message_id"]] = r
    return out


_ENDING = ("{a}.message_id AS {p}_message_id, {a}.char_start AS {p}_start, {a}.char_end AS {p}_end, "
           "{a}.surface_text AS {p}_quote, " + "{t} AS {p}_time")


def assertions(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every stage-4 assertion with its predicate, its stage-5 status and valid time, its message's speaker and
    time, and the statement that ended it (retraction, negation, supersession), oldest statement first."""
    sql = (
        "SELECT a.assertion_id, a.message_id, a.fact_key, a.subject_entity_id, s.entity_key AS subject_key, "
        "a.predicate_id, p.canonical_label AS predicate, p.category, a.object_entity_id, a.object_value, "
        "a.object_signature, a.modality, a.polarity, a.asserted_role, a.confidence_final, a.char_start, "
        "a.char_end, a.surface_text, a.temporal_qualifier_type, a.temporal_qualifier_id, m.role AS message_role, "
        "m.conversation_id, "
        f"{_time('m')} AS message_time, t.status, t.valid_from_utc, t.valid_to_utc, t.valid_until_hint_utc, "
        "r.retraction_type, r.retraction_message_id AS ret_message_id, r.char_start AS ret_start, "
        f"r.char_end AS ret_end, r.surface_text AS ret_quote, {_time('rm')} AS ret_time, "
        + _ENDING.format(a="na", p="neg", t=_time("nm")) + ", "
        + _ENDING.format(a="sa", p="sup", t=_time("sm")) +
        " FROM assertions a JOIN predicates p ON p.predicate_id=a.predicate_id "
        "JOIN entities s ON s.entity_id=a.subject_entity_id "
        "JOIN messages m ON m.message_id=a.message_id "
        "JOIN assertion_temporalized t ON t.assertion_id=a.assertion_id "
        "LEFT JOIN retractions r ON r.retraction_id=t.retracted_by_retraction_id "
        "LEFT JOIN messages rm ON rm.message_id=r.retraction_message_id "
        "LEFT JOIN assertions na ON na.assertion_id=t.negated_by_assertion_id "
        "LEFT JOIN messages nm ON nm.message_id=na.message_id "
        "LEFT JOIN assertions sa ON sa.assertion_id=t.temporal_superseded_by_assertion_id "
        "LEFT JOIN messages sm ON sm.message_id=sa.message_id "
        "WHERE a.char_start IS NOT NULL ORDER BY message_time, a.message_id, a.char_start, a.assertion_id")
    return rows(conn, sql)


def latest_lexicon_terms(conn: apsw.Connection, hints: Sequence[str]) -> list[dict[str, Any]]:
    """The terms of the latest completed lexicon build with these type hints, with their occurrences."""
    build = scalar(conn, "SELECT build_id FROM lexicon_builds WHERE completed_at_utc IS NOT NULL "
                         "ORDER BY build_version DESC LIMIT 1")
    if build is None or not hints:
        return []
    found = rows(conn, "SELECT t.term_id, t.term_key, t.canonical_surface, t.aliases_json, t.score, "
                       "t.entity_type_hint, c.evidence_json, c.conversation_count FROM lexicon_terms t "
                       "JOIN lexicon_term_candidates c ON c.candidate_id=t.candidate_id "
                       f"WHERE t.build_id=? AND t.entity_type_hint IN ({marks(len(hints))}) ORDER BY t.term_key",
                 (build, *hints))
    for r in found:
        r["evidence"] = orjson.loads(r.pop("evidence_json") or "{}")
    return found


# ---- the node store's history ------------------------------------------------------------------------------

def triple_edges(conn: apsw.Connection, source_id: str, relation_type: str, target_id: str) -> list[dict[str, Any]]:
    """Every edge (current and ended) of one (source, relation, target), oldest start first."""
    found = rows(conn, f"SELECT {', '.join(ksql.EDGE_COLS)} FROM edges WHERE source_id=? AND relation_type=? "
                       "AND target_id=? ORDER BY start_date", (source_id, relation_type, target_id))
    for r in found:
        r["payload"] = ksql.from_json(r["payload"])
    return found


def rolled_back_mutation_types(conn: apsw.Connection, target_id: str) -> set[str]:
    """Types of the mutations on ``target_id`` (a node id or an edge key) made by commits someone rolled back."""
    return {r["type"] for r in rows(
        conn, "SELECT DISTINCT m.type FROM knowledge_commit_mutations m WHERE m.target_id=? AND EXISTS "
              "(SELECT 1 FROM knowledge_commits rb WHERE rb.rolled_back_commit_id=m.commit_id)", (target_id,))}


def provenance_refs(conn: apsw.Connection, node_id: str) -> list[dict[str, Any]]:
    """(entry_type, source_ref) of a node's provenance entries: what the bridge already recorded."""
    return rows(conn, "SELECT entry_type, source_ref FROM provenance_entries WHERE node_id=? ORDER BY id",
                (node_id,))


# Commits a person (or the miners on a person's words) did not make: the bridge's own, nightly upkeep, back-link
# promotion, the incognito purge. A node only these touched is the bridge's to retire (I75).
_AUTOMATIC = ("source_event LIKE 'ingest:%' OR source_event LIKE 'maintain:%' OR source_event LIKE 'backlinks:%' "
              "OR source_event LIKE 'intake.%'")


def bridge_made_nodes(conn: apsw.Connection, kinds: Sequence[str]) -> list[dict[str, Any]]:
    """Active nodes of ``kinds`` the bridge created (a commit ``ingest:<kind>``) and nothing but automatic commits
    touched since: no confirmation, correction, rollback, review or miner's update of a person's words."""
    q = ",".join("?" * len(kinds))
    return rows(conn, f"SELECT n.id, n.node_kind, n.canonical_name FROM nodes n WHERE n.is_active = 1 "
                      f"AND n.node_kind IN ({q}) AND EXISTS (SELECT 1 FROM knowledge_commit_mutations m "
                      f"JOIN knowledge_commits c USING (commit_id) WHERE m.target_id = n.id "
                      f"AND c.source_event = 'ingest:' || n.node_kind) "
                      f"AND NOT EXISTS (SELECT 1 FROM knowledge_commit_mutations m JOIN knowledge_commits c "
                      f"USING (commit_id) WHERE m.target_id = n.id AND NOT ({_AUTOMATIC})) ORDER BY n.id",
                tuple(kinds))
