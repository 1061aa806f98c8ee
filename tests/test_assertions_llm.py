"""Stage 4 LLM extraction (seed 001 §4.4.4–§4.5, invariant 19; docs/decisions.md A32–A38) against the real
OpenAI-compatible test server: live claims, the hybrid merge with the rules, quote-to-offset resolution, invalid
candidates recorded, replay with the server stopped, a missing replay answer, reruns, rollback, the budget."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from exportkit import conversation, dump_tables, query, write_export
from kenning.api import Vault
from kenning.llm.testserver import OpenAITestServer
from kenning.pipeline.runner import StageFailed
from kenning.sources.jcs import canonicalize

KEY = "sk-kenning-test-SECRET-0123456789"
MODEL = "kenning-test-model"
AS_OF = "2024-12-31T00:00:00Z"
FENCE = "```\nI live in Rome\n```"
UNKNOWN_ID = "123e4567-e89b-12d3-a456-426614174000"

MESSAGES = [
    ("user", "I live in Berlin since 2019 and my sister Anna works at Globex."),
    ("assistant", "Since you live in Berlin, the Wannsee sailing club could suit you."),
    ("user", "Honestly the thing I care most about is sailing on weekends."),
    ("assistant", "You also mentioned that you grew up in Hamburg."),
    ("user", "I\u2019m learning  Portuguese with Anna. Anna is great.\n" + FENCE),
]


def claim(subject, predicate, obj, quote, *, modality="state", polarity="positive", confidence=0.9, time=None):
    out = {"subject": subject, "predicate": predicate, "object": obj, "modality": modality, "polarity": polarity,
           "quote": quote, "confidence": confidence}
    if time is not None:
        out["time"] = time
    return out


def ent(name):
    return {"kind": "entity", "entity": name}


def lit(value, value_type="string"):
    return {"kind": "literal", "value_type": value_type, "value": value}


def request_of(body: dict) -> dict:
    return json.loads(body["messages"][-1]["content"].split("Request:\n", 1)[1])


def entity_id(req: dict, name: str) -> str:
    """What a model does with the entity list: name an entity by its id when it is there."""
    return next((e["id"] for e in req["target"]["entities"] if e["name"] == name), name)


def model(body: dict) -> dict:
    """A scripted model: its answers for each target message of the corpus, good and bad."""
    req = request_of(body)
    t = req["target"]["text"]
    if t.startswith("I live in Berlin"):
        return {"assertions": [
            claim("SPEAKER", "lives in", ent("Berlin"), "I live in Berlin since 2019", confidence=0.95,
                  time={"type": "since", "surface": "2019"}),                                      # = the rule claim
            claim(entity_id(req, "Anna"), "member_of", {"kind": "entity", "entity": entity_id(req, "Globex")},
                  "Anna works at Globex", confidence=0.8),                                          # by entity ids
        ]}
    if t.startswith("Since you live in Berlin"):
        return {"assertions": [
            claim("USER", "lives_in", {"kind": "entity", "entity": entity_id(req, "Berlin")}, "you live in Berlin"),
            claim("USER", "likes", lit("sailing"), "the Wannsee sailing club could suit you", modality="preference",
                  confidence=0.6),                                     # corroborated by the next user message
            claim("SPEAKER", "likes", lit("sailing clubs"), "the Wannsee sailing club could suit you"),  # invalid
        ]}
    if t.startswith("Honestly"):
        return {"assertions": [
            claim("SPEAKER", "likes", lit("sailing"), "the thing I care most about is sailing", modality="preference",
                  confidence=0.97),
            claim("SPEAKER", "likes", lit("sailing"), "I love sailing in Kiel"),                       # not in text
            claim(UNKNOWN_ID, "likes", lit("sailing"), "sailing on weekends"),                         # unknown id
            claim("SPEAKER", "teleports", {"kind": "none"}, "sailing on weekends"),                    # not a label
            claim("SPEAKER", "visits", ent("Copenhagen"), "sailing on weekends"),                      # invented name
            claim("SPEAKER", "lives_in", {"kind": "none"}, "sailing on weekends"),                     # arity
            claim("SPEAKER", "number_of_children", lit("many", "number"), "sailing on weekends"),      # bad literal
            claim("SPEAKER", "likes", lit("weekends"), "sailing on weekends", confidence=1.5),         # out of range
        ]}
    if t.startswith("You also mentioned"):
        return {"assertions": [claim("USER", "is_from", ent("Hamburg"), "you grew up in Hamburg", modality="fact")]}
    if t.startswith("I\u2019m learning"):
        return {"assertions": [
            claim("SPEAKER", "learns", lit("Portuguese"), "I'm learning Portuguese", modality="fact"),  # loose quote
            claim("Anna", "has_trait", lit("great"), "Anna", confidence=0.6),                          # quote twice
            claim("SPEAKER", "lives_in", ent("Rome"), "I live in Rome"),                               # fenced only
            claim("my sister", "learns", lit("Portuguese"), "Portuguese with Anna", modality="fact",
                  confidence=0.7),                                     # the sister named in the window: Anna
            claim("she", "likes", lit("Portuguese"), "Anna is great"),                                # a pronoun
        ]}
    return {"assertions": []}


INVALID = {"QUOTE_NOT_IN_TEXT", "ENTITY_ID_UNKNOWN", "PREDICATE_UNKNOWN", "NAME_NOT_IN_CONTEXT", "ARITY_MISMATCH",
           "OBJECT_LITERAL_INVALID", "CONFIDENCE_OUT_OF_RANGE", "SPEAKER_NOT_A_PERSON", "QUOTE_IN_EXCLUDED_TEXT",
           "PRONOUN_NOT_RESOLVED"}


def overrides(server: OpenAITestServer | None, **llm) -> dict:
    base = server.base_url if server is not None else "http://127.0.0.1:9/v1"
    return {"llm": {"base_url": base, "model": MODEL, "api_key": KEY, "backoff_initial_s": 0.001,
                    "backoff_max_s": 0.01, "timeout_s": 5, **llm}, "embeddings": {"backend": "hash"},
            # stage 2A's LLM NER (E27) asks the same endpoint; this scripted model answers stage 4 only
            "entities": {"ner": {"llm": {"enabled": False}}}}


def run(db: Path, export: Path, server, mode: str | None, *, stages: str | None = None, extra: dict | None = None,
        **llm):
    over = overrides(server, **llm)
    for k, v in (extra or {}).items():
        over[k] = {**over.get(k, {}), **v}
    with Vault.open(db, overrides=over) as v:
        # through stage 4: the self stage (seed 000) asks the same endpoint and this model answers stage 4 only
        return {r.stage: r.counts for r in v.ingest([export], as_of=AS_OF, stages=stages or "0,1,2A,2B,3,4",
                                                    llm=mode)}


FACTS = """SELECT a.*, s.canonical_name AS subject, p.canonical_label AS predicate, o.canonical_name AS object,
  m.text_raw, m.role FROM assertions a JOIN predicates p USING(predicate_id) JOIN entities s
  ON s.entity_id = a.subject_entity_id LEFT JOIN entities o ON o.entity_id = a.object_entity_id
  JOIN messages m USING(message_id) ORDER BY m.order_index, a.char_start"""


def facts(db: Path) -> list[dict]:
    return query(db, FACTS)


def assertion_tables(db: Path) -> dict:
    t = dump_tables(db)
    return {k: t[k] for k in ("assertions", "retractions", "predicates", "entities", "assertion_created_entities")}


@pytest.fixture
def export(tmp_path):
    return write_export(tmp_path / "conversations.json", [conversation("c-llm", MESSAGES)])


@pytest.fixture
def server():
    srv = OpenAITestServer(api_key=KEY).start()
    srv.default_chat = model
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """One live run of the whole pipeline (module-wide), the server then stopped."""
    d = tmp_path_factory.mktemp("llm")
    export = write_export(d / "conversations.json", [conversation("c-llm", MESSAGES)])
    srv = OpenAITestServer(api_key=KEY).start()
    srv.default_chat = model
    try:
        counts = run(d / "live.db", export, srv, "live")
        requests = list(srv.chat_requests)
    finally:
        srv.stop()
    return d / "live.db", export, counts, requests


# -- the live run ----------------------------------------------------------------------------------------------------

def test_live_run_produces_model_claims_grounded_to_exact_words(live):
    db, _export, counts, _ = live
    c4 = counts["4"]
    assert c4["llm_mode"] == "live" and c4["llm_messages_sent"] == 5
    rows = facts(db)
    by = {(r["extraction_method"], r["surface_text"]): r for r in rows}
    likes = by[("llm", "the thing I care most about is sailing")]
    assert (likes["subject"], likes["predicate"], json.loads(likes["object_value"]), likes["modality"]) == \
        ("SELF", "likes", "sailing", "preference")
    assert likes["extraction_model"] == MODEL and likes["asserted_role"] == "user"
    # the model's 0.97 is capped (A36); user + SELF + literal: final = extraction
    assert likes["confidence_extraction"] == 0.9 and likes["confidence_final"] == 0.9
    raw = json.loads(likes["raw_assertion_json"])
    assert raw["extraction"]["method"] == "llm" and raw["extraction"]["notes"]["model_confidence"] == 0.97
    assert raw["extraction"]["source_sha"].startswith("assertion_extract@v1#")
    for r in rows:   # invariant 1/17: every span is exact
        if r["char_start"] is not None:
            assert r["text_raw"][r["char_start"]:r["char_end"]] == r["surface_text"]


def test_hybrid_merge_keeps_the_rule_claim_and_records_the_model_candidate(live):
    db, _, counts, _ = live
    berlin = [r for r in facts(db) if r["object"] == "Berlin" and r["role"] == "user"]
    assert len(berlin) == 1
    b = berlin[0]
    assert b["extraction_method"] == "hybrid" and b["surface_text"] == "I live in Berlin"
    raw = json.loads(b["raw_assertion_json"])
    assert raw["extraction"]["method"] == "rule_based"
    [llm_cand] = raw["llm_candidates"]
    assert llm_cand["quote"] == "I live in Berlin since 2019" and llm_cand["method"] == "llm"
    # the rules read four of the model's claims too (Berlin twice, Hamburg, Portuguese): each is kept once
    assert counts["4"]["candidates_hybrid_merged"] == 4
    assert sorted(r["surface_text"] for r in facts(db) if r["extraction_method"] == "hybrid") == sorted(
        ["I live in Berlin", "you live in Berlin", "you grew up in Hamburg", "I\u2019m learning  Portuguese"])
    run_row = query(db, "SELECT * FROM llm_extraction_runs")[0]
    n = query(db, "SELECT COUNT(*) n FROM assertions WHERE extraction_method IN ('llm','hybrid')")[0]["n"]
    assert run_row["assertions_extracted"] == n >= 4 and run_row["messages_processed"] == 5
    assert run_row["status"] == "ok" and run_row["name"] == "assertion_extract"


def test_entity_ids_and_detector_tiers_in_model_claims(live):
    """An entity named by its id resolves at step 2 with its best detector tier; the confidence composition
    uses it (§4.6.1, §4.6.8)."""
    db, *_ = live
    [a] = [r for r in facts(db) if r["predicate"] == "member_of"]
    assert (a["subject"], a["object"], a["extraction_method"]) == ("Anna", "Globex", "llm")
    raw = json.loads(a["raw_assertion_json"])
    assert raw["subject_resolution"]["step"] == raw["object_resolution"]["step"] == "entity_id"
    st, ot = a["subject_detection_tier"], a["object_detection_tier"]
    assert (st, ot) == (raw["subject_resolution"]["tier"], raw["object_resolution"]["tier"])
    assert 1 <= st <= 4 and 1 <= ot <= 4
    assert a["confidence_grounding"] == pytest.approx(min(1.0, ((1 + (4 - st) * 0.05) + (1 + (4 - ot) * 0.05)) / 2))
    assert a["confidence_final"] == pytest.approx(0.8 * a["confidence_grounding"])


def test_kin_references_resolve_like_the_rules(live):
    """"my sister" from the model is the rules' kin reference: the sister named earlier in the window (A27)."""
    db, *_ = live
    [a] = [r for r in facts(db) if r["predicate"] == "learns" and r["subject"] == "Anna"]
    assert a["extraction_method"] == "llm" and a["surface_text"] == "Portuguese with Anna"
    assert json.loads(a["raw_assertion_json"])["subject_resolution"]["step"] == "kin_coreference"


