"""Stage 4 reruns change nothing, edits change only what they touch, ids survive new corroboration, and an injected
failure rolls the whole stage back (seed 001 invariants 5, 6, 26 for stage 4; docs/decisions.md A2–A3)."""

from __future__ import annotations

import copy
import importlib
import random

import pytest

from assertion_corpus import conversation, corpus
from exportkit import dump_tables, ingest, query, write_export
from kenning.api import Vault
from kenning.pipeline.runner import StageFailed
from kenning.store.connection import open_store


@pytest.fixture
def export(tmp_path):
    return write_export(tmp_path / "conversations.json", corpus())


def _stage4(results) -> dict:
    return next(r.counts for r in results if r.stage == "4")


def _clear_fingerprint(db, stage: str = "4") -> None:
    conn = open_store(db)
    try:
        conn.execute("DELETE FROM stage_fingerprints WHERE stage=?", (stage,))
    finally:
        conn.close()


def test_rerun_changes_nothing(tmp_path, export):
    db = tmp_path / "k.db"
    ingest(db, export)
    before = dump_tables(db)
    results = ingest(db, export, as_of="2025-06-01T00:00:00Z")
    assert dump_tables(db) == before
    assert {r.stage: r.counts for r in results}["4"] == {"skipped_unchanged": 1}


def test_forced_recompute_writes_nothing(tmp_path, export):
    """Without the fingerprint shortcut the stage recomputes everything and finds nothing to write."""
    db = tmp_path / "k.db"
    ingest(db, export)
    before = dump_tables(db, skip=("runs", "run_events", "sources", "schema_migrations", "stage_fingerprints"))
    _clear_fingerprint(db)
    counts = ingest(db, export, stages="4", as_of="2025-06-01T00:00:00Z")[0].counts
    assert counts["assertions_total"] > 20
    assert (counts["assertions_inserted"], counts["assertions_updated"], counts["assertions_deleted"],
            counts["retractions_inserted"], counts["retractions_deleted"]) == (0, 0, 0, 0, 0)
    assert dump_tables(db, skip=("runs", "run_events", "sources", "schema_migrations", "stage_fingerprints")) == before


def test_same_input_same_clock_gives_identical_tables_whatever_the_order(tmp_path):
    convs = corpus()
    shuffled = copy.deepcopy(convs)
    random.Random(3).shuffle(shuffled)
    for c in shuffled:
        c["mapping"] = dict(sorted(c["mapping"].items(), reverse=True))
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    ingest(a, write_export(tmp_path / "a.json", convs))
    ingest(b, write_export(tmp_path / "b.json", shuffled))
    skip = ("schema_migrations", "runs", "run_events", "sources")
    da, dbb = dump_tables(a, skip=skip), dump_tables(b, skip=skip)
    for t in ("assertions", "retractions", "predicates", "assertion_created_entities"):
        assert da[t] == dbb[t], t


def test_edited_message_changes_only_its_conversation(tmp_path):
    convs = corpus()
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "v1.json", convs))
    before = {r["assertion_id"]: r for r in query(db, "SELECT a.*, m.conversation_id FROM assertions a "
                                                      "JOIN messages m USING(message_id)")}
    node = convs[0]["mapping"]["a-residence-m004"]["message"]   # "During December 2022 I was in Lisbon."
    node["content"]["parts"] = ["During December 2022 I was in Lisbon. I also speak French and Spanish."]
    res = ingest(db, write_export(tmp_path / "v2.json", convs), as_of="2025-01-01T00:00:00Z")
    counts = {r.stage: r.counts for r in res}["4"]
    after = {r["assertion_id"]: r for r in query(db, "SELECT a.*, m.conversation_id FROM assertions a "
                                                     "JOIN messages m USING(message_id)")}
    new = set(after) - set(before)
    assert {after[i]["conversation_id"] for i in new} == {"a-residence"}
    speaks = sorted(after[i]["object_value"] for i in new if '"' in (after[i]["object_value"] or ""))
    assert speaks == ['"French"', '"Spanish"']
    assert set(before) - set(after) <= {i for i, r in before.items() if r["conversation_id"] == "a-residence"}
    assert counts["assertions_inserted"] == len(new)
    # and once more: nothing
    snapshot = dump_tables(db)
    ingest(db, write_export(tmp_path / "v2.json", convs), as_of="2025-02-01T00:00:00Z")
    assert dump_tables(db) == snapshot


def test_a_later_user_message_corroborates_without_changing_the_claim_id(tmp_path):
    claim = conversation("claim", [
        ("user", "Can you suggest a weekend trip?"),
        ("assistant", "Since you're based in Munich, the Alps are close."),
    ])
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "v1.json", [claim]))
    q = ("SELECT a.* FROM assertions a JOIN entities o ON o.entity_id = a.object_entity_id "
         "WHERE a.asserted_role='assistant' AND o.canonical_name='Munich'")
    (first,) = query(db, q)
    assert first["has_user_corroboration"] == 0
    later = conversation("claim", [
        ("user", "Can you suggest a weekend trip?"),
        ("assistant", "Since you're based in Munich, the Alps are close."),
        ("user", "Right, I live in Munich, so the Alps work."),
    ])
    counts = _stage4(ingest(db, write_export(tmp_path / "v2.json", [later]), as_of="2025-01-01T00:00:00Z"))
    (second,) = query(db, q)
    assert second["assertion_id"] == first["assertion_id"]            # A3: links live outside the hashed record
    assert second["raw_assertion_json"] == first["raw_assertion_json"]
    assert second["has_user_corroboration"] == 1
    assert second["confidence_final"] > first["confidence_final"]
    assert counts["assertions_updated"] == 1


