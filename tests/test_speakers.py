"""Transcripts: a first-person statement grounds to its speaker (SELF only for the vault owner), human speakers are
user-grounded whatever their role column says (docs/decisions.md A10). Most tests write the raw tables themselves
(sessions as conversations with source_kind='transcript', turns with author_name = speaker, transcript_participants)
to control roles exactly; the last one goes through the transcript importer (issue 9) with `--self`."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from exportkit import query
from kenning.api import Vault
from kenning.extract.speakers import SpeakerResolver, speaker_subject
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize
from kenning.store import raw as raw_sql
from kenning.store.assertions import table_exists
from kenning.store.connection import transaction

IDS = IdFactory()
SELF_ID = IDS.make("entity", "PERSON", "__SELF__")
PARTICIPANTS_DDL = """CREATE TABLE IF NOT EXISTS transcript_participants (
  conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id),
  participant_key TEXT NOT NULL, name TEXT NOT NULL, aliases_json TEXT NOT NULL,
  is_self INTEGER NOT NULL CHECK (is_self IN (0, 1)), PRIMARY KEY (conversation_id, participant_key))"""


def _conversation_rows(conv_id: str, turns: list[tuple[str, str, str]], start: str) -> tuple[dict, list[dict]]:
    raw = canonicalize({"transcript": conv_id})
    conv = {"conversation_id": conv_id, "export_conversation_id": conv_id, "title": f"session {conv_id}",
            "created_at_utc": start, "updated_at_utc": start, "message_count": len(turns), "raw_conversation_json": raw,
            "source_kind": "transcript", "current_node_message_id": None,
            "raw_sha256": hashlib.sha256(raw.encode()).hexdigest(), "import_key": conv_id, "first_run_id": "test",
            "last_changed_run_id": "test"}
    msgs = []
    for i, (speaker, role, text) in enumerate(turns):
        mid = IDS.make("message", conv_id, i)
        raw_m = canonicalize({"speaker": speaker, "text": text, "i": i})
        msgs.append({"message_id": mid, "conversation_id": conv_id, "role": role, "parent_id": None,
                     "tree_path": str(i), "order_index": i, "created_at_utc": start[:-7] + f"{i:02d}.000Z",
                     "timestamp_quality": "original", "content_type": "text", "text_raw": text,
                     "text_part_map_json": None, "code_fence_ranges_json": "[]", "blockquote_ranges_json": "[]",
                     "attachment_count": 0, "raw_message_json": raw_m, "export_message_id": f"t{i}",
                     "export_parent_id": None, "author_name": speaker, "recipient": None, "export_content_type": None,
                     "is_hidden": 0, "is_current_branch": 1, "citation_ranges_json": "[]",
                     "raw_sha256": hashlib.sha256(raw_m.encode()).hexdigest(), "first_run_id": "test",
                     "last_changed_run_id": "test"})
    return conv, msgs


TURNS = [
    ("Alice", "user", "Morning Bob! I live in Berlin these days and I work at Acme Corp."),
    ("Bob", "unknown", "Nice. I live in Munich and I work at Initech. My sister Clara lives in Vienna."),
    ("Bob", "unknown", "You live in Berlin, right? I love hiking."),
    ("Dana", "unknown", "Hi both, I moved to Hamburg in March 2023."),
]


@pytest.fixture
def transcript_vault(tmp_path):
    db = tmp_path / "t.db"
    with Vault.open(db) as v:
        conv, msgs = _conversation_rows("session-1", TURNS, "2024-05-01T10:00:00.000Z")
        with transaction(v.conn):
            raw_sql.insert_conversation(v.conn, conv, msgs, [])
            v.conn.execute(PARTICIPANTS_DDL)
            v.conn.executemany("INSERT INTO transcript_participants VALUES (?,?,?,?,?)", [
                ("session-1", "alice", "Alice", '["Ali"]', 1), ("session-1", "bob", "Bob", "[]", 0)])
        results = v.ingest([], as_of="2024-12-31T00:00:00Z", stages="2A,2B,3,4")
    return db, {r.stage: r for r in results}


def _facts(db) -> list[dict]:
    return query(db, "SELECT a.*, s.canonical_name AS subject, s.entity_type AS subject_type, p.canonical_label AS "
                     "predicate, coalesce(o.canonical_name, a.object_value) AS object, m.author_name FROM assertions a "
                     "JOIN predicates p USING(predicate_id) JOIN entities s ON s.entity_id = a.subject_entity_id "
                     "LEFT JOIN entities o ON o.entity_id = a.object_entity_id JOIN messages m USING(message_id)")


def test_first_person_grounds_to_the_speaker(transcript_vault):
    db, _ = transcript_vault
    facts = {(f["author_name"], f["subject"], f["predicate"], f["object"]) for f in _facts(db)}
    assert ("Alice", "SELF", "lives_in", "Berlin") in facts        # the vault owner
    assert ("Bob", "Bob", "lives_in", "Munich") in facts            # another person: his own entity
    assert ("Bob", "Bob", "works_at", "Initech") in facts
    assert ("Bob", "Bob", "has_sister", "Clara") in facts           # "my" is Bob's
    assert ("Bob", "Clara", "lives_in", "Vienna") in facts
    assert ("Dana", "Dana", "lives_in", "Hamburg") in facts         # a speaker the header did not declare
    # "You live in Berlin, right?" is Bob talking to Alice: not recorded
    assert not [f for f in _facts(db) if f["author_name"] == "Bob" and f["object"] == "Berlin"]


def test_speaker_entities_are_deterministic_people(transcript_vault):
    db, _ = transcript_vault
    bob = query(db, "SELECT * FROM entities WHERE entity_type='PERSON' AND entity_key='bob'")
    assert len(bob) == 1 and bob[0]["entity_id"] == IDS.make("entity", "PERSON", "bob")
    for f in _facts(db):
        if f["author_name"] == "Bob" and f["predicate"] == "lives_in" and f["object"] == "Munich":
            assert f["subject_entity_id"] == bob[0]["entity_id"] and f["subject_detection_tier"] == 1


def test_human_speakers_are_user_grounded_whatever_their_role(transcript_vault):
    db, _ = transcript_vault
    for f in _facts(db):
        assert f["asserted_role"] == "user"
        penalty = orjson.loads(f["raw_assertion_json"]).get("temporal_bounds_check", {}).get("penalty_applied", 0)
        assert f["confidence_final"] == pytest.approx(f["confidence_extraction"] * f["confidence_grounding"] *
                                                      (1 - penalty), abs=1e-6)   # trust 1.0
    roles = {r["role"] for r in query(db, "SELECT DISTINCT role FROM messages")}
    assert roles == {"user", "unknown"}


def test_speaker_subject_function(tmp_path, transcript_vault):
    db, _ = transcript_vault
    with Vault.open(db) as v:
        rows = [dict(zip(("message_id", "conversation_id", "role", "author_name"), r)) for r in
                v.conn.execute("SELECT message_id, conversation_id, role, author_name FROM messages ORDER BY order_index")]
        assert speaker_subject(v.conn, rows[0]) == (SELF_ID, 1, 1.0)                      # Alice (is_self)
        assert speaker_subject(v.conn, rows[1]) == (IDS.make("entity", "PERSON", "bob"), 1, 1.0)
        assert speaker_subject(v.conn, {**rows[1], "author_name": "Ali"}) == (SELF_ID, 1, 1.0)   # an alias
        assert speaker_subject(v.conn, {"role": "assistant", "conversation_id": "chat", "author_name": None}) is None
        assert speaker_subject(v.conn, {"role": "user", "conversation_id": "chat", "author_name": None}) == \
            (SELF_ID, 1, 1.0)
        assert speaker_subject(v.conn, {"role": "tool", "conversation_id": "chat", "author_name": "python"}) is None


def test_without_the_participants_table_chat_users_are_self(tmp_path):
    db = tmp_path / "plain.db"
    with Vault.open(db) as v:
        if table_exists(v.conn, "transcript_participants"):   # the issue-9 migration has landed: empty table
            assert v.conn.execute("SELECT COUNT(*) FROM transcript_participants").fetchone()[0] == 0
        r = SpeakerResolver(v.conn, IDS)
        sp = r.speaker({"role": "user", "conversation_id": "c1", "author_name": None})
        assert (sp.kind, sp.entity_id, sp.trust_role) == ("self", SELF_ID, "user")
        sp = r.speaker({"role": "assistant", "conversation_id": "c1", "author_name": None})
        assert (sp.kind, sp.entity_id, sp.trust_role) == ("assistant", None, "assistant")
        sp = r.speaker({"role": "unknown", "conversation_id": "c1", "author_name": "critic"})
        assert sp.trust_role is None      # an unmapped chat role is never extracted


def test_imported_transcript_grounds_each_speaker(tmp_path):
    """Through `kenning ingest` of a transcript file with --self Ana and two other people: Ana's "I" and "my" are
    SELF (also when she speaks under her alias "Annie"), Ben's and Cleo's are their own PERSON entities, and all
    three are user-grounded although Ben and Cleo are stored with role 'unknown'."""
    import json

    from conftest import HASH, transcript_doc

    doc = transcript_doc()
    doc["participants"].append({"id": "cleo", "name": "Cleo"})
    doc["sessions"][2]["turns"].append({"id": "t3", "speaker": "Cleo", "text": "I live in Porto and I work at Globex."})
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    db = tmp_path / "v.db"
    with Vault.open(db, overrides=HASH) as v:
        v.ingest([path], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    got = {(f["author_name"], f["subject"], f["subject_type"], f["predicate"], f["object"], f["asserted_role"])
           for f in _facts(db)}
    assert ("Ana", "SELF", "PERSON", "attends", '"pottery class"', "user") in got
    assert ("Ana", "SELF's sister", "PERSON", "lives_in", "Lisbon", "user") in got      # said as "Annie"
    assert ("Ben", "Ben", "PERSON", "has_pet", "Shelly", "user") in got
    assert ("Cleo", "Cleo", "PERSON", "lives_in", "Porto", "user") in got
    assert ("Cleo", "Cleo", "PERSON", "works_at", "Globex", "user") in got
    assert {f["role"] for f in query(db, "SELECT DISTINCT role FROM messages WHERE author_name IN ('Ben','Cleo')")} \
        == {"unknown"}
    people = query(db, "SELECT entity_id, entity_key FROM entities WHERE entity_type='PERSON' AND entity_key IN "
                       "('ben','cleo') ORDER BY entity_key")
    assert [(p["entity_id"], p["entity_key"]) for p in people] == \
        [(IDS.make("entity", "PERSON", k), k) for k in ("ben", "cleo")]
