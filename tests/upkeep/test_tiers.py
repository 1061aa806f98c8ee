"""Stage 2 scoring terms (§42A.2.9), Tier 4 through a real OpenAI-compatible test server (strict JSON, retries, dead
letter at 5), and Tier 5's gates and caps."""

from __future__ import annotations

import json

import pytest

from kenning.pipeline.clock import Clock
from kenning.store import upkeep as usql
from pydantic import ValidationError

from kenning.upkeep.resolution import Context, Resolver, Tier4Result, process_tier4, tier5_candidates, token_overlap
from kenning.upkeep.tier4 import run_tier4_queue, sync_allowed
from tests.upkeep.conftest import AS_OF

NOW = Clock.from_option(AS_OF).now()


def test_token_overlap_and_context_terms(vault):
    assert token_overlap("sarah chen", "sarah chen") == 1.0
    assert token_overlap("sarah chen", "dr chen") == pytest.approx(1 / 2)  # "dr" is under 3 characters
    conn = vault.conn
    e = next(iter(usql.promoted_edges(conn)))
    r = Resolver(conn, vault.config, NOW)
    base = Context("o", None, "chatgpt:user", NOW)
    alone = r.graph_context(e["target_id"], base)
    with_anchor = r.graph_context(e["target_id"], Context("o", None, "chatgpt:user", NOW, anchors=[e["source_id"]]))
    # term 2: prior evidence = min(.20, .05 · Σ confidence of edges with confidence > .3)
    expected = min(0.20, 0.05 * e["confidence"]) if e["confidence"] > 0.3 else 0.0
    assert with_anchor - alone == pytest.approx(expected, abs=1e-6)
    # term 1: an edge to the work context node adds .40
    wc = Context("o", e["source_id"], "chatgpt:user", NOW)
    assert r.graph_context(e["target_id"], wc) - alone == pytest.approx(min(0.40, 1 - alone), abs=1e-6)
    # term 3: a participant whose name matches an alias (Jaccard ≥ .7) adds .20
    name = usql.node_facts(conn, [e["target_id"]])[e["target_id"]]["canonical_name"]
    part = Context("o", None, "chatgpt:user", NOW, participants=[name])
    assert r.graph_context(e["target_id"], part) - alone == pytest.approx(0.20, abs=1e-6)


def test_tier4_strict_json_retries_and_dead_letter(vault, llm_server, llm_config):
    """The queued mode through the model layer: a chatty answer (and its repair) is a failed parse, retried later;
    a good one resolves the mention; an answer outside the closed set five times dead-letters the item."""
    conn = vault.conn
    items = usql.tier4_due(conn, NOW, 10)
    assert items, "the sample leaves unresolved mentions with candidates"
    first = items[0]
    cfg = llm_config(llm_server)
    llm_server.script_chat("Sure! The answer is c1.", "It is c1, I think.")  # the answer and its one repair
    c = run_tier4_queue(conn, cfg, now=NOW, mode="live", limit=1)
    assert c["tier4_failed"] == 1
    row = next(i for i in usql.tier4_due(conn, "2999-01-01T00:00:00.000Z", 50) if i["queue_item_id"] == first["queue_item_id"])
    assert row["status"] == "failed" and row["retry_count"] == 1 and row["last_error_code"] == "failed_parse"
    later = "2999-01-01T00:00:00.000Z"
    pick = next((c for c in first["candidate_set"] if c["node_id"] != first["source_node_id"]),
                first["candidate_set"][0])
    llm_server.script_chat({"mention_id": first["mention_id"], "matched_candidate_id": pick["candidate_id"],
                            "confidence": 0.9, "relation_type": "collaborated_with", "schema_version": 1})
    c = run_tier4_queue(conn, cfg, now=later, mode="live", limit=1)
    assert c["tier4_resolved"] == 1
    m = usql.get_mention(conn, first["mention_id"])
    assert m["resolved_node_id"] == pick["node_id"] and m["resolution_method"] == "llm_closed_set"
    # every attempt is in the model layer's log, under the versioned prompt
    calls = conn.execute("SELECT prompt_version FROM llm_extraction_calls WHERE run_id=?",
                         (c["llm_run_id"],)).fetchall()
    assert calls and all(r[0].startswith("tier4_resolution@v1#") for r in calls)
    # the observation is scanned again on the next run, and the span now counts as that node's mention
    assert vault.backlinks(as_of=AS_OF).counts["observations_scanned"] == 1
    again = conn.execute("SELECT count(*) FROM mention_observations_derived WHERE observation_id=? AND "
                         "start_offset=? AND resolved_node_id=? AND resolution_method='llm_closed_set'",
                         (m["observation_id"], m["start_offset"], m["resolved_node_id"])).fetchone()[0]
    assert again >= (2 if pick["node_id"] != first["source_node_id"] else 1)
    # a candidate outside the closed set is a parse failure; five failures dead-letter the item
    if len(items) > 1:
        left = [i["queue_item_id"] for i in items[1:]]
        llm_server.default_chat = lambda body: {"matched_candidate_id": "c99", "confidence": 0.9}
        for i in range(5):  # each round after the retry delay; every answer is outside the closed set
            run_tier4_queue(conn, cfg, now=f"2999-01-0{i + 2}T00:00:00.000Z", mode="live", limit=50)
        assert usql.tier4_status(conn).get("dead_letter") == len(left)
        assert not usql.tier4_due(conn, "3999-01-01T00:00:00.000Z", 50)  # dead letters are not reprocessed
        prompt = llm_server.chat_requests[-1]["body"]["messages"][-1]["content"]
        assert "CANDIDATES:" in prompt and "Return strict JSON only." in prompt
    with pytest.raises(ValidationError):
        Tier4Result.model_validate({"matched_candidate_id": "none", "confidence": 2})
    with pytest.raises(ValidationError):
        Tier4Result.model_validate({"matched_candidate_id": "none", "confidence": 0.5, "note": "extra key"})


