"""Open a vault: apsw connection, sqlite-vec loaded and checked, WAL, foreign keys, migrations."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator

import apsw

from kenning.store import rawpack


class StoreError(RuntimeError):
    """A problem with the vault file or its SQLite runtime, phrased for the person who must fix it."""


def _sqlite_vec_path() -> str:
    """``sqlite_vec.loadable_path()`` without importing the package: its ``__init__`` imports sqlite3 and numpy,
    which every vault open (a `status`, a `facts`) would pay for (issue 24 §4; decisions F10)."""
    from importlib.util import find_spec

    spec = find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("sqlite_vec")
    return os.path.normpath(os.path.join(list(spec.submodule_search_locations)[0], "vec0"))


def _load_sqlite_vec(conn: apsw.Connection) -> str:
    try:
        path = _sqlite_vec_path()
    except ImportError as e:
        raise StoreError(
            "the sqlite-vec package is not installed; run `make setup` (or `pip install sqlite-vec`)"
        ) from e
    try:
        conn.enable_load_extension(True)
        conn.load_extension(path)
        conn.enable_load_extension(False)
        (version,) = conn.execute("SELECT vec_version()").fetchone()
    except (apsw.Error, AttributeError) as e:
        raise StoreError(
            f"could not load the sqlite-vec extension from {path}: {e}. "
            "Kenning needs an SQLite that can load extensions (apsw provides one)."
        ) from e
    return str(version)


def _create_private(p: Path) -> None:
    """A new vault is owner-only: its folder 0700 when Kenning creates it, the file 0600 (SQLite gives the WAL and
    SHM files the database file's mode)."""
    from kenning.privatefs import PRIVATE_FILE, private_dir

    private_dir(p.parent)
    if not p.exists():
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
        os.chmod(p, PRIVATE_FILE)


def open_store(
    path: str | Path,
    *,
    readonly: bool = False,
    busy_timeout_ms: int = 5000,
    migrate: bool = True,
) -> apsw.Connection:
    """Open (and create/migrate unless read-only) the vault at ``path``.

    A vault on read-only storage (a read-only mount, or a file/folder the user may not write) is opened
    read-only whatever was asked, so it can still be read; any write then fails with a message that
    says "read-only" (issue 23 part 4)."""
    p = Path(path).expanduser()
    if on_readonly_storage(p):
        return _open_readonly_storage(p)
    if readonly:
        if not p.exists():
            raise StoreError(f"no vault at {p}; create one with `kenning init --db {p}` or `kenning ingest`")
        if migrate:
            _upgrade_before_reading(p, busy_timeout_ms)
        flags = apsw.SQLITE_OPEN_READONLY
    else:
        try:
            _create_private(p)
        except OSError as e:
            raise StoreError(f"cannot create the vault {p}: {e.strerror}") from e
        flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        is_new = not readonly and (not p.exists() or p.stat().st_size == 0)
        conn = apsw.Connection(str(p), flags=flags)
        conn.setbusytimeout(busy_timeout_ms)
        if is_new:
            # Raw JSON rows are large: 16 KiB pages cut overflow chains (measured: ~25% less CPU on import).
            # Must precede WAL mode, which fixes the page size.
            conn.execute("PRAGMA page_size=16384")
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache, bounded whatever the import size
        conn.execute("PRAGMA temp_store=MEMORY")
    except apsw.Error as e:
        raise StoreError(f"cannot open the vault {p}: {e}") from e
    _load_sqlite_vec(conn)
    rawpack.register(conn)  # the raw views and migration 0100 call kenning_inflate / kenning_deflate
    if readonly:
        conn.execute("PRAGMA query_only=ON")
    elif migrate:
        from kenning.store import search_recode
        from kenning.store.migrate import apply_migrations

        try:
            # a migration that rewrote an existing vault's rows gives the freed pages back, once (V1, Y1, Y2, C1)
            if {rawpack.MIGRATION, search_recode.MIGRATION, 113, 120} & set(apply_migrations(conn)):
                rawpack.reclaim(conn)
        except apsw.NotADBError as e:
            raise StoreError(f"{p} is not a Kenning vault (not an SQLite database)") from e
    return conn


def _upgrade_before_reading(p: Path, busy_timeout_ms: int) -> None:
    """A vault an older Kenning made is upgraded (its migrations applied, once) before a read-only command reads
    it: the readers know only the current schema, and a read must not fail on a table the upgrade adds. A vault
    already current costs one extra open and one query."""
    from kenning.store.migrate import needs_upgrade

    try:
        probe = apsw.Connection(str(p), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            stale = needs_upgrade(probe)
        finally:
            probe.close()
    except apsw.Error:
        return  # not an SQLite file, or unreadable: the read-only open below says so
    if stale:
        open_store(p, busy_timeout_ms=busy_timeout_ms).close()


def vacuum(conn: apsw.Connection) -> None:
    """VACUUM with its rebuilt copy in a temp file (SQLite's: owner-only, unlinked at once), not in memory: our
    connections use temp_store=MEMORY, which made VACUUM hold the whole vault in RAM (1.4 GB peak at 100k
    messages, measured; V8)."""
    conn.execute("PRAGMA temp_store=FILE")
    try:
        conn.execute("VACUUM")
    finally:
        conn.execute("PRAGMA temp_store=MEMORY")


def on_readonly_storage(p: Path) -> bool:
    """The vault exists but neither it nor its folder can be written (EROFS even for root)."""
    return p.is_file() and (not os.access(p, os.W_OK) or not os.access(p.parent, os.W_OK))


READONLY_HINT = ("the vault {p} is on read-only storage (read-only file or folder): it can be read, not changed; "
                 "copy it somewhere writable, or make it writable, to import or edit")


def _open_readonly_storage(p: Path) -> apsw.Connection:
    # WAL needs a -shm file beside the vault, which read-only storage cannot hold; nobody can write
    # the file there, so "immutable" (no locks, no -shm) reads it safely.
    from urllib.parse import quote

    try:
        conn = apsw.Connection(f"file:{quote(str(p.resolve()))}?immutable=1",
                               flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except apsw.NotADBError as e:
        raise StoreError(f"{p} is not a Kenning vault (not an SQLite database)") from e
    except apsw.Error as e:
        raise StoreError(f"cannot open the vault {p} on read-only storage: {e}") from e
    _load_sqlite_vec(conn)
    rawpack.register(conn)
    return conn


@contextlib.contextmanager
def transaction(conn: apsw.Connection, immediate: bool = True) -> Iterator[apsw.Connection]:
    """One all-or-nothing transaction; any exception (KeyboardInterrupt included) rolls it back."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


@contextlib.contextmanager
def write_scope(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """Join the caller's open transaction (as a savepoint), or run a transaction of its own (BEGIN IMMEDIATE)."""
    if conn.in_transaction:
        with conn:
            yield conn
    else:
        with transaction(conn):
            yield conn


@contextlib.contextmanager
def read_snapshot(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """Several reads from one consistent snapshot (inside an open transaction: that transaction's view)."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def is_writable(conn: apsw.Connection) -> bool:
    """False for a vault opened read-only (``PRAGMA query_only`` or a read-only file handle)."""
    return not scalar(conn, "PRAGMA query_only") and not conn.readonly("main")


def rows(conn: apsw.Connection, sql: str, params: Any = ()) -> list[dict[str, Any]]:
    cur = conn.execute(sql, params)
    try:
        names = [d[0] for d in cur.getdescription()]
    except apsw.ExecutionCompleteError:
        return []
    return [dict(zip(names, r)) for r in cur]


def row(conn: apsw.Connection, sql: str, params: Any = ()) -> dict[str, Any] | None:
    found = rows(conn, sql, params)
    return found[0] if found else None


def scalar(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    r = conn.execute(sql, params).fetchone()
    return None if r is None else r[0]
