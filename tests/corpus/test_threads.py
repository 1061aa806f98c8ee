"""Seed 003 §25 conversation corpus (issue 18 part 6): one thread row per conversation with its entity links, key
decisions, open items and checkpoint summary; decision checkpoints; the `threads` stage is incremental and
deterministic; the abstractive path goes through the versioned prompt and the logged model client."""

from __future__ import annotations

import json

import orjson
import pytest

from kenning.api import Vault
from kenning.intake.corpus.checkpoints import Turn, read_thread
from kenning.intake.corpus.resume import CARD_TITLE, CorpusError, resume_context, search_conversation_history
from kenning.store.connection import rows, scalar
from tests.conftest import TEST_KEY, run_kenning
from tests.corpus.fixtures import AS_OF, LAPTOP, write_chats

HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture
def chats(tmp_path):
    return write_chats(tmp_path / "conversations.json")


@pytest.fixture
def vault(tmp_path, chats):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    v.ingest([chats], as_of=AS_OF, llm="none")
    yield v
    v.close()


def threads_of(conn) -> dict[str, dict]:
    out = {}
    for r in rows(conn, "SELECT * FROM conversation_threads"):
        for k in ("linked_entity_ids", "key_decisions", "unresolved_items"):
            r[k] = json.loads(r[k])
        out[r["thread_id"]] = r
    return out


def names(conn, ids) -> set[str]:
    return {r["canonical_name"] for r in rows(conn, f"SELECT canonical_name FROM nodes WHERE id IN "
                                                    f"({','.join('?' * len(ids))})", list(ids))}


def test_one_thread_row_per_conversation_with_decisions_open_items_and_links(vault):
    conn = vault.conn
    assert scalar(conn, "SELECT count(*) FROM conversations") == 2
    ts = threads_of(conn)
    assert set(ts) == {"conv-laptop", "conv-garden"}
    laptop = ts["conv-laptop"]
    assert laptop["title_hint"] == "Laptop for Lisbon" and laptop["channel"] == "chatgpt"
    assert laptop["turn_count"] == 5 and laptop["occurred_at"].startswith("2024-04-24")
    # the accepted suggestion and the user's own decision; the question the user asked last is open
    assert laptop["key_decisions"] == ["I'd recommend the 14-inch ThinkPad X1 Carbon for its battery life.",
                                       "We decided to stay in Alfama because it is close to the river."]
    assert "I still need to check the price in Lisbon though." in laptop["unresolved_items"]
    assert "Should we rent a car?" in laptop["unresolved_items"]
    assert "Lisbon" in names(conn, laptop["linked_entity_ids"])
    assert "Decided: We decided to stay in Alfama" in laptop["checkpoint_summary"]
    links = {r["entity_id"] for r in rows(conn, "SELECT entity_id FROM thread_entity_links WHERE thread_id=?",
                                          ("conv-laptop",))}
    assert links == set(laptop["linked_entity_ids"])
    # an unanswered suggestion is not a decision (silence ≠ acceptance); a hypothetical is not one either
    garden = ts["conv-garden"]
    assert garden["key_decisions"] == [] and names(conn, garden["linked_entity_ids"]) == {"Berlin"}
    cps = rows(conn, "SELECT * FROM decision_checkpoints WHERE thread_id='conv-laptop' ORDER BY ordinal")
    assert [c["description"] for c in cps] == laptop["key_decisions"]
    assert cps[0]["reasoning"] == "accepted: Perfect, I'll use that."
    assert cps[1]["reasoning"] == "it is close to the river."
    # each checkpoint points at the message it was read from
    for c in cps:
        text = scalar(conn, "SELECT text_raw FROM messages WHERE message_id=?", (c["message_id"],))
        assert text and c["occurred_at"]
    assert "Alfama" in names(conn, json.loads(cps[1]["linked_entity_ids"]))


def test_acceptance_rules():
    T = lambda i, r, t: Turn(str(i), r, None, t, None)  # noqa: E731
    offer = T(1, "assistant", "I recommend booking the 7:40 train to Porto because it is direct.")
    accepted = read_thread([T(0, "user", "How do I get to Porto?"), offer, T(2, "user", "Yes, let's do that.")])
    assert [d.description for d in accepted.decisions] == [offer.text] and accepted.decisions[0].accepted_from == "1"
    for reply in ("ok thx", "No, I'd rather drive.", "Perfect.", "What if the train is late?"):
        r = read_thread([T(0, "user", "How do I get to Porto?"), offer, T(2, "user", reply)])
        assert r.decisions == [], reply
    silent = read_thread([T(0, "user", "How do I get to Porto?"), offer])
    assert silent.decisions == []


