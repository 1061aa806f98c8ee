"""The knowledge brief (seed 003 §41.4): 200–300 tokens on a rich node, every section it has, deterministic, stale
items named, and the CLI."""

from __future__ import annotations

import json
import math

import pytest

from kenning.retrieve.brief import knowledge_brief
from kenning.store.connection import open_store

from .delivery_fixtures import NOW, Graph, rich_graph


@pytest.fixture
def store(tmp_path):
    c = open_store(tmp_path / "v.db")
    g = rich_graph(c)
    yield c, g
    c.close()


def test_a_rich_node_gets_200_to_300_tokens_with_every_section(store):
    c, g = store
    b = knowledge_brief(c, g.config, "Anna", now=NOW)
    assert 200 <= b.tokens <= 300 and b.tokens == math.ceil(len(b.text) / 3.5)
    assert set(b.sections) >= {"related", "goals", "obligations", "concepts", "procedures", "activity"}
    assert "Lisbon (lives in)" in b.sections["related"] and "me (← has sister)" in b.sections["related"]
    assert b.sections["goals"][0] == "Hike the Rota Vicentina with Anna"
    assert b.sections["obligations"] == ["Send Anna the hiking maps (due 2026-03-15, pending)"]
    assert b.sections["concepts"] == ["night shift"] and b.sections["procedures"] == ["Book the Lisbon trip"]
    assert b.text.startswith("Anna — person, your sister, a nurse in Lisbon. Confidence ")
    assert "“Anna and I want to hike the Rota Vicentina together.”" in b.text  # the newest source first


def test_the_brief_is_deterministic(tmp_path, store):
    c, g = store
    first = knowledge_brief(c, g.config, "Anna", now=NOW)
    assert knowledge_brief(c, g.config, "Anna", now=NOW).as_dict() == first.as_dict()
    other = open_store(tmp_path / "other.db")
    g2 = rich_graph(other)
    assert knowledge_brief(other, g2.config, "Anna", now=NOW).text == first.text
    other.close()


def test_it_never_exceeds_the_maximum(store):
    c, g = store
    for i in range(40):
        g.person(f"Cousin number {i} with a rather long name")
        g.edge("Anna", "domain_knows", f"Cousin number {i} with a rather long name")
    b = knowledge_brief(c, g.config, "Anna", now=NOW)
    assert 200 <= b.tokens <= 300
    assert b.sections["goals"] and b.sections["activity"]  # the round-robin keeps every section in


def test_stale_items_and_history(tmp_path):
    c = open_store(tmp_path / "v.db")
    g = Graph(c)
    g.person("Anna", at="2025-01-01T00:00:00.000Z")
    g.node("Porto", payload={"entity_type": "place"}, at="2025-01-01T00:00:00.000Z")
    g.node("Lisbon", payload={"entity_type": "place"}, at="2026-03-01T00:00:00.000Z")
    g.edge("Anna", "domain_lives_in", "Porto", at="2025-01-01T00:00:00.000Z")
    g.edge("Anna", "domain_lives_in", "Lisbon", at="2026-03-01T00:00:00.000Z")
    from kenning.knowledge.ops import EndEdge, KnowledgeWrite

    g.writer("2026-03-01T00:00:00.000Z").write(KnowledgeWrite(source_event="t", change_summary="moved", ops=[
        EndEdge(source_id=g.ids["Anna"], relation_type="domain_lives_in", target_id=g.ids["Porto"],
                reason="moved to Lisbon")]))
    b = knowledge_brief(c, g.config, "Anna", now=NOW)
    assert b.sections["related"] == ["Lisbon (lives in)"]
    assert b.sections["history"] == ["lives in Porto (2025-01-01 to 2026-03-01)"]
    # world entities have a 180-day half-life: Anna (433 days) is stale, Lisbon (9 days) is not
    assert [s["name"] for s in b.stale] == ["Anna"] and b.sections["stale"] == ["this node (not verified for 433 days)"]
    c.close()


def test_brief_cli(tmp_path, cli):
    db = tmp_path / "v.db"
    c = open_store(db)
    rich_graph(c)
    c.close()
    d = json.loads(cli("brief", "annie", "--as-of", NOW, "--json", db=db).stdout)
    assert d["node"]["name"] == "Anna" and 200 <= d["tokens"] <= 300 and d["text"].startswith("Anna — ")
    text = cli("brief", "Anna", "--as-of", NOW, db=db).stdout
    assert "Related:" in text and "tokens" in text
    bad = cli("brief", "Nobody", db=db, check=False)
    assert bad.returncode == 2 and "no node 'Nobody'" in bad.stdout + bad.stderr
