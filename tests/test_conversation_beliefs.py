"""Issue 8 item 3: stage 5 feeds the belief ledger. Berlin → Paris gives a current belief, a superseded one with
its reason and chain, and quotes that verify through `kenning why`."""

from __future__ import annotations

import json

import pytest

import temporal_corpus as tc
from conftest import run_cli
from exportkit import ingest, query, write_export
from kenning.sources.ids import IdFactory

IDS = IdFactory()
HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("convbeliefs")
    db = d / "k.db"
    export = write_export(d / "e.json", tc.lifecycle())
    res = ingest(db, export, as_of="2024-12-31T00:00:00Z", overrides=HASH)
    return db, next(r for r in res if r.stage == "5"), export


def belief_of(db, conv: str, quote: str) -> dict:
    a = query(db, "SELECT a.assertion_id FROM assertions a JOIN messages m USING(message_id) "
                  "WHERE m.conversation_id=? AND a.surface_text=?", (conv, quote))
    assert len(a) == 1, (conv, quote)
    bid = IDS.make("belief", "conversation", a[0]["assertion_id"])
    return query(db, "SELECT * FROM wiki_beliefs WHERE belief_id=?", (bid,))[0]


def test_berlin_to_paris_through_why(vault):
    db, s5, _ = vault
    assert s5.counts["beliefs_published"] >= 10 and s5.counts["beliefs_inserted"] == s5.counts["beliefs_published"]
    berlin = belief_of(db, "a-move", "I live in Berlin")
    paris = belief_of(db, "a-move", "I moved to Paris")
    assert paris["superseded_at"] is None and paris["statement"] == "I live in Paris (from 2023-03-01)"
    assert berlin["superseded_by_belief_id"] == paris["belief_id"]
    assert berlin["supersession_reason"] == "contradicted_by_new_source"
    assert (berlin["source_valid_from"], berlin["source_valid_to"]) == ("2019-01-01T00:00:00.000Z",
                                                                         "2023-03-01T00:00:00.000Z")
    # transaction time: believed from its message until the move message
    t = query(db, "SELECT t.asserted_at_utc, t.superseded_at_utc FROM assertion_temporalized t JOIN assertions USING "
                  "(assertion_id) WHERE surface_text='I live in Berlin'")[0]
    assert (berlin["asserted_at"], berlin["superseded_at"]) == (t["asserted_at_utc"], t["superseded_at_utc"])
    out = json.loads(run_cli("why", "SELF", "--predicate", "lives_in", "--json", db=db).stdout)
    current = {b["belief_id"]: b for b in out["current_beliefs"]}
    assert paris["belief_id"] in current and berlin["belief_id"] not in current
    src = current[paris["belief_id"]]["supporting_sources"][0]
    assert src["quote"] == "I moved to Paris" and src["verified_against_source"] is True
    assert src["conversation_id"] == "a-move"
    hist = {b["belief_id"]: b for b in out["history"]}
    assert hist[berlin["belief_id"]]["supersession_reason"] == "contradicted_by_new_source"
    assert hist[berlin["belief_id"]]["supporting_sources"][0]["verified_against_source"] is True
    # by id: the chain of the move's belief reaches back to Berlin
    by_id = json.loads(run_cli("why", paris["belief_id"], "--json", db=db).stdout)
    chain = json.dumps(by_id["supersession_chain"])
    assert berlin["belief_id"] in chain and paris["belief_id"] in chain
    text = run_cli("why", "SELF", "--predicate", "lives_in", db=db).stdout
    assert "Now: I live in Paris" in text and "contradicted by a new source" in text and "✓ quote verified" in text


def test_corrections_retractions_and_endings_carry_their_reason(vault):
    db, _, _ = vault
    porto = belief_of(db, "f-correction", "My cousin lives in Porto")
    lisbon = belief_of(db, "f-correction", "I meant Lisbon, not Porto")
    assert (porto["supersession_reason"], porto["superseded_by_belief_id"]) == ("manual_correction",
                                                                              lisbon["belief_id"])
    cat = belief_of(db, "e-retractions", "We adopted a cat")
    assert cat["supersession_reason"] == "manual_correction" and cat["superseded_by_belief_id"] is None
    run = belief_of(db, "g-stopped", "I run")
    stop = belief_of(db, "g-stopped", "I stopped running")
    assert run["superseded_by_belief_id"] == stop["belief_id"] and run["source_valid_from"] is None
    assert run["source_valid_to"] is not None                          # "I stopped" bounds it
    acme = belief_of(db, "b-undated-work", "I work at Acme Corp")
    globex = belief_of(db, "b-undated-work", "I work at Globex")
    assert acme["source_valid_from"] is None                             # undated: no stated world time
    # T40/T44: the later-said job ends it, from when that was said
    assert acme["superseded_by_belief_id"] == globex["belief_id"] and acme["superseded_at"] == globex["asserted_at"]


def test_conflicts_become_contradicting_beliefs_and_reruns_change_nothing(vault, tmp_path):
    db, _, export = vault
    rows = query(db, "SELECT belief_id, contradicting_belief_ids FROM wiki_beliefs WHERE contradicting_belief_ids "
                     "IS NOT NULL")
    pairs = {r["belief_id"]: set(json.loads(r["contradicting_belief_ids"])) for r in rows}
    assert pairs and all(a in pairs[b] for a, others in pairs.items() for b in others)     # symmetric
    # same-time duplicates agree: the two Paris beliefs do not contradict each other
    p1, p2 = belief_of(db, "a-move", "I moved to Paris"), belief_of(db, "c-duplicate", "I live in Paris")
    assert p2["belief_id"] not in pairs.get(p1["belief_id"], set())
    before = query(db, "SELECT * FROM wiki_beliefs ORDER BY belief_id")
    res = ingest(db, export, stages="5", as_of="2025-03-01T00:00:00Z", overrides=HASH)
    assert res[0].counts["beliefs_unchanged"] == res[0].counts["beliefs_published"]
    assert query(db, "SELECT * FROM wiki_beliefs ORDER BY belief_id") == before
