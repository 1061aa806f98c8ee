"""Stage 6: seed 001 invariants 25 and 27, the node and edge inventory, the temporal profile and its shortcuts."""

from __future__ import annotations

import hashlib
import json

import pytest

import temporal_corpus as tc
from exportkit import dump_tables, ingest, query, write_export
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize
from kenning.sources.timestamps import parse_utc

IDS = IdFactory()
HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("graph")
    db = d / "k.db"
    export = write_export(d / "export.json", tc.lifecycle() + tc.conflicts()[1:])
    results = ingest(db, export, as_of="2024-12-31T00:00:00Z", overrides=HASH)
    return db, {r.stage: r for r in results}, export


def nodes(db, t=None):
    out = query(db, "SELECT * FROM graph_nodes" + (" WHERE node_type=?" if t else ""), (t,) if t else ())
    for n in out:
        n["meta"] = json.loads(n["metadata_json"])
    return out


def edges(db, t=None):
    out = query(db, "SELECT * FROM graph_edges" + (" WHERE edge_type=?" if t else ""), (t,) if t else ())
    for e in out:
        e["meta"] = json.loads(e["metadata_json"]) if e["metadata_json"] else None
    return out


def test_invariant25_graph_shape(vault):
    db, runs, _ = vault
    all_n, all_e = nodes(db), edges(db)
    by_id = {n["node_id"]: n for n in all_n}
    assertions = query(db, "SELECT a.*, t.valid_from_utc, t.valid_to_utc, t.valid_until_hint_utc "
                           "FROM assertions a JOIN assertion_temporalized t USING(assertion_id)")
    a_nodes = [n for n in all_n if n["node_type"] == "Assertion"]
    assert sorted(n["source_id"] for n in a_nodes) == sorted(a["assertion_id"] for a in assertions)
    for n in all_n:
        assert n["node_id"] == IDS.make("node", n["node_type"], n["source_id"])
        assert n["metadata_json"] == canonicalize(n["meta"]) and n["meta"]["schema_version"] == "1.0"
    for e in all_e:
        assert e["src_node_id"] in by_id and e["dst_node_id"] in by_id
        assert e["edge_id"] == IDS.make("edge", e["edge_type"], e["src_node_id"], e["dst_node_id"])
    has_obj = {}
    for e in edges(db, "HAS_OBJECT"):
        has_obj.setdefault(by_id[e["src_node_id"]]["source_id"], []).append(e)
    for a in assertions:
        got = has_obj.get(a["assertion_id"], [])
        if a["object_signature"] == "N:__NONE__":
            assert got == []
        else:
            assert len(got) == 1
            dst = by_id[got[0]["dst_node_id"]]
            if a["object_value_type"]:   # T22: a Value's source id is its signature's hash
                assert dst["node_type"] == "Value" and "V:" + dst["source_id"] == a["object_signature"]
            else:
                assert dst["node_type"] == "Entity" and dst["source_id"] == a["object_entity_id"]
    for n in nodes(db, "TimeInterval"):
        assert n["meta"]["valid_from_utc"] is not None or n["meta"]["valid_to_utc"] is not None
        key = [n["meta"]["valid_from_utc"] or "__NULL__", n["meta"]["valid_to_utc"] or "__NULL__"]
        assert n["source_id"] == hashlib.sha256(canonicalize(key).encode()).hexdigest()
    hint = [a for a in assertions if a["valid_until_hint_utc"]]
    assert hint and len(edges(db, "VALID_UNTIL_HINT")) == len(hint)
    assert len(edges(db, "VALID_IN")) == sum(1 for a in assertions if a["valid_from_utc"])
    counts = runs["6"].counts
    assert counts["nodes"] == len(all_n) and counts["edges"] == len(all_e)
    assert counts["quality"]["temporalized_coverage"] == 1.0 and counts["quality"]["self_present"] is True


def test_lifecycle_and_conflict_edges(vault):
    db, _, _ = vault
    by_id = {n["node_id"]: n for n in nodes(db)}
    sup = [(by_id[e["src_node_id"]]["label"], by_id[e["dst_node_id"]]["label"]) for e in edges(db, "SUPERSEDES")]
    assert ("SELF lives_in Paris", "SELF lives_in Berlin") in sup             # newer → older
    neg = edges(db, "NEGATED_BY")
    assert neg and len(edges(db, "NEGATES")) == len(neg)
    assert len(edges(db, "RETRACTED_BY")) == len(edges(db, "RETRACTS")) >= 1
    groups = query(db, "SELECT COUNT(*) AS n FROM conflict_members")[0]["n"]
    assert len(edges(db, "HAS_CONFLICT_MEMBER")) == groups
    assert {e["meta"]["conflict_type"] for e in edges(db, "CONFLICTS_WITH")} >= {"OBJ_CONFIDENCE_TOO_CLOSE"}
    assert len(edges(db, "ASSERTED_IN")) == len(nodes(db, "Assertion"))


