"""The temporal profile's classification chain (seed 001 §6.6.5; docs/decisions.md T31–T34): tier 1 keywords,
tier 2 seeded predicate embeddings (hash embedder), tier 3 a seeded multi-run LLM with consensus through the model
layer against the real OpenAI-compatible test server — live, replay with the server stopped, the A32 gate,
reruns and rollback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assertion_corpus import conversation
from exportkit import dump_tables, query, write_export
from kenning.api import Vault
from kenning.pipeline.runner import StageFailed

AS_OF = "2024-12-31T00:00:00Z"
T0 = 1_700_000_000.0       # 2023-11
KEY = "sk-kenning-test-SECRET-0123456789"
MESSAGES = [("user", "I volunteer at the Red Cross."), ("user", "I bought a Fiat Panda."),
            ("user", "I live in Berlin."), ("user", "I like jazz."), ("user", "I have a degree in physics."),
            ("user", "I dislike cold weather.")]
# a profile config whose tiers 1 and 2 know little, so tier 3 has members to classify
SMALL_PROFILE = """
temporal_profile_config:
  categories:
    - {key: work, label: Work, description: "jobs, studies, volunteering"}
    - {key: place, label: Places, description: "where they live"}
    - {key: interest, label: Interests, description: "likes and hobbies"}
    - {key: desire, label: Wishes, description: "what they want or own"}
    - {key: problem, label: Problems, description: "dislikes and worries"}
    - {key: unclassified, label: Other, description: "none of the above"}
  strong_rule_keywords:
    place: [lives_in]
  predicate_cluster_categories:
    problem: [dislikes]
  embedding_tier:
    thresholds: {default: 0.7}
  llm_tier: {runs: 3, consensus: 0.6, seed: 100, max_items_per_request: 40, quotes_per_item: 2}
