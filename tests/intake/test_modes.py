"""Issue 18 part 2: incognito per import, per conversation (rule or title pattern) — nothing derived is left in the
knowledge graph or a context packet, including when the mode is turned on after ingest; episodic content is never
auto-promoted."""

from __future__ import annotations

import pytest

from kenning.api import Vault
from kenning.intake import extractors as seam
from kenning.intake.modes import incognito_message_ids
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import run_stage
from kenning.pipeline.stages import SIDE_STAGES
from kenning.retrieve.context import build_context
from kenning.store import intake as isql
from tests.intake.helpers import AS_OF, HASH, STAGES as RUN, remember_extractor, two_conversations


@pytest.fixture(autouse=True)
def with_test_extractor(monkeypatch):
    monkeypatch.setattr(seam, "registered", lambda: {"test_remember": remember_extractor})


def shown_ids(packet) -> set[str]:
    return {it["id"] for items in packet.sections.values() for it in items if "id" in it}


def secret_ids(v: Vault) -> set[str]:
    cid = v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                         ).fetchone()[0]
    return {r[0] for r in v.conn.execute("SELECT message_id FROM messages WHERE conversation_id=?", (cid,))}


def active_nodes_citing(v: Vault, msgs: set[str]) -> list[tuple]:
    q = ",".join("?" * len(msgs))
    return v.conn.execute(f"SELECT DISTINCT n.id, n.node_kind, n.canonical_name FROM nodes n "
                          f"JOIN provenance_entries p ON p.node_id=n.id WHERE n.is_active=1 "
                          f"AND p.message_id IN ({q})", tuple(sorted(msgs))).fetchall()


def only_incognito_active(v: Vault, msgs: set[str]) -> list[str]:
    """Active nodes all of whose message provenance is incognito: must be none."""
    out = []
    for nid, _k, _n in active_nodes_citing(v, msgs):
        cited = [r[0] for r in v.conn.execute("SELECT message_id FROM provenance_entries WHERE node_id=?", (nid,))]
        if all(m in msgs for m in cited):
            out.append(nid)
    return out


def test_ingest_incognito_derives_nothing(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN, incognito=True)
        msgs = secret_ids(v)
        assert msgs and msgs <= incognito_message_ids(v.conn, v.config)
        assert active_nodes_citing(v, msgs) == []
        decs = isql.decisions(v.conn)
        assert decs and {d["decision"] for d in decs} == {"skip"}
        assert {tuple(d["reason_codes"]) for d in decs} == {("incognito_mode",)}
        assert {d["persistence_mode"] for d in decs} == {"accessible_only"}
        assert isql.queue_rows(v.conn, limit=100) == []
        # the skip audit keeps no fingerprint or names of incognito content
        assert v.conn.execute("SELECT COUNT(*) FROM extraction_audit WHERE skip_content_fingerprint IS NOT NULL "
                              "OR skip_entity_mentions <> '[]'").fetchone()[0] == 0
        # raw only (the default): the words are still there to find, never learned from
        assert v.conn.execute("SELECT COUNT(*) FROM messages WHERE text_raw LIKE '%paper notebook%'"
                              ).fetchone()[0] == 1
    finally:
        v.close()


def test_title_pattern_in_config_makes_a_conversation_incognito(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"incognito": {"title_patterns": ["^private"]}}})
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN)
        msgs = secret_ids(v)
        assert active_nodes_citing(v, msgs) == []
        plans = [d for d in isql.decisions(v.conn) if d["decision"] != "skip"]
        assert plans  # the other conversation is learned from as usual
    finally:
        v.close()


