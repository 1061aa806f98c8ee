"""Stage 5 over hand-built exports: seed 001 invariants 20–24 and 26, the digest §C lifecycle cases, and the
decisions T1–T20 on the seed's holes."""

from __future__ import annotations

import importlib
import json

import pytest

import temporal_corpus as tc
from exportkit import dump_tables, ingest, query, write_export
from kenning.pipeline.runner import StageFailed
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize

IDS = IdFactory()
HASH = {"embeddings": {"backend": "hash"}}
AS_OF = "2024-12-31T00:00:00Z"
PRECEDENCE = {"ineligible": 0, "active": 1, "conflicted": 2, "superseded": 3, "negated": 4, "retracted": 5}


def _vault(tmp_path_factory, name: str):
    d = tmp_path_factory.mktemp(name)
    db = d / "k.db"
    export = write_export(d / "export.json", getattr(tc, name)())
    results = ingest(db, export, as_of=AS_OF, overrides=HASH)
    return db, {r.stage: r for r in results}, export


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory):
    return _vault(tmp_path_factory, "lifecycle")


@pytest.fixture(scope="module")
def conflicts(tmp_path_factory):
    return _vault(tmp_path_factory, "conflicts")


@pytest.fixture(scope="module")
def negations(tmp_path_factory):
    return _vault(tmp_path_factory, "negations")


SQL = """
SELECT t.*, a.polarity, a.modality, a.confidence_final, a.asserted_role, a.has_user_corroboration, a.fact_key,
       a.subject_entity_id, a.predicate_id, a.object_signature, a.asserted_at_utc AS message_time, a.surface_text,
       a.supersession_type, a.superseded_by_assertion_id, s.canonical_name AS subject, p.canonical_label AS predicate,
       COALESCE(o.canonical_name, json_extract(a.object_value, '$')) AS object, m.conversation_id AS conv,
       m.timestamp_quality
FROM assertion_temporalized t JOIN assertions a USING(assertion_id) JOIN predicates p USING(predicate_id)
JOIN entities s ON s.entity_id = a.subject_entity_id LEFT JOIN entities o ON o.entity_id = a.object_entity_id
JOIN messages m USING(message_id)
"""


def temporal(db, where: str = "1=1", params=()) -> list[dict]:
    out = query(db, SQL + " WHERE " + where + " ORDER BY m.conversation_id, m.order_index, a.assertion_id", params)
    for r in out:
        r["raw"] = json.loads(r["raw_temporalize_json"])
    return out


def one(db, conv: str, predicate: str, obj=None, **cols) -> dict:
    found = [r for r in temporal(db, "m.conversation_id=?", (conv,)) if r["predicate"] == predicate
             and (obj is None or r["object"] == obj) and all(r[k] == v for k, v in cols.items())]
    assert len(found) == 1, [(r["predicate"], r["object"], r["polarity"]) for r in temporal(db, "m.conversation_id=?",
                                                                                          (conv,))]
    return found[0]


def groups(db, ctype: str) -> list[dict]:
    out = query(db, "SELECT * FROM conflict_groups WHERE conflict_type=? ORDER BY conflict_key", (ctype,))
    for g in out:
        g["members"] = sorted(r["assertion_id"] for r in query(
            db, "SELECT assertion_id FROM conflict_members WHERE conflict_group_id=?", (g["conflict_group_id"],)))
    return out


# -- invariants 20–24 over every vault ------------------------------------------------------------------------------