def test_tier4_answers_replay_without_the_network(vault, llm_server, llm_config):
    conn = vault.conn
    first = usql.tier4_due(conn, NOW, 1)[0]
    cfg = llm_config(llm_server)
    llm_server.script_chat({"matched_candidate_id": "c1", "confidence": 0.8})
    live = run_tier4_queue(conn, cfg, now=NOW, mode="live", limit=1)
    assert live["tier4_resolved"] == 1
    node = usql.get_mention(conn, first["mention_id"])["resolved_node_id"]
    # put the item back as it was and ask again from the log: same answer, no request
    usql.update_tier4(conn, first["queue_item_id"], status="queued", retry_count=0)
    conn.execute("UPDATE mention_observations_derived SET resolved_node_id=NULL, resolution_method='unresolved' "
                 "WHERE mention_id=?", (first["mention_id"],))
    sent = len(llm_server.chat_requests)
    replay = run_tier4_queue(conn, cfg, now=NOW, mode="replay", limit=1)
    assert replay["tier4_resolved"] == 1 and len(llm_server.chat_requests) == sent
    assert usql.get_mention(conn, first["mention_id"])["resolved_node_id"] == node
    with pytest.raises(ValueError, match="needs a model"):
        run_tier4_queue(conn, cfg, now=NOW, mode="none")


def _sweep(vault, llm_config, llm_server, mode: str, max_sync: int, answer: str = "c1"):
    from kenning.llm.client import LLMClient, LLMRun
    from kenning.store.connection import write_scope
    from kenning.upkeep.promotion import BacklinkRun

    cfg = llm_config(llm_server, extra={"backlinks": {"llm_resolution_mode": mode,
                                                      "llm_max_unresolved_for_sync": max_sync}})
    llm_server.default_chat = lambda body: {"matched_candidate_id": answer, "confidence": 0.7}
    queued = sum(usql.tier4_status(vault.conn).values())
    with write_scope(vault.conn):
        run = LLMRun(vault.conn, cfg, name="tier4_resolution", mode="live", clock=Clock(NOW))
        with LLMClient(cfg, vault.conn, run) as llm:
            counts = BacklinkRun(vault.conn, cfg, Clock(NOW), sweep=True, llm=llm, llm_local=True).run()
        run.finish()
    return counts, sum(usql.tier4_status(vault.conn).values()) - queued


def test_tier4_synchronous_mode_asks_inline_and_queues_nothing(vault, llm_server, llm_config):
    conn = vault.conn
    conn.execute("DELETE FROM backlink_tier4_queue")  # a vault that never queued (synchronous from the start)
    counts, new_items = _sweep(vault, llm_config, llm_server, "synchronous", 5)
    assert counts["tier4_sync_asked"] > 0 and counts["tier4_sync_resolved"] == counts["tier4_sync_asked"]
    assert new_items == 0  # §42A.2.11: synchronous = no queue
    assert len(llm_server.chat_requests) == counts["tier4_sync_asked"]
    resolved = conn.execute("SELECT count(*) FROM mention_observations_derived WHERE "
                            "resolution_method='llm_closed_set'").fetchone()[0]
    assert resolved > 0


