"""The publishing API the conversation (stage 5) and self-belief (seed 000) feeds will call: Berlin → Paris from
chat messages, quotes hash-checked against messages.text_raw at query time."""

from __future__ import annotations

import pytest
from .beliefs_helpers import add_conversation, minimal_wiki

from kenning.beliefs.ledger import BeliefInput, BeliefPublishError, BeliefSource, publish_beliefs
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import StageFailed, run_stage
from kenning.store import transaction

CID = "conv-moving"
M1, M2 = "msg-berlin", "msg-paris"
T1 = "I just signed the lease. I live in Berlin now, near the Spree."
T2 = "Big news: we moved to Paris last month, so Berlin is over."


def span(text: str, quote: str) -> tuple[int, int]:
    i = text.index(quote)
    return i, i + len(quote)


def source(mid: str, text: str, quote: str) -> BeliefSource:
    s, e = span(text, quote)
    return BeliefSource(kind="conversation", conversation_id=CID, message_id=mid, char_start=s, char_end=e, quote=quote)


def berlin_paris() -> list[BeliefInput]:
    berlin = BeliefInput(belief_id="b-home-berlin", statement="I live in Berlin.", topic="home", subject="my home city",
                         predicate="is", object="Berlin", asserted_at="2024-01-05T09:00:00Z",
                         source_valid_from="2024-01", sources=(source(M1, T1, "I live in Berlin now"),))
    paris = BeliefInput(belief_id="b-home-paris", statement="I live in Paris.", topic="home", subject="my home city",
                        predicate="is", object="Paris", asserted_at="2024-06-10T18:30:00Z", source_valid_from="2024-05",
                        sources=(source(M2, T2, "we moved to Paris last month"),), supersedes=("b-home-berlin",),
                        supersedes_reason="contradicted_by_new_source")
    return [berlin, paris]


@pytest.fixture
def chat(vault):
    with transaction(vault.conn):
        add_conversation(vault.conn, CID, "Moving", [(M1, "user", "2024-01-05T09:00:00.000Z", T1),
                                                     (M2, "user", "2024-06-10T18:30:00.000Z", T2)])
    return vault


def test_berlin_to_paris(chat):
    r = chat.publish_beliefs(berlin_paris(), as_of="2024-06-11T00:00:00Z")
    assert r.stage == "beliefs-publish" and r.counts["beliefs_inserted"] == 2
    ans = chat.why("my home city")
    assert [b["belief_id"] for b in ans["current_beliefs"]] == ["b-home-paris"]
    assert [b["belief_id"] for b in ans["history"]] == ["b-home-berlin"]
    assert ans["supersession_chain"] == ["b-home-berlin", "b-home-paris"]
    old = ans["history"][0]
    assert old["supersession_reason"] == "contradicted_by_new_source"
    assert old["superseded_at"] == "2024-06-10T18:30:00.000Z" and old["superseded_by_belief_id"] == "b-home-paris"
    assert old["superseded_in_run"] == r.run_id and old["source_valid_from"] == "2024-01"
    cur = ans["current_beliefs"][0]
    assert cur["source_kind"] == "conversation" and cur["wiki_page"] == f"conversation/{CID}#message-{M2}"
    assert cur["footnote_ids"] == []
    for b, mid in ((cur, M2), (old, M1)):
        [s] = b["supporting_sources"]
        assert s["verified_against_source"] is True and s["verification"] == "verified"
        assert s["conversation_id"] == CID and s["message_id"] == mid and s["conversation_title"] == "Moving"
        assert s["raw_path"] == f"Moving · {s['message_date']}" and s["speaker_role"] == "user"
    assert cur["supporting_sources"][0]["quote"] == "we moved to Paris last month"
    # what did I think in March 2024? Berlin.
    march = chat.why("my home city", since="2024-03", until="2024-03")
    assert march["as_of"]["belief_ids"] == ["b-home-berlin"]