def _invariants(db) -> None:
    rows = temporal(db)
    n = query(db, "SELECT COUNT(*) AS n FROM assertions")[0]["n"]
    assert len(rows) == n > 0                                                   # 20: one row per assertion
    by_id = {r["assertion_id"]: r for r in rows}
    for r in rows:
        raw = r["raw"]
        assert r["raw_temporalize_json"] == canonicalize(raw)
        if raw["time_source"] == "ASSERTED_AT_FALLBACK":                        # 20
            assert raw["has_explicit_valid_time"] is False
            assert r["timestamp_quality"] == "original"
        if r["status"] == "active":                                              # 20: active ⇒ eligible
            assert raw["eligible"] is True and raw["eligibility_reasons"] == []
        observed = raw["time_basis"] == "observed" and raw["eligible"]            # T40: said-at states
        if observed:
            assert raw["time_source"] in ("ASSERTED_AT_FALLBACK", "CONVERSATION_TIME")
            assert r["valid_from_utc"] == r["asserted_at_utc"]
        if r["polarity"] == "positive" and not raw["has_explicit_valid_time"] and not observed:  # 21
            assert r["status"] in ("ineligible", "retracted", "superseded", "negated")
            if r["status"] == "superseded":
                assert r["supersession_type"] == "correction"                     # only a stage-4 correction
            if r["status"] == "negated":
                assert r["retracted_by_retraction_id"] is not None               # only "I stopped X" (T7)
        if r["valid_time_type"] == "instant":
            assert r["valid_to_utc"] is None
        if r["valid_to_utc"] and r["valid_from_utc"]:
            assert r["valid_to_utc"] > r["valid_from_utc"]
        if r["temporal_superseded_by_assertion_id"] and r["supersession_type"] != "correction":   # 23
            succ = by_id[r["temporal_superseded_by_assertion_id"]]
            assert (succ["subject_entity_id"], succ["predicate_id"]) == (r["subject_entity_id"], r["predicate_id"])
            assert succ["object_signature"] != r["object_signature"]
            if any(e["code"] == "OVERRIDDEN_BY_LATER_STATEMENT" for e in raw["events"]):   # T45
                assert succ["valid_from_utc"] <= r["valid_from_utc"] and succ["asserted_at_utc"] > r["asserted_at_utc"]
            else:
                assert r["valid_from_utc"] < r["valid_to_utc"] <= succ["valid_from_utc"]
            assert r["rule_id_applied"] is not None
        assert r["asserted_at_utc"] is not None
        if r["status"] in ("superseded", "retracted", "negated"):
            assert r["superseded_at_utc"] >= r["asserted_at_utc"]
        else:
            assert r["superseded_at_utc"] is None
    # 22: a retracted assertion stays retracted through the later passes (the unit tests check monotonicity)
    for r in rows:
        if r["retracted_by_retraction_id"] and r["status"] != "negated" and r["supersession_type"] != "correction":
            assert r["status"] == "retracted"
    # 24: conflict keys unique, one detected_at per run, ≥2 members
    gs = query(db, "SELECT * FROM conflict_groups")
    assert len({g["conflict_key"] for g in gs}) == len(gs)
    assert len({g["detected_at_utc"] for g in gs}) <= 1
    for g in gs:
        assert g["conflict_group_id"] == IDS.make("conflict", g["conflict_key"])
        m = query(db, "SELECT COUNT(*) AS n FROM conflict_members WHERE conflict_group_id=?", (g["conflict_group_id"],))
        assert m[0]["n"] >= 2
    for rule in query(db, "SELECT * FROM invalidation_rules"):
        assert rule["rule_id"] == IDS.make("invalidation_rule", rule["predicate_id"], rule["subject_entity_type"])


@pytest.mark.parametrize("name", ["lifecycle", "conflicts", "negations"])
def test_invariants_20_to_24(name, request):
    db, _, _ = request.getfixturevalue(name)
    _invariants(db)