def test_assistant_model_claims_with_and_without_corroboration(live):
    """The model's claim about the user in an assistant message is corroborated by a *later* user message (the
    second pass, A5); one nobody confirms stays at trust 0.5."""
    db, *_ = live
    rows = [r for r in facts(db) if r["role"] == "assistant"]
    sailing = next(r for r in rows if r["predicate"] == "likes")
    hamburg = next(r for r in rows if r["object"] == "Hamburg")
    assert sailing["extraction_method"] == "llm" and sailing["subject"] == "SELF"
    assert sailing["asserted_role"] == hamburg["asserted_role"] == "assistant"
    assert sailing["has_user_corroboration"] == 1 and hamburg["has_user_corroboration"] == 0
    for r, trust in ((sailing, 0.9), (hamburg, 0.5)):
        assert r["confidence_final"] == pytest.approx(r["confidence_extraction"] * r["confidence_grounding"] * trust,
                                                      abs=1e-6)
    corr = json.loads(sailing["corroboration_json"])
    user_likes = next(r for r in facts(db) if r["role"] == "user" and r["predicate"] == "likes")
    assert corr["corroborating_assertion_ids"] == [user_likes["assertion_id"]]
    assert corr["match_type"] == "exact_predicate"


def test_quotes_resolve_exact_then_normalized_and_ambiguous_ones_stay_spanless(live):
    db, *_ = live
    rows = facts(db)
    learns = next(r for r in rows if r["predicate"] == "learns")
    [cand] = json.loads(learns["raw_assertion_json"])["llm_candidates"]   # the rules read it too (hybrid)
    assert learns["text_raw"][cand["char_start"]:cand["char_end"]] == cand["quote"] == "I\u2019m learning  Portuguese"
    assert cand["notes"]["quote_match"] == "whitespace" and cand["notes"]["model_quote"] == "I'm learning Portuguese"
    likes = next(r for r in rows if r["predicate"] == "likes" and r["role"] == "user")
    assert json.loads(likes["raw_assertion_json"])["extraction"]["notes"]["quote_match"] == "exact"
    trait = next(r for r in rows if r["predicate"] == "has_trait" and r["subject"] == "Anna")
    assert trait["char_start"] is None and trait["surface_text"] is None
    notes = json.loads(trait["raw_assertion_json"])["extraction"]["notes"]
    assert notes["quote_unresolved"] == "Anna" and notes["quote_occurrences"] == 2
    warned = query(db, "SELECT COUNT(*) n FROM run_events WHERE code='QUOTE_OFFSET_UNRESOLVED'")[0]["n"]
    assert warned == 1


