"""§42 semantic folding: without a model only exact-alias pairs fold (merge math, NodeMergeMap, rewired edges);
the seed's blocks (below confirmed, other work context, open contradiction, a person's "never fold", concepts
24+ months apart without a model); with a model (the real OpenAI-compatible test server) the verdict
FOLD/RELATED/CONFLICT decides, the call is logged, and at most max_pairs_per_night pairs are asked."""

from __future__ import annotations

import json

import pytest

from kenning.config import load_config
from kenning.knowledge.ops import ProvenanceIn
from kenning.llm.testserver import Answer
from kenning.store import knowledge as ksql
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import open_store
from kenning.upkeep.maintain.dag import maintain
from tests.upkeep_maintain.helpers import T0, active, edge, node

NOW = "2026-01-05T09:00:00.000Z"


@pytest.fixture
def conn(tmp_path):
    c = open_store(tmp_path / "v.db")
    yield c
    c.close()


def test_exact_alias_pair_folds_without_a_model_with_the_merge_math(conn):
    rob = node(conn, "Robert Smith", state="confirmed", aliases=("Bob",))
    bob = node(conn, "Bob", state="confirmed", evidence=("confirmed_by_user", "confirmed_by_user"))
    acme = node(conn, "Acme", state="confirmed")
    edge(conn, bob, "affiliated_with", acme, confidence=0.7)
    a = {n: ksql.get_node(conn, n) for n in (rob, bob)}
    r = maintain(conn, load_config(), now=NOW)
    assert r["folded_pair_count"] == 1 and r["merged_node_count"] == 1
    # survivor: both confirmed, Bob has more evidence (α) → Bob stays, Robert Smith folds into it
    surv, old = ksql.get_node(conn, bob), ksql.get_node(conn, rob)
    assert surv["alpha"] == pytest.approx(max(a[rob]["alpha"], a[bob]["alpha"]) + 0.5)
    assert surv["beta"] == pytest.approx(max(a[rob]["beta"], a[bob]["beta"]))
    assert old["lifecycle_state"] == "merged" and not old["is_active"]
    (m,) = msql.merge_map(conn)
    assert (m["old_node_id"], m["new_node_id"], m["merged_at"]) == (rob, bob, NOW)
    assert ksql.get_commit(conn, m["merge_commit_id"])["source_event"] == "maintain:folding"
    d = msql.fold_decision(conn, *sorted((rob, bob)))
    assert d["verdict"] == "FOLD" and d["reviewed_by"] == "rule"
    assert msql.resolve_merged(conn, rob) == bob
    assert {a["normalized_alias"] for a in ksql.get_aliases(conn, bob)} >= {"bob", "robert smith"}
    assert maintain(conn, load_config(), now=NOW)["changes"] == 0


def test_without_a_model_typo_pairs_only_wait_in_the_merge_queue(conn):
    a = node(conn, "Robert Smith", state="confirmed", seen=(("t1", 0, T0),))
    b = node(conn, "Robret Smith", state="confirmed", seen=(("t1", 1, T0),))  # same thread: shared context
    r = maintain(conn, load_config(), now=NOW)
    assert r["folded_pair_count"] == 0 and active(conn, a) and active(conn, b)
    assert [i["node_ids"] for i in msql.queue_items(conn, "merge")] == [sorted((a, b))]


@pytest.mark.parametrize("case", ["observed", "context", "contradiction", "never_fold", "dismissed", "owner"])
def test_the_seeds_blocks_keep_an_exact_alias_pair_apart(conn, case):
    payload = {"entity_type": "person", "description": "x"}
    a = node(conn, "Robert Smith", state="observed" if case == "observed" else "confirmed", aliases=("Bob",),
             payload={**payload, "work_context_id": "w1"} if case == "context" else
             {**payload, "never_fold": True} if case == "never_fold" else
             {**payload, "is_vault_owner": True} if case == "owner" else payload)
    b = node(conn, "Bob", state="confirmed", payload=payload, provenance=(
        ProvenanceIn(entry_type="conversation", source_ref="p", evidence_event="learned_from_chat"),
        ProvenanceIn(entry_type="conversation", source_ref="q", evidence_event="learned_from_chat",
                     contradicts=True)) if case == "contradiction" else ())
    if case == "dismissed":  # a person dismissed this merge earlier: never fold the pair
        from kenning.sources.ids import IdFactory
        item = IdFactory(load_config().ids.id_namespace).make("maintain_queue", "merge", *sorted((a, b)))
        msql.queue_add(conn, {"item_id": item, "queue": "merge", "node_ids": sorted((a, b)), "reason": "x",
                              "first_seen_at": T0})
        conn.execute("UPDATE maintain_queue SET status='dismissed' WHERE item_id=?", (item,))
    r = maintain(conn, load_config(), now=NOW)
    assert r["folded_pair_count"] == 0 and active(conn, a) and active(conn, b)
    assert r["info"]["fold_blocked_count"] == 1


def test_concepts_far_apart_need_a_model_check(conn):
    def concept(name, when, **kw):
        return node(conn, name, kind="domain_concept", state="confirmed", provenance=(
            ProvenanceIn(entry_type="document", source_ref=name, created_at=when, authority_type="personal"),), **kw)
    a = concept("Promissory estoppel", "2022-01-01T00:00:00.000Z", aliases=("estoppel",))
    b = concept("Estoppel", "2025-06-01T00:00:00.000Z")
    r = maintain(conn, load_config(), now=NOW)
    assert r["folded_pair_count"] == 0 and active(conn, a) and active(conn, b)