def test_rules_are_seeded_from_the_shipped_yaml(lifecycle):
    db, runs, _ = lifecycle
    rules = query(db, "SELECT r.*, p.canonical_label_norm AS label FROM invalidation_rules r "
                      "LEFT JOIN predicates p USING(predicate_id)")
    default = [r for r in rules if r["predicate_id"] is None]
    assert [(r["subject_entity_type"], r["is_functional"], r["invalidation_policy"]) for r in default] == \
        [("*", 0, "none")]
    lives = next(r for r in rules if r["label"] == "lives_in")
    assert (lives["subject_entity_type"], lives["is_functional"], lives["invalidation_policy"]) == \
        ("PERSON", 1, "close_previous_on_newer_state")
    works = next(r for r in rules if r["label"] == "works_at")
    assert (works["subject_entity_type"], works["is_functional"]) == ("*", 1)
    notes = json.loads(lives["notes"])
    assert len(notes["file_sha256"]) == 64 and notes["version"] == 1 and notes["load_order"] == 0
    # T2: a label no predicate has is never a wildcard
    assert not any(r["predicate_id"] is None and r["subject_entity_type"] == "PERSON" for r in rules)
    events = [e for e in runs["5"].events if e[3] == "RULE_PREDICATE_UNKNOWN"]
    assert any("employed_as_astronaut" in e[4] for e in events)


# -- digest §C lifecycle cases ---------------------------------------------------------------------------------------

def test_berlin_since_2019_then_paris_in_march_2023(lifecycle):
    db, _, _ = lifecycle
    berlin = one(db, "a-move", "lives_in", "Berlin")
    paris = one(db, "a-move", "lives_in", "Paris")
    assert (berlin["status"], berlin["valid_from_utc"], berlin["valid_to_utc"]) == \
        ("superseded", "2019-01-01T00:00:00.000Z", "2023-03-01T00:00:00.000Z")
    assert berlin["temporal_superseded_by_assertion_id"] == paris["assertion_id"]
    assert (paris["status"], paris["valid_from_utc"], paris["valid_to_utc"]) == \
        ("active", "2023-03-01T00:00:00.000Z", None)
    ev = next(e for e in berlin["raw"]["events"] if e["code"] == "FUNCTIONAL_SUPERSESSION")
    # equal confidence and tiers: the move states the change itself (T14)
    assert ev["supersession_reason"] == "TRANSITION_TIEBREAK" and ev["confidence_diff"] == 0
    lives_rule = IDS.make("invalidation_rule", berlin["predicate_id"], "PERSON")
    assert berlin["rule_id_applied"] == lives_rule
    # transaction time: believed from the first message, held as superseded from the Paris message on
    assert berlin["asserted_at_utc"] == berlin["message_time"]
    assert berlin["superseded_at_utc"] == paris["message_time"]


def test_undated_work_is_said_at_its_message_time_and_a_later_job_ends_it(lifecycle):
    """T40, T44: "I work at Acme Corp." (undated) holds when it was said; "These days I work at Globex", said later,
    ends it there (NEWER_STATEMENT) — the seed's eligibility would have left both current (§5.5, NONEXPLICIT)."""
    db, _, _ = lifecycle
    acme = one(db, "b-undated-work", "works_at", "Acme Corp.")
    globex = one(db, "b-undated-work", "works_at", "Globex")
    for r in (acme, globex):
        assert r["raw"]["time_source"] == "ASSERTED_AT_FALLBACK" and r["raw"]["has_explicit_valid_time"] is False
        assert r["raw"]["time_basis"] == "observed" and r["raw"]["eligibility_reasons"] == []
        assert r["valid_from_utc"] == r["message_time"]
    assert globex["status"] == "active" and globex["valid_to_utc"] is None
    assert acme["status"] == "superseded" and acme["temporal_superseded_by_assertion_id"] == globex["assertion_id"]
    assert acme["valid_to_utc"] == globex["valid_from_utc"]
    [ev] = [e for e in acme["raw"]["events"] if e["code"] == "FUNCTIONAL_SUPERSESSION"]
    assert ev["supersession_reason"] in ("NEWER_STATEMENT", "CONFIDENCE_MARGIN", "TRANSITION_TIEBREAK")


