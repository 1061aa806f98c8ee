"""The single writer (DOC72 §4A, §28, §37): commits with RFC 6902 patches, idempotency, optimistic concurrency,
refusals that write nothing, feedback with the §5.2 weights, edges with history, rollback as a compensating commit."""

from __future__ import annotations

import jsonpatch
import pytest

from kenning.config import load_config
from kenning.knowledge import docs
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS, PayloadError
from kenning.knowledge.errors import NodeNotFound, RollbackError, StaleWrite
from kenning.knowledge.ops import (CreateEdge, CreateNode, EndEdge, Feedback, KnowledgeWrite, ProvenanceIn,
                                   RecordUsage, UpdateNode)
from kenning.knowledge.relations import RelationError
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store.connection import open_store

T0 = "2026-03-01T10:00:00.000Z"


@pytest.fixture
def vault(tmp_path):
    conn = open_store(tmp_path / "v.db")
    yield conn
    conn.close()


def writer(conn, at: str = T0, **kw) -> KnowledgeWriter:
    return KnowledgeWriter(conn, load_config(), clock=Clock(at), **kw)


def create(conn, name="Anna", kind="world_entity", at=T0, **kw):
    payload = kw.pop("payload", EXAMPLE_PAYLOADS[kind])
    return writer(conn, at).write(KnowledgeWrite(
        source_event="test", change_summary=f"create {name}",
        ops=[CreateNode(node_kind=kind, canonical_name=name, payload=payload, **kw)]))


def test_create_writes_the_node_its_alias_fts_row_and_one_commit_with_patches(vault):
    res = create(vault, aliases=({"alias": "Annie"},))
    assert res.created and res.mutations == 1 and len(res.node_ids) == 1
    node = ksql.get_node(vault, res.node_ids[0])
    assert node["updated_at"] == T0 and node["created_at"] == T0
    assert node["node_kind"] == "world_entity" and node["is_active"] == 1
    assert {a["normalized_alias"] for a in ksql.get_aliases(vault, node["id"])} == {"anna", "annie"}
    assert ksql.fts_node_ids(vault, "annie") == [node["id"]]
    commit = ksql.get_commit(vault, res.commit_id)
    assert commit["kind"] == "forward" and commit["parent_commit_ids"] == []
    (m,) = commit["mutations"]
    assert m["type"] == "create" and m["target_id"] == node["id"]
    # the patch rebuilds the document from nothing; the reverse patch empties it again
    assert jsonpatch.apply_patch({}, m["patch"]) == docs.load_node(vault, node["id"])
    assert jsonpatch.apply_patch(docs.load_node(vault, node["id"]), m["reverse_patch"]) == {}


def test_a_second_commit_names_the_first_as_parent(vault):
    a, b = create(vault, "Anna"), create(vault, "Ben")
    assert ksql.get_commit(vault, b.commit_id)["parent_commit_ids"] == [a.commit_id]


def test_idempotency_key_replays_the_first_commit_and_writes_nothing(vault):
    req = KnowledgeWrite(source_event="test", change_summary="once", idempotency_key="k1",
                         ops=[CreateNode(node_kind="goal", canonical_name="Learn Spanish",
                                         payload=EXAMPLE_PAYLOADS["goal"])])
    first = writer(vault).write(req)
    before = ksql.dump(vault)
    again = writer(vault, "2026-03-02T00:00:00.000Z").write(req)
    assert again.replayed and not again.created and again.commit_id == first.commit_id
    assert ksql.dump(vault) == before


def test_a_write_that_changes_nothing_makes_no_commit(vault):
    create(vault, "Anna", if_exists="merge")
    n = ksql.commit_count(vault)
    res = create(vault, "Anna", if_exists="merge", at="2026-03-05T00:00:00.000Z")
    assert not res.created and res.commit_id is None and ksql.commit_count(vault) == n


def _refused(vault, req_or_fn, exc):
    before = ksql.dump(vault)
    with pytest.raises(exc) as e:
        req_or_fn() if callable(req_or_fn) else writer(vault).write(req_or_fn)
    assert ksql.dump(vault) == before  # nothing written
    return e.value


