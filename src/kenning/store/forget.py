"""All SQL of `kenning forget` (issue 23 §1): the selection, the key set, the registry's deletes, the redactions,
the forget log and the import-side check.

The forgotten keys live in one temporary table, ``temp.forget_keys(kind, id)``: a kind names what an id is
(``conversation``, ``message``, ``assertion`` …). Registry entries (``kenning.forget.registry``) are SQL conditions
over it, written with ``{kind}`` placeholders that ``expand`` turns into sub-selects."""

from __future__ import annotations

import re
from typing import Any, Sequence

import apsw
import orjson

from kenning.store.connection import rows, scalar

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def expand(sql: str) -> str:
    """``{message}`` → ``(SELECT id FROM temp.forget_keys WHERE kind='message')``."""
    return _PLACEHOLDER.sub(lambda m: f"(SELECT id FROM temp.forget_keys WHERE kind='{m.group(1)}')", sql)


# ---- the key set -------------------------------------------------------------------------------------------

def start_keys(conn: apsw.Connection) -> None:
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS forget_keys (kind TEXT NOT NULL, id TEXT NOT NULL, "
                 "PRIMARY KEY (kind, id)) WITHOUT ROWID")
    conn.execute("DELETE FROM temp.forget_keys")
    conn.execute("CREATE INDEX IF NOT EXISTS temp.forget_keys_id ON forget_keys(id)")


def set_phrase(conn: apsw.Connection, phrase: str) -> None:
    """--matching's phrase, lower-cased, for conditions that look for it in kept text (rejects, run events)."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS forget_phrase(p TEXT)")
    conn.execute("DELETE FROM temp.forget_phrase")
    conn.execute("INSERT INTO temp.forget_phrase VALUES (lower(?))", (phrase,))


def add_keys(conn: apsw.Connection, kind: str, ids: Sequence[Any]) -> None:
    conn.executemany("INSERT OR IGNORE INTO temp.forget_keys(kind, id) VALUES (?, ?)",
                     [(kind, str(i)) for i in ids if i is not None])


def collect(conn: apsw.Connection, kind: str, select_sql: str) -> int:
    """Add every id ``select_sql`` (with placeholders) yields under ``kind``; returns how many keys it added."""
    before = count_keys(conn, kind)
    conn.execute(f"WITH s(x) AS ({expand(select_sql)}) INSERT OR IGNORE INTO temp.forget_keys(kind, id) "
                 "SELECT ?, CAST(x AS TEXT) FROM s WHERE x IS NOT NULL", (kind,))
    return count_keys(conn, kind) - before


def count_keys(conn: apsw.Connection, kind: str) -> int:
    return int(scalar(conn, "SELECT count(*) FROM temp.forget_keys WHERE kind=?", (kind,)) or 0)


def keys(conn: apsw.Connection, kind: str) -> list[str]:
    return [r for (r,) in conn.execute("SELECT id FROM temp.forget_keys WHERE kind=? ORDER BY id", (kind,))]


def all_keys(conn: apsw.Connection) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for kind, i in conn.execute("SELECT kind, id FROM temp.forget_keys WHERE kind <> 'needle'"):
        out.setdefault(kind, set()).add(i)
    return out


def drop_keys(conn: apsw.Connection) -> None:
    conn.execute("DROP TABLE IF EXISTS temp.forget_keys")
    conn.execute("DROP TABLE IF EXISTS temp.forget_phrase")


# ---- selection: which conversations ------------------------------------------------------------------------

def conversations_by_ref(conn: apsw.Connection, ref: str) -> list[str]:
    """A conversation by Kenning's id (or a prefix of ≥ 8 characters), the export's id, or its exact title
    (case-insensitive)."""
    found = [r for (r,) in conn.execute(
        "SELECT conversation_id FROM conversations WHERE conversation_id=?1 OR export_conversation_id=?1 "
        "OR lower(title)=lower(?1) ORDER BY conversation_id", (ref,))]
    if not found and len(ref) >= 8:
        found = [r for (r,) in conn.execute("SELECT conversation_id FROM conversations WHERE conversation_id "
                                            "LIKE ?1 || '%' ORDER BY conversation_id", (ref,))]
    return found


def conversations_by_source(conn: apsw.Connection, ref: str) -> list[str]:
    """Every conversation an import brought: the source by id (or prefix), path, or file name (a .zip names
    the archive; its member is stored as ``archive.zip!conversations.json``)."""
    return [r for (r,) in conn.execute(
        "SELECT DISTINCT sc.conversation_id FROM source_conversations sc JOIN sources s USING (source_id) "
        "WHERE s.source_id=?1 OR (length(?1) >= 8 AND s.source_id LIKE ?1 || '%') OR s.path=?1 "
        "OR s.path LIKE '%/' || ?1 OR s.path LIKE ?1 || '!%' OR s.path LIKE '%/' || ?1 || '!%' ORDER BY 1", (ref,))]


def conversations_between(conn: apsw.Connection, start_utc: str, end_utc: str) -> list[str]:
    """Conversations begun in [start, end) (ISO UTC strings; undated ones by their first dated message)."""
    return [r for (r,) in conn.execute(
        "SELECT conversation_id FROM conversations c WHERE coalesce(c.created_at_utc, (SELECT min(created_at_utc) "
        "FROM messages m WHERE m.conversation_id=c.conversation_id)) >= ?1 AND coalesce(c.created_at_utc, "
        "(SELECT min(created_at_utc) FROM messages m WHERE m.conversation_id=c.conversation_id)) < ?2 ORDER BY 1",
        (start_utc, end_utc))]


def conversations_matching(conn: apsw.Connection, phrase: str) -> list[str]:
    """Conversations where the phrase occurs (case-insensitive) in a message, a content part or the title."""
    return [r for (r,) in conn.execute(
        "SELECT conversation_id FROM conversations WHERE instr(lower(title), lower(?1)) > 0 UNION "
        "SELECT conversation_id FROM messages WHERE instr(lower(text_raw), lower(?1)) > 0 UNION "
        "SELECT m.conversation_id FROM message_parts p JOIN messages m USING (message_id) "
        "WHERE instr(lower(p.text_content), lower(?1)) > 0 ORDER BY 1", (phrase,))]


def forgotten_texts(conn: apsw.Connection) -> list[tuple[str]]:
    """The forgotten messages' texts and conversations' titles (read once, to find copies of them elsewhere)."""
    return conn.execute(expand("SELECT text_raw FROM messages WHERE message_id IN {message} AND text_raw IS NOT NULL "
                               "UNION ALL SELECT title FROM conversations WHERE conversation_id IN {conversation} "
                               "AND title IS NOT NULL")).fetchall()


def forgotten_message_texts(conn: apsw.Connection) -> list[str]:
    """The forgotten messages' texts: their sha256 finds the embedding-cache rows made from them."""
    return [t for (t,) in conn.execute(expand(
        "SELECT text_raw FROM messages WHERE message_id IN {message} AND text_raw IS NOT NULL"))]


