"""The ingest → node-store bridge (issue 17 part 9): the bundled sample becomes DOC72 nodes and edges through the
single writer, with provenance to the exact message span, idempotently, keeping history and a person's feedback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.cli.demo import sample_path
from kenning.knowledge import docs
from kenning.knowledge.bridge import goal_phrase, relation_name, sentence_window
from kenning.knowledge.ops import CreateEdge, Feedback, KnowledgeWrite
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store import raw as raw_sql
from tests.conftest import write_export

AS_OF = "2024-06-01T00:00:00Z"
# The conversation stages the bridge reads, and the bridge; graph (6), self-beliefs and the index are not needed.
STAGES = "0,1,2A,2B,3,4,5,knowledge"
HASH = {"embeddings": {"backend": "hash"}}


def build(path: Path, export: Path | None = None, as_of: str = AS_OF, stages: str = STAGES) -> Vault:
    v = Vault.open(path, overrides=HASH)
    v.ingest([export or sample_path()], as_of=as_of, stages=stages)
    return v


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bridge") / "sample.db"
    build(path).close()
    return path


@pytest.fixture
def sample(sample_db, tmp_path):
    path = tmp_path / "v.db"
    shutil.copy(sample_db, path)
    v = Vault.open(path, overrides=HASH)
    yield v
    v.close()


def nodes(v: Vault, kind: str) -> dict[str, dict]:
    return {n["canonical_name"]: n for n in ksql.list_nodes(v.conn, kind=kind, active=None, limit=1000)}


def edges(v: Vault, src: str, rel: str) -> list[dict]:
    return [e for e in ksql.edges_of(v.conn, src) if e["relation_type"] == rel and e["source_id"] == src]


def by_name(v: Vault, name: str) -> dict:
    (n,) = [n for n in ksql.find_nodes(v.conn, name) if n["is_active"]]
    return n


def test_the_sample_becomes_nodes_of_each_kind_with_provenance_to_the_quote(sample):
    people = nodes(sample, "world_entity")
    assert {"me", "Sam", "Mia", "Leo", "Anna", "my sister", "Acme Corp", "Globex", "Paris", "Berlin"} <= set(people)
    assert not {"Book", "Either", "Markets", "Madrid"} & set(people)  # only the assistant named them (K61)
    me = people["me"]
    assert me["payload"]["is_vault_owner"] and me["lifecycle_state"] == "confirmed"
    assert people["Sam"]["payload"]["entity_type"] == "person" and people["Paris"]["payload"]["entity_type"] == "place"
    directives = nodes(sample, "memory_directive")
    assert directives["I hate cilantro"]["payload"]["memory_type"] == "preference"
    assert directives["I no longer eat meat"]["payload"]["memory_type"] == "constraint"
    assert directives["I hate cilantro"]["payload"]["source_certainty"] == "user_explicitly_stated"
    assert "Thanks for the help" not in directives
    # goals and obligations are the intake miners' alone (I75): stage 4's intentions ("learn Japanese next year")
    # make none here
    assert nodes(sample, "goal") == {} and nodes(sample, "obligation") == {}
    assert {"Blue Garden", "Project Phoenix", "Weekly Sync"} <= set(nodes(sample, "domain_concept"))
    # every quote is the message's own words at the recorded span
    entries = [p for n in ksql.list_nodes(sample.conn, active=None, limit=1000)
               for p in ksql.get_provenance(sample.conn, n["id"]) if p["message_id"]]
    assert len(entries) > 60
    for p in entries:
        text = raw_sql.message_text(sample.conn, p["message_id"])
        assert p["verbatim_excerpt"] == text[p["char_start"]:p["char_end"]] and len(p["verbatim_excerpt"]) <= 500
        assert p["source_ref"] == f"message:{p['message_id']}#{p['char_start']}-{p['char_end']}"
        assert p["authorial_voice"] in ("self", "external_party", "system")
    (cilantro,) = ksql.get_provenance(sample.conn, directives["I hate cilantro"]["id"])
    assert cilantro["verbatim_excerpt"] == "I hate cilantro" and cilantro["entry_type"] == "conversation_statement"


def test_starting_alpha_follows_the_source_weight(sample):
    # one statement of the owner's: Beta(2,2) + stated_by_user 0.90
    assert nodes(sample, "memory_directive")["I hate cilantro"]["alpha"] == pytest.approx(2.90)
    # a person the owner mentioned n times (capped at 5 entries): + learned_from_chat 0.55 each
    sam = nodes(sample, "world_entity")["Sam"]
    mentions = [p for p in ksql.get_provenance(sample.conn, sam["id"]) if p["entry_type"] == "conversation_mention"]
    assert 1 <= len(mentions) <= 5 and sam["alpha"] == pytest.approx(2 + 0.55 * len(mentions))
    assert all("Sam" in p["verbatim_excerpt"] for p in mentions)
    assert sam["lifecycle_state"] == "suggested"  # §6.6: seen in ≥ 2 conversations with enough confidence
    # an edge only the assistant asserted ("you're based in Munich") never claims more than agent_observation
    me = by_name(sample, "me")["id"]
    munich = [e for e in edges(sample, me, "domain_lives_in") if e["end_date"] is None
              and e["payload"]["said_by"] == "the assistant"]
    assert munich and all(e["confidence"] <= 0.20 for e in munich)


def test_reingest_adds_no_commit_and_changes_nothing(sample):
    before, n = ksql.dump(sample.conn), ksql.commit_count(sample.conn)
    assert n > 40
    sample.ingest([sample_path()], as_of="2024-07-01T00:00:00Z", stages=STAGES)
    assert ksql.commit_count(sample.conn) == n and ksql.dump(sample.conn) == before


def test_a_superseded_fact_ends_its_edge_and_keeps_it(sample):
    sister, me = by_name(sample, "my sister")["id"], by_name(sample, "me")["id"]
    porto, lisbon = by_name(sample, "Porto")["id"], by_name(sample, "Lisbon")["id"]
    (ended,) = [e for e in edges(sample, sister, "domain_lives_in") if e["target_id"] == porto]
    assert ended["end_date"] == "2022-09-11T06:39:51.578Z"  # when "I meant Lisbon, not Porto" was said
    assert "I meant Lisbon, not Porto" in ended["payload"]["end_reason"]
    assert ended["payload"]["quote"] == "My sister lives in Porto"
    (now,) = [e for e in edges(sample, sister, "domain_lives_in") if e["target_id"] == lisbon]
    assert now["end_date"] is None
    berlin = by_name(sample, "Berlin")["id"]
    (b,) = [e for e in edges(sample, me, "domain_lives_in") if e["target_id"] == berlin]
    ended_at = sample.conn.execute(
        "SELECT max(valid_to_utc) FROM assertion_temporalized WHERE status='negated' AND assertion_id IN "
        f"({','.join('?' * len(b['payload']['assertion_ids']))})", b["payload"]["assertion_ids"]).fetchone()[0]
    assert (b["start_date"], b["end_date"]) == ("2019-01-01T00:00:00.000Z", ended_at)  # stage 5's valid time
    assert b["payload"]["end_reason"].startswith("negated: “I don't live in Berlin”")
    (acme,) = [e for e in edges(sample, me, "domain_works_at") if e["target_id"] == by_name(sample, "Acme Corp")["id"]]
    assert acme["end_date"] and acme["payload"]["end_reason"].startswith("superseded: “I started working at Globex”")
    assert relation_name("lives in", "domain_") == "domain_lives_in"


def test_user_feedback_survives_reingest_and_reindex(sample):
    w = KnowledgeWriter(sample.conn, sample.config, clock=Clock("2024-06-02T00:00:00.000Z"))
    sam, cilantro = by_name(sample, "Sam"), by_name(sample, "I hate cilantro")
    w.write(KnowledgeWrite(source_event="user:confirm", change_summary="confirm Sam",
                           ops=[Feedback(id=sam["id"], action="confirm")]))
    w.write(KnowledgeWrite(source_event="user:correct", change_summary="correct cilantro",
                           ops=[Feedback(id=cilantro["id"], action="correct", canonical_name="No cilantro, ever",
                                         payload_set={"memory_type": "constraint", "assertion_class": "constraint"})]))
    tom = by_name(sample, "Tom")
    w.write(KnowledgeWrite(source_event="user:reject", change_summary="reject Tom",
                           ops=[Feedback(id=tom["id"], action="reject", reason="not a friend")]))
    me, paris = by_name(sample, "me")["id"], by_name(sample, "Paris")["id"]
    (paris_edge,) = [e for e in edges(sample, me, "domain_lives_in") if e["target_id"] == paris]
    (made,) = [c for c in ksql.list_commits(sample.conn, node_id=paris, limit=50)
               if c["change_summary"].startswith("ingest: relation me lives_in Paris")]
    w.rollback(made["commit_id"], reason="I never lived in Paris")
    after_feedback = ksql.dump(sample.conn)
    n = ksql.commit_count(sample.conn)
    sample.ingest([sample_path()], as_of="2024-07-01T00:00:00Z", stages=STAGES)
    sample.reindex(as_of="2024-07-01T00:00:00Z")
    assert ksql.commit_count(sample.conn) == n and ksql.dump(sample.conn) == after_feedback
    sam2, fixed = ksql.get_node(sample.conn, sam["id"]), ksql.get_node(sample.conn, cilantro["id"])
    assert sam2["lifecycle_state"] == "confirmed" and sam2["alpha"] == pytest.approx(sam["alpha"] + 1.0)
    assert fixed["canonical_name"] == "No cilantro, ever" and fixed["payload"]["memory_type"] == "constraint"
    rejected = ksql.get_node(sample.conn, tom["id"])
    assert (rejected["lifecycle_state"], rejected["lifecycle_substate"]) == ("retracted", "user_rejected")
    (rolled,) = [e for e in edges(sample, me, "domain_lives_in") if e["target_id"] == paris]
    assert rolled["start_date"] == paris_edge["start_date"]
    assert rolled["end_date"] is not None and rolled["lifecycle_state"] == "retracted"


def test_the_writer_never_reopens_an_edge_a_person_rolled_back(sample):
    me, paris = by_name(sample, "me")["id"], by_name(sample, "Paris")["id"]
    (e,) = [e for e in edges(sample, me, "domain_lives_in") if e["target_id"] == paris]
    (made,) = [c for c in ksql.list_commits(sample.conn, node_id=paris, limit=50)
               if c["change_summary"].startswith("ingest: relation me lives_in Paris")]
    w = KnowledgeWriter(sample.conn, sample.config, clock=Clock("2024-06-02T00:00:00.000Z"))
    w.rollback(made["commit_id"], reason="wrong")
    res = w.write(KnowledgeWrite(source_event="t", change_summary="again", ops=[CreateEdge(
        source_id=me, relation_type="domain_lives_in", target_id=paris, start_date=e["start_date"])]))
    assert not res.created
    assert docs.load_edge(sample.conn, docs.edge_doc_key(e))["lifecycle_state"] == "retracted"


def test_a_newer_export_adds_only_what_is_new_and_intentions_make_no_obligation(tmp_path):
    turns = [("user", "I hate cilantro. My friend Tom lives in Lisbon."), ("assistant", "Noted.")]
    first = write_export(tmp_path / "a.json", turns)
    v = build(tmp_path / "v.db", first)
    try:
        n = ksql.commit_count(v.conn)
        kinds = ksql.kind_counts(v.conn)
        assert kinds.get("memory_directive") == 1 and "obligation" not in kinds
        newer = write_export(tmp_path / "b.json", turns + [
            ("user", "I'm going to visit Kyoto next month."), ("assistant", "Lovely.")])
        v.ingest([newer], as_of=AS_OF, stages=STAGES)
        assert ksql.list_nodes(v.conn, kind="obligation") == []  # the miners' kind (I75)
        added = ksql.list_commits(v.conn, after_seq=0, limit=1000)[n:]
        assert added and all(c["source_event"] in ("ingest:world_entity", "ingest:relation") for c in added)
        assert all("cilantro" not in c["change_summary"] for c in added)
    finally:
        v.close()


def test_two_fresh_vaults_with_a_frozen_clock_have_identical_node_stores(sample_db, tmp_path):
    other = build(tmp_path / "again.db")
    try:
        first = Vault.open(sample_db, overrides=HASH)
        try:
            assert ksql.dump(other.conn) == ksql.dump(first.conn)
        finally:
            first.close()
    finally:
        other.close()


def test_helpers():
    text = "First one. Then Sam said hi to me, and left. Last."
    s = text.index("Sam")
    lo, hi = sentence_window(text, s, s + 3, 80)
    assert text[lo:hi] == "Then Sam said hi to me, and left."
    assert goal_phrase("plans_to", "save for a new car") == "save for a new car"
    assert goal_phrase("learns", "Japanese") == "learn Japanese"


def test_a_newer_export_ends_the_edge_its_correction_supersedes(tmp_path):
    turns = [("user", "My sister lives in Porto."), ("assistant", "Nice city.")]
    v = build(tmp_path / "v.db", write_export(tmp_path / "a.json", turns))
    try:
        sister, porto = by_name(v, "my sister")["id"], by_name(v, "Porto")["id"]
        (e,) = edges(v, sister, "domain_lives_in")
        assert e["target_id"] == porto and e["end_date"] is None
        v.ingest([write_export(tmp_path / "b.json", turns + [("user", "I meant Lisbon, not Porto."),
                                                             ("assistant", "Got it.")])], as_of=AS_OF, stages=STAGES)
        got = {ksql.get_node(v.conn, x["target_id"])["canonical_name"]: x for x in edges(v, sister, "domain_lives_in")}
        assert got["Porto"]["start_date"] == e["start_date"] and got["Porto"]["end_date"] is not None
        assert got["Porto"]["payload"]["end_reason"].startswith("superseded: “I meant Lisbon, not Porto”")
        assert got["Lisbon"]["end_date"] is None
    finally:
        v.close()


def _two_conversations(tmp_path: Path) -> tuple[Path, Path]:
    import json

    first = write_export(tmp_path / "a.json", [("user", "I had lunch with my friend Priya Patel in Porto."),
                                               ("assistant", "Nice.")])
    second = json.loads(write_export(tmp_path / "b.json", [("user", "Priya Patel called me from Porto."),
                                                           ("assistant", "Good.")], conv_id="conv-2").read_text())
    second[0]["create_time"] += 3 * 86400
    both = tmp_path / "ab.json"
    both.write_text(json.dumps(json.loads(first.read_text()) + second), encoding="utf-8")
    return first, both


@pytest.mark.parametrize("reject_first", [False, True])
def test_observed_to_suggested_after_a_second_conversation_unless_the_quality_gate_is_frozen(tmp_path, reject_first):
    first, both = _two_conversations(tmp_path)
    v = build(tmp_path / "v.db", first, as_of="2024-01-01T00:00:00Z")
    try:
        assert by_name(v, "Priya Patel")["lifecycle_state"] == "observed"  # one conversation (§6.6 needs 2)
        if reject_first:  # a person's rejection drops the entity class's 7-day precision below its 0.85 floor
            KnowledgeWriter(v.conn, v.config, clock=Clock("2024-01-01T00:00:00.000Z")).write(KnowledgeWrite(
                source_event="user:reject", change_summary="reject Porto",
                ops=[Feedback(id=by_name(v, "Porto")["id"], action="reject")]))
        v.ingest([both], as_of="2024-01-01T00:00:00Z", stages=STAGES)
        priya = by_name(v, "Priya Patel")
        assert priya["alpha"] == pytest.approx(2 + 2 * 0.55)
        assert priya["lifecycle_state"] == ("observed" if reject_first else "suggested")
    finally:
        v.close()


def test_reingest_retires_what_the_old_bridge_made_but_never_what_a_person_touched(tmp_path):
    """An existing vault holds goals/obligations an earlier bridge made from stage 4's intentions (I75): the next
    ingest archives them through the writer (a commit each, nothing deleted), leaves a goal the user confirmed
    and one the miners made, and a second ingest changes nothing."""
    from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
    from kenning.knowledge.ops import CreateNode, Feedback, KnowledgeWrite
    from kenning.knowledge.writer import KnowledgeWriter

    turns = [("user", "I hate cilantro."), ("assistant", "Noted.")]
    v = build(tmp_path / "v.db", write_export(tmp_path / "a.json", turns))
    try:
        w = KnowledgeWriter(v.conn, v.config, clock=Clock.from_option(AS_OF))

        def make(kind: str, name: str, event: str) -> str:
            res = w.write(KnowledgeWrite(source_event=event, change_summary=f"old {kind}", ops=[CreateNode(
                node_kind=kind, canonical_name=name, payload=dict(EXAMPLE_PAYLOADS[kind]),
                evidence=("stated_by_user",))]))
            return res.node_ids[0]

        noise = make("goal", "merge two sorted lists", "ingest:goal")
        dated = make("obligation", "learn Japanese by 2024-01-01", "ingest:obligation")
        kept = make("goal", "run a marathon", "ingest:goal")
        w.write(KnowledgeWrite(source_event="user:confirm", change_summary="confirm",
                               ops=[Feedback(id=kept, action="confirm")]))
        mined = make("goal", "learn to sail", "mining:goal")
        before = ksql.commit_count(v.conn)
        runs = v.ingest([tmp_path / "a.json"], as_of="2024-06-02T00:00:00Z", stages="knowledge")
        assert runs[-1].counts.get("goal_retired") == 1 and runs[-1].counts.get("obligation_retired") == 1
        for nid in (noise, dated):
            n = ksql.get_node(v.conn, nid)
            assert n is not None and not n["is_active"] and n["lifecycle_state"] == "archived"  # archived, kept
        for nid in (kept, mined):
            assert ksql.get_node(v.conn, nid)["is_active"]
        retire = [c for c in ksql.list_commits(v.conn, after_seq=0, limit=1000) if c["source_event"] == "ingest:retire"]
        assert len(retire) == 2 and ksql.commit_count(v.conn) == before + 2
        v.ingest([tmp_path / "a.json"], as_of="2024-06-03T00:00:00Z", stages="knowledge")
        assert ksql.commit_count(v.conn) == before + 2
    finally:
        v.close()