def test_same_time_duplicates_are_informational(lifecycle):
    db, _, _ = lifecycle
    dup = one(db, "c-duplicate", "lives_in", "Paris")
    moved = one(db, "a-move", "lives_in", "Paris")
    [g] = groups(db, "SAME_TIME_DUPLICATES")
    assert g["members"] == sorted([dup["assertion_id"], moved["assertion_id"]])
    assert dup["status"] == moved["status"] == "active"
    assert json.loads(g["conflict_key"]) == ["same_time_dup", dup["subject_entity_id"], dup["predicate_id"],
                                             dup["object_signature"], "2023-03-01T00:00:00.000Z"]
    assert g["detected_at_utc"] == AS_OF.replace("Z", ".000Z")


def test_until_is_a_hint_not_a_validity(lifecycle):
    db, _, _ = lifecycle
    r = one(db, "d-until", "work_mode", "remote")
    assert (r["valid_time_type"], r["valid_from_utc"], r["valid_to_utc"]) == ("unknown", None, None)
    assert r["valid_until_hint_utc"] == "2024-07-01T00:00:00.000Z"     # the end of "June 2024"
    assert "UNTIL_QUALIFIER_HINT_STORED" in r["raw"]["flags"] and r["status"] == "ineligible"


def test_unique_retraction_retracts(lifecycle):
    db, _, _ = lifecycle
    cat = one(db, "e-retractions", "has_pet", "cat")
    assert cat["status"] == "retracted" and cat["valid_to_utc"] is None     # epistemic: valid time untouched
    r = query(db, "SELECT * FROM retractions WHERE retraction_id=?", (cat["retracted_by_retraction_id"],))[0]
    assert r["surface_text"] == "that's not true" and r["retraction_type"] == "full"


def test_ambiguous_retraction_makes_a_group_and_retracts_nothing(lifecycle):
    db, _, _ = lifecycle
    [g] = groups(db, "RETRACTION_TARGET_NOT_UNIQUE")
    members = [r for r in temporal(db) if r["assertion_id"] in g["members"]]
    assert {r["subject"] for r in members} == {"Anna"} and len(members) == 2
    assert all(r["status"] != "retracted" for r in members)
    raw = json.loads(g["raw_conflict_json"])
    assert json.loads(g["conflict_key"]) == ["retract_ambig", raw["retraction_id"], "__NULL__"]


def test_correction_is_a_supersession_without_an_end(lifecycle):
    db, _, _ = lifecycle
    porto = one(db, "f-correction", "lives_in", "Porto")
    lisbon = one(db, "f-correction", "lives_in", "Lisbon")
    assert porto["status"] == "superseded" and porto["temporal_superseded_by_assertion_id"] == lisbon["assertion_id"]
    assert porto["valid_to_utc"] is None                                     # §5.7: a correction is epistemic
    codes = [e["code"] for e in porto["raw"]["events"]]
    assert "CORRECTION_SUPERSESSION_FROM_STAGE4" in codes and "CORRECTION_RETRACTION_AS_SUPERSESSION" in codes
    assert porto["retracted_by_retraction_id"] is not None                   # the message that corrected it (T8)


def test_stopped_running_ends_the_habit(lifecycle):
    """T7 (seed B21): temporal_bound ends validity at the statement's time; it does not say it was never true."""
    db, _, _ = lifecycle
    run = one(db, "g-stopped", "habit", "running", polarity="positive")
    stop = one(db, "g-stopped", "habit", "running", polarity="negative")
    assert run["status"] == "negated" and run["negated_by_assertion_id"] == stop["assertion_id"]
    assert run["valid_to_utc"] == stop["message_time"] and run["valid_time_type"] == "interval"
    assert run["retracted_by_retraction_id"] is not None
    ev = next(e for e in run["raw"]["events"] if e["code"] == "TEMPORAL_BOUND_ENDS_VALIDITY")
    assert ev["bound_source"] == "RETRACTION_MESSAGE_TIME_UPPER_BOUND"


