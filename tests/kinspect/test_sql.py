"""Read-only SQL (seed 003 §41.6): rows 20 / cap 100, timeout 500 / cap 2000 ms, {columns, rows, truncated,
execution_ms}; writes, ATTACH, write pragmas, extension loading and several statements refused (exit 2) and a
refused statement changes nothing."""

from __future__ import annotations

import hashlib
import json

import pytest

from kenning.config.loader import load_config
from kenning.store.connection import open_store
from kenning.store.readonly_sql import SqlRefused, run_readonly_sql
from kenning.cli.inspect import sql_limits

LIMITS = sql_limits(load_config())

REFUSED = {
    "INSERT INTO nodes(id, node_kind, canonical_name) VALUES ('x', 'world_entity', 'x')": "INSERT",
    "UPDATE nodes SET confidence = 1": "UPDATE",
    "DELETE FROM nodes": "DELETE",
    "DROP TABLE nodes": "DROP TABLE",
    "CREATE TABLE t(a)": "CREATE TABLE",
    "CREATE TEMP TABLE t(a)": "CREATE TEMP TABLE",
    "ATTACH DATABASE ':memory:' AS other": "ATTACH",
    "PRAGMA journal_mode = DELETE": "PRAGMA journal_mode",
    "PRAGMA query_only = OFF": "PRAGMA query_only",
    "PRAGMA writable_schema": "PRAGMA writable_schema",
    "SELECT load_extension('/tmp/evil')": "load_extension",
    "SELECT 1; DELETE FROM nodes": "one statement at a time",
    "SELECT 1; SELECT 2": "one statement at a time",
    "BEGIN": "transaction",
    "VACUUM": "only statements that read",
    "": "no SQL",
    "-- just a comment": "no SQL",
    "SELEC nonsense": "SQL error",
}


@pytest.fixture
def vault(anna):
    path, ids, config = anna
    return path


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("sql,why", list(REFUSED.items()))
def test_refused_with_a_reason_and_nothing_changes(vault, sql, why):
    before = _digest(vault)
    c = open_store(vault)                              # a writable connection: the runner still refuses
    n = c.execute("SELECT count(*) FROM nodes").fetchone()[0]
    with pytest.raises(SqlRefused, match=why):
        run_readonly_sql(c, sql, LIMITS)
    assert c.execute("SELECT count(*) FROM nodes").fetchone()[0] == n
    assert c.execute("PRAGMA query_only").fetchone()[0] == 0    # the connection is given back as it came
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    assert _digest(vault) == before


def test_rows_default_cap_and_truncation(vault):
    c = open_store(vault, readonly=True)
    big = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 500) SELECT x FROM r"
    res = run_readonly_sql(c, big, LIMITS)
    assert len(res.rows) == 20 and res.truncated and res.columns == ["x"] and res.max_rows == 20
    assert len(run_readonly_sql(c, big, LIMITS, max_rows=1000).rows) == 100          # the hard cap
    few = run_readonly_sql(c, "SELECT canonical_name FROM nodes WHERE canonical_name = 'Anna'", LIMITS)
    assert few.rows == [["Anna"]] and not few.truncated
    d = few.as_dict()
    assert {"columns", "rows", "row_count", "truncated", "execution_ms"} <= set(d) and d["execution_ms"] >= 0
    assert run_readonly_sql(c, "PRAGMA table_info(nodes)", LIMITS).rows[0][1] == "id"
    assert run_readonly_sql(c, "SELECT x'0102', NULL, 1.5", LIMITS).rows == [["<blob 2 bytes>", None, 1.5]]
    with pytest.raises(SqlRefused, match="max_rows"):
        run_readonly_sql(c, "SELECT 1", LIMITS, max_rows=0)
    c.close()


def test_timeout_stops_a_long_query(vault):
    c = open_store(vault, readonly=True)
    endless = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
    with pytest.raises(SqlRefused, match="time limit of 50 ms"):
        run_readonly_sql(c, endless, LIMITS, timeout_ms=50)
    res = run_readonly_sql(c, "SELECT 1", LIMITS, timeout_ms=99999)
    assert res.timeout_ms == 2000                                                    # the hard cap
    c.close()


def test_cli_sql(vault, cli):
    p = cli("sql", "SELECT canonical_name, node_kind FROM nodes ORDER BY canonical_name", "--rows", "3", "--json",
            db=vault)
    data = json.loads(p.stdout)
    assert data["columns"] == ["canonical_name", "node_kind"] and len(data["rows"]) == 3 and data["truncated"]
    p = cli("sql", "SELECT count(*) AS n FROM nodes", db=vault)
    assert "1 row(s)" in p.stdout
    bad = cli("sql", "DELETE FROM nodes", db=vault, check=False)
    assert bad.returncode == 2 and "DELETE is not allowed" in bad.stdout + bad.stderr
