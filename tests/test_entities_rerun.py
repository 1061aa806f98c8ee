"""Stages 2A–3: reruns change nothing, edits recompute only what changed, failures roll back whole."""

from __future__ import annotations

import pytest

from entity_corpus import corpus
from exportkit import dump_tables, ingest, query, write_export
from kenning.api import Vault
from kenning.pipeline.runner import StageFailed


@pytest.fixture
def export(tmp_path):
    return write_export(tmp_path / "conversations.json", corpus())


def test_rerun_changes_nothing(tmp_path, export):
    db = tmp_path / "k.db"
    ingest(db, export)
    before = dump_tables(db)
    results = ingest(db, export, as_of="2025-06-01T00:00:00Z")  # another clock: still nothing to do
    assert dump_tables(db) == before
    counts = {r.stage: r.counts for r in results}
    assert counts["2A"]["messages_unchanged"] == counts["2A"]["messages_seen"]
    assert counts["2B"] == {"skipped_unchanged": 1} and counts["3"] == {"skipped_unchanged": 1}


def test_same_input_same_clock_gives_identical_tables(tmp_path, export):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    ingest(a, export)
    ingest(b, export)
    assert dump_tables(a, skip=("schema_migrations",)) == dump_tables(b, skip=("schema_migrations",))


def test_edited_message_recomputes_only_that_message(tmp_path):
    convs = corpus()
    db = tmp_path / "k.db"
    ingest(db, write_export(tmp_path / "v1.json", convs))
    node = convs[0]["mapping"]["conv-phoenix-0-m002"]["message"]
    node["content"]["parts"] = [node["content"]["parts"][0] + " Also ping zoe@example.net about PHX."]
    results = ingest(db, write_export(tmp_path / "v2.json", convs), as_of="2025-01-01T00:00:00Z")
    counts = {r.stage: r.counts for r in results}
    assert counts["2A"]["messages_processed"] == 1
    assert counts["2B"]["lexicon_build_version"] == 2
    assert query(db, "SELECT canonical_name FROM entities WHERE entity_key='zoe@example.net'")
    assert query(db, "SELECT COUNT(*) n FROM lexicon_builds")[0]["n"] == 2  # the old build stays for audit
    # only the new build's LEXICON detections remain
    builds = {r["d"] for r in query(db, "SELECT DISTINCT detector d FROM entity_mention_candidates "
                                        "WHERE detector LIKE 'LEXICON:%'")}
    latest = query(db, "SELECT build_id FROM lexicon_builds ORDER BY build_version DESC LIMIT 1")[0]["build_id"]
    assert builds == {f"LEXICON:{latest}"}
    assert query(db, "SELECT COUNT(*) n FROM entity_mentions WHERE entity_id IS NULL")[0]["n"] == 0
    # a second run with the same data is again a no-op
    before = dump_tables(db)
    ingest(db, write_export(tmp_path / "v2.json", convs), as_of="2025-02-01T00:00:00Z")
    assert dump_tables(db) == before


def test_config_change_recomputes(tmp_path, export):
    db = tmp_path / "k.db"
    ingest(db, export)
    res = ingest(db, export, overrides={"entities": {"ner": {"backend": "none"}}})
    counts = {r.stage: r.counts for r in res}
    assert counts["2A"]["messages_processed"] == counts["2A"]["messages_seen"]
    assert not query(db, "SELECT * FROM entity_mention_candidates WHERE detector LIKE 'NER:%'")


@pytest.mark.parametrize("stage, prior, target", [
    ("2A", "0,1", "kenning.store.mentions.insert_time_mentions"),
    ("2B", "0,1,2A", "kenning.store.entities.link_mentions"),
    ("3", "0,1,2A,2B", "kenning.store.entities.set_canonical_names"),
])
def test_injected_failure_rolls_back_the_whole_stage(tmp_path, export, monkeypatch, stage, prior, target):
    db = tmp_path / "k.db"
    ingest(db, export, stages=prior)
    before = dump_tables(db)
    module, _, fn = target.rpartition(".")
    import importlib

    calls = []

    def boom(*a, **k):
        calls.append(1)
        raise RuntimeError("injected failure")

    monkeypatch.setattr(importlib.import_module(module), fn, boom)
    with Vault.open(db) as v, pytest.raises(StageFailed):
        v.ingest([export], as_of="2024-12-31T00:00:00Z", stages=stage)
    assert calls, "the failure point was reached mid-stage"
    assert dump_tables(db) == before
    failed = query(db, "SELECT stage, status, error FROM runs WHERE status='failed'")
    assert failed == [{"stage": stage, "status": "failed", "error": "RuntimeError: injected failure"}]
    monkeypatch.undo()
    ingest(db, export, stages=stage)  # and it succeeds afterwards
    assert dump_tables(db) != before
