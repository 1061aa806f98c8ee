"""Seed 003 §41.6: run a person's (or a model's) SQL against the vault, read-only, bounded in rows and time.

Three locks, each enough alone: the statement is inspected before it runs (one statement, only reads — apsw
prepares it without executing), an authorizer refuses every write, ATTACH, write pragma and extension function
while it runs, and the connection has ``PRAGMA query_only = ON`` as the seed requires. A progress handler stops
a query past its time budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import apsw
import apsw.ext


class SqlRefused(ValueError):
    """The statement is not something the read-only runner will execute; the message says why."""


# Pragmas that only read (a pragma *with* a value always writes a setting, so it is refused whatever its name).
READ_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options",
    "user_version", "schema_version", "page_count", "page_size", "freelist_count", "encoding", "query_only",
})
# Read pragmas that take an argument naming what to read (``PRAGMA table_info(nodes)``).
ARG_PRAGMAS = frozenset({"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
                         "foreign_key_list"})
# SQL functions that reach outside the database or change the connection.
BLOCKED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "zipfile"})
ALLOWED_ACTIONS = frozenset({apsw.SQLITE_SELECT, apsw.SQLITE_READ, apsw.SQLITE_FUNCTION, apsw.SQLITE_RECURSIVE,
                             apsw.SQLITE_PRAGMA})
_WHAT = {apsw.SQLITE_ATTACH: "ATTACH", apsw.SQLITE_DETACH: "DETACH", apsw.SQLITE_INSERT: "INSERT",
         apsw.SQLITE_UPDATE: "UPDATE", apsw.SQLITE_DELETE: "DELETE", apsw.SQLITE_TRANSACTION: "a transaction",
         apsw.SQLITE_SAVEPOINT: "a savepoint", apsw.SQLITE_ANALYZE: "ANALYZE", apsw.SQLITE_REINDEX: "REINDEX"}


@dataclass(frozen=True)
class SqlLimits:
    rows_default: int
    rows_cap: int
    timeout_ms_default: int
    timeout_ms_cap: int


def limits_of(config: Any) -> SqlLimits:
    """The runner's limits from ``inspect.sql`` in the config."""
    c = config.inspect.sql
    return SqlLimits(c.rows_default, c.rows_cap, c.timeout_ms_default, c.timeout_ms_cap)


@dataclass
class SqlResult:
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    execution_ms: float
    max_rows: int
    timeout_ms: int

    def as_dict(self) -> dict[str, Any]:
        # §41.6 QueryKnowledgeSQLResult, plus the limits that applied.
        return {"sql": self.sql, "columns": self.columns, "rows": self.rows, "row_count": len(self.rows),
                "truncated": self.truncated, "execution_ms": self.execution_ms, "max_rows": self.max_rows,
                "timeout_ms": self.timeout_ms}


def effective_limits(limits: SqlLimits, max_rows: int | None, timeout_ms: int | None) -> tuple[int, int]:
    """The caller's rows / timeout, or the defaults; above the seed's hard caps they are lowered to the cap."""
    rows = limits.rows_default if max_rows is None else max_rows
    ms = limits.timeout_ms_default if timeout_ms is None else timeout_ms
    if rows < 1:
        raise SqlRefused(f"max_rows must be at least 1, not {rows}")
    if ms < 1:
        raise SqlRefused(f"timeout_ms must be at least 1, not {ms}")
    return min(rows, limits.rows_cap), min(ms, limits.timeout_ms_cap)


def _refusal(action: int, name: str, d: Any) -> str | None:
    """Why ``action`` is refused, or None when it only reads."""
    if action not in ALLOWED_ACTIONS:
        what = _WHAT.get(action) or name.removeprefix("SQLITE_").replace("_", " ")
        return f"{what} is not allowed: the SQL runner only reads"
    if action == apsw.SQLITE_FUNCTION and (d.function_name or "").lower() in BLOCKED_FUNCTIONS:
        return f"the function {d.function_name}() is not allowed: the SQL runner only reads the vault"
    if action == apsw.SQLITE_PRAGMA:
        pragma = (d.pragma_name or "").lower()
        if pragma not in READ_PRAGMAS or (d.pragma_value is not None and pragma not in ARG_PRAGMAS):
            shown = f"{pragma} = {d.pragma_value}" if d.pragma_value is not None else pragma
            return f"PRAGMA {shown} is not allowed: only pragmas that read ({', '.join(sorted(READ_PRAGMAS))})"
    return None


def _only_comments(conn: apsw.Connection, rest: str) -> bool:
    if not rest.strip():
        return True
    try:
        info = apsw.ext.query_info(conn, rest)
    except apsw.Error:
        return False
    # a comment or a lone ';' prepares to no program at all
    return not info.has_vdbe and _only_comments(conn, info.query_remaining or "")


# (table, column, database, trigger or view) → why the read is refused, or None (the MCP tool's views, H5)
ReadGuard = Callable[[Any, Any, Any, Any], "str | None"]


