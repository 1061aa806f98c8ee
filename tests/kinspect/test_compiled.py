"""Compiled truth (seed 003 §42A.4): the four stable-JSON hashes, stale reasons, the < 5 minute build lock, stale
served while rebuilt, reads that never write; the constellation of an entity (§42A.4.5); the weekly digest
(§42A.4.6)."""

from __future__ import annotations

import hashlib
import json

import pytest

from kenning.config.loader import load_config
from kenning.knowledge.compiled import compiled_truth, node_hash, provenance_hash, relationship_hash
from kenning.knowledge.digest import DigestError, weekly_digest
from kenning.knowledge.ops import Evidence, KnowledgeWrite
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.retrieve.constellation import constellation
from kenning.store import compiled as csql
from kenning.store.connection import open_store

from knowledge.delivery_fixtures import NOW

LATER = "2026-03-10T10:03:00.000Z"      # within the 5 minute lock
MUCH_LATER = "2026-03-10T10:06:00.000Z"


def test_stable_json_hashes_match_the_seed_examples():
    node = {"id": "n1", "canonical_name": "Anna", "node_kind": "world_entity", "confidence": 0.5,
            "lifecycle_state": "observed", "updated_at": "2026-03-01T10:00:00.000Z", "payload": {"b": 1, "a": [2.0]}}
    # stableJson: keys sorted recursively, JSON.stringify numbers (2.0 → 2)
    text = ('{"canonical_name":"Anna","confidence":0.5,"id":"n1","lifecycle_state":"observed",'
            '"node_kind":"world_entity","payload":{"a":[2],"b":1},"updated_at":"2026-03-01T10:00:00.000Z"}')
    assert node_hash(node) == hashlib.sha256(text.encode()).hexdigest()
    e1 = {"source_id": "b", "target_id": "c", "relation_type": "r", "confidence": 1.0, "lifecycle_state": "active"}
    e2 = {**e1, "source_id": "a"}
    assert relationship_hash("n1", [e1, e2]) == relationship_hash("n1", [e2, e1])
    expected = ('n1|[{"confidence":1,"lifecycle_state":"active","payload":null,"relation_type":"r","source_id":"a",'
                '"target_id":"c"},{"confidence":1,"lifecycle_state":"active","payload":null,"relation_type":"r",'
                '"source_id":"b","target_id":"c"}]')
    assert relationship_hash("n1", [e1, e2]) == hashlib.sha256(expected.encode()).hexdigest()
    p = [{"id": "2", "created_at": "x"}, {"id": "1", "created_at": "y"}]
    assert provenance_hash(p) == provenance_hash(list(reversed(p))) and len(provenance_hash(p)) == 64


def test_read_build_stale_and_lock(anna):
    path, ids, config = anna
    c = open_store(path)
    first = compiled_truth(c, config, "Anna", now=NOW)
    assert first["persisted"] is False and first["status"] == "ready" and csql.get_truth(c, ids["Anna"]) is None
    assert first["markdown"].startswith("# Anna\n") and "## Relationships" in first["markdown"]
    built = compiled_truth(c, config, "Anna", now=NOW, build=True)
    assert built["persisted"] and built["rebuilt_because"] == "missing"
    assert {k: built[k] for k in ("node_hash", "relationship_hash", "provenance_hash", "render_input_hash")} == \
        {k: first[k] for k in ("node_hash", "relationship_hash", "provenance_hash", "render_input_hash")}
    assert compiled_truth(c, config, "Anna", now=NOW)["status"] == "ready"
    # the node changes: the stored model is served at once, marked stale, with the reason
    KnowledgeWriter(c, config, clock=Clock(LATER)).write(KnowledgeWrite(
        source_event="test", change_summary="evidence", ops=[Evidence(id=ids["Anna"], event_type="confirmed_by_user")]))
    stale = compiled_truth(c, config, "Anna", now=LATER)
    assert stale["stale"] and stale["stale_reason"] == "node_changed" and stale["status"] == "stale"
    assert stale["markdown"] == built["markdown"]
    # another job holds a fresh lock: no second build, the stale model comes back as "building"
    with c:
        csql.put_lock(c, ids["Anna"], "building", NOW, "other-job")
    held = compiled_truth(c, config, "Anna", now=LATER, build=True)
    assert held["status"] == "building" and held["stale"]
    assert csql.get_truth(c, ids["Anna"])["rendered_at"] == NOW
    # the lock is older than 5 minutes: this build takes over
    rebuilt = compiled_truth(c, config, "Anna", now=MUCH_LATER, build=True)
    assert rebuilt["status"] == "ready" and rebuilt["rebuilt_because"] == "node_changed"
    assert csql.get_lock(c, ids["Anna"])["status"] == "idle"
    # a new renderer version makes every model stale
    other = load_config(overrides={"knowledge": {"store": {"event_log": "off"}},
                                   "inspect": {"compiled_truth": {"renderer_version": "compiled_truth_v2"}}})
    assert compiled_truth(c, other, "Anna", now=MUCH_LATER)["stale_reason"] == "renderer_changed"
    c.close()


