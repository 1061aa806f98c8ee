"""Numbered schema migrations (``migrations/NNNN_name.sql``), each applied once in its own transaction."""

from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources

import apsw

from kenning.sources.timestamps import now_utc

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def available_migrations() -> list[tuple[int, str, str]]:
    found = []
    for entry in resources.files("kenning.store.migrations").iterdir():
        m = _NAME.match(entry.name)
        if m:
            found.append((int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration numbers in kenning/store/migrations: {versions}")
    return found


@functools.cache  # the package's files do not change while a process runs; every read-only open asks
def latest_version() -> int:
    """The newest migration this code knows (names only: cheap enough for every read-only open)."""
    return max((int(m.group(1)) for e in resources.files("kenning.store.migrations").iterdir()
                if (m := _NAME.match(e.name))), default=0)


def needs_upgrade(conn: apsw.Connection) -> bool:
    """A Kenning vault whose schema an older version made (False for a file with no migration record: not a vault,
    or an empty one — the normal open reports those)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'").fetchone() is None:
        return False
    have = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] or 0
    return have < latest_version()


def applied_versions(conn: apsw.Connection) -> set[int]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at_utc TEXT NOT NULL)"
    )
    return {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}


def apply_migrations(conn: apsw.Connection) -> list[int]:
    from kenning.store import search_recode

    search_recode.register(conn)  # migration 0112 recodes the search forward index in SQL (Y1)
    done = applied_versions(conn)
    newly = []
    for version, name, sql in available_migrations():
        if version in done:
            continue
        digest = hashlib.sha256(sql.encode()).hexdigest()
        with conn:  # savepoint: the migration and its record land together or not at all
            conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, sha256, applied_at_utc) VALUES (?,?,?,?)",
                (version, name, digest, now_utc()),
            )
        newly.append(version)
    return newly