def check(conn: apsw.Connection, sql: str, guard: ReadGuard | None = None,
          statement_check: Callable[[str], "str | None"] | None = None) -> list[str]:
    """Refuse anything but one read-only statement, before it runs (preparing a statement executes nothing);
    the statement's column names. ``guard`` also refuses reads of what it does not expose."""
    if not sql.strip():
        raise SqlRefused("no SQL given")
    if statement_check is not None and (why := statement_check(sql)):
        raise SqlRefused(why)
    try:
        info = apsw.ext.query_info(conn, sql, actions=True)
    except apsw.Error as e:
        raise SqlRefused(f"SQL error: {e}") from e
    if not info.has_vdbe and _only_comments(conn, info.query_remaining or ""):
        raise SqlRefused("no SQL statement given (only comments)")
    if not _only_comments(conn, info.query_remaining or ""):
        raise SqlRefused("one statement at a time: the SQL runner refuses several statements separated by ';'")
    refusals = [(d, why) for d in info.actions or () if (why := _refusal(d.action, d.action_name, d))]
    # CREATE TEMP TABLE also writes sqlite_temp_master: name the CREATE, not that bookkeeping INSERT
    named = [w for d, w in refusals if not (d.table_name or "").startswith("sqlite_")]
    if refusals:
        raise SqlRefused((named or [refusals[0][1]])[0])
    if guard is not None:
        for d in info.actions or ():
            if d.action == apsw.SQLITE_READ and (why := guard(d.table_name, d.column_name, d.database_name,
                                                              d.trigger_or_view)):
                raise SqlRefused(why)
    if not info.is_readonly:
        raise SqlRefused("only statements that read are allowed (SELECT, WITH … SELECT, read-only PRAGMA)")
    return [d[0] for d in info.description or ()]


def _cell(v: Any) -> Any:
    if isinstance(v, bytes):
        return f"<blob {len(v)} bytes>"   # JSON has no bytes; vectors are not something to read as rows
    return v


def run_readonly_sql(conn: apsw.Connection, sql: str, limits: SqlLimits, *, max_rows: int | None = None,
                     timeout_ms: int | None = None, guard: ReadGuard | None = None,
                     statement_check: Callable[[str], "str | None"] | None = None) -> SqlResult:
    """Execute one read-only statement; at most ``max_rows`` rows (``truncated`` when more), at most
    ``timeout_ms`` of work (a clear refusal past it). ``guard`` is checked before the statement runs and again
    by the authorizer on every read while it runs."""
    rows_n, ms = effective_limits(limits, max_rows, timeout_ms)
    columns = check(conn, sql, guard, statement_check)
    (prev_qo,) = conn.execute("PRAGMA query_only").fetchone()
    conn.execute("PRAGMA query_only=ON")
    started = time.perf_counter()
    deadline = started + ms / 1000.0

    def authorizer(action: int, p1: Any, p2: Any, db: Any, trigger: Any) -> int:
        if action == apsw.SQLITE_READ and guard is not None and guard(p1, p2, db, trigger):
            return apsw.SQLITE_DENY
        if action == apsw.SQLITE_FUNCTION and (p2 or "").lower() in BLOCKED_FUNCTIONS:
            return apsw.SQLITE_DENY
        name = (p1 or "").lower()
        if action == apsw.SQLITE_PRAGMA and (name not in READ_PRAGMAS or (p2 is not None and name not in ARG_PRAGMAS)):
            return apsw.SQLITE_DENY
        return apsw.SQLITE_OK if action in ALLOWED_ACTIONS else apsw.SQLITE_DENY

    prev_auth = conn.authorizer
    conn.authorizer = authorizer
    conn.set_progress_handler(lambda: 1 if time.perf_counter() > deadline else 0, 1000)
    try:
        cur = conn.cursor()
        out: list[list[Any]] = []
        truncated = False
        try:
            cur.execute(sql)
            for row in cur:
                if len(out) == rows_n:
                    truncated = True
                    break
                out.append([_cell(v) for v in row])
        except apsw.InterruptError as e:
            raise SqlRefused(f"the query ran past its time limit of {ms} ms and was stopped; narrow it "
                             f"(WHERE, LIMIT) or raise --timeout-ms (at most {limits.timeout_ms_cap})") from e
        except apsw.AuthError as e:
            raise SqlRefused(f"not allowed: {e}; the SQL runner only reads") from e
        except apsw.ReadOnlyError as e:
            raise SqlRefused("writes are not allowed: the SQL runner's connection is read-only") from e
        except apsw.Error as e:
            raise SqlRefused(f"SQL error: {e}") from e
        finally:
            cur.close()
    finally:
        conn.set_progress_handler(None)
        conn.authorizer = prev_auth
        if not prev_qo:
            conn.execute("PRAGMA query_only=OFF")
    elapsed = round((time.perf_counter() - started) * 1000.0, 3)
    return SqlResult(sql=sql, columns=columns, rows=out, truncated=truncated, execution_ms=elapsed,
                     max_rows=rows_n, timeout_ms=ms)


def describe_schema(conn: apsw.Connection, tables: list[str] | None = None) -> list[dict[str, Any]]:
    """Tables (not FTS shadow tables, not SQLite's own) with their columns, for the Text-to-SQL schema card."""
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    shadow = {n for n in names for base in names
              if n != base and n.startswith(base + "_") and n.rsplit("_", 1)[-1] in
              ("data", "idx", "content", "docsize", "config", "chunks", "rowids", "info", "vector", "auxiliary")}
    keep = [n for n in names if n not in shadow and (tables is None or n in tables)]
    out = []
    for n in keep:
        cols = [{"name": r[1], "type": r[2] or ""} for r in conn.execute(f'PRAGMA table_info("{n}")')]
        out.append({"table": n, "columns": cols})
    return out
