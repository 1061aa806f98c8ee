"""SQL of the LLM log: llm_extraction_runs and llm_extraction_calls (seed 001 §4.1)."""

from __future__ import annotations

from typing import Any

import apsw

from kenning.store.connection import row, rows

RUN_COLUMNS = (
    "run_id", "model_name", "model_version", "config_json", "started_at_utc", "completed_at_utc",
    "messages_processed", "assertions_extracted", "raw_stats_json", "stage_run_id", "name", "mode", "endpoint",
    "extractor_version", "prompt_versions_json", "status",
)
CALL_COLUMNS = (
    "call_id", "run_id", "message_id", "request_json", "response_json", "call_timestamp_utc", "retry_count",
    "seed_honored", "parse_success", "raw_io_json", "item_key", "prompt_name", "prompt_version", "schema_name",
    "model", "attempt_kind", "request_sha256", "http_status", "latency_ms", "prompt_tokens", "completion_tokens",
    "total_tokens", "parsed_json", "error", "error_code", "mode", "replayed_from_call_id",
)

_INS_RUN = f"INSERT INTO llm_extraction_runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
_INS_CALL = (f"INSERT OR REPLACE INTO llm_extraction_calls ({', '.join(CALL_COLUMNS)}) "
             f"VALUES ({', '.join('?' * len(CALL_COLUMNS))})")


def insert_run(conn: apsw.Connection, run: dict[str, Any]) -> None:
    conn.execute(_INS_RUN, tuple(run[c] for c in RUN_COLUMNS))


def finish_run(conn: apsw.Connection, run_id: str, *, completed_at_utc: str, status: str, model_version: str | None,
               messages_processed: int, assertions_extracted: int, raw_stats_json: str,
               prompt_versions_json: str, extractor_version: str | None) -> None:
    conn.execute(
        "UPDATE llm_extraction_runs SET completed_at_utc=?, status=?, model_version=COALESCE(?, model_version), "
        "messages_processed=?, assertions_extracted=?, raw_stats_json=?, prompt_versions_json=?, "
        "extractor_version=COALESCE(?, extractor_version) WHERE run_id=?",
        (completed_at_utc, status, model_version, messages_processed, assertions_extracted, raw_stats_json,
         prompt_versions_json, extractor_version, run_id),
    )


def insert_call(conn: apsw.Connection, call: dict[str, Any]) -> None:
    # OR REPLACE: a call id is deterministic, so re-running the same request in the same run (possible only when
    # a caller repeats an item) records the latest attempt instead of failing the stage.
    conn.execute(_INS_CALL, tuple(call.get(c) for c in CALL_COLUMNS))


def update_call_parse(conn: apsw.Connection, call_id: str, parse_success: int, parsed_json: str | None,
                      error: str | None, error_code: str | None) -> None:
    conn.execute("UPDATE llm_extraction_calls SET parse_success=?, parsed_json=?, error=?, error_code=? "
                 "WHERE call_id=?", (parse_success, parsed_json, error, error_code, call_id))


def get_run(conn: apsw.Connection, run_id: str) -> dict | None:
    return row(conn, "SELECT * FROM llm_extraction_runs WHERE run_id=?", (run_id,))


def runs_list(conn: apsw.Connection, limit: int = 50) -> list[dict]:
    return rows(conn, "SELECT * FROM llm_extraction_runs ORDER BY started_at_utc DESC, rowid DESC LIMIT ?", (limit,))


def calls_of_run(conn: apsw.Connection, run_id: str) -> list[dict]:
    return rows(conn, "SELECT * FROM llm_extraction_calls WHERE run_id=? ORDER BY rowid", (run_id,))


def stored_answer(conn: apsw.Connection, request_sha256: str, from_run_id: str | None = None) -> dict | None:
    """The most recent live answer to exactly this request, for replay: an HTTP 200 whose body was a chat
    completion (a 200 with a body that was not one was retried live, so it is not an answer)."""
    sql = ("SELECT call_id, run_id, response_json, http_status, prompt_tokens, completion_tokens, total_tokens "
           "FROM llm_extraction_calls WHERE request_sha256=? AND mode='live' AND http_status=200 "
           "AND response_json IS NOT NULL AND (error_code IS NULL OR error_code = 'MALFORMED_OUTPUT')")
    return _latest_call(conn, sql, request_sha256, from_run_id)


def stored_failure(conn: apsw.Connection, request_sha256: str, from_run_id: str | None = None) -> dict | None:
    """The last logged outcome of a request that never got an answer (transport failure, budget skip)."""
    sql = ("SELECT call_id, run_id, error, error_code FROM llm_extraction_calls WHERE request_sha256=? "
           "AND mode='live'")
    return _latest_call(conn, sql, request_sha256, from_run_id)


def _latest_call(conn: apsw.Connection, sql: str, request_sha256: str, from_run_id: str | None) -> dict | None:
    """The newest row of ``sql`` (filtered on request_sha256 = ?), within one run when ``from_run_id``."""
    params: list[Any] = [request_sha256]
    if from_run_id:
        sql += " AND run_id=?"
        params.append(from_run_id)
    sql += " ORDER BY call_timestamp_utc DESC, rowid DESC LIMIT 1"
    return row(conn, sql, params)
