"""graph_events.jsonl (DOC72 §3.1): exported after each commit, resumable after a failure or a torn line, and a
deterministic rebuild from it gives the same node store."""

from __future__ import annotations

import os
import stat

import orjson
import pytest

from kenning.config import load_config
from kenning.knowledge import eventlog
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
from kenning.knowledge.errors import EventLogError
from kenning.knowledge.ops import CreateEdge, CreateNode, EndEdge, Feedback, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store.connection import open_store


def _write(conn, at, *ops, cfg=None):
    return KnowledgeWriter(conn, cfg or load_config(), clock=Clock(at)).write(
        KnowledgeWrite(source_event="test", change_summary="t", ops=list(ops)))


def _history(conn):
    """A small history with every mutation type: creates, an edge, feedback, an ended edge, a rollback."""
    anna = _write(conn, "2026-01-01T00:00:00.000Z", CreateNode(
        node_kind="world_entity", canonical_name="Anna", payload={"entity_type": "person"},
        aliases=({"alias": "Annie"},), provenance=(ProvenanceIn(
            entry_type="conversation_mention", message_id="m1", char_start=3, char_end=7, verbatim_excerpt="Anna",
            evidence_event="learned_from_chat", created_at="2025-12-01T00:00:00.000Z"),))).node_ids[0]
    berlin = _write(conn, "2026-01-01T00:00:01.000Z", CreateNode(
        node_kind="world_entity", canonical_name="Berlin", payload={"entity_type": "place"})).node_ids[0]
    _write(conn, "2026-01-02T00:00:00.000Z", CreateEdge(source_id=anna, relation_type="domain_lives_in",
                                                        target_id=berlin, start_date="2020-01-01T00:00:00.000Z"))
    _write(conn, "2026-01-03T00:00:00.000Z", Feedback(id=anna, action="confirm"))
    fix = _write(conn, "2026-01-04T00:00:00.000Z", Feedback(id=anna, action="correct", canonical_name="Anna K."))
    _write(conn, "2026-01-05T00:00:00.000Z", EndEdge(source_id=anna, relation_type="domain_lives_in",
                                                     target_id=berlin, reason="moved"))
    _write(conn, "2026-01-06T00:00:00.000Z", CreateNode(node_kind="goal", canonical_name="Learn Spanish",
                                                        payload=EXAMPLE_PAYLOADS["goal"]))
    KnowledgeWriter(conn, load_config(), clock=Clock("2026-01-07T00:00:00.000Z")).rollback(fix.commit_id,
                                                                                           reason="typo")
    return anna


def test_every_commit_is_exported_in_order_with_owner_only_permissions(tmp_path):
    conn = open_store(tmp_path / "v.db")
    _history(conn)
    path = tmp_path / "v.graph_events.jsonl"
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, ksql.commit_count(conn) + 1))
    assert lines[-1]["commit"]["kind"] == "rollback"
    assert lines[3]["outcome_events"][0]["outcome"] == "confirmed"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_rebuild_from_the_log_gives_the_same_store(tmp_path):
    conn = open_store(tmp_path / "v.db")
    anna = _history(conn)
    before = ksql.dump(conn)
    counts = eventlog.rebuild(conn, tmp_path / "v.graph_events.jsonl")
    assert counts["commits"] == len(before["knowledge_commits"])
    assert ksql.dump(conn) == before
    assert ksql.fts_node_ids(conn, "annie") == [anna]  # the FTS index follows the rebuilt rows
    # and a fresh vault rebuilt from the same log holds the same content
    other = open_store(tmp_path / "w.db")
    eventlog.rebuild(other, tmp_path / "v.graph_events.jsonl")
    assert ksql.dump(other) == before


def test_a_failed_export_loses_nothing_and_the_next_one_catches_up(tmp_path):
    log = tmp_path / "v.graph_events.jsonl"
    log.mkdir()  # the export cannot open it (as any user, root included): the commit still lands in SQLite
    conn = open_store(tmp_path / "v.db")
    res = _write(conn, "2026-01-01T00:00:00.000Z", CreateNode(node_kind="goal", canonical_name="A",
                                                              payload=EXAMPLE_PAYLOADS["goal"]))
    assert res.created and ksql.commit_count(conn) == 1
    log.rmdir()
    assert eventlog.export_pending(conn, load_config()) == 1
    assert eventlog.export_pending(conn, load_config()) == 0
    assert [r["commit"]["commit_id"] for r in eventlog.read_log(log)] == [res.commit_id]


def test_a_torn_last_line_is_cut_and_rewritten(tmp_path):
    conn = open_store(tmp_path / "v.db")
    _history(conn)
    path = tmp_path / "v.graph_events.jsonl"
    good = path.read_bytes()
    lines = good.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # a crash mid-append
    assert [r["seq"] for r in eventlog.read_log(path)][-1] == len(lines) - 1
    assert eventlog.export_pending(conn, load_config()) == 1
    assert path.read_bytes() == good


def test_a_corrupt_log_is_refused_and_the_store_is_untouched(tmp_path):
    conn = open_store(tmp_path / "v.db")
    _history(conn)
    before = ksql.dump(conn)
    bad = tmp_path / "bad.jsonl"
    first = (tmp_path / "v.graph_events.jsonl").read_bytes().splitlines(keepends=True)[0]
    bad.write_bytes(first + b"not json\n")
    with pytest.raises(EventLogError, match="line 2"):
        eventlog.rebuild(conn, bad)
    assert ksql.dump(conn) == before
