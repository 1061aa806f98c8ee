"""SQL of the DOC72 intake funnel (migration 0086, plus 0070's extraction_audit): observations, dispatch
decisions, the pending_extractions queue, memory-mode rules, the daily budget and the reads the funnel needs.
JSON columns hold sorted-key JSON so equal content is equal bytes."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import apsw
import orjson

from kenning.sources.jcs import canonicalize
from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, insert_sql, marks

OBS_COLS = ("observation_id", "observed_at", "surface", "source_ref", "source_version_id", "actor",
            "memory_mode_snapshot", "features", "dedup_key", "unit_kind", "conversation_id", "message_id", "run_id")
DECISION_COLS = ("observation_id", "decision", "queue_class", "reason_codes", "score", "persistence_mode",
                 "created_at")
PENDING_COLS = ("pending_id", "idempotency_key", "source_ref", "from_version_id", "to_version_id", "queued_at",
                "updated_at", "priority", "retries", "max_retries", "max_age_hours", "status", "error_code",
                "observation_id", "depth")
_JSON = {"memory_mode_snapshot", "features", "reason_codes"}


def _enc(cols: Sequence[str], values: dict[str, Any]) -> tuple:
    return tuple(canonicalize(values[c]) if c in _JSON and values.get(c) is not None else values.get(c)
                 for c in cols)


def _dec(r: dict[str, Any] | None) -> dict[str, Any] | None:
    if r is None:
        return None
    for k in _JSON & r.keys():
        if isinstance(r[k], str):
            r[k] = orjson.loads(r[k])
    return r


# ---- the units the funnel observes -------------------------------------------------------------------------

def conversation_units(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT conversation_id, export_conversation_id, title, created_at_utc, updated_at_utc, "
                      "raw_sha256, message_count, source_kind FROM conversations ORDER BY conversation_id")


def note_versions_of(conn: apsw.Connection, note_id: str) -> list[dict[str, Any]]:
    """A note's versions in the order they were imported (each one an observation of the note surface, I90)."""
    return rows(conn, "SELECT version_id, note_id, path, content, content_sha256, decision, observed_at "
                      "FROM note_versions "
                      "WHERE note_id=? ORDER BY observed_at, version_id", (note_id,))


