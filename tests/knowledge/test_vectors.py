"""Node vectors (DOC72 §3.3): "canonical_name: description" in the vault's one embedding model, space ``nodes``;
incremental, and a retracted node leaves the space."""

from __future__ import annotations

from kenning.config import load_config
from kenning.knowledge.ops import CreateNode, Feedback, KnowledgeWrite
from kenning.knowledge.vectors import SPACE, embed_nodes, node_text
from kenning.knowledge.writer import KnowledgeWriter
from kenning.llm.index import VectorIndex
from kenning.pipeline.clock import Clock
from kenning.store.connection import open_store

CFG = {"embeddings": {"backend": "hash"}}


def test_nodes_are_embedded_once_and_retracted_ones_leave(tmp_path):
    cfg = load_config(overrides=CFG)
    conn = open_store(tmp_path / "v.db")
    w = KnowledgeWriter(conn, cfg, clock=Clock("2026-01-01T00:00:00.000Z"))
    ids = {}
    for name, desc in (("Anna", "my sister, a violinist in Lisbon"), ("Acme", "the company I work for")):
        ids[name] = w.write(KnowledgeWrite(source_event="t", change_summary="t", ops=[CreateNode(
            node_kind="world_entity", canonical_name=name,
            payload={"entity_type": "person", "description": desc})])).node_ids[0]
    with conn:
        counts = embed_nodes(conn, cfg, Clock("2026-01-01T00:00:00.000Z"))
    assert counts["node_vectors_written"] == 2
    idx = VectorIndex(conn, cfg)
    hits = idx.search(node_text({"canonical_name": "Anna", "node_kind": "world_entity",
                                 "payload": {"description": "my sister, a violinist in Lisbon"}}), 1, space=SPACE)
    assert hits[0].item_id == ids["Anna"]
    with conn:
        assert embed_nodes(conn, cfg, Clock("2026-01-02T00:00:00.000Z"))["node_vectors_written"] == 0
    KnowledgeWriter(conn, cfg, clock=Clock("2026-01-03T00:00:00.000Z")).write(KnowledgeWrite(
        source_event="u", change_summary="no", ops=[Feedback(id=ids["Anna"], action="reject")]))
    with conn:
        assert embed_nodes(conn, cfg, Clock("2026-01-03T00:00:00.000Z"))["node_vectors_removed"] == 1
    assert {h.item_id for h in idx.search("Anna", 5, space=SPACE)} == {ids["Acme"]}