def test_invalid_candidates_are_rejected_and_recorded(live):
    db, _, counts, _ = live
    events = query(db, "SELECT message, context_json FROM run_events WHERE code='LLM_CANDIDATE_INVALID'")
    reasons = {json.loads(e["context_json"])["reason"] for e in events}
    assert reasons == INVALID
    assert counts["4"]["llm_candidates_invalid"] == len(INVALID)
    for e in events:   # the model's candidate and the calls it came from are kept
        ctx = json.loads(e["context_json"])
        assert ctx["candidate"]["quote"] and ctx["call_ids"]
    objects = {r["object"] for r in facts(db)} | {r["object_value"] for r in facts(db)}
    assert not objects & {"Copenhagen", "Rome", '"sailing clubs"', '"weekends"'}
    assert not query(db, "SELECT 1 FROM entities WHERE canonical_name IN ('Copenhagen', 'Rome')")
    assert not [r for r in facts(db) if r["predicate"] == "teleports"]


def test_invariant19_every_call_is_stored_with_request_response_and_raw_io(live):
    db, _, _, requests = live
    calls = query(db, "SELECT * FROM llm_extraction_calls ORDER BY rowid")
    assert len(calls) == len(requests) == 5
    for c in calls:
        assert c["parse_success"] == 1 and c["mode"] == "live" and c["prompt_name"] == "assertion_extract"
        req = json.loads(c["request_json"])
        assert c["request_json"] == canonicalize(req)
        assert c["request_sha256"] == hashlib.sha256(c["request_json"].encode()).hexdigest()
        assert req["model"] == MODEL and req["temperature"] == 0 and req["response_format"]["type"] == "json_schema"
        target = request_of(req)["target"]
        msg = query(db, "SELECT text_raw, role FROM messages WHERE message_id=?", (c["message_id"],))[0]
        assert target["role"] == msg["role"] and len(target["text"]) == len(msg["text_raw"])  # length-preserving
        assert json.loads(c["response_json"])["choices"][0]["message"]["content"]
        assert json.loads(c["raw_io_json"])["latency_ms"] is not None
        assert KEY not in c["request_json"] + c["raw_io_json"]
    last = request_of(json.loads(calls[-1]["request_json"]))
    assert "I live in Rome" not in last["target"]["text"]                         # the fence is masked
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user", "assistant"]   # k_context window


