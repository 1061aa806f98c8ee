"""SQL of stage 2A (and the mention parts of 2B): candidates, mentions, time mentions, NER runs, detect state."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import apsw

from kenning.store.connection import rows, scalar
from kenning.store.sqltext import insert_sql

_CAND_COLS = ("candidate_id", "message_id", "detector", "detector_version", "detector_order", "entity_type_hint",
              "char_start", "char_end", "surface_text", "surface_hash", "confidence", "is_eligible",
              "suppressed_by_candidate_id", "suppression_reason", "raw_candidate_json")
_MENTION_COLS = ("mention_id", "message_id", "entity_id", "candidate_id", "detector", "detector_version",
                 "entity_type_hint", "char_start", "char_end", "surface_text", "surface_hash", "confidence",
                 "raw_mention_json")
_TIME_COLS = ("time_mention_id", "message_id", "char_start", "char_end", "surface_text", "surface_hash", "pattern_id",
              "pattern_precedence", "anchor_time_utc", "resolved_type", "valid_from_utc", "valid_to_utc",
              "resolution_granularity", "timezone_assumed", "confidence", "raw_parse_json")


_INS_CAND = insert_sql("entity_mention_candidates", _CAND_COLS)
_INS_MENTION = insert_sql("entity_mentions", _MENTION_COLS)
_INS_TIME = insert_sql("time_mentions", _TIME_COLS)


# -- messages as detection input ------------------------------------------------------------------------------


def iter_messages_for_detection(conn: apsw.Connection) -> Iterator[tuple]:
    """(rowid, message_id, conversation_id, role, created_at_utc, timestamp_quality, text_raw, fences, blockquotes,
    citations) in the seed's stable order (conversation_id, order_index, message_id)."""
    yield from conn.execute(
        "SELECT rowid, message_id, conversation_id, role, created_at_utc, timestamp_quality, text_raw, "
        "code_fence_ranges_json, blockquote_ranges_json, citation_ranges_json FROM messages "
        "ORDER BY conversation_id, order_index, message_id")


def count_messages_for_detection(conn: apsw.Connection) -> int:
    """How many of the rows ``iter_messages_for_detection`` yields have text (the progress bar's total: stage 2A
    counts the messages it looks at)."""
    return int(conn.execute("SELECT COUNT(*) FROM messages WHERE text_raw IS NOT NULL").fetchone()[0])


def iter_message_texts(conn: apsw.Connection) -> Iterator[tuple[str, str | None]]:
    """(message_id, text_raw) of every message, in no particular order (for LexiconMatch, keyed by message)."""
    yield from conn.execute("SELECT message_id, text_raw FROM messages")


def message_texts(conn: apsw.Connection, message_ids: list[str]) -> dict[str, tuple]:
    out = {}
    for i in range(0, len(message_ids), 500):
        chunk = message_ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        for r in conn.execute(
                f"SELECT message_id, text_raw, code_fence_ranges_json, blockquote_ranges_json, citation_ranges_json "
                f"FROM messages WHERE message_id IN ({q})", chunk):
            out[r[0]] = r[1:]
    return out


# -- per-message detect state -----------------------------------------------------------------------------------


def detect_states(conn: apsw.Connection) -> dict[int, bytes]:
    """messages.rowid → the 16-byte input hash stage 2A last detected that message with (N12)."""
    return dict(conn.execute("SELECT message_rowid, input_hash FROM detect_message_state"))


def upsert_detect_states(conn: apsw.Connection, states: list[tuple[int, bytes]]) -> None:
    conn.executemany("INSERT INTO detect_message_state(message_rowid, input_hash) VALUES (?,?) "
                     "ON CONFLICT(message_rowid) DO UPDATE SET input_hash=excluded.input_hash", states)


def delete_detect_states(conn: apsw.Connection, message_rowids: list[int]) -> None:
    conn.executemany("DELETE FROM detect_message_state WHERE message_rowid=?", [(r,) for r in message_rowids])


def prune_detect_states(conn: apsw.Connection) -> int:
    """Drop states whose message row is gone (a re-import that replaced it); returns how many."""
    conn.execute("DELETE FROM detect_message_state WHERE message_rowid NOT IN (SELECT rowid FROM messages)")
    return conn.changes()


def detect_state_digest_rows(conn: apsw.Connection) -> Iterator[tuple[str, bytes]]:
    """(message_id, input hash) of every detected message, by message id: what stage 2B's input digest reads."""
    yield from conn.execute("SELECT m.message_id, s.input_hash FROM detect_message_state s "
                            "JOIN messages m ON m.rowid = s.message_rowid ORDER BY m.message_id")


def messages_with_detections(conn: apsw.Connection) -> set[str]:
    """The messages that hold stage 2A rows (candidates, mentions, time mentions): those a recompute must clear first.
    Asked of the rows themselves, not of the detect state, so a state that went missing cannot leave rows behind."""
    return {r[0] for r in conn.execute("SELECT message_id FROM entity_mention_candidates UNION SELECT message_id "
                                       "FROM time_mentions UNION SELECT message_id FROM entity_mentions")}


def delete_message_detections(conn: apsw.Connection, message_ids: list[str]) -> None:
    """Remove everything stage 2A (and LexiconMatch) derived from these messages."""
    if not message_ids:
        return
    params = [(m,) for m in message_ids]
    conn.executemany("DELETE FROM entity_mentions WHERE message_id=?", params)
    conn.executemany("DELETE FROM entity_mention_candidates WHERE message_id=?", params)
    conn.executemany("DELETE FROM time_mentions WHERE message_id=?", params)