def test_threads_stage_is_incremental(tmp_path, vault, chats):
    again = vault.ingest([chats], as_of=AS_OF, llm="none")
    counts = next(r.counts for r in again if r.stage == "threads")
    assert counts == {"threads_unchanged": 2}
    (tmp_path / "v2").mkdir()
    changed = write_chats(tmp_path / "v2" / "conversations.json",
                          laptop=LAPTOP + [("assistant", "Renting a car in Lisbon is rarely worth it."),
                                           ("user", "Let's go with public transport then.")])
    res = vault.ingest([changed], as_of="2024-06-02T00:00:00Z", llm="none")
    counts = next(r.counts for r in res if r.stage == "threads")
    assert counts["threads_changed"] == 1 and counts["threads_unchanged"] == 1 and "threads_new" not in counts
    laptop = threads_of(vault.conn)["conv-laptop"]
    assert laptop["turn_count"] == 7 and laptop["key_decisions"][-1] == "Let's go with public transport then."
    assert scalar(vault.conn, "SELECT count(*) FROM decision_checkpoints WHERE thread_id='conv-laptop'") == 3


def corpus_dump(path) -> list:
    with Vault.open(path, overrides=HASH) as v:
        return [rows(v.conn, f"SELECT * FROM {t} ORDER BY 1, 2")
                for t in ("conversation_threads", "thread_entity_links", "decision_checkpoints")] + \
               [rows(v.conn, "SELECT thread_id, input_hash, method FROM thread_builds ORDER BY 1")]


def test_threads_are_deterministic(tmp_path, chats):
    for name in ("a.db", "b.db"):
        with Vault.open(tmp_path / name, overrides=HASH) as v:
            v.ingest([chats], as_of=AS_OF, llm="none")
    assert corpus_dump(tmp_path / "a.db") == corpus_dump(tmp_path / "b.db")


def test_resume_card_and_search(vault):
    res = resume_context(vault.conn, vault.config, "Lisbon")
    card = res["card"]
    assert res["found"] and res["thread"]["thread_id"] == "conv-laptop"
    assert card.startswith(CARD_TITLE + "\nThread: Laptop for Lisbon (chatgpt, 2024-04-24")
    assert "Where things stood: Laptop for Lisbon." in card
    assert "- We decided to stay in Alfama because it is close to the river. (why: it is close to the river.)" in card
    assert "What is open:\n- Not sure whether 13 or 14 inch is better." in card
    latest = resume_context(vault.conn, vault.config)
    assert latest["thread"]["thread_id"] == "conv-laptop"
    berlin = resume_context(vault.conn, vault.config, "berlin")
    assert berlin["thread"]["thread_id"] == "conv-garden" and "What was decided: nothing recorded" in berlin["card"]
    hits = search_conversation_history(vault.conn, vault.config, "tomatoes splitting")
    assert [h["thread_id"] for h in hits["threads"]] == ["conv-garden"]
    scoped = search_conversation_history(vault.conn, vault.config, "laptop tomatoes", entity_scope="Berlin")
    assert [h["thread_id"] for h in scoped["threads"]] == ["conv-garden"]
    with pytest.raises(CorpusError, match="no entity named 'Atlantis'"):
        resume_context(vault.conn, vault.config, "Atlantis")


def test_cli_threads_and_resume(tmp_path, chats):
    db = tmp_path / "cli.db"
    cfg = tmp_path / "hash.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n")
    common = ["--db", str(db), "--config", str(cfg)]
    r = run_kenning("ingest", str(chats), "--as-of", AS_OF, "--llm", "none", "-q", *common)
    assert r.returncode == 0, r.stderr
    r = run_kenning("threads", "--entity", "Lisbon", "--json", *common)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [t["thread_id"] for t in data["threads"]] == ["conv-laptop"]
    assert {"Lisbon", "Alfama"} <= {e["name"] for e in data["threads"][0]["linked_entities"]}
    r = run_kenning("threads", *common, env={"COLUMNS": "200"})
    assert r.returncode == 0 and "Laptop for Lisbon" in r.stdout and "Splitting tomatoes" in r.stdout
    r = run_kenning("resume", "Lisbon", *common)
    assert r.returncode == 0 and r.stdout.startswith(CARD_TITLE) and "What is open:" in r.stdout
    r = run_kenning("resume", "--json", *common)
    assert json.loads(r.stdout)["thread"]["thread_id"] == "conv-laptop"
    r = run_kenning("resume", "Atlantis", *common)
    assert r.returncode == 2 and "no entity named 'Atlantis'" in r.stderr
    # the hint names a command that exists, and it lists that name space (I175)
    assert "`kenning nodes --kind world_entity`" in " ".join(r.stderr.split())
    assert run_kenning("nodes", "--kind", "world_entity", *common).returncode == 0
    # threads exist, none matches: say that, not "ingest conversations first" (I175)
    r = run_kenning("threads", "-q", "zeppelin", *common)
    assert r.returncode == 0 and "no thread matches 'zeppelin'" in r.stdout and "ingest" not in r.stdout


