"""SQL of the compiled-truth read model and its build lock (seed 003 §42A.4.2), and the reads of the weekly
digest (§42A.4.6)."""

from __future__ import annotations

from typing import Any

import apsw
import orjson

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import insert_sql

TRUTH_COLS = ("node_id", "canonical_name", "node_kind", "visibility_class", "markdown", "render_contract_id",
              "render_input", "node_hash", "relationship_hash", "provenance_hash", "render_input_hash",
              "rendered_at", "schema_version")


def get_truth(conn: apsw.Connection, node_id: str) -> dict[str, Any] | None:
    r = row(conn, f"SELECT {', '.join(TRUTH_COLS)} FROM compiled_truth WHERE node_id=?", (node_id,))
    if r is not None:
        r["render_input"] = orjson.loads(r["render_input"])
    return r


def put_truth(conn: apsw.Connection, values: dict[str, Any]) -> None:
    vals = {**values, "render_input": orjson.dumps(values["render_input"]).decode()}
    conn.execute(insert_sql("compiled_truth", TRUTH_COLS, "INSERT OR REPLACE"), tuple(vals[c] for c in TRUTH_COLS))


def get_lock(conn: apsw.Connection, node_id: str) -> dict[str, Any] | None:
    return row(conn, "SELECT node_id, status, build_started_at, owner_job_id FROM compiled_truth_locks "
                     "WHERE node_id=?", (node_id,))


def put_lock(conn: apsw.Connection, node_id: str, status: str, started_at: str, owner: str) -> None:
    conn.execute("INSERT OR REPLACE INTO compiled_truth_locks(node_id, status, build_started_at, owner_job_id) "
                 "VALUES (?, ?, ?, ?)", (node_id, status, started_at, owner))


# ---- weekly digest -----------------------------------------------------------------------------------------

def nodes_created_between(conn: apsw.Connection, start: str, end: str, *, kinds: tuple[str, ...],
                          limit: int) -> list[dict[str, Any]]:
    marks = ", ".join("?" for _ in kinds)
    return rows(conn, "SELECT id, canonical_name, node_kind, created_at FROM nodes WHERE is_active=1 "
                      f"AND created_at >= ? AND created_at <= ? AND node_kind IN ({marks}) "
                      "ORDER BY created_at, id LIMIT ?", (start, end, *kinds, limit))


def evidence_updates_between(conn: apsw.Connection, start: str, end: str) -> list[dict[str, Any]]:
    """Update mutations of live commits in the window (not rolled back), oldest first, with their patches."""
    return rows(conn, "SELECT m.target_id, m.patch, m.reverse_patch, c.seq FROM knowledge_commit_mutations m "
                      "JOIN knowledge_commits c ON c.commit_id = m.commit_id WHERE m.type='update' "
                      "AND c.kind='forward' AND c.timestamp >= ? AND c.timestamp <= ? AND c.commit_id NOT IN "
                      "(SELECT rolled_back_commit_id FROM knowledge_commits WHERE rolled_back_commit_id IS NOT NULL) "
                      "ORDER BY c.seq, m.ordinal", (start, end))


def corrections_between(conn: apsw.Connection, start: str, end: str) -> int:
    """Commits that applied a person's correction (source_event user:correct, or an outcome event 'corrected')."""
    return scalar(conn, "SELECT count(*) FROM knowledge_commits c WHERE c.kind='forward' AND c.timestamp >= ? "
                        "AND c.timestamp <= ? AND (c.source_event LIKE '%correct%' OR c.commit_id IN (SELECT commit_id "
                        "FROM extraction_outcome_events WHERE outcome='corrected' AND commit_id IS NOT NULL))",
                  (start, end))


def stale_count(conn: apsw.Connection) -> int:
    return scalar(conn, "SELECT count(*) FROM nodes WHERE is_active=1 AND staleness_state <> 'fresh'")