"""


def overrides(extra: dict | None = None, server=None, **profile) -> dict:
    over: dict = {"embeddings": {"backend": "hash"}, "graph": {"profile": profile},
                  "entities": {"ner": {"llm": {"enabled": False}}}}
    if server is not None:
        over["llm"] = {"base_url": server.base_url, "model": "kenning-test-model", "api_key": KEY,
                       "backoff_initial_s": 0.001, "backoff_max_s": 0.01, "timeout_s": 5, "max_retries": 0}
    for k, v in (extra or {}).items():
        over[k] = {**over.get(k, {}), **v}
    return over


def run(db: Path, export: Path, stages: str, llm: str | None = None, **kw):
    with Vault.open(db, overrides=overrides(**kw)) as v:
        return {r.stage: r.counts for r in v.ingest([export], as_of=AS_OF, stages=stages, llm=llm)}


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tiers")
    return write_export(d / "e.json", [conversation("p1", MESSAGES, start=T0)])


@pytest.fixture(scope="module")
def base(tmp_path_factory, export) -> Path:
    """Stages 0–5 once (no model anywhere)."""
    db = tmp_path_factory.mktemp("tiers-base") / "k.db"
    run(db, export, "0,1,2A,2B,3,4,5")
    return db


def members(db: Path) -> dict[str, tuple[str, int]]:
    """member label → (category, tier) from the CLUSTER_CONTAINS edges."""
    out = {}
    for r in query(db, """SELECT n.label, c.metadata_json AS cm, e.metadata_json AS em FROM graph_edges e
                          JOIN graph_nodes n ON n.node_id = e.dst_node_id
                          JOIN graph_nodes c ON c.node_id = e.src_node_id
                          WHERE e.edge_type = 'CLUSTER_CONTAINS'"""):
        out[r["label"]] = (json.loads(r["cm"])["category_key"], json.loads(r["em"])["tier"])
    return out


def graph(db: Path) -> dict:
    t = dump_tables(db)
    return {k: t[k] for k in ("graph_nodes", "graph_edges")}


def copy_of(base: Path, tmp_path: Path) -> Path:
    db = tmp_path / "k.db"
    shutil.copy(base, db)
    return db


def test_keyword_tier_only(base, export, tmp_path):
    db = copy_of(base, tmp_path)
    c6 = run(db, export, "6", enable_embedding_classification=False)["6"]
    m = members(db)
    assert m["Berlin"] == ("place", 1) and m["jazz"] == ("interest", 1)
    assert m["cold weather"] == ("problem", 1)         # T32: "likes" is not a keyword of "dislikes"
    assert m["Red Cross"] == ("unclassified", 0) and m["Fiat Panda"] == ("unclassified", 0)
    assert c6["classifications_tier0"] == 3 and "classifications_tier2" not in c6
    assert c6["llm_classification_calls"] == 0 and c6["llm_tier_mode"] == "none"


def test_embedding_tier_with_the_hash_embedder(base, export, tmp_path):
    db = copy_of(base, tmp_path)
    c6 = run(db, export, "6")["6"]
    m = members(db)
    assert m["Berlin"] == ("place", 1)                                 # tier 1 first: never re-decided
    assert m["Red Cross"] == ("work", 2) and m["degree"] == ("work", 2) and m["Fiat Panda"] == ("desire", 2)
    assert c6["classifications_tier2"] == 3 and c6["embedding_tier_threshold"] == 0.7
    work = [json.loads(r["metadata_json"]) for r in query(db, "SELECT metadata_json FROM graph_nodes "
                                                              "WHERE node_type='SemanticCluster'")]
    assert {"category_key": "work", "tier_distribution": {"2": 2}}.items() <= \
        next(w for w in work if w["category_key"] == "work").items()
    again = tmp_path / "again.db"
    shutil.copy(db, again)
    run(again, export, "6")
    assert graph(again) == graph(db)                                   # stage 6 rerun: identical
    assert query(db, "SELECT COUNT(*) AS n FROM llm_extraction_runs")[0]["n"] == 0


def request_of(body: dict) -> dict:
    return json.loads(body["messages"][-1]["content"].split("Request:\n", 1)[1].split("\n\nAnswer with", 1)[0])


def scripted(body: dict) -> dict:
    """The model: Red Cross and degree are work every time; jazz-like answers vary; Fiat Panda never agrees."""
    req = request_of(body)
    n = req["sample"]
    out = []
    for it in req["items"]:
        cat = {"Red Cross": "work", "degree": "work", "Fiat Panda": ["desire", "problem", "interest"][n - 1]}.get(
            it["member"], "unclassified")
        out.append({"id": it["id"], "category": cat, "confidence": 0.8})
    out.append({"id": 99, "category": "work", "confidence": 1.0})             # an id that is not there: ignored
    return {"items": out}


def small_profile(tmp_path: Path) -> str:
    p = tmp_path / "profile.yaml"
    p.write_text(SMALL_PROFILE, encoding="utf-8")
    return str(p)


def test_llm_tier_live_then_replay_with_the_server_stopped(base, export, tmp_path, llm_server):
    llm_server.default_chat = scripted
    prof = small_profile(tmp_path)
    db = copy_of(base, tmp_path)
    c6 = run(db, export, "6", "live", server=llm_server, temporal_profile_config=prof)["6"]
    m = members(db)
    assert m["Berlin"] == ("place", 1) and m["cold weather"] == ("problem", 2)
    assert m["Red Cross"] == ("work", 3) and m["degree"] == ("work", 3)
    assert m["Fiat Panda"] == ("unclassified", 0)                      # 1 vote of 3 each: no consensus
    assert c6["llm_tier_mode"] == "live" and c6["llm_classification_calls"] == 3
    assert c6["llm_classification_no_consensus"] >= 1 and c6["llm_classification_invalid_id"] == 3
    # every call logged in stage 6's transaction; samples 1..3, each with its own seed
    [lrun] = query(db, "SELECT * FROM llm_extraction_runs")
    assert (lrun["name"], lrun["mode"], lrun["status"]) == ("profile_classify", "live", "ok")
    calls = query(db, "SELECT * FROM llm_extraction_calls ORDER BY rowid")
    bodies = [json.loads(c["request_json"]) for c in calls]
    assert [request_of(b)["sample"] for b in bodies] == [1, 2, 3] and [b["seed"] for b in bodies] == [101, 102, 103]
    assert all(c["run_id"] == lrun["run_id"] for c in calls)
    assert {i["member"] for i in request_of(bodies[0])["items"]} == {"Red Cross", "degree", "Fiat Panda", "jazz"}
    stage6 = query(db, "SELECT run_id FROM runs WHERE stage='6' AND status='ok' ORDER BY rowid DESC LIMIT 1")[0]
    assert lrun["stage_run_id"] == stage6["run_id"]
    live_graph = graph(db)
    n_requests = len(llm_server.chat_requests)
    # replay with the server stopped: identical graph, answers from the stored calls only
    llm_server.stop()
    c6 = run(db, export, "6", "replay", server=llm_server, temporal_profile_config=prof)["6"]
    assert c6["llm_tier_mode"] == "replay" and graph(db) == live_graph
    assert [r["mode"] for r in query(db, "SELECT mode FROM llm_extraction_calls ORDER BY rowid")] == \
        ["live"] * 3 + ["replay"] * 3
    assert len(llm_server.chat_requests) == n_requests


def test_replay_without_stored_answers_fails_and_rolls_back(base, export, tmp_path, llm_server):
    db = copy_of(base, tmp_path)
    before = dump_tables(db)
    with pytest.raises(StageFailed, match="(?i)replay"):
        run(db, export, "6", "replay", server=llm_server, temporal_profile_config=small_profile(tmp_path))
    assert dump_tables(db) == before
    assert llm_server.chat_requests == []


def test_the_model_is_asked_only_when_requested(base, export, tmp_path, llm_server):
    """A32, as stage 4: an endpoint configured for other work and llm.mode auto does not make stage 6 call it;
    --llm given explicitly or graph.profile.enable_llm_classification does."""
    llm_server.default_chat = scripted
    prof = small_profile(tmp_path)
    db = copy_of(base, tmp_path)
    c6 = run(db, export, "6", None, server=llm_server, temporal_profile_config=prof)["6"]
    assert c6["llm_tier_mode"] == "none" and llm_server.chat_requests == []
    assert members(db)["Red Cross"] == ("unclassified", 0)
    c6 = run(db, export, "6", None, server=llm_server, temporal_profile_config=prof,
             enable_llm_classification=True)["6"]
    assert c6["llm_tier_mode"] == "live" and len(llm_server.chat_requests) == 3
    assert members(db)["Red Cross"] == ("work", 3)
    # --llm none wins over the switch
    c6 = run(db, export, "6", "none", server=llm_server, temporal_profile_config=prof,
             enable_llm_classification=True)["6"]
    assert c6["llm_tier_mode"] == "none" and len(llm_server.chat_requests) == 3


def test_injected_failure_after_the_model_calls_rolls_back_everything(base, export, tmp_path, llm_server,
                                                                      monkeypatch):
    import kenning.store.graph as gsql

    llm_server.default_chat = scripted
    db = copy_of(base, tmp_path)
    run(db, export, "6")
    before = dump_tables(db)

    def boom(*a, **k):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(gsql, "replace_graph", boom)
    with pytest.raises(StageFailed, match="injected failure"):
        run(db, export, "6", "live", server=llm_server, temporal_profile_config=small_profile(tmp_path))
    assert len(llm_server.chat_requests) == 3                          # the calls were made …
    assert dump_tables(db) == before                                   # … and their rows rolled back with the graph
    assert query(db, "SELECT COUNT(*) AS n FROM llm_extraction_calls")[0]["n"] == 0


def test_prompt_and_schema_are_versioned_files():
    from kenning.config import load_config
    from kenning.graph.tiers import check_schema, schema_text
    from kenning.llm.prompts import prompt_for

    cfg = load_config()
    p = prompt_for(cfg, "profile_classify")
    assert (p.name, p.version) == ("profile_classify", 1) and p.variables() == {"request"}
    assert len(check_schema(cfg)) == 64 and json.loads(schema_text())["required"] == ["items"]
