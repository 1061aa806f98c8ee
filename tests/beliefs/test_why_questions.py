"""`why` answers the question asked (issue 22 §2): natural questions through the predicate index, words and vectors;
"nothing matches" said plainly; contested beliefs with both quotes; one answer per claim with its occurrences;
time windows over answers, contradictions and history; undispute / restore recorded and reflected; JSON statuses."""

from __future__ import annotations

import json

import pytest
from .beliefs_helpers import add_conversation

from kenning.beliefs import question
from kenning.beliefs.answers import core, negated
from kenning.beliefs.ledger import BeliefInput, BeliefSource
from kenning.store import transaction

HASH = {"embeddings": {"backend": "hash"}}
CID = "conv-life"
MSGS = [  # (id, time, text, statement, predicate, object)
    ("m-paris-1", "2023-01-10T09:00:00.000Z", "Hello! I live in Paris.", "I live in Paris", "lives_in", "Paris"),
    ("m-paris-2", "2023-02-10T09:00:00.000Z", "As I said, I live in Paris.", "I live in Paris", "lives_in", "Paris"),
    ("m-berlin", "2023-05-01T09:00:00.000Z", "These days I live in Berlin.", "I live in Berlin", "lives_in", "Berlin"),
    ("m-patient", "2023-03-01T09:00:00.000Z", "I am patient.", "I am patient", "trait", "i am patient"),
    ("m-impatient", "2023-06-01T09:00:00.000Z", "I am not patient.", "I am not patient", "trait", "i am not patient"),
    ("m-meat", "2023-04-01T09:00:00.000Z", "I do not eat meat.", "I do not eat meat", "diet", "i do not eat meat"),
    ("m-pottery", "2023-04-02T09:00:00.000Z", "I enjoy pottery on weekends.", "I enjoy pottery", "likes", "pottery"),
]


def items() -> list[BeliefInput]:
    out = []
    for mid, ts, text, statement, pred, obj in MSGS:
        quote = text.rstrip(".!").split(", ")[-1].split("! ")[-1].split("days ")[-1]
        quote = quote[0].upper() + quote[1:] if quote.startswith("i ") else quote
        s = text.index(quote)
        out.append(BeliefInput(belief_id=f"b-{mid}", statement=statement, topic="self", subject="SELF",
                               predicate=pred, object=obj, asserted_at=ts,
                               sources=(BeliefSource(kind="conversation", conversation_id=CID, message_id=mid,
                                                     char_start=s, char_end=s + len(quote), quote=quote),)))
    return out


@pytest.fixture
def life(db):
    from kenning.api import Vault

    v = Vault.open(db, overrides=HASH)
    with transaction(v.conn):
        add_conversation(v.conn, CID, "Life", [(m, "user", ts, text) for m, ts, text, *_ in MSGS])
    v.publish_beliefs(items(), as_of="2024-06-01T00:00:00Z")
    yield v
    v.close()


def by_statement(ans: dict) -> dict[str, dict]:
    return {a["statement"]: a for a in ans["answers"]}


def test_a_natural_question_finds_the_predicate_first(life):
    ans = life.why("Where do I live?")
    assert ans["matched_predicates"] == ["lives_in"] and "predicate" in ans["match_types"]
    assert ans["answers"][0]["predicate"] == "lives_in"
    assert {a["statement"] for a in ans["answers"] if a["matched"]} >= {"I live in Paris", "I live in Berlin"}
    assert "I enjoy pottery" not in by_statement(ans)


def test_an_unrelated_question_says_nothing_matches(life, kenning, db):
    ans = life.why("what is the capital of Peru?")
    assert ans["match_type"] == "none" and ans["answers"] == [] and ans["current_beliefs"] == []
    life.close()
    text = kenning("why", "what is the capital of Peru?", "--config", str(_hash_cfg(db)), db=db).stdout
    assert text.startswith('Nothing in workspace personal matches "what is the capital of Peru?"')


def _hash_cfg(db):
    p = db.parent / "hash.yaml"
    p.write_text("embeddings:\n  backend: hash\n")
    return p


