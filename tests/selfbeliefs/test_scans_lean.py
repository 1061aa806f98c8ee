"""Y23 (issue 24 §2): experience_scans keeps its reason, scan time and run id once (intake_values) behind a view of
its old name and columns; an older vault's scans read the same, and a second scan of a message replaces its row."""

from __future__ import annotations

from kenning.store import selfbeliefs as sbsql
from tests.old_vaults import migration_sql, vault_upto

COLS = "message_id, raw_sha256, detector_version, selected, reason, scanned_at, run_id"



def _scan(i: int, **kw) -> dict:
    row = {"message_id": f"m{i}", "raw_sha256": f"h{i}", "detector_version": 2, "selected": i % 2,
           "reason": "self_statement" if i % 2 else "no_self_statement", "scanned_at": "2024-06-01T00:00:00.000Z",
           "run_id": "r1"}
    row.update(kw)
    return row


def _scans(conn):
    return conn.execute(f"SELECT {COLS} FROM experience_scans ORDER BY message_id").fetchall()


def test_old_scans_read_the_same_and_a_rescan_replaces_the_row():
    old = vault_upto(118)
    with old:   # experience_scans has no foreign key enforcement here (no messages): the rows as the store wrote them
        for i in range(5):
            old.execute(f"INSERT INTO experience_scans({COLS}) VALUES (:message_id, :raw_sha256, :detector_version, "
                        ":selected, :reason, :scanned_at, :run_id)", _scan(i))
    want = _scans(old)
    sql = migration_sql(119)
    with old:
        old.execute(sql)
    assert _scans(old) == want
    assert [r[1] for r in old.execute("PRAGMA table_info(experience_scans)")] == COLS.split(", ")
    row_cols = {r[1] for r in old.execute("PRAGMA table_info(experience_scan_rows)")}
    assert not {"reason", "scanned_at", "run_id"} & row_cols
    with old:
        sbsql.upsert_scans(old, [_scan(1, raw_sha256="h1b", selected=0, reason="duplicate_profile", run_id="r2"),
                                 _scan(7)])
    got = dict((r[0], r) for r in _scans(old))
    assert len(got) == 6 and got["m1"] == ("m1", "h1b", 2, 0, "duplicate_profile", "2024-06-01T00:00:00.000Z", "r2")
    assert old.execute("SELECT COUNT(*) FROM experience_scan_rows").fetchone()[0] == 6
    with old:
        old.execute("DELETE FROM experience_scans WHERE message_id='m7'")
    assert old.execute("SELECT COUNT(*) FROM experience_scan_rows").fetchone()[0] == 5