def test_object_disagreement_and_the_walk_across_it(conflicts):
    db, _, _ = conflicts
    rome, madrid = one(db, "a-disagree", "lives_in", "Rome"), one(db, "a-disagree", "lives_in", "Madrid")
    vienna = one(db, "a-disagree", "lives_in", "Vienna")
    assert rome["status"] == madrid["status"] == "conflicted"
    [g] = groups(db, "OBJECT_DISAGREEMENT")
    assert g["members"] == sorted([rome["assertion_id"], madrid["assertion_id"]])
    assert json.loads(g["conflict_key"]) == ["obj_disagree", rome["subject_entity_id"], rome["predicate_id"],
                                             "2021-05-01T00:00:00.000Z"]
    # T13 (seed B23): a disputed timepoint has no representative; nothing is closed across it
    [t] = groups(db, "OBJ_TRANSITION_CONFLICT")
    assert set(t["members"]) == {rome["assertion_id"], madrid["assertion_id"], vienna["assertion_id"]}
    assert vienna["status"] == "active" and rome["valid_to_utc"] is None and madrid["valid_to_utc"] is None


def test_close_confidences_conflict(conflicts):
    db, _, _ = conflicts
    a, b = one(db, "b-too-close", "works_at", "Initech"), one(db, "b-too-close", "works_at", "Hooli")
    assert a["confidence_final"] == b["confidence_final"] and a["status"] == b["status"] == "conflicted"
    [g] = groups(db, "OBJ_CONFIDENCE_TOO_CLOSE")
    raw = json.loads(g["raw_conflict_json"])
    assert raw["confidence_diff"] == 0 and raw["reason"] == "WITHIN_MARGIN"
    assert json.loads(g["conflict_key"])[3:] == [a["assertion_id"], b["assertion_id"]]   # prev, cur


def test_dated_negation_closes_the_state(negations):
    db, _, _ = negations
    pos = one(db, "a-negation", "lives_in", "Vienna", polarity="positive")
    neg = one(db, "a-negation", "lives_in", "Vienna", polarity="negative")
    assert (pos["status"], pos["valid_to_utc"], pos["negated_by_assertion_id"]) == \
        ("negated", "2022-04-01T00:00:00.000Z", neg["assertion_id"])


def test_ambiguous_negation_closes_nothing(negations):
    db, _, _ = negations
    both = [r for r in temporal(db, "m.conversation_id='b-ambiguous'") if r["polarity"] == "positive"]
    assert len(both) == 2 and all(r["status"] == "active" and r["valid_to_utc"] is None for r in both)
    [g] = groups(db, "NEGATION_AMBIGUOUS")
    neg = one(db, "b-ambiguous", "works_at", "Initech", polarity="negative")
    assert g["members"] == sorted([neg["assertion_id"]] + [r["assertion_id"] for r in both])


def test_negation_before_the_state_never_closes_it(negations):
    """T10 (seed B24): a negation closure would end before it starts."""
    db, _, _ = negations
    pos = one(db, "c-predates", "studies_at", "MIT", polarity="positive")
    # "since 2020" is linked by proximity here (no qualifier cue for this pattern): the year 2020, untouched
    assert pos["status"] == "active" and pos["valid_to_utc"] == "2021-01-01T00:00:00.000Z"
    assert pos["negated_by_assertion_id"] is None
    assert any(e["code"] == "NEGATION_PREDATES_TARGET" for e in pos["raw"]["events"])
    assert not groups(db, "NEGATION_AMBIGUOUS") or all(pos["assertion_id"] not in g["members"]
                                                        for g in groups(db, "NEGATION_AMBIGUOUS"))


# -- transaction time (T3) -------------------------------------------------------------------------------------------