def test_publish_is_idempotent(chat):
    chat.publish_beliefs(berlin_paris(), as_of="2024-06-11T00:00:00Z")
    before = list(chat.conn.execute("SELECT * FROM wiki_beliefs ORDER BY belief_id"))
    again = chat.publish_beliefs(berlin_paris(), as_of="2024-07-01T00:00:00Z")
    assert again.counts == {"workspace": "personal", "beliefs_inserted": 0, "beliefs_updated": 0, "beliefs_unchanged": 2}
    assert list(chat.conn.execute("SELECT * FROM wiki_beliefs ORDER BY belief_id")) == before


def test_quote_fails_after_the_message_changes(chat, kenning, db):
    chat.publish_beliefs(berlin_paris(), as_of="2024-06-11T00:00:00Z")
    with transaction(chat.conn):   # a newer export edits the message (stage 1 updates text_raw in place)
        chat.conn.execute("UPDATE messages SET text_raw=? WHERE message_id=?", ("Big news: we may move to Paris.", M2))
    ans = chat.why("my home city")
    s = ans["current_beliefs"][0]["supporting_sources"][0]
    assert s["verified_against_source"] is False and s["verification"] == "drifted"
    assert ans["history"][0]["supporting_sources"][0]["verified_against_source"] is True
    report = chat.verify_beliefs()
    assert report["drifted"] == 1 and report["beliefs_with_drifted_quotes"] == ["b-home-paris"]
    # the belief is not touched until asked explicitly
    assert chat.why("b-home-paris")["current_beliefs"][0]["belief_id"] == "b-home-paris"


@pytest.mark.parametrize("change, fragment", [
    (dict(statement="x" * 281), "at most 280"),
    (dict(supersedes_reason="vibes"), "not one of"),
    (dict(supersedes=("b-nowhere",)), "b-nowhere"),
    (dict(asserted_at="yesterday"), "not an ISO date"),
    (dict(sources=(BeliefSource(kind="conversation", conversation_id=CID, message_id=M2, char_start=0, char_end=8,
                                quote="we moved"),)), "is not text_raw[0:8]"),
    (dict(sources=(BeliefSource(kind="conversation", conversation_id="conv-other", message_id=M2, char_start=0,
                                char_end=3, quote="Big"),)), "belongs to conversation"),
    (dict(sources=()), "at least one source"),
    (dict(confidence_hint="certain"), "confidence_hint"),
])
def test_publish_rejects_the_whole_batch(chat, change, fragment):
    items = berlin_paris()
    paris = items[1]
    items[1] = BeliefInput(**{**paris.__dict__, **change})
    with pytest.raises(StageFailed) as exc:
        chat.publish_beliefs(items, as_of="2024-06-11T00:00:00Z")
    assert isinstance(exc.value.cause, BeliefPublishError)
    assert any(fragment in p for p in exc.value.cause.problems), exc.value.cause.problems
    assert chat.conn.execute("SELECT COUNT(*) FROM wiki_beliefs").fetchone()[0] == 0


def test_supersession_published_later_and_contradictions_are_symmetric(chat):
    berlin, paris = berlin_paris()
    chat.publish_beliefs([berlin], as_of="2024-01-06T00:00:00Z")
    assert chat.why("my home city")["current_beliefs"][0]["belief_id"] == "b-home-berlin"
    lisbon = BeliefInput(belief_id="b-home-lisbon", statement="I live in Lisbon.", topic="home",
                         subject="my home city", predicate="is", object="Lisbon", asserted_at="2024-06-10T18:31:00Z",
                         sources=(source(M2, T2, "Big news"),), contradicting_belief_ids=("b-home-paris",))
    r = chat.publish_beliefs([paris, lisbon], as_of="2024-06-11T00:00:00Z")
    assert r.counts["beliefs_inserted"] == 2 and r.counts["beliefs_updated"] == 1   # Berlin gets superseded
    rows = {b: c for b, c in chat.conn.execute("SELECT belief_id, contradicting_belief_ids FROM wiki_beliefs")}
    assert rows["b-home-paris"] == '["b-home-lisbon"]' and rows["b-home-lisbon"] == '["b-home-paris"]'
    ans = chat.why("b-home-paris")
    assert [b["belief_id"] for b in ans["contradicting_beliefs"]] == ["b-home-lisbon"]
    assert ans["current_beliefs"][0]["confidence_hint"] == "contested"