def test_tier4_both_mode_asks_the_top_n_and_queues_the_rest(vault, llm_server, llm_config):
    """both: inline for the top N of a message, the rest (and every inline failure) to the queue. Every answer
    here is outside the closed set, so each span asked inline lands in the queue too."""
    conn = vault.conn
    conn.execute("DELETE FROM backlink_tier4_queue")
    counts, new_items = _sweep(vault, llm_config, llm_server, "both", 1, answer="c99")
    per_message = conn.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM llm_extraction_calls c JOIN "
                               "llm_extraction_runs r ON r.run_id=c.run_id WHERE r.name='tier4_resolution' "
                               "GROUP BY c.message_id)").fetchone()[0]
    assert counts["tier4_sync_asked"] > 0 and per_message == 1  # at most N=1 asked inline per message
    assert counts["tier4_sync_failed"] == counts["tier4_sync_asked"]
    assert new_items >= counts["tier4_sync_failed"]  # the failures wait in the queue


def test_sync_allowed_follows_the_seeds_modes():
    assert sync_allowed("nightly", 3, 5) == (0, True)
    assert sync_allowed("synchronous", 3, 5) == (3, False)
    assert sync_allowed("synchronous", 6, 5) == (0, False)  # over the bound: not asked, not queued
    assert sync_allowed("both", 6, 5) == (5, True)


def test_tier5_gates_and_daily_cap(vault):
    conn, cfg = vault.conn, vault.config
    base = dict(source_node_id="s", resolved_node_id=None, state="observed_mention", visibility_class="cloud_allowed",
                work_context_id="c", occurred_at=AS_OF, is_nested=0, relation_hypothesis=None,
                resolution_method="unresolved", resolution_confidence=0, graph_context_score=0,
                suppression_reason=None, context_window="", polarity="support", evidence_bundle_id=None,
                parent_mention_id=None, start_offset=0, end_offset=5)
    rows = []
    for name, cls, obs_surfaces in [("Zorblax Industries", "organization_name", [("o1", "a"), ("o2", "b")]),
                                    ("Quux Labs", "organization_name", [("o1", "a"), ("o2", "a")]),  # one surface
                                    ("NASA", "organization_name", [("o1", "a"), ("o2", "b")]),     # ALL CAPS < 5
                                    ("the draft", "generic_document_reference", [("o1", "a"), ("o2", "b")]),
                                    ("Plonk Ltd", "organization_name", [("o1", "a")])]:            # one observation
        for o, s in obs_surfaces:
            rows.append(dict(base, mention_id=f"{name}|{o}|{s}", observation_id=o, surface=s, span_class=cls,
                             normalized_mention=name.lower(), mention_text=name, group_id=f"{name}|{o}"))
    usql.insert_mentions(conn, rows)
    conn.execute("DELETE FROM entity_creation_candidates")
    assert tier5_candidates(conn, cfg, "2030-01-01T00:00:00.000Z") >= 1
    names = {c["suggested_canonical_name"] for c in usql.pending_candidates(conn)}
    assert "Zorblax Industries" in names
    assert not names & {"Quux Labs", "NASA", "the draft", "Plonk Ltd"}
    # the daily cap: with a cap of 0 left nothing more is added that day
    capped = cfg.model_copy(update={"backlinks": cfg.backlinks.model_copy(update={
        "entity_creation": cfg.backlinks.entity_creation.model_copy(update={"daily_candidate_queue_cap": 1})})})
    conn.execute("DELETE FROM entity_creation_candidates")
    rows2 = [dict(r, mention_id=r["mention_id"] + "x", normalized_mention="wibble corp", mention_text="Wibble Corp",
                  group_id=r["group_id"] + "x") for r in rows if r["mention_text"] == "Zorblax Industries"]
    usql.insert_mentions(conn, rows2)
    assert tier5_candidates(conn, capped, "2030-01-02T00:00:00.000Z") == 1
    assert tier5_candidates(conn, capped, "2030-01-02T00:00:00.000Z") == 0


def test_tier5_candidate_resolution(vault):
    conn = vault.conn
    base = dict(source_node_id="s", resolved_node_id=None, state="observed_mention", visibility_class="cloud_allowed",
                work_context_id="c", occurred_at=AS_OF, is_nested=0, relation_hypothesis=None,
                resolution_method="unresolved", resolution_confidence=0, graph_context_score=0,
                suppression_reason=None, context_window="", polarity="support", evidence_bundle_id=None,
                parent_mention_id=None, start_offset=0, end_offset=5, span_class="organization_name")
    rows = []
    for name in ("Zorblax Industries", "Globex"):  # Globex is a node already: create_new becomes link_existing
        for o, s in (("o1", "a"), ("o2", "b")):
            rows.append(dict(base, mention_id=f"{name}{o}", observation_id=o, surface=s, mention_text=name,
                             normalized_mention=name.lower(), group_id=f"{name}{o}"))
    conn.execute("DELETE FROM mention_observations_derived WHERE normalized_mention='globex'")
    usql.insert_mentions(conn, rows)
    conn.execute("DELETE FROM entity_creation_candidates")
    tier5_candidates(conn, vault.config, NOW)
    cands = {c["suggested_canonical_name"]: c for c in usql.pending_candidates(conn)}
    assert {"Zorblax Industries", "Globex"} <= set(cands)
    res = vault.review("entity", cands["Zorblax Industries"]["candidate_id"], resolution="create_new", as_of=AS_OF)
    assert res["created"]
    (node,) = [n for n in res["node_ids"]]
    assert usql.node_facts(conn, [node])[node]["canonical_name"] == "Zorblax Industries"
    assert {r[0] for r in conn.execute("SELECT resolved_node_id FROM mention_observations_derived WHERE "
                                       "normalized_mention='zorblax industries'")} == {node}
    globex = vault.review("entity", cands["Globex"]["candidate_id"][:10], resolution="create_new", as_of=AS_OF)
    prov = [p for p in usql.review_provenance(conn) if p["source_metadata"].get("candidate_id") ==
            cands["Globex"]["candidate_id"]]
    assert globex["created"] and prov[0]["source_metadata"]["action"] == "link_existing"
    assert not usql.pending_candidates(conn) or all(
        c["suggested_canonical_name"] not in ("Globex", "Zorblax Industries") for c in usql.pending_candidates(conn))