def test_replay_with_the_server_stopped_reproduces_identical_assertions(live, tmp_path):
    db, export, counts, _ = live
    copy = tmp_path / "replay.db"
    shutil.copy(db, copy)
    before = assertion_tables(copy)
    c4 = run(copy, export, None, "replay", stages="4")["4"]          # base_url points nowhere
    assert c4["llm_mode"] == "replay"
    assert (c4["assertions_inserted"], c4["assertions_updated"], c4["assertions_deleted"]) == (0, 0, 0)
    assert assertion_tables(copy) == before
    modes = [r["mode"] for r in query(copy, "SELECT mode FROM llm_extraction_calls ORDER BY rowid")]
    assert modes == ["live"] * 5 + ["replay"] * 5
    # and from scratch: the stored calls alone rebuild the same stage-4 rows
    conn_sql = "DELETE FROM assertions; DELETE FROM retractions; DELETE FROM stage_fingerprints WHERE stage='4'"
    from kenning.store.connection import open_store
    conn = open_store(copy)
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute(conn_sql)
    finally:
        conn.close()
    c4 = run(copy, export, None, "replay", stages="4")["4"]
    assert c4["assertions_inserted"] == c4["assertions_total"] > 0
    after = assertion_tables(copy)
    assert after["assertions"] == before["assertions"] and after["retractions"] == before["retractions"]


