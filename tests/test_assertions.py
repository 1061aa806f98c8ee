"""Stage 4 over a hand-built export: seed 001 invariants 17–18 and the stage-4 lifecycle cases of digest §C."""

from __future__ import annotations

import hashlib
import json
import unicodedata

import orjson
import pytest

from assertion_corpus import corpus
from exportkit import ingest, query, write_export
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize

IDS = IdFactory()


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("assertions")
    db = d / "k.db"
    results = ingest(db, write_export(d / "export.json", corpus()))
    return db, {r.stage: r for r in results}


FACTS_SQL = """
SELECT a.*, s.canonical_name AS subject, p.canonical_label AS predicate, o.canonical_name AS object,
       m.conversation_id AS conv, m.role AS message_role, m.text_raw, t.surface_text AS qualifier_surface
FROM assertions a JOIN predicates p USING(predicate_id) JOIN entities s ON s.entity_id = a.subject_entity_id
LEFT JOIN entities o ON o.entity_id = a.object_entity_id JOIN messages m USING(message_id)
LEFT JOIN time_mentions t ON t.time_mention_id = a.temporal_qualifier_id
"""


def facts(db, where: str = "1=1", params=()) -> list[dict]:
    return query(db, FACTS_SQL + " WHERE " + where + " ORDER BY m.conversation_id, m.order_index, a.char_start",
                 params)


def obj(f: dict):
    return f["object"] if f["object"] is not None else (json.loads(f["object_value"]) if f["object_value"] else None)


def one(db, conv: str, predicate: str, value=None, **cols) -> dict:
    found = [f for f in facts(db, "m.conversation_id = ?", (conv,)) if f["predicate"] == predicate
             and (value is None or obj(f) == value) and all(f[k] == v for k, v in cols.items())]
    assert len(found) == 1, (conv, predicate, value, [(x["predicate"], obj(x)) for x in facts(db, "m.conversation_id=?", (conv,))])
    return found[0]


# -- invariants ------------------------------------------------------------------------------------------------------

def test_invariant17_object_forms_signatures_keys_and_roles(vault):
    db, _ = vault
    rows = facts(db)
    assert len(rows) >= 25
    keys = set()
    for r in rows:
        forms = [r["object_entity_id"] is not None,
                 r["object_value_type"] is not None and r["object_value"] is not None,
                 r["object_entity_id"] is None and r["object_value_type"] is None and r["object_value"] is None]
        assert sum(forms) == 1, r
        if r["object_entity_id"]:
            assert r["object_signature"] == "E:" + r["object_entity_id"]
        elif r["object_value_type"]:
            value = json.loads(r["object_value"])
            assert r["object_value"] == canonicalize(value)
            assert r["object_signature"] == "V:" + hashlib.sha256(
                canonicalize([r["object_value_type"], value]).encode()).hexdigest()
        else:
            assert r["object_signature"] == "N:__NONE__" and r["object_detection_tier"] is None
        for c in ("confidence_extraction", "confidence_grounding", "confidence_final"):
            assert 0 <= r[c] <= 1
        assert r["message_role"] in ("user", "assistant") and r["asserted_role"] in ("user", "assistant")
        assert r["assertion_key"] not in keys
        keys.add(r["assertion_key"])
        # spans are exact: the quote is the stored text
        assert r["text_raw"][r["char_start"]:r["char_end"]] == r["surface_text"]


def test_invariant17_ids_and_keys_recompute(vault):
    db, _ = vault
    for r in facts(db):
        key = canonicalize([r["message_id"], r["subject_entity_id"], r["predicate_id"], r["object_signature"],
                            r["char_start"] if r["char_start"] is not None else "__NULL__", r["modality"],
                            r["polarity"]])
        assert r["assertion_key"] == key
        assert r["fact_key"] == canonicalize([r["subject_entity_id"], r["predicate_id"], r["object_signature"]])
        raw_hash = hashlib.sha256(r["raw_assertion_json"].encode()).hexdigest()
        assert r["assertion_id"] == IDS.make("assertion", key, raw_hash)
        assert r["raw_assertion_json"] == canonicalize(json.loads(r["raw_assertion_json"]))
    for r in query(db, "SELECT * FROM retractions"):
        assert r["retraction_id"] == IDS.make("retraction", r["retraction_message_id"], r["char_start"], r["char_end"])


