"""Text-to-SQL (seed 003 §41.6) against the real scripted OpenAI-compatible test server: the schema card and the
question reach the model in the versioned prompt, its SQL runs read-only, the call is logged and replays without
the network; a write the model proposes is refused; without a model `kenning ask` says so."""

from __future__ import annotations

import json

import pytest

from kenning.knowledge.ask import AskError, ask, schema_card
from kenning.llm.testserver import Answer
from kenning.store.connection import open_store
from tests.conftest import TEST_KEY

GOALS = "SELECT canonical_name FROM nodes WHERE node_kind = 'goal' AND is_active = 1 ORDER BY canonical_name"


def _user_message(body: dict) -> str:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def test_the_schema_card_names_tables_columns_and_meanings(anna):
    path, _, config = anna
    c = open_store(path, readonly=True)
    card = schema_card(c, config)
    c.close()
    tables = {t["table"]: t for t in card["tables"]}
    assert list(tables)[:3] == ["nodes", "aliases", "edges"]
    nodes = {col["name"]: col for col in tables["nodes"]["columns"]}
    assert {"id", "node_kind", "canonical_name", "alpha", "beta", "payload"} <= set(nodes)
    assert "Beta" in nodes["alpha"]["meaning"] and tables["edges"]["meaning"]
    assert "fts_nodes" not in tables


def test_ask_writes_sql_runs_it_read_only_and_replays(anna, llm_server, llm_config):
    path, _, _ = anna
    config = llm_config(llm_server)
    llm_server.script_chat(Answer.json({"sql": GOALS, "explanation": "the active goals"}))
    c = open_store(path)
    res = ask(c, config, "What are my goals?", llm_mode="live")
    assert res["sql"] == GOALS and res["error"] is None
    assert res["result"]["rows"] == [["Help Anna move to Porto"], ["Hike the Rota Vicentina with Anna"]]
    sent = _user_message(llm_server.chat_requests[0]["body"])
    assert "Question: What are my goals?" in sent and '"table": "provenance_entries"' in sent
    calls = c.execute("SELECT count(*) FROM llm_extraction_calls").fetchone()[0]
    assert calls == 1
    # replay: the same question answers from the logged call, no request reaches the server
    again = ask(c, config, "What are my goals?", llm_mode="replay")
    assert again["result"]["rows"] == res["result"]["rows"] and len(llm_server.chat_requests) == 1
    c.close()


def test_a_write_the_model_proposes_is_refused_and_changes_nothing(anna, llm_server, llm_config):
    path, _, _ = anna
    config = llm_config(llm_server)
    llm_server.script_chat(Answer.json({"sql": "DELETE FROM nodes", "explanation": "oops"}))
    c = open_store(path)
    n = c.execute("SELECT count(*) FROM nodes").fetchone()[0]
    res = ask(c, config, "Forget everything", llm_mode="live")
    assert res["result"] is None and "DELETE is not allowed" in res["error"]
    assert c.execute("SELECT count(*) FROM nodes").fetchone()[0] == n
    with pytest.raises(AskError, match="ask a question"):
        ask(c, config, "  ", llm_mode="live")
    c.close()


def test_cli_ask_with_and_without_a_model(anna, llm_server, cli):
    path, _, _ = anna
    none = cli("ask", "What are my goals?", "--llm", "none", db=path, check=False)
    assert none.returncode == 2 and "needs a model" in none.stdout + none.stderr
    llm_server.script_chat(Answer.json({"sql": GOALS, "explanation": "the active goals"}))
    env = {"KENNING_LLM_BASE_URL": llm_server.base_url, "KENNING_LLM_MODEL": "m", "KENNING_LLM_API_KEY": TEST_KEY}
    p = cli("ask", "What are my goals?", "--llm", "live", "--json", db=path, env=env)
    data = json.loads(p.stdout)
    assert data["sql"] == GOALS and data["result"]["row_count"] == 2
