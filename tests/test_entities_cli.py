"""`kenning entities`, `kenning entity NAME`, `kenning lexicon` as a user runs them."""

from __future__ import annotations

import json

import pytest

from entity_corpus import corpus
from exportkit import write_export


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from conftest import run_cli

    d = tmp_path_factory.mktemp("cli")
    export = write_export(d / "conversations.json", corpus())
    run_cli("ingest", str(export), "--as-of", "2024-12-31T00:00:00Z", "--quiet", db=d / "k.db")
    return d / "k.db"


def test_entities_json(cli, db):
    items = json.loads(cli("entities", "--json", db=db).stdout)
    names = [i["canonical_name"] for i in items]
    assert "Project Phoenix" in names and "PHX" in names
    saliences = [i["salience"] for i in items]
    assert saliences == sorted(saliences, reverse=True)
    for i in items:
        assert set(i) >= {"canonical_name", "entity_type", "aliases", "mention_count", "conversation_count", "salience"}
    people = json.loads(cli("entities", "--type", "person", "--json", db=db).stdout)
    assert people and {p["entity_type"] for p in people} == {"PERSON"}
    assert "Mia" in [p["canonical_name"] for p in people]


def test_entities_table_and_bad_type(cli, db):
    out = cli("entities", db=db).stdout
    assert "Project Phoenix" in out and "salience" in out
    bad = cli("entities", "--type", "SPACESHIP", db=db, check=False)
    assert bad.returncode == 1 and "unknown entity type" in bad.stderr


def test_entity_mentions_in_context(cli, db):
    data = json.loads(cli("entity", "mia", "--json", db=db).stdout)
    assert data["canonical_name"] == "Mia" and data["aliases"] == ["MIA", "Mia"]
    assert data["name_history"][0]["previous_name"] == "MIA"
    assert len(data["mentions"]) == data["mention_count"] == 5
    for m in data["mentions"]:
        assert "[" + m["surface"] + "]" in m["context"] and m["created_at_utc"]
    text = cli("entity", "PHX", db=db).stdout
    assert "[PHX]" in text and "2024-03-09" in text
    missing = cli("entity", "Nobody Here", db=db, check=False)
    assert missing.returncode == 1 and "no entity" in missing.stderr


def test_lexicon_json_lists_terms_and_rejections(cli, db):
    data = json.loads(cli("lexicon", "--json", "--rejected", "100", db=db).stdout)
    terms = {t["term"] for t in data["terms"]}
    assert {"PHX", "Project Phoenix", "Blue Garden"} <= terms
    reasons = {r["term_key"]: r["reason"] for r in data["rejected"]}
    assert reasons["zorb"] == "BELOW_MIN_COUNT" and reasons["quux"] == "BELOW_MIN_CONV"
    assert reasons["frobtool"] == "CODE_HEAVY" and reasons["march"] == "DENYLIST" and reasons["glim"] == "LOW_DIVERSITY"
    assert data["build"]["rejection_reasons"]["DENYLIST"] == 1
    out = cli("lexicon", db=db).stdout
    assert "selected terms" in out and "LOW_DIVERSITY" in out


def test_empty_vault(cli, tmp_path):
    db = tmp_path / "empty.db"
    cli("init", db=db)
    assert json.loads(cli("entities", "--json", db=db).stdout) == []
    assert json.loads(cli("lexicon", "--json", db=db).stdout)["terms"] == []
