"""Y20 (issue 24 §2): extraction_audit (seed 003 §38) and intake_dispatch_decisions (§20A.2) keep their repeated
values once in intake_values; the seed's tables are views with the same columns in the same order, which take the
store's inserts (a second insert of a key replaces its row, as INSERT OR REPLACE did) and deletes; an older vault's
rows are moved over unchanged."""

from __future__ import annotations

import apsw
import pytest

from kenning.store import intake as isql
from kenning.store import knowledge as ksql
from tests.old_vaults import migration_sql, vault_upto

AUDIT_SEED_COLS = ["extraction_id", "surface", "source_content_ref", "extraction_prompt_version", "significance_score",
                   "dispatch_decision", "skip_reason", "error_code", "retry_count", "skip_content_fingerprint",
                   "skip_entity_mentions", "items_extracted", "items_promoted", "items_filtered_by_write_gate",
                   "knowledge_commit_ids", "extracted_at"]
DECISION_SEED_COLS = ["observation_id", "decision", "queue_class", "reason_codes", "score", "persistence_mode",
                      "created_at"]



def _audit(i: int, **kw) -> dict:
    skip = i % 3 == 0
    row = {"extraction_id": f"ex_{i}", "surface": "chat" if i % 4 else "note", "source_content_ref": f"message:m{i}",
           "extraction_prompt_version": "intake_rules_v1", "significance_score": i / 10,
           "dispatch_decision": "skip" if skip else "shallow",
           "skip_reason": "score_dispatch,below_shallow_threshold" if skip else None, "error_code": None,
           "retry_count": 0, "skip_content_fingerprint": f"fp{i}" if skip else None,
           "skip_entity_mentions": ["Ada"] if i == 3 else [], "items_extracted": i % 2, "items_promoted": 0,
           "items_filtered_by_write_gate": 0, "knowledge_commit_ids": [f"c{i}"] if i == 1 else [],
           "extracted_at": "2024-06-01T00:00:00.000Z"}
    row.update(kw)
    return row


def _decision(i: int, **kw) -> dict:
    row = {"observation_id": f"obs_{i}", "decision": "skip" if i % 2 else "shallow",
           "queue_class": "background" if i % 2 else "normal",
           "reason_codes": ["score_dispatch", "below_shallow_threshold"] if i % 2 else ["score_dispatch"],
           "score": i / 7, "persistence_mode": "accessible_only" if i % 2 else "candidate_graph",
           "created_at": "2024-06-01T00:00:00.000Z"}
    row.update(kw)
    return row


def _observation(conn: apsw.Connection, i: int) -> None:
    conn.execute("INSERT INTO intake_observations(observation_id, observed_at, surface, source_ref, "
                 "source_version_id, actor, memory_mode_snapshot, features, dedup_key, unit_kind, conversation_id, "
                 "message_id, run_id) VALUES (?, '2024-06-01T00:00:00.000Z', 'chat', ?, ?, 'user', '{}', '{}', ?, "
                 "'message', 'c1', ?, 'r1')", (f"obs_{i}", f"message:m{i}", f"v{i}", f"k{i}", f"m{i}"))


def _audits(conn):
    return conn.execute(f"SELECT {', '.join(AUDIT_SEED_COLS)} FROM extraction_audit ORDER BY 1").fetchall()


def _decisions(conn):
    return conn.execute(f"SELECT {', '.join(DECISION_SEED_COLS)} FROM intake_dispatch_decisions ORDER BY 1").fetchall()


def _fill(conn: apsw.Connection, n: int = 9) -> None:
    with conn:
        for i in range(n):
            _observation(conn, i)
            ksql.insert_audit(conn, _audit(i))
            isql.insert_decision(conn, _decision(i))


def test_old_rows_move_over_unchanged():
    old = vault_upto(117, foreign_keys=True)
    # the store's writes as they were before 0118 (INSERT OR REPLACE into the tables)
    with old:
        for i in range(9):
            _observation(old, i)
            old.execute(f"INSERT OR REPLACE INTO extraction_audit({', '.join(AUDIT_SEED_COLS)}) VALUES "
                        f"({', '.join('?' * len(AUDIT_SEED_COLS))})", ksql._encode(AUDIT_SEED_COLS, _audit(i)))
            old.execute(f"INSERT OR REPLACE INTO intake_dispatch_decisions({', '.join(DECISION_SEED_COLS)}) VALUES "
                        f"({', '.join('?' * len(DECISION_SEED_COLS))})", isql._enc(DECISION_SEED_COLS, _decision(i)))
    want_a, want_d = _audits(old), _decisions(old)
    sql = migration_sql(118)
    with old:
        old.execute(sql)
    assert _audits(old) == want_a and _decisions(old) == want_d
    # the views keep the seed's column order
    assert [r[1] for r in old.execute("PRAGMA table_info(extraction_audit)")] == AUDIT_SEED_COLS
    assert [r[1] for r in old.execute("PRAGMA table_info(intake_dispatch_decisions)")] == DECISION_SEED_COLS
    # the repeated values are stored once, and the row tables hold no copy of them
    n = old.execute("SELECT COUNT(*) FROM intake_values WHERE value IN ('intake_rules_v1', 'background', "
                    "'score_dispatch,below_shallow_threshold', '[]')").fetchone()[0]
    assert n == 4
    cols = {r[1] for r in old.execute("PRAGMA table_info(extraction_audit_rows)")}
    assert not cols & {"surface", "extraction_prompt_version", "skip_reason", "knowledge_commit_ids", "extracted_at"}
    assert "skip_entity_mentions" in cols   # can name a person's entities: not in the textless intake_values


