"""Small real vaults for the upkeep tests: nodes, edges and provenance written through the single writer on a
frozen clock, so every age (14/30/90/180 days) is exact."""

from __future__ import annotations

from typing import Any

from kenning.config import load_config
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
from kenning.knowledge.ops import CreateEdge, CreateNode, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql

T0 = "2026-01-01T09:00:00.000Z"


def writer(conn, at: str = T0, config=None) -> KnowledgeWriter:
    return KnowledgeWriter(conn, config or load_config(), clock=Clock(at))


def node(conn, name: str, kind: str = "world_entity", *, at: str = T0, state: str | None = None,
         aliases: tuple[str, ...] = (), payload: dict[str, Any] | None = None,
         seen: tuple[tuple[str, int, str], ...] = (), **kw) -> str:
    """``seen``: (thread_id, position, when) sightings recorded as provenance (what motifs read)."""
    prov = tuple(ProvenanceIn(entry_type="conversation", source_ref=f"{t}#{pos}", created_at=when,
                              source_metadata={"thread_id": t, "position": pos}) for t, pos, when in seen)
    prov += tuple(kw.pop("provenance", ()))
    res = writer(conn, at).write(KnowledgeWrite(source_event="test", change_summary=f"create {name}", ops=[
        CreateNode(node_kind=kind, canonical_name=name, payload=payload or dict(EXAMPLE_PAYLOADS[kind]),
                   lifecycle_state=state, aliases=tuple({"alias": a} for a in aliases), provenance=prov, **kw)]))
    return res.node_ids[0]


def edge(conn, src: str, rel: str, tgt: str, *, at: str = T0, confidence: float = 0.5,
         payload: dict[str, Any] | None = None) -> None:
    writer(conn, at).write(KnowledgeWrite(source_event="test", change_summary="edge", ops=[
        CreateEdge(source_id=src, relation_type=rel, target_id=tgt, confidence=confidence, payload=payload,
                   start_date=at)]))


def active(conn, node_id: str) -> bool:
    return bool(ksql.get_node(conn, node_id)["is_active"])


def db_state(conn) -> dict[str, list]:
    """What a maintain run leaves behind (not the run log): nodes, aliases, edges, provenance, queues, maps."""
    out = {}
    for table, order in (("nodes", "id"), ("aliases", "id"), ("edges", "source_id, relation_type, target_id, "
                                                                      "start_date"),
                          ("provenance_entries", "id"), ("maintain_queue", "item_id"),
                          ("node_merge_map", "old_node_id"), ("fold_decisions", "node_a_id, node_b_id"),
                          ("co_occurrence_patterns", "pattern_id"), ("procedure_motifs", "motif_id")):
        out[table] = [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY {order}")]
    out["steps"] = [tuple(r) for r in conn.execute("SELECT generation, step, status, counts FROM maintain_steps "
                                                   "ORDER BY generation, step")]
    return out
