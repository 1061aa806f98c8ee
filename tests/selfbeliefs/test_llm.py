"""The LLM parts of seed 000 through the model layer, against the real OpenAI-compatible test server: the atomizer
(§4.3, with JSON repair), the epistemics fallback below 0.6 (§4.8) and the match verifier in the uncertain band
(§4.11) — every call logged, and the same results replayed from the log with no server."""

from __future__ import annotations

import json
import re

from conftest import TEST_KEY, run_cli
from kenning.llm.testserver import Answer
from selfbeliefs.helpers import AS_OF, export, hash_config

TURNS = [("user", "I'm a patient person."), ("assistant", "ok"), ("user", "I am patient."), ("assistant", "ok"),
         ("user", "I might be lazy.")]


def candidates_in(body: dict) -> list[dict]:
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return json.loads(user.split("Candidates:\n", 1)[1])


def responder(body: dict) -> dict:
    system = body["messages"][0]["content"]
    last = body["messages"][-1]["content"]
    if "Raw output to repair:" in last:
        return {"atoms": [{"atom_text": "i am curious", "belief_type": "TRAIT", "polarity": "affirm",
                           "confidence": 0.8, "source_idx": 0, "quote": None}]}
    if system.startswith("You extract the atomic"):
        atoms = []
        for c in candidates_in(body):
            t = re.sub(r"^i'm ", "i am ", c["text"].lower()).rstrip(".")
            atoms.append({"atom_text": t, "belief_type": "TRAIT", "polarity": "affirm", "confidence": 0.9,
                          "source_idx": c["idx"], "quote": c["text"].rstrip(".")})
        return {"atoms": atoms}
    if system.startswith("You decide whether"):
        same = "patient" in last.split("A:", 1)[1] and last.count("patient") == 2
        return {"is_same_belief": same, "confidence": 0.9, "reasoning": "same trait" if same else "different"}
    if system.startswith("You read one sentence"):
        return {"temporal_scope": "habitual", "modality": "possible", "degree": 0.4, "conditional": "",
                "confidence": 0.8}
    raise AssertionError(f"unexpected prompt: {system[:60]}")


def env_for(server) -> dict:
    return {"KENNING_LLM_BASE_URL": server.base_url, "KENNING_LLM_MODEL": "kenning-test-model",
            "KENNING_LLM_API_KEY": TEST_KEY}


def state(db):
    from kenning.store.connection import open_store

    c = open_store(db, readonly=True)
    try:
        nodes = sorted(c.execute("SELECT canonical_text, polarity FROM belief_nodes"))
        occ = sorted(c.execute("SELECT n.canonical_text, o.epistemic_frame, o.resolution, o.deleted_at IS NULL "
                               "FROM belief_occurrences o JOIN belief_nodes n USING (belief_id) "
                               "WHERE o.deleted_at IS NULL"))
        calls = sorted(c.execute("SELECT prompt_name, mode, replayed_from_call_id IS NOT NULL, attempt_kind "
                                 "FROM llm_extraction_calls"))
    finally:
        c.close()
    return nodes, occ, calls


