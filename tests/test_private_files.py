"""Private by default (issue 23 §2): a new vault, its WAL/SHM, the knowledge event log and the exports Kenning
writes are owner-only (0600), in folders Kenning creates owner-only (0700)."""

from __future__ import annotations

import json
import os
import stat

import temporal_corpus as tc
from exportkit import ingest, write_export
from kenning.store.connection import open_store


def mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_a_new_vault_and_its_wal_are_owner_only(tmp_path):
    db = tmp_path / "new" / "deeper" / "v.db"
    conn = open_store(db)
    conn.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
    assert mode(db) == 0o600
    assert mode(db.parent) == 0o700 and mode(db.parent.parent) == 0o700
    for suffix in ("-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        assert side.exists() and mode(side) == 0o600, suffix
    conn.close()


def test_exports_and_the_event_log_are_owner_only(tmp_path, cli):
    db = tmp_path / "v.db"
    export = write_export(tmp_path / "export.json", tc.lifecycle()[:4])
    ingest(db, export, as_of="2024-12-31T00:00:00Z", stages="0-6", overrides={"embeddings": {"backend": "hash"}})
    cli("node", "add", "--kind", "goal", "--name", "Learn Spanish", "--payload", "-", db=db,
        input=json.dumps({"goal_description": "B2 by summer"}))
    assert mode(tmp_path / "v.graph_events.jsonl") == 0o600
    cli("graph", "export", "--format", "json", "--out", str(tmp_path / "out" / "g.json"), db=db)
    cli("graph", "export", "--format", "csv", "--out", str(tmp_path / "csv"), db=db)
    cli("beliefs", "export", "--format", "json", "--out", str(tmp_path / "b.json"), db=db)
    for p in (tmp_path / "out" / "g.json", tmp_path / "csv" / "nodes.csv", tmp_path / "csv" / "edges.csv",
              tmp_path / "b.json"):
        assert mode(p) == 0o600, p
    assert mode(tmp_path / "out") == 0o700


def test_version(cli):
    from kenning import __version__

    assert cli("--version").stdout.strip() == f"kenning {__version__}"