def summary_responder(body: dict) -> dict:
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    assert "Transcript:" in user
    if "Lisbon" in user:
        return {"title_hint": "Choosing a travel laptop for Lisbon",
                "checkpoint_summary": "Sam chose the ThinkPad X1 Carbon and is still checking prices.",
                "key_decisions": [{"description": "Buy the ThinkPad X1 Carbon", "reasoning": "battery life",
                                   "turn": 3},
                                  {"description": "An untraceable decision", "reasoning": "", "turn": 99}],
                "unresolved_items": ["Check the laptop price in Lisbon"]}
    return "not json at all"


def test_abstractive_summaries_through_the_logged_model(tmp_path, chats, llm_server):
    llm_server.default_chat = summary_responder
    over = {**HASH, "llm": {"base_url": llm_server.base_url, "model": "kenning-test-model", "api_key": TEST_KEY,
                            "backoff_initial_s": 0.001, "backoff_max_s": 0.01, "timeout_s": 5, "max_retries": 0}}
    with Vault.open(tmp_path / "m.db", overrides=over) as v:
        v.ingest([chats], as_of=AS_OF, llm="none", stages="0-knowledge")
        res = v.ingest([chats], as_of=AS_OF, llm="live", stages="threads")[0]
        assert res.counts["threads_abstractive"] == 1 and res.counts["threads_llm_fallback"] == 1
        ts = threads_of(v.conn)
        laptop, garden = ts["conv-laptop"], ts["conv-garden"]
        assert laptop["title_hint"] == "Choosing a travel laptop for Lisbon"
        assert laptop["checkpoint_summary"] == "Sam chose the ThinkPad X1 Carbon and is still checking prices."
        assert laptop["key_decisions"] == ["Buy the ThinkPad X1 Carbon"]
        cp = rows(v.conn, "SELECT * FROM decision_checkpoints WHERE thread_id='conv-laptop'")
        assert len(cp) == 1 and scalar(v.conn, "SELECT text_raw FROM messages WHERE message_id=?",
                                       (cp[0]["message_id"],)) == LAPTOP[2][1]
        # the unusable answer falls back to the extractive summary, with a warning
        assert garden["checkpoint_summary"].startswith("Splitting tomatoes.")
        assert any(e[3] == "THREAD_SUMMARY_FALLBACK" for e in res.events)
        builds = {r["thread_id"]: r for r in rows(v.conn, "SELECT * FROM thread_builds")}
        assert builds["conv-laptop"]["method"] == "abstractive"
        assert builds["conv-laptop"]["prompt_ref"].startswith("thread_summary@v1#")
        assert builds["conv-garden"]["method"] == "extractive_fallback"
        # every call is logged in the model layer's tables
        calls = rows(v.conn, "SELECT call_id FROM llm_extraction_calls")
        assert {c["call_id"] for c in calls} >= set(orjson.loads(builds["conv-laptop"]["llm_call_ids"]))
        assert len(llm_server.chat_requests) >= 2


def test_summary_vectors_and_semantic_search(tmp_path, chats):
    """§25.1 "with vector embedding": summaries go to the vector space `threads` (hash embedder here); the search
    can rank by them, and a query sharing no word with a thread still finds it through its vector."""
    from kenning.store import vectors as vsql

    with Vault.open(tmp_path / "vec.db", overrides=HASH) as v:
        counts = next(r.counts for r in v.ingest([chats], as_of=AS_OF, llm="none") if r.stage == "threads")
        assert counts["thread_vectors_written"] == 2
        table = vsql.active_table(v.conn)["table_name"]
        assert scalar(v.conn, "SELECT count(*) FROM vector_items WHERE space='threads'") == 2, table
        again = next(r.counts for r in v.ingest([chats], as_of=AS_OF, llm="none") if r.stage == "threads")
        assert "thread_vectors_written" not in again                          # unchanged texts are not re-embedded
        plain = search_conversation_history(v.conn, v.config, "tomatoes", vectors=False)
        assert [h["thread_id"] for h in plain["threads"]] == ["conv-garden"] and "vector_score" not in plain["threads"][0]
        fused = search_conversation_history(v.conn, v.config, "tomatoes", vectors=True)
        assert fused["threads"][0]["thread_id"] == "conv-garden" and fused["threads"][0]["vector_score"] is not None
        assert {h["thread_id"] for h in fused["threads"]} == {"conv-garden", "conv-laptop"}  # vectors rank both
