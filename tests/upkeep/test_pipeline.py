"""The `backlinks` stage on the bundled sample: mention observations → evidence bundles → edges promoted through the
single writer, idempotent, watermark only after commit, rebuildable from the event log, agreeing with the bridge."""

from __future__ import annotations

import orjson
import pytest

from kenning.knowledge import eventlog
from kenning.pipeline.runner import StageFailed
from kenning.store import knowledge as ksql
from kenning.store import upkeep as usql
from kenning.upkeep import bundles as B
from kenning.upkeep import promotion
from kenning.upkeep.promotion import WATERMARK, aggregate_bundles
from tests.upkeep.conftest import AS_OF


def derived(conn) -> str:
    out = {}
    for t in ("mention_observations_derived", "evidence_bundles_derived", "review_queue_derived",
              "entity_creation_candidates", "backlink_tier4_queue", "backlink_state"):
        out[t] = [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1")]
    out["edges"] = [tuple(r) for r in conn.execute("SELECT * FROM edges ORDER BY 1, 2, 3, 4")]
    return orjson.dumps(out, default=str).decode()


def test_sample_mentions_become_bundles_and_a_promoted_edge(vault):
    conn, cfg = vault.conn, vault.config.backlinks
    counts = usql.mention_counts(conn)
    assert counts["mentions"] > 100 and counts["resolved"] > 50
    bundles = usql.all_bundles(conn)
    assert bundles
    promoted = usql.promoted_edges(conn)
    assert promoted, "the sample has at least one relation with enough evidence"
    by_id = {b["evidence_bundle_id"]: b for b in bundles}
    for e in promoted:
        p = e["payload"]
        assert p["learned_by"] == "backlink_pipeline_v2" and e["lifecycle_state"] == "observed"
        b = by_id[p["evidence_bundle_id"]]
        assert b["promotion_state"] == "reinforced_relation"
        assert e["confidence"] == pytest.approx(b["evidence_score"], abs=1e-6)
        assert (e["source_id"], e["target_id"]) == B.normalize_pair(e["source_id"], e["target_id"],
                                                                    e["relation_type"])
        assert p["evidence_bundle_id"] == B.bundle_id(e["source_id"], e["target_id"], e["relation_type"])
        # re-check the decision from the stored bundle: every promotion passes shouldPromoteEdge
        first = usql.first_mention(conn, b["support_mention_ids"][0])
        assert B.should_promote(B.Bundle(**b), cfg.promotion, first)[0]
    # single-mention promotions only through the seed's exception (alias exact, context ≥ .7)
    for b in bundles:
        if b["promotion_state"] == "reinforced_relation" and b["support_count"] == 1:
            m = usql.first_mention(conn, b["support_mention_ids"][0])
            assert m["resolution_method"] == "alias_exact" and m["graph_context_score"] >= 0.7
    # semantically_related never opens a bundle on one observation (NP20), and is never promoted
    assert all(b["distinct_observation_count"] >= 2 for b in bundles if b["relation_type"] == "semantically_related")
    assert not [e for e in promoted if e["relation_type"] == "semantically_related"]


def test_bridge_and_bundles_do_not_write_the_same_edges(vault):
    conn = vault.conn
    rows = list(conn.execute("SELECT source_id, target_id, relation_type, json_extract(payload,'$.learned_by') "
                             "FROM edges WHERE end_date IS NULL"))
    bridge = [r for r in rows if r[3] is None]
    mine = [r for r in rows if r[3] == "backlink_pipeline_v2"]
    assert bridge and mine
    assert all(r[2].startswith("domain_") for r in bridge)
    assert not any(r[2].startswith("domain_") for r in mine)
    assert len({(r[0], r[1], r[2]) for r in rows}) == len(rows)  # one current edge per triple


def test_a_second_run_changes_nothing(vault):
    before, commits = derived(vault.conn), ksql.commit_count(vault.conn)
    res = vault.backlinks(as_of=AS_OF)
    assert res.counts.get("observations_scanned", 0) == 0 and res.counts.get("edges_promoted", 0) == 0
    assert ksql.commit_count(vault.conn) == commits
    # only the review queue's pending rows are recomputed — to the same content
    assert derived(vault.conn) == before


def test_watermark_moves_only_after_the_transaction_commits(vault, monkeypatch):
    conn = vault.conn
    mark = usql.state_get(conn, WATERMARK)
    assert int(mark) == usql.max_append_seq(conn) > 0
    # forget the scan so the next run has work, then fail it after aggregation
    conn.execute("DELETE FROM backlink_observations WHERE observation_id IN (SELECT observation_id FROM "
                 "backlink_observations ORDER BY observation_id LIMIT 50)")
    n_mentions = usql.mention_counts(conn)["mentions"]

    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(promotion, "promote_all", boom)
    with pytest.raises(StageFailed):
        vault.backlinks(as_of=AS_OF)
    assert usql.state_get(conn, WATERMARK) == mark
    assert usql.mention_counts(conn)["mentions"] == n_mentions
    monkeypatch.undo()
    res = vault.backlinks(as_of=AS_OF)
    assert res.counts["observations_scanned"] == 50
    assert usql.state_get(conn, WATERMARK) == str(usql.max_append_seq(conn))


def test_nested_spans_count_once(vault):
    """Two nested spans of one observation (one group) + one span elsewhere = support 2, observations 2."""
    conn, cfg = vault.conn, vault.config
    a, b = sorted(r[0] for r in conn.execute("SELECT id FROM nodes WHERE node_kind='world_entity' LIMIT 2"))
    bid = B.bundle_id(a, b, "affiliated_with")
    base = dict(source_node_id=a, resolved_node_id=b, span_class="organization_name", state="candidate_relation",
                visibility_class="cloud_allowed", surface="chatgpt:user", occurred_at=AS_OF, is_nested=0,
                relation_hypothesis="affiliated_with", resolution_method="alias_exact", resolution_confidence=0.9,
                graph_context_score=0.2, suppression_reason=None, context_window="", polarity="support",
                evidence_bundle_id=bid, work_context_id="c1", parent_mention_id=None)
    rows = [dict(base, mention_id="m-wide", observation_id="o1", normalized_mention="acme corp group",
                 mention_text="Acme Corp Group", start_offset=0, end_offset=15, group_id="g1"),
            dict(base, mention_id="m-narrow", observation_id="o1", normalized_mention="acme corp",
                 mention_text="Acme Corp", start_offset=0, end_offset=9, group_id="g1", is_nested=1,
                 parent_mention_id="m-wide"),
            dict(base, mention_id="m-other", observation_id="o2", normalized_mention="acme corp",
                 mention_text="Acme Corp", start_offset=4, end_offset=13, group_id="g2", work_context_id="c2")]
    assert usql.insert_mentions(conn, rows) == 3
    assert usql.insert_mentions(conn, rows) == 0  # INSERT OR IGNORE on mention_id
    aggregate_bundles(conn, cfg, [bid], {})
    got = usql.get_bundle(conn, bid)
    assert got["support_count"] == 2 and got["distinct_observation_count"] == 2
    assert got["support_mention_ids"] == ["m-wide", "m-other"] and got["distinct_work_context_count"] == 2


def test_rebuild_from_the_event_log_is_idempotent(vault):
    conn = vault.conn
    promoted = usql.promoted_edges(conn)
    path = eventlog.log_path(conn, vault.config)
    eventlog.export_pending(conn, vault.config)
    counts = eventlog.rebuild(conn, path)
    assert counts["commits"] == ksql.commit_count(conn)
    assert usql.promoted_edges(conn) == promoted
    commits = ksql.commit_count(conn)
    res = vault.backlinks(as_of=AS_OF)
    assert ksql.commit_count(conn) == commits and res.counts.get("edges_promoted", 0) == 0
    # rebuilding the derived tables themselves from scratch gives the same bundles and no new commits
    before = [(b["evidence_bundle_id"], b["support_count"], b["evidence_score"]) for b in usql.all_bundles(conn)]
    for t in ("mention_observations_derived", "evidence_bundles_derived", "backlink_observations", "backlink_state",
              "review_queue_derived", "backlink_tier4_queue", "entity_creation_candidates"):
        conn.execute(f"DELETE FROM {t}")
    vault.backlinks(as_of=AS_OF)
    after = [(b["evidence_bundle_id"], b["support_count"], b["evidence_score"]) for b in usql.all_bundles(conn)]
    assert after == before and ksql.commit_count(conn) == commits


def test_historical_sweep_rescans_and_adds_nothing_new(vault):
    commits, mentions = ksql.commit_count(vault.conn), usql.mention_counts(vault.conn)["mentions"]
    res = vault.backlinks(as_of=AS_OF, sweep=True)
    assert res.counts["observations_scanned"] > 100 and res.counts.get("mentions_recorded", 0) == 0
    assert usql.mention_counts(vault.conn)["mentions"] == mentions and ksql.commit_count(vault.conn) == commits


def test_promoted_edges_respect_endpoint_visibility(vault):
    from kenning.knowledge.ops import KnowledgeWrite, UpdateNode
    from kenning.knowledge.writer import KnowledgeWriter
    from kenning.pipeline.clock import Clock

    conn = vault.conn
    e = B.visible_promoted_edges(conn)[0]
    KnowledgeWriter(conn, vault.config, clock=Clock.from_option(AS_OF)).write(KnowledgeWrite(
        source_event="test", change_summary="make private",
        ops=[UpdateNode(id=e["target_id"], payload_set={"scope": "private"})]))
    cloud = B.visible_promoted_edges(conn, "cloud_allowed")
    local = B.visible_promoted_edges(conn, "local_only")
    key = (e["source_id"], e["relation_type"], e["target_id"])
    assert key not in {(x["source_id"], x["relation_type"], x["target_id"]) for x in cloud}
    assert key in {(x["source_id"], x["relation_type"], x["target_id"]) for x in local}
