"""Z1–Z2 (issue 24 §2): per-row bookkeeping stored lean — the audit, dispatch-decision and experience-scan row
tables keep their text key once (WITHOUT ROWID), and the unused index on intake observations' message id is gone.
An older vault's rows read the same through the seed's views after the migration, and the store's writes,
replacements and deletes still work."""

from __future__ import annotations

import re
from pathlib import Path

import apsw
import pytest

import kenning
from kenning.store import intake as isql
from kenning.store import knowledge as ksql
from kenning.store import selfbeliefs as sbsql
from tests.old_vaults import migration_sql, vault_upto

ROW_TABLES = ("extraction_audit_rows", "intake_dispatch_decision_rows", "experience_scan_rows")
VIEWS = ("extraction_audit", "intake_dispatch_decisions", "experience_scans")


def _audit(i: int, **kw) -> dict:
    skip = i % 3 == 0
    row = {"extraction_id": f"ex_{i:02d}", "surface": "chat", "source_content_ref": f"message:m{i}",
           "extraction_prompt_version": "intake_rules_v1", "significance_score": i / 10,
           "dispatch_decision": "skip" if skip else "shallow",
           "skip_reason": "score_dispatch,below_shallow_threshold" if skip else None, "error_code": None,
           "retry_count": 0, "skip_content_fingerprint": f"fp{i}" if skip else None,
           "skip_entity_mentions": ["Ada"] if i == 3 else [], "items_extracted": i % 2, "items_promoted": 0,
           "items_filtered_by_write_gate": 0, "knowledge_commit_ids": [], "extracted_at": "2024-06-01T00:00:00.000Z"}
    row.update(kw)
    return row


def _decision(i: int, **kw) -> dict:
    row = {"observation_id": f"obs_{i:02d}", "decision": "skip" if i % 2 else "shallow",
           "queue_class": "background" if i % 2 else "normal", "reason_codes": ["score_dispatch"], "score": i / 7,
           "persistence_mode": "accessible_only", "created_at": "2024-06-01T00:00:00.000Z"}
    row.update(kw)
    return row


def _scan(i: int, **kw) -> dict:
    row = {"message_id": f"m{i}", "raw_sha256": f"h{i}", "detector_version": 2, "selected": i % 2,
           "reason": "self_statement" if i % 2 else "no_self_statement", "scanned_at": "2024-06-01T00:00:00.000Z",
           "run_id": "r1"}
    row.update(kw)
    return row


def _fill(conn, n: int = 12) -> None:
    with conn:
        # written in an order unlike the keys' (the funnel's ids are hashes)
        for i in sorted(range(n), key=lambda i: (i * 7) % n):
            conn.execute("INSERT INTO intake_observations(observation_id, observed_at, surface, source_ref, "
                         "source_version_id, actor, memory_mode_snapshot, features, dedup_key, unit_kind, "
                         "conversation_id, message_id, run_id) VALUES (?, '2024-06-01T00:00:00.000Z', 'chat', ?, ?, "
                         "'user', '{}', '{}', ?, 'message', ?, ?, 'r1')",
                         (f"obs_{i:02d}", f"message:m{i}", f"v{i}", f"k{i}", f"c{i % 3}", f"m{i}"))
            ksql.insert_audit(conn, _audit(i))
            isql.insert_decision(conn, _decision(i))
            conn.execute("INSERT INTO experience_scans(message_id, raw_sha256, detector_version, selected, reason, "
                         "scanned_at, run_id) VALUES (:message_id, :raw_sha256, :detector_version, :selected, "
                         ":reason, :scanned_at, :run_id)", _scan(i))


def _read(conn) -> dict:
    return {v: conn.execute(f"SELECT * FROM {v} ORDER BY 1").fetchall() for v in VIEWS}


def _without_rowid(conn, table: str) -> bool:
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name=?", (table,)).fetchone()[0]
    return sql.rstrip().endswith("WITHOUT ROWID")


