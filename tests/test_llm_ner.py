"""LLM NER through the model layer (seed 001 §2A.5.4; docs/decisions.md E27–E29): `kenning ingest --llm live`
makes stage 2A ask the model for names in batched requests, every call logged in llm_extraction_calls and the
run in ner_model_runs; spans are found by Kenning in text_raw; `--llm replay` with the server stopped
reproduces the same mentions; a missing stored answer is a clear error. Tests run the real CLI against the
scripted OpenAI-compatible test server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import orjson
import pytest

from exportkit import conversation, query, write_export
from kenning.detect.llm_ner import NerBatchOut, find_spans
from kenning.llm.testserver import Answer

EMOJI = "🎉👍🏽 e\u0301 "          # astral emoji, a skin-tone modifier and a combining mark before the name
T0 = 1_710_000_000.0
MODEL = "kenning-test-model"
DETECTOR = f"NER:llm-{MODEL}"
TEST_KEY = "sk-kenning-test-SECRET-0123456789"

# What the fake model knows: exact surfaces with a label, plus a mis-cased one it "hallucinates".
KNOWN = {"Zoë Kowalczyk": "PERSON", "Anna Berg": "PERSON", "Vellmar Analytics": "ORG", "Lisbon": "GPE",
         "Phoenix": "ORG", "Kindle Scribe": "PRODUCT", "Tobias": "PERSON"}
GHOST = {"Zoë Kowalczyk": "zoe kowalczyk"}   # also returned, not verbatim in the text → spanless


def items_of(body: dict) -> list[dict]:
    text = body["messages"][-1]["content"]
    start = text.index("Items:\n") + len("Items:\n")
    end = text.index("\n\nAnswer with JSON only")
    return json.loads(text[start:end])


def fake_model(body: dict) -> dict:
    out = []
    for item in items_of(body):
        ents = [{"text": s, "label": lab} for s, lab in KNOWN.items() if s in item["text"]]
        ents += [{"text": g, "label": "PERSON"} for s, g in GHOST.items() if s in item["text"]]
        out.append({"id": item["id"], "entities": ents})
    return {"items": out}


def export_convs() -> list[dict]:
    conv_a = conversation("conv-a", [
        ("user", f"{EMOJI}Zoë Kowalczyk joined Vellmar Analytics. Project Phoenix kicks off in Lisbon."),
        ("assistant", "Congrats to Zoë Kowalczyk! Project Phoenix sounds exciting; Lisbon is lovely."),
        ("user", "Code:\n```python\nowner = 'Tobias'  # Tobias in a fence\n```\nProject Phoenix again, "
                 "with Dr. Anna Berg and my Kindle Scribe."),
    ], start=T0)
    conv_b = conversation("conv-b", [
        ("user", "Project Phoenix status: Anna Berg approved it."),
        ("user", "Nothing with a name here."),
        ("user", "Project Phoenix ships soon, says Zoë Kowalczyk."),
    ], start=T0 + 86400 * 10)
    conv_c = conversation("conv-c", [("user", "Zoë Kowalczyk relaxed in Lisbon.", None)], start=T0 + 86400 * 20)
    return [conv_a, conv_b, conv_c]


def env_for(server) -> dict[str, str]:
    return {"KENNING_LLM_BASE_URL": server.base_url, "KENNING_LLM_MODEL": MODEL, "KENNING_LLM_API_KEY": TEST_KEY}


def ingest(kenning_cli, export: Path, db: Path, llm: str, env: dict | None = None, as_of="2024-12-31T00:00:00Z"):
    return kenning_cli("ingest", str(export), "--db", str(db), "--stages", "0-3", "--llm", llm, "--as-of", as_of,
                       "--json", env=env)


def mentions(db: Path) -> list[tuple]:
    """Every mention (the LEXICON detector without its build id: each 2B rebuild is a new build)."""
    return [tuple(r.values()) for r in query(
        db, "SELECT message_id, CASE WHEN detector LIKE 'LEXICON:%' THEN 'LEXICON' ELSE detector END, "
            "entity_type_hint, char_start, char_end, surface_text, confidence, entity_id FROM entity_mentions "
            "ORDER BY message_id, char_start, detector")]


def test_find_spans_word_boundaries_and_code_points():
    text = f"{EMOJI}Ann met Anna; Anna-Lena and Annabel. C++ and C#."
    assert [text[s:e] for s, e in find_spans(text, "Anna")] == ["Anna", "Anna"]   # not inside Annabel
    assert find_spans(text, "Anna")[0][0] == text.index("Anna") == len(EMOJI) + 8
    assert [text[s:e] for s, e in find_spans(text, "C++")] == ["C++"]
    assert find_spans(text, "anna") == [] and find_spans(text, "") == []


def test_schema_takes_odd_labels_and_requires_ids():
    v = NerBatchOut.model_validate({"items": [{"id": 1, "entities": [{"text": "X", "label": "WORK_OF_ART"}]}]})
    assert v.items[0].entities[0].label == "WORK_OF_ART"
    with pytest.raises(Exception):
        NerBatchOut.model_validate({"items": [{"entities": []}]})


@pytest.fixture
def live_vault(tmp_path: Path, llm_server, kenning_cli):
    llm_server.default_chat = fake_model
    export = write_export(tmp_path / "conversations.json", export_convs())
    db = tmp_path / "k.db"
    res = ingest(kenning_cli, export, db, "live", env_for(llm_server))
    assert res.returncode == 0, res.stderr + res.stdout
    return db, export, json.loads(res.stdout)


def test_live_llm_ner_mentions_offsets_and_logs(live_vault, llm_server):
    db, _, report = live_vault
    texts = {r["message_id"]: r["text_raw"] for r in query(db, "SELECT message_id, text_raw FROM messages")}
    cands = query(db, "SELECT * FROM entity_mention_candidates WHERE detector=?", (DETECTOR,))
    assert cands, "the model's names must become candidates"
    for c in cands:  # invariant 1 for the model's spans, after astral emoji and combining marks
        if c["char_start"] is not None:
            assert texts[c["message_id"]][c["char_start"]:c["char_end"]] == c["surface_text"]
    won = {(r["surface_text"], r["entity_type_hint"]) for r in
           query(db, "SELECT * FROM entity_mentions WHERE detector=?", (DETECTOR,))}
    # E12 label mapping (GPE → LOCATION); PRODUCT is outside the default ner_label_allowlist
    assert {("Zoë Kowalczyk", "PERSON"), ("Vellmar Analytics", "ORG")} <= won
    first = query(db, "SELECT em.char_start FROM entity_mentions em JOIN messages m USING(message_id) "
                      "WHERE em.surface_text='Zoë Kowalczyk' AND m.text_raw LIKE ?", (EMOJI + "%",))
    assert [r["char_start"] for r in first] == [len(EMOJI)]
    assert not any(s == "Kindle Scribe" for s, _ in won)
    io = "".join(r["output_json"] for r in query(db, "SELECT output_json FROM ner_model_run_io"))
    assert "Kindle Scribe" in io and "PRODUCT" in io             # kept in the raw I/O
    # a name inside a code fence is a candidate but never a mention (invariant 12)
    tob = [c for c in cands if c["surface_text"] == "Tobias"]
    assert len(tob) == 2 and {c["suppression_reason"] for c in tob} == {"INTERSECTS_CODE_FENCE"}
    # the model's non-verbatim name: kept without offsets, ineligible, warned (invariant 2, E3)
    ghost = [c for c in cands if c["surface_text"] == "zoe kowalczyk"]
    assert ghost and all(c["char_start"] is None and c["is_eligible"] == 0
                         and c["suppression_reason"] == "NO_OFFSETS_UNRELIABLE" for c in ghost)
    warns = query(db, "SELECT code, context_json FROM run_events WHERE code='OFFSET_UNRELIABLE'")
    assert any(DETECTOR in w["context_json"] for w in warns)
    # lexicon beats NER (E9): "Project Phoenix" is a selected term, the model's "Phoenix" loses to it
    lex = query(db, "SELECT term_key FROM lexicon_terms")
    assert "project phoenix" in {r["term_key"] for r in lex}
    phx = [c for c in cands if c["surface_text"] == "Phoenix"]
    assert phx and all(c["suppression_reason"] == "OVERLAP_HIGHER_SCORE" for c in phx)
    by = {r["candidate_id"]: r["detector"] for r in query(db, "SELECT candidate_id, detector FROM "
                                                              "entity_mention_candidates")}
    assert all(by[c["suppressed_by_candidate_id"]].startswith("LEXICON:") for c in phx)
    # rules NER and the model both find "Anna Berg" after "Dr.": one winner, the other suppressed by it
    anna = query(db, "SELECT detector, confidence, suppression_reason FROM entity_mention_candidates c "
                     "JOIN messages m USING(message_id) WHERE c.surface_text='Anna Berg' AND m.text_raw LIKE '%Dr.%'")
    assert {a["detector"] for a in anna} == {DETECTOR, "NER:kenning-rules"}
    assert sorted(a["suppression_reason"] or "" for a in anna) == ["", "OVERLAP_HIGHER_SCORE"]
    # runs: ner_model_runs (seed §2A.1) points at the model layer's run, whose calls are all logged
    [run] = query(db, "SELECT * FROM ner_model_runs WHERE model_name=?", (f"llm-{MODEL}",))
    assert run["model_version"].startswith("ev1-") and run["completed_at_utc"]
    summary = orjson.loads(run["raw_io_json"])
    [llm_run] = query(db, "SELECT * FROM llm_extraction_runs WHERE name='ner'")
    assert summary["llm"]["llm_run_id"] == llm_run["run_id"] and llm_run["extractor_version"] == run["model_version"]
    assert llm_run["messages_processed"] == 7
    calls = query(db, "SELECT * FROM llm_extraction_calls WHERE run_id=?", (llm_run["run_id"],))
    # batching: one request per conversation here (≤ 8 messages, ≤ 8000 characters)
    assert len(calls) == 3 == len(llm_server.chat_requests) == summary["llm"]["requests"]
    assert all(c["prompt_name"] == "ner_entities" and c["mode"] == "live" and c["parse_success"] == 1
               for c in calls)
    assert TEST_KEY not in json.dumps(calls)
    sent = Counter(len(items_of(r["body"])) for r in llm_server.chat_requests)
    assert sent == Counter({3: 2, 1: 1})   # "Nothing with a name here." is sent too; its empty answer is fine
    counts = next(r["counts"] for r in report["runs"] if r["stage"] == "2A")
    assert counts["llm_ner"]["requests"] == 3 and counts["ner_runs"] == 2


def test_replay_with_server_stopped_reproduces_mentions(live_vault, llm_server, kenning_cli):
    db, export, _ = live_vault
    live = mentions(db)
    n = len(llm_server.chat_requests)
    # a run without the model re-detects every message (the LLM's mentions go) ...
    res = ingest(kenning_cli, export, db, "none", as_of="2025-01-01T00:00:00Z")
    assert res.returncode == 0, res.stderr
    without = mentions(db)
    assert without != live and not any(m[1] == DETECTOR for m in without)
    # ... and replay, with the server stopped, brings back exactly the live mentions, entities included
    llm_server.stop()
    res = ingest(kenning_cli, export, db, "replay", {"KENNING_LLM_MODEL": MODEL}, as_of="2025-01-02T00:00:00Z")
    assert res.returncode == 0, res.stderr + res.stdout
    assert mentions(db) == live
    assert len(llm_server.chat_requests) == n
    modes = Counter(r["mode"] for r in query(db, "SELECT mode FROM llm_extraction_calls"))
    assert modes == Counter({"live": 3, "replay": 3})
    # and a rerun in replay mode changes nothing at all (the LLM NER version is the same as live)
    before = query(db, "SELECT COUNT(*) n FROM llm_extraction_runs")[0]["n"]
    res = ingest(kenning_cli, export, db, "replay", {"KENNING_LLM_MODEL": MODEL}, as_of="2025-01-03T00:00:00Z")
    assert res.returncode == 0 and mentions(db) == live
    assert query(db, "SELECT COUNT(*) n FROM llm_extraction_runs")[0]["n"] == before


def test_replay_without_a_stored_answer_is_a_clear_error(tmp_path: Path, kenning_cli):
    export = write_export(tmp_path / "conversations.json", export_convs())
    db = tmp_path / "k.db"
    res = ingest(kenning_cli, export, db, "replay", {"KENNING_LLM_MODEL": MODEL})
    assert res.returncode == 1
    err = res.stdout + res.stderr
    assert "stage 2A failed and was rolled back" in err and "no stored response for prompt ner_entities" in err
    assert "Traceback" not in err
    assert query(db, "SELECT COUNT(*) n FROM entity_mention_candidates")[0]["n"] == 0
    assert query(db, "SELECT COUNT(*) n FROM llm_extraction_calls")[0]["n"] == 0


def test_backend_llm_without_a_model_is_a_clear_error(tmp_path: Path, kenning_cli):
    export = write_export(tmp_path / "conversations.json", export_convs())
    cfg = tmp_path / "c.yaml"
    cfg.write_text("entities:\n  ner:\n    backend: llm\n", encoding="utf-8")
    res = kenning_cli("ingest", str(export), "--db", str(tmp_path / "k.db"), "--config", str(cfg), "--stages", "0-2A",
                      "--llm", "none")
    assert res.returncode == 1
    assert "entities.ner.backend is 'llm' but this run has no model" in res.stdout + res.stderr


def test_failed_request_is_logged_and_retried_next_run(tmp_path: Path, llm_server, llm_config):
    """A malformed answer (after the one repair) gives that batch no names and marks its messages for another try;
    the next live run asks again and then the stage is stable."""
    from kenning.api import Vault

    export = write_export(tmp_path / "conversations.json", export_convs()[:1])
    llm_server.script_chat(Answer.text("not json"), Answer.text("still not json"))
    llm_server.default_chat = fake_model
    with Vault.open(tmp_path / "k.db") as v:
        v.config = llm_config(llm_server)
        r = {x.stage: x for x in v.ingest([export], as_of="2024-12-31T00:00:00Z", stages="0-2A", llm="live")}
        assert r["2A"].counts["messages_ner_retry"] == 3
        assert not v.conn.execute("SELECT 1 FROM entity_mentions WHERE detector=?", (DETECTOR,)).fetchall()
        calls = v.conn.execute("SELECT attempt_kind, error_code FROM llm_extraction_calls ORDER BY rowid").fetchall()
        assert [c[0] for c in calls] == ["initial", "repair"] and calls[-1][1] == "MALFORMED_OUTPUT"
        io = v.conn.execute("SELECT output_json FROM ner_model_run_io io JOIN ner_model_runs r USING(run_id) "
                            "WHERE r.model_name=?", (f"llm-{MODEL}",)).fetchall()
        assert io and all('"error":"MALFORMED_OUTPUT"' in o[0] for o in io)
        r = {x.stage: x for x in v.ingest([export], as_of="2025-01-01T00:00:00Z", stages="0-2A", llm="live")}
        assert r["2A"].counts.get("messages_ner_retry", 0) == 0 and r["2A"].counts["messages_processed"] == 3
        assert v.conn.execute("SELECT COUNT(*) FROM entity_mentions WHERE detector=?", (DETECTOR,)).fetchone()[0] > 0
        r = {x.stage: x for x in v.ingest([export], as_of="2025-01-02T00:00:00Z", stages="0-2A", llm="live")}
        assert r["2A"].counts.get("messages_processed", 0) == 0


def test_llm_ner_only_and_products_when_allowed(tmp_path: Path, llm_server, llm_config):
    """backend: llm runs the model alone; adding PRODUCT to ner_label_allowlist makes products mentions."""
    from kenning.api import Vault

    llm_server.default_chat = fake_model
    export = write_export(tmp_path / "conversations.json", export_convs())
    with Vault.open(tmp_path / "k.db") as v:
        v.config = llm_config(llm_server, {"entities": {"ner": {"backend": "llm"}},
                                           "pipeline": {"entity_detection": {
                                               "ner_label_allowlist": ["PERSON", "ORG", "LOCATION", "PRODUCT"]}}})
        v.ingest([export], as_of="2024-12-31T00:00:00Z", stages="0-2A", llm="live")
        dets = {r[0] for r in v.conn.execute("SELECT DISTINCT detector FROM entity_mention_candidates "
                                             "WHERE detector LIKE 'NER:%'")}
        assert dets == {DETECTOR}
        prods = v.conn.execute("SELECT surface_text, entity_type_hint FROM entity_mentions WHERE detector=? AND "
                               "entity_type_hint='PRODUCT'", (DETECTOR,)).fetchall()
        assert prods == [("Kindle Scribe", "PRODUCT")]
        [(n,)] = v.conn.execute("SELECT COUNT(*) FROM ner_model_runs").fetchall()
        assert n == 1


def test_injected_failure_rolls_back_llm_calls_too(tmp_path: Path, llm_server, llm_config, monkeypatch):
    """Stage 2A is one transaction: a failure after the model answered leaves no calls, runs or mentions."""
    from kenning.api import Vault
    from kenning.pipeline.runner import StageFailed
    from kenning.store import mentions as msql

    llm_server.default_chat = fake_model
    export = write_export(tmp_path / "conversations.json", export_convs())
    with Vault.open(tmp_path / "k.db") as v:
        v.config = llm_config(llm_server)
        v.ingest([export], as_of="2024-12-31T00:00:00Z", stages="0-1")

        def boom(*a, **k):
            raise RuntimeError("injected")

        monkeypatch.setattr(msql, "upsert_detect_states", boom)
        with pytest.raises(StageFailed):
            v.ingest([export], as_of="2024-12-31T00:00:00Z", stages="2A", llm="live")
        assert llm_server.chat_requests  # the model was asked ...
        for t in ("llm_extraction_calls", "llm_extraction_runs", "ner_model_runs", "ner_model_run_io",
                  "entity_mention_candidates", "time_mentions", "detect_message_state"):
            assert v.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0, t  # ... and nothing stayed


# ---- a user-supplied spaCy pipeline (issue 4 "Names": the NER interface accepts a spaCy pipeline) -------------

def _ruler_pipeline():
    spacy = pytest.importorskip("spacy")  # installed by the `ner` extra (pyproject: spacy>=3.7,<4)
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PERSON", "pattern": "Zoë Kowalczyk"}, {"label": "GPE", "pattern": "Lisbon"},
                        {"label": "ORG", "pattern": "Vellmar Analytics"}])
    return nlp


def test_spacy_pipeline_saved_to_disk_runs_through_the_cli(tmp_path: Path, kenning_cli):
    nlp = _ruler_pipeline()
    nlp.to_disk(tmp_path / "my-pipeline")
    export = write_export(tmp_path / "conversations.json", export_convs())
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"entities:\n  ner:\n    backend: spacy\n    spacy_model: {json.dumps(str(tmp_path / 'my-pipeline'))}\n",
                   encoding="utf-8")
    db = tmp_path / "k.db"
    res = kenning_cli("ingest", str(export), "--db", str(db), "--config", str(cfg), "--stages", "0-3", "--llm", "none")
    assert res.returncode == 0, res.stderr
    got = query(db, "SELECT detector, entity_type_hint, surface_text, char_start, message_id FROM entity_mentions "
                    "WHERE detector LIKE 'NER:%'")
    assert {r["detector"] for r in got} == {"NER:spacy-en_pipeline"}   # named by the pipeline, not its path
    assert {(r["surface_text"], r["entity_type_hint"]) for r in got} == {
        ("Zoë Kowalczyk", "PERSON"), ("Lisbon", "LOCATION"), ("Vellmar Analytics", "ORG")}
    texts = {r["message_id"]: r["text_raw"] for r in query(db, "SELECT message_id, text_raw FROM messages")}
    assert all(texts[r["message_id"]][r["char_start"]:r["char_start"] + len(r["surface_text"])] == r["surface_text"]
               for r in got)
    [run] = query(db, "SELECT model_name, model_version, config_json FROM ner_model_runs")
    assert run["model_name"] == "spacy-en_pipeline" and "spacy" in run["model_version"]
    assert '"pipes":["entity_ruler"]' in run["config_json"]
    ent = query(db, "SELECT canonical_name FROM entities WHERE entity_type='PERSON' AND entity_key='zoë kowalczyk'")
    assert ent and ent[0]["canonical_name"] == "Zoë Kowalczyk"


def test_spacy_pipeline_object_injected_into_stage_2a(tmp_path: Path):
    """The API path: a Language object the caller built is the stage's backend (no model package needed)."""
    from kenning.api import Vault
    from kenning.detect.ner import SpacyNerBackend
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stage2a import EntityTimeDetection

    backend = SpacyNerBackend(_ruler_pipeline(), 0.7, "my_ruler")
    export = write_export(tmp_path / "conversations.json", export_convs())
    with Vault.open(tmp_path / "k.db") as v:
        v.ingest([export], as_of="2024-12-31T00:00:00Z", stages="0-1")
        r = run_stage(v.conn, EntityTimeDetection(ner_backend=backend), v.config, Clock.from_option("2024-12-31T00:00:00Z"))
        assert r.counts["ner_runs"] == 1
        rows = v.conn.execute("SELECT surface_text, entity_type_hint, confidence FROM entity_mentions WHERE "
                              "detector='NER:spacy-my_ruler' ORDER BY surface_text").fetchall()
        assert ("Lisbon", "LOCATION", 0.7) in rows and ("Zoë Kowalczyk", "PERSON", 0.7) in rows


