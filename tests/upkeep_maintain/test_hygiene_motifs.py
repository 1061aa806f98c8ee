"""§42A.6 hygiene (90-day half-life, 0.18 floor, demoted edge's bundle back to candidate, user-verified exempt,
isolated candidates archived after 30 d) and §42A.5 cliques / motifs / CV regularity."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.store import knowledge as ksql
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import open_store
from kenning.upkeep.maintain.dag import maintain
from kenning.upkeep.maintain.hygiene import decayed
from kenning.upkeep.maintain.motifs import regularity
from tests.upkeep_maintain.helpers import T0, active, edge, node


@pytest.fixture
def conn(tmp_path):
    c = open_store(tmp_path / "v.db")
    yield c
    c.close()


def test_decay_formula():
    assert decayed(0.8, 90, 90) == pytest.approx(0.4)
    assert decayed(0.8, 180, 90) == pytest.approx(0.2)
    assert decayed(0.8, 0, 90) == 0.8


def _edge_state(conn, a, b):
    (e,) = [e for e in ksql.edges_of(conn, a, current_only=True) if b in (e["source_id"], e["target_id"])]
    return e


def test_hygiene_demotes_decayed_promoted_edges_returns_the_bundle_and_spares_user_verified(conn):
    a, b, c, d = (node(conn, n, state="confirmed") for n in ("Anna", "Acme", "Ben", "Bolt"))
    learned = {"learned_by": "backlink_pipeline_v2", "evidence_bundle_id": "b1"}
    edge(conn, a, "part_of", b, confidence=0.8, payload=learned)
    edge(conn, c, "part_of", d, confidence=0.8, payload={**learned, "evidence_bundle_id": "b2",
                                                          "user_verified": True})
    edge(conn, a, "used_in", d, confidence=0.8)  # not learned by a pipeline: hygiene leaves it alone
    edge(conn, b, "part_of", c, confidence=0.8, payload={"learned_by": "user"})  # `kenning edge add`: the person's
    # the back-link pipeline's bundles (migration 0090)
    conn.execute("INSERT INTO evidence_bundles_derived(evidence_bundle_id, source_node_id, target_node_id, "
                 "relation_type, support_count, promotion_state) VALUES (?, ?, ?, 'part_of', 4, "
                 "'reinforced_relation'), (?, ?, ?, 'part_of', 5, 'user_verified')", ("b1", a, b, "b2", c, d))
    # 0.8 · 0.5^(150/90) ≈ 0.252 ≥ 0.18: kept
    r = maintain(conn, load_config(), now="2026-05-31T09:00:00.000Z")
    assert r["demoted_edge_count"] == 0 and _edge_state(conn, a, b)["lifecycle_state"] == "active"
    # 0.8 · 0.5^(200/90) ≈ 0.171 < 0.18: demoted to observed, support kept, bundle back to candidate
    r = maintain(conn, load_config(), now="2026-07-20T09:00:00.000Z")
    e = _edge_state(conn, a, b)
    assert r["demoted_edge_count"] == 1 and r["reviewed_bundle_count"] == 1
    assert e["lifecycle_state"] == "observed" and e["confidence"] == pytest.approx(0.8 * 0.5 ** (200 / 90), abs=1e-6)
    assert e["payload"]["evidence_bundle_id"] == "b1" and e["payload"]["demoted_at"]
    assert conn.execute("SELECT promotion_state, support_count FROM evidence_bundles_derived ORDER BY "
                        "evidence_bundle_id").fetchall() == [("candidate_relation", 4), ("user_verified", 5)]
    assert _edge_state(conn, c, d)["lifecycle_state"] == "active"
    assert _edge_state(conn, a, d)["lifecycle_state"] == "active"
    assert _edge_state(conn, b, c)["lifecycle_state"] == "active"
    assert r["hygiene_receipt"] == {"demoted_edge_count": 1, "archived_candidate_node_count": 0,
                                    "reviewed_bundle_count": 1}
    assert maintain(conn, load_config(), now="2026-07-21T09:00:00.000Z")["changes"] == 0


def test_an_observed_promoted_edge_is_archived_once_decayed(conn):
    """The back-link pipeline promotes to `observed` unless a person approved: decay takes it to `archived`."""
    a, b = node(conn, "Anna", state="confirmed"), node(conn, "Acme", state="confirmed")
    from kenning.knowledge.ops import CreateEdge, KnowledgeWrite
    from tests.upkeep_maintain.helpers import writer
    writer(conn).write(KnowledgeWrite(source_event="t", change_summary="e", ops=[CreateEdge(
        source_id=a, relation_type="part_of", target_id=b, confidence=0.5, lifecycle_state="observed",
        start_date=T0, payload={"learned_by": "backlink_pipeline_v2"})]))
    r = maintain(conn, load_config(), now="2026-06-01T09:00:00.000Z")
    assert r["demoted_edge_count"] == 1 and _edge_state(conn, a, b)["lifecycle_state"] == "archived"
    assert maintain(conn, load_config(), now="2026-06-02T09:00:00.000Z")["changes"] == 0


def test_isolated_candidates_are_archived_after_30_days(conn):
    goal = node(conn, "Learn Portuguese", kind="goal", state="suggested")
    r = maintain(conn, load_config(), now="2026-01-20T09:00:00.000Z")
    assert r["archived_candidate_node_count"] == 0 and active(conn, goal)
    r = maintain(conn, load_config(), now="2026-02-01T09:00:00.000Z")
    assert r["archived_candidate_node_count"] == 1 and not active(conn, goal)


def test_regularity_from_the_coefficient_of_variation():
    def days(*ds):
        return [f"2026-01-{d:02d}T09:00:00.000Z" if d <= 31 else f"2026-02-{d - 31:02d}T09:00:00.000Z" for d in ds]
    assert regularity(days(1, 8, 15, 22, 29))[0] == "weekly"
    assert regularity(days(1, 8, 15, 22, 29))[1] >= 0.6
    assert regularity(days(1, 31, 59))[0] == "monthly"
    assert regularity(days(1, 3, 5, 7))[0] == "irregular"  # regular, but every 2 days is neither week nor month
    assert regularity(days(1, 2, 15, 16))[0] == "none"      # cv > .5
    assert regularity(days(1, 8)) == ("none", 0.0)          # one interval says nothing


def test_weekly_clique_becomes_a_standing_procedure_candidate_and_motifs_need_3_threads(conn):
    weeks = [f"2026-01-{d:02d}T09:00:00.000Z" for d in (5, 12, 19, 26)]
    # "weekly sync": Anna, the Q3 report and Slack together every Monday, in this order
    seen = {name: tuple((f"sync{i}", pos, w) for i, w in enumerate(weeks))
            for pos, name in enumerate(("Anna", "Q3 report", "Slack"))}
    anna = node(conn, "Anna", state="confirmed", seen=seen["Anna"])
    report = node(conn, "Q3 report", kind="work_product", state="confirmed", seen=seen["Q3 report"])
    slack = node(conn, "Slack", kind="application", state="confirmed", seen=seen["Slack"])
    # unrelated threads, so the lift of the sync trio is above 1.5; a one-off mention of Anna elsewhere
    for i in range(6):
        node(conn, f"Topic {i}", state="confirmed", seen=((f"other{i}", 0, f"2026-01-{i + 2:02d}T09:00:00.000Z"),))
    once = node(conn, "Dentist", state="confirmed", seen=(("other0", 1, "2026-01-02T09:00:00.000Z"),))
    r = maintain(conn, load_config(), now="2026-02-01T09:00:00.000Z")
    (p,) = msql.patterns(conn)
    assert p["entity_ids"] == sorted((anna, report, slack)) and p["distinct_observation_count"] == 4
    assert p["temporal_regularity"] == "weekly" and p["regularity_confidence"] >= 0.6
    assert p["status"] == "pending_review" and p["suggested_procedure_kind"] == "tool_workflow"
    assert [i["node_ids"] for i in msql.queue_items(conn, "standing_procedure_candidate")] == [p["entity_ids"]]
    (m,) = msql.motifs(conn)  # closed: the 3-step motif, not its 2-step parts
    assert [s["node_id"] for s in m["steps"]] == [anna, report, slack] and m["support_count"] == 4
    assert r["pattern_count"] == 1 and r["motif_count"] == 1 and r["standing_procedure_candidate_count"] == 1
    assert all(once not in i["node_ids"] for i in msql.queue_items(conn, None, limit=1000)
               if i["queue"] != "orphan")
    assert maintain(conn, load_config(), now="2026-02-01T10:00:00.000Z")["changes"] == 0


def test_traces_older_than_180_days_are_compacted_into_their_summary(conn):
    import json

    old = node(conn, "Ran the VAT export", kind="execution_trace", at="2025-05-01T09:00:00.000Z")
    new = node(conn, "Ran the VAT export again", kind="execution_trace", at="2026-01-01T09:00:00.000Z")
    r = maintain(conn, load_config(), now="2026-01-10T09:00:00.000Z")
    assert r["trace_compacted_count"] == 1 and not active(conn, old) and active(conn, new)
    summary = json.loads(msql.state_get(conn, "trace_summary"))
    assert sum(s["count"] for s in summary.values()) == 1
    assert maintain(conn, load_config(), now="2026-01-10T10:00:00.000Z")["trace_compacted_count"] == 0
