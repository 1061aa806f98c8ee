"""inspect, SQL, compiled truth and the digest on the bundled sample export after ingest (the bridge's nodes, real
provenance into raw messages)."""

from __future__ import annotations

import json

import pytest

from kenning.api import Vault
from kenning.cli.demo import sample_path
from kenning.knowledge.compiled import compiled_truth
from kenning.retrieve.constellation import constellation
from kenning.knowledge.digest import weekly_digest
from kenning.retrieve.inspect import inspect_knowledge
from kenning.store.readonly_sql import limits_of, run_readonly_sql

AS_OF = "2024-06-01T00:00:00.000Z"
HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sample") / "sample.db"
    v = Vault.open(path, overrides=HASH)
    v.ingest([sample_path()], as_of=AS_OF, stages="0,1,2A,2B,3,4,5,knowledge,intake,extract")
    v.close()
    return path


@pytest.fixture
def vault(sample_db):
    v = Vault.open(sample_db, overrides=HASH, readonly=True)
    yield v
    v.close()


def test_provenance_of_a_directive_verifies_against_raw(vault):
    res = inspect_knowledge(vault.conn, vault.config, "provenance_chain", now=AS_OF, node="I hate cilantro")
    entries = res["result_data"]["entries"]
    assert entries and {e["verification"] for e in entries} == {"verified"}
    assert "verified" in res["result_summary"]


def test_sql_over_the_sample(vault):
    res = run_readonly_sql(vault.conn, "SELECT n.canonical_name, count(p.id) AS sources FROM nodes n JOIN "
                                       "provenance_entries p ON p.node_id = n.id WHERE n.node_kind = 'goal' "
                                       "GROUP BY n.id ORDER BY n.canonical_name", limits_of(vault.config))
    # goals come from the intake miners (I75: the bridge no longer makes them from stage-4 intentions)
    assert {"save for a new car", "learn Japanese"} <= {r[0] for r in res.rows}
    assert all(r[1] >= 1 for r in res.rows)


def test_truth_constellation_and_digest_on_the_sample(vault):
    t = compiled_truth(vault.conn, vault.config, "save for a new car", now=AS_OF)
    assert t["node_kind"] == "goal" and len(t["node_hash"]) == 64 and t["markdown"].startswith("# save for a new car")
    me = constellation(vault.conn, vault.config, "me", now=AS_OF)
    assert me["primary_entities"][0]["canonical_name"] == "me" and len(me["primary_entities"]) > 1
    place = constellation(vault.conn, vault.config, "Ljubljana", now=AS_OF)
    # "I'm going to Ljubljana for 5 days in May" asks about a trip; it is no statement of aim (§29), so no goal
    assert place["primary_entities"][0]["canonical_name"] == "Ljubljana" and place["active_goals"] == []
    d = weekly_digest(vault.conn, vault.config, now=AS_OF, since="2020-01-01")
    sec = d["content"]["work_context_sections"][0]
    assert sec["new_entities"] and json.dumps(d)


def test_cli_inspect_search_on_the_sample(sample_db, cli):
    p = cli("inspect", "search_knowledge", "--query", "Ljubljana", "--json", db=sample_db)
    hits = json.loads(p.stdout)["result_data"]["hits"]
    assert hits[0]["canonical_name"] == "Ljubljana"
