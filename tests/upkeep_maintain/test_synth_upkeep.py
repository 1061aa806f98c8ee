"""Issue 20 part 6: the synthetic export's manifest records the planted upkeep cases, and the benchmark's graph
is deterministic, carries them, and a small run of it scores as the seed says (exact-alias folds only)."""

from __future__ import annotations

from kenning.bench.synth import build_manifest
from kenning.bench.synth_graph import graph, iter_truth_pairs, planted


def test_manifest_records_the_planted_upkeep_cases():
    up = build_manifest(3, 1)["upkeep"]
    kinds = {d["kind"] for d in up["duplicates"]}
    assert kinds == {"nickname", "typo", "exact_alias"} and up == planted(1)
    assert up["one_off_mention"]["threads"] == 1 and up["weekly_pattern"]["weeks"] == 8


def test_graph_is_deterministic_and_carries_the_planted_cases():
    a, ea = graph(500, 3)
    b, eb = graph(500, 3)
    assert [n.name for n in a] == [n.name for n in b] and ea == eb and len(a) == 500
    assert len(list(iter_truth_pairs(a))) == len(planted()["duplicates"])
    weekly = [n for n in a if n.name in planted()["weekly_pattern"]["names"]]
    assert len(weekly) == 3 and all(len(n.sightings) == 8 for n in weekly)