def test_relationship_and_provenance_changes_are_named(anna):
    path, ids, config = anna
    c = open_store(path)
    compiled_truth(c, config, "Lisbon", now=NOW, build=True)
    from kenning.knowledge.ops import CreateEdge
    KnowledgeWriter(c, config, clock=Clock(LATER)).write(KnowledgeWrite(
        source_event="test", change_summary="edge", ops=[CreateEdge(source_id=ids["Marco"],
                                                                    relation_type="domain_lives_in",
                                                                    target_id=ids["Lisbon"])]))
    assert compiled_truth(c, config, "Lisbon", now=LATER)["stale_reason"] == "relationships_changed"
    c.close()


def test_reading_never_writes(anna):
    path, _, config = anna
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    c = open_store(path, readonly=True)
    assert compiled_truth(c, config, "Anna", now=NOW)["persisted"] is False
    constellation(c, config, "Anna", now=NOW)
    weekly_digest(c, config, now=NOW)
    c.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_constellation_of_an_entity(anna):
    path, ids, config = anna
    c = open_store(path, readonly=True)
    s = constellation(c, config, "Anna", now=NOW)
    c.close()
    names = [p["canonical_name"] for p in s["primary_entities"]]
    assert names[0] == "Anna" and "Lisbon" in names and len(names) <= 12
    assert {g["canonical_name"] for g in s["active_goals"]} >= {"Hike the Rota Vicentina with Anna"}
    assert s["active_obligations"][0]["due_hint"] == "due 2026-03-15"
    assert any("[distinguish] Marco" in u for u in s["unresolved_items"])
    assert 0 < s["scene_confidence"] <= 1 and len(s["recent_changes"]) <= 8
    assert s["likely_next_procedures"] == [] and s["expected_but_missing_concepts"] == []   # no confirmed motifs


def test_weekly_digest(anna):
    path, ids, config = anna
    c = open_store(path, readonly=True)
    d = weekly_digest(c, config, now=NOW)
    sec = d["content"]["work_context_sections"][0]
    assert d["content"]["week_start"] == "2026-03-03T10:00:00.000Z"
    assert sec["new_entities"] == []                       # everything was created on 2026-03-01
    wide = weekly_digest(c, config, now=NOW, since="2026-02-25")["content"]["work_context_sections"][0]
    assert 0 < len(wide["new_entities"]) <= 15 and wide["new_entities"][0]["created_at"] == "2026-03-01T10:00:00.000Z"
    assert sec["approaching_deadlines"] == [{"node_id": ids["Send Anna the hiking maps"],
                                             "canonical_name": "Send Anna the hiking maps",
                                             "deadline_hint": "due 2026-03-15, pending"}]
    assert weekly_digest(c, config, now=NOW) == d                              # deterministic
    later = weekly_digest(c, config, now="2026-03-20T10:00:00.000Z", since="2026-02-01")
    assert later["content"]["work_context_sections"][0]["approaching_deadlines"] == []
    with pytest.raises(DigestError, match="not a date"):
        weekly_digest(c, config, now=NOW, since="someday")
    c.close()


def test_digest_confidence_changes_and_corrections(anna):
    path, ids, config = anna
    c = open_store(path)
    KnowledgeWriter(c, config, clock=Clock("2026-03-20T10:00:00.000Z")).write(KnowledgeWrite(
        source_event="user:correct", change_summary="evidence against Lisbon",
        ops=[Evidence(id=ids["Lisbon"], event_type="confirmed_by_user", contradicts=True)]))
    d = weekly_digest(c, config, now="2026-03-21T10:00:00.000Z")
    sec = d["content"]["work_context_sections"][0]
    assert sec["new_entities"] == [] and sec["corrections_applied"] == 1
    ch = {x["canonical_name"]: x for x in sec["confidence_changes"]}
    assert ch["Lisbon"]["new_confidence"] < ch["Lisbon"]["old_confidence"]
    c.close()


def test_cli_truth_digest_constellation(anna, cli):
    path, ids, _ = anna
    t = json.loads(cli("truth", "Anna", "--as-of", NOW, "--json", db=path).stdout)
    assert t["status"] == "ready" and t["persisted"] is False
    t = json.loads(cli("truth", "Anna", "--build", "--as-of", NOW, "--json", db=path).stdout)
    assert t["persisted"] is True
    d = json.loads(cli("digest", "--since", "2026-02-25", "--as-of", NOW, "--json", db=path).stdout)
    assert d["content"]["work_context_sections"][0]["new_entities"]
    p = cli("digest", "--as-of", NOW, db=path)
    assert "approaching deadlines: 1" in p.stdout
    s = json.loads(cli("constellation", "Anna", "--as-of", NOW, "--json", db=path).stdout)
    assert s["work_context_name"] == "Anna"