def test_the_same_claim_is_one_answer_with_its_occurrences(life):
    paris = by_statement(life.why("where do I live"))["I live in Paris"]
    assert paris["belief_ids"] == ["b-m-paris-2", "b-m-paris-1"] and paris["occurrences"] == 2
    assert (paris["first_said"], paris["last_said"]) == ("2023-01-10T09:00:00.000Z", "2023-02-10T09:00:00.000Z")
    assert [s["quote"] for s in paris["supporting_sources"]] == ["I live in Paris", "I live in Paris"]


def test_two_homes_and_a_denial_are_contested_with_both_quotes(life, kenning, db):
    ans = by_statement(life.why("where do I live"))
    paris, berlin = ans["I live in Paris"], ans["I live in Berlin"]
    assert paris["status"] == berlin["status"] == "contested"
    assert paris["contested_with"] == ["b-m-berlin"] and berlin["contested_with"] == ["b-m-paris-2"]
    patient = by_statement(life.why("am I patient?"))
    assert patient["I am patient"]["status"] == patient["I am not patient"]["status"] == "contested"
    entries = {e["belief_id"]: e for e in life.why("am I patient?")["current_beliefs"]}
    assert entries["b-m-patient"]["status"] == "contested"            # JSON carries a status per belief too
    life.close()
    text = kenning("why", "where do I live", "--config", str(_hash_cfg(db)), db=db).stdout
    assert "Contested — you have said both, and they cannot both hold:" in text
    assert '"I live in Berlin"' in text and '"I live in Paris"' in text and "Now: I live in" not in text


def test_a_time_window_filters_answers_and_contradictions(life):
    before = life.why("where do I live", until="2023-03-31")
    assert [a["statement"] for a in before["answers"]] == ["I live in Paris"]
    assert before["answers"][0]["status"] == "current" and before["status_at"] == "2023-03-31T23:59:59.999Z"
    later = life.why("am I patient", since="2023-01-01", until="2023-04-30")
    assert [(a["statement"], a["status"]) for a in later["answers"]] == [("I am patient", "current")]
    assert later["contradicting_beliefs"] == []


def test_undispute_is_recorded_and_reflected(life, kenning, db):
    life.undispute_belief("b-m-berlin", "I have a flat in both cities", other="b-m-paris-1",
                          as_of="2024-07-01T00:00:00Z")
    ans = by_statement(life.why("where do I live"))
    # one Paris belief is undisputed with Berlin; the other Paris belief still contests it
    assert ans["I live in Berlin"]["contested_with"] == ["b-m-paris-2"]
    life.undispute_belief("b-m-berlin", "both homes are real", as_of="2024-07-02T00:00:00Z")
    ans = by_statement(life.why("where do I live"))
    assert ans["I live in Berlin"]["status"] == ans["I live in Paris"]["status"] == "current"
    rows = list(life.conn.execute("SELECT action, belief_id, other_belief_id, reason FROM belief_overrides ORDER BY at"))
    assert rows == [("undispute", "b-m-berlin", "b-m-paris-1", "I have a flat in both cities"),
                    ("undispute", "b-m-berlin", None, "both homes are real")]
    life.close()
    bad = kenning("beliefs", "undispute", "b-nope", "--reason", "x", db=db, check=False)
    assert bad.returncode == 1 and "no belief b-nope" in bad.stderr


def test_restore_undoes_a_supersession_and_survives_republishing(life, kenning, db):
    life.supersede("b-m-patient", "b-m-impatient", "manual_correction", as_of="2024-07-01T00:00:00Z")
    assert by_statement(life.why("am I patient"))["I am patient"]["status"] == "superseded"
    life.close()
    cfg = str(_hash_cfg(db))
    out = json.loads(kenning("beliefs", "restore", "b-m-patient", "--reason", "I was right the first time",
                             "--as-of", "2024-07-02T00:00:00Z", "--config", cfg, "--json", db=db).stdout)
    assert out["restored"] == "b-m-patient" and out["undid"] == ["supersede"]
    from kenning.api import Vault

    with Vault.open(db, overrides=HASH) as v:
        assert by_statement(v.why("am I patient"))["I am patient"]["status"] == "contested"
        v.publish_beliefs(items(), as_of="2024-08-01T00:00:00Z")       # the feed again: the restore holds
        assert v.conn.execute("SELECT superseded_at FROM wiki_beliefs WHERE belief_id='b-m-patient'").fetchone() \
            == (None,)
    again = kenning("beliefs", "restore", "b-m-patient", "--reason", "x", "--config", cfg, db=db, check=False)
    assert again.returncode == 1 and "nothing to restore" in again.stderr


