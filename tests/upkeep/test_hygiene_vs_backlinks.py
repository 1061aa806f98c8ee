"""§42A.6 hygiene against the back-link pipeline (G60): an edge hygiene demoted comes back only on new evidence, in
whichever order the two run."""

from __future__ import annotations

from kenning.store import upkeep as usql
from kenning.upkeep.maintain.dag import maintain
from kenning.upkeep.bundles import mention_id

LATER = "2026-06-01T09:00:00.000Z"  # the sample speaks in 2024: by now every promoted edge has decayed


def _edge(conn, e):
    return usql.current_edge(conn, e["source_id"], e["relation_type"], e["target_id"])


def _new_evidence(conn, bundle_id: str, when: str) -> None:
    """A further message supporting the bundle (as Stage 2 would record it)."""
    m = usql.mentions_of_bundles(conn, [bundle_id])[0]
    obs = "msg-new-evidence-" + bundle_id[:8]
    new = {k: m[k] for k in usql.MENTION_COLS}
    new.update(observation_id=obs, occurred_at=when, work_context_id="conv-new-evidence",
               mention_id=mention_id(obs, m["source_node_id"], m["normalized_mention"], m["start_offset"],
                                     m["end_offset"], m["span_class"]),
               group_id=mention_id(obs, m["source_node_id"], "", 0, 0, "g"), parent_mention_id=None)
    assert usql.insert_mentions(conn, [new]) == 1


def test_a_demoted_edge_stays_demoted_until_new_evidence_then_comes_back(vault):
    conn = vault.conn
    (e, *_) = usql.promoted_edges(conn)
    bid = e["payload"]["evidence_bundle_id"]
    support = usql.get_bundle(conn, bid)["support_count"]
    r = maintain(conn, vault.config, now=LATER)
    assert r["demoted_edge_count"] >= 1
    d = _edge(conn, e)
    assert d["lifecycle_state"] == "archived" and d["payload"]["demoted_support_count"] == support
    assert usql.get_bundle(conn, bid)["promotion_state"] == "candidate_relation"

    # hygiene first, back-links after: the bundle's score did not decay, but no new evidence → no re-promotion
    res = vault.backlinks(as_of=LATER)
    assert res.counts.get("held_after_hygiene", 0) >= 1
    assert res.counts.get("edges_updated", 0) == 0 and res.counts.get("edges_promoted", 0) == 0
    assert _edge(conn, e) == d

    # new evidence, back-links first, hygiene after: promoted again, and the fresh support keeps it up tonight
    _new_evidence(conn, bid, LATER)
    res = vault.backlinks(as_of=LATER)
    back = _edge(conn, e)
    assert res.counts["edges_updated"] == 1
    assert back["lifecycle_state"] == "observed" and "demoted_at" not in back["payload"]
    assert back["payload"]["support_count"] == support + 1
    assert usql.get_bundle(conn, bid)["promotion_state"] == "reinforced_relation"
    r = maintain(conn, vault.config, now=LATER)
    assert _edge(conn, e)["lifecycle_state"] == "observed"
    # and a further back-link run on the same evidence changes nothing
    assert vault.backlinks(as_of=LATER).counts.get("edges_updated", 0) == 0