def test_invariant17_no_assertion_from_system_tool_hidden_reasoning_or_code(vault):
    db, _ = vault
    roles = {r["role"] for r in query(db, "SELECT DISTINCT m.role FROM assertions a JOIN messages m USING(message_id)")}
    assert roles <= {"user", "assistant"}
    objects = {obj(f) for f in facts(db)}
    # "The user lives in Oslo" (system), "lives in Madrid … Initech" (hidden reasoning), "you live in Rome" (a python
    # tool call and a fenced comment) never become claims
    assert not objects & {"Oslo", "Madrid", "Initech@thoughts", "Rome"}
    assert not facts(db, "m.conversation_id='f-assistant-claims' AND o.canonical_name='Madrid'")


def test_invariant18_predicates(vault):
    db, _ = vault
    preds = query(db, "SELECT p.*, (SELECT COUNT(*) FROM assertions a WHERE a.predicate_id = p.predicate_id) AS n, "
                      "(SELECT MIN(asserted_at_utc) FROM assertions a WHERE a.predicate_id = p.predicate_id) AS first "
                      "FROM predicates p")
    assert preds
    norms = [p["canonical_label_norm"] for p in preds]
    assert len(norms) == len(set(norms))
    for p in preds:
        assert p["assertion_count"] == p["n"]
        assert p["first_seen_at_utc"] == p["first"]
        assert p["canonical_label"] == " ".join(unicodedata.normalize("NFKC", p["canonical_label"]).split())
        assert p["canonical_label_norm"] == p["canonical_label"].lower()
        assert p["predicate_id"] == IDS.make("pred", p["canonical_label_norm"])
    lives = next(p for p in preds if p["canonical_label_norm"] == "lives_in")
    assert (lives["inverse_label"], lives["category"], lives["value_type_constraint"]) == ("residence_of", "residence",
                                                                                          "LOCATION")


# -- lifecycle cases (digest §C "Assertions and lifecycle") --------------------------------------------------------

def test_residence_with_since_and_move(vault):
    db, _ = vault
    berlin = one(db, "a-residence", "lives_in", "Berlin")
    assert (berlin["temporal_qualifier_type"], berlin["qualifier_surface"]) == ("since", "2019")
    assert berlin["subject"] == "SELF" and berlin["polarity"] == "positive" and berlin["modality"] == "state"
    paris = one(db, "a-residence", "lives_in", "Paris")
    assert (paris["temporal_qualifier_type"], paris["qualifier_surface"]) == ("since", "March 2023")
    assert paris["surface_text"] == "I moved to Paris"


def test_temporal_bounds_penalty_is_applied_once(vault):
    """§4.6.6 / A8: "since 2019" precedes Berlin's first mention (2023): one penalty of 0.1, even if the subject and
    the object both fail (the check records both)."""
    db, _ = vault
    berlin = one(db, "a-residence", "lives_in", "Berlin")
    check = orjson.loads(berlin["raw_assertion_json"])["temporal_bounds_check"]
    assert check["object_bounds_valid"] is False and check["penalty_applied"] == 0.1
    assert berlin["confidence_final"] == pytest.approx(
        berlin["confidence_extraction"] * berlin["confidence_grounding"] * 1.0 * 0.9, abs=1e-6)


def test_undated_work_has_no_qualifier(vault):
    db, _ = vault
    acme = one(db, "a-residence", "works_at")
    assert acme["object"].startswith("Acme Corp")
    assert acme["temporal_qualifier_id"] is None and acme["temporal_qualifier_type"] is None


