"""The LLM client through the real openai SDK against the real test server (issue 3 "Done when")."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import TEST_KEY
from llm_helpers import AtomizerOutput, AtomizerProbe, atomizer_responder

from kenning.llm import LLMClient, LLMUnavailable, ReplayMissing
from kenning.llm.errors import LLMConfigError, LLMDisabled, LLMEndpointError
from kenning.llm.testserver import Answer
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import StageFailed, run_stage
from kenning.store.connection import rows

GOOD = {"atoms": [{"atom_text": "i am patient", "belief_type": "TRAIT", "polarity": "affirm", "confidence": 0.9,
                   "source_idx": 0}]}


def probe(vault, config, mode: str, as_of: str = "2024-02-01T00:00:00Z", stage=None):
    return run_stage(vault.conn, stage or AtomizerProbe(), config, Clock.from_option(as_of), llm_mode=mode)


def calls(conn, run_id=None) -> list[dict]:
    if run_id:
        return rows(conn, "SELECT * FROM llm_extraction_calls WHERE run_id=? ORDER BY rowid", (run_id,))
    return rows(conn, "SELECT * FROM llm_extraction_calls ORDER BY rowid")


def dump(conn) -> str:
    return "\n".join(str(r) for t in ("llm_extraction_calls", "llm_extraction_runs", "runs", "run_events")
                     for r in conn.execute(f"SELECT * FROM {t}"))


def test_live_call_logged_with_full_raw_io(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    cfg = llm_config(llm_server)
    res = probe(ingested_vault, cfg, "live")
    results = res.counts["results"]
    assert [r["ok"] for r in results] == [True, True, True]
    assert results[0]["atoms"][0]["atom_text"] == "i am patient with people"
    logged = calls(ingested_vault.conn)
    assert len(logged) == 3 == len(llm_server.chat_requests)
    for row, sent in zip(logged, llm_server.chat_requests):
        req = json.loads(row["request_json"])
        assert req == sent["body"]                       # the full request exactly as it went over the wire
        assert req["temperature"] == 0 and req["model"] == "kenning-test-model"
        assert req["response_format"]["type"] == "json_schema"
        assert req["response_format"]["json_schema"]["schema"] == AtomizerOutput.model_json_schema()
        assert req["messages"][0]["role"] == "system" and "atomic first-person beliefs" in req["messages"][0]["content"]
        resp = json.loads(row["response_json"])           # the full response body
        assert resp["object"] == "chat.completion" and resp["system_fingerprint"] == "fp_kenning_test"
        assert json.loads(resp["choices"][0]["message"]["content"]) == json.loads(row["parsed_json"])
        assert row["parse_success"] == 1 and row["http_status"] == 200 and row["mode"] == "live"
        assert row["latency_ms"] > 0 and row["total_tokens"] == resp["usage"]["total_tokens"]
        assert row["prompt_version"].startswith("atomizer@v2#") and row["model"] == "kenning-test-model"
        assert row["retry_count"] == 0 and row["attempt_kind"] == "initial"
        io = json.loads(row["raw_io_json"])
        assert io["endpoint"] == llm_server.base_url and io["http_status"] == 200 and io["latency_ms"] > 0
    # the message each call was about, as seed 001 §4.1 asks
    user_ids = [r[0] for r in ingested_vault.conn.execute(
        "SELECT message_id FROM messages WHERE role='user' ORDER BY order_index")]
    assert [r["message_id"] for r in logged] == user_ids
    (run,) = rows(ingested_vault.conn, "SELECT * FROM llm_extraction_runs")
    assert run["stage_run_id"] == res.run_id and run["status"] == "ok" and run["mode"] == "live"
    assert run["model_name"] == "kenning-test-model" and run["model_version"] == "kenning-test-model"
    assert run["messages_processed"] == 3 and run["assertions_extracted"] == 4
    assert run["extractor_version"] == res.counts["extractor_version"]
    stats = json.loads(run["raw_stats_json"])
    assert stats["calls_total"] == 3 and stats["calls_succeeded"] == 3 and stats["calls_failed"] == 0
    assert stats["retry_distribution"] == {"1": 3} and stats["tokens"]["total"] > 0
    assert "atomizer" in json.loads(run["prompt_versions_json"])


def test_replay_reproduces_results_with_server_stopped(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    llm_server.script_chat(Answer.text('{"atoms": [ {"atom_text": "i am'))   # first answer malformed → repaired
    cfg = llm_config(llm_server)
    live = probe(ingested_vault, cfg, "live")
    assert live.counts["results"][0]["repaired"] is True
    n_requests = len(llm_server.requests)
    llm_server.stop()
    replay = probe(ingested_vault, cfg, "replay", as_of="2024-03-01T00:00:00Z")
    assert replay.counts["results"] == live.counts["results"]
    assert replay.counts["extractor_version"] == live.counts["extractor_version"]
    assert len(llm_server.requests) == n_requests                # nothing reached the (stopped) server
    replayed = calls(ingested_vault.conn, replay.counts["llm_run_id"])
    assert replayed and all(r["mode"] == "replay" and r["replayed_from_call_id"] for r in replayed)
    assert [r["attempt_kind"] for r in replayed] == ["initial", "repair", "initial", "initial"]
    live_ids = {r["call_id"] for r in calls(ingested_vault.conn, live.counts["llm_run_id"])}
    assert {r["replayed_from_call_id"] for r in replayed} <= live_ids


def test_replay_missing_response_is_a_clear_error(ingested_vault, llm_server, llm_config, hash_config):
    cfg = llm_config(llm_server)
    llm_server.stop()
    with pytest.raises(StageFailed) as e:
        probe(ingested_vault, cfg, "replay")
    assert isinstance(e.value.cause, ReplayMissing)
    assert "no stored response for prompt atomizer@v2" in str(e.value) and "never calls the model" in str(e.value)
    assert calls(ingested_vault.conn) == []                    # rolled back with the stage
    assert llm_server.requests == []


def test_replay_after_a_prompt_change_is_missing_not_called(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    cfg = llm_config(llm_server)
    probe(ingested_vault, cfg, "live")
    other = llm_config(llm_server, temperature=0.5)            # a different request body ⇒ a different hash
    with pytest.raises(StageFailed) as e:
        probe(ingested_vault, other, "replay")
    assert isinstance(e.value.cause, ReplayMissing)


def test_malformed_twice_is_recorded_and_the_stage_continues(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    llm_server.script_chat(Answer.text("Sure! Here are the atoms: atoms = [i am patient"),
                           Answer.text('{"atoms": "not a list"}'))
    res = probe(ingested_vault, llm_config(llm_server), "live")
    first, *rest = res.counts["results"]
    assert first["ok"] is False and first["error_code"] == "MALFORMED_OUTPUT"
    assert all(r["ok"] for r in rest)                           # the stage went on with the next items
    bad = [c for c in calls(ingested_vault.conn) if c["message_id"] == first["message_id"]]
    assert [c["attempt_kind"] for c in bad] == ["initial", "repair"]      # exactly one repair attempt
    assert all(c["parse_success"] == 0 and c["error_code"] == "MALFORMED_OUTPUT" for c in bad)
    raw = json.loads(bad[0]["response_json"])["choices"][0]["message"]["content"]
    assert raw == "Sure! Here are the atoms: atoms = [i am patient"       # raw output kept
    repair_req = json.loads(bad[1]["request_json"])
    assert "Raw output to repair:\nSure! Here are the atoms" in repair_req["messages"][1]["content"]
    assert "not valid JSON" in repair_req["messages"][1]["content"]
    assert "atoms: Input should be a valid list" in bad[1]["error"]
    warn = [e for e in res.events if e[3] == "LLM_MALFORMED_OUTPUT"]
    assert len(warn) == 1 and json.loads(warn[0][5])["message_id"] == first["message_id"]
    (run,) = rows(ingested_vault.conn, "SELECT raw_stats_json FROM llm_extraction_runs")
    stats = json.loads(run["raw_stats_json"])
    assert stats["items"] == {"failed": 1, "ok": 2} and stats["error_codes"] == {"MALFORMED_OUTPUT": 1}


def test_fenced_or_chatty_json_is_accepted_without_repair(ingested_vault, llm_server, llm_config):
    llm_server.script_chat(Answer.text("```json\n" + json.dumps(GOOD) + "\n```"),
                           Answer.text("Here you go: " + json.dumps(GOOD) + " Hope it helps."), Answer.json(GOOD))
    res = probe(ingested_vault, llm_config(llm_server), "live")
    assert [r["ok"] and not r["repaired"] for r in res.counts["results"]] == [True, True, True]
    assert len(llm_server.chat_requests) == 3


def test_retries_on_429_500_timeout_and_bad_body(ingested_vault, llm_server, llm_config):
    slept: list[float] = []
    llm_server.default_chat = atomizer_responder
    llm_server.script_chat(Answer.status(429, retry_after=0.002), Answer.status(500),
                           Answer.slow(2.0, GOOD), Answer.raw("<html>bad gateway</html>", status=200),
                           Answer.json(GOOD))
    cfg = llm_config(llm_server, timeout_s=0.5, max_retries=4)
    import kenning.llm.client as client_mod

    real_sleep = client_mod._sleep
    client_mod._sleep = lambda s: (slept.append(s), real_sleep(s))[1]
    try:
        res = probe(ingested_vault, cfg, "live")
    finally:
        client_mod._sleep = real_sleep
    assert [r["ok"] for r in res.counts["results"]] == [True, True, True]
    first = [c for c in calls(ingested_vault.conn) if c["message_id"] == res.counts["results"][0]["message_id"]]
    assert [(c["attempt_kind"], c["http_status"], c["error_code"]) for c in first] == [
        ("initial", 429, "HTTP_429"), ("retry", 500, "HTTP_500"), ("retry", None, "TIMEOUT"),
        ("retry", 200, "BAD_RESPONSE_BODY"), ("retry", 200, None)]
    assert [c["retry_count"] for c in first] == [0, 1, 2, 3, 4]
    assert json.loads(first[3]["response_json"]) == "<html>bad gateway</html>"   # a non-JSON body, kept as text
    assert slept[0] == pytest.approx(0.002)                      # Retry-After honoured (under the cap)
    assert len(slept) == 4 and all(s <= cfg.llm.backoff_max_s for s in slept)
    llm_server.stop()                                            # replay skips the failed attempts
    again = probe(ingested_vault, cfg, "replay", as_of="2024-04-01T00:00:00Z")
    assert again.counts["results"] == res.counts["results"]


def test_retries_are_bounded_then_the_item_fails(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    llm_server.script_chat(*[Answer.status(503)] * 3)
    res = probe(ingested_vault, llm_config(llm_server, max_retries=2), "live")
    assert res.counts["results"][0]["error_code"] == "HTTP_503"
    assert [r["ok"] for r in res.counts["results"][1:]] == [True, True]
    assert len(llm_server.chat_requests) == 3 + 2


def test_consecutive_failures_stop_the_stage_naming_the_url(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = Answer.status(500)
    cfg = llm_config(llm_server, max_retries=1, max_consecutive_failures=2)
    with pytest.raises(StageFailed) as e:
        probe(ingested_vault, cfg, "live")
    assert isinstance(e.value.cause, LLMUnavailable)
    assert llm_server.base_url in str(e.value) and "2 items in a row" in str(e.value)


def test_endpoint_down_names_the_url(ingested_vault, llm_server, llm_config):
    cfg = llm_config(llm_server, max_retries=1)
    llm_server.stop()
    with pytest.raises(StageFailed) as e:
        probe(ingested_vault, cfg, "live")
    assert isinstance(e.value.cause, LLMUnavailable)
    assert f"cannot reach the LLM endpoint at {llm_server.base_url}" in str(e.value)
    assert TEST_KEY not in str(e.value)


def test_wrong_key_is_a_clear_fatal_error(ingested_vault, llm_server, llm_config):
    cfg = llm_config(llm_server, api_key="sk-wrong-key-0000000000")
    with pytest.raises(StageFailed) as e:
        probe(ingested_vault, cfg, "live")
    assert isinstance(e.value.cause, LLMEndpointError) and "HTTP 401" in str(e.value)
    assert "refused the API key" in str(e.value)


def test_call_budget_exhaustion(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    cfg = llm_config(llm_server, budget={"max_calls_per_run": 2, "max_tokens_per_run": 10**9})
    res = probe(ingested_vault, cfg, "live")
    assert [r["error_code"] for r in res.counts["results"]] == [None, None, "BUDGET_EXHAUSTED"]
    assert len(llm_server.chat_requests) == 2
    skipped = calls(ingested_vault.conn)[-1]
    assert skipped["attempt_kind"] == "skipped" and skipped["http_status"] is None
    assert skipped["error_code"] == "BUDGET_EXHAUSTED" and json.loads(skipped["request_json"])["messages"]
    (run,) = rows(ingested_vault.conn, "SELECT status, raw_stats_json FROM llm_extraction_runs")
    assert run["status"] == "budget_exhausted"
    stats = json.loads(run["raw_stats_json"])
    assert stats["budget"]["exhausted"] is True and stats["items"]["skipped_budget"] == 1
    assert any(e[3] == "LLM_BUDGET_EXHAUSTED" for e in res.events)
    # replay reproduces the same outcome (the skip was logged), without a budget of its own
    llm_server.stop()
    again = probe(ingested_vault, cfg, "replay", as_of="2024-05-01T00:00:00Z")
    assert again.counts["results"] == res.counts["results"]


def test_token_budget_exhaustion(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = Answer(content=atomizer_responder, usage={"prompt_tokens": 600, "completion_tokens": 50})
    cfg = llm_config(llm_server, budget={"max_calls_per_run": 1000, "max_tokens_per_run": 1000})
    res = probe(ingested_vault, cfg, "live")
    assert [r["error_code"] for r in res.counts["results"]] == [None, None, "BUDGET_EXHAUSTED"]
    (run,) = rows(ingested_vault.conn, "SELECT raw_stats_json FROM llm_extraction_runs")
    assert json.loads(run["raw_stats_json"])["tokens"] == {"completion": 100, "prompt": 1200, "total": 1300}


def test_key_redaction_everywhere(ingested_vault, llm_server, llm_config, kenning_cli, tmp_path):
    """The server echoes the Authorization header in error bodies and in model output: the key must not be
    stored, logged, returned or raised anywhere."""
    llm_server.echo_auth_in_errors = True
    llm_server.script_chat(Answer.status(500), Answer.json({"atoms": [], "note": f"your key is {TEST_KEY}"}))
    llm_server.default_chat = lambda body: {"atoms": [{"atom_text": f"i am Bearer {TEST_KEY}",
                                                       "belief_type": "TRAIT", "polarity": "affirm",
                                                       "confidence": 1, "source_idx": 0}]}
    cfg = llm_config(llm_server)
    res = probe(ingested_vault, cfg, "live")
    assert llm_server.requests[0]["headers"]["authorization"] == f"Bearer {TEST_KEY}"  # it was sent…
    everything = dump(ingested_vault.conn) + json.dumps(res.counts) + str(res.events)
    assert TEST_KEY not in everything                                              # …and never kept
    assert "***" in everything
    assert "Authorization: Bearer ***" in everything
    # the configuration never shows it either
    assert TEST_KEY not in cfg.model_dump_json() and TEST_KEY not in repr(cfg)
    # a wrong key echoed back in a 401 is not in the error message
    llm_server.clear()
    bad = llm_config(llm_server, api_key="sk-other-key-99999999999")
    with pytest.raises(StageFailed) as e:
        probe(ingested_vault, bad, "live", as_of="2024-06-01T00:00:00Z")
    assert "sk-other-key-99999999999" not in str(e.value) and "***" in str(e.value)
    failed = dump(ingested_vault.conn)
    assert "sk-other-key-99999999999" not in failed and TEST_KEY not in failed
    # nor in CLI output (config show, ping)
    env = {"KENNING_LLM_BASE_URL": llm_server.base_url, "KENNING_LLM_MODEL": "m", "KENNING_LLM_API_KEY": TEST_KEY}
    shown = kenning_cli("config", "show", "--json", env=env)
    assert shown.returncode == 0 and TEST_KEY not in shown.stdout + shown.stderr and "**********" in shown.stdout
    llm_server.default_chat = lambda body: {"ok": True, "echo": "kenning"}
    ping = kenning_cli("llm", "ping", "--json", env=env)
    assert ping.returncode == 0, ping.stderr
    assert TEST_KEY not in ping.stdout + ping.stderr


def test_credentials_in_the_base_url_are_redacted(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    url = llm_server.base_url.replace("http://", "http://user:pa55word@") + "?api_key=topsecret9"
    cfg = llm_config(llm_server, base_url=url, max_retries=0)
    try:
        probe(ingested_vault, cfg, "live")
    except StageFailed:
        pass  # the query string may upset the server; what matters is what was stored
    text = dump(ingested_vault.conn)
    assert "pa55word" not in text and "topsecret9" not in text


def test_llm_rows_roll_back_with_a_failed_stage(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    with pytest.raises(StageFailed):
        probe(ingested_vault, llm_config(llm_server), "live", stage=AtomizerProbe(fail_after=2))
    assert len(llm_server.chat_requests) == 2                   # calls were made…
    assert calls(ingested_vault.conn) == []                      # …but written in the stage's transaction
    assert rows(ingested_vault.conn, "SELECT * FROM llm_extraction_runs") == []
    (failed,) = rows(ingested_vault.conn, "SELECT status FROM runs WHERE stage='probe'")
    assert failed["status"] == "failed"


def test_mode_none_makes_no_calls_and_no_rows(ingested_vault, llm_server, llm_config):
    res = probe(ingested_vault, llm_config(llm_server), "none")
    assert res.counts == {"enabled": False, "results": []}
    assert llm_server.requests == [] and calls(ingested_vault.conn) == []
    client = LLMClient(llm_config(llm_server), mode="none")
    with pytest.raises(LLMDisabled):
        client.structured("atomizer", {"candidates": []}, AtomizerOutput)


def test_mode_resolution(llm_server, llm_config, hash_config):
    from kenning.llm import resolve_mode

    assert resolve_mode(hash_config) == "none"                    # nothing configured: rules only
    assert resolve_mode(llm_config(llm_server)) == "live"         # auto with an endpoint
    assert resolve_mode(llm_config(llm_server), "replay") == "replay"
    with pytest.raises(LLMConfigError, match="KENNING_LLM_BASE_URL"):
        resolve_mode(hash_config, "live")
    with pytest.raises(LLMConfigError, match="none, live, replay"):
        resolve_mode(hash_config, "sometimes")


def test_ingest_accepts_llm_option_and_stores_it(kenning_cli, chat_export, tmp_path, llm_server):
    db = tmp_path / "cli.db"
    r = kenning_cli("ingest", str(chat_export), "--db", str(db), "--llm", "none", "--json", "--as-of",
                    "2024-01-01T00:00:00Z", "--stages", "0,1")
    assert r.returncode == 0, r.stderr
    env = {"KENNING_LLM_MODEL": "some-model"}
    r = kenning_cli("ingest", str(chat_export), "--db", str(db), "--llm", "replay", "--json", "--stages", "0,1",
                    env=env)
    assert r.returncode == 0, r.stderr
    import apsw

    conn = apsw.Connection(str(db))
    args = [json.loads(a) for (a,) in conn.execute("SELECT args_json FROM runs")]
    first = [a["llm"] for a in args if a["as_of"] == "2024-01-01T00:00:00Z"]
    second = [a["llm"] for a in args if a["as_of"] is None]
    assert first and set(first) == {"none"} and set(second) == {"replay"} and len(first) == len(second)
    bad = kenning_cli("ingest", str(chat_export), "--db", str(db), "--llm", "live")
    assert bad.returncode == 1 and "KENNING_LLM_BASE_URL" in bad.stderr and "Traceback" not in bad.stderr
    bad = kenning_cli("ingest", str(chat_export), "--db", str(db), "--llm", "maybe")
    assert bad.returncode == 1 and "none, live, replay" in bad.stderr


def test_llm_ping_cli(kenning_cli, llm_server):
    env = {"KENNING_LLM_BASE_URL": llm_server.base_url, "KENNING_LLM_MODEL": "kenning-test-model",
           "KENNING_LLM_API_KEY": TEST_KEY}
    llm_server.default_chat = lambda body: {"ok": True, "echo": "kenning"}
    r = kenning_cli("llm", "ping", "--json", env=env)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["json_mode"] == "json_schema" and report["endpoint"] == llm_server.base_url
    assert report["reported_model"] == "kenning-test-model" and report["latency_ms"] > 0
    # a server that rejects json_schema but honours json_object
    llm_server.clear()
    llm_server.on_chat(lambda b: b.get("response_format", {}).get("type") == "json_schema",
                       Answer.status(400, message="response_format json_schema is not supported"))
    llm_server.default_chat = lambda body: {"ok": True, "echo": "kenning"}
    r = kenning_cli("llm", "ping", env=env)
    assert r.returncode == 0, r.stderr
    assert "json_object: ok" in r.stdout and "set llm.response_format: json_object" in r.stdout
    # nothing answers JSON
    llm_server.clear()
    llm_server.default_chat = Answer.text("I am a chatbot and I do not do JSON.")
    r = kenning_cli("llm", "ping", env=env)
    assert r.returncode == 2 and "no structured-output form worked" in r.stdout
    # endpoint down
    llm_server.stop()
    r = kenning_cli("llm", "ping", env=env)
    assert r.returncode == 1 and f"cannot reach the LLM endpoint at {llm_server.base_url}" in r.stderr
    assert "Traceback" not in r.stderr
    r = kenning_cli("llm", "ping")
    assert r.returncode == 1 and "needs an endpoint" in r.stderr


def test_response_format_json_object_puts_the_schema_in_the_prompt(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    probe(ingested_vault, llm_config(llm_server, response_format="json_object"), "live")
    body = llm_server.chat_requests[0]["body"]
    assert body["response_format"] == {"type": "json_object"}
    assert "validates against this JSON Schema" in body["messages"][0]["content"]


def test_seed_is_sent_when_configured(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    probe(ingested_vault, llm_config(llm_server, seed=7), "live")
    assert llm_server.chat_requests[0]["body"]["seed"] == 7


def test_refusal_is_an_item_error(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    llm_server.script_chat(Answer(content=None, refusal="I can't help with that."))
    res = probe(ingested_vault, llm_config(llm_server), "live")
    assert res.counts["results"][0]["error_code"] == "REFUSED"
    assert [r["ok"] for r in res.counts["results"][1:]] == [True, True]


def test_client_without_a_run_logs_nothing(llm_server, llm_config, tmp_path):
    llm_server.script_chat(Answer.json(GOOD))
    client = LLMClient(llm_config(llm_server))
    res = client.structured("atomizer", {"candidates": [{"idx": 0, "text": "I am patient"}]}, AtomizerOutput)
    assert res.ok and res.value.atoms[0].atom_text == "i am patient" and res.call_ids == ()
    assert res.attempts == 1
    assert res.usage["total_tokens"] > 0
    with pytest.raises(LLMConfigError, match="needs a connection"):
        LLMClient(llm_config(llm_server), mode="replay")


def test_testserver_standalone_module_runs(tmp_path):
    import socket
    import sys
    import time

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([sys.executable, "-m", "kenning.llm.testserver", "--port", str(port)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/v1" in line
        from kenning.config import load_config

        cfg = load_config(overrides={"llm": {"base_url": f"http://127.0.0.1:{port}/v1", "model": "x"}})
        deadline = time.time() + 10
        report = None
        while time.time() < deadline:
            try:
                report = LLMClient(cfg).ping()
                break
            except LLMUnavailable:
                time.sleep(0.1)
        assert report is not None and report["json_mode"] == "json_schema"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_key_never_reaches_debug_logs(llm_server, llm_config, caplog):
    import logging

    llm_server.script_chat(Answer.json(GOOD))
    url = llm_server.base_url + "?api_key=query-secret-777"
    levels = {n: logging.getLogger(n).level for n in ("openai", "httpx", "httpx2", "httpcore", "httpcore2")}
    request = caplog  # restore the HTTP loggers' levels afterwards
    with caplog.at_level(logging.DEBUG):
        for name in levels:
            logging.getLogger(name).setLevel(logging.DEBUG)
        with LLMClient(llm_config(llm_server)) as client:
            client.structured("atomizer", {"candidates": [{"idx": 0, "text": "I am patient"}]}, AtomizerOutput)
        with LLMClient(llm_config(llm_server, base_url=url)) as client:   # the SDK cannot use a query string…
            with pytest.raises(LLMEndpointError, match="HTTP 404"):
                client.structured("atomizer", {"candidates": [{"idx": 0, "text": "I am patient"}]}, AtomizerOutput)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    text = "\n".join(r.getMessage() for r in request.records)
    assert request.records                                       # the HTTP stack did log at DEBUG…
    assert TEST_KEY not in text and "query-secret-777" not in text   # …but never the secrets
    assert "api_key=***" in text


def test_budget_spent_before_the_repair(ingested_vault, llm_server, llm_config):
    llm_server.default_chat = atomizer_responder
    llm_server.script_chat(Answer.json(GOOD), Answer.text("{broken"))
    cfg = llm_config(llm_server, budget={"max_calls_per_run": 2, "max_tokens_per_run": 10**9})
    res = probe(ingested_vault, cfg, "live")
    assert [r["error_code"] for r in res.counts["results"]] == [None, "BUDGET_EXHAUSTED", "BUDGET_EXHAUSTED"]
    second = [c for c in calls(ingested_vault.conn) if c["message_id"] == res.counts["results"][1]["message_id"]]
    assert [(c["attempt_kind"], c["prompt_name"]) for c in second] == [("initial", "atomizer"),
                                                                       ("skipped", "repair_json")]
    llm_server.stop()
    again = probe(ingested_vault, cfg, "replay", as_of="2024-05-01T00:00:00Z")
    assert again.counts["results"] == res.counts["results"]


def test_stage_code_needs_no_guard_under_none(ingested_vault, hash_config):
    from kenning.llm import open_llm_run

    class Counting:
        name, title = "counting", "counting"

        def run(self, ctx):
            with open_llm_run(ctx, "x") as llm:
                llm.run.add(messages_processed=1)          # a no-op, not an AttributeError
                return {"enabled": llm.enabled, "run_id": llm.run.run_id}

    res = run_stage(ingested_vault.conn, Counting(), hash_config, Clock.from_option("2024-01-01T00:00:00Z"))
    assert res.counts == {"enabled": False, "run_id": None}


def test_run_outside_a_stage_and_per_call_model(ingested_vault, llm_server, llm_config):
    from kenning.llm import LLMRun
    from kenning.store import transaction

    cfg = llm_config(llm_server)
    llm_server.script_chat(Answer.json(GOOD))
    conn = ingested_vault.conn
    with transaction(conn):
        run = LLMRun(conn, cfg, name="verifier", mode="live")
        with LLMClient(cfg, conn, run) as client:
            res = client.structured("atomizer", {"candidates": [{"idx": 0, "text": "I am patient"}]},
                                    AtomizerOutput, options={"model": "verifier-model", "temperature": 0.0})
            with pytest.raises(LLMConfigError, match="unknown request option 'stream'"):
                client.structured("atomizer", {"candidates": []}, AtomizerOutput, options={"stream": True})
        run.finish()
    assert res.ok and llm_server.chat_requests[0]["body"]["model"] == "verifier-model"
    (row,) = calls(conn)
    assert row["model"] == "verifier-model" and row["message_id"] is None and row["item_key"] is None
    (r,) = rows(conn, "SELECT stage_run_id, status, name FROM llm_extraction_runs")
    assert r == {"stage_run_id": None, "status": "ok", "name": "verifier"}
