"""The Graph Query API (seed 003 §43): every kind on a small store, the result shape, refusals, and truncation past a
ceiling (a tiny ceiling injected through config)."""

from __future__ import annotations

import json

import pytest

from kenning.config import load_config
from kenning.knowledge.errors import NodeNotFound
from kenning.retrieve.graph_query import KINDS, QueryError, run_query
from kenning.store.connection import open_store

from .delivery_fixtures import NOW, rich_graph


@pytest.fixture
def store(tmp_path):
    c = open_store(tmp_path / "v.db")
    g = rich_graph(c)
    yield c, g
    c.close()


def q(store, kind, **args):
    c, g = store
    return run_query(c, g.config, kind, now=NOW, **args)


def tiny(kind: str):
    return load_config(overrides={"knowledge": {"store": {"event_log": "off"}, "delivery": {"query_ceilings": {
        kind: {"p50_ms": 0.000001, "p95_ms": 0.000001, "ceiling_ms": 0.000001}}}}})


def test_result_shape(store):
    d = q(store, "entity_lookup", lookup="exact_name", value="anna").as_dict()
    assert set(d) == {"query_kind", "results", "latency_ms", "truncated", "truncation_reason"}
    assert d["query_kind"] == "entity_lookup" and d["latency_ms"] >= 0 and d["truncated"] is False


def test_entity_lookup_by_id_alias_and_exact_name(store):
    _c, g = store
    anna = g.ids["Anna"]
    assert [r["id"] for r in q(store, "entity_lookup", lookup="id", value=anna).results] == [anna]
    assert [r["name"] for r in q(store, "entity_lookup", lookup="alias", value="ANNIE").results] == ["Anna"]
    assert [r["id"] for r in q(store, "entity_lookup", lookup="exact_name", value="anna").results] == [anna]
    assert q(store, "entity_lookup", lookup="alias", value="nobody").results == []
    with pytest.raises(QueryError, match="lookup must be one of id, alias, exact_name"):
        q(store, "entity_lookup", lookup="fuzzy", value="x")


def test_entity_neighbors_depth_1_and_2(store):
    one = q(store, "entity_neighbors", entity_id="Anna", depth=1)
    names = {r["name"]: r for r in one.results}
    assert names["Lisbon"]["relation"] == "domain_lives_in" and names["Lisbon"]["direction"] == "out"
    assert names["me"]["direction"] == "in" and all(r["depth"] == 1 for r in one.results)
    two = q(store, "entity_neighbors", entity_id="me", depth=2)
    deeper = [r for r in two.results if r["depth"] == 2]
    assert {r["name"] for r in deeper} >= {"Lisbon", "Marco"} and all(r["via"] for r in deeper)
    only = q(store, "entity_neighbors", entity_id="Anna", edge_types=["domain_lives_in"])
    assert [r["name"] for r in only.results] == ["Lisbon"]
    cut = q(store, "entity_neighbors", entity_id="Anna", max_results=2)
    assert len(cut.results) == 2 and cut.truncated and cut.truncation_reason == "max_results 2"
    with pytest.raises(QueryError, match="depth must be 1 or 2"):
        q(store, "entity_neighbors", entity_id="Anna", depth=3)


def test_entity_cards_compact_full_and_the_limit_of_ten(store):
    _c, g = store
    compact = q(store, "entity_cards", entity_ids=[g.ids["Anna"], "Lisbon"])
    assert [r["name"] for r in compact.results] == ["Anna", "Lisbon"] and "payload" not in compact.results[0]
    full = q(store, "entity_cards", entity_ids="Anna", card_tier="full").results[0]
    assert full["provenance"]["entries"] == 4 and "annie" in full["aliases"] and full["edges"]
    assert 0 <= full["confidence_now"] <= 1
    eleven = q(store, "entity_cards", entity_ids=["Anna"] * 11)
    assert len(eleven.results) == 10 and eleven.truncated and "at most 10" in eleven.truncation_reason


def test_procedure_bundle(store):
    res = q(store, "procedure_bundle", composite_id="Book the Lisbon trip")
    assert res.results[0]["role"] == "composite" and res.results[0]["steps"] == ["Compare flights to Lisbon"]
    with pytest.raises(QueryError, match="app_entity_id or composite_id"):
        q(store, "procedure_bundle")


def test_goal_context_within_max_tokens(store):
    res = q(store, "goal_context", entity_id="Anna")
    assert [r["name"] for r in res.results][0] == "Hike the Rota Vicentina with Anna"
    assert sum(r["tokens"] for r in res.results) <= 100
    small = q(store, "goal_context", entity_id="Anna", max_tokens=12)
    assert sum(r["tokens"] for r in small.results) <= 12 and small.truncated


def test_knowledge_brief_kind(store):
    (b,) = q(store, "knowledge_brief", entity_id="Anna").results
    assert b["node"]["name"] == "Anna" and 200 <= b["tokens"] <= 300


