"""§42 cleanup: observed 14 d / suggested 30 d archive (a person's confirmation exempts), near-duplicates → merge
queue (shared alias, typo, name part — never nicknames), contradictions, orphans, stale procedures; the receipt's
*_count fields; a second run on an unchanged vault changes nothing."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.knowledge.ops import Feedback, KnowledgeWrite, ProvenanceIn, UpdateNode
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import open_store
from kenning.upkeep.maintain.dag import CHANGE_FIELDS, maintain
from tests.upkeep_maintain.helpers import T0, active, edge, node, writer


@pytest.fixture
def conn(tmp_path):
    c = open_store(tmp_path / "v.db")
    yield c
    c.close()


def test_observed_14_days_and_suggested_30_days_are_archived_unless_a_person_vouched(conn):
    cfg = load_config()
    young = node(conn, "Young Observed", at="2026-01-10T09:00:00.000Z")
    old = node(conn, "Old Observed")
    sugg = node(conn, "Suggested Sam", state="suggested")
    vouched = node(conn, "Vouched Vera")
    writer(conn).write(KnowledgeWrite(source_event="t", change_summary="the person confirms, then demotes", ops=[
        Feedback(id=vouched, action="confirm"), UpdateNode(id=vouched, lifecycle_state="observed", by_user=True)]))
    # now = T0 + 20 days: observed ≥ 14 d archive; suggested < 30 d stays
    r = maintain(conn, cfg, now="2026-01-21T09:00:00.000Z")
    assert not active(conn, old) and active(conn, young) and active(conn, sugg) and active(conn, vouched)
    assert r["archived_node_count"] == 1 and r["info"]["user_verified_exempt"] == 1
    r = maintain(conn, cfg, now="2026-02-01T09:00:00.000Z")  # 31 days
    assert not active(conn, sugg) and not active(conn, young) and active(conn, vouched)
    assert r["archived_node_count"] == 2


def test_near_duplicates_contradictions_orphans_and_stale_procedures_are_queued_once(conn):
    cfg = load_config()
    robert = node(conn, "Robert Smith", state="confirmed", at="2026-01-20T09:00:00.000Z")
    typo = node(conn, "Robret Smith", state="confirmed", at="2026-01-20T09:00:00.000Z")
    smith = node(conn, "Smith", state="confirmed", at="2026-01-20T09:00:00.000Z")  # two Smiths: ambiguous
    okafor = node(conn, "Okafor", state="confirmed", at="2026-01-20T09:00:00.000Z")
    chidi = node(conn, "Chidi Okafor", state="confirmed", at="2026-01-20T09:00:00.000Z")
    bob = node(conn, "Bob", state="confirmed", at="2026-01-20T09:00:00.000Z")  # a nickname: no evidence
    acme = node(conn, "Acme", state="confirmed", at="2026-01-20T09:00:00.000Z")
    edge(conn, robert, "affiliated_with", acme)
    edge(conn, typo, "affiliated_with", acme)  # shared context: both work at Acme
    edge(conn, okafor, "affiliated_with", acme)
    edge(conn, chidi, "affiliated_with", acme)
    lonely = node(conn, "Robert Smit", state="confirmed", at="2026-01-20T09:00:00.000Z")  # look-alike, no context
    disputed = node(conn, "Disputed Dan", state="confirmed", at="2026-01-20T09:00:00.000Z", provenance=(
        ProvenanceIn(entry_type="conversation", source_ref="a", evidence_event="learned_from_chat"),
        ProvenanceIn(entry_type="conversation", source_ref="b", evidence_event="learned_from_chat",
                     contradicts=True)))
    proc = node(conn, "File the quarterly VAT return", kind="procedure", at="2025-06-01T09:00:00.000Z")
    now = "2026-01-25T09:00:00.000Z"
    r = maintain(conn, cfg, now=now)
    merge = {tuple(i["node_ids"]): i["detail"]["evidence"] for i in msql.queue_items(conn, "merge")}
    assert merge[tuple(sorted((robert, typo)))] == "typo"
    assert merge[tuple(sorted((okafor, chidi)))] == "name_part"
    assert not any(smith in k for k in merge)
    assert not any(lonely in k for k in merge)
    assert not any(bob in k for k in merge)
    assert [i["node_ids"] for i in msql.queue_items(conn, "contradiction")] == [[disputed]]
    orphans = {i["node_ids"][0] for i in msql.queue_items(conn, "orphan")}
    assert robert not in orphans and acme not in orphans and bob in orphans
    assert [i["node_ids"] for i in msql.queue_items(conn, "stale_procedure")] == [[proc]]
    assert r["merge_queue_count"] == len(merge) and r["contradiction_queue_count"] == 1
    assert r["orphan_count"] == len(orphans) and r["stale_procedure_count"] == 1
    assert set(CHANGE_FIELDS) <= set(r) and r["changes"] == sum(r[f] for f in CHANGE_FIELDS)
    again = maintain(conn, cfg, now="2026-01-25T10:00:00.000Z")
    assert again["changes"] == 0 and all(again[f] == 0 for f in CHANGE_FIELDS)
