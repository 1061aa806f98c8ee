"""Issue 22 §5 measured (decisions T47): `kenning bench synth`'s manifest carries the persona's true home and
employer timeline, and `kenning.bench.timeline_eval` scores stage 5 against it on a small synthetic export."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from exportkit import ingest
from kenning.bench import synth
from kenning.bench.timeline_eval import evaluate
from kenning.detect.entities import self_entity_id
from kenning.sources.ids import IdFactory
from kenning.store.connection import open_store

HASH = {"embeddings": {"backend": "hash"}}
SEED_RULE = {**HASH, "pipeline": {"temporal_reasoning": {"observed_states_eligible": False,
                                                          "context_dated_by_conversation": False}}}


def test_manifest_timeline_is_what_the_generator_wrote_from():
    m = synth.build_manifest(120, 3)
    tl = m["persona"]["timeline"]
    assert [s["object"] for s in tl["lives_in"]] == ["Berlin", "Paris"]
    assert [s["object"] for s in tl["works_at"]] == ["Acme Corp", "Globex"]
    for states in tl.values():                       # a succession: each state ends where the next begins
        assert states[0]["to"] == states[1]["from"] and states[-1]["to"] is None
    move, job = dt.date.fromisoformat(tl["lives_in"][1]["from"]), dt.date.fromisoformat(tl["works_at"][1]["from"])
    facts = [f for f in m["facts"] if f["role"] == "user"]
    said = {f["expected"]["case"]: f for f in facts}
    assert said["residence_change"]["expected"]["valid_from"] == move.strftime("%Y-%m")
    assert said["job_change_dated"]["expected"]["valid_from"] == job.strftime("%Y-%m")
    assert said["residence_since"]["expected"]["valid_from"] == tl["lives_in"][0]["from"][:4]
    # every sprinkled statement about home or job names the state true on the day it was written
    for f in facts:
        e = f["expected"]
        if e["case"] != "sprinkled" or e["predicate"] not in tl:
            continue
        day = dt.datetime.fromtimestamp(f["create_time"], dt.timezone.utc).date().isoformat()
        [true] = [s for s in tl[e["predicate"]] if (s["from"] or "") <= day and (s["to"] is None or day < s["to"])]
        assert true["object"] == e["object"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("tleval")
    export = d / "s.json"
    stats = synth.write_export(export, 80, 1)
    manifest = json.loads(Path(stats["manifest_path"]).read_text())
    db = d / "k.db"
    ingest(db, export, stages="0,1,2A,2B,3,4,5", as_of="2025-01-01T00:00:00Z", overrides=HASH)
    return db, export, manifest


def _score(db, manifest):
    conn = open_store(db, readonly=True)
    try:
        return evaluate(conn, manifest["persona"]["timeline"], self_entity_id(IdFactory()), manifest["timeline"]["to"])
    finally:
        conn.close()


def test_stage5_closes_the_true_changes_and_leaves_nothing_wrongly_current(small):
    db, export, manifest = small
    r = _score(db, manifest)
    assert r["changes"] == 2 and r["ended_mentions"] >= 5 and r["current_mentions"] >= 3
    assert r["closed_correctly_ratio"] >= 0.9 and r["wrongly_current_ratio"] <= 0.05     # issue 22's goals
    assert r["changes_closed_ratio"] == 1.0 and r["current_kept_ratio"] >= 0.9
    # the seed's eligibility (explicit valid time only) on the same vault: the old states stay current
    ingest(db, export, stages="5", as_of="2025-01-01T00:00:00Z", overrides=SEED_RULE)
    seed = _score(db, manifest)
    assert seed["closed_correctly_ratio"] < 0.5 and seed["wrongly_current_ratio"] > 0.5
    ingest(db, export, stages="5", as_of="2025-01-01T00:00:00Z", overrides=HASH)
    assert _score(db, manifest) == r                                                       # and back, same figures
