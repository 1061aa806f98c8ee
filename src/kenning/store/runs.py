"""SQL of run bookkeeping: runs, run_events, vault_meta."""

from __future__ import annotations

import apsw

from kenning.store.connection import rows, scalar


def next_seq(conn: apsw.Connection, stage: str) -> int:
    return int(scalar(conn, "SELECT COALESCE(MAX(seq), 0) + 1 FROM runs WHERE stage=?", (stage,)))


def insert_run(conn: apsw.Connection, run: dict) -> None:
    conn.execute(
        "INSERT INTO runs(run_id, stage, seq, started_at_utc, finished_at_utc, status, counts_json, config_hash, "
        "clock_mode, args_json, error, kenning_version) VALUES (:run_id, :stage, :seq, :started_at_utc, "
        ":finished_at_utc, :status, :counts_json, :config_hash, :clock_mode, :args_json, :error, :kenning_version)",
        run,
    )


def finish_run(conn: apsw.Connection, run_id: str, status: str, finished_at_utc: str, counts_json: str | None,
               error: str | None = None) -> None:
    conn.execute(
        "UPDATE runs SET status=?, finished_at_utc=?, counts_json=?, error=? WHERE run_id=?",
        (status, finished_at_utc, counts_json, error, run_id),
    )


def insert_events(conn: apsw.Connection, events: list[tuple]) -> None:
    if events:
        conn.executemany(
            "INSERT INTO run_events(run_id, seq, level, code, message, context_json) VALUES (?,?,?,?,?,?)", events
        )


def last_runs(conn: apsw.Connection, limit: int = 10) -> list[dict]:
    return rows(conn, "SELECT run_id, stage, seq, started_at_utc, finished_at_utc, status, counts_json, error "
                      "FROM runs ORDER BY started_at_utc DESC, stage DESC, seq DESC LIMIT ?", (limit,))


def latest_run_per_stage(conn: apsw.Connection, limit: int = 50) -> list[dict]:
    """The most recent run of each stage, newest first: `status` shows every stage's state, however many there are
    (the ten latest runs alone hid stage 1 once a pipeline had more than ten stages)."""
    return rows(conn, "SELECT run_id, stage, seq, started_at_utc, finished_at_utc, status, counts_json, error FROM ("
                      "SELECT *, row_number() OVER (PARTITION BY stage ORDER BY started_at_utc DESC, seq DESC) AS rn "
                      "FROM runs) WHERE rn = 1 ORDER BY started_at_utc DESC, stage DESC, seq DESC LIMIT ?", (limit,))


def event_counts(conn: apsw.Connection, run_id: str) -> list[dict]:
    return rows(conn, "SELECT level, code, COUNT(*) AS n FROM run_events WHERE run_id=? GROUP BY level, code "
                      "ORDER BY n DESC", (run_id,))


def events(conn: apsw.Connection, run_id: str | None = None, level: str | None = None, limit: int = 200) -> list[dict]:
    sql = "SELECT run_id, seq, level, code, message, context_json FROM run_events WHERE 1=1"
    params: list = []
    if run_id:
        sql += " AND run_id=?"
        params.append(run_id)
    if level:
        sql += " AND level=?"
        params.append(level)
    sql += " ORDER BY rowid DESC LIMIT ?"
    params.append(limit)
    return rows(conn, sql, params)


def set_meta(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO vault_meta(key, value) VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                 (key, value))


def get_meta(conn: apsw.Connection, key: str) -> str | None:
    return scalar(conn, "SELECT value FROM vault_meta WHERE key=?", (key,))


def table_counts(conn: apsw.Connection) -> dict[str, int]:
    virtual = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                          "AND sql LIKE 'CREATE VIRTUAL%'")]
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE '%_fts_%' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")]
    # a virtual table's shadow tables (vec0's <name>_chunks, _rowids, …) are its internals, not tables to count
    names = [n for n in names if not any(n.startswith(v + "_") for v in virtual)]
    return {n: int(scalar(conn, f'SELECT COUNT(*) FROM "{n}"')) for n in names}