def test_until_and_during_qualifiers(vault):
    db, _ = vault
    remote = one(db, "a-residence", "work_mode", "remote")
    assert (remote["temporal_qualifier_type"], remote["qualifier_surface"]) == ("until", "June 2024")
    lisbon = one(db, "a-residence", "located_in", "Lisbon")
    assert (lisbon["temporal_qualifier_type"], lisbon["qualifier_surface"]) == ("during", "December 2022")


def test_correction_supersedes_with_a_replacement(vault):
    db, _ = vault
    porto = one(db, "b-correction", "lives_in", "Porto")
    lisbon = one(db, "b-correction", "lives_in", "Lisbon")
    assert porto["subject_entity_id"] == lisbon["subject_entity_id"]          # the same (unnamed) sister
    assert porto["subject"] == "SELF's sister"
    assert porto["superseded_by_assertion_id"] == lisbon["assertion_id"]
    assert porto["supersession_type"] == "correction"
    assert lisbon["surface_text"] == "I meant Lisbon, not Porto"
    r = query(db, "SELECT * FROM retractions WHERE retraction_type='correction'")
    assert len(r) == 1
    assert (r[0]["target_assertion_id"], r[0]["replacement_assertion_id"], r[0]["target_fact_key"]) == \
        (porto["assertion_id"], lisbon["assertion_id"], porto["fact_key"])
    assert r[0]["surface_text"] == "I meant Lisbon, not Porto"


def test_retraction_with_a_unique_target(vault):
    db, _ = vault
    cat = one(db, "c-retraction-unique", "has_pet", "cat")
    r = query(db, "SELECT r.* FROM retractions r JOIN messages m ON m.message_id = r.retraction_message_id "
                  "WHERE m.conversation_id='c-retraction-unique'")
    assert len(r) == 1
    assert (r[0]["retraction_type"], r[0]["target_assertion_id"], r[0]["target_fact_key"]) == \
        ("full", cat["assertion_id"], cat["fact_key"])
    assert r[0]["confidence"] >= 0.7 and r[0]["surface_text"] == "that's not true"


def test_retraction_with_two_candidate_facts_is_ambiguous(vault):
    db, _ = vault
    moved = one(db, "d-retraction-ambiguous", "lives_in", "Porto")
    married = one(db, "d-retraction-ambiguous", "gets_married")
    assert moved["subject"] == married["subject"] == "Anna"   # "she" resolves to the one person named before it
    assert married["object_signature"] == "N:__NONE__"       # unary
    r = query(db, "SELECT r.* FROM retractions r JOIN messages m ON m.message_id = r.retraction_message_id "
                  "WHERE m.conversation_id='d-retraction-ambiguous'")[0]
    assert r["target_assertion_id"] is None and r["target_fact_key"] is None
    target = orjson.loads(r["raw_retraction_json"])["target"]
    assert target["outcome"] == "AMBIGUOUS"
    assert sorted(target["candidate_assertion_ids"]) == sorted([moved["assertion_id"], married["assertion_id"]])


def test_question_is_never_a_fact_and_statements_beside_it_are(vault):
    db, _ = vault
    rust = one(db, "e-questions-intentions", "learns", "Rust")
    assert rust["modality"] == "question"
    hiking = one(db, "e-questions-intentions", "likes", "hiking")   # "I love hiking, so any trails …?"
    assert hiking["modality"] == "preference"


def test_intentions_and_preferences(vault):
    db, _ = vault
    jp = one(db, "e-questions-intentions", "learns", "Japanese")
    assert jp["modality"] == "intention" and jp["qualifier_surface"] == "next year"
    assert one(db, "e-questions-intentions", "dislikes", "cilantro")["modality"] == "preference"


def test_low_confidence_pattern_is_kept_with_its_confidence(vault):
    db, _ = vault
    stubborn = one(db, "e-questions-intentions", "has_trait", "stubborn")   # reported speech: "Sam says I'm …"
    assert stubborn["confidence_extraction"] < 0.7
    raw = orjson.loads(stubborn["raw_assertion_json"])
    assert raw["extraction"]["notes"]["modifiers"] == ["reported"]