def test_turning_incognito_on_later_removes_what_was_derived(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN)
        msgs = secret_ids(v)
        derived = only_incognito_active(v, msgs)
        kinds = {k for _i, k, _n in active_nodes_citing(v, msgs)}
        assert derived and "memory_directive" in kinds  # the bridge and the test extractor learned from it
        shown = shown_ids(build_context(v.conn, v.config, "paper notebook journal", now=AS_OF))
        before_commits = v.conn.execute("SELECT COUNT(*) FROM knowledge_commits").fetchone()[0]
        mixed = {n for n, _k, _c in active_nodes_citing(v, msgs)} - set(derived)
        assert mixed  # Anna and Lisbon are known from the other conversation too
        cid = v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                             ).fetchone()[0]
        res = run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option("2024-06-02T00:00:00Z"),
                        inputs={"set": [("conversation", cid)]})
        assert res.counts["nodes_retracted"] == len(derived)
        assert res.counts["provenance_withdrawn"] >= len(mixed)
        assert active_nodes_citing(v, msgs) == []  # not a trace of it left on any active node
        commits = v.conn.execute("SELECT COUNT(*) FROM knowledge_commits WHERE source_event='intake.incognito'"
                                 ).fetchone()[0]
        assert commits == len(derived) + len(mixed)
        assert v.conn.execute("SELECT COUNT(*) FROM knowledge_commits").fetchone()[0] == before_commits + commits
        shown_after = shown_ids(build_context(v.conn, v.config, "paper notebook journal", now=AS_OF))
        assert shown & set(derived)  # the packet showed what the conversation taught ...
        assert not (shown_after & set(derived))  # ... and shows none of it now
        # re-running the pipeline learns nothing from it again
        v.ingest([tmp_path / "conversations.json"], as_of="2024-06-03T00:00:00Z", stages="knowledge,intake,extract")
        assert active_nodes_citing(v, msgs) == []
        again = run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option("2024-06-04T00:00:00Z"),
                          inputs={"set": [("conversation", cid)]})
        assert again.counts["nodes_retracted"] == 0 and again.counts["rules_set"] == 0
    finally:
        v.close()


def test_context_packet_filters_incognito_only_nodes_even_before_a_purge(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN)
        msgs = secret_ids(v)
        derived = set(only_incognito_active(v, msgs))
        cid = v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                             ).fetchone()[0]
        # the rule alone (no purge run): reads already hide what only incognito content says
        before = shown_ids(build_context(v.conn, v.config, "paper notebook journal therapist", now=AS_OF))
        assert before & derived
        run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option(AS_OF),
                  inputs={"set": [("conversation", cid)], "purge": False})
        shown = shown_ids(build_context(v.conn, v.config, "paper notebook journal therapist", now=AS_OF))
        assert not (shown & derived)
    finally:
        v.close()


def test_keep_drop_removes_the_raw_text_too(tmp_path):
    from kenning.retrieve.search import Searcher

    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"incognito": {"keep": "drop"}}})
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN + ",index", incognito=True)
        hits = Searcher(v.conn, v.config).search("paper notebook", now="2024-06-01").hits
        assert not [h for h in hits if "notebook" in (h.get("text") or "")]
        assert v.conn.execute("SELECT COUNT(*) FROM messages WHERE text_raw LIKE '%paper notebook%'"
                              ).fetchone()[0] == 0
        assert v.conn.execute("SELECT COUNT(*) FROM conversations_raw WHERE raw_conversation_json LIKE "
                              "'%paper notebook%'").fetchone()[0] == 0
    finally:
        v.close()


def tables_holding(v: Vault, needles: tuple[str, ...]) -> dict[str, int]:
    """Rows per table (every real table, the node store and its history included) whose text holds a needle."""
    found: dict[str, int] = {}
    for (t,) in v.conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql NOT LIKE '%VIRTUAL%'"
                               ).fetchall():
        for row in v.conn.execute(f'SELECT * FROM "{t}"'):
            text = " ".join(x if isinstance(x, str) else x.decode("utf-8", "replace") for x in row
                            if isinstance(x, (str, bytes)))
            if any(n in text for n in needles):
                found[t] = found.get(t, 0) + 1
    return found


