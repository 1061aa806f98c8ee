"""The LoCoMo harness on a small subset: metrics, baselines, evidence mapping, temporal accuracy."""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest

from kenning.bench.locomo_eval import (BM25Okapi, EvalError, _metrics, gold_interval, replay, rrf_order, run_eval,
                                       time_matches, tokens, turn_text)
from kenning.retrieve.when import Interval, day
from kenning.sources.locomo import evidence_ids
from tests.conftest import HASH, locomo_dir, run_kenning


def test_evidence_normalisation():
    assert evidence_ids(["D1:3", "D:11:26", "D30:05", "D", "D8:6; D9:17", "D9:1 D4:4 D4:6"]) == [
        "D1:3", "D11:26", "D30:5", "D8:6", "D9:17", "D9:1", "D4:4", "D4:6"]


def test_bm25_matches_rank_bm25_formula():
    corpus = [tokens(t) for t in ["the cat sat", "the dog sat down", "a cat and a dog", "birds fly"]]
    bm = BM25Okapi(corpus)
    n, avgdl = 4, sum(map(len, corpus)) / 4
    idf_cat = math.log(n - 2 + 0.5) - math.log(2 + 0.5)
    tf, dl = 1, len(corpus[0])
    want = idf_cat * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))
    assert bm.scores(["cat"])[0] == pytest.approx(want)
    assert bm.scores(["fish"]).sum() == 0
    assert rrf_order([[0, 1, 2], [1, 3]])[:2] == [1, 0]
    assert turn_text({"speaker": "A", "text": "hi", "blip_caption": "a dog"}) == "A: hi [image: a dog]"


def test_metrics():
    assert _metrics({"D1:1", "D2:2"}, ["D9:9"] * 5 + ["D1:1"]) == (0.0, 1.0, 0.5)


def test_gold_dates_and_matching():
    now = dt.date(2023, 10, 22)
    g = gold_interval("When did Caroline go to the LGBTQ support group?", "7 May 2023", now)
    assert (g.start, g.end) == (dt.date(2023, 5, 7), dt.date(2023, 5, 7))
    w = gold_interval("When did Caroline give a speech at a school?", "The week before 9 June 2023", now)
    assert (w.start, w.end) == (dt.date(2023, 6, 2), dt.date(2023, 6, 8))
    assert gold_interval("How long ago was Caroline's 18th birthday?", "10 years ago", now) is None
    assert gold_interval("When did Gina get her tattoo?", "A few years ago", now) is None
    assert gold_interval("What did John attend?", "a tech-for-good convention", now) is None
    assert time_matches(day(dt.date(2023, 5, 7), "yesterday"), g)
    assert not time_matches(day(dt.date(2023, 5, 8), "date said"), g)
    year = gold_interval("When did Melanie paint a sunrise?", 2022, now)
    assert time_matches(Interval(dt.date(2022, 1, 1), dt.date(2022, 12, 31), "last year", "year"), year)
    assert not time_matches(Interval(dt.date(2022, 1, 1), dt.date(2023, 12, 31), "x", "span"), year)