def test_row_tables_keep_their_key_once_and_an_old_vault_reads_the_same():
    """Z1: an older vault's audit, decision and scan rows read the same through the views after migration 0121;
    the row tables are WITHOUT ROWID (no automatic key index), keep their columns in order, and the store's
    writes through the views' triggers (a second write replaces), deletes and the seed's checks still work."""
    old = vault_upto(120)   # no messages here: experience_scan_rows' foreign key is checked by name below
    _fill(old)
    want = _read(old)
    cols = {t: [r[1] for r in old.execute(f"PRAGMA table_info({t})")] for t in ROW_TABLES + VIEWS}
    assert old.execute("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_%_rows_1' AND tbl_name "
                       "IN (?, ?, ?)", ROW_TABLES).fetchone()[0] == 3
    with old:
        old.execute(migration_sql(121))
    assert _read(old) == want
    assert {t: [r[1] for r in old.execute(f"PRAGMA table_info({t})")] for t in ROW_TABLES + VIEWS} == cols
    assert all(_without_rowid(old, t) for t in ROW_TABLES)
    assert old.execute("SELECT COUNT(*) FROM sqlite_master WHERE tbl_name IN (?, ?, ?) AND type='index'",
                       ROW_TABLES).fetchone()[0] == 0
    assert old.execute("PRAGMA legacy_alter_table").fetchone()[0] == 0
    assert old.execute("PRAGMA foreign_key_check(intake_dispatch_decision_rows)").fetchall() == []
    assert [r[2] for r in old.execute("PRAGMA foreign_key_list(experience_scan_rows)")] == ["messages"]
    # the store's writes through the views: a second write of a key replaces its row
    with old:
        ksql.insert_audit(old, _audit(1, retry_count=2, error_code="timeout"))
        isql.insert_decision(old, _decision(2, decision="deep", queue_class="high_priority"))
        sbsql.upsert_scans(old, [_scan(3, raw_sha256="h3b", reason="duplicate_profile"), _scan(40)])
    assert (ksql.get_audit(old, "ex_01")["retry_count"], ksql.get_audit(old, "ex_01")["error_code"]) == (2, "timeout")
    assert ksql.get_audit(old, "ex_03")["skip_entity_mentions"] == ["Ada"]
    assert isql.get_decision(old, "obs_02")["queue_class"] == "high_priority"
    assert old.execute("SELECT raw_sha256, reason FROM experience_scans WHERE message_id='m3'").fetchone() == \
        ("h3b", "duplicate_profile")
    assert [old.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ROW_TABLES] == [12, 12, 13]
    with old:
        old.execute("DELETE FROM extraction_audit WHERE extraction_id='ex_00'")
        old.execute("DELETE FROM intake_dispatch_decisions WHERE observation_id='obs_00'")
        old.execute("DELETE FROM experience_scans WHERE message_id='m40'")
    assert [old.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ROW_TABLES] == [11, 11, 12]
    # the CHECKs and the foreign key came along
    with pytest.raises(apsw.ConstraintError):
        isql.insert_decision(old, _decision(1, decision="maybe"))
    with old:
        isql.insert_decision(old, _decision(99))   # no such observation: the foreign key reports it
    assert [r[0] for r in old.execute("PRAGMA foreign_key_check(intake_dispatch_decision_rows)")] == \
        ["intake_dispatch_decision_rows"]
    # a fresh vault is the same schema as an upgraded one
    fresh = vault_upto(10_000)
    assert all(_without_rowid(fresh, t) for t in ROW_TABLES)


def test_the_dropped_observation_message_index_served_only_forget():
    """Z2: idx_intake_observations_message was read only by forget's collect (conversation OR message, a
    multi-index OR); without it that statement scans the rows once and finds the same observations. No other
    statement of the package selects intake observations by message id (grepped)."""
    collect = ("SELECT observation_id FROM intake_observations WHERE conversation_id IN ('c1') "
               "OR message_id IN ('m4', 'm9') ORDER BY 1")
    old = vault_upto(120)
    _fill(old)
    plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN " + collect))
    assert "idx_intake_observations_message" in plan, plan
    want = old.execute(collect).fetchall()
    assert [r[0] for r in want] == ["obs_01", "obs_04", "obs_07", "obs_09", "obs_10"]
    with old:
        old.execute(migration_sql(121))
    plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN " + collect))
    assert "idx_intake_observations_message" not in plan and "SCAN" in plan, plan
    assert old.execute(collect).fetchall() == want
    # the conversation index stays: mode changes and incognito re-opening select by conversation
    plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN SELECT observation_id FROM intake_observations "
                                              "WHERE conversation_id IN ('c1')"))
    assert "idx_intake_observations_conversation" in plan, plan
    src = Path(kenning.__file__).parent
    readers = [(p.name, line.strip()) for p in src.rglob("*.py") for line in p.read_text(encoding="utf-8").splitlines()
               if re.search(r"intake_observations?\w*\b.*WHERE.*\bmessage_id\b|\bo\.message_id\s*(=|IN)", line)]
    assert readers == [], readers