def test_stale_expected_updated_at_is_refused_and_nothing_is_written(vault):
    nid = create(vault).node_ids[0]
    err = _refused(vault, KnowledgeWrite(source_event="t", change_summary="late", expected_updated_at="2020-01-01",
                                         ops=[UpdateNode(id=nid, canonical_name="Anna B.")]), StaleWrite)
    assert nid in str(err) and "2020-01-01" in str(err)
    ok = writer(vault, "2026-03-02T00:00:00.000Z").write(KnowledgeWrite(
        source_event="t", change_summary="fresh", expected_updated_at=T0,
        ops=[UpdateNode(id=nid, canonical_name="Anna B.")]))
    assert ok.created


def test_invalid_payload_unknown_relation_and_unknown_node_are_refused_whole(vault):
    a = create(vault, "Anna").node_ids[0]
    b = create(vault, "Acme", payload={"entity_type": "organization"}).node_ids[0]
    err = _refused(vault, KnowledgeWrite(source_event="t", change_summary="bad", ops=[
        CreateNode(node_kind="goal", canonical_name="ok", payload=EXAMPLE_PAYLOADS["goal"]),
        CreateNode(node_kind="obligation", canonical_name="Renew passport",
                   payload={**EXAMPLE_PAYLOADS["obligation"],
                            "deadline": {**EXAMPLE_PAYLOADS["obligation"]["deadline"], "date": "2026-05-01"}})]),
        PayloadError)
    assert "deadline.date" in str(err)
    err = _refused(vault, KnowledgeWrite(source_event="t", change_summary="bad", ops=[
        CreateEdge(source_id=a, relation_type="works_for_maybe", target_id=b)]), RelationError)
    assert "works_for_maybe" in str(err)
    _refused(vault, KnowledgeWrite(source_event="t", change_summary="bad", ops=[
        CreateEdge(source_id=a, relation_type="related_to", target_id="no-such-node")]), NodeNotFound)


def test_feedback_moves_alpha_and_beta_by_the_seed_weights(vault):
    nid = create(vault, "Anna", lifecycle_state="observed").node_ids[0]
    a0, b0 = ksql.get_node(vault, nid)["alpha"], ksql.get_node(vault, nid)["beta"]

    def fb(action, at, **kw):
        return writer(vault, at).write(KnowledgeWrite(source_event="user", change_summary=action,
                                                      ops=[Feedback(id=nid, action=action, **kw)]))
    fb("confirm", "2026-03-02T00:00:00.000Z")
    n = ksql.get_node(vault, nid)
    assert n["alpha"] == pytest.approx(a0 + 1.0) and n["beta"] == b0 and n["lifecycle_state"] == "confirmed"
    assert n["last_verified_at"] == "2026-03-02T00:00:00.000Z"
    fb("correct", "2026-03-03T00:00:00.000Z", canonical_name="Anna Schmidt", reason="her full name")
    n = ksql.get_node(vault, nid)
    assert n["alpha"] == pytest.approx(a0 + 1.95) and n["canonical_name"] == "Anna Schmidt"
    reasons = [p["correction_reason"] for p in ksql.get_provenance(vault, nid) if p["entry_type"] == "user_correction"]
    assert reasons == ["her full name"]
    fb("reject", "2026-03-04T00:00:00.000Z", reason="not a real person")
    n = ksql.get_node(vault, nid)
    assert n["beta"] == pytest.approx(b0 + 1.0) and n["lifecycle_state"] == "retracted"
    outcomes = [e["outcome"] for e in ksql.outcome_events(vault)]
    assert outcomes == ["confirmed", "corrected", "rejected"]


def test_provenance_evidence_counts_once_per_entry(vault):
    quote = ProvenanceIn(entry_type="conversation_statement", message_id="m1", char_start=0, char_end=12,
                         verbatim_excerpt="I love tea.", evidence_event="stated_by_user",
                         created_at="2024-01-01T00:00:00.000Z")
    nid = create(vault, "Tea lover", kind="memory_directive", provenance=(quote,), if_exists="merge").node_ids[0]
    alpha = ksql.get_node(vault, nid)["alpha"]
    res = create(vault, "Tea lover", kind="memory_directive", provenance=(quote,), if_exists="merge",
                 at="2026-04-01T00:00:00.000Z")
    assert not res.created and ksql.get_node(vault, nid)["alpha"] == alpha
    (p,) = [p for p in ksql.get_provenance(vault, nid) if p["entry_type"] == "conversation_statement"]
    assert p["verbatim_excerpt"] == "I love tea." and len(p["excerpt_hash"]) == 64
    assert ksql.get_node(vault, nid)["last_verified_at"] == "2024-01-01T00:00:00.000Z"


