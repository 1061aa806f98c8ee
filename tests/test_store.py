import apsw
import pytest

from kenning.store.connection import StoreError, open_store
from kenning.store.migrate import available_migrations


def test_open_creates_migrates_and_loads_sqlite_vec(tmp_path):
    conn = open_store(tmp_path / "v.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [v for v, _, _ in available_migrations()]
    conn.execute("CREATE VIRTUAL TABLE t USING vec0(e float[2])")  # the extension really works
    conn.close()
    again = open_store(tmp_path / "v.db")  # idempotent
    assert [v for (v,) in again.execute("SELECT version FROM schema_migrations")] == versions


def test_readonly_connections_refuse_writes(tmp_path):
    open_store(tmp_path / "v.db").close()
    ro = open_store(tmp_path / "v.db", readonly=True)
    with pytest.raises(apsw.Error):
        ro.execute("INSERT INTO vault_meta VALUES ('k','v')")


def test_clear_errors(tmp_path):
    with pytest.raises(StoreError, match="no vault"):
        open_store(tmp_path / "missing.db", readonly=True)
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 200)
    with pytest.raises(StoreError, match="not a Kenning vault|cannot open"):
        open_store(bad)