def test_keep_drop_turned_on_later_leaves_no_text_in_the_node_store_or_its_history(tmp_path):
    """I171: with `keep: drop`, the mode turned on after mining leaves none of the conversation's words anywhere —
    not in a retracted node's name, a provenance quote or a commit's patch — while other content's nodes stay."""
    secret = ("paper notebook", "Dr Vale", "journal every evening")
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"incognito": {"keep": "drop"}}})
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN + ",threads,index")
        msgs = secret_ids(v)
        mixed = {n for n, _k, _c in active_nodes_citing(v, msgs)} - set(only_incognito_active(v, msgs))
        before = tables_holding(v, secret)
        assert {"nodes", "provenance_entries", "knowledge_commit_mutations", "messages"} <= set(before), before
        cid = v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                             ).fetchone()[0]
        res = run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option("2024-06-02T00:00:00Z"),
                        inputs={"set": [("conversation", cid)]})
        assert res.counts["nodes_deleted"] >= 1 and res.counts["messages_dropped"] == len(msgs)
        assert tables_holding(v, secret) == {}
        assert active_nodes_citing(v, msgs) == []
        assert mixed and all(v.conn.execute("SELECT is_active FROM nodes WHERE id=?", (n,)).fetchone()[0]
                             for n in mixed)       # Anna and Lisbon, known from the other conversation, stay
        v.ingest([tmp_path / "conversations.json"], as_of="2024-06-03T00:00:00Z", stages=RUN)
        assert tables_holding(v, secret) == {} and active_nodes_citing(v, msgs) == []
    finally:
        v.close()


def test_episodic_content_is_never_auto_promoted(tmp_path, monkeypatch):
    from kenning.knowledge.ops import CreateNode, KnowledgeWrite
    from kenning.knowledge.writer import KnowledgeWriter
    from kenning.knowledge.contracts import EXAMPLE_PAYLOADS

    def promoter(ctx, obs):
        res = seam.ExtractionResult("promoter")
        if obs.unit_kind == "conversation":
            out = KnowledgeWriter(ctx.conn, ctx.config, clock=Clock(ctx.now)).write(KnowledgeWrite(
                source_event="test.promote", change_summary="a goal from a whole conversation",
                ops=[CreateNode(node_kind="goal", canonical_name=f"goal of {obs.conversation_id}",
                                payload=EXAMPLE_PAYLOADS["goal"])]))
            res.commit_ids.append(out.commit_id)
        return res

    monkeypatch.setattr(seam, "registered", lambda: {"promoter": promoter})
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        results = v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=RUN)
        extract = next(r for r in results if r.stage == "extract")
        assert extract.counts["episodic_promotions_blocked"] == 2
        assert v.conn.execute("SELECT COUNT(*) FROM knowledge_commits WHERE source_event='test.promote'"
                              ).fetchone()[0] == 0
        assert v.conn.execute("SELECT COUNT(*) FROM extraction_audit WHERE skip_reason LIKE "
                              "'%episodic_not_promoted%'").fetchone()[0] == 2
    finally:
        v.close()


def test_clearing_the_mode_lets_the_conversation_be_learned_from_again(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    export = two_conversations(tmp_path)
    try:
        v.ingest([export], as_of=AS_OF, stages="0,1")
        cid = v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                             ).fetchone()[0]
        run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option(AS_OF),
                  inputs={"set": [("conversation", cid)]})
        v.ingest([export], as_of=AS_OF, stages="2A,2B,3,4,5,knowledge,intake,extract")
        secret = [d for d in isql.decisions(v.conn) if d["conversation_id"] == cid]
        assert secret and {tuple(d["reason_codes"]) for d in secret} == {("incognito_mode",)}
        assert active_nodes_citing(v, secret_ids(v)) == []
        res = run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option(AS_OF),
                        inputs={"clear": [("conversation", cid)], "purge": False})
        assert res.counts["rules_cleared"] == 1 and res.counts["observations_reopened"] == len(secret)
        v.ingest([export], as_of="2024-06-02T00:00:00Z", stages="knowledge,intake,extract")
        again = [d for d in isql.decisions(v.conn) if d["conversation_id"] == cid]
        assert len(again) == len(secret) and "incognito_mode" not in {c for d in again for c in d["reason_codes"]}
        assert active_nodes_citing(v, secret_ids(v))  # learned from now
    finally:
        v.close()