def test_the_views_take_the_store_writes_replaces_and_deletes():
    conn = vault_upto(10_000, foreign_keys=True)
    _fill(conn)
    assert ksql.get_audit(conn, "ex_3")["skip_entity_mentions"] == ["Ada"]
    assert ksql.get_audit(conn, "ex_1")["knowledge_commit_ids"] == ["c1"]
    assert ksql.get_audit(conn, "ex_1")["skip_reason"] is None
    assert isql.get_decision(conn, "obs_1")["reason_codes"] == ["score_dispatch", "below_shallow_threshold"]
    before = conn.execute("SELECT COUNT(*) FROM intake_values").fetchone()[0]
    with conn:  # a second write of a key replaces its row (the store's INSERT OR REPLACE, through the trigger)
        ksql.insert_audit(conn, _audit(1, retry_count=2, error_code="timeout"))
        isql.insert_decision(conn, _decision(2, decision="deep", queue_class="high_priority"))
    assert conn.execute("SELECT COUNT(*) FROM intake_values").fetchone()[0] == before + 1   # 'high_priority'
    assert conn.execute("SELECT COUNT(*) FROM extraction_audit").fetchone()[0] == 9
    assert (ksql.get_audit(conn, "ex_1")["retry_count"], ksql.get_audit(conn, "ex_1")["error_code"]) == (2, "timeout")
    assert isql.get_decision(conn, "obs_2")["queue_class"] == "high_priority"
    assert conn.execute("SELECT COUNT(*) FROM intake_dispatch_decisions").fetchone()[0] == 9
    assert [r["decision"] for r in isql.decision_counts(conn)] == ["deep", "shallow", "skip"]
    with conn:
        conn.execute("DELETE FROM intake_dispatch_decisions WHERE observation_id='obs_0'")
        conn.execute("DELETE FROM extraction_audit WHERE extraction_id='ex_0'")
    assert conn.execute("SELECT COUNT(*) FROM intake_dispatch_decision_rows").fetchone()[0] == 8
    assert conn.execute("SELECT COUNT(*) FROM extraction_audit_rows").fetchone()[0] == 8


def test_the_moved_columns_keep_their_checks():
    conn = vault_upto(10_000, foreign_keys=True)
    _fill(conn, 2)
    with pytest.raises(apsw.ConstraintError, match="queue_class"):
        isql.insert_decision(conn, _decision(1, queue_class="urgent"))
    with pytest.raises(apsw.ConstraintError, match="persistence_mode"):
        isql.insert_decision(conn, _decision(1, persistence_mode="forever"))
    with pytest.raises(apsw.ConstraintError):
        isql.insert_decision(conn, _decision(1, decision="maybe"))
    with pytest.raises(apsw.ConstraintError):
        ksql.insert_audit(conn, _audit(1, extracted_at=None))
    assert isql.get_decision(conn, "obs_1")["queue_class"] == "background"   # the failed writes changed nothing


