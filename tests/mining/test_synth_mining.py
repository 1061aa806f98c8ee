"""Issue 18 part 8: `kenning bench synth --mining N` adds planted mining conversations and their ground truth
without changing the existing conversations of a seed; the phrasings vary; the benchmark's scorer runs."""

from __future__ import annotations

import orjson

from kenning.bench.synth import write_export


def test_mining_conversations_are_added_after_the_existing_ones(tmp_path):
    plain = write_export(tmp_path / "a.json", 6, 3)
    mined = write_export(tmp_path / "b.json", 6, 3, mining_conversations=40)
    a = orjson.loads((tmp_path / "a.json").read_bytes())
    b = orjson.loads((tmp_path / "b.json").read_bytes())
    assert b[:len(a)] == a and len(b) == len(a) + 40
    ma = orjson.loads((tmp_path / "a.manifest.json").read_bytes())
    mb = orjson.loads((tmp_path / "b.manifest.json").read_bytes())
    assert "mining" not in ma and {k: v for k, v in mb.items() if k != "mining"} == ma
    planted = mb["mining"]["planted"]
    ids = {m["id"] for c in b[len(a):] for m in (n["message"] for n in c["mapping"].values()) if m}
    assert all(p["message_id"] in ids for p in planted)
    for cls in ("goal", "obligation", "procedure", "standing_procedure", "memory_directive"):
        texts = {p["text"] for p in planted if p["class"] == cls and p["positive"]}
        # varied phrasings: many distinct sentences per class, not one template
        assert len(texts) >= (2 if cls == "procedure" else 5), cls
    assert {p["class"] for p in planted} >= {"acceptance", "rejection"}
    assert plain["conversations"] == 6 and mined["conversations"] == 46


def test_benchmark_scores_the_rules(tmp_path, monkeypatch):
    import importlib.util
    import sys
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_mining", Path(__file__).resolve().parents[2] / "benchmarks"
                                                  / "mining.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(sys, "argv", ["mining.py", "--conversations", "150", "--seed", "5", "--bank", "tuning",
                                      "--json"])
    assert mod.main() == 0  # ≥ 0.80 precision and ≥ 0.70 recall for every class on the tuning bank
    # the held-out bank is measured and reported class by class (its figures are the honest ones, I100)
    report = mod.measure("heldout", 60, 5, False)
    assert report["misses"] is None   # never printed: looking at them would make it a tuning bank
    assert set(report["classes"]) >= {"goal", "obligation", "procedure", "standing_procedure", "memory_directive"}
    assert report["observations"] > 0 and report["observations_per_s"] > 0


def test_the_held_out_bank_shares_no_planted_sentence_with_the_tuning_bank(tmp_path):
    """The banks are kept apart (I100): different conversations ids and streams, and no planted sentence of the
    held-out bank occurs in the tuning bank."""
    write_export(tmp_path / "t.json", 2, 7, mining_conversations=300)
    write_export(tmp_path / "h.json", 2, 7, mining_conversations=300, mining_bank="heldout")
    t = orjson.loads((tmp_path / "t.manifest.json").read_bytes())["mining"]
    h = orjson.loads((tmp_path / "h.manifest.json").read_bytes())["mining"]
    assert h["bank"] == "heldout" and "bank" not in t
    assert all(p["conversation_id"].startswith("mining-heldout-") for p in h["planted"])
    tuning_texts = {p["text"] for p in t["planted"]}
    assert not tuning_texts & {p["text"] for p in h["planted"]}
    # natural distractors are planted: negatives of every class, and assistant suggestions not taken up
    negatives = {p["class"] for p in h["planted"] if not p["positive"]}
    assert negatives >= {"goal", "obligation", "procedure", "standing_procedure", "memory_directive"}