def test_assistant_claims_with_and_without_corroboration(vault):
    db, stage = vault
    cfg_trust = (0.9, 0.5)
    claimed = facts(db, "m.conversation_id='f-assistant-claims' AND a.asserted_role='assistant'")
    paris = [f for f in claimed if f["object"] == "Paris"]
    munich = [f for f in claimed if f["object"] == "Munich"]
    assert len(paris) == 2 and len(munich) == 1       # "you live in Paris" and the bio write
    for f in paris:
        assert f["has_user_corroboration"] == 1
        corr = orjson.loads(f["corroboration_json"])
        user_paris = one(db, "f-assistant-claims", "lives_in", "Paris", asserted_role="user")
        assert corr["corroborating_assertion_ids"] == [user_paris["assertion_id"]]
        assert corr["match_type"] == "exact_predicate"
        assert f["confidence_final"] == pytest.approx(f["confidence_extraction"] * f["confidence_grounding"] *
                                                      cfg_trust[0], abs=1e-6)
    m = munich[0]
    assert m["has_user_corroboration"] == 0 and m["corroboration_json"] is None
    assert m["confidence_final"] == pytest.approx(m["confidence_extraction"] * m["confidence_grounding"] * cfg_trust[1],
                                                  abs=1e-6)
    # the corroborating user statement comes AFTER the claim: the second pass saw it
    user_order = query(db, "SELECT m.order_index FROM assertions a JOIN messages m USING(message_id) WHERE "
                           "a.assertion_id=?", (one(db, "f-assistant-claims", "lives_in", "Paris",
                                                    asserted_role="user")["assertion_id"],))[0]["order_index"]
    claim_order = query(db, "SELECT m.order_index FROM assertions a JOIN messages m USING(message_id) WHERE "
                            "a.assertion_id=?", (m["assertion_id"],))[0]["order_index"]
    assert user_order > claim_order


def test_bio_memory_write_is_an_assistant_claim_about_the_user(vault):
    db, _ = vault
    bio = query(db, FACTS_SQL + " WHERE m.recipient='bio'")
    assert {(f["subject"], f["predicate"], f["object"]) for f in bio} == {("SELF", "lives_in", "Paris"),
                                                                        ("SELF", "works_at", "Globex")}
    assert all(f["asserted_role"] == "assistant" for f in bio)
    paris = next(f for f in bio if f["object"] == "Paris")
    globex = next(f for f in bio if f["object"] == "Globex")
    assert paris["has_user_corroboration"] == 1          # "Yes, I live in Paris now." two messages earlier
    assert globex["has_user_corroboration"] == 0         # nobody said so: low trust
    assert globex["confidence_final"] < 0.5
    # model memory (model_editable_context) is read the same way; hidden reasoning is not read at all
    memory = query(db, FACTS_SQL + " WHERE m.export_content_type='model_editable_context'")
    assert [(f["subject"], f["predicate"], f["object"], f["asserted_role"]) for f in memory] == \
        [("SELF", "works_at", "Globex", "assistant")]


def test_negations_dated_and_stopped(vault):
    db, _ = vault
    berlin = one(db, "g-negations", "lives_in", "Berlin")
    assert berlin["polarity"] == "negative" and berlin["qualifier_surface"] == "April 2023"
    running = one(db, "g-negations", "habit", "running")
    assert running["polarity"] == "negative"
    meat = one(db, "g-negations", "eats", "meat")
    assert meat["polarity"] == "negative"
    # "I stopped running" is a temporal bound on "I run every morning", said a month earlier in another conversation
    earlier = one(db, "h-habits", "habit", "running")
    r = query(db, "SELECT * FROM retractions WHERE retraction_type='temporal_bound'")
    assert len(r) == 1
    assert (r[0]["target_assertion_id"], r[0]["target_fact_key"]) == (earlier["assertion_id"], earlier["fact_key"])
    assert r[0]["surface_text"] == "I stopped running"