def test_vector_text_keys_are_16_bytes_and_old_hex_keys_convert_in_items_and_cache():
    """Z3–Z4: vector_items and embedding_cache keep 16 bytes of a text's sha256; an older vault's hex keys convert
    in both tables (so a cache row and the item of the same text still match, as forget compares them), the store
    still answers with the hex digests it is asked about, and updated_at_utc is gone."""
    from kenning.sources.jcs import sha256_hex
    from kenning.store import embeddings as cache_sql
    from kenning.store import vectors as vsql

    texts = ["calm river", "violin winter", "calm river", "a query"]
    hexes = [sha256_hex(t) for t in texts]
    old = vault_upto(121)
    with old:
        for n, h in enumerate(hexes[:3]):
            old.execute("INSERT INTO vector_items(space, item_id, kind, text, text_sha256, rev, updated_at_utc) "
                        "VALUES ('search', ?, NULL, NULL, ?, ?, '2024-06-01T00:00:00Z')", (str(n + 1), h, n + 1))
        for h in (hexes[1], hexes[3]):
            old.execute("INSERT INTO embedding_cache VALUES ('hash:kenning-hash-v1', 64, ?, x'00', 'T')", (h,))
    want_vids = {hexes[0]: [1, 3], hexes[1]: [2]}
    assert old.execute("SELECT text_sha256, group_concat(vid) FROM vector_items GROUP BY 1 ORDER BY 2").fetchall() \
        == [(hexes[0], "1,3"), (hexes[1], "2")]
    with old:
        old.execute(migration_sql(122))
    assert {r[0] for r in old.execute("SELECT typeof(text_sha256) || length(text_sha256) FROM vector_items "
                                      "UNION SELECT typeof(text_sha256) || length(text_sha256) FROM embedding_cache")} \
        == {"blob16"}
    assert "updated_at_utc" not in [r[1] for r in old.execute("PRAGMA table_info(vector_items)")]
    assert vsql.vids_by_sha(old, hexes) == want_vids
    assert vsql.vids_by_sha(old, hexes, max_rev=2) == {hexes[0]: [1], hexes[1]: [2]}
    assert vsql.shas_of_vids(old, [1, 2]) == {1: hexes[0][:32], 2: hexes[1][:32]}
    assert set(cache_sql.get_many(old, "hash:kenning-hash-v1", 64, hexes)) == {hexes[1], hexes[3]}
    # forget's comparison of the two tables' keys (a cache row of a text an item still embeds)
    assert old.execute("SELECT COUNT(*) FROM embedding_cache WHERE text_sha256 IN "
                       "(SELECT text_sha256 FROM vector_items)").fetchone()[0] == 1
    plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN SELECT vid FROM vector_items WHERE text_sha256 "
                                              "IN (?, ?)", (vsql.text_key(hexes[0]), vsql.text_key(hexes[1]))))
    assert "idx_vector_items_sha" in plan, plan
    with old:   # the store's writes speak hex and store the key
        vsql.upsert_items(old, [{"space": "search", "item_id": "2", "kind": None, "text": None,
                                 "text_sha256": sha256_hex("new words"), "rev": 4}])
        cache_sql.put_many(old, "hash:kenning-hash-v1", 64, [(sha256_hex("another query"), b"\x01")], "T")
        cache_sql.delete_many(old, "hash:kenning-hash-v1", 64, [hexes[3]])
    assert vsql.items_by_ids(old, "search", ["2"])["2"]["text_sha256"] == vsql.text_key(sha256_hex("new words"))
    assert vsql.vids_by_sha(old, [sha256_hex("new words"), hexes[1]]) == {sha256_hex("new words"): [2]}
    assert set(cache_sql.get_many(old, "hash:kenning-hash-v1", 64, [hexes[3], sha256_hex("another query")])) == \
        {sha256_hex("another query")}


