"""Issue 20 part 6: the synthetic export's manifest records the planted upkeep cases, and the benchmark's graph
is deterministic, carries them, and a small run of it scores as decided: exact-alias folds only (seed §42), the
rest as merge candidates, precision ≥ 0.95 and recall ≥ 0.80 counted as G62 says, no distractor proposed."""

from __future__ import annotations

from kenning.bench.synth import build_manifest
from kenning.bench.synth_graph import graph, iter_truth_pairs, planted
from kenning.bench.upkeep_bench import NOW, build, score
from kenning.config import load_config
from kenning.store.connection import open_store
from kenning.upkeep.maintain.dag import maintain


def test_manifest_records_the_planted_upkeep_cases():
    up = build_manifest(3, 1)["upkeep"]
    kinds = {d["kind"] for d in up["duplicates"]}
    assert kinds == {"nickname", "typo", "exact_alias", "nickname_full_name", "first_name_only",
                     "nickname_typo_trio"} and up == planted(1)
    assert {d["kind"] for d in up["distractors"]} == {"shared_first_name", "ambiguous_short_form",
                                                      "given_name_variant", "conflicting_attributes"}
    assert up["one_off_mention"]["threads"] == 1 and up["weekly_pattern"]["weeks"] == 8


def test_graph_is_deterministic_and_carries_the_planted_cases():
    a, ea = graph(500, 3)
    b, eb = graph(500, 3)
    assert [n.name for n in a] == [n.name for n in b] and ea == eb and len(a) == 500
    dups = planted()["duplicates"]
    assert len(list(iter_truth_pairs(a))) == sum(len(d["names"]) * (len(d["names"]) - 1) // 2 for d in dups)
    weekly = [n for n in a if n.name in planted()["weekly_pattern"]["names"]]
    assert len(weekly) == 3 and all(len(n.sightings) == 8 for n in weekly)
    # every planted group (duplicates and distractors alike) shares one employer
    planted_people = [i for i, n in enumerate(a) if n.group is not None]
    employer = {x: j for x, rel, j, _ in ea[:len(planted_people)]}  # the planted links come first
    assert sorted(employer) == planted_people
    for g in {a[i].group for i in planted_people}:
        assert len({employer[i] for i in planted_people if a[i].group == g}) == 1


def test_a_small_run_scores_precision_and_recall(tmp_path):
    nodes, ids = build(tmp_path / "v.db", 800, 1)
    conn = open_store(tmp_path / "v.db")
    try:
        r = maintain(conn, load_config(), now=NOW)
        s = score(nodes, ids, conn)
    finally:
        conn.close()
    auto, both = s["auto_fold"], s["fold_or_queue"]
    assert auto["precision"] == 1.0 and auto["recall_by_kind"]["exact_alias"] == "10/10"
    assert auto["recall_by_kind"]["nickname"] == "0/10"  # no model: a nickname is never folded, only proposed
    assert both["precision"] >= 0.95 and both["recall"] >= 0.80
    assert both["distractor_proposals"] == 0
    assert r["merge_queue_count"] == both["proposals"] - auto["proposals"]
    assert not s["one_off_in_a_pattern_or_merge"]