def test_eval_on_a_small_subset(tmp_path):
    """Conversation 30, first 25 questions, hash vectors: the harness runs end to end through a real vault."""
    rep = run_eval(split="dev", data_dir=locomo_dir(), conversations="30", max_questions=25,
                   systems=["kenning", "bm25"], workdir=tmp_path, overrides=HASH)
    assert set(rep["systems"]) == {"kenning", "bm25"}
    for s in rep["systems"].values():
        o = s["overall"]
        assert 0 <= o["hit@5"] <= o["hit@10"] <= 1 and o["n"] > 0
        assert set(s["by_category"]) <= {"1", "2", "3", "4", "5"}
    assert rep["systems"]["kenning"]["overall"]["hit@10"] >= rep["systems"]["bm25"]["overall"]["hit@10"] - 0.1
    assert rep["temporal_detail"]["n"] > 0 and rep["temporal_accuracy"] is not None
    lines = [json.loads(x) for x in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert len(lines) == rep["questions_scored"] and all(x["kenning"]["top10"] for x in lines)
    # evidence is mapped through the stored dia_ids: a turn ref in the top 10 is a real turn
    assert all(ref.startswith("D") for x in lines for ref in x["kenning"]["top10"])


def test_lane_ranks_dump_and_replay(tmp_path):
    """--lanes N (R39): each question's top N hits with their lane ranks; a replay with the configured weights
    gives back the run's own hit@10, and a replay is a fusion — changing a weight moves the ranking."""
    rep = run_eval(split="dev", data_dir=locomo_dir(), conversations="30", max_questions=20,
                   systems=["kenning"], workdir=tmp_path, overrides=HASH, lanes_top=60)
    recs = [json.loads(x) for x in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert recs and all(len(r["kenning"]["lanes"]) > 10 for r in recs)
    # the dump extends the top 10, it does not change it
    assert all([ref for ref, _ in r["kenning"]["lanes"][:10]] == r["kenning"]["top10"] for r in recs)
    assert all(isinstance(rk, int) and rk >= 1 for r in recs for _, ranks in r["kenning"]["lanes"]
               for rk in ranks.values())
    from kenning.config import load_config
    weights = load_config(None, overrides=HASH).retrieval.lane_weights.model_dump()
    again = replay(recs, weights)
    assert again["hits"] == sum(int(r["kenning"]["hit@10"]) for r in recs if r["category"] != "5")
    assert abs(again["hit@k"] - rep["systems"]["kenning"]["overall"]["hit@10"]) < 1e-3
    # an extra list that puts each question's evidence first at a large weight makes every question a hit
    perfect = replay(recs, weights, extra=lambda r: r["evidence"], extra_weight=100.0)
    assert perfect["hits"] == perfect["n"] == again["n"]
    # only the vector lane: its own top 10 decides
    solo = replay(recs, {ln: (1.0 if ln == "vector" else 0.0) for ln in weights})
    assert solo["n"] == again["n"]


def test_lane_ranks_only_on_dev(tmp_path):
    with pytest.raises(EvalError, match="dev only"):
        run_eval(split="test", data_dir=locomo_dir(), systems=["kenning"], workdir=tmp_path, lanes_top=100)
    with pytest.raises(EvalError, match="dev only"):
        run_eval(split="dev", conversations="30,44", data_dir=locomo_dir(), systems=["kenning"], workdir=tmp_path,
                 lanes_top=100)
    with pytest.raises(EvalError, match="--workdir"):
        run_eval(split="dev", data_dir=locomo_dir(), systems=["kenning"], lanes_top=100)


def test_replay_fuses_like_the_search():
    """Two lanes disagree; weights decide which evidence turn reaches the top 1."""
    recs = [{"category": "4", "evidence": ["D1:2"],
             "kenning": {"lanes": [["D1:1", {"fts": 1}], ["D1:2", {"vector": 1}], ["D1:3", {"fts": 2, "vector": 3}]]}}]
    assert replay(recs, {"fts": 1, "vector": 1}, k=1)["hits"] == 0      # D1:3, in both lanes, wins
    assert replay(recs, {"fts": 0.0, "vector": 1}, k=1)["hits"] == 1
    assert replay(recs, {"fts": 1, "vector": 1}, k=2)["hits"] == 0      # then the tie D1:1 / D1:2 → recorded order
    assert replay(recs, {"fts": 1, "vector": 1}, k=1, extra=lambda r: ["D1:2"], extra_weight=1.0)["hits"] == 1
    assert replay([{**recs[0], "category": "5"}], {"fts": 1})["n"] == 0  # category 5 is reported apart


@pytest.mark.slow
@pytest.mark.model
def test_cli_eval_json_with_dense_baseline(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n")
    r = run_kenning("eval", "locomo", "--split", "dev", "--conversations", "30", "--max-questions", "12", "--json",
                "--data", str(locomo_dir()), "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out["systems"]) == {"kenning", "bm25", "dense", "rrf"}
    assert {"hit@5", "hit@10", "recall@10"} <= set(out["systems"]["dense"]["overall"])
    assert "temporal_accuracy" in out and out["split"] == "dev:30"