def _obs(i: int, version: str | None, key: str | None = None, oid: str | None = None, ref: str | None = None) -> dict:
    import hashlib

    key = key or hashlib.sha256(f"chat\x00message:m{i}\x00{version}".encode()).hexdigest()
    return {"observation_id": oid or "obs_" + key[:32], "observed_at": "2024-06-01T00:00:00.000Z", "surface": "chat",
            "source_ref": ref or f"message:m{i}", "source_version_id": version, "actor": "user",
            "memory_mode_snapshot": {"mode": "normal"}, "features": {"a": 1}, "dedup_key": key,
            "unit_kind": "message", "conversation_id": "c1", "message_id": f"m{i}", "run_id": "r1"}


def test_observation_versions_and_key_halves_are_16_bytes_and_read_the_same():
    """Z6: a 32-hex source version id and dedup-key half are stored as 16 bytes, anything else as it is; an older
    vault's observations read the same through the view after migration 0121; the version lookup still finds a
    version seen under another ref through its index; a repeated dedup key is still refused."""
    from kenning.intake.envelope import content_version

    v1, v2 = content_version("hello there"), content_version("something else")
    assert len(v1) == 32
    rows = [_obs(0, v1), _obs(1, v1), _obs(2, v2), _obs(3, "nv_note_version_7"), _obs(4, "A" * 32), _obs(5, None),
            _obs(6, v2, key="k6", oid="obs_x6"), _obs(7, "f" * 64, key="short", oid="obs_short"),
            _obs(8, v2, ref="event:m8")]
    cols = ", ".join(isql.OBS_COLS)
    old = vault_upto(120, foreign_keys=True)
    with old:
        for r in rows:
            isql.insert_observation(old, r)
    want = old.execute(f"SELECT {cols} FROM intake_observations ORDER BY observation_id").fetchall()
    with old:
        old.execute(migration_sql(121))
    assert old.execute(f"SELECT {cols} FROM intake_observations ORDER BY observation_id").fetchall() == want
    kinds = dict(old.execute("SELECT message_id, typeof(source_version_id) || '/' || typeof(dedup_key_rest) "
                             "FROM intake_observation_rows"))
    assert kinds == {"m0": "blob/blob", "m1": "blob/blob", "m2": "blob/blob", "m3": "text/blob", "m4": "text/blob",
                     "m5": "null/blob", "m6": "blob/null", "m7": "text/text", "m8": "blob/blob"}
    # the funnel's duplicate test: the same content under another ref, through the index
    assert isql.version_seen_elsewhere(old, v1, "message:m0")   # m1 holds it
    assert not isql.version_seen_elsewhere(old, content_version("never said"), "message:m0")
    assert isql.version_seen_elsewhere(old, "nv_note_version_7", "message:m99")
    assert not isql.version_seen_elsewhere(old, "nv_note_version_7", "message:m3")
    assert isql.version_seen_elsewhere(old, v2, "event:m8")   # m2, m6 hold it under message refs
    plan = " ".join(r[3] for r in old.execute(
        "EXPLAIN QUERY PLAN SELECT 1 FROM intake_observation_rows WHERE source_version_id=? AND "
        "COALESCE(source_ref_other, 'message:' || message_id)<>? AND unit_kind='message' LIMIT 1",
        (isql.version_key(v1), "x")))
    assert "idx_intake_observations_version" in plan, plan
    # writes through the view after the migration: converted, read back the same, repeated keys refused
    with old:
        isql.insert_observation(old, _obs(10, v1))
    assert isql.get_observation(old, _obs(10, v1)["observation_id"])["source_version_id"] == v1
    assert isql.get_observation(old, _obs(10, v1)["observation_id"])["dedup_key"] == _obs(10, v1)["dedup_key"]
    assert isql.known_dedup_keys(old) == {r["dedup_key"] for r in rows} | {_obs(10, v1)["dedup_key"]}
    for clash in (_obs(11, v1, key=rows[0]["dedup_key"], oid="obs_other"), _obs(12, v1, key="short")):
        with pytest.raises(apsw.ConstraintError, match="dedup_key|observation_id"):
            with old:
                isql.insert_observation(old, clash)