def lexicon_candidates_citing_forgotten(conn: apsw.Connection) -> list[tuple[str, str | None]]:
    """(candidate_id, evidence_json) of the lexicon term candidates whose evidence names a forgotten message."""
    return conn.execute(expand(
        "SELECT candidate_id, evidence_json FROM lexicon_term_candidates c WHERE EXISTS (SELECT 1 FROM "
        "temp.forget_keys k WHERE k.kind = 'message' AND instr(c.evidence_json, k.id) > 0)")).fetchall()


def set_lexicon_candidate_evidence(conn: apsw.Connection, candidate_id: str, evidence_json: str) -> None:
    conn.execute("UPDATE lexicon_term_candidates SET evidence_json=? WHERE candidate_id=?",
                 (evidence_json, candidate_id))


def secure_delete(conn: apsw.Connection) -> None:
    """Freed pages are zeroed as rows go, so deleted text does not linger in the file."""
    conn.execute("PRAGMA secure_delete=ON")


def checkpoint_truncate(conn: apsw.Connection) -> bool:
    """Copy the WAL into the file and truncate it; False when a reader kept it from finishing."""
    busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return busy == 0


def conversation_summaries(conn: apsw.Connection, ids: Sequence[str]) -> list[dict[str, Any]]:
    """What the preview shows of each conversation: id, title, date, size (shown to the person, never logged).
    A note kept only as note versions (a placeholder, H6) shows as a note with no messages."""
    found = rows(conn, "SELECT c.conversation_id, c.title, c.created_at_utc, c.source_kind, "
                       "(SELECT count(*) FROM messages m WHERE m.conversation_id=c.conversation_id) AS messages "
                       "FROM conversations c WHERE c.conversation_id IN (SELECT value FROM json_each(?)) "
                       "ORDER BY c.created_at_utc, c.conversation_id", (orjson.dumps(list(ids)).decode(),))
    notes = rows(conn, "SELECT note_id AS conversation_id, max(path) AS title, min(observed_at) AS created_at_utc, "
                       "'note' AS source_kind, 0 AS messages FROM note_versions WHERE note_id IN "
                       "(SELECT value FROM json_each(?)) "
                       "AND note_id NOT IN (SELECT conversation_id FROM conversations) "
                       "GROUP BY note_id ORDER BY 3, 1", (orjson.dumps(list(ids)).decode(),))
    return found + notes


