"""Compare vault contents table by table (the determinism tests' yardstick)."""

from __future__ import annotations

from pathlib import Path

import apsw

CONTENT_TABLES = ("conversations", "messages", "message_parts")


def dump(db: Path, tables: tuple[str, ...] | None = None, exclude_columns: dict[str, set[str]] | None = None) -> dict:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = tables or tuple(r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"))
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
