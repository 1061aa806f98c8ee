"""The knowledge-store commands, run as a person would (subprocess): add, show, confirm/reject/correct, edges,
commits, rollback, rebuild from the log; bad input exits 2 naming the field and writes nothing."""

from __future__ import annotations

import json

import pytest

from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
from kenning.store import knowledge as ksql
from kenning.store.connection import open_store

AT = ["--as-of", "2026-03-01T10:00:00Z"]


@pytest.fixture
def kv(tmp_path, cli):
    db = tmp_path / "v.db"

    def k(*args, check=True, stdin=None):
        return cli(*args, db=db, check=check, input=stdin)
    k("node", "add", "--kind", "world_entity", "--name", "Anna", "--alias", "Annie", "--payload", "-", *AT,
      stdin=json.dumps({"entity_type": "person", "description": "my sister"}))
    k("node", "add", "--kind", "goal", "--name", "Learn Spanish", "--payload", "-", *AT,
      stdin=json.dumps(EXAMPLE_PAYLOADS["goal"]))
    k.db = db
    return k


def _dump(db):
    conn = open_store(db, readonly=True)
    try:
        return ksql.dump(conn)
    finally:
        conn.close()


def test_show_names_the_seed_fields_and_the_breakdown(kv):
    v = json.loads(kv("node", "show", "annie", "--json", *AT).stdout)
    for key in ("node_kind", "canonical_name", "alpha", "beta", "confidence", "lifecycle_state", "payload",
                "staleness_state", "aliases", "edges", "provenance", "experience", "commits"):
        assert key in v
    assert v["canonical_name"] == "Anna" and v["payload"]["description"] == "my sister"
    b = v["confidence_breakdown"]
    assert b["alpha"] == pytest.approx(2.95) and b["beta"] == 2.0 and b["half_life_days"] == 180
    nodes = json.loads(kv("nodes", "--json", *AT).stdout)
    assert nodes["total"] == 2 and {n["node_kind"] for n in nodes["nodes"]} == {"world_entity", "goal"}


def test_feedback_moves_confidence_and_rollback_undoes_it(kv):
    before = json.loads(kv("node", "show", "Anna", "--json", *AT).stdout)
    res = json.loads(kv("node", "confirm", "Anna", "--reason", "yes, my sister", "--json", *AT).stdout)
    after = json.loads(kv("node", "show", "Anna", "--json", *AT).stdout)
    assert after["alpha"] == pytest.approx(before["alpha"] + 1.0) and after["confidence"] > before["confidence"]
    kv("node", "correct", "Anna", "--name", "Anna Schmidt", "--set", "description=my older sister", *AT)
    shown = kv("node", "show", "Anna Schmidt", *AT).stdout
    assert "Anna Schmidt" in shown and "user_correction" in shown
    kv("rollback", res["commit_id"][:12], "--reason", "clicked by mistake", *AT, check=False)
    commits = json.loads(kv("commits", "--node", "Anna Schmidt", "--json").stdout)["commits"]
    assert commits[0]["kind"] == "forward"  # the confirm is older than the correction: rollback was refused
    rb = kv("rollback", commits[0]["commit_id"], "--reason", "wrong name", "--json", *AT)
    assert json.loads(rb.stdout)["created"]
    assert json.loads(kv("node", "show", "Anna", "--json", *AT).stdout)["canonical_name"] == "Anna"


def test_edges_history_and_a_bad_relation(kv):
    kv("edge", "add", "Anna", "stakeholder_of", "Learn Spanish", "--start", "2025-01-01", *AT)
    bad = kv("edge", "add", "Anna", "serves_goall", "Learn Spanish", *AT, check=False)
    assert bad.returncode == 2 and "serves_goall" in bad.stderr and "serves_goal" in bad.stderr
    kv("edge", "end", "Anna", "stakeholder_of", "Learn Spanish", "--reason", "gave up", *AT)
    v = json.loads(kv("node", "show", "Learn Spanish", "--json", *AT).stdout)
    (e,) = v["edges"]
    assert e["end_date"] and e["payload"]["end_reason"] == "gave up" and not e["current"]


@pytest.mark.parametrize("args,stdin,needle", [
    (("node", "add", "--kind", "obligation", "--name", "Renew passport", "--payload", "-"),
     {**EXAMPLE_PAYLOADS["obligation"], "deadline": {**EXAMPLE_PAYLOADS["obligation"]["deadline"],
                                                     "date": "2026-05-01"}}, "deadline.date"),
    (("node", "add", "--kind", "persn", "--name", "X"), None, "persn"),
    (("node", "confirm", "no-such-node"), None, "no-such-node"),
    (("node", "confirm", "Anna", "--expected-updated-at", "2000-01-01T00:00:00.000Z"), None, "changed since"),
    (("rollback", "deadbeefdeadbeef"), None, "deadbeefdeadbeef"),
])
def test_bad_input_exits_2_names_the_reason_and_writes_nothing(kv, args, stdin, needle):
    before = _dump(kv.db)
    p = kv(*args, *AT, check=False, stdin=json.dumps(stdin) if stdin is not None else None)
    assert p.returncode == 2, p.stderr
    assert needle in p.stderr and "Traceback" not in p.stderr
    assert _dump(kv.db) == before


def test_rebuild_from_the_log_restores_the_same_store(kv):
    kv("node", "confirm", "Anna", *AT)
    before = _dump(kv.db)
    out = json.loads(kv("graph", "rebuild", "--from-log", "--json").stdout)
    assert out["commits"] == len(before["knowledge_commits"]) == 3
    assert _dump(kv.db) == before