def test_two_live_runs_give_identical_assertions(live, tmp_path, export, server):
    """Invariant 5 for stage 4 with a model: same input, same answers, same clock ⇒ the same rows (the call log's
    timings aside)."""
    db, *_ = live
    other = tmp_path / "again.db"
    run(other, export, server, "live")
    assert assertion_tables(other) == assertion_tables(db)


def test_replay_with_a_missing_response_is_a_clear_error(live, tmp_path):
    db, _, _, _ = live
    copy = tmp_path / "missing.db"
    shutil.copy(db, copy)
    before = dump_tables(copy)
    edited = [*MESSAGES[:2], ("user", "Honestly the thing I care most about is rowing on weekends."), *MESSAGES[3:]]
    export2 = write_export(tmp_path / "v2.json", [conversation("c-llm", edited)])
    with pytest.raises(StageFailed, match="no stored response for prompt assertion_extract@v1") as e:
        run(copy, export2, None, "replay")
    assert "--llm live first" in str(e.value)
    after = dump_tables(copy)
    for t in ("assertions", "retractions", "llm_extraction_runs", "llm_extraction_calls"):
        assert after[t] == before[t]            # stages 0–3 took the edit; stage 4 rolled back whole
    assert [r for r in after["stage_fingerprints"] if r[0] == "4"] == [r for r in before["stage_fingerprints"]
                                                                      if r[0] == "4"]
    failed = query(copy, "SELECT stage, error FROM runs WHERE status='failed'")
    assert [f["stage"] for f in failed] == ["4"] and "ReplayMissing" in failed[0]["error"]