def note_ids(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT note_id FROM note_versions ORDER BY note_id")]


def source_paths_by_sha(conn: apsw.Connection, sha256: str) -> list[str]:
    """The paths a file with these bytes was imported from (a note version's file, I95)."""
    return [r[0] for r in conn.execute("SELECT path FROM sources WHERE sha256=? ORDER BY path", (sha256,))]


def note_version_text(conn: apsw.Connection, version_id: str) -> str | None:
    return scalar(conn, "SELECT content FROM note_versions WHERE version_id=?", (version_id,))


def part_metadata(conn: apsw.Connection, conversation_id: str) -> dict[str, dict[str, Any]]:
    """message id → the metadata of its 'other' part (a calendar event's start, zone, RRULE…)."""
    out: dict[str, dict[str, Any]] = {}
    for mid, meta in conn.execute(
            "SELECT p.message_id, p.metadata_json FROM message_parts p JOIN messages m USING (message_id) "
            "WHERE m.conversation_id=? AND p.part_type='other' AND p.metadata_json IS NOT NULL "
            "ORDER BY p.message_id, p.part_index", (conversation_id,)):
        out.setdefault(mid, orjson.loads(meta))
    return out


def message_units(conn: apsw.Connection, conversation_id: str) -> list[dict[str, Any]]:
    """A conversation's visible turns with text, in conversation order."""
    return rows(conn, "SELECT message_id, conversation_id, role, created_at_utc, text_raw, order_index "
                      "FROM messages WHERE conversation_id=? AND is_hidden=0 AND text_raw IS NOT NULL "
                      "AND role IN ('user','assistant','unknown') ORDER BY order_index, message_id",
                (conversation_id,))


def messages_by_id(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for part in chunks(list(message_ids)):
        for r in rows(conn, f"SELECT message_id, conversation_id, role, created_at_utc, text_raw, order_index "
                            f"FROM messages WHERE message_id IN ({marks(len(part))})", tuple(part)):
            out[r["message_id"]] = r
    return out


def known_dedup_keys(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT dedup_key FROM intake_observations")}


_HEX32 = re.compile(r"[0-9a-f]{32}")


def version_key(source_version_id: str) -> str | bytes:
    """How ``intake_observation_rows`` stores a source version id: 32 lowercase hex digits as the 16 bytes they
    spell, anything else as it is (Z6; the view ``intake_observations`` gives back the text)."""
    return bytes.fromhex(source_version_id) if _HEX32.fullmatch(source_version_id) else source_version_id


def version_seen_elsewhere(conn: apsw.Connection, source_version_id: str, source_ref: str) -> bool:
    # the row table, so that idx_intake_observations_version serves the lookup (the view's column is converted)
    return bool(scalar(conn, "SELECT 1 FROM intake_observation_rows WHERE source_version_id=? AND "
                             "COALESCE(source_ref_other, 'message:' || message_id)<>? AND unit_kind='message' "
                             "LIMIT 1", (version_key(source_version_id), source_ref)))


def entity_aliases(conn: apsw.Connection) -> set[str]:
    """Normalised aliases of the active world entities (shallow extraction's alias matching, §20A.2)."""
    return {r[0] for r in conn.execute(
        "SELECT a.normalized_alias FROM aliases a JOIN nodes n ON n.id=a.node_id "
        "WHERE n.node_kind='world_entity' AND n.is_active=1 AND length(a.normalized_alias)>=3")}


def first_observed_at(conn: apsw.Connection) -> str | None:
    return scalar(conn, "SELECT MIN(observed_at) FROM intake_observations")


# ---- observations and decisions ----------------------------------------------------------------------------

def insert_observation(conn: apsw.Connection, values: dict[str, Any]) -> None:
    conn.execute(insert_sql("intake_observations", OBS_COLS), _enc(OBS_COLS, values))


def insert_decision(conn: apsw.Connection, values: dict[str, Any]) -> None:
    # a plain INSERT: the view's trigger replaces the observation's decision (Y20; OR REPLACE here would override
    # the trigger's INSERT OR IGNORE into intake_values)
    conn.execute(insert_sql("intake_dispatch_decisions", DECISION_COLS), _enc(DECISION_COLS, values))


def get_observation(conn: apsw.Connection, observation_id: str) -> dict[str, Any] | None:
    return _dec(row(conn, f"SELECT {', '.join(OBS_COLS)} FROM intake_observations WHERE observation_id=?",
                    (observation_id,)))


def get_decision(conn: apsw.Connection, observation_id: str) -> dict[str, Any] | None:
    return _dec(row(conn, f"SELECT {', '.join(DECISION_COLS)} FROM intake_dispatch_decisions "
                          f"WHERE observation_id=?", (observation_id,)))


def decisions(conn: apsw.Connection) -> list[dict[str, Any]]:
    return [_dec(r) for r in rows(conn, "SELECT d.*, o.unit_kind, o.source_ref, o.surface, o.conversation_id "
                                        "FROM intake_dispatch_decisions d JOIN intake_observations o "
                                        "USING (observation_id) ORDER BY o.observed_at, d.observation_id")]


def decision_counts(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT decision, reason_codes, COUNT(*) AS n FROM intake_dispatch_decisions "
                      "GROUP BY decision, reason_codes ORDER BY decision, reason_codes")


def observations_of_conversations(conn: apsw.Connection, conversation_ids: Sequence[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in chunks(sorted(conversation_ids)):
        out += rows(conn, f"SELECT o.observation_id, o.message_id, o.conversation_id, d.decision, d.reason_codes "
                          f"FROM intake_observations o LEFT JOIN intake_dispatch_decisions d USING (observation_id) "
                          f"WHERE o.conversation_id IN ({marks(len(part))}) ORDER BY o.observation_id", tuple(part))
    return out


def forget_incognito_skips(conn: apsw.Connection, conversation_ids: Sequence[str]) -> int:
    """Observations of these conversations that were skipped only for being incognito, with their decisions: a
    cleared mode lets the next intake run observe them afresh (their audit rows stay as history)."""
    n = 0
    for part in chunks(sorted(conversation_ids)):
        ids = [r[0] for r in conn.execute(
            f"SELECT o.observation_id FROM intake_observations o JOIN intake_dispatch_decisions d "
            f"USING (observation_id) WHERE o.conversation_id IN ({marks(len(part))}) "
            f"AND d.reason_codes='[\"incognito_mode\"]'", tuple(part))]
        for sub in chunks(ids):
            conn.execute(f"DELETE FROM intake_dispatch_decisions WHERE observation_id IN ({marks(len(sub))})",
                         tuple(sub))
            conn.execute(f"DELETE FROM intake_observations WHERE observation_id IN ({marks(len(sub))})", tuple(sub))
            n += len(sub)
    return n


# ---- the queue ---------------------------------------------------------------------------------------------

def insert_pending(conn: apsw.Connection, values: dict[str, Any]) -> bool:
    """Insert unless the idempotency key is queued already (§3.1 unique index); True when a row was added."""
    conn.execute(insert_sql("pending_extractions", PENDING_COLS, "INSERT OR IGNORE"), _enc(PENDING_COLS, values))
    return conn.changes() > 0


def get_pending(conn: apsw.Connection, pending_id: str) -> dict[str, Any] | None:
    return row(conn, f"SELECT {', '.join(PENDING_COLS)} FROM pending_extractions WHERE pending_id=?", (pending_id,))


def stuck_running(conn: apsw.Connection, older_than: str) -> list[dict[str, Any]]:
    """§20A.3 recoverCrashedExtractions' SELECT, with the run clock's cutoff instead of datetime('now')."""
    return rows(conn, f"SELECT {', '.join(PENDING_COLS)} FROM pending_extractions "
                      f"WHERE status='running' AND updated_at < ? ORDER BY pending_id", (older_than,))


def queued_normal(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT pending_id, queued_at, max_age_hours FROM pending_extractions "
                      "WHERE status='queued' AND priority='normal' ORDER BY pending_id")


def runnable(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Queued rows, critical first, then normal, then deferred (§24: critical processes ahead of all); within a
    class in the order things were said, so a miner sees a goal before the sub-goal that refers back to it."""
    return rows(conn, f"SELECT {', '.join('p.' + c for c in PENDING_COLS)} FROM pending_extractions p "
                      f"LEFT JOIN intake_observations o ON o.observation_id = p.observation_id "
                      f"LEFT JOIN messages m ON m.message_id = o.message_id WHERE p.status='queued' "
                      f"ORDER BY CASE p.priority WHEN 'critical' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, "
                      f"p.queued_at, m.created_at_utc, o.conversation_id, m.order_index, p.pending_id")


def set_pending(conn: apsw.Connection, pending_id: str, **values: Any) -> None:
    cols = sorted(values)
    conn.execute(f"UPDATE pending_extractions SET {', '.join(f'{c}=?' for c in cols)} WHERE pending_id=?",
                 (*(values[c] for c in cols), pending_id))


def link_audit(conn: apsw.Connection, pending_id: str, extraction_id: str) -> None:
    conn.execute("INSERT OR IGNORE INTO pending_extraction_audits (pending_id, extraction_id) VALUES (?, ?)",
                 (pending_id, extraction_id))


def audits_of(conn: apsw.Connection, pending_id: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT extraction_id FROM pending_extraction_audits WHERE pending_id=? "
                                       "ORDER BY extraction_id", (pending_id,))]


def queue_summary(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT status, priority, depth, COUNT(*) AS n FROM pending_extractions "
                      "GROUP BY status, priority, depth ORDER BY status, priority, depth")


def queue_rows(conn: apsw.Connection, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    where, args = ("WHERE status=?", (status,)) if status else ("", ())
    return rows(conn, f"SELECT {', '.join(PENDING_COLS)} FROM pending_extractions {where} "
                      f"ORDER BY CASE priority WHEN 'critical' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, "
                      f"queued_at, pending_id LIMIT ?", (*args, limit))


def queue_items_for_observations(conn: apsw.Connection, observation_ids: Sequence[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in chunks(sorted(observation_ids)):
        out += rows(conn, f"SELECT {', '.join(PENDING_COLS)} FROM pending_extractions "
                          f"WHERE observation_id IN ({marks(len(part))}) ORDER BY pending_id", tuple(part))
    return out


# ---- savepoints: one extraction is all-or-nothing inside the stage's transaction (§20A.3) ---------------------

def savepoint(conn: apsw.Connection, name: str) -> None:
    conn.execute(f"SAVEPOINT {name}")


def release(conn: apsw.Connection, name: str) -> None:
    conn.execute(f"RELEASE {name}")


def rollback_to(conn: apsw.Connection, name: str) -> None:
    conn.execute(f"ROLLBACK TO {name}")
    conn.execute(f"RELEASE {name}")


# ---- the daily budget --------------------------------------------------------------------------------------

def budget_day(conn: apsw.Connection, day: str, now: str) -> dict[str, Any]:
    """The day's usage; a day nothing was spent on is not stored (a rerun with nothing to do writes nothing)."""
    found = row(conn, "SELECT * FROM extraction_budget_days WHERE day=?", (day,))
    return found if found is not None else {"day": day, "deep_used": 0, "critical_used": 0, "tokens_used": 0,
                                            "usd_used": 0.0, "deferred": 0, "deep_by_surface": "{}",
                                            "last_reset_at": f"{day}T00:00:00.000Z"}


def _ensure_day(conn: apsw.Connection, day: str) -> None:
    conn.execute("INSERT OR IGNORE INTO extraction_budget_days (day, last_reset_at) VALUES (?, ?)",
                 (day, f"{day}T00:00:00.000Z"))   # a day's budget resets at its start


def budget_add(conn: apsw.Connection, day: str, **delta: Any) -> None:
    _ensure_day(conn, day)
    cols = sorted(delta)
    conn.execute(f"UPDATE extraction_budget_days SET {', '.join(f'{c}={c}+?' for c in cols)} WHERE day=?",
                 (*(delta[c] for c in cols), day))


def budget_surface(conn: apsw.Connection, day: str, surface: str) -> None:
    _ensure_day(conn, day)
    conn.execute("UPDATE extraction_budget_days SET deep_by_surface=json_set(deep_by_surface, '$.' || ?, "
                 "COALESCE(json_extract(deep_by_surface, '$.' || ?), 0) + 1) WHERE day=?", (surface, surface, day))


def budget_days(conn: apsw.Connection, limit: int = 7) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM extraction_budget_days ORDER BY day DESC LIMIT ?", (limit,))


def model_call_usage(conn: apsw.Connection, call_ids: Sequence[str]) -> int:
    total = 0
    for part in chunks(list(call_ids)):
        total += scalar(conn, f"SELECT COALESCE(SUM(total_tokens), 0) FROM llm_extraction_calls "
                              f"WHERE call_id IN ({marks(len(part))})", tuple(part)) or 0
    return int(total)


# ---- memory modes ------------------------------------------------------------------------------------------

def mode_rules(conn: apsw.Connection) -> list[dict[str, Any]]:
    return rows(conn, "SELECT scope, scope_value, mode, activated_at, activated_by FROM memory_mode_rules "
                      "ORDER BY scope, scope_value")


def set_mode_rule(conn: apsw.Connection, scope: str, value: str, mode: str, at: str, by: str) -> bool:
    conn.execute("INSERT OR IGNORE INTO memory_mode_rules (scope, scope_value, mode, activated_at, activated_by) "
                 "VALUES (?, ?, ?, ?, ?)", (scope, value, mode, at, by))
    return conn.changes() > 0


def clear_mode_rule(conn: apsw.Connection, scope: str, value: str) -> bool:
    conn.execute("DELETE FROM memory_mode_rules WHERE scope=? AND scope_value=?", (scope, value))
    return conn.changes() > 0


def find_conversations(conn: apsw.Connection, ref: str, by_title: bool = False) -> list[dict[str, Any]]:
    """A conversation named by Kenning's id, the export's id, an id prefix (≥ 6 characters), or — with ``by_title``
    — its exact title, case-insensitive, as `kenning forget --conversation` takes it (I170)."""
    exact = rows(conn, "SELECT conversation_id, export_conversation_id, title FROM conversations "
                       "WHERE conversation_id=? OR export_conversation_id=?", (ref, ref))
    if not exact and by_title:
        exact = rows(conn, "SELECT conversation_id, export_conversation_id, title FROM conversations "
                           "WHERE lower(title)=lower(?) ORDER BY conversation_id", (ref,))
    if exact or len(ref) < 6:
        return exact
    return rows(conn, "SELECT conversation_id, export_conversation_id, title FROM conversations "
                      "WHERE conversation_id LIKE ? ESCAPE '\\' ORDER BY conversation_id",
                (ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",))


def conversation_titles(conn: apsw.Connection) -> Iterator[tuple[str, str | None, str | None]]:
    yield from conn.execute("SELECT conversation_id, export_conversation_id, title FROM conversations")


def conversation_sources(conn: apsw.Connection) -> list[tuple[str, str]]:
    """(conversation_id, source path) for every import a conversation came in."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT sc.conversation_id, s.path FROM source_conversations sc JOIN sources s USING (source_id)")]


def message_ids_of(conn: apsw.Connection, conversation_ids: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for part in chunks(sorted(conversation_ids)):
        out.update(r[0] for r in conn.execute(
            f"SELECT message_id FROM messages WHERE conversation_id IN ({marks(len(part))})", tuple(part)))
    return out


def provenance_by_message(conn: apsw.Connection, message_ids: Sequence[str],
                          active_only: bool = False) -> list[dict[str, Any]]:
    """Provenance entries citing any of these messages, with their node (the derived knowledge to remove)."""
    out: list[dict[str, Any]] = []
    active = " AND n.is_active=1" if active_only else ""
    for part in chunks(sorted(message_ids)):
        out += rows(conn, f"SELECT p.id, p.node_id, p.message_id, n.is_active, n.lifecycle_state "
                          f"FROM provenance_entries p JOIN nodes n ON n.id=p.node_id "
                          f"WHERE p.message_id IN ({marks(len(part))}){active} ORDER BY p.node_id, p.id",
                    tuple(part))
    return out


def node_provenance_messages(conn: apsw.Connection, node_ids: Sequence[str]) -> dict[str, list[str | None]]:
    out: dict[str, list[str | None]] = {}
    for part in chunks(sorted(node_ids)):
        for nid, mid in conn.execute(f"SELECT node_id, message_id FROM provenance_entries "
                                     f"WHERE node_id IN ({marks(len(part))}) ORDER BY node_id, id", tuple(part)):
            out.setdefault(nid, []).append(mid)
    return out


def drop_message_text(conn: apsw.Connection, message_ids: Sequence[str], run_id: str) -> int:
    """``intake.incognito.keep: drop`` (I11): the raw text of incognito messages is removed from the raw layer
    (the row stays, so ids and the conversation's shape hold; its text is gone). ``last_changed_run_id`` moves so
    the search index re-reads them (and forgets their words) on its next run."""
    n = 0
    for part in chunks(sorted(message_ids)):
        # raw_at NULL: '{}' is the literal raw text now (rawpack, V2)
        conn.execute(f"UPDATE messages SET text_raw='', raw_message_json='{{}}', raw_at=NULL, raw_len=NULL, "
                     f"text_part_map_json=NULL, last_changed_run_id=? "
                     f"WHERE message_id IN ({marks(len(part))}) AND (text_raw<>'' OR raw_message_json<>'{{}}' "
                     f"OR raw_at IS NOT NULL)",
                     (run_id, *part))
        n += conn.changes()
        conn.execute(f"UPDATE message_parts SET text_content=NULL, raw_part_json='{{}}', raw_at=NULL, raw_len=NULL, "
                     f"text_at=NULL, text_len=NULL WHERE message_id IN ({marks(len(part))})", tuple(part))
        # earlier versions kept when a re-export changed a message hold its words too
        conn.execute(f"DELETE FROM raw_archive WHERE table_name='messages' AND row_id IN ({marks(len(part))})",
                     tuple(part))
    return n


def drop_conversation_raw(conn: apsw.Connection, conversation_ids: Sequence[str]) -> None:
    """The export's own record of an incognito conversation holds its text too (I11)."""
    for part in chunks(sorted(conversation_ids)):
        # a message still placed in the conversation's text keeps its own raw text, as it always did (V2)
        conn.execute(f"UPDATE messages SET raw_message_json=(SELECT r.raw_message_json FROM messages_raw r "
                     f"WHERE r.message_id=messages.message_id), raw_at=NULL, raw_len=NULL "
                     f"WHERE conversation_id IN ({marks(len(part))}) AND raw_at IS NOT NULL", tuple(part))
        conn.execute(f"UPDATE conversations SET raw_conversation_json='{{}}', raw_conversation_z=NULL "
                     f"WHERE conversation_id IN ({marks(len(part))}) "
                     f"AND (raw_conversation_json<>'{{}}' OR raw_conversation_z IS NOT NULL)", tuple(part))
        conn.execute(f"DELETE FROM raw_archive WHERE table_name='conversations' AND row_id IN ({marks(len(part))})",
                     tuple(part))


def purged_conversations(conn: apsw.Connection) -> set[str]:
    """Incognito conversations whose derived rows were removed (I72)."""
    return {r[0] for r in conn.execute("SELECT conversation_id FROM incognito_purges")}


def mark_purged(conn: apsw.Connection, conversation_ids: Sequence[str], at: str) -> None:
    conn.executemany("INSERT OR REPLACE INTO incognito_purges (conversation_id, purged_at) VALUES (?, ?)",
                     [(c, at) for c in sorted(conversation_ids)])


def unmark_purged(conn: apsw.Connection, conversation_ids: Sequence[str]) -> int:
    n = 0
    for part in chunks(sorted(conversation_ids)):
        conn.execute(f"DELETE FROM incognito_purges WHERE conversation_id IN ({marks(len(part))})", tuple(part))
        n += conn.changes()
    return n


def provenance_ids_of(conn: apsw.Connection, node_id: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT id FROM provenance_entries WHERE node_id=? ORDER BY id", (node_id,))]


def node_is_active(conn: apsw.Connection, node_id: str) -> bool:
    r = conn.execute("SELECT is_active FROM nodes WHERE id=?", (node_id,)).fetchone()
    return bool(r and r[0])


def raw_turns_matching(conn: apsw.Connection, conversation_ids: Sequence[str], words: Sequence[str],
                       limit: int) -> list[dict[str, Any]]:
    """Turns of these (incognito) conversations whose raw text holds every word, case-insensitively: a plain scan,
    since incognito turns are never indexed (I71). Most words first is the caller's; here newest first."""
    if not conversation_ids or not words:
        return []
    cond = " AND ".join("instr(lower(m.text_raw), ?) > 0" for _ in words)
    return rows(conn, f"SELECT m.message_id, m.conversation_id, m.role, m.created_at_utc, m.text_raw, c.title "
                      f"FROM messages m JOIN conversations c USING (conversation_id) "
                      f"WHERE m.conversation_id IN (SELECT value FROM json_each(?)) AND m.text_raw <> '' AND {cond} "
                      f"ORDER BY m.created_at_utc DESC, m.message_id LIMIT ?",
                (orjson.dumps(sorted(conversation_ids)).decode(), *[w.lower() for w in words], int(limit)))