def test_history_records_what_was_believed_when(lifecycle):
    db, _, _ = lifecycle
    berlin = one(db, "a-move", "lives_in", "Berlin")
    paris = one(db, "a-move", "lives_in", "Paris")
    h = query(db, "SELECT * FROM assertion_tx_history WHERE assertion_id=? ORDER BY version", (berlin["assertion_id"],))
    assert [(v["status"], v["valid_to_utc"], v["reason"]) for v in h] == [
        ("active", None, "FIRST_SEEN"), ("superseded", "2023-03-01T00:00:00.000Z", "SUPERSEDED")]
    assert h[0]["tx_from_utc"] == berlin["message_time"] and h[0]["tx_to_utc"] == paris["message_time"]
    assert h[1]["tx_from_utc"] == paris["message_time"] and h[1]["tx_to_utc"] is None
    assert h[1]["cause_id"] == paris["assertion_id"]
    # "what did I believe just before the move message" is one query
    before = query(db, "SELECT status FROM assertion_tx_history WHERE assertion_id=? AND tx_from_utc <= ? AND "
                       "(tx_to_utc IS NULL OR tx_to_utc > ?)", (berlin["assertion_id"], h[0]["tx_from_utc"],
                                                                h[0]["tx_from_utc"]))
    assert before == [{"status": "active"}]


def test_a_later_export_adds_rows_and_never_rewrites_history(tmp_path):
    db = tmp_path / "k.db"
    first = write_export(tmp_path / "1.json", tc.lifecycle()[:1][:])
    conv = tc.lifecycle()[0]
    # the first export stops before the move
    early = dict(conv)
    early["mapping"] = {k: v for k, v in conv["mapping"].items() if not k.endswith("m002")}
    early["mapping"][f"{conv['id']}-m001"] = {**early["mapping"][f"{conv['id']}-m001"], "children": []}
    write_export(first, [early])
    ingest(db, first, as_of="2024-01-01T00:00:00Z", overrides=HASH)
    h1 = query(db, "SELECT * FROM assertion_tx_history ORDER BY assertion_id, version")
    t1 = {r["assertion_id"]: r for r in query(db, "SELECT * FROM assertion_temporalized")}
    assert [r["status"] for r in h1] == ["active"] and h1[0]["tx_to_utc"] is None
    second = write_export(tmp_path / "2.json", [conv])
    ingest(db, second, as_of="2024-06-01T00:00:00Z", overrides=HASH)
    h2 = query(db, "SELECT * FROM assertion_tx_history ORDER BY assertion_id, version")
    old = next(r for r in h2 if r["assertion_id"] == h1[0]["assertion_id"] and r["version"] == 0)
    # the stored row is the same row, now closed; nothing else about it changed
    assert {k: v for k, v in old.items() if k != "tx_to_utc"} == {k: v for k, v in h1[0].items() if k != "tx_to_utc"}
    assert old["tx_to_utc"] is not None and len(h2) == 3
    t2 = {r["assertion_id"]: r for r in query(db, "SELECT * FROM assertion_temporalized")}
    aid = h1[0]["assertion_id"]
    assert t2[aid]["asserted_at_utc"] == t1[aid]["asserted_at_utc"] and t2[aid]["status"] == "superseded"
    # a third ingest of the same export adds nothing
    ingest(db, second, as_of="2024-07-01T00:00:00Z", overrides=HASH)
    assert query(db, "SELECT * FROM assertion_tx_history ORDER BY assertion_id, version") == h2


