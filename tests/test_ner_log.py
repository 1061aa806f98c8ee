"""Stage 2A's NER log (docs/decisions.md N10–N11): the rules backend is replayed by rerunning it, so its run keeps
no per-message raw output; what it left out early is exactly what the label allowlist would have dropped."""

from __future__ import annotations

import json
import random

from entity_corpus import corpus
from exportkit import ingest, query, write_export
from kenning.bench.synth import write_export as write_synth
from kenning.detect.ner import ReplayNerBackend, RulesNerBackend, run_chunked

TEXTS = [
    "My partner Sam and I moved to Lisbon. Sam said the \"Blue Garden\" is lovely.",
    "Dr. Smith works at Acme Corp. I met Professor Jane Doe at University of Porto in March.",
    "The Project Phoenix team at Globex Corporation: Anna, Tom and my sister Anna.",
    "",
    "no capitals here at all",
    "\"Quoted Title\" and \"another one\" — WHO, NASA, IBM; Mr. T. McDonald visited Berlin yesterday.",
]


def _texts() -> list[str]:
    out = list(TEXTS)
    for conv in corpus():
        for node in conv["mapping"].values():
            parts = ((node.get("message") or {}).get("content") or {}).get("parts") or []
            out.extend(p for p in parts if isinstance(p, str))
    return out


def test_detect_kept_is_detect_filtered_by_label():
    rules = RulesNerBackend()
    rng = random.Random(5)
    labels = list(RulesNerBackend.labels)
    keeps = [frozenset({"PERSON", "ORG", "LOCATION"}), frozenset(labels), frozenset(),
             *(frozenset(rng.sample(labels, rng.randrange(1, 5))) for _ in range(6))]
    checked = 0
    for text in _texts():
        full = rules.detect(text)
        for keep in keeps:
            kept, dropped = rules.detect_kept(text, keep)
            assert [s.as_raw() + [s.extra] for s in kept] == \
                   [s.as_raw() + [s.extra] for s in full if s.label in keep], (text, keep)
            assert dropped == sum(1 for s in full if s.label not in keep)
            checked += len(full)
    assert checked > 100  # the corpus gave spans of every kind to compare


def test_chunked_run_without_log_gives_the_logged_spans():
    text = " ".join(_texts())
    rules = RulesNerBackend()
    logged = run_chunked(rules, text, 300, 60)
    keep = frozenset({"PERSON", "ORG", "LOCATION"})
    quiet = run_chunked(rules, text, 300, 60, keep, log=False)
    assert len(logged.chunks) == len(quiet.chunks) > 3
    assert all(set(c) == {"offset", "length"} for c in quiet.chunks)
    assert all("input_sha256" in c and "spans" in c for c in logged.chunks)
    want = [(s.as_raw(), s.extra) for s in logged.spans if s.label in keep]
    assert [(s.as_raw(), s.extra) for s in quiet.spans] == want
    assert quiet.dropped == len(logged.spans) - len(want) > 0


def test_rules_run_keeps_no_per_message_log_and_rerunning_it_replays_the_stage(tmp_path):
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "c.json", corpus()))
    assert query(db, "SELECT COUNT(*) n FROM ner_model_run_io")[0]["n"] == 0
    run = query(db, "SELECT model_name, model_version, raw_io_json FROM ner_model_runs")
    assert [(r["model_name"], r["model_version"]) for r in run] == [("kenning-rules", "1")]
    summary = json.loads(run[0]["raw_io_json"])
    assert summary["io_table"] is None and summary["replay"] == "rerun" and summary["messages"] > 10
    # The replay: the same backend version over each message's text_raw gives the stage's NER candidates.
    stored: dict[str, set] = {}
    for r in query(db, "SELECT message_id, char_start, char_end, entity_type_hint, surface_text, confidence, "
                       "raw_candidate_json FROM entity_mention_candidates WHERE detector = 'NER:kenning-rules'"):
        stored.setdefault(r["message_id"], set()).add(
            (r["char_start"], r["char_end"], r["entity_type_hint"], r["surface_text"], r["confidence"],
             json.loads(r["raw_candidate_json"])["label"]))
    replayed: dict[str, set] = {}
    n_raw = 0
    for r in query(db, "SELECT message_id, text_raw FROM messages WHERE text_raw IS NOT NULL AND trim(text_raw) <> ''"):
        res = run_chunked(RulesNerBackend(), r["text_raw"], 10000, 1000)
        n_raw += len(res.spans)
        got = {(s.start, s.end, s.label, s.text, s.confidence, s.label) for s in res.spans
               if s.label in ("PERSON", "ORG", "LOCATION")}
        if got:
            replayed[r["message_id"]] = got
    assert stored and replayed == stored
    assert summary["spans_raw"] == n_raw  # the run's counts check a replay as a whole


def test_replay_backend_still_answers_from_a_logged_run():
    text = TEXTS[0] + " " + TEXTS[1]
    live = run_chunked(RulesNerBackend(), text, 40, 10)
    outputs = {c["input_sha256"]: c["spans"] for c in live.chunks}
    replay = run_chunked(ReplayNerBackend("kenning-rules", "1", outputs), text, 40, 10)
    assert [s.as_raw() for s in replay.spans] == [s.as_raw() for s in live.spans]


def test_synthetic_vault_rules_candidates_unchanged_by_the_early_drop(tmp_path):
    """The stage's candidates with the early drop equal those from the full detect() output filtered after."""
    export = tmp_path / "s.json"
    write_synth(export, 8, 3)
    db = tmp_path / "k.db"
    ingest(db, export)
    rows = query(db, "SELECT c.message_id, c.char_start, c.char_end, c.entity_type_hint, c.confidence, m.text_raw "
                     "FROM entity_mention_candidates c JOIN messages m USING (message_id) "
                     "WHERE c.detector = 'NER:kenning-rules' ORDER BY c.message_id, c.char_start")
    assert rows
    by_msg: dict[str, list] = {}
    for r in rows:
        by_msg.setdefault(r["message_id"], []).append((r["char_start"], r["char_end"], r["entity_type_hint"],
                                                       r["confidence"]))
    for mid, got in by_msg.items():
        text = next(r["text_raw"] for r in rows if r["message_id"] == mid)
        want = {(s.start, s.end, s.label, s.confidence) for s in run_chunked(RulesNerBackend(), text, 10000, 1000).spans
                if s.label in ("PERSON", "ORG", "LOCATION")}
        assert set(got) == want
