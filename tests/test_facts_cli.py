"""``kenning facts`` as a subprocess: filters, quotes, dates, titles, confidence and method (issue 5 CLI)."""

from __future__ import annotations

import json

import pytest

from assertion_corpus import corpus
from exportkit import ingest, write_export


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    d = tmp_path_factory.mktemp("facts")
    path = d / "k.db"
    ingest(path, write_export(d / "export.json", corpus()))
    return path


def test_facts_json_fields(db, cli):
    items = json.loads(cli("facts", "--json", db=db).stdout)
    assert len(items) > 25
    for f in items:
        for k in ("subject", "predicate", "object", "quote", "message_date", "conversation_title", "confidence",
                  "extraction_method", "asserted_role", "modality", "polarity", "temporal_qualifier"):
            assert k in f
        assert f["extraction_method"] == "rule_based" and 0 <= f["confidence"] <= 1
    dates = [f["message_date"] for f in items]
    assert dates == sorted(dates)


def test_facts_about_me_and_predicate_categories(db, cli):
    items = json.loads(cli("facts", "--about", "me", "--predicate", "residence", "--json", db=db).stdout)
    got = {(f["predicate"], f["object"], f["polarity"]) for f in items}
    assert ("lives_in", "Berlin", "positive") in got and ("lives_in", "Paris", "positive") in got
    assert ("lives_in", "Berlin", "negative") in got
    assert {f["subject"] for f in items} == {"SELF"}
    paris = next(f for f in items if f["quote"] == "I moved to Paris")
    assert paris["temporal_qualifier"]["type"] == "since" and paris["temporal_qualifier"]["surface"] == "March 2023"
    assert paris["conversation_title"] == "a-residence"


def test_facts_about_a_person_and_by_role(db, cli):
    anna = json.loads(cli("facts", "--about", "Anna", "--json", db=db).stdout)
    assert {(f["subject"], f["predicate"], f["object"]) for f in anna} >= {("Anna", "lives_in", "Lisbon"),
                                                                          ("SELF", "has_sister", "Anna")}
    assistant = json.loads(cli("facts", "--role", "assistant", "--json", db=db).stdout)
    assert assistant and all(f["asserted_role"] == "assistant" for f in assistant)
    assert {f["corroborated"] for f in assistant} == {True, False}


def test_facts_show_corrections_and_retractions(db, cli):
    items = json.loads(cli("facts", "--json", db=db).stdout)
    porto = next(f for f in items if f["object"] == "Porto" and f["subject"] == "SELF's sister")
    assert porto["supersession_type"] == "correction" and porto["superseded_by"]
    cat = next(f for f in items if f["object"] == "cat")
    assert [r["retraction_type"] for r in cat["retracted_by"]] == ["full"]


def test_facts_table_and_errors(db, cli):
    text = cli("facts", "--about", "me", "--predicate", "lives_in", db=db, env={"COLUMNS": "220"}).stdout
    assert "SELF lives in Paris (since March 2023)" in text and "“I moved to Paris”" in text
    assert "a-residence" in text and "rule_based" in text
    bad = cli("facts", "--role", "robot", db=db, check=False)
    assert bad.returncode != 0 and "--role must be user or assistant" in bad.stderr
    nobody = cli("facts", "--about", "Zanzibar Q", db=db, check=False)
    assert nobody.returncode != 0 and "no entity called" in nobody.stderr
    none = cli("facts", "--no-questions", "--json", db=db).stdout
    assert all(f["modality"] != "question" for f in json.loads(none))


def test_facts_show_the_aspect(db, cli):
    """A past claim ("I was in Lisbon") and a change ("I stopped running") say so in the table and the JSON."""
    items = json.loads(cli("facts", "--about", "me", "--json", db=db).stdout)
    got = {(f["predicate"], f["object"], f["polarity"]): f["aspect"] for f in items}
    assert got[("located_in", "Lisbon", "positive")] == "past"
    assert got[("habit", "running", "negative")] == "transition"
    table = cli("facts", "--about", "me", "--predicate", "habit", db=db).stdout
    assert "[change]" in table