def test_rerun_changes_nothing_and_calls_nothing(live, tmp_path):
    db, export, _, _ = live
    copy = tmp_path / "rerun.db"
    shutil.copy(db, copy)
    before = dump_tables(copy)
    srv = OpenAITestServer(api_key=KEY).start()
    try:
        counts = run(copy, export, srv, "live")
        assert counts["4"] == {"skipped_unchanged": 1}
        assert srv.chat_requests == []
    finally:
        srv.stop()
    assert dump_tables(copy) == before


# -- failures --------------------------------------------------------------------------------------------------------

def test_injected_failure_after_model_calls_rolls_everything_back(tmp_path, export, server, monkeypatch):
    db = tmp_path / "k.db"
    run(db, export, server, "live", stages="0,1,2A,2B,3")
    before = dump_tables(db)
    import kenning.extract.llm as xllm

    real = xllm.LLMExtractor._candidates
    seen = []

    def boom(self, answers, mc, *a, **k):
        seen.append(mc.message["message_id"])
        if len(seen) == 3:
            raise RuntimeError("injected failure")
        return real(self, answers, mc, *a, **k)

    monkeypatch.setattr(xllm.LLMExtractor, "_candidates", boom)
    with pytest.raises(StageFailed, match="injected failure"):
        run(db, export, server, "live", stages="4")
    assert len(server.chat_requests) == 3                   # calls were made and logged …
    assert dump_tables(db) == before                        # … and rolled back with the stage
    monkeypatch.undo()
    c4 = run(db, export, server, "live", stages="4")["4"]
    assert c4["llm_messages_sent"] == 5
    assert query(db, "SELECT COUNT(*) n FROM llm_extraction_calls")[0]["n"] == 5


def test_budget_exhaustion_keeps_rules_and_asks_again_next_time(tmp_path, export, server):
    db = tmp_path / "k.db"
    c4 = run(db, export, server, "live", budget={"max_calls_per_run": 2})["4"]
    assert c4["llm_items_failed_BUDGET_EXHAUSTED"] == 3 and c4["llm_incomplete_budget"] == 1
    runs = query(db, "SELECT status, raw_stats_json FROM llm_extraction_runs")
    assert runs[0]["status"] == "budget_exhausted"
    assert json.loads(runs[0]["raw_stats_json"])["items"]["skipped_budget"] == 3
    calls = query(db, "SELECT attempt_kind, error_code FROM llm_extraction_calls ORDER BY rowid")
    assert [c["attempt_kind"] for c in calls] == ["initial", "initial", "skipped", "skipped", "skipped"]
    methods = {r["extraction_method"] for r in facts(db) if r["role"] == "assistant" and r["object"] == "Hamburg"}
    assert "llm" not in methods                              # message 4 was never sent: rules only
    rules_only = {r["assertion_id"] for r in facts(db) if r["extraction_method"] == "rule_based"}
    assert rules_only
    # replay reproduces the budget-limited run exactly (the skips included)
    copy = tmp_path / "replay.db"
    shutil.copy(db, copy)
    before = assertion_tables(copy)
    run(copy, export, None, "replay", stages="4")
    assert assertion_tables(copy) == before
    # the fingerprint was marked incomplete: with a bigger budget the next run reads the rest
    c4 = run(db, export, server, "live", stages="4")["4"]
    assert c4.get("skipped_unchanged") is None and c4.get("llm_incomplete_budget") is None
    assert c4["llm_messages_sent"] == 5 and not c4.get("llm_items_failed")
    assert any(r["object"] == "Hamburg" and r["extraction_method"] in ("llm", "hybrid") for r in facts(db))
    assert run(db, export, server, "live", stages="4")["4"] == {"skipped_unchanged": 1}


