"""The single writer's merge op (seed 003 §42 folding): merge math α = max(α)+0.5, β = max(β); aliases and
provenance move; edges are rewired with the higher confidence kept on conflict; the merged node is archived as
``merged``; one commit that rolls back like any other; refusals write nothing."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.ops import CreateEdge, CreateNode, KnowledgeWrite, MergeNodes, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store.connection import open_store

T0, T1 = "2026-03-01T10:00:00.000Z", "2026-03-02T10:00:00.000Z"


@pytest.fixture
def vault(tmp_path):
    conn = open_store(tmp_path / "v.db")
    yield conn
    conn.close()


def w(conn, at=T0):
    return KnowledgeWriter(conn, load_config(), clock=Clock(at))


def node(conn, name, kind="world_entity", evidence=(), **kw):
    res = w(conn).write(KnowledgeWrite(source_event="test", change_summary=f"create {name}", ops=[
        CreateNode(node_kind=kind, canonical_name=name, payload=EXAMPLE_PAYLOADS[kind], evidence=evidence, **kw)]))
    return res.node_ids[0]


def test_merge_math_aliases_provenance_and_rewired_edges(vault):
    bob = node(vault, "Bob", evidence=("confirmed_by_user",),
               provenance=(ProvenanceIn(entry_type="conversation", source_ref="c1"),))
    robert = node(vault, "Robert Smith", aliases=({"alias": "R. Smith"},),
                  provenance=(ProvenanceIn(entry_type="conversation", source_ref="c2"),))
    acme, lisbon = node(vault, "Acme"), node(vault, "Lisbon")
    w(vault).write(KnowledgeWrite(source_event="test", change_summary="edges", ops=[
        CreateEdge(source_id=robert, relation_type="affiliated_with", target_id=acme, confidence=0.9),
        CreateEdge(source_id=bob, relation_type="affiliated_with", target_id=acme, confidence=0.4),
        CreateEdge(source_id=robert, relation_type="part_of", target_id=lisbon, confidence=0.6)]))
    a_bob, b_bob = ksql.get_node(vault, bob)["alpha"], ksql.get_node(vault, bob)["beta"]
    a_rob, b_rob = ksql.get_node(vault, robert)["alpha"], ksql.get_node(vault, robert)["beta"]
    res = w(vault, T1).write(KnowledgeWrite(source_event="maintain", change_summary="fold", ops=[
        MergeNodes(survivor_id=robert, merged_id=bob, reason="same person")]))
    assert res.created
    surv, old = ksql.get_node(vault, robert), ksql.get_node(vault, bob)
    assert surv["alpha"] == pytest.approx(max(a_bob, a_rob) + 0.5) and a_bob > a_rob
    assert surv["beta"] == pytest.approx(max(b_bob, b_rob))
    assert old["is_active"] == 0 and old["lifecycle_state"] == "merged" and robert in old["lifecycle_substate"]
    assert {a["normalized_alias"] for a in ksql.get_aliases(vault, robert)} >= {"bob", "robert smith", "r. smith"}
    assert {p["source_ref"] for p in ksql.get_provenance(vault, robert)} == {"c1", "c2"}
    current = {(e["source_id"], e["relation_type"], e["target_id"]): e["confidence"]
               for e in ksql.edges_of(vault, robert, current_only=True)}
    current = {(min(s, t), r, max(s, t)) if r == "affiliated_with" else (s, r, t): c
               for (s, r, t), c in current.items()}  # affiliated_with is undirected: smaller id first
    # ON CONFLICT … MAX(confidence): Robert's 0.9 edge to Acme wins over Bob's 0.4
    assert current == {(min(robert, acme), "affiliated_with", max(robert, acme)): 0.9,
                       (robert, "part_of", lisbon): 0.6}
    assert ksql.edges_of(vault, bob, current_only=True) == []
    # the merge rolls back like any commit: Bob is active again with his edge
    w(vault, "2026-03-03T10:00:00.000Z").rollback(res.commit_id, reason="not the same person")
    assert ksql.get_node(vault, bob)["is_active"] == 1
    assert [{e["source_id"], e["target_id"]} for e in ksql.edges_of(vault, bob, current_only=True)] == [{bob, acme}]


def test_merge_refuses_other_kinds_and_itself_and_writes_nothing(vault):
    a, g = node(vault, "Anna"), node(vault, "Run a marathon", kind="goal")
    before = ksql.commit_count(vault)
    with pytest.raises(KnowledgeError, match="only within one kind"):
        w(vault).write(KnowledgeWrite(source_event="t", change_summary="x", ops=[
            MergeNodes(survivor_id=a, merged_id=g, reason="x")]))
    with pytest.raises(KnowledgeError, match="into itself"):
        w(vault).write(KnowledgeWrite(source_event="t", change_summary="x", ops=[
            MergeNodes(survivor_id=a, merged_id=a, reason="x")]))
    assert ksql.commit_count(vault) == before and ksql.get_node(vault, g)["is_active"] == 1


def test_update_edge_demotes_and_raises_again_and_refuses_a_missing_edge(vault):
    from kenning.knowledge.errors import EdgeNotFound
    from kenning.knowledge.ops import UpdateEdge

    a, b = node(vault, "Anna"), node(vault, "Acme")
    w(vault).write(KnowledgeWrite(source_event="t", change_summary="e", ops=[
        CreateEdge(source_id=a, relation_type="part_of", target_id=b, confidence=0.6,
                   payload={"learned_by": "backlink_pipeline_v2"})]))
    w(vault, T1).write(KnowledgeWrite(source_event="t", change_summary="demote", ops=[
        UpdateEdge(source_id=a, relation_type="part_of", target_id=b, lifecycle_state="observed", confidence=0.1,
                   payload_set={"demoted_at": T1})]))
    (e,) = ksql.edges_of(vault, a, current_only=True)
    assert (e["lifecycle_state"], e["confidence"], e["payload"]["demoted_at"]) == ("observed", 0.1, T1)
    assert e["payload"]["learned_by"] == "backlink_pipeline_v2"
    w(vault, T1).write(KnowledgeWrite(source_event="t", change_summary="re-promote", ops=[
        UpdateEdge(source_id=a, relation_type="part_of", target_id=b, lifecycle_state="active", confidence=0.7,
                   payload_set={"demoted_at": None})]))
    (e,) = ksql.edges_of(vault, a, current_only=True)
    assert (e["lifecycle_state"], e["confidence"]) == ("active", 0.7) and "demoted_at" not in e["payload"]
    with pytest.raises(EdgeNotFound):
        w(vault).write(KnowledgeWrite(source_event="t", change_summary="x", ops=[
            UpdateEdge(source_id=b, relation_type="used_in", target_id=a, lifecycle_state="observed")]))