def test_told_by_answers_with_what_kenning_knew_then(life):
    row = life.conn.execute("SELECT asserted_at, recorded_at FROM wiki_beliefs WHERE belief_id='b-m-berlin'").fetchone()
    assert row == ("2023-05-01T09:00:00.000Z", "2024-06-01T00:00:00.000Z")
    assert life.why("where do I live", until="2023-12-31")["answers"]           # said in 2023 …
    assert life.why("where do I live", told_by="2024-05-31")["match_type"] == "none"   # … imported in June 2024
    assert life.why("where do I live", told_by="2024-06-01")["answers"]


def test_the_vector_lane_uses_the_models_floor(life):
    hits = question.vector_lane(life.conn, life.config, "personal", "do I eat meat", 10)
    assert hits and hits[0] == "b-m-meat"
    assert question.vector_lane(life.conn, life.config, "personal", "what is the capital of Peru", 10) == []
    assert question.vector_floor(life.config, "hash:kenning-hash-v1") == 0.4


def test_question_words_and_negation_helpers(life):
    assert question.content_words("What do I think about remote work?", life.config) == ["remote", "work"]
    assert question.stem("living") == question.stem("lives") == question.stem("live") == "liv"
    assert core("I do not live in Berlin (from 2023-04-01)") == core("I live in Berlin.") == "i live in berlin"
    assert negated("I don't eat meat") and not negated("I eat meat")


@pytest.mark.model
def test_vegetarian_finds_i_do_not_eat_meat_with_minilm(db, minilm_embedder):
    from kenning.api import Vault

    with Vault.open(db) as v:
        with transaction(v.conn):
            add_conversation(v.conn, CID, "Life", [(m, "user", ts, text) for m, ts, text, *_ in MSGS])
        v.publish_beliefs(items(), as_of="2024-06-01T00:00:00Z")
        ans = v.why("vegetarian")
        assert ans["match_type"] == "vector"
        assert [a["statement"] for a in ans["answers"]] == ["I do not eat meat"]
        assert v.why("what is the capital of Peru?")["match_type"] == "none"


def _row(bid, statement, asserted, superseded=None, reason=None, **kw):
    return {"belief_id": bid, "statement": statement, "subject": kw.get("subject"), "predicate": kw.get("predicate"),
            "object": kw.get("object"), "asserted_at": asserted, "superseded_at": superseded,
            "supersession_reason": reason, "superseded_by_belief_id": None, "source_valid_to": kw.get("valid_to"),
            "contradicting_belief_ids": None}


def test_a_claim_said_in_the_past_tense_ends_its_present_tense_twin():
    from kenning.beliefs.answers import statuses

    t = "2023-03-22T18:12:38.999Z"
    rows = [_row("conv", "I am a night owl", t), _row("self", "I am a night owl.", t, superseded=t),
            _row("later", "I am a morning person", "2024-01-01T00:00:00.000Z"),
            _row("old-valid", "I live in Munich (from 2018-06-01 to 2018-06-02)", t, valid_to="2018-06-02")]
    st = {b: s.status for b, s in statuses(rows, "2025-01-01T00:00:00.000Z", set(), []).items()}
    assert st == {"conv": "ended", "self": "ended", "later": "current", "old-valid": "ended"}


def test_a_rebuild_keeps_beliefs_a_caller_published(life):
    before = list(life.conn.execute("SELECT * FROM wiki_beliefs ORDER BY belief_id"))
    [feeds] = life.rebuild_beliefs(as_of="2024-09-01T00:00:00Z")      # no wiki workspace: the feeds' run only
    assert feeds.counts["beliefs_deleted"] == 0
    assert list(life.conn.execute("SELECT * FROM wiki_beliefs ORDER BY belief_id")) == before