def test_raw_file_sources_and_feeds_calling_inside_their_own_stage(vault, tmp_path):
    """A feed calls publish_beliefs(conn, workspace, items, ctx) inside its own stage's transaction."""
    root = minimal_wiki(tmp_path / "w")
    vault.ingest([root], as_of="2026-06-01T00:00:00Z", workspace="notes")

    class SelfBeliefFeed:
        name, title = "selfbelief-test", "a feed"

        def run(self, ctx):
            item = BeliefInput(belief_id="b-self-1", statement="Anna is my friend from Lyon.", topic="people",
                               asserted_at="2026-06-01", sources=(BeliefSource(kind="raw_file",
                                                                               raw_path="raw/notes/a.md",
                                                                               quote="Anna lives in Lyon."),))
            return publish_beliefs(ctx.conn, "notes", [item], ctx).counts()

    r = run_stage(vault.conn, SelfBeliefFeed(), vault.config, Clock.from_option("2026-06-02T00:00:00Z"))
    assert r.counts["beliefs_inserted"] == 1
    [cur] = vault.why("b-self-1", workspace="notes")["current_beliefs"]
    assert cur["source_kind"] == "raw_file" and cur["asserted_in_run"] == r.run_id
    s = cur["supporting_sources"][0]
    assert s["raw_path"] == "raw/notes/a.md" and s["verified_against_source"] is True
    assert s["char_start"] == root.joinpath("raw/notes/a.md").read_text().index("Anna lives in Lyon.")
    # a reindex of the wiki leaves published beliefs alone
    vault.rebuild_beliefs(as_of="2026-06-03T00:00:00Z")
    assert vault.why("b-self-1", workspace="notes")["current_beliefs"][0]["belief_id"] == "b-self-1"


def test_superseded_by_and_manual_override_survive_republishing(chat):
    berlin, paris = berlin_paris()
    ended = BeliefInput(**{**berlin.__dict__, "superseded_at": "2024-06-10T18:30:00Z", "superseded_by": "b-home-paris",
                           "supersession_reason": "contradicted_by_new_source"})
    paris_alone = BeliefInput(**{**paris.__dict__, "supersedes": (), "supersedes_reason": None})
    lyon = BeliefInput(belief_id="b-home-lyon", statement="I live in Lyon.", topic="home", subject="my home city",
                       asserted_at="2024-06-10T18:31:00Z", sources=(source(M2, T2, "Big news"),))
    chat.publish_beliefs([ended, paris_alone, lyon], as_of="2024-06-11T00:00:00Z")
    ans = chat.why("my home city")
    assert ans["supersession_chain"] == ["b-home-lyon"]   # the newest current belief's chain comes first
    assert ans["supersession_chains"] == [["b-home-lyon"], ["b-home-berlin", "b-home-paris"]]
    chat.supersede("b-home-paris", "b-home-lyon", "manual_correction", as_of="2024-07-01T00:00:00Z")
    reasons = dict(chat.conn.execute("SELECT belief_id, supersession_reason FROM wiki_beliefs"))
    assert reasons["b-home-paris"] == "manual_correction"
    assert chat.why("my home city")["supersession_chain"] == ["b-home-berlin", "b-home-paris", "b-home-lyon"]
    # the feed runs again with what it knows; your correction stays
    chat.publish_beliefs([ended, paris_alone, lyon], as_of="2024-07-02T00:00:00Z")
    reasons = dict(chat.conn.execute("SELECT belief_id, supersession_reason FROM wiki_beliefs"))
    assert reasons["b-home-paris"] == "manual_correction"
    assert [b["belief_id"] for b in chat.why("my home city")["current_beliefs"]] == ["b-home-lyon"]