def test_cli_ingest_incognito(tmp_path):
    from tests.conftest import run_cli
    import json

    db = tmp_path / "v.db"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n", encoding="utf-8")
    export = two_conversations(tmp_path)
    out = json.loads(run_cli("ingest", str(export), "--incognito", "--as-of", AS_OF, "--stages", RUN, "--json",
                             "--config", str(cfg), db=db).stdout)
    assert out["runs"][0]["stage"] == "intake-mode" and out["runs"][0]["counts"]["rules_set"] == 1
    shown = json.loads(run_cli("mode", "show", "--json", "--config", str(cfg), db=db).stdout)
    assert len(shown["incognito_conversations"]) == 2 and shown["rules"][0]["scope"] == "source"
    assert {b for c in shown["incognito_conversations"] for b in c["basis"]} == {"import"}
    q = json.loads(run_cli("queue", "--json", "--config", str(cfg), db=db).stdout)
    assert q["by_status"] == {} and list(q["decisions"]) == ["skip:incognito_mode"]


def test_ingest_incognito_of_a_zip_export(tmp_path):
    import zipfile

    src = two_conversations(tmp_path)
    z = tmp_path / "export.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.write(src, "conversations.json")
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([z], as_of=AS_OF, stages=RUN, incognito=True)
        assert v.conn.execute("SELECT path FROM sources").fetchone()[0].endswith("export.zip!conversations.json")
        every = {r[0] for r in v.conn.execute("SELECT message_id FROM messages")}
        assert every and incognito_message_ids(v.conn, v.config) == every
        assert {tuple(d["reason_codes"]) for d in isql.decisions(v.conn)} == {("incognito_mode",)}
    finally:
        v.close()


def test_drop_after_indexing_takes_the_words_out_of_search(tmp_path):
    from kenning.retrieve.search import Searcher

    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"incognito": {"keep": "drop"}}})
    export = two_conversations(tmp_path)
    try:
        v.ingest([export], as_of=AS_OF, stages=RUN + ",index")

        def found() -> list:
            hits = Searcher(v.conn, v.config).search("paper notebook", now="2024-06-01").hits
            return [h for h in hits if "notebook" in (h.get("text") or "")]

        assert found()
        cid = v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                             ).fetchone()[0]
        res = run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option("2024-06-02T00:00:00Z"),
                        inputs={"set": [("conversation", cid)]})
        assert res.counts["messages_dropped"] == len(secret_ids(v))
        v.ingest([export], as_of="2024-06-02T00:00:00Z", stages="index")
        assert found() == []
    finally:
        v.close()


def test_a_source_folder_in_config_is_incognito(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    export = two_conversations(private)
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"incognito": {"folders": [str(private)]}}})
    try:
        v.ingest([export], as_of=AS_OF, stages=RUN)
        from kenning.intake.modes import incognito_conversations

        found = incognito_conversations(v.conn, v.config)
        assert len(found.basis) == 2 and {b for s in found.basis.values() for b in s} == {"folder"}
        assert {tuple(d["reason_codes"]) for d in isql.decisions(v.conn)} == {("incognito_mode",)}
        snap = v.conn.execute("SELECT memory_mode_snapshot FROM intake_observations LIMIT 1").fetchone()[0]
        assert '"mode":"incognito"' in snap and '"basis":["folder"]' in snap
    finally:
        v.close()