def test_invariant27_windows_are_month_aligned_and_partition_the_profile(vault):
    db, _, _ = vault
    [profile] = nodes(db, "TemporalProfile")
    self_id = query(db, "SELECT entity_id FROM entities WHERE entity_key='__SELF__'")[0]["entity_id"]
    assert profile["meta"]["entity_id"] == self_id and profile["meta"]["resolution_mode"] == "self"
    [hp] = edges(db, "HAS_PROFILE")
    assert hp["src_node_id"] == IDS.make("node", "Entity", self_id)
    windows = sorted(nodes(db, "TemporalWindow"), key=lambda n: n["meta"]["bounds"][0])
    assert len(windows) == profile["meta"]["window_count"] >= 3
    prev_end = None
    for w in windows:
        s, e = (parse_utc(x) for x in w["meta"]["bounds"])
        assert (s.day, s.hour, s.minute) == (1, 0, 0) and (e.day, e.hour) == (1, 0)
        assert (e.year * 12 + e.month) - (s.year * 12 + s.month) == 1
        assert prev_end is None or s >= prev_end
        prev_end = e
    inc = edges(db, "WINDOW_INCLUDES")
    per_assertion: dict[str, int] = {}
    for e in inc:
        per_assertion[e["dst_node_id"]] = per_assertion.get(e["dst_node_id"], 0) + 1
    assert set(per_assertion.values()) == {1}                                  # exactly one window each
    assert sum(w["meta"]["assertion_count"] for w in windows) == len(inc) == profile["meta"]["total_assertions"]
    wins = {w["node_id"]: w for w in windows}
    by_id = {n["node_id"]: n for n in nodes(db)}
    for e in inc:
        a = by_id[e["dst_node_id"]]["meta"]
        s, end = wins[e["src_node_id"]]["meta"]["bounds"]
        assert s <= a["valid_from_utc"] < end
        assert a["status"] != "retracted"
    assert len(edges(db, "WINDOW_PRECEDES")) == len(windows) - 1


def test_what_mattered_shortcuts_and_changes(vault):
    db, _, _ = vault
    by_id = {n["node_id"]: n for n in nodes(db)}
    march = next(w for w in nodes(db, "TemporalWindow") if w["label"] == "2023-03")
    top = [e for e in edges(db, "WINDOW_TOP_MEMBER") if e["src_node_id"] == march["node_id"]]
    assert [by_id[e["dst_node_id"]]["label"] for e in sorted(top, key=lambda e: e["meta"]["rank"])][0] == "Paris"
    assert top[0]["meta"]["category_key"] == "place"
    assert march["meta"]["changes"] == [{
        "assertion_id": march["meta"]["changes"][0]["assertion_id"], "at": "2023-03-01T00:00:00.000Z",
        "by": march["meta"]["changes"][0]["by"], "from": "Berlin", "kind": "superseded", "predicate": "lives_in",
        "to": "Paris", "mentions": 1}]
    clusters = [e for e in edges(db, "WINDOW_TOP_CLUSTER") if e["src_node_id"] == march["node_id"]]
    assert clusters and clusters[0]["meta"]["category_key"] == "place"
    cl = by_id[clusters[0]["dst_node_id"]]
    assert [e["dst_node_id"] for e in edges(db, "CLUSTER_OF_CATEGORY") if e["src_node_id"] == cl["node_id"]] == \
        [IDS.make("node", "SemanticCategory", "place")]
    ev = [e for e in edges(db, "MEMBER_EVIDENCED_BY") if e["src_node_id"] == top[0]["dst_node_id"]]
    assert ev and all(by_id[e["dst_node_id"]]["node_type"] == "Assertion" for e in ev)
    # a Value member is classified by its predicate: "running" is an interest (habit)
    members = [e for e in edges(db, "CLUSTER_CONTAINS")]
    assert any(by_id[e["dst_node_id"]]["node_type"] == "Value" for e in members)


def test_stage6_reads_only(vault, tmp_path):
    db, _, export = vault
    before = {k: v for k, v in dump_tables(db).items() if not k.startswith("graph_")}
    ingest(db, export, stages="6", as_of="2025-06-01T00:00:00Z", overrides=HASH)
    after = {k: v for k, v in dump_tables(db).items() if not k.startswith("graph_")}
    assert after == before