def test_vector_passes_use_the_nodes_space(vault):
    """Pass C and Tier 3.5 on the real vector index (hash embedder): a span Tiers 1–2 cannot place is compared with
    node vectors; under the seed's thresholds (≥ .82 and context ≥ .4) it is not accepted and its vector candidates
    go to Tier 4; with the thresholds at 0 the best one is accepted as vec_coreference."""
    from kenning.knowledge.vectors import embed_nodes
    from kenning.llm.index import VectorIndex
    from kenning.upkeep.mentions import Span

    conn, config = vault.conn, vault.config
    assert embed_nodes(conn, config, Clock.from_option(AS_OF))["node_vectors_written"] > 0
    idx = VectorIndex(conn, config, clock=Clock.from_option(AS_OF))
    text = "We argued with the client about the Globex invoice for the Paris office."
    span = Span(text.index("the client"), text.index("the client") + 10, "the client", "definite_description",
                "pattern")
    ctx = Context("o", None, "chatgpt:user", NOW)
    strict = Resolver(conn, config, NOW, vectors=idx).resolve(span, text, ctx)
    assert strict["node_id"] is None and strict["candidates"]
    assert all(c["method"] == "vec_coreference" for c in strict["candidates"])
    loose_cfg = config.model_copy(update={"backlinks": config.backlinks.model_copy(update={
        "coreference_min_similarity": 0.0, "coreference_min_graph_context": 0.0})})
    loose = Resolver(conn, loose_cfg, NOW, vectors=idx).resolve(span, text, ctx)
    assert loose["method"] == "vec_coreference" and loose["node_id"] == strict["candidates"][0]["node_id"]
    w = config.backlinks.raw_weight["vec_coreference"]
    best = strict["candidates"][0]
    assert best["score"] == pytest.approx(best["raw"] * w + best["graph_context"] * (1 - w), abs=1e-5)


def test_tier4_local_only_items_stay_off_remote_models(vault):
    conn = vault.conn
    (item,) = usql.tier4_due(conn, NOW, 1)
    usql.update_tier4(conn, item["queue_item_id"], execution_requirement="same_machine_local_only")

    class NeverAsked:
        def structured(self, *a, **k):
            raise AssertionError("a local-only item reached a remote model")

    counts = process_tier4(conn, vault.config, NOW, NeverAsked(), limit=1, local=False)
    assert counts["tier4_kept_local"] == 1
    assert usql.tier4_due(conn, NOW, 1)[0]["status"] == "queued"


def test_cli_review_tier4_through_the_model_layer(vault, llm_server):
    """`kenning review tier4` as a user runs it: live against the endpoint, then --llm none is refused clearly."""
    from tests.conftest import TEST_KEY, run_cli

    vault.conn.execute("PRAGMA wal_checkpoint")
    env = {"KENNING_LLM_BASE_URL": llm_server.base_url, "KENNING_LLM_MODEL": "kenning-test-model",
           "KENNING_LLM_API_KEY": TEST_KEY}
    llm_server.default_chat = lambda body: {"matched_candidate_id": "none", "confidence": 0.6}
    out = json.loads(run_cli("review", "tier4", "--llm", "live", "--limit", "2", "--as-of", AS_OF, "--json",
                             db=vault.path, env=env).stdout)
    assert out["tier4_none"] == 2 and out["llm_run_id"] and len(llm_server.chat_requests) == 2
    assert TEST_KEY not in (vault.path.read_bytes().decode("latin-1"))  # the key is never stored
    bad = run_cli("review", "tier4", "--llm", "none", db=vault.path, check=False)
    assert bad.returncode == 2 and "needs a model" in bad.stdout + bad.stderr