def test_malformed_answers_get_one_repair_then_rules_only(tmp_path, export, server):
    from kenning.llm.testserver import Answer

    server.default_chat = Answer.text("not JSON at all")
    db = tmp_path / "k.db"
    c4 = run(db, export, server, "live")["4"]
    assert c4["llm_items_failed_MALFORMED_OUTPUT"] == 5
    kinds = [r["attempt_kind"] for r in query(db, "SELECT attempt_kind FROM llm_extraction_calls ORDER BY rowid")]
    assert kinds == ["initial", "repair"] * 5
    assert {r["extraction_method"] for r in facts(db)} == {"rule_based"}


# -- when the model is asked (A32), and the version ------------------------------------------------------------------

def test_model_is_asked_only_when_requested(tmp_path, export, server):
    db = tmp_path / "k.db"
    counts = run(db, export, server, None)                 # llm.mode auto + an endpoint, no --llm: rules only
    assert "llm_mode" not in counts["4"] and server.chat_requests == []
    assert query(db, "SELECT COUNT(*) n FROM llm_extraction_runs")[0]["n"] == 0
    c4 = run(db, export, server, None, stages="4",
             extra={"pipeline": {"assertion_extraction": {"enable_llm_assertion_extraction": True}}})["4"]
    assert c4["llm_mode"] == "live" and len(server.chat_requests) == 5
    rules_ev = counts["4"]["extractor_version"]
    assert c4["extractor_version"] != rules_ev and c4["llm_extractor_version"].startswith("ev1-")


def test_prompt_and_schema_are_versioned_files():
    from kenning.config import load_config
    from kenning.extract.llm import check_schema, load_schema_file, schema_text
    from kenning.llm.prompts import prompt_for
    from kenning.llm.version import extractor_version_parts

    cfg = load_config()
    p = prompt_for(cfg, cfg.assertions.llm.prompt)
    assert (p.name, p.version) == ("assertion_extract", 1) and p.variables() == {"predicates", "request"}
    assert json.loads(load_schema_file("assertion_extract", 1)) == json.loads(schema_text())
    assert len(check_schema(cfg)) == 64
    parts = extractor_version_parts(cfg, prompts=["assertion_extract"], llm_mode="live")
    assert parts["prompts"]["assertion_extract"] == p.sha256


def test_multi_run_keeps_the_majority_with_the_mean_confidence(tmp_path, export, server):
    def noisy(body):
        req = request_of(body)
        if not req["target"]["text"].startswith("Honestly"):
            return {"assertions": []}
        n = req["sample"]
        out = [claim("SPEAKER", "likes", lit("sailing"), "the thing I care most about is sailing",
                     modality="preference", confidence=[0.6, 0.7, 0.8][n - 1])]
        if n == 2:
            out.append(claim("SPEAKER", "likes", lit("weekends"), "sailing on weekends", modality="preference"))
        return {"assertions": out}

    server.default_chat = noisy
    db = tmp_path / "k.db"
    c4 = run(db, export, server, "live", extra={"pipeline": {"assertion_extraction": {"llm_multi_run_count": 3}}})["4"]
    assert len(server.chat_requests) == 15 and c4["llm_candidates_minority_dropped"] == 1
    [likes] = [r for r in facts(db) if r["extraction_method"] == "llm"]
    assert json.loads(likes["object_value"]) == "sailing" and likes["confidence_extraction"] == pytest.approx(0.7)
    copy = tmp_path / "replay.db"
    shutil.copy(db, copy)
    before = assertion_tables(copy)
    run(copy, export, None, "replay", stages="4",
        extra={"pipeline": {"assertion_extraction": {"llm_multi_run_count": 3}}})
    assert assertion_tables(copy) == before


