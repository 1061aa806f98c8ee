"""The verifier's model-judged checks through the model layer: live calls logged, replay with the server stopped,
and a failed call is `not_checked`, never a pass (seed 002 checks 3–4 and M1; issue 8 §2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from .beliefs_helpers import minimal_wiki

from kenning.beliefs.judge import ModelJudgeRequest
from kenning.llm.testserver import Answer

TEST_KEY = "sk-kenning-test-SECRET-0123456789"


def votes(body: dict) -> dict:
    """A model that supports every statement and reads every supersession as a contradiction."""
    text = body["messages"][-1]["content"]
    if "Read this source quote and the belief statement" in text:
        return {"vote": "supports", "rationale": "the quote says so"}
    return {"vote": "contradicts", "rationale": "both cannot hold"}


def findings(conn) -> dict:
    return {(b, c): (o, v, j) for b, c, o, v, j in conn.execute(
        "SELECT belief_id, check_name, outcome, vote, judge FROM wiki_verifier_findings")}


def llm_calls(conn) -> list[tuple]:
    return list(conn.execute("SELECT prompt_name, mode, parse_success FROM llm_extraction_calls ORDER BY rowid"))


def test_live_judge_is_logged_and_replay_needs_no_server(tmp_path: Path, llm_server, llm_config):
    from kenning.api import Vault

    llm_server.default_chat = votes
    wiki = minimal_wiki(tmp_path / "w")
    with Vault.open(tmp_path / "live.db") as v:
        v.config = llm_config(llm_server)
        [r] = v.ingest([wiki], as_of="2026-06-01T00:00:00Z", judge=ModelJudgeRequest("live"))
        live = findings(v.conn)
        assert live[("b-nantes", "statement_support")][:2] == ("passed", "supports")
        assert live[("b-lyon", "supersession_sanity")][:2] == ("passed", "contradicts")
        calls = llm_calls(v.conn)
        assert sorted(c[0] for c in calls) == ["wiki_statement_support", "wiki_statement_support",
                                               "wiki_supersession"]
        assert all(c[1] == "live" and c[2] == 1 for c in calls)
        raw = v.conn.execute("SELECT request_json, response_json FROM llm_extraction_calls").fetchall()
        assert all("Anna" in req or "Lyon" in req or "Nantes" in req for req, _ in raw)
        assert TEST_KEY not in json.dumps(raw)
        n = len(llm_server.requests)
        llm_server.stop()
        # forget the verdicts so the verifier must ask again — and replay answers from the stored calls
        v.conn.execute("DELETE FROM wiki_verifier_findings")
        v.ingest([wiki], as_of="2026-06-02T00:00:00Z", judge=ModelJudgeRequest("replay"))
        assert findings(v.conn) == live
        assert [c[1] for c in llm_calls(v.conn)].count("replay") == 3
    assert len(llm_server.requests) == n  # nothing reached the stopped server


def test_failed_model_calls_are_not_checked(tmp_path: Path, llm_server, llm_config):
    from kenning.api import Vault

    llm_server.default_chat = Answer.text("I would rather not answer in JSON.")
    wiki = minimal_wiki(tmp_path / "w")
    with Vault.open(tmp_path / "v.db") as v:
        v.config = llm_config(llm_server)
        v.ingest([wiki], as_of="2026-06-01T00:00:00Z", judge=ModelJudgeRequest("live"))
        f = findings(v.conn)
        assert f[("b-nantes", "statement_support")][0] == "not_checked"
        assert not any(o == "passed" for o, _, _ in f.values())
        detail = v.conn.execute("SELECT detail FROM wiki_verifier_findings WHERE belief_id='b-nantes' "
                                "AND check_name='statement_support'").fetchone()[0]
        assert "MALFORMED_OUTPUT" in detail


@pytest.mark.slow
def test_cli_m1_live_then_replay(tmp_path: Path, llm_server, kenning):
    llm_server.default_chat = votes
    wiki = minimal_wiki(tmp_path / "w")
    db = tmp_path / "v.db"
    env = {"KENNING_LLM_BASE_URL": llm_server.base_url, "KENNING_LLM_MODEL": "kenning-test-model",
           "KENNING_LLM_API_KEY": TEST_KEY}
    kenning("ingest", str(wiki), "--llm", "live", "--as-of", "2026-06-01T00:00:00Z", db=db, env=env)
    live = json.loads(kenning("beliefs", "m1", "--llm", "live", "--json", db=db, env=env).stdout)
    assert live["judge"].startswith("llm") and live["m1"] == 1.0
    llm_server.stop()
    replay = json.loads(kenning("beliefs", "m1", "--llm", "replay", "--json", db=db, env=env).stdout)
    assert replay["m1"] == live["m1"] and replay["votes"] == live["votes"]