def _verdicts(mapping: dict[str, dict]):
    """A responder answering by the pair's first name."""
    def respond(body: dict) -> dict:
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        for name, answer in mapping.items():
            if f'"name": "{name}"' in user:
                return answer
        return {"verdict": "RELATED", "confidence": 0.5}
    return respond


def test_with_a_model_the_verdict_decides_and_every_call_is_logged(conn, llm_server, llm_config):
    config = llm_config(llm_server)
    rob, typo, anna, anne, kim, kin = (
        node(conn, name, state="confirmed", seen=((f"t{i // 2}", i % 2, T0),))  # each pair shares a thread
        for i, name in enumerate(("Robert Smith", "Robret Smith", "Annika Lindqvist", "Anika Lindqvist",
                                  "Kim Nakamura", "Kin Nakamura")))
    answers = {"Robert Smith": {"verdict": "FOLD", "canonical_name": "Robert Smith", "confidence": 0.95},
               "Annika Lindqvist": {"verdict": "RELATED", "confidence": 0.8},
               "Kim Nakamura": {"verdict": "CONFLICT", "confidence": 0.7}}
    llm_server.script_chat(*[Answer(content=_verdicts(answers)) for _ in range(3)])
    r = maintain(conn, config, now=NOW, llm_mode="live", llm_explicit=True)
    assert (r["folded_pair_count"], r["fold_related_count"], r["fold_conflict_count"]) == (1, 1, 1)
    assert not active(conn, typo) and ksql.get_node(conn, rob)["canonical_name"] == "Robert Smith"
    assert active(conn, anna) and active(conn, anne) and active(conn, kim) and active(conn, kin)
    assert msql.fold_decision(conn, *sorted((anna, anne)))["reviewed_by"] == "llm"
    assert msql.fold_decision(conn, *sorted((rob, typo)))["prompt_version"].startswith("fold_verdict@v1")
    assert [i["node_ids"] for i in msql.queue_items(conn, "contradiction")] == [sorted((kim, kin))]
    assert len(llm_server.chat_requests) == 3
    sent = [m for m in llm_server.chat_requests[0]["body"]["messages"] if m["role"] == "user"][-1]["content"]
    assert '"kind": "world_entity"' in sent and "typo" in sent
    calls = conn.execute("SELECT count(*) FROM llm_extraction_calls").fetchone()[0]
    assert calls == 3
    # decided pairs are never asked again
    again = maintain(conn, config, now=NOW, llm_mode="live", llm_explicit=True)
    assert again["changes"] == 0 and len(llm_server.chat_requests) == 3


def test_at_most_max_pairs_per_night_get_a_verdict(conn):
    config = load_config(overrides={"maintain": {"folding": {"max_pairs_per_night": 2}}})
    for i in range(4):
        node(conn, f"Person Number {i}", state="confirmed", aliases=(f"p{i}",))
        node(conn, f"P{i}", state="confirmed")
    r = maintain(conn, config, now=NOW)
    assert r["folded_pair_count"] == 2
    assert maintain(conn, config, now="2026-01-06T09:00:00.000Z")["folded_pair_count"] == 2


def test_the_event_log_replays_merges_and_demotions(tmp_path):
    from kenning.knowledge import eventlog

    c = open_store(tmp_path / "v.db")
    rob = node(c, "Robert Smith", state="confirmed", aliases=("Bob",))
    bob = node(c, "Bob", state="confirmed")
    acme = node(c, "Acme", state="confirmed")
    edge(c, rob, "part_of", acme, confidence=0.3, payload={"learned_by": "backlink_pipeline_v2"})
    r = maintain(c, load_config(), now="2026-06-01T09:00:00.000Z")
    assert r["merged_node_count"] == 1 and r["demoted_edge_count"] == 1
    before = ksql.dump(c)
    other = open_store(tmp_path / "w.db")
    eventlog.rebuild(other, tmp_path / "v.graph_events.jsonl")
    assert ksql.dump(other) == before
    c.close(), other.close()
    del bob


def test_with_a_model_embedding_neighbours_of_one_kind_are_candidates(conn, llm_server, llm_config):
    """§42 [EMB]: two nodes no rule links (same words, other order) are close in the node vector space (hash
    embedder, distance 0.07 — under a threshold of 0.08 configured for people here) and get a verdict; a node of
    another kind with nearly the same text does not."""
    from kenning.knowledge.vectors import embed_nodes
    from kenning.pipeline.clock import Clock

    config = llm_config(llm_server, extra={"maintain": {"folding": {"cosine_distance": {
        "world_entity": 0.08, "domain_concept": 0.08, "memory_directive": 0.10, "procedure": 0.06,
        "standing_procedure": 0.06}}}})
    payload = {"entity_type": "person", "description": "runs the Lisbon office"}
    a = node(conn, "Kate Moreau", state="confirmed", payload=payload)
    b = node(conn, "Moreau Kate", state="confirmed", payload=payload)
    g = node(conn, "Kate Moreau office", kind="goal", state="confirmed")
    embed_nodes(conn, config, Clock(T0))
    llm_server.script_chat(Answer.json({"verdict": "FOLD", "canonical_name": "Kate Moreau", "confidence": 0.9}))
    r = maintain(conn, config, now=NOW, llm_mode="live", llm_explicit=True)
    assert r["folded_pair_count"] == 1 and len(llm_server.chat_requests) == 1
    sent = [m for m in llm_server.chat_requests[0]["body"]["messages"] if m["role"] == "user"][-1]["content"]
    assert "cosine distance" in sent
    assert active(conn, g) and [active(conn, a), active(conn, b)].count(True) == 1
    assert msql.fold_decision(conn, *sorted((a, b)))["reviewed_by"] == "llm"
