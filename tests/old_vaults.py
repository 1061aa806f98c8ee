"""Vaults as an older Kenning left them: the schema up to one migration, to test what a later migration does to
their rows (shared by the storage tests of issue 24 §2)."""

from __future__ import annotations

import apsw

from kenning.store import rawpack, search_recode
from kenning.store.migrate import available_migrations


def vault_upto(upto: int, *, foreign_keys: bool = False) -> apsw.Connection:
    """An in-memory vault with every migration up to and including ``upto`` applied, each in its own transaction,
    with the SQL functions the migrations call registered."""
    conn = apsw.Connection(":memory:")
    rawpack.register(conn)
    search_recode.register(conn)
    if foreign_keys:
        conn.execute("PRAGMA foreign_keys=ON")
    for version, _name, sql in available_migrations():
        if version <= upto:
            with conn:
                conn.execute(sql)
    return conn


def migration_sql(version: int) -> str:
    return next(sql for v, _name, sql in available_migrations() if v == version)