def test_knowledge_that_arrives_late_is_recorded_at_ingest_time(tmp_path):
    """An export that brings an older message later cannot rewrite what was believed: Berlin was believed open
    from its message on; a move told in an *older* message, seen only now, closes it from the ingest time
    (LATE_KNOWLEDGE)."""
    db = tmp_path / "k.db"
    berlin_conv = tc.conversation("y-berlin", [("user", "I live in Berlin since 2019.")], start=tc.T0 + 10 * tc.DAY)
    ingest(db, write_export(tmp_path / "1.json", [berlin_conv]), as_of="2024-01-01T00:00:00Z", overrides=HASH)
    paris_old = tc.conversation("z-paris", [("user", "I moved to Paris in March 2023.")], start=tc.T0)
    res = ingest(db, write_export(tmp_path / "2.json", [berlin_conv, paris_old]), as_of="2024-06-01T00:00:00Z",
                 overrides=HASH)
    s5 = next(r for r in res if r.stage == "5")
    berlin = one(db, "y-berlin", "lives_in", "Berlin")
    assert berlin["status"] == "superseded"
    h = query(db, "SELECT * FROM assertion_tx_history WHERE assertion_id=? ORDER BY version", (berlin["assertion_id"],))
    assert [(v["status"], v["reason"], v["tx_from_utc"], v["tx_to_utc"]) for v in h] == [
        ("active", "FIRST_SEEN", berlin["message_time"], "2024-06-01T00:00:00.000Z"),
        ("superseded", "LATE_KNOWLEDGE", "2024-06-01T00:00:00.000Z", None)]
    assert s5.counts["history_late_knowledge"] == 1
    assert any(e[3] == "LATE_KNOWLEDGE" for e in s5.events)
    # the new claim itself is told on its own message clock
    paris_h = query(db, "SELECT * FROM assertion_tx_history WHERE assertion_id=? ORDER BY version",
                    (one(db, "z-paris", "lives_in", "Paris")["assertion_id"],))
    assert [v["reason"] for v in paris_h] == ["FIRST_SEEN"]


# -- determinism and rollback (invariant 26) -------------------------------------------------------------------------

def test_stages_5_and_6_twice_give_identical_tables(lifecycle, tmp_path):
    db, _, export = lifecycle
    before = dump_tables(db)
    res = ingest(db, export, stages="5,6", as_of="2025-02-02T00:00:00Z", overrides=HASH)
    assert dump_tables(db) == before
    assert res[0].counts["history_rows_added"] == 0


def test_same_input_same_clock_gives_identical_vaults(tmp_path):
    dumps = []
    for i in range(2):
        db = tmp_path / f"k{i}.db"
        ingest(db, write_export(tmp_path / f"e{i}.json", tc.conflicts()), as_of=AS_OF, overrides=HASH)
        dumps.append(dump_tables(db))
    assert dumps[0] == dumps[1]


@pytest.mark.parametrize("stage,target", [
    ("5", "kenning.store.temporal.insert_conflicts"), ("5", "kenning.store.temporal.insert_history"),
    ("6", "kenning.store.graph.replace_graph"), ("6", "kenning.graph.profile.build_profiles")])
def test_injected_failure_rolls_back_the_whole_stage(tmp_path, monkeypatch, stage, target):
    db = tmp_path / "k.db"
    export = write_export(tmp_path / "e.json", tc.conflicts())
    ingest(db, export, as_of=AS_OF, overrides=HASH)
    ingest(db, write_export(tmp_path / "e2.json", tc.conflicts() + tc.negations()), stages="0-4", as_of=AS_OF,
           overrides=HASH)
    before = dump_tables(db)
    module, _, fn = target.rpartition(".")

    def boom(*a, **k):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(importlib.import_module(module), fn, boom)
    if module == "kenning.graph.profile":
        import kenning.pipeline.stage6 as s6
        monkeypatch.setattr(s6, fn, boom)
    with pytest.raises(StageFailed, match="injected failure"):
        ingest(db, export, stages=stage, as_of=AS_OF, overrides=HASH)
    assert dump_tables(db) == before
    failed = query(db, "SELECT stage, status FROM runs WHERE status='failed'")
    assert failed == [{"stage": stage, "status": "failed"}]


def test_a_vault_without_claims_runs_stages_5_and_6(tmp_path):
    db = tmp_path / "k.db"
    export = write_export(tmp_path / "e.json", [tc.conversation("z", [("user", "Hello there, how are you?")])])
    res = {r.stage: r for r in ingest(db, export, as_of=AS_OF, overrides=HASH)}
    assert res["5"].counts["assertions"] == 0 and res["6"].counts["nodes"] >= 1
    assert query(db, "SELECT COUNT(*) AS n FROM assertion_temporalized")[0]["n"] == 0
