"""§42A.2.16–17: the review queue (impact × uncertainty × recency, pages of 25) and verdicts — each a single-writer
commit that moves α/β, changes the edge, and is undone by `kenning rollback`."""

from __future__ import annotations

import pytest

from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store import upkeep as usql
from kenning.upkeep.resolution import Context, Resolver
from kenning.upkeep.review import ReviewError
from tests.upkeep.conftest import AS_OF

LATER = "2024-06-02T00:00:00Z"


def node(v, node_id):
    return ksql.get_node(v.conn, node_id)


def pick(v, *, promoted: bool, relation: str | None = None):
    for b in usql.all_bundles(v.conn):
        if (b["promotion_state"] == "reinforced_relation") == promoted and \
                (relation is None or b["relation_type"] == relation):
            return b
    raise AssertionError("no such bundle in the sample")


def test_queue_is_sorted_and_paged(vault):
    page = vault.review_queue()
    assert page["state"] == "ready" and page["page_size"] == 25 and page["page"] == 1
    items = page["items"]
    assert items and len(items) <= 25 and page["total_items"] >= len(items)
    scores = [i["sort_score"] for i in items]
    assert scores == sorted(scores, reverse=True)
    for i in items:
        assert i["sort_score"] == pytest.approx(i["impact"] * i["uncertainty"] * i["recency"], abs=1e-5)
        assert i["item_kind"] in ("candidate_relation", "entity_creation_candidate", "suppression_candidate")
        assert i["status"] == "pending"
    small = vault.review_queue(page=2, page_size=5)
    assert small["items"] == vault.review_queue(page_size=10)["items"][5:10]
    assert vault.review_queue(page_size=500)["page_size"] == 100  # §42A.2.17 max 100


def test_approve_is_a_commit_that_moves_alpha_and_activates_the_edge(vault):
    b = pick(vault, promoted=False, relation="affiliated_with")
    tgt = node(vault, b["target_node_id"])
    commits = ksql.commit_count(vault.conn)
    res = vault.review("approve", b["evidence_bundle_id"][:12], as_of=LATER)
    assert res["created"] and ksql.commit_count(vault.conn) == commits + 1
    after = node(vault, b["target_node_id"])
    assert after["alpha"] == pytest.approx(tgt["alpha"] + 1.0) and after["beta"] == tgt["beta"]
    edge = usql.current_edge(vault.conn, b["source_node_id"], b["relation_type"], b["target_node_id"])
    assert edge["lifecycle_state"] == "active" and edge["payload"]["learned_by"] == "backlink_pipeline_v2"
    got = usql.get_bundle(vault.conn, b["evidence_bundle_id"])
    assert got["user_verdict"] == "approved" and got["promotion_state"] == "user_verified"
    assert b["evidence_bundle_id"] not in [i["primary_ref"] for i in vault.review_queue(page_size=100)["items"]]
    # the same verdict again changes nothing
    assert not vault.review("approve", b["evidence_bundle_id"], as_of=LATER)["created"]
    # undo = rollback: α returns, and the next run forgets the verdict (the edge it created is retracted)
    KnowledgeWriter(vault.conn, vault.config, clock=Clock.from_option(LATER)).rollback(res["commit_id"],
                                                                                        reason="test")
    assert node(vault, b["target_node_id"])["alpha"] == pytest.approx(tgt["alpha"])
    vault.backlinks(as_of=LATER)
    assert usql.get_bundle(vault.conn, b["evidence_bundle_id"])["user_verdict"] == "none"
    assert usql.current_edge(vault.conn, b["source_node_id"], b["relation_type"], b["target_node_id"]) is None


def test_reject_moves_beta_ends_the_edge_and_it_stays_ended(vault):
    b = pick(vault, promoted=True)
    tgt = node(vault, b["target_node_id"])
    res = vault.review("reject", b["evidence_bundle_id"], reason="no_relationship", as_of=LATER)
    assert res["created"]
    assert node(vault, b["target_node_id"])["beta"] == pytest.approx(tgt["beta"] + 1.0)
    assert usql.current_edge(vault.conn, b["source_node_id"], b["relation_type"], b["target_node_id"]) is None
    assert usql.get_bundle(vault.conn, b["evidence_bundle_id"])["promotion_state"] == "suppressed"
    assert [r["rejection_reason"] for r in usql.rejections(vault.conn)] == ["no_relationship"]
    vault.backlinks(as_of=LATER)
    assert usql.current_edge(vault.conn, b["source_node_id"], b["relation_type"], b["target_node_id"]) is None
    with pytest.raises(ReviewError):
        vault.review("reject", b["evidence_bundle_id"], reason="because", as_of=LATER)


def test_semantically_related_needs_a_corrected_relation(vault):
    b = pick(vault, promoted=False, relation="semantically_related")
    with pytest.raises(ReviewError, match="correct the relation"):
        vault.review("approve", b["evidence_bundle_id"], as_of=LATER)
    tgt = node(vault, b["target_node_id"])
    res = vault.review("correct", b["evidence_bundle_id"], to_relation="collaborated_with", as_of=LATER)
    assert res["created"]
    assert node(vault, b["target_node_id"])["alpha"] == pytest.approx(tgt["alpha"] + 0.95)  # taught_by_user
    edge = usql.current_edge(vault.conn, b["source_node_id"], "collaborated_with", b["target_node_id"])
    assert edge and edge["lifecycle_state"] == "active"
    assert usql.get_bundle(vault.conn, b["evidence_bundle_id"]) is None  # its mentions moved to the new bundle
    vault.backlinks(as_of=LATER)
    assert usql.current_edge(vault.conn, b["source_node_id"], "collaborated_with", b["target_node_id"])


