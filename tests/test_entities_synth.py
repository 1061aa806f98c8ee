"""Stages 2A–3 over the synthetic generator's corpus (kenning.bench.synth, n=12, seed 7)."""

from __future__ import annotations

import json

import orjson
import pytest

from exportkit import dump_tables, ingest, query

synth = pytest.importorskip("kenning.bench.synth")


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    stats = synth.write_export(d / "export.json", 12, 7)
    db = d / "k.db"
    ingest(db, d / "export.json")
    return db, d / "export.json", json.loads((d / "export.manifest.json").read_text()) if \
        (d / "export.manifest.json").exists() else stats


def test_spans_exact_and_winners_disjoint(vault):
    db, _, _ = vault
    texts = {r["message_id"]: r["text_raw"] for r in query(db, "SELECT message_id, text_raw FROM messages")}
    for table in ("entity_mention_candidates", "entity_mentions", "time_mentions"):
        for r in query(db, f"SELECT message_id, char_start, char_end, surface_text FROM {table} "
                           "WHERE char_start IS NOT NULL"):
            assert texts[r["message_id"]][r["char_start"]:r["char_end"]] == r["surface_text"]
    ments = query(db, "SELECT message_id, char_start, char_end FROM entity_mentions ORDER BY message_id, char_start")
    for a, b in zip(ments, ments[1:]):
        if a["message_id"] == b["message_id"]:
            assert a["char_end"] <= b["char_start"]
    assert len(ments) > 50


def test_times_and_entities(vault):
    db, _, _ = vault
    for t in query(db, "SELECT t.*, m.timestamp_quality FROM time_mentions t JOIN messages m USING(message_id)"):
        if orjson.loads(t["raw_parse_json"])["relative"] and t["timestamp_quality"] != "original":
            assert t["resolved_type"] == "unresolved"
        if t["resolved_type"] == "interval":
            assert t["valid_to_utc"] > t["valid_from_utc"]
    assert query(db, "SELECT COUNT(*) n FROM entity_mentions WHERE entity_id IS NULL")[0]["n"] == 0
    assert query(db, "SELECT COUNT(*) n FROM entities WHERE entity_key='__SELF__'")[0]["n"] == 1
    for r in query(db, "SELECT * FROM lexicon_term_candidates WHERE is_selected=1"):
        assert r["user_weighted_count"] >= 3 and r["conversation_count"] >= 2


def test_planted_lexicon_terms_selected(vault):
    db, _, _ = vault
    terms = {r["term_key"] for r in query(db, "SELECT term_key FROM lexicon_terms")}
    assert terms & {"phx", "project phoenix"}, terms


def test_rerun_on_synthetic_corpus_changes_nothing(vault):
    db, export, _ = vault
    before = dump_tables(db)
    ingest(db, export, as_of="2025-03-01T00:00:00Z")
    assert dump_tables(db) == before
