"""inspect_knowledge (seed 003 §41.2): every query type on Anna's graph, the result shape, clear refusals, and that
inspection changes nothing in the vault (§41: it never writes, never triggers extraction)."""

from __future__ import annotations

import hashlib
import json

import pytest

from kenning.config.loader import load_config
from kenning.retrieve.inspect import QUERY_TYPES, InspectError, inspect_knowledge
from kenning.store.connection import open_store

from knowledge.delivery_fixtures import NOW


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def ro(anna):
    path, ids, config = anna
    c = open_store(path, readonly=True)
    yield c, ids, config
    c.close()


def test_every_type_answers_in_the_seed_shape(ro):
    c, ids, config = ro
    for qt in QUERY_TYPES:
        res = inspect_knowledge(c, config, qt, now=NOW, node="Anna", query="Lisbon nurse")
        assert set(res) == {"query_type", "result_summary", "result_data", "suggested_actions"}
        assert res["query_type"] == qt and res["result_summary"]


def test_node_detail_and_confidence_breakdown_show_alpha_beta(ro):
    c, ids, config = ro
    d = inspect_knowledge(c, config, "node_detail", now=NOW, node="Annie")   # an alias resolves
    assert d["result_data"]["id"] == ids["Anna"]
    b = inspect_knowledge(c, config, "confidence_breakdown", now=NOW, node="Anna")["result_data"]["breakdown"]
    assert {"alpha", "beta", "beta_mean", "decay", "caps_applied", "confidence", "conflict_score"} <= set(b)
    assert b["beta_mean"] == pytest.approx(b["alpha"] / (b["alpha"] + b["beta"]))


def test_provenance_chain_verifies_entries_and_connected_nodes_lists_edges(ro):
    c, ids, config = ro
    p = inspect_knowledge(c, config, "provenance_chain", now=NOW, node="Anna")["result_data"]
    assert len(p["entries"]) == 4 and [e["created_at"] for e in p["entries"]] == sorted(
        e["created_at"] for e in p["entries"])
    assert all("verification" in e for e in p["entries"])
    cn = inspect_knowledge(c, config, "connected_nodes", now=NOW, node="Anna")["result_data"]
    rels = {(i["relation_type"], i["canonical_name"], i["direction"]) for i in cn["connected"]}
    assert ("domain_lives_in", "Lisbon", "out") in rels and ("domain_has_sister", "me", "in") in rels
    capped = inspect_knowledge(c, config, "connected_nodes", now=NOW, node="Anna", limit=2)["result_data"]
    assert len(capped["connected"]) == 2 and capped["truncated"]


def test_tag_explanation_names_the_conflict_score_and_threshold(ro):
    c, ids, config = ro
    res = inspect_knowledge(c, config, "tag_explanation", now=NOW, node="Marco")
    tags = res["result_data"]["tags"]
    assert tags and tags[0]["tag"] in ("caution", "distinguish")
    assert "conflict score" in tags[0]["because"] and f"[{tags[0]['tag']}]" in res["result_summary"]
    calm = inspect_knowledge(c, config, "tag_explanation", now=NOW, node="Lisbon")
    assert not [t for t in calm["result_data"]["tags"] if t["tag"] != "stale"]


def test_stale_tag_from_age_beyond_the_half_life(ro):
    c, ids, config = ro
    res = inspect_knowledge(c, config, "tag_explanation", now="2031-01-01T00:00:00.000Z", node="Anna")
    assert any(t["tag"] == "stale" and "half-life" in t["because"] for t in res["result_data"]["tags"])


def test_search_knowledge_by_alias_and_words(ro):
    c, ids, config = ro
    by_alias = inspect_knowledge(c, config, "search_knowledge", now=NOW, query="Annie")["result_data"]["hits"]
    assert by_alias[0]["node_id"] == ids["Anna"] and by_alias[0]["matched_by"] == "name_or_alias"
    words = inspect_knowledge(c, config, "search_knowledge", now=NOW, query='nurse "AND" (')["result_data"]
    assert ids["Anna"] in [h["node_id"] for h in words["hits"]]


def test_brief_comes_from_the_knowledge_brief(ro):
    c, ids, config = ro
    res = inspect_knowledge(c, config, "entity_knowledge_brief", now=NOW, node="Anna")
    assert res["result_summary"].startswith("Anna") and 200 <= res["result_data"]["tokens"] <= 300


def test_refusals_are_clear(ro):
    c, ids, config = ro
    with pytest.raises(InspectError, match="unknown query type"):
        inspect_knowledge(c, config, "everything", now=NOW, node="Anna")
    with pytest.raises(InspectError, match="injection turns"):
        inspect_knowledge(c, config, "injection_history", now=NOW)
    with pytest.raises(InspectError, match="needs a node"):
        inspect_knowledge(c, config, "node_detail", now=NOW)
    with pytest.raises(ValueError, match="no node"):
        inspect_knowledge(c, config, "node_detail", now=NOW, node="Nobody at all")


def test_inspection_changes_nothing(anna):
    path, ids, _ = anna
    config = load_config()
    before = _digest(path)
    c = open_store(path)                       # even on a writable connection
    commits = c.execute("SELECT count(*) FROM knowledge_commits").fetchone()[0]
    for qt in QUERY_TYPES:
        inspect_knowledge(c, config, qt, now=NOW, node="Anna", query="Anna")
    assert c.execute("SELECT count(*) FROM knowledge_commits").fetchone()[0] == commits
    assert c.execute("SELECT total_changes()").fetchone()[0] == 0
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    assert _digest(path) == before


def test_cli_inspect(anna, cli):
    path, ids, _ = anna
    p = cli("inspect", "confidence_breakdown", "Anna", "--as-of", NOW, "--json", db=path)
    data = json.loads(p.stdout)
    assert data["query_type"] == "confidence_breakdown" and data["result_data"]["node"]["id"] == ids["Anna"]
    p = cli("inspect", "tag_explanation", "Marco", "--as-of", NOW, db=path)
    assert "conflict score" in p.stdout
    bad = cli("inspect", "node_detail", "Nobody at all", db=path, check=False)
    assert bad.returncode == 2 and "no node" in bad.stdout + bad.stderr


def test_vault_api(anna):
    from kenning.api import Vault

    path, ids, _ = anna
    with Vault.open(path, readonly=True) as v:
        assert v.inspect("node_detail", node="Anna", now=NOW)["result_data"]["id"] == ids["Anna"]
        assert v.sql("SELECT count(*) FROM nodes WHERE canonical_name = 'Anna'")["rows"] == [[1]]
        assert v.digest(now=NOW)["content"]["work_context_sections"][0]["approaching_deadlines"]


def test_search_knowledge_with_node_vectors_reads_only(anna):
    from kenning.knowledge.vectors import embed_nodes
    from kenning.pipeline.clock import Clock

    path, ids, _ = anna
    config = load_config(overrides={"embeddings": {"backend": "hash"},
                                    "knowledge": {"store": {"event_log": "off"}}})
    c = open_store(path)
    assert embed_nodes(c, config, Clock(NOW))["node_vectors_written"] > 5
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _digest(path)
    res = inspect_knowledge(c, config, "search_knowledge", now=NOW, query="a nurse in Lisbon, your sister",
                            vectors=True)["result_data"]["hits"]
    assert any("vector_score" in h for h in res) and ids["Anna"] in [h["node_id"] for h in res]
    plain = inspect_knowledge(c, config, "search_knowledge", now=NOW, query="a nurse in Lisbon, your sister")
    assert not any("vector_score" in h for h in plain["result_data"]["hits"])      # off by default
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    assert _digest(path) == before
