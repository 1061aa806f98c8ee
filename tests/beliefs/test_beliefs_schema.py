"""`wiki_beliefs` exactly as seed 002: columns, CHECKs, indexes, FTS5 and its triggers; the config section."""

from __future__ import annotations

import apsw
import pytest
from .beliefs_helpers import minimal_wiki

from kenning.config.loader import ConfigError, defaults_dict, load_config
from kenning.store import transaction

SEED_COLUMNS = [
    # name, type, notnull, default, pk
    ("belief_id", "TEXT", 0, None, 1), ("workspace", "TEXT", 1, None, 0), ("statement", "TEXT", 1, None, 0),
    ("topic", "TEXT", 1, None, 0), ("subject", "TEXT", 0, None, 0), ("predicate", "TEXT", 0, None, 0),
    ("object", "TEXT", 0, None, 0), ("wiki_document_id", "TEXT", 1, None, 0),
    ("wiki_section_anchor", "TEXT", 0, None, 0), ("footnote_ids", "TEXT", 1, None, 0),
    ("provenance_ids", "TEXT", 1, None, 0), ("asserted_at", "TEXT", 1, None, 0),
    ("asserted_in_run", "TEXT", 1, None, 0), ("superseded_at", "TEXT", 0, None, 0),
    ("superseded_by_belief_id", "TEXT", 0, None, 0), ("superseded_in_run", "TEXT", 0, None, 0),
    ("supersession_reason", "TEXT", 0, None, 0), ("source_valid_from", "TEXT", 0, None, 0),
    ("source_valid_to", "TEXT", 0, None, 0), ("supporting_count", "INTEGER", 1, "1", 0),
    ("contradicting_belief_ids", "TEXT", 0, None, 0), ("confidence_hint", "TEXT", 0, None, 0),
    ("created_at", "TEXT", 1, None, 0),
]
# Kenning's own transaction time, after the seed's columns (migration 0055, W31).
KENNING_COLUMNS = [("recorded_at", "TEXT", 0, None, 0), ("superseded_recorded_at", "TEXT", 0, None, 0)]
SEED_INDEXES = {
    "idx_beliefs_workspace_topic": "(workspace, topic)",
    "idx_beliefs_workspace_current": "(workspace) WHERE superseded_at IS NULL",
    "idx_beliefs_subject_predicate": "(workspace, subject, predicate) WHERE subject IS NOT NULL",
    "idx_beliefs_wiki_doc": "(wiki_document_id)",
    "idx_beliefs_asserted_at": "(workspace, asserted_at DESC)",
    "idx_beliefs_superseded_at": "(workspace, superseded_at DESC) WHERE superseded_at IS NOT NULL",
}


def test_columns_and_foreign_keys_match_the_seed(vault):
    cols = [(r[1], r[2], r[3], r[4], r[5]) for r in vault.conn.execute("PRAGMA table_info(wiki_beliefs)")]
    assert cols == SEED_COLUMNS + KENNING_COLUMNS
    fks = {(r[3], r[2], r[4]) for r in vault.conn.execute("PRAGMA foreign_key_list(wiki_beliefs)")}
    assert fks == {("workspace", "workspaces", "slug"), ("wiki_document_id", "documents", "id"),
                   ("asserted_in_run", "runs", "run_id"), ("superseded_by_belief_id", "wiki_beliefs", "belief_id"),
                   ("superseded_in_run", "runs", "run_id")}


def test_seed_indexes_and_fts(vault):
    sqls = {n: s for n, s in vault.conn.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name='wiki_beliefs' "
                                                "AND type='index' AND sql IS NOT NULL")}
    for name, tail in SEED_INDEXES.items():
        assert " ".join(sqls[name].split()).endswith(tail), sqls[name]
    fts = vault.conn.execute("SELECT sql FROM sqlite_master WHERE name='wiki_beliefs_fts'").fetchone()[0]
    assert "content='wiki_beliefs'" in fts and "unicode61 remove_diacritics 2" in fts
    triggers = {r[0] for r in vault.conn.execute("SELECT name FROM sqlite_master WHERE type='trigger' AND "
                                                 "tbl_name='wiki_beliefs'")}
    assert triggers == {"wiki_beliefs_fts_ai", "wiki_beliefs_fts_ad", "wiki_beliefs_fts_au"}


def test_checks_and_fts_triggers(vault, tmp_path):
    vault.ingest([minimal_wiki(tmp_path / "w")], as_of="2026-06-01T00:00:00Z")
    c = vault.conn

    def fts(term: str) -> list[str]:
        return [r[0] for r in c.execute("SELECT b.belief_id FROM wiki_beliefs_fts f JOIN wiki_beliefs b ON "
                                        "b.rowid=f.rowid WHERE wiki_beliefs_fts MATCH ? ORDER BY 1", (term,))]

    assert fts("nantes") == ["b-nantes"]
    with pytest.raises(apsw.ConstraintError):
        c.execute("UPDATE wiki_beliefs SET statement=? WHERE belief_id='b-nantes'", ("x" * 281,))
    with pytest.raises(apsw.ConstraintError):   # a reason needs superseded_at
        c.execute("UPDATE wiki_beliefs SET supersession_reason='elaborated' WHERE belief_id='b-nantes'")
    with transaction(c):
        c.execute("UPDATE wiki_beliefs SET statement='Anna lives in Nantés, by the Loire.' WHERE belief_id='b-nantes'")
    assert fts("loire") == ["b-nantes"] and fts("nantes") == ["b-nantes"]   # diacritics removed
    with transaction(c):
        c.execute("DELETE FROM wiki_beliefs WHERE belief_id='b-lyon'")
    assert fts("lyon") == []
    c.execute("INSERT INTO wiki_beliefs_fts(wiki_beliefs_fts, rank) VALUES ('integrity-check', 1)")


def test_config_section_comes_from_defaults_yaml():
    cfg = load_config()
    assert cfg.beliefs.default_workspace == "personal" and cfg.beliefs.statement_max_chars == 280
    assert cfg.beliefs.m1.sample_size == 50 and cfg.beliefs.verifier.judge == "none"
    assert cfg.beliefs.supersession_reasons == ["contradicted_by_new_source", "elaborated", "manual_correction",
                                                "source_drifted"]
    with pytest.raises(ConfigError):
        load_config(overrides={"beliefs": {"statement_max_chars": 300}})   # the SQL CHECK caps it at 280
    with pytest.raises(ConfigError):
        load_config(overrides={"beliefs": {"supersession_reasons": ["vibes"]}})
    data = defaults_dict()
    del data["beliefs"]["why"]["max_results"]
    from kenning.config.models import Config

    with pytest.raises(Exception):
        Config.model_validate(data)   # every key must be in defaults.yaml
