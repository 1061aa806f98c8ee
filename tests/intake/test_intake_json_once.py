"""Y2 (issue 24 §2): intake observations keep each distinct memory-mode snapshot and feature set once; the seed's
columns come back through the view `intake_observations`, which takes inserts and deletes; an older vault's rows
are moved over unchanged and the decisions' foreign key follows the table."""

from __future__ import annotations

import apsw
import pytest

from kenning.store import intake as isql
from tests.old_vaults import migration_sql, vault_upto

SNAP = '{"mode":"normal","ttl_minutes":null}'


def _obs(i: int, features: str) -> dict:
    return {"observation_id": f"obs_{i}", "observed_at": "2024-06-01T00:00:00.000Z", "surface": "chat",
            "source_ref": f"message:m{i}", "source_version_id": f"v{i}", "actor": "user",
            "memory_mode_snapshot": SNAP, "features": features, "dedup_key": f"k{i}", "unit_kind": "message",
            "conversation_id": "c1", "message_id": f"m{i}", "run_id": "r1"}



def _insert_raw(conn: apsw.Connection, rows: list[dict]) -> None:
    for r in rows:
        cols = list(r)
        conn.execute(f"INSERT INTO intake_observations({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                     [r[c] for c in cols])
        conn.execute("INSERT INTO intake_dispatch_decisions VALUES (?, 'skip', 'normal', '[]', 0, "
                     "'accessible_only', '2024-06-01T00:00:00.000Z')", (r["observation_id"],))


def _all(conn: apsw.Connection) -> list[tuple]:
    return conn.execute(f"SELECT {', '.join(isql.OBS_COLS)} FROM intake_observations "
                        "ORDER BY observation_id").fetchall()


def test_old_rows_move_over_unchanged_and_values_are_stored_once():
    rows = [_obs(i, '{"novelty_score":1}' if i % 2 else '{"novelty_score":0.5}') for i in range(6)]
    rows[2]["source_ref"] = "mail:abc"  # not derived from the message id: kept
    rows[3].update(message_id=None, unit_kind="conversation", source_ref="conversation:c1")
    old = vault_upto(112, foreign_keys=True)
    _insert_raw(old, rows)
    want = _all(old)
    sql = migration_sql(113)
    with old:
        old.execute(sql)
    assert _all(old) == want
    # 1 snapshot, 2 feature sets, 1 time, 1 run id; source_ref kept on the two rows it does not derive from
    assert old.execute("SELECT COUNT(*) FROM intake_values").fetchone()[0] == 5
    assert old.execute("SELECT COUNT(source_ref_other) FROM intake_observation_rows").fetchone()[0] == 2
    assert "intake_observation_rows" in old.execute(
        "SELECT sql FROM sqlite_master WHERE name='intake_dispatch_decisions'").fetchone()[0]
    assert old.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_view_takes_the_store_writes_and_deletes():
    conn = vault_upto(10**6, foreign_keys=True)
    with conn:
        isql.insert_observation(conn, {**_obs(1, '{"b":2,"a":1}'), "memory_mode_snapshot": {"mode": "normal"},
                                       "features": {"b": 2, "a": 1}})
        isql.insert_observation(conn, {**_obs(2, ""), "memory_mode_snapshot": {"mode": "normal"},
                                       "features": {"a": 1, "b": 2}})
    got = isql.get_observation(conn, "obs_2")
    assert got["features"] == {"a": 1, "b": 2} and got["memory_mode_snapshot"] == {"mode": "normal"}
    assert conn.execute("SELECT COUNT(*) FROM intake_values").fetchone()[0] == 4  # snapshot, features, time, run
    assert got["source_ref"] == "message:m2" and got["observed_at"] == "2024-06-01T00:00:00.000Z"
    assert got["run_id"] == "r1"
    with pytest.raises(apsw.ConstraintError):  # the seed's unique dedup key still holds
        with conn:
            isql.insert_observation(conn, {**_obs(3, ""), "dedup_key": "k1", "memory_mode_snapshot": {},
                                           "features": {}})
    with conn:
        conn.execute("DELETE FROM intake_observations WHERE observation_id = 'obs_1'")
    assert [r[0] for r in _all(conn)] == ["obs_2"]
    assert conn.execute("SELECT COUNT(*) FROM intake_observation_rows").fetchone()[0] == 1


def test_the_dropped_audit_source_index_served_no_query():
    """Y3: on a vault that still has idx_extraction_audit_source, the one statement reading extraction_audit by its
    source (forget's instr() match) scans the table; the store's other read is by extraction_id (its key)."""
    old = vault_upto(112, foreign_keys=True)
    old.execute("CREATE TEMP TABLE forget_keys (kind TEXT, id TEXT)")
    plan = " ".join(r[3] for r in old.execute(
        "EXPLAIN QUERY PLAN DELETE FROM extraction_audit WHERE EXISTS (SELECT 1 FROM temp.forget_keys k WHERE "
        "k.kind IN ('message', 'conversation') AND instr(extraction_audit.source_content_ref, k.id) > 0)"))
    assert "SCAN extraction_audit" in plan and "idx_extraction_audit_source" not in plan
    plan = " ".join(r[3] for r in old.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM extraction_audit WHERE extraction_id = 'x'"))
    assert "idx_extraction_audit_source" not in plan
    new = vault_upto(113, foreign_keys=True)
    assert new.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'idx_extraction_audit_source'").fetchone()[0] == 0