def test_retarget_moves_the_mention_and_records_a_rejection(vault):
    b = pick(vault, promoted=False, relation="affiliated_with")
    mention = b["support_mention_ids"][0]
    others = [r[0] for r in vault.conn.execute(
        "SELECT id FROM nodes WHERE node_kind='world_entity' AND id NOT IN (?, ?) ORDER BY id LIMIT 1",
        (b["source_node_id"], b["target_node_id"]))]
    new = others[0]
    old_t, new_t = node(vault, b["target_node_id"]), node(vault, new)
    res = vault.review("retarget", mention, new_target=new, as_of=LATER)
    assert res["created"]
    assert node(vault, b["target_node_id"])["beta"] == pytest.approx(old_t["beta"] + 1.0)
    assert node(vault, new)["alpha"] == pytest.approx(new_t["alpha"] + 0.95)
    m = usql.get_mention(vault.conn, mention)
    assert m["resolved_node_id"] == new and m["resolution_method"] == "user_corrected"
    # §42A.2.9 term 5: the rejected pair now carries the −0.8 penalty
    now = Clock.from_option(LATER).now()
    r = Resolver(vault.conn, vault.config, now)
    ctx = Context("o", None, "chatgpt:user", now, anchors=[b["source_node_id"]])
    assert r.graph_context(b["target_node_id"], ctx) == 0.0


def test_suppress_pattern_marks_mentions_and_moves_beta(vault):
    m = vault.conn.execute("SELECT normalized_mention, span_class, resolved_node_id FROM mention_observations_derived "
                           "WHERE resolved_node_id IS NOT NULL AND evidence_bundle_id IS NOT NULL "
                           "ORDER BY append_seq LIMIT 1").fetchone()
    before = node(vault, m[2])
    res = vault.review("suppress", m[0], span_class=m[1], reason="not a person", as_of=LATER)
    assert res["created"]
    assert node(vault, m[2])["beta"] == pytest.approx(before["beta"] + 1.0)
    states = {r[0] for r in vault.conn.execute(
        "SELECT state FROM mention_observations_derived WHERE normalized_mention=? AND span_class=?", (m[0], m[1]))}
    assert states == {"suppressed"}
    vault.backlinks(as_of=LATER)  # stays suppressed on the next run
    assert {r[0] for r in vault.conn.execute(
        "SELECT state FROM mention_observations_derived WHERE normalized_mention=? AND span_class=?",
        (m[0], m[1]))} == {"suppressed"}


def test_a_rolled_back_promotion_is_not_redone(vault):
    e = usql.promoted_edges(vault.conn)[0]
    commit = vault.conn.execute(
        "SELECT c.commit_id FROM knowledge_commits c JOIN knowledge_commit_mutations m ON m.commit_id=c.commit_id "
        "WHERE c.source_event='backlinks:promote' AND m.type='edge_create' AND m.target_id LIKE ? "
        "ORDER BY c.seq DESC LIMIT 1", (f"{e['source_id']}|{e['relation_type']}|{e['target_id']}%",)).fetchone()[0]
    KnowledgeWriter(vault.conn, vault.config, clock=Clock.from_option(LATER)).rollback(commit, reason="not so")
    assert usql.current_edge(vault.conn, e["source_id"], e["relation_type"], e["target_id"]) is None
    commits = ksql.commit_count(vault.conn)
    vault.backlinks(as_of=LATER)
    assert usql.current_edge(vault.conn, e["source_id"], e["relation_type"], e["target_id"]) is None
    assert ksql.commit_count(vault.conn) == commits


def test_generic_references_become_suppression_candidates(vault):
    kinds = {i["item_kind"]: i for i in vault.review_queue(page_size=100)["items"]}
    items = [i for i in vault.review_queue(page_size=100, item_kind="suppression_candidate")["items"]]
    if not items:  # the sample may have none; plant three unresolved "the draft" mentions
        base = dict(source_node_id="s", resolved_node_id=None, state="observed_mention",
                    visibility_class="cloud_allowed", work_context_id="c", occurred_at=AS_OF, is_nested=0,
                    relation_hypothesis=None, resolution_method="unresolved", resolution_confidence=0,
                    graph_context_score=0, suppression_reason=None, context_window="", polarity="support",
                    evidence_bundle_id=None, parent_mention_id=None, start_offset=0, end_offset=9,
                    span_class="generic_document_reference", surface="a", mention_text="the draft",
                    normalized_mention="the draft")
        usql.insert_mentions(vault.conn, [dict(base, mention_id=f"d{i}", observation_id=f"o{i}", group_id=f"g{i}")
                                          for i in range(3)])
        vault.backlinks(as_of=AS_OF)
        items = vault.review_queue(page_size=100, item_kind="suppression_candidate")["items"]
    assert items and items[0]["available_actions"] == ["suppress"] and kinds is not None
    text = items[0]["title"].split("“")[1].split("”")[0]
    cls = items[0]["description"].split(" ")[0]
    assert vault.review("suppress", text, span_class=cls, as_of=LATER)["created"]
    left = vault.review_queue(page_size=100, item_kind="suppression_candidate")["items"]
    assert items[0]["queue_item_id"] not in [i["queue_item_id"] for i in left]
