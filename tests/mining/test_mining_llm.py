"""Issue 18 deep mining through a real OpenAI-compatible test server: the versioned `mining` prompt, schema-checked
answers, grounding (a quote not in the message is refused), every call logged, a replay with the server stopped
gives identical nodes, and the rules still run beside the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exportkit import conversation, dump_tables, query, write_export
from kenning.api import Vault
from kenning.llm.testserver import OpenAITestServer

KEY = "sk-kenning-test-SECRET-0123456789"
MODEL = "kenning-test-model"
AS_OF = "2024-12-31T00:00:00Z"
ITALIAN = "Getting fluent in Italian is what I'm after this year."
MESSAGES = [("user", ITALIAN), ("assistant", "Bella idea!"),
            ("user", "I have to renew my passport by March 20."), ("assistant", "Noted.")]


def model(body: dict) -> dict:
    """What a good model answers to the mining prompt; anything else (other stages) gets an empty answer."""
    system = body["messages"][0]["content"]
    if "durable knowledge about" not in system:
        return {"items": [], "assertions": [], "atoms": [], "entities": []}
    req = json.loads(body["messages"][-1]["content"].split("Request:\n", 1)[1].rsplit("\n\nAnswer with", 1)[0])
    if req["message"] == ITALIAN:
        return {"items": [{"kind": "goal", "name": "get fluent in Italian", "quote": ITALIAN,
                           "time_horizon": "this year"},
                          {"kind": "memory_directive", "name": "made up", "quote": "words the user never wrote"}]}
    if "passport" in req["message"]:
        return {"items": [{"kind": "obligation", "name": "renew my passport", "quote": "renew my passport by March 20",
                           "deadline": "2024-03-20", "obligation_type": "statutory"}]}
    return {"items": []}


def overrides(server) -> dict:
    base = server.base_url if server is not None else "http://127.0.0.1:9/v1"
    return {"llm": {"base_url": base, "model": MODEL, "api_key": KEY, "backoff_initial_s": 0.001,
                    "backoff_max_s": 0.01, "timeout_s": 5}, "embeddings": {"backend": "hash"},
            "entities": {"ner": {"llm": {"enabled": False}}},
            # every turn goes deep here: this test is about what the model reads, not about the funnel's scoring
            "intake": {"weights": {"min_score_for_shallow": 0.0, "min_score_for_deep": 0.0},
                       "calibration": {"min_score_for_shallow": 0.0, "min_score_for_deep": 0.0}}}


def ingest(db: Path, export: Path, server, mode: str | None):
    with Vault.open(db, overrides=overrides(server)) as v:
        return {r.stage: r.counts for r in v.ingest([export], as_of=AS_OF, stages="0,1,2A,2B,3,knowledge,intake,extract",
                                                    llm=mode)}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    d = tmp_path_factory.mktemp("mining-llm")
    export = write_export(d / "conversations.json", [conversation("c-mine", MESSAGES)])
    srv = OpenAITestServer(api_key=KEY).start()
    srv.default_chat = model
    try:
        counts = ingest(d / "live.db", export, srv, "live")
        requests = [r["body"] for r in srv.chat_requests
                    if "durable knowledge about" in r["body"]["messages"][0]["content"]]
    finally:
        srv.stop()
    return d, export, counts, requests


def goals(db):
    return query(db, "SELECT canonical_name, payload FROM nodes WHERE node_kind='goal' ORDER BY canonical_name")


def test_model_finds_what_rules_miss_and_grounding_refuses_invented_quotes(live):
    d, _, counts, requests = live
    db = d / "live.db"
    assert [g["canonical_name"] for g in goals(db)] == ["get fluent in Italian"]
    assert json.loads(goals(db)[0]["payload"])["time_horizon"] == "this year"
    assert query(db, "SELECT count(*) AS n FROM nodes WHERE canonical_name='made up'")[0]["n"] == 0
    # the rule and the model found the same obligation: one node
    assert query(db, "SELECT count(*) AS n FROM nodes WHERE node_kind='obligation'")[0]["n"] == 1
    assert len(requests) == 2  # the two user messages, nothing else
    assert "Getting fluent in Italian" in requests[0]["messages"][-1]["content"]


def test_every_mining_call_is_logged_with_its_prompt_version(live):
    d, *_ = live
    rows = query(d / "live.db", "SELECT prompt_version FROM llm_extraction_calls WHERE prompt_name='mining'")
    assert all(r["prompt_version"].startswith("mining@v1#") for r in rows)
    assert len(rows) == 2


def test_replay_with_the_server_stopped_gives_identical_nodes(live, tmp_path):
    d, export, _, _ = live
    db = tmp_path / "replay.db"
    import shutil
    shutil.copy(d / "live.db", db)
    before = dump_tables(db)
    ingest(db, export, None, "replay")   # rerun on the same vault: nothing new, no call needed
    after = dump_tables(db)
    assert after["nodes"] == before["nodes"] and after["knowledge_commits"] == before["knowledge_commits"]


def test_without_a_model_the_rules_still_mine(tmp_path):
    export = write_export(tmp_path / "conversations.json", [conversation("c-mine", MESSAGES)])
    ingest(tmp_path / "rules.db", export, None, "none")
    db = tmp_path / "rules.db"
    assert goals(db) == []  # the rules do not read "what I'm after" as an aim
    assert query(db, "SELECT canonical_name FROM nodes WHERE node_kind='obligation'")[0]["canonical_name"] == \
        "renew my passport"
