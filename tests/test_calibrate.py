"""The calibration set, the fitting rules, `kenning calibrate`, and the calibrated defaults (issue 3 §5)."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pytest

from kenning.config import load_config
from kenning.llm.calibrate import (NO_DECISION, calibrate, calibrate_backend, evaluate, fit, load_pairs,
                                   render_markdown)

FIRST_PERSON = re.compile(r"\b(I|I'm|I'd|me|my|myself)\b")


def test_the_bundled_set():
    pairs = load_pairs()
    assert len(pairs) >= 300
    assert Counter(p.label for p in pairs) == {"paraphrase": 120, "different": 120, "opposite": 120}
    assert len({p.id for p in pairs}) == len(pairs)
    assert len({(p.a, p.b) for p in pairs}) == len(pairs)               # no duplicate pair
    assert all(p.a != p.b for p in pairs)
    assert all(p.a.startswith("I") for p in pairs)                      # first-person belief statements
    assert all(FIRST_PERSON.search(p.b) for p in pairs), [p.b for p in pairs if not FIRST_PERSON.search(p.b)]
    splits = Counter((p.label, p.split) for p in pairs)
    assert all(splits[(lab, "test")] == 40 for lab in ("paraphrase", "different", "opposite"))


def test_fit_rules_on_known_scores():
    cfg = load_config()
    s = np.array([0.95, 0.9, 0.85, 0.8, 0.7, 0.5, 0.4, 0.3, 0.2, 0.92, 0.91, 0.6])
    labels = np.array(["paraphrase"] * 5 + ["different"] * 4 + ["opposite"] * 3)
    th, how = fit(s, labels, cfg)
    # match: lowest t with precision ≥ 0.95 over paraphrase vs different → 0.7 (every paraphrase ≥ 0.7 > different)
    assert th["match"] == pytest.approx(0.6, abs=0.101) and how["match"] == "precision ≥ 0.95"
    m = evaluate(s, labels, th)
    assert m["match"]["precision"] == 1.0 and m["match"]["recall"] == 1.0
    assert th["no_match"] <= 0.7 and m["no_match"]["paraphrases_kept"] >= 0.95
    # tension: opposite (0.92, 0.91, 0.6) vs different (0.5…0.2): precision ≥ 0.8 from just above 0.5
    assert 0.5 <= th["tension"] < 0.6 and m["tension"]["precision"] == 1.0 and m["tension"]["recall"] == 1.0
    assert m["opposites_matched"] == pytest.approx(float(np.mean(s[9:] >= th["match"])), abs=1e-3)


def test_unreachable_precision_means_no_automatic_decision():
    cfg = load_config()
    s = np.array([0.5, 0.4, 0.5, 0.45, 0.3])
    labels = np.array(["paraphrase", "paraphrase", "different", "different", "opposite"])
    th, how = fit(s, labels, cfg)
    assert th["match"] == NO_DECISION and "unreachable" in how["match"]
    assert th["no_match"] <= th["match"]


def test_hash_defaults_are_the_calibrated_values():
    cfg = load_config()
    report = calibrate_backend(cfg, "hash", load_pairs())
    assert report["thresholds"] == cfg.embeddings.thresholds["kenning-hash-v1"].model_dump()
    assert report["configured"] == report["thresholds"]
    assert report["pairs"] == 360 and report["fit_pairs"] == 240 and report["test_pairs"] == 120
    for split in ("fit", "test", "all"):
        assert set(report["at_fitted"][split]) >= {"match", "no_match", "tension"}


@pytest.mark.model
def test_minilm_defaults_are_the_calibrated_values(minilm_embedder, monkeypatch):
    import kenning.llm.calibrate as cal

    cfg = load_config()
    monkeypatch.setattr(cal, "get_embedder", lambda config, spec: minilm_embedder)
    report = calibrate_backend(cfg, "minilm", load_pairs())
    assert report["thresholds"] == cfg.embeddings.thresholds["all-MiniLM-L6-v2"].model_dump()
    held_out = report["at_fitted"]["test"]
    assert held_out["match"]["precision"] >= 0.85 and held_out["tension"]["recall"] >= 0.9
    assert report["mean_similarity"]["paraphrase"] > report["mean_similarity"]["different"]


def test_calibrate_cli(kenning_cli, tmp_path):
    r = kenning_cli("calibrate", "--backend", "hash", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["pairs"] == 360 and [b["backend"] for b in data["backends"]] == ["hash"]
    md = kenning_cli("calibrate", "-b", "hash", "--markdown")
    assert md.returncode == 0 and "| fitted | test |" in md.stdout and "**hash**" in md.stdout
    table = kenning_cli("calibrate", "-b", "hash")
    assert table.returncode == 0 and "match P" in table.stdout
    own = tmp_path / "pairs.jsonl"
    own.write_text("\n".join(json.dumps({"id": str(i), "label": lab, "a": a, "b": b, "split": "fit"}) for i, (lab, a, b)
                             in enumerate([("paraphrase", "I am calm", "I'm calm"), ("different", "I am calm", "I run"),
                                           ("opposite", "I am calm", "I am not calm")])))
    r = kenning_cli("calibrate", "-b", "hash", "--pairs", str(own), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["pairs"] == 3
    own.write_text('{"id": 1, "label": "similar", "a": "x", "b": "y"}\n')
    bad = kenning_cli("calibrate", "-b", "hash", "--pairs", str(own))
    assert bad.returncode == 1 and "label 'similar'" in bad.stderr


def test_markdown_report_shape():
    cfg = load_config()
    report = calibrate(cfg, ["hash"])
    md = render_markdown(report)
    assert md.count("| fitted |") == 3 and "seed 0.90/0.75/0.88" in md
