"""The DOC72 node store forgets through the single writer (decision P6): a node whose only evidence was the
forgotten conversation goes with its edges; a node with other evidence loses those provenance entries and its
confidence is recomputed — one commit in the history. The history and the exported event log keep no forgotten
text, and replaying the rewritten log gives exactly the store as it is after the forget."""

from __future__ import annotations

from exportkit import conversation, write_export
from kenning.api import Vault
from kenning.forget import forget
from kenning.knowledge import eventlog
from kenning.knowledge.ops import CreateEdge, CreateNode, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store.connection import open_store

AS_OF = "2024-12-31T00:00:00Z"
SECRET = "I secretly adore the quince orchard"
KEPT = "The quince orchard is open on Sundays"


def _prov(message_id: str, text: str) -> ProvenanceIn:
    return ProvenanceIn(entry_type="conversation_statement", message_id=message_id, char_start=0,
                        char_end=len(text), verbatim_excerpt=text, evidence_event="learned_from_chat",
                        source_ref=f"message:{message_id}#0-{len(text)}", created_at="2024-01-01T00:00:00.000Z")


def test_nodes_edges_confidence_history_and_log(tmp_path):
    export = write_export(tmp_path / "e.json", [
        conversation("c-secret", [("user", SECRET + "."), ("assistant", "Lovely.")], title="Orchard secret"),
        conversation("c-kept", [("user", KEPT + "."), ("assistant", "Good to know.")], title="Orchard hours")])
    db = tmp_path / "v.db"
    with Vault.open(db, overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([export], as_of=AS_OF, stages="0,1")
        conn, cfg = v.conn, v.config
        mid = {t: m for t, m in conn.execute("SELECT c.title, m.message_id FROM messages m JOIN conversations c "
                                             "USING (conversation_id) WHERE m.role='user'")}
        w = KnowledgeWriter(conn, cfg, clock=Clock("2024-06-01T00:00:00.000Z"))
        orchard = w.write(KnowledgeWrite(source_event="test", change_summary=f"learned: {SECRET}", ops=[
            CreateNode(node_kind="world_entity", canonical_name="Quince orchard", payload={"entity_type": "place"},
                       provenance=(_prov(mid["Orchard secret"], SECRET), _prov(mid["Orchard hours"], KEPT)))])
                         ).node_ids[0]
        secret = w.write(KnowledgeWrite(source_event="test", change_summary="t", ops=[
            CreateNode(node_kind="memory_directive", canonical_name="adores the quince orchard",
                       payload={"memory_type": "preference", "summary": "Adores the quince orchard",
                                "assertion_class": "preference", "applies_when": ["planning weekends"],
                                "scope": "global", "source_certainty": "user_explicitly_stated"},
                       provenance=(_prov(mid["Orchard secret"], SECRET),))])).node_ids[0]
        w.write(KnowledgeWrite(source_event="test", change_summary="t", ops=[
            CreateEdge(source_id=secret, relation_type="related_to", target_id=orchard,
                       start_date="2024-01-01T00:00:00.000Z")]))
        before = ksql.get_node(conn, orchard)
        commits_before = ksql.commit_count(conn)
        log = eventlog.log_path(conn, cfg)
        assert SECRET.encode() in log.read_bytes()
        report = forget(conn, cfg, "conversation", "Orchard secret", apply=True)
        after = ksql.get_node(conn, orchard)
        assert report.knowledge["nodes_deleted"] == 1 and report.knowledge["nodes_changed"] == 1
        assert ksql.get_node(conn, secret) is None and not ksql.edges_of(conn, orchard)
        assert [p["verbatim_excerpt"] for p in ksql.get_provenance(conn, orchard)] == [KEPT]
        assert after["alpha"] < before["alpha"] and after["confidence"] != before["confidence"]
        assert ksql.commit_count(conn) == commits_before + 1            # the forget is one commit
        summaries = [c["change_summary"] for c in ksql.list_commits(conn, after_seq=0, limit=100)]
        assert summaries[-1].startswith("forget:") and not any(SECRET in s for s in summaries)
        store = ksql.dump(conn)
    assert b"quince orchard is open" in db.read_bytes()                # what is kept stays
    for path in (db, log):
        assert SECRET.lower().encode() not in path.read_bytes().lower(), path
    # the rewritten log replays to exactly the store as it is now
    other = open_store(tmp_path / "w.db")
    eventlog.rebuild(other, log)
    rebuilt = ksql.dump(other)
    assert rebuilt["nodes"] == store["nodes"] and rebuilt["provenance_entries"] == store["provenance_entries"]
    assert rebuilt["edges"] == store["edges"] and rebuilt == store