def test_transcript_speakers_are_their_own_subjects(tmp_path, server):
    """In a transcript the model's SPEAKER is the turn's speaker (A10), human speakers are user-grounded whatever
    their stored role, and USER is refused where it could mean anyone."""
    from conftest import transcript_doc

    def people(body):
        req = request_of(body)
        t = req["target"]
        if t["text"].startswith("I started learning the violin"):
            assert t["speaker"] == "Ben" and t["role"] == "user"
            return {"assertions": [claim("SPEAKER", "plays", lit("violin"), "learning the violin", modality="fact"),
                                   claim("USER", "likes", lit("violin"), "the violin")]}
        return {"assertions": []}

    server.default_chat = people
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(transcript_doc()), encoding="utf-8")
    db = tmp_path / "t.db"
    with Vault.open(db, overrides=overrides(server)) as v:
        v.ingest([path], as_of=AS_OF, self_name="Ana", llm="live")
    [violin] = [r for r in facts(db) if r["predicate"] == "plays"]
    assert (violin["subject"], violin["asserted_role"], violin["extraction_method"]) == ("Ben", "user", "llm")
    reasons = [json.loads(e["context_json"])["reason"] for e in
               query(db, "SELECT context_json FROM run_events WHERE code='LLM_CANDIDATE_INVALID'")]
    assert reasons == ["USER_AMBIGUOUS"]
    assert len(server.chat_requests) == query(db, "SELECT COUNT(*) n FROM llm_extraction_calls")[0]["n"] >= 5


# -- the CLI ---------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_cli_live_then_replay_with_the_server_stopped(tmp_path, export, server, kenning_cli):
    db = tmp_path / "cli.db"
    env = {"KENNING_LLM_BASE_URL": server.base_url, "KENNING_LLM_MODEL": MODEL, "KENNING_LLM_API_KEY": KEY}
    cfg = tmp_path / "stage4-only.yaml"   # this scripted model answers stage 4 only (not 2A's NER, not seed 000)
    cfg.write_text("entities:\n  ner:\n    llm:\n      enabled: false\n", encoding="utf-8")
    only = ("--config", str(cfg), "--stages", "0,1,2A,2B,3,4")
    r = kenning_cli("ingest", str(export), *only, "--llm", "live", "--as-of", AS_OF, "--db", str(db), "--json",
                    env=env)
    assert r.returncode == 0, r.stderr
    stage4 = next(x for x in json.loads(r.stdout)["runs"] if x["stage"] == "4")
    assert stage4["counts"]["llm_mode"] == "live"
    facts_live = json.loads(kenning_cli("facts", "--json", "--db", str(db), env=env).stdout)
    assert {f["extraction_method"] for f in facts_live} == {"llm", "hybrid", "rule_based"}
    likes = next(f for f in facts_live if f["predicate"] == "likes" and f["asserted_role"] == "user")
    assert likes["quote"] == "the thing I care most about is sailing" and likes["extraction_method"] == "llm"
    before = assertion_tables(db)
    server.stop()
    r = kenning_cli("ingest", str(export), *only, "--llm", "replay", "--as-of", AS_OF, "--db", str(db), env=env)
    assert r.returncode == 0, r.stderr
    assert assertion_tables(db) == before
    edited = write_export(tmp_path / "v2.json", [conversation("c-llm", [*MESSAGES, ("user", "I moved to Lisbon.")])])
    r = kenning_cli("ingest", str(edited), *only, "--llm", "replay", "--as-of", AS_OF, "--db", str(db), env=env)
    assert r.returncode == 1
    out = " ".join((r.stdout + r.stderr).split())
    assert "no stored response for prompt assertion_extract@v1" in out and "unchanged" in out
