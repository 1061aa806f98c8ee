"""Node vectors (DOC72 §3.3): each active node's ``"canonical_name: description"`` embedded with the vault's one
embedding model (its dimension is the one configured value), in the vector index's space ``nodes``. Kept by the
index stage after the node store changes; archived and retracted nodes leave the space."""

from __future__ import annotations

from typing import Any, Callable

import apsw

from kenning.config import Config
from kenning.knowledge.contracts import description_of
from kenning.store import knowledge as ksql

SPACE = "nodes"
_MARK = "nodes_embedded_through"
_EXCLUDED = ("retracted", "archived", "merged")


def node_text(node: dict[str, Any]) -> str:
    payload = node.get("payload") or {}
    desc = payload.get("description") or description_of(node["node_kind"], payload) or ""
    return f"{node['canonical_name']}: {desc}".strip().rstrip(":")


def embed_nodes(conn: apsw.Connection, config: Config, clock: Any, *, batch: int = 256,
                progress: Callable[..., None] | None = None) -> dict[str, int]:
    """Embed what changed since the last run (keyset mark on (updated_at, id)); returns counts."""
    from kenning.llm.index import VectorIndex

    counts = {"node_vectors_written": 0, "node_vectors_removed": 0}
    if not config.retrieval.vector.enabled:
        return counts
    idx = VectorIndex(conn, config, clock=clock)
    idx.ensure_active()
    mark = ksql.state_get(conn, _MARK) or "|"
    ts, _, nid = mark.partition("|")
    done = 0
    while True:
        nodes = ksql.nodes_changed_after(conn, ts, nid, batch)
        if not nodes:
            break
        live = [n for n in nodes if n["is_active"] and n["lifecycle_state"] not in _EXCLUDED]
        gone = [n["id"] for n in nodes if n not in live]
        if gone:
            counts["node_vectors_removed"] += idx.delete(SPACE, gone)
        if live:
            counts["node_vectors_written"] += idx.upsert(SPACE, [(n["id"], node_text(n), n["node_kind"])
                                                                 for n in live])
        ts, nid = nodes[-1]["updated_at"], nodes[-1]["id"]
        done += len(nodes)
        if progress:
            progress(records=done, file="node vectors")
    ksql.state_set(conn, _MARK, f"{ts}|{nid}")
    return counts
