"""Copies of forgotten text outside the per-message rows: model-call logs (P11) and entity names (P7). A model call
goes by its message or when its request quotes a forgotten sentence; a surviving entity drops nicknames only
forgotten messages used."""

from __future__ import annotations

import json

from exportkit import conversation, write_export
from kenning.api import Vault
from kenning.forget import forget

SECRET = "The vault code for the old boathouse is seven four one"
AS_OF = "2024-12-31T00:00:00Z"


def _call(conn, call_id: str, message_id: str | None, prompt: str) -> None:
    conn.execute("INSERT OR IGNORE INTO llm_extraction_runs(run_id, model_name, config_json, started_at_utc, name, "
                 "mode, status) VALUES ('lr1', 'm', '{}', ?, 'test', 'replay', 'ok')", (AS_OF,))
    request = json.dumps({"messages": [{"role": "user", "content": prompt}]}, ensure_ascii=False)
    conn.execute("INSERT INTO llm_extraction_calls(call_id, run_id, message_id, request_json, call_timestamp_utc, "
                 "retry_count, parse_success, raw_io_json, prompt_name, prompt_version, schema_name, model, "
                 "attempt_kind, request_sha256, mode) VALUES (?, 'lr1', ?, ?, ?, 0, 1, '{}', 'p', 'v1', 's', 'm', "
                 "'initial', 'x', 'replay')", (call_id, message_id, request, AS_OF))


def test_model_calls_quoting_forgotten_text_go(tmp_path):
    export = write_export(tmp_path / "e.json", [
        conversation("c-secret", [("user", f"{SECRET}. Please remember it."), ("assistant", "Noted.")],
                     title="Boathouse"),
        conversation("c-other", [("user", "I bought a green bicycle today."), ("assistant", "Nice!")],
                     title="Bike")])
    db = tmp_path / "v.db"
    with Vault.open(db, overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([export], as_of=AS_OF, stages="0,1")
        mid = {t: m for t, m in v.conn.execute("SELECT c.title, m.message_id FROM messages m JOIN conversations c "
                                                 "USING (conversation_id) WHERE m.role = 'user'")}
        _call(v.conn, "by-id", mid["Boathouse"], "anything")
        _call(v.conn, "by-text", None, f"Batch:\n1. {SECRET}.\n2. something else entirely")
        _call(v.conn, "other", mid["Bike"], "I bought a green bicycle today.")
        report = forget(v.conn, v.config, "conversation", "Boathouse", apply=True)
        left = [r for (r,) in v.conn.execute("SELECT call_id FROM llm_extraction_calls ORDER BY 1")]
    assert report.removed["llm_extraction_calls"] == 2 and left == ["other"]
    assert b"boathouse" not in db.read_bytes().lower()


def test_a_surviving_entity_drops_names_only_forgotten_messages_used(tmp_path):
    export = write_export(tmp_path / "e.json", [
        conversation("c-a", [("user", "My sister Anna lives in Moscow."), ("assistant", "Nice.")],
                     title="Lunch"),
        conversation("c-b", [("user", "My sister Anna called me today."), ("assistant", "Oh?")],
                     title="Call")])
    db = tmp_path / "v.db"
    with Vault.open(db, overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([export], as_of=AS_OF, stages="0-3")
        conn = v.conn
        eid = conn.execute("SELECT entity_id FROM entities WHERE canonical_name = 'Anna'").fetchone()[0]
        mine = conn.execute("SELECT m.mention_id FROM entity_mentions m JOIN messages g USING (message_id) JOIN "
                            "conversations c USING (conversation_id) WHERE m.entity_id=? AND c.title='Lunch'",
                            (eid,)).fetchone()[0]
        # as if the forgotten conversation had called her by a nickname stage 3 merged in
        conn.execute("UPDATE entity_mentions SET surface_text='Annushka' WHERE mention_id=?", (mine,))
        conn.execute("UPDATE entities SET aliases_json='[\"Anna\", \"Annushka\"]' WHERE entity_id=?", (eid,))
        v.ingest([export], as_of=AS_OF, stages="index")        # the entity's search document now holds it too
        assert conn.execute("SELECT count(*) FROM search_entity_names WHERE name_norm='annushka'").fetchone()[0]
        named = lambda: [h for h in v.search("Annushka", k=3, kinds=["entity"]).hits  # noqa: E731
                         if "annushka" in json.dumps(h, default=str).lower()]
        assert named()
        report = forget(v.conn, v.config, "conversation", "Lunch", apply=True)
        assert not named()
        v.ingest([export], as_of=AS_OF, stages="index")        # the next index run re-makes her document
        assert conn.execute("SELECT count(*) FROM search_docs WHERE doc_kind='entity' AND doc_id=?",
                            (eid,)).fetchone()[0] == 1 and not named()
        aliases = conn.execute("SELECT aliases_json FROM entities WHERE entity_id=?", (eid,)).fetchone()[0]
        names = conn.execute("SELECT count(*) FROM search_entity_names WHERE name_norm='annushka'").fetchone()[0]
    assert report.redacted["entities"] == 1 and json.loads(aliases) == ["Anna"] and names == 0
    assert b"annushka" not in db.read_bytes().lower() and b"moscow" not in db.read_bytes().lower()


def test_a_transcript_session_is_forgotten_and_stays_out(tmp_path, transcript_file):
    db = tmp_path / "t.db"
    with Vault.open(db, overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([transcript_file], as_of=AS_OF, self_name="Ana")
        report = v.forget("matching", "turtle named Shelly", apply=True)
        assert len(report.conversations) == 1 and report.removed.get("transcript_participants", 0) >= 1
        assert not [h for h in v.search("turtle Shelly", k=5).hits if "shelly" in (h["text"] or "").lower()]
        assert [h for h in v.search("violin", k=5).hits if "violin" in (h["text"] or "").lower()]   # others stay
        # a newer copy of the transcript (one more session) brings the new session, not the forgotten one
        doc = json.loads(transcript_file.read_text())
        doc["sessions"].append({"id": "s4", "started_at": "2023-10-01T10:00:00Z", "turns": [
            {"id": "t1", "speaker": "Ben", "text": "The violin recital went well."}]})
        newer = tmp_path / "chat2.json"
        newer.write_text(json.dumps(doc), encoding="utf-8")
        [raw] = [r for r in v.ingest([newer], as_of=AS_OF, self_name="Ana", stages="0,1") if r.stage == "1"]
        assert raw.counts["conversations_forgotten_skipped"] == 1
    assert b"shelly" not in db.read_bytes().lower()