def test_same_input_same_clock_same_answers_give_identical_tables(tmp_path: Path, llm_server, llm_config):
    """Determinism with the model (seed 001 invariant 5): two vaults, the same export, clock and answers → the same
    rows everywhere, the call log included once its timing and the server's completion ids (response bodies; the
    parsed answers are compared) are set aside."""
    from exportkit import dump_tables
    from kenning.api import Vault

    llm_server.default_chat = fake_model
    export = write_export(tmp_path / "conversations.json", export_convs())
    dumps = []
    for name in ("a", "b"):
        with Vault.open(tmp_path / f"{name}.db") as v:
            v.config = llm_config(llm_server)
            v.ingest([export], as_of="2024-12-31T00:00:00Z", stages="0-3", llm="live")
        d = dump_tables(tmp_path / f"{name}.db")
        cols = [r["name"] for r in query(tmp_path / f"{name}.db", "SELECT name FROM pragma_table_info('llm_extraction_calls')")]
        timing = {cols.index(c) for c in ("latency_ms", "raw_io_json", "response_json")}
        d["llm_extraction_calls"] = [tuple(x for i, x in enumerate(r) if i not in timing) for r in d["llm_extraction_calls"]]
        dumps.append(d)
    assert dumps[0]["entity_mentions"] and dumps[0]["llm_extraction_calls"]
    diff = sorted(t for t in dumps[0] if dumps[0][t] != dumps[1].get(t))
    assert diff in ([], ["llm_extraction_runs"]), diff
    if diff:  # only the run's stats (latencies) may differ
        a, b = dumps[0]["llm_extraction_runs"], dumps[1]["llm_extraction_runs"]
        assert [r[0] for r in a] == [r[0] for r in b]
