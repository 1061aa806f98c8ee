"""Stage 4 over the synthetic generator's corpus (kenning.bench.synth, n=12, seed 7): every planted fact of the
manifest is read as the claim it is, from the message it was planted in."""

from __future__ import annotations

import json

import orjson
import pytest

from exportkit import dump_tables, ingest, query

synth = pytest.importorskip("kenning.bench.synth")

# manifest case → (predicate, object, polarity, modality) of the claim Kenning makes of it
EXPECTED = {
    "residence_since": ("lives_in", "Berlin", "positive", "state"),
    "habit": ("habit", "running", "positive", "state"),
    "employment_undated": ("works_at", "Acme Corp", "positive", "state"),
    "misstatement_later_corrected": ("lives_in", "Porto", "positive", "state"),
    "correction": ("lives_in", "Lisbon", "positive", "state"),
    "question": ("learns", "Rust", "positive", "question"),
    "during_interval": ("located_in", "Lisbon", "positive", "state"),
    "intention": ("learns", "Japanese", "positive", "intention"),
    "residence_change": ("lives_in", "Paris", "positive", "state"),
    "assistant_claim_corroborated": ("lives_in", "Paris", "positive", "state"),
    "user_corroborates_assistant_claim": ("lives_in", "Paris", "positive", "state"),
    "negation_dated": ("lives_in", "Berlin", "negative", "state"),
    "negation_ambiguous": ("lives_in", "Berlin", "negative", "state"),
    "conflicting_residence_same_date": ("lives_in", None, "positive", "state"),
    "habit_stopped": (None, None, "negative", "state"),
    "past_habit": ("plays", "guitar", "positive", "state"),
    "duplicate_same_time": ("has_child", "Mia", "positive", "state"),
    "job_change_dated": ("works_at", "Globex", "positive", "state"),
    "until_hint": ("work_mode", "remote", "positive", "state"),
    "assistant_claim_uncorroborated": ("lives_in", "Munich", "positive", "state"),
    "sprinkled": (None, None, "positive", "state"),
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth4")
    synth.write_export(d / "export.json", 12, 7)
    db = d / "k.db"
    ingest(db, d / "export.json")
    return db, d / "export.json", json.loads((d / "export.manifest.json").read_text())


def _claims(db) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in query(db, "SELECT a.*, m.export_message_id, p.canonical_label AS predicate, "
                       "coalesce(o.canonical_name, json_extract(a.object_value, '$')) AS object, "
                       "t.surface_text AS q FROM assertions a JOIN messages m USING(message_id) "
                       "JOIN predicates p USING(predicate_id) LEFT JOIN entities o ON o.entity_id = a.object_entity_id "
                       "LEFT JOIN time_mentions t ON t.time_mention_id = a.temporal_qualifier_id"):
        out.setdefault(r["export_message_id"], []).append(r)
    return out


def test_every_planted_fact_is_read(vault):
    db, _, manifest = vault
    claims = _claims(db)
    checked = 0
    for fact in manifest["facts"]:
        case = fact["expected"]["case"]
        if case not in EXPECTED:
            continue
        pred, obj, pol, mod = EXPECTED[case]
        mine = claims.get(fact["message_id"], [])
        match = [c for c in mine if (pred is None or c["predicate"] == pred)
                 and (obj is None or c["object"] == obj) and c["polarity"] == pol and c["modality"] == mod]
        if case == "sprinkled":
            match = [c for c in mine if c["predicate"] == fact["expected"]["predicate"]]
        assert match, (case, fact["text"], [(c["predicate"], c["object"], c["polarity"], c["modality"]) for c in mine])
        role = "assistant" if fact["role"] == "assistant" else "user"
        assert all(c["asserted_role"] == role for c in match)
        checked += 1
    assert checked >= 25


def test_qualifiers_of_the_dated_facts(vault):
    db, _, manifest = vault
    claims = _claims(db)
    want = {"residence_since": ("since", "2019"), "residence_change": ("since", "March 2023"),
            "negation_dated": ("since", "April 2023"), "during_interval": ("during", "December 2022"),
            "job_change_dated": ("since", "January 2024"), "until_hint": ("until", "June 2024"),
            "conflicting_residence_same_date": ("at", "2018-06-01"), "employment_undated": (None, None)}
    for fact in manifest["facts"]:
        case = fact["expected"]["case"]
        if case not in want:
            continue
        pred, obj, pol, _ = EXPECTED[case]
        (c,) = [c for c in claims[fact["message_id"]] if c["predicate"] == pred and (obj is None or c["object"] == obj)
                and c["polarity"] == pol and (case != "conflicting_residence_same_date" or
                                              c["object"] == fact["expected"]["object"])]
        assert (c["temporal_qualifier_type"], c["q"]) == want[case], case


def test_lifecycle_links(vault):
    db, _, manifest = vault
    cases = {f["expected"]["case"]: f for f in manifest["facts"]}
    claims = _claims(db)
    # correction: the misstatement is superseded by the correction's claim
    (porto,) = [c for c in claims[cases["misstatement_later_corrected"]["message_id"]] if c["object"] == "Porto"]
    (lisbon,) = [c for c in claims[cases["correction"]["message_id"]] if c["object"] == "Lisbon"]
    assert (porto["superseded_by_assertion_id"], porto["supersession_type"]) == (lisbon["assertion_id"], "correction")
    rets = query(db, "SELECT r.*, m.export_message_id FROM retractions r JOIN messages m "
                     "ON m.message_id = r.retraction_message_id")
    # "Actually, that's not true." after one claim (the cat): linked; after two (Anna's news): ambiguous
    by_msg = {r["export_message_id"]: r for r in rets}
    unique = by_msg[cases["retraction_unique"]["message_id"]]
    (cat,) = [c for m, cs in claims.items() for c in cs if c["object"] == "cat"]
    assert (unique["target_assertion_id"], unique["target_fact_key"]) == (cat["assertion_id"], cat["fact_key"])
    ambiguous = by_msg[cases["retraction_after_two_facts"]["message_id"]]
    assert ambiguous["target_assertion_id"] is None and ambiguous["target_fact_key"] is None
    assert len(orjson.loads(ambiguous["raw_retraction_json"])["target"]["candidate_fact_keys"]) == 2
    scratch = by_msg[cases["retraction_scratch_that"]["message_id"]]
    (target,) = query(db, "SELECT a.*, json_extract(a.object_value, '$') AS v FROM assertions a WHERE assertion_id=?",
                      (scratch["target_assertion_id"],))
    assert target["v"] == "Blue Garden open day" and target["modality"] == "intention"
    (stopped,) = [r for r in rets if r["surface_text"] == "I stopped running"]
    (ran,) = query(db, "SELECT m.export_message_id FROM assertions a JOIN messages m USING(message_id) "
                       "WHERE a.assertion_id=?", (stopped["target_assertion_id"],))
    assert ran["export_message_id"] in {f["message_id"] for f in manifest["facts"] if f["text"].startswith("I run")}


def test_bio_memory_write_and_hidden_content(vault):
    db, _, manifest = vault
    bio = [f for f in manifest["facts"] if f["expected"]["case"] == "assistant_memory_write"][0]
    mine = {(c["predicate"], c["object"], c["has_user_corroboration"]) for c in _claims(db)[bio["message_id"]]}
    assert mine == {("lives_in", "Paris", 1), ("works_at", "Globex", 1)}
    hidden = query(db, "SELECT COUNT(*) n FROM assertions a JOIN message_parts p USING(message_id) "
                       "WHERE json_extract(p.metadata_json, '$.context_kind') IN ('hidden_reasoning', 'reasoning_recap')")
    assert hidden[0]["n"] == 0
    assert not query(db, "SELECT 1 FROM assertions a JOIN messages m USING(message_id) WHERE m.role IN "
                         "('system', 'tool', 'unknown')")


def test_spans_and_rerun(vault):
    db, export, _ = vault
    for r in query(db, "SELECT a.char_start, a.char_end, a.surface_text, m.text_raw FROM assertions a "
                       "JOIN messages m USING(message_id)"):
        assert r["text_raw"][r["char_start"]:r["char_end"]] == r["surface_text"]
    before = dump_tables(db)
    res = ingest(db, export, as_of="2025-03-01T00:00:00Z")
    assert {r.stage: r.counts for r in res}["4"] == {"skipped_unchanged": 1}
    assert dump_tables(db) == before
