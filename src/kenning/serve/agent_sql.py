"""The MCP `sql` tool's read-only runner (decision H5, seed 003 §41.6 with §13.4/§20A): the statement runs on the
tool's own read-only connection against views that leave out incognito content and edges the agent's edge gate
blocks; any other table is refused with the list of what it may read."""

from __future__ import annotations

from typing import Any

import apsw

from kenning.store import agent_views as av
from kenning.store.readonly_sql import limits_of, run_readonly_sql


def prepare(conn: apsw.Connection, config: Any) -> None:
    """Install the views for this connection: which conversations are incognito now, which promoted edges the
    agent's gate holds back (read before the views exist: they would hide what they are built from)."""
    av.uninstall(conn)
    from kenning.intake.modes import incognito_conversations
    from kenning.upkeep.edge_gate import EdgeGate

    incognito = incognito_conversations(conn, config).conversation_ids
    edges = av.promoted_edges(conn)
    shown = {id(e) for e in EdgeGate(conn, config, "agent").edges(edges)}
    av.install(conn, incognito, [e["rid"] for e in edges if id(e) not in shown])


def run(conn: apsw.Connection, config: Any, sql: str, *, max_rows: int | None = None,
        timeout_ms: int | None = None) -> dict[str, Any]:
    prepare(conn, config)
    try:
        return run_readonly_sql(conn, sql, limits_of(config), max_rows=max_rows, timeout_ms=timeout_ms,
                                guard=av.read_guard, statement_check=_statement_check).as_dict()
    finally:
        av.uninstall(conn)


_WRITES = ("insert", "update", "delete", "replace", "create", "drop", "alter", "vacuum", "reindex", "analyze")


def _statement_check(sql: str) -> str | None:
    # a write on a view fails to prepare with "cannot modify nodes because it is a view": say what is wrong
    first = av.first_word(sql)
    if first in _WRITES:
        return f"{first.upper()} is not allowed: the SQL runner only reads"
    name = av.cte_shadowing(sql)
    if name:
        return (f"a WITH clause may not be named {name!r}: that name is one of the views this tool reads; "
                "choose another name for the CTE")
    return None
