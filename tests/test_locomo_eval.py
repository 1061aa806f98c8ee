"""The LoCoMo harness on a small subset: metrics, baselines, evidence mapping, temporal accuracy."""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest

from kenning.bench.locomo_eval import (BM25Okapi, _metrics, gold_interval, rrf_order, run_eval, time_matches,
                                       tokens, turn_text)
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