def test_the_dropped_decision_index_served_no_query():
    """Y21: with the index put back on the row table, none of the store's reads of the decisions through the
    view uses it to find rows (EXPLAIN QUERY PLAN of each, plus forget's): the counts by decision read every row
    and sort the groups in a temporary b-tree either way."""
    old = vault_upto(118, foreign_keys=True)
    old.execute("CREATE INDEX idx_intake_decisions_decision ON intake_dispatch_decision_rows(decision)")
    old.execute("CREATE TEMP TABLE forget_keys (kind TEXT, id TEXT)")
    reads = ["SELECT * FROM intake_dispatch_decisions WHERE observation_id='x'",
             "SELECT d.*, o.unit_kind FROM intake_dispatch_decisions d JOIN intake_observations o "
             "USING (observation_id) ORDER BY o.observed_at, d.observation_id",
             "SELECT decision, reason_codes, COUNT(*) AS n FROM intake_dispatch_decisions "
             "GROUP BY decision, reason_codes ORDER BY decision, reason_codes",
             "SELECT o.observation_id, d.decision FROM intake_observations o LEFT JOIN intake_dispatch_decisions d "
             "USING (observation_id) WHERE o.conversation_id IN ('c1') ORDER BY o.observation_id",
             "SELECT o.observation_id FROM intake_observations o JOIN intake_dispatch_decisions d "
             "USING (observation_id) WHERE o.conversation_id IN ('c1') AND d.reason_codes='[\"incognito_mode\"]'",
             "DELETE FROM temp.forget_keys WHERE kind = 'observation' AND id IN (SELECT observation_id FROM "
             "intake_dispatch_decisions WHERE reason_codes = '[\"incognito_mode\"]')",
             "DELETE FROM intake_dispatch_decisions WHERE observation_id IN ('x')"]
    for sql in reads:
        plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN " + sql))
        if "GROUP BY" in sql:   # a whole scan, in index order or not; the grouping is sorted apart either way
            assert "USE TEMP B-TREE FOR GROUP BY" in plan, plan
        else:
            assert "idx_intake_decisions_decision" not in plan, (sql, plan)
    new = vault_upto(118, foreign_keys=True)
    gone = "SELECT COUNT(*) FROM sqlite_master WHERE name='idx_intake_decisions_decision'"
    assert new.execute(gone).fetchone()[0] == 0


def _env_obs(i: int, key: str | None = None, oid: str | None = None) -> dict:
    import hashlib

    key = key or hashlib.sha256(f"chat\x00message:m{i}\x00v{i}".encode()).hexdigest()
    return {"observation_id": oid or "obs_" + key[:32], "observed_at": "2024-06-01T00:00:00.000Z", "surface": "chat",
            "source_ref": f"message:m{i}", "source_version_id": f"v{i}", "actor": "user",
            "memory_mode_snapshot": {"mode": "normal"}, "features": {"a": 1}, "dedup_key": key, "unit_kind": "message",
            "conversation_id": "c1", "message_id": f"m{i}", "run_id": "r1"}


def test_the_dedup_key_keeps_its_second_half_and_stays_unique():
    """Y25: a dedup key whose first half gives the observation id keeps only its second half; another key is kept
    whole; an older vault's keys read the same; a repeated key is refused whichever way either is stored."""
    old = vault_upto(118, foreign_keys=True)
    rows = [_env_obs(0), _env_obs(1), _env_obs(2, key="k2", oid="obs_x2"), _env_obs(3, key="short", oid="obs_short")]
    with old:
        for r in rows:
            isql.insert_observation(old, r)
    cols = ", ".join(isql.OBS_COLS)
    want = old.execute(f"SELECT {cols} FROM intake_observations ORDER BY observation_id").fetchall()
    sql = migration_sql(119)
    with old:
        old.execute(sql)
    assert old.execute(f"SELECT {cols} FROM intake_observations ORDER BY observation_id").fetchall() == want
    stored = dict(old.execute("SELECT observation_id, coalesce(dedup_key_other, '+' || dedup_key_rest) "
                              "FROM intake_observation_rows"))
    assert stored[rows[0]["observation_id"]] == "+" + rows[0]["dedup_key"][32:]
    assert stored["obs_x2"] == "k2" and stored["obs_short"] == "+"
    assert isql.known_dedup_keys(old) == {r["dedup_key"] for r in rows}
    gone = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'idx_intake_observations_dedup'"
    assert old.execute(gone).fetchone()[0] == 0
    clashes = [_env_obs(5, key=rows[0]["dedup_key"], oid="obs_other"),   # a derived key again, under another id
               _env_obs(6, key="k2"),                                      # a whole key again, now derivable
               _env_obs(7, key="k2", oid="obs_y"),                         # a whole key again, whole
               _env_obs(8, key="short")]                                   # a short derived key again
    for r in clashes:
        with pytest.raises(apsw.ConstraintError, match="dedup_key|observation_id"):
            with old:
                isql.insert_observation(old, r)
    with pytest.raises(apsw.ConstraintError, match="NOT NULL"):
        with old:
            isql.insert_observation(old, {**_env_obs(9), "dedup_key": None})
    with old:
        isql.insert_observation(old, _env_obs(10))
    assert len(isql.known_dedup_keys(old)) == 5


def test_forget_summary_counts_the_rows_behind_the_views():
    """forget's report names the row tables it deleted from (Y2, Y20); the per-layer summary counts them."""
    from kenning.cli.forget import summarize

    got = summarize({"intake_observation_rows": 3, "intake_dispatch_decision_rows": 3, "pending_extractions": 1})
    assert got["intake"] == 7
