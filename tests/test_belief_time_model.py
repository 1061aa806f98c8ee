"""One time model for every ledger row (issue 22 §1, decisions W30–W33): a belief starts when the person said it
(wiki: when the page says), Kenning's import time is kept apart (recorded_at) and `--told-by` asks for it, and
`kenning reindex --rebuild-beliefs` rebuilds conversation and self beliefs deterministically, equal to ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from beliefs.beliefs_helpers import minimal_wiki
from conftest import run_cli
from exportkit import ingest, query, write_export
from selfbeliefs.helpers import multi_export

HASH = {"embeddings": {"backend": "hash"}}
JULY_2023 = 1689411600          # 2023-07-15T09:00:00Z
LEDGER = ("wiki_beliefs", "belief_provenance", "wiki_claim_provenance", "belief_sightings", "documents")


def ledger_rows(db: Path) -> dict[str, list[dict]]:
    return {t: query(db, f"SELECT * FROM {t} ORDER BY 1, 2") for t in LEDGER}


def rebuild(db: Path, as_of: str) -> None:
    from kenning.api import Vault

    with Vault.open(db, overrides=HASH) as v:
        feeds = v.rebuild_beliefs(as_of=as_of)[-1]
    assert feeds.stage == "beliefs-rebuild-feeds" and feeds.counts["beliefs_deleted"] > 0   # really rebuilt


@pytest.fixture(scope="module")
def selfvault(tmp_path_factory):
    d = tmp_path_factory.mktemp("selftime")
    export = multi_export(d / "e.json", [("c-july", JULY_2023, [
        ("user", "I am patient with people."), ("assistant", "Good to hear."),
        ("user", "I used to be a night owl."), ("assistant", "Noted."),
        ("user", "I no longer eat meat."), ("assistant", "Noted.")])])
    db = d / "k.db"
    ingest(db, export, stages="0,1,self", as_of="2024-03-01T00:00:00Z", overrides=HASH)
    return db


def why(db: Path, q: str, **kw):
    from kenning.api import Vault

    with Vault.open(db, overrides=HASH, readonly=True) as v:
        return v.why(q, **kw)


def test_a_self_statement_starts_when_it_was_said(selfvault):
    [row] = query(selfvault, "SELECT asserted_at, recorded_at FROM wiki_beliefs WHERE statement LIKE 'I am patient%'")
    assert row == {"asserted_at": "2023-07-15T09:00:00.000Z", "recorded_at": "2024-03-01T00:00:00.000Z"}
    ans = why(selfvault, "patient", until="2023-12-31")
    assert [(a["statement"], a["status"]) for a in ans["answers"]] == [("I am patient with people.", "current")]
    assert why(selfvault, "patient", told_by="2023-12-31")["match_type"] == "none"   # imported in 2024


def test_a_past_tense_self_statement_is_not_current(selfvault):
    ans = why(selfvault, "night owl")
    assert [(a["statement"], a["status"]) for a in ans["answers"]] == [("I am a night owl.", "ended")]
    assert ans["answers"][0]["source_valid_to"] == "2023-07-15T09:02:00.000Z"
    meat = why(selfvault, "eat meat")["answers"]
    assert [a["status"] for a in meat] == ["current"] and "not" in meat[0]["statement"]   # the denial holds now
    text = run_cli("why", "night owl", "--config", str(_hash_cfg(selfvault)), db=selfvault).stdout
    assert "Now: I am a night owl" not in text and "you said it in the past tense on 2023-07-15" in text


def _hash_cfg(db: Path) -> Path:
    p = db.parent / "hash.yaml"
    p.write_text("embeddings:\n  backend: hash\n")
    return p


def test_rebuilding_self_beliefs_twice_gives_the_ingest_rows(selfvault, tmp_path):
    db = tmp_path / "copy.db"
    shutil.copy(selfvault, db)
    before = ledger_rows(db)
    rebuild(db, "2025-01-01T00:00:00Z")
    once = ledger_rows(db)
    rebuild(db, "2025-02-01T00:00:00Z")
    assert ledger_rows(db) == once == before


@pytest.fixture(scope="module")
def convvault(tmp_path_factory):
    import temporal_corpus as tc

    d = tmp_path_factory.mktemp("convtime")
    db = d / "k.db"
    ingest(db, write_export(d / "e.json", tc.lifecycle()), as_of="2024-12-31T00:00:00Z", overrides=HASH)
    return db


def test_conversation_beliefs_start_at_the_message_and_record_the_import(convvault):
    [berlin] = query(convvault, "SELECT b.asserted_at, b.recorded_at, m.created_at_utc FROM wiki_beliefs b JOIN "
                                "wiki_claim_provenance p ON p.id = json_extract(b.provenance_ids, '$[0]') JOIN messages m "
                                "ON m.message_id = p.message_id WHERE p.quote = 'I live in Berlin'")
    assert berlin["asserted_at"] == berlin["created_at_utc"] and berlin["recorded_at"] == "2024-12-31T00:00:00.000Z"
    before = why(convvault, "SELF", predicate="lives_in", until="2023-11-13")
    assert not any(a["statement"].startswith("I live in") for a in before["answers"])   # not said yet
    held = why(convvault, "SELF", predicate="lives_in", until=berlin["asserted_at"])
    # when it was said it was already over: the source dates it 2019-01-01 – 2023-03-01
    assert [a["status"] for a in held["answers"] if a["statement"].startswith("I live in Berlin")] == ["ended"]
    later = why(convvault, "SELF", predicate="lives_in", until="2023-11-14")     # the same day, after the move
    assert [a["status"] for a in later["answers"] if a["statement"].startswith("I live in Berlin")] == ["superseded"]
    assert why(convvault, "SELF", predicate="lives_in", told_by="2024-12-30")["match_type"] == "none"


def test_rebuilding_conversation_beliefs_twice_gives_the_ingest_rows(convvault, tmp_path):
    db = tmp_path / "copy.db"
    shutil.copy(convvault, db)
    before = ledger_rows(db)
    rebuild(db, "2025-01-01T00:00:00Z")
    once = ledger_rows(db)
    rebuild(db, "2025-02-01T00:00:00Z")
    assert ledger_rows(db) == once == before
    assert once["wiki_beliefs"]


def test_wiki_beliefs_keep_the_pages_dates_and_record_the_import(tmp_path):
    from kenning.api import Vault

    root = minimal_wiki(tmp_path / "ws")
    db = tmp_path / "k.db"
    with Vault.open(db, overrides=HASH) as v:
        v.ingest([root], as_of="2026-06-01T00:00:00Z")
        row = v.conn.execute("SELECT asserted_at, recorded_at FROM wiki_beliefs WHERE belief_id='b-lyon'").fetchone()
        assert row == ("2026-01-01T00:00:00.000Z", "2026-06-01T00:00:00.000Z")
        then = v.why("Anna", until="2026-03-01")
        assert then["as_of"]["belief_ids"] == ["b-lyon"]
        assert {a["statement"]: a["status"] for a in then["answers"]}["Anna lives in Lyon."] == "current"
        assert v.why("Anna", told_by="2026-05-31")["match_type"] == "none"


def test_a_question_naming_someone_finds_their_beliefs_through_the_entity_index(convvault):
    ans = why(convvault, "what about Anna?")
    assert ans["matched_entities"] == ["Anna"] and "entity" in ans["match_types"]
    assert ans["answers"] and all("Anna" in a["statement"] or a["subject"] == "Anna" or a["object"] == "Anna"
                                  for a in ans["answers"] if a["matched"])