def test_llm_atomizer_verifier_and_epistemics_fallback_then_replay(tmp_path, llm_server):
    llm_server.default_chat = responder
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    env = env_for(llm_server)
    run_cli("ingest", str(export(tmp_path, TURNS)), "--config", str(cfg), "--stages", "0,1,self", "--llm", "live",
            "--as-of", AS_OF, db=db, env=env)
    nodes, occ, calls = state(db)
    # the verifier said "i am patient" is "i am a patient person": one node, two occurrences
    assert ("i am a patient person", "affirm") in nodes and ("i am patient", "affirm") not in nodes
    patient = [o for o in occ if o[0] == "i am a patient person"]
    assert sorted(o[2] for o in patient) == ["match", "no_match"]
    # "I might be lazy": no temporal cue → rules confidence 0.4 < 0.6 → the model's frame
    [lazy] = [o for o in occ if o[0] == "i might be lazy"]
    assert json.loads(lazy[1]) == {"conditional": "", "degree": 0.4, "modality": "possible",
                                   "temporal_scope": "habitual"}
    names = [c[0] for c in calls]
    assert names.count("atomizer") == 3 and "verifier" in names and "epistemics_fallback" in names
    assert all(c[1] == "live" for c in calls)
    live_state = (nodes, occ)
    # replay: roll the version back, stop the server, backfill from the log
    [v] = json.loads(run_cli("self", "versions", "--config", str(cfg), "--json", db=db).stdout)
    run_cli("self", "rollback", v["extractor_version"], "--config", str(cfg), "--as-of", AS_OF, db=db)
    llm_server.stop()
    out = json.loads(run_cli("self", "backfill", "--llm", "replay", "--config", str(cfg), "--json", "--as-of", AS_OF,
                             db=db, env=env).stdout)
    assert out["experiences_processed"] == 3 and out["extractor_version"] == v["extractor_version"]
    nodes2, occ2, calls2 = state(db)
    # the same nodes and frames (every atom now resolves to its node by hash: the nodes outlive a rollback)
    assert nodes2 == live_state[0] and [o[:2] for o in occ2] == [o[:2] for o in live_state[1]]
    replayed = [c for c in calls2 if c[1] == "replay"]
    assert replayed and all(c[2] for c in replayed)


def test_llm_atomizer_json_repair(tmp_path, llm_server):
    llm_server.default_chat = responder
    llm_server.script_chat(Answer.text('{"atoms": [ {"atom_text": "i am'))
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    d = json.loads(run_cli("self", "analyze", "Curiosity drives me, always has.", "--llm", "live", "--config",
                           str(cfg), "--json", db=db, env=env_for(llm_server)).stdout)
    assert [a["canonical_text"] for a in d["atoms"]] == ["i am curious"]
    _, _, calls = state(db)
    assert [(c[0], c[3]) for c in calls] == [("atomizer", "initial"), ("repair_json", "repair")]


def test_llm_failure_falls_back_to_the_rules(tmp_path, llm_server):
    llm_server.default_chat = responder
    llm_server.script_chat(Answer.text("not json"), Answer.text("still not json"))
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    text = "I'm usually patient with my kids, but lately I've been snapping at them."
    d = json.loads(run_cli("self", "analyze", text, "--llm", "live", "--config", str(cfg), "--json", db=db,
                           env=env_for(llm_server)).stdout)
    rules = json.loads(run_cli("self", "analyze", text, "--config", str(cfg), "--json").stdout)
    assert d["atoms"] == rules["atoms"]


def test_annotate_metrics_live_then_replay(tmp_path, llm_server):
    llm_server.default_chat = responder
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(x) for x in [
        # no temporal cue in either: the rules say "unknown" (S45), so the model's frame ("habitual") decides
        {"id": "a", "text": "I'm a patient person.", "atoms": [{"atom_text": "i am a patient person",
                                                                 "belief_type": "TRAIT", "polarity": "affirm",
                                                                 "temporal_scope": "habitual"}]},
        {"id": "b", "text": "I might be lazy.", "atoms": [{"atom_text": "i am lazy", "belief_type": "TRAIT",
                                                           "polarity": "affirm", "temporal_scope": "habitual"}]},
    ]) + "\n")
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    env = env_for(llm_server)
    live = json.loads(run_cli("self", "annotate", "metrics", str(gold), "--llm", "live", "--config", str(cfg),
                              "--json", db=db, env=env).stdout)
    assert live["atomizer"] == "llm" and live["all"]["atoms"]["f1"] == 1.0
    assert live["all"]["temporal_scope"]["accuracy"] == 1.0      # "habitual" from the epistemics fallback
    llm_server.stop()
    replay = json.loads(run_cli("self", "annotate", "metrics", str(gold), "--llm", "replay", "--config", str(cfg),
                                "--json", db=db, env=env).stdout)
    assert {k: v for k, v in replay.items() if k != "llm_mode"} == {k: v for k, v in live.items() if k != "llm_mode"}