def test_one_current_edge_per_triple_ending_keeps_history_and_undirected_is_normalised(vault):
    a = create(vault, "Anna").node_ids[0]
    b = create(vault, "Berlin", payload={"entity_type": "place"}).node_ids[0]
    w = writer(vault)

    def edge(op, at=T0):
        return writer(vault, at).write(KnowledgeWrite(source_event="t", change_summary="e", ops=[op]))
    edge(CreateEdge(source_id=a, relation_type="domain_lives_in", target_id=b, start_date="2020-01-01T00:00:00.000Z"))
    again = edge(CreateEdge(source_id=a, relation_type="domain_lives_in", target_id=b,
                            start_date="2021-01-01T00:00:00.000Z"))
    assert not again.created  # already current: no second current edge
    edge(EndEdge(source_id=a, relation_type="domain_lives_in", target_id=b, end_date="2023-06-01T00:00:00.000Z",
                 reason="moved to Paris"))
    edge(CreateEdge(source_id=a, relation_type="domain_lives_in", target_id=b, start_date="2025-01-01T00:00:00.000Z"))
    rows = [e for e in ksql.edges_of(vault, a) if e["relation_type"] == "domain_lives_in"]
    assert [(e["start_date"][:4], (e["end_date"] or "")[:4]) for e in rows] == [("2025", ""), ("2020", "2023")]
    assert rows[1]["payload"]["end_reason"] == "moved to Paris"
    edge(CreateEdge(source_id=max(a, b), relation_type="related_to", target_id=min(a, b)))
    (rel,) = [e for e in ksql.edges_of(vault, a) if e["relation_type"] == "related_to"]
    assert rel["source_id"] == min(a, b)
    assert w is not None


def test_rollback_is_a_compensating_commit_and_rolling_it_back_redoes(vault):
    nid = create(vault, "Anna").node_ids[0]
    before = docs.load_node(vault, nid)
    fix = writer(vault, "2026-03-02T00:00:00.000Z").write(KnowledgeWrite(
        source_event="user", change_summary="rename", ops=[Feedback(id=nid, action="correct", canonical_name="Ann")]))
    after_fix = docs.load_node(vault, nid)
    rb = writer(vault, "2026-03-03T00:00:00.000Z").rollback(fix.commit_id, reason="wrong")
    restored = docs.load_node(vault, nid)
    strip = lambda d: {k: v for k, v in d.items() if k != "updated_at"}  # noqa: E731
    assert strip(restored) == strip(before)
    c = ksql.get_commit(vault, rb.commit_id)
    assert c["kind"] == "rollback" and c["rolled_back_commit_id"] == fix.commit_id
    assert ksql.get_commit(vault, fix.commit_id)["mutations"]  # history untouched
    with pytest.raises(RollbackError, match="already rolled back"):
        writer(vault).rollback(fix.commit_id, reason="again")
    writer(vault, "2026-03-04T00:00:00.000Z").rollback(rb.commit_id, reason="redo")
    assert strip(docs.load_node(vault, nid)) == strip(after_fix)


def test_rollback_of_a_creation_tombstones_and_a_later_change_blocks_an_earlier_rollback(vault):
    res = create(vault, "Anna")
    nid = res.node_ids[0]
    c1 = writer(vault, "2026-03-02T00:00:00.000Z").write(KnowledgeWrite(
        source_event="u", change_summary="1", ops=[UpdateNode(id=nid, canonical_name="Ann")]))
    writer(vault, "2026-03-03T00:00:00.000Z").write(KnowledgeWrite(
        source_event="u", change_summary="2", ops=[UpdateNode(id=nid, canonical_name="Anne")]))
    with pytest.raises(RollbackError, match="later commit"):
        writer(vault).rollback(c1.commit_id, reason="x")
    writer(vault, "2026-03-04T00:00:00.000Z").rollback(res.commit_id, reason="never existed")
    n = ksql.get_node(vault, nid)
    assert n["is_active"] == 0 and n["lifecycle_state"] == "retracted"  # tombstone, not a hard delete