# Notes that never became a conversation (a placeholder first version, §20B.2) exist only as note versions and
# their intake observations, keyed by the note id; the selectors below find them too (H6).
_NOTE_ONLY = "nv.note_id NOT IN (SELECT conversation_id FROM conversations)"


def notes_by_ref(conn: apsw.Connection, ref: str) -> list[str]:
    """Conversation-less notes by note id or by their path in the notes folder."""
    return [r for (r,) in conn.execute(f"SELECT DISTINCT nv.note_id FROM note_versions nv WHERE (nv.note_id=?1 "
                                       f"OR nv.path=?1) AND {_NOTE_ONLY} ORDER BY 1", (ref,))]


def notes_by_source(conn: apsw.Connection, ref: str) -> list[str]:
    """Conversation-less notes whose file an import named ``ref`` read (matched as conversations_by_source)."""
    return [r for (r,) in conn.execute(
        "SELECT DISTINCT nv.note_id FROM note_versions nv JOIN sources s ON (s.path = nv.path OR s.path LIKE "
        "'%/' || nv.path) WHERE (s.source_id=?1 OR (length(?1) >= 8 AND s.source_id LIKE ?1 || '%') "
        f"OR s.path=?1 OR s.path LIKE '%/' || ?1) AND {_NOTE_ONLY} ORDER BY 1", (ref,))]


def notes_matching(conn: apsw.Connection, phrase: str) -> list[str]:
    """Notes any version of which holds the phrase (case-insensitive), conversation or not."""
    return [r for (r,) in conn.execute("SELECT DISTINCT note_id FROM note_versions WHERE instr(lower(content), "
                                       "lower(?1)) > 0 ORDER BY 1", (phrase,))]


# ---- generic registry operations ---------------------------------------------------------------------------

def delete_where(conn: apsw.Connection, table: str, where: str) -> int:
    conn.execute(f'DELETE FROM "{table}" WHERE {expand(where)}')
    return conn.changes()


def update_where(conn: apsw.Connection, table: str, set_sql: str, where: str) -> int:
    conn.execute(f'UPDATE "{table}" SET {expand(set_sql)} WHERE {expand(where)}')
    return conn.changes()


def count_where(conn: apsw.Connection, table: str, where: str) -> int:
    return int(scalar(conn, f'SELECT count(*) FROM "{table}" WHERE {expand(where)}') or 0)


def table_exists(conn: apsw.Connection, table: str) -> bool:
    return scalar(conn, "SELECT 1 FROM sqlite_master WHERE name=?", (table,)) is not None