# -- inserts ----------------------------------------------------------------------------------------------------------


def insert_candidates(conn: apsw.Connection, cand_rows: Iterable[tuple]) -> None:
    conn.executemany(_INS_CAND, cand_rows)


def insert_mentions(conn: apsw.Connection, mention_rows: Iterable[tuple]) -> None:
    conn.executemany(_INS_MENTION, mention_rows)


def insert_time_mentions(conn: apsw.Connection, time_rows: Iterable[tuple]) -> None:
    conn.executemany(_INS_TIME, time_rows)


# -- NER runs -----------------------------------------------------------------------------------------------------------


def insert_ner_run(conn: apsw.Connection, run: dict[str, Any]) -> None:
    conn.execute("INSERT INTO ner_model_runs(run_id, model_name, model_version, config_json, started_at_utc, "
                 "completed_at_utc, raw_io_json, pipeline_run_id) VALUES (:run_id, :model_name, :model_version, "
                 ":config_json, :started_at_utc, NULL, NULL, :pipeline_run_id)", run)


def finish_ner_run(conn: apsw.Connection, run_id: str, completed_at_utc: str, raw_io_json: str) -> None:
    conn.execute("UPDATE ner_model_runs SET completed_at_utc=?, raw_io_json=? WHERE run_id=?",
                 (completed_at_utc, raw_io_json, run_id))


def insert_ner_io(conn: apsw.Connection, io_rows: Iterable[tuple]) -> None:
    conn.executemany("INSERT INTO ner_model_run_io(run_id, message_id, input_sha256, chunks_json, output_json) "
                     "VALUES (?,?,?,?,?)", io_rows)


def ner_runs(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT run_id, model_name, model_version, config_json, started_at_utc, completed_at_utc, "
                      "raw_io_json, pipeline_run_id FROM ner_model_runs ORDER BY started_at_utc, run_id")


def ner_run_outputs(conn: apsw.Connection, run_id: str) -> Iterator[tuple[str, str]]:
    """(message_id, chunks output JSON) of one NER run: what a replay needs."""
    yield from conn.execute("SELECT message_id, output_json FROM ner_model_run_io WHERE run_id=?", (run_id,))


# -- candidates of a message, for 2B re-resolution ------------------------------------------------------------------


def candidates_of_messages(conn: apsw.Connection, message_ids: list[str]) -> list[dict]:
    out: list[dict] = []
    for i in range(0, len(message_ids), 500):
        chunk = message_ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        out.extend(rows(conn, f"SELECT {', '.join(_CAND_COLS)} FROM entity_mention_candidates "
                              f"WHERE message_id IN ({q})", chunk))
    return out


def messages_with_lexicon_candidates(conn: apsw.Connection) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT message_id FROM entity_mention_candidates WHERE detector LIKE 'LEXICON:%'")]


def delete_lexicon_detections(conn: apsw.Connection) -> int:
    """Drop every LEXICON candidate and mention (a new lexicon build replaces them) and undo their suppressions."""
    n = int(scalar(conn, "SELECT COUNT(*) FROM entity_mention_candidates WHERE detector LIKE 'LEXICON:%'"))
    conn.execute("DELETE FROM entity_mentions WHERE detector LIKE 'LEXICON:%'")
    conn.execute("UPDATE entity_mention_candidates SET suppressed_by_candidate_id=NULL, suppression_reason=NULL "
                 "WHERE suppressed_by_candidate_id IN (SELECT candidate_id FROM entity_mention_candidates "
                 "WHERE detector LIKE 'LEXICON:%')")
    conn.execute("DELETE FROM entity_mention_candidates WHERE detector LIKE 'LEXICON:%'")
    return n


def update_candidate_suppression(conn: apsw.Connection, updates: list[tuple]) -> None:
    """[(suppressed_by, reason, candidate_id)]."""
    conn.executemany("UPDATE entity_mention_candidates SET suppressed_by_candidate_id=?, suppression_reason=? "
                     "WHERE candidate_id=?", updates)


def replace_message_mentions(conn: apsw.Connection, message_ids: list[str], mention_rows: list[tuple]) -> None:
    conn.executemany("DELETE FROM entity_mentions WHERE message_id=?", [(m,) for m in message_ids])
    conn.executemany(_INS_MENTION, mention_rows)


# -- whole-corpus stage fingerprints ------------------------------------------------------------------------------------


def get_fingerprint(conn: apsw.Connection, stage: str) -> str | None:
    return scalar(conn, "SELECT fingerprint FROM stage_fingerprints WHERE stage=?", (stage,))


def set_fingerprint(conn: apsw.Connection, stage: str, fingerprint: str, run_id: str) -> None:
    conn.execute("INSERT INTO stage_fingerprints(stage, fingerprint, run_id) VALUES (?,?,?) ON CONFLICT(stage) DO "
                 "UPDATE SET fingerprint=excluded.fingerprint, run_id=excluded.run_id", (stage, fingerprint, run_id))


def clear_fingerprint(conn: apsw.Connection, stage: str) -> None:
    conn.execute("DELETE FROM stage_fingerprints WHERE stage=?", (stage,))