def test_pro_form_without_a_single_antecedent_is_not_guessed(vault):
    db, _ = vault
    # "Vienna and Graz …, but I don't really live there anymore": two places, so "there" is nobody's
    rows = facts(db, "m.conversation_id='g-negations' AND a.char_start > 0 AND m.text_raw LIKE 'Vienna%'")
    assert not [f for f in rows if f["predicate"] == "lives_in"]


def test_kin_named_gives_a_claim_about_the_person_and_the_relation(vault):
    db, _ = vault
    anna = one(db, "h-habits", "lives_in", "Lisbon")
    assert anna["subject"] == "Anna" and anna["surface_text"] == "My sister Anna lives in Lisbon"
    rel = one(db, "h-habits", "has_sister", "Anna")
    assert rel["subject"] == "SELF"
    kids = {obj(f) for f in facts(db, "m.conversation_id='h-habits' AND p.canonical_label='has_child'")}
    assert kids == {"Mia", "Leo"}
    assert one(db, "h-habits", "number_of_children", 2)["object_value_type"] == "number"
    assert one(db, "h-habits", "has_partner", "Sam")
    assert one(db, "h-habits", "works_at", "Initech")["subject"] == "Sam"


def test_masking_short_messages_and_hypotheticals(vault):
    db, stage = vault
    assert not facts(db, "m.conversation_id='i-masking'")        # fenced text, "Hi there", "If I lived in …"
    counts = stage["4"].counts
    assert counts["messages_too_short"] >= 1 and counts["messages_role_excluded"] >= 2
    assert counts["messages_context_kind_skipped"] == 1 and counts["messages_tool_call"] == 1


def test_created_entities_are_marked_and_never_resolved_by_name(vault):
    db, _ = vault
    created = query(db, "SELECT c.*, e.entity_type, e.entity_key, e.canonical_name FROM assertion_created_entities c "
                        "JOIN entities e USING(entity_id)")
    sister = [c for c in created if c["reason"] == "kin_descriptor"]
    assert [(c["entity_type"], c["entity_key"], c["canonical_name"]) for c in sister] == \
        [("PERSON", "self's sister", "SELF's sister")]
    for c in created:
        assert c["entity_id"] == IDS.make("entity", c["entity_type"], c["entity_key"])


def test_stage_counts_and_warnings(vault):
    db, stage = vault
    counts = stage["4"].counts
    assert counts["assertions_total"] == query(db, "SELECT COUNT(*) n FROM assertions")[0]["n"]
    assert counts["extractor_version"].startswith("stage4-rules-1#")
    codes = {e[3] for e in stage["4"].events}
    assert "RETRACTION_TARGET_AMBIGUOUS" in codes and "ENTITY_CREATED_DURING_GROUNDING" in codes


def test_every_branch_is_read_and_the_branch_is_shown(tmp_path, cli):
    """A23: an edited message's first version is read too; `kenning facts` says which branch a fact is on."""
    from assertion_corpus import T0, conversation

    conv = conversation("z-branches", [("user", "I live in Rome with my partner."), ("assistant", "Rome is nice.")],
                        start=T0)
    m = conv["mapping"]
    m["z-branches-edit"] = {"id": "z-branches-edit", "parent": "z-branches-root", "children": [], "message": {
        **m["z-branches-m000"]["message"], "id": "z-branches-edit", "create_time": T0 + 30,
        "content": {"content_type": "text", "parts": ["I live in Milan with my partner."]}}}
    m["z-branches-root"]["children"].append("z-branches-edit")
    conv["current_node"] = "z-branches-edit"
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "export.json", [conv]))
    items = json.loads(cli("facts", "--predicate", "lives_in", "--json", db=db).stdout)
    assert {(f["object"], f["on_current_branch"]) for f in items} == {("Rome", False), ("Milan", True)}