def test_related_threads_are_the_conversations_the_provenance_cites(tmp_path):
    from kenning.api import Vault

    from tests.conftest import write_export

    export = write_export(tmp_path / "c.json", [("user", "My sister Anna lives in Lisbon."),
                                                ("assistant", "Lisbon is lovely.")], title="Family chat")
    with Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([export], as_of="2024-01-01T00:00:00Z")
        res = v.query("related_threads", entity_id="Anna", now="2024-01-02")
    assert [r["title"] for r in res.results] == ["Family chat"] and res.results[0]["cited_messages"] >= 1


def test_entity_scoped_search_stays_in_the_neighbourhood(store):
    c, g = store
    g.person("Lisbon Marathon Club")  # matches "Lisbon" but is not near Anna
    res = q(store, "entity_scoped_search", entity_id="Anna", query="Lisbon")
    by_name = {r["name"]: r for r in res.results}
    assert set(by_name) == {"Lisbon", "Book the Lisbon trip", "Anna"}  # Anna: "a nurse in Lisbon"
    assert by_name["Lisbon"]["relation"] == "domain_lives_in" and by_name["Anna"]["relation_label"] == "itself"
    with pytest.raises(QueryError, match="no searchable words"):
        q(store, "entity_scoped_search", entity_id="Anna", query="the a")


def test_refusals_name_what_is_accepted(store):
    with pytest.raises(QueryError, match="unknown query kind 'nope'; kinds: entity_lookup"):
        q(store, "nope")
    with pytest.raises(QueryError, match="entity_neighbors takes entity_id, depth, edge_types, max_results; not "
                                         "colour"):
        q(store, "entity_neighbors", entity_id="Anna", colour="red")
    with pytest.raises(QueryError, match="goal_context needs entity_id"):
        q(store, "goal_context")
    with pytest.raises(NodeNotFound):
        q(store, "goal_context", entity_id="Nobody")


@pytest.mark.parametrize("kind,args", [
    ("entity_neighbors", {"entity_id": "me", "depth": 2}),
    ("entity_cards", {"entity_ids": ["Anna", "Lisbon", "Porto"]}),
    ("procedure_bundle", {"composite_id": "Book the Lisbon trip"}),
    ("knowledge_brief", {"entity_id": "Anna"}),
    ("entity_scoped_search", {"entity_id": "Anna", "query": "Lisbon"}),
])
def test_past_the_ceiling_a_query_returns_what_it_has_truncated(store, kind, args):
    c, _g = store
    key = "entity_neighbors_depth2" if kind == "entity_neighbors" else kind
    res = run_query(c, tiny(key), kind, now=NOW, **args)
    assert res.truncated and res.truncation_reason and "ceiling" in res.truncation_reason
    assert res.latency_ms < 1000


def test_every_kind_has_a_ceiling_in_config():
    ceilings = load_config().knowledge.delivery.query_ceilings
    for kind in KINDS:
        keys = ["entity_neighbors_depth1", "entity_neighbors_depth2"] if kind == "entity_neighbors" else [kind]
        for k in keys:
            assert ceilings[k].p50_ms <= ceilings[k].p95_ms <= ceilings[k].ceiling_ms
    assert (ceilings["entity_lookup"].p50_ms, ceilings["entity_lookup"].p95_ms,
            ceilings["entity_lookup"].ceiling_ms) == (1, 3, 10)  # §43.2
    assert ceilings["entity_neighbors_depth2"].ceiling_ms == 50 and ceilings["goal_context"].ceiling_ms == 15


def test_query_cli(tmp_path, cli):
    db = tmp_path / "v.db"
    c = open_store(db)
    rich_graph(c)
    c.close()
    d = json.loads(cli("query", "entity_neighbors", "Anna", "--depth", "1", "--as-of", NOW, "--json", db=db).stdout)
    assert d["query_kind"] == "entity_neighbors" and "Lisbon" in [r["name"] for r in d["results"]]
    text = cli("query", "entity_lookup", "annie", "--lookup", "alias", db=db).stdout
    assert "Anna" in text and "entity_lookup: 1 result(s)" in text
    bad = cli("query", "entity_neighbors", "Anna", "--depth", "3", db=db, check=False)
    assert bad.returncode == 2 and "depth must be 1 or 2" in bad.stdout + bad.stderr


def test_payload_links_follow_the_writer(store):
    """goal_context reads node_payload_refs (kept by triggers): a goal relinked through the writer moves with it."""
    from kenning.knowledge.ops import KnowledgeWrite, UpdateNode

    c, g = store
    goal_id = g.ids["Help Anna move to Porto"]
    g.writer().write(KnowledgeWrite(source_event="t", change_summary="relink", ops=[
        UpdateNode(id=goal_id, payload_set={"linked_entity_ids": [g.ids["Marco"]]})]))
    assert "Help Anna move to Porto" not in [r["name"] for r in q(store, "goal_context", entity_id="Anna").results]
    assert [r["name"] for r in q(store, "goal_context", entity_id="Marco").results] == ["Help Anna move to Porto"]