def schema_tables(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every table of the vault with its columns and declared types (the registry-coverage test's input)."""
    out = []
    for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE "
                                  "'sqlite_%' ORDER BY name").fetchall():
        cols = [(r[1], (r[2] or "").upper()) for r in conn.execute(f'PRAGMA table_info("{name}")')]
        out.append({"name": name, "virtual": bool(sql and sql.upper().startswith("CREATE VIRTUAL")),
                    "columns": cols})
    return out


# ---- entities ------------------------------------------------------------------------------------------------

def surviving_entities_with_forgotten_mentions(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Entities that stay but were mentioned in a forgotten message: their aliases and the surfaces they were
    mentioned by, inside and outside the forgotten messages."""
    got = rows(conn, expand(
        "SELECT e.entity_id, e.canonical_name, e.aliases_json, "
        "(SELECT json_group_array(DISTINCT m.surface_text) FROM entity_mentions m WHERE m.entity_id = e.entity_id "
        " AND m.message_id NOT IN {message}) AS kept, "
        "(SELECT json_group_array(DISTINCT m.surface_text) FROM entity_mentions m WHERE m.entity_id = e.entity_id "
        " AND m.message_id IN {message}) AS gone "
        "FROM entities e WHERE e.entity_id NOT IN {entity} AND e.entity_id IN (SELECT entity_id FROM entity_mentions "
        "WHERE message_id IN {message}) ORDER BY e.entity_id"))
    for r in got:
        r["kept_surfaces"] = [x for x in orjson.loads(r.pop("kept") or "[]") if x]
        r["gone_surfaces"] = [x for x in orjson.loads(r.pop("gone") or "[]") if x]
    return got


def set_entity_aliases(conn: apsw.Connection, entity_id: str, aliases_json: str, dropped_norms: Sequence[str]) -> None:
    conn.execute("UPDATE entities SET aliases_json=? WHERE entity_id=?", (aliases_json, entity_id))
    conn.executemany("DELETE FROM search_entity_names WHERE entity_id=? AND source='alias' AND name_norm=?",
                     [(entity_id, n) for n in dropped_norms])


# ---- search index, vectors, embedding cache ----------------------------------------------------------------

def search_doc_rowids(conn: apsw.Connection) -> list[int]:
    return [int(r) for r in keys(conn, "search_doc")]


def vector_vids(conn: apsw.Connection) -> list[int]:
    return [int(r) for r in keys(conn, "vector")]


def vector_table_names(conn: apsw.Connection) -> list[str]:
    return [r for (r,) in conn.execute("SELECT table_name FROM vector_tables WHERE status IN ('active', 'building') "
                                       "ORDER BY table_name")]


def fts_optimize(conn: apsw.Connection, table: str) -> None:
    """Merge the FTS5 segments so deleted documents' tokens leave the index pages (not only get tombstoned)."""
    conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")


# ---- DOC72 node store ----------------------------------------------------------------------------------------

def drop_incognito_skip_observations(conn: apsw.Connection) -> None:
    """Keep-raw mode (I72): observations the funnel skipped for being incognito are not forgotten with the rest."""
    conn.execute("DELETE FROM temp.forget_keys WHERE kind = 'observation' AND id IN (SELECT observation_id FROM "
                 "intake_dispatch_decisions WHERE reason_codes = '[\"incognito_mode\"]')")


def nodes_citing(conn: apsw.Connection) -> list[str]:
    """Nodes with a provenance entry from a forgotten message, or the record of a forgotten entity."""
    return [r for (r,) in conn.execute(expand(
        "SELECT DISTINCT node_id FROM provenance_entries WHERE message_id IN {message} "
        "OR source_ref IN (SELECT 'entity:' || id FROM temp.forget_keys WHERE kind='entity') ORDER BY 1"))]


def forgotten_provenance_ids(conn: apsw.Connection) -> set[str]:
    return {r for (r,) in conn.execute(expand(
        "SELECT id FROM provenance_entries WHERE message_id IN {message} "
        "OR source_ref IN (SELECT 'entity:' || id FROM temp.forget_keys WHERE kind='entity')"))}


def forgotten_needles(conn: apsw.Connection, width: int = 32) -> list[str]:
    """Pieces of forgotten text a derived payload may have copied: the head of each forgotten provenance quote
    and each forgotten conversation's title (JSON-escaped, whitespace folded, as they sit in a payload)."""
    found: set[str] = set()
    for (q,) in conn.execute(expand(
            "SELECT verbatim_excerpt FROM provenance_entries WHERE verbatim_excerpt IS NOT NULL AND (message_id IN "
            "{message} OR source_ref IN (SELECT 'entity:' || id FROM temp.forget_keys WHERE kind='entity'))")):
        found.add(" ".join(q.split())[:width])
    for (t,) in conn.execute(expand("SELECT title FROM conversations WHERE conversation_id IN {conversation} "
                                    "AND title IS NOT NULL")):
        found.add(" ".join(t.split()))
    out = set()
    for s in found:
        if len(s) >= 6:
            out.add(orjson.dumps(s).decode("utf-8")[1:-1])
    return sorted(out)


def edge_candidates(conn: apsw.Connection, deleted_nodes: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Edges that touch a deleted node or whose payload names a forgotten message or assertion, as
    (edge mutation key, edge row)."""
    from kenning.store.mutation_keys import edge_key
    from kenning.store import knowledge as ksql

    got = rows(conn, expand(
        f"SELECT {', '.join(ksql.EDGE_COLS)} FROM edges e WHERE e.source_id IN (SELECT value FROM json_each(?1)) "
        "OR e.target_id IN (SELECT value FROM json_each(?1)) OR (e.payload IS NOT NULL AND EXISTS (SELECT 1 FROM "
        "temp.forget_keys k WHERE k.kind IN ('message', 'assertion') AND instr(e.payload, k.id) > 0)) "
        "ORDER BY e.source_id, e.relation_type, e.target_id, e.start_date"),
        (orjson.dumps(list(deleted_nodes)).decode(),))
    out = []
    for r in got:
        r["payload"] = orjson.loads(r["payload"]) if r["payload"] else None
        out.append((edge_key(r["source_id"], r["relation_type"], r["target_id"], r["start_date"]), r))
    return out


def mutation_targets(conn: apsw.Connection) -> list[str]:
    return [r for (r,) in conn.execute("SELECT DISTINCT target_id FROM knowledge_commit_mutations")]


def delete_mutations_of(conn: apsw.Connection, target_ids: Sequence[str]) -> list[str]:
    """Drop every mutation of these targets from history; returns the commits that lost one."""
    ids = orjson.dumps(sorted(set(target_ids))).decode()
    commits = [r for (r,) in conn.execute("SELECT DISTINCT commit_id FROM knowledge_commit_mutations WHERE "
                                          "target_id IN (SELECT value FROM json_each(?))", (ids,))]
    conn.execute("DELETE FROM knowledge_commit_mutations WHERE target_id IN (SELECT value FROM json_each(?))", (ids,))
    return commits


def mutations_of(conn: apsw.Connection, target_ids: Sequence[str]) -> list[dict[str, Any]]:
    return rows(conn, "SELECT commit_id, ordinal, patch, reverse_patch FROM knowledge_commit_mutations WHERE "
                      "target_id IN (SELECT value FROM json_each(?)) ORDER BY commit_id, ordinal",
                (orjson.dumps(sorted(set(target_ids))).decode(),))


def set_mutation_patches(conn: apsw.Connection, commit_id: str, ordinal: int, patch: str, reverse: str) -> None:
    conn.execute("UPDATE knowledge_commit_mutations SET patch=?, reverse_patch=? WHERE commit_id=? AND ordinal=?",
                 (patch, reverse, commit_id, ordinal))


def redact_commits(conn: apsw.Connection, commit_ids: Sequence[str], summary: str) -> int:
    """The change summary of a commit that touched forgotten content may quote it: replaced, and the commit
    marked not reversible (its reverse patches no longer hold what it changed)."""
    conn.execute("UPDATE knowledge_commits SET change_summary=?, reversible=0 WHERE commit_id IN "
                 "(SELECT value FROM json_each(?))", (summary, orjson.dumps(sorted(set(commit_ids))).decode()))
    return conn.changes()


def delete_outcome_events_of(conn: apsw.Connection, item_ids: Sequence[str]) -> int:
    conn.execute("DELETE FROM extraction_outcome_events WHERE extracted_item_id IN (SELECT value FROM json_each(?))",
                 (orjson.dumps(sorted(set(item_ids))).decode(),))
    return conn.changes()


# ---- runs and run events: ids and titles of forgotten conversations in the stage log -----------------------

def runs_naming_conversations(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, expand("SELECT run_id, counts_json FROM runs r WHERE counts_json IS NOT NULL AND EXISTS "
                             "(SELECT 1 FROM temp.forget_keys k WHERE k.kind='conversation' "
                             "AND instr(r.counts_json, k.id) > 0)"))


def set_run_counts(conn: apsw.Connection, run_id: str, counts_json: str) -> None:
    conn.execute("UPDATE runs SET counts_json=? WHERE run_id=?", (counts_json, run_id))


# ---- the forget log and the import check -------------------------------------------------------------------

def record_forget(conn: apsw.Connection, entry: dict[str, Any], conversation_ids: Sequence[str]) -> None:
    conn.execute("INSERT INTO forget_log(forget_id, forgotten_at_utc, selector, conversations, messages, counts_json, "
                 "vacuumed) VALUES (:forget_id, :forgotten_at_utc, :selector, :conversations, :messages, "
                 ":counts_json, 0)", entry)
    conn.executemany("INSERT OR REPLACE INTO forgotten_conversations(conversation_id, forget_id) VALUES (?, ?)",
                     [(c, entry["forget_id"]) for c in conversation_ids])


def mark_all_vacuumed(conn: apsw.Connection) -> int:
    conn.execute("UPDATE forget_log SET vacuumed=1 WHERE vacuumed=0")
    return conn.changes()


def forget_log(conn: apsw.Connection, limit: int = 50) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM forget_log ORDER BY forgotten_at_utc DESC, forget_id LIMIT ?", (limit,))


def is_forgotten(conn: apsw.Connection, conversation_id: str) -> bool:
    try:
        return scalar(conn, "SELECT 1 FROM forgotten_conversations WHERE conversation_id=?",
                      (conversation_id,)) is not None
    except apsw.SQLError:  # a vault from before migration 0095
        return False


def any_forgotten(conn: apsw.Connection) -> bool:
    try:
        return scalar(conn, "SELECT 1 FROM forgotten_conversations LIMIT 1") is not None
    except apsw.SQLError:
        return False


def unforget(conn: apsw.Connection, conversation_id: str) -> None:
    """`--include-forgotten` brought it back: a later re-import treats it like any other conversation."""
    conn.execute("DELETE FROM forgotten_conversations WHERE conversation_id=?", (conversation_id,))