def test_created_entity_nobody_uses_any_more_is_removed(tmp_path):
    """A11: "my sister" (no name anywhere) makes a PERSON "SELF's sister"; once the message says something else,
    the entity and its marker go."""
    v1 = conversation("sis", [("user", "My sister lives in Porto these days."), ("assistant", "Nice.")])
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "v1.json", [v1]))
    q = "SELECT e.canonical_name FROM assertion_created_entities c JOIN entities e USING(entity_id)"
    assert [r["canonical_name"] for r in query(db, q)] == ["SELF's sister"]
    v2 = conversation("sis", [("user", "My flat is in Porto these days."), ("assistant", "Nice.")])
    counts = _stage4(ingest(db, write_export(tmp_path / "v2.json", [v2]), as_of="2025-01-01T00:00:00Z"))
    assert counts["created_entities_deleted"] == 1
    assert query(db, q) == []
    assert query(db, "SELECT COUNT(*) n FROM entities WHERE canonical_name = 'SELF''s sister'")[0]["n"] == 0


def test_config_change_recomputes_only_what_it_touches(tmp_path, export):
    db = tmp_path / "k.db"
    ingest(db, export)
    before = {r["assertion_id"]: r["surface_text"] for r in query(db, "SELECT assertion_id, surface_text FROM assertions")}
    with Vault.open(db, overrides={"assertions": {"hedge_factor": 0.5}}) as v:
        counts = v.ingest([export], as_of="2025-01-01T00:00:00Z", stages="4")[0].counts
    after = {r["assertion_id"]: r["surface_text"] for r in query(db, "SELECT assertion_id, surface_text FROM assertions")}
    assert set(before.values()) == set(after.values())
    changed = {before[i] for i in set(before) - set(after)}
    assert changed == {"I'm stubborn"}      # the one hedged claim: its extraction confidence is in its record
    assert counts["assertions_inserted"] == counts["assertions_deleted"] == 1


@pytest.mark.parametrize("target", ["kenning.store.assertions.insert_retractions",
                                    "kenning.extract.retractions.link_global",
                                    "kenning.store.assertions.refresh_predicate_stats"])
def test_injected_failure_rolls_back_the_whole_stage(tmp_path, export, monkeypatch, target):
    db = tmp_path / "k.db"
    ingest(db, export, stages="0,1,2A,2B,3")
    before = dump_tables(db)
    module, _, fn = target.rpartition(".")
    mod = importlib.import_module(module)

    def boom(*a, **k):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(mod, fn, boom)
    if module == "kenning.extract.retractions":
        import kenning.pipeline.stage4 as s4
        monkeypatch.setattr(s4, fn, boom)
    with pytest.raises(StageFailed, match="injected failure"):
        ingest(db, export, stages="4")
    assert dump_tables(db) == before
    failed = query(db, "SELECT stage, status, error FROM runs WHERE status='failed'")
    assert failed == [{"stage": "4", "status": "failed", "error": "RuntimeError: injected failure"}]
    # the stage then runs cleanly
    monkeypatch.undo()
    counts = ingest(db, export, stages="4")[0].counts
    assert counts["assertions_total"] > 20


def test_stage2a_recompute_does_not_break_qualifier_links(tmp_path):
    """An upstream recompute deletes and re-creates time mentions; a link to one that is gone is cleared (ON DELETE
    SET NULL) and stage 4 brings every row back to what it computes now."""
    convs = corpus()
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "v1.json", convs))
    node = convs[0]["mapping"]["a-residence-m002"]["message"]   # "Big news: I moved to Paris in March 2023."
    node["content"]["parts"] = ["Big news: I moved to Paris in April 2023."]
    ingest(db, write_export(tmp_path / "v2.json", convs), as_of="2025-01-01T00:00:00Z")
    (paris,) = query(db, "SELECT a.*, t.surface_text AS q FROM assertions a JOIN entities o ON o.entity_id = "
                         "a.object_entity_id LEFT JOIN time_mentions t ON t.time_mention_id = a.temporal_qualifier_id "
                         "WHERE o.canonical_name='Paris' AND a.surface_text='I moved to Paris'")
    assert paris["q"] == "April 2023"
    dangling = query(db, "SELECT COUNT(*) n FROM assertions a WHERE a.temporal_qualifier_id IS NOT NULL AND NOT "
                         "EXISTS (SELECT 1 FROM time_mentions t WHERE t.time_mention_id = a.temporal_qualifier_id)")
    assert dangling[0]["n"] == 0
