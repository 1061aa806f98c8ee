"""Compare vault contents table by table (the determinism tests' yardstick)."""

from __future__ import annotations

from pathlib import Path

import apsw

CONTENT_TABLES = ("conversations", "messages", "message_parts")


def dump(db: Path, tables: tuple[str, ...] | None = None, exclude_columns: dict[str, set[str]] | None = None) -> dict:
    from kenning.store.connection import open_store

    conn = open_store(db, readonly=True)  # with sqlite-vec loaded: vec0 tables are part of the content
    try:
        names = tables or tuple(r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"))
        # The FTS5 shadow tables hold the same content as their owner in an internal layout; compare owners.
        out = {}
        for t in names:
            cur = conn.execute(f'SELECT * FROM "{t}"')
            try:
                cols = [d[0] for d in cur.getdescription()]
            except apsw.ExecutionCompleteError:
                out[t] = []
                continue
            skip = (exclude_columns or {}).get(t, set())
            keep = [i for i, c in enumerate(cols) if c not in skip]
            out[t] = sorted(tuple(r[i] for i in keep) for r in cur)
        return out
    finally:
        conn.close()