def test_usage_events_build_the_experience_record(vault):
    nid = create(vault, "Weekly review", kind="procedure").node_ids[0]
    for i in range(3):
        writer(vault, f"2026-03-0{i + 2}T00:00:00.000Z").write(KnowledgeWrite(
            source_event="usage", change_summary="ran", ops=[RecordUsage(
                id=nid, event={"usage_type": "executed", "outcome": "success"})]))
    x = ksql.get_experience(vault, nid)
    assert x["total_usage_count"] == 3 and x["total_success_count"] == 3 and len(x["recent_events"]) == 3


def test_hard_delete_cascades_and_cleans_fts(vault):
    a = create(vault, "Anna").node_ids[0]
    b = create(vault, "Bob").node_ids[0]
    writer(vault).write(KnowledgeWrite(source_event="t", change_summary="e", ops=[
        CreateEdge(source_id=a, relation_type="related_to", target_id=b)]))
    with vault:
        ksql.delete_node(vault, a)
    assert ksql.get_aliases(vault, a) == [] and ksql.edges_of(vault, b) == []
    assert ksql.fts_node_ids(vault, "anna") == []


def test_same_writes_under_a_frozen_clock_give_identical_stores(tmp_path):
    dumps = []
    for name in ("a.db", "b.db"):
        conn = open_store(tmp_path / name)
        n = create(conn, "Anna").node_ids[0]
        create(conn, "Learn Spanish", kind="goal")
        writer(conn, "2026-03-02T00:00:00.000Z").write(KnowledgeWrite(
            source_event="u", change_summary="c", ops=[Feedback(id=n, action="confirm")]))
        dumps.append(ksql.dump(conn))
        conn.close()
    assert dumps[0] == dumps[1]


def test_usage_on_a_light_tier_node_lives_in_the_payload_and_bad_outcomes_need_a_reason(vault):
    nid = create(vault, "Anna").node_ids[0]  # world_entity at observed: tier C, minimal experience
    writer(vault, "2026-03-02T00:00:00.000Z").write(KnowledgeWrite(
        source_event="usage", change_summary="used", ops=[RecordUsage(id=nid, event={"usage_type": "referenced",
                                                                                      "outcome": "success"})]))
    node = ksql.get_node(vault, nid)
    assert node["payload"]["usage_count"] == 1 and ksql.get_experience(vault, nid) is None
    pid = create(vault, "Weekly review", kind="procedure").node_ids[0]
    from kenning.knowledge.errors import KnowledgeError
    with pytest.raises(KnowledgeError, match="outcome_detail"):
        writer(vault).write(KnowledgeWrite(source_event="usage", change_summary="failed", ops=[
            RecordUsage(id=pid, event={"usage_type": "executed", "outcome": "failure"})]))


def test_automatic_promotion_freezes_below_the_quality_floor_and_after_a_demotion(vault):
    """§6.5: people rejected most recent entities → the system may not promote entities; §6.4: a demoted node
    waits out the cooldown before the system promotes it again. A person's own promotion is not held."""
    def promote(nid, at, by_user=False, state="suggested"):
        return writer(vault, at).write(KnowledgeWrite(source_event="sys", change_summary="promote", ops=[
            UpdateNode(id=nid, lifecycle_state=state, by_user=by_user)]))
    ids = [create(vault, f"P{i}", lifecycle_state="observed").node_ids[0] for i in range(4)]
    for nid in ids[:3]:
        writer(vault, "2026-03-01T11:00:00.000Z").write(KnowledgeWrite(
            source_event="u", change_summary="no", ops=[Feedback(id=nid, action="reject")]))
    res = promote(ids[3], "2026-03-01T12:00:00.000Z")
    assert not res.created and any("frozen" in w for w in res.warnings)
    assert ksql.get_node(vault, ids[3])["lifecycle_state"] == "observed"
    assert promote(ids[3], "2026-03-01T12:00:00.000Z", by_user=True).created
    # after the window the gate reopens; a demotion then holds re-promotion for 24 h
    promote(ids[3], "2026-03-20T00:00:00.000Z", state="observed", by_user=False)
    from kenning.knowledge.errors import HysteresisBlocked
    with pytest.raises(HysteresisBlocked, match="cooling down"):
        promote(ids[3], "2026-03-20T06:00:00.000Z")
    assert promote(ids[3], "2026-03-21T01:00:00.000Z").created
