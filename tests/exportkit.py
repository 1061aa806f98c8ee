"""Hand-built ChatGPT exports for tests: small conversations with exactly the text a test needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from kenning.api import Vault

BASE_TIME = 1_710_000_000.0  # 2024-03-09T16:00:00Z


def conversation(conv_id: str, messages: Sequence[tuple], *, title: str | None = None,
                 start: float = BASE_TIME) -> dict[str, Any]:
    """A linear conversation. Each message is (role, text) or (role, text, create_time|None)."""
    mapping: dict[str, Any] = {}
    root = f"{conv_id}-root"
    mapping[root] = {"id": root, "message": None, "parent": None, "children": []}
    parent = root
    for i, msg in enumerate(messages):
        role, text = msg[0], msg[1]
        ts = msg[2] if len(msg) > 2 else start + 60 * i
        nid = f"{conv_id}-m{i:03d}"
        mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
            "id": nid, "author": {"role": role, "name": None, "metadata": {}}, "create_time": ts,
            "update_time": None, "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
            "end_turn": True, "weight": 1.0, "metadata": {}, "recipient": "all"}}
        mapping[parent]["children"].append(nid)
        parent = nid
    return {"title": title or conv_id, "create_time": start, "update_time": start + 60 * len(messages),
            "mapping": mapping, "current_node": parent, "conversation_id": conv_id, "id": conv_id}


def write_export(path: Path, conversations: list[dict]) -> Path:
    path.write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
    return path


def ingest(db: Path, export: Path, *, stages: str | None = None, as_of: str = "2024-12-31T00:00:00Z",
           overrides: dict | None = None):
    with Vault.open(db, overrides=overrides) as v:
        return v.ingest([export], as_of=as_of, stages=stages)


def query(db: Path, sql: str, params: Sequence = ()) -> list[dict]:
    from kenning.store.connection import open_store, rows

    conn = open_store(db, readonly=True)
    try:
        return rows(conn, sql, params)
    finally:
        conn.close()


def dump_tables(db: Path, skip: tuple[str, ...] = ("runs", "run_events", "sources", "schema_migrations")) -> dict[str, list]:
    """Every row of every table (sorted), for before/after comparisons."""
    from kenning.store.connection import open_store

    conn = open_store(db, readonly=True)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        out = {}
        for n in names:
            if n in skip:
                continue
            out[n] = sorted(conn.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr)
        return out
    finally:
        conn.close()
