"""Transcript format: JSON, JSONL, LoCoMo; roles from --self; timestamps; bad input rejected alone."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from kenning.sources.inputs import resolve_export, sniff_kind
from kenning.store.connection import rows, scalar
from tests.conftest import HASH, locomo_dir, run_kenning, transcript_doc


def _messages(v, conv_title_like: str = "%") -> list[dict]:
    return rows(v.conn, "SELECT m.*, c.title, c.source_kind FROM messages m JOIN conversations c USING "
                        "(conversation_id) WHERE c.title LIKE ? ORDER BY c.created_at_utc, m.order_index",
                (conv_title_like,))


def test_json_transcript_into_raw_tables(vault, transcript_file):
    r = vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana", stages="0,1")
    counts = r[-1].counts
    assert counts["conversations_new"] == 3 and counts["turns_imported"] == 7
    ms = _messages(vault)
    assert {m["source_kind"] for m in ms} == {"transcript"}
    first = ms[0]
    assert first["author_name"] == "Ana" and first["role"] == "user" and first["export_message_id"] == "t1"
    # speaker given by id ("ben") or alias ("Annie") is stored under the participant's name
    assert [m["author_name"] for m in ms] == ["Ana", "Ben", "Ana", "Ben", "Ana", "Ben", "Ana"]
    assert [m["role"] for m in ms] == ["user", "unknown", "user", "unknown", "user", "unknown", "user"]
    assert [m["order_index"] for m in ms[:3]] == [0, 1, 2] and ms[1]["tree_path"] == "1" and ms[1]["parent_id"] is None
    # R3: the first turn takes the session start, the next ones the previous turn's time
    assert [m["timestamp_quality"] for m in ms[:3]] == ["imputed_parent", "imputed_prior", "imputed_prior"]
    assert ms[0]["created_at_utc"] == "2023-05-08T13:56:00.000Z"
    # the image is a part with its caption; the turn's text stays the speaker's words
    parts = rows(vault.conn, "SELECT * FROM message_parts_raw WHERE message_id=? ORDER BY part_index", (ms[2]["message_id"],))
    assert [p["part_type"] for p in parts] == ["text", "image"]
    assert parts[1]["text_content"] == "a photo of a blue ceramic bowl" and parts[1]["file_path"].endswith("bowl.jpg")
    assert ms[2]["text_raw"] == "Look at this." and ms[2]["attachment_count"] == 1
    ppl = rows(vault.conn, "SELECT name, aliases_json, is_self FROM transcript_participants WHERE conversation_id=? "
                           "ORDER BY name", (ms[0]["conversation_id"],))
    assert ppl == [{"name": "Ana", "aliases_json": '["Annie"]', "is_self": 1},
                   {"name": "Ben", "aliases_json": "[]", "is_self": 0}]


def test_reimport_is_idempotent_and_self_change_updates_roles(vault, transcript_file):
    vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana", stages="0,1")
    again = vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana", stages="1")[0].counts
    assert again["conversations_unchanged"] == 3 and again.get("conversations_new", 0) == 0
    other = vault.ingest([transcript_file], as_of="2024-01-02T00:00:00Z", self_name="Ben", stages="1")[0].counts
    assert other["conversations_changed"] == 3
    roles = {(m["author_name"], m["role"]) for m in _messages(vault)}
    assert roles == {("Ana", "unknown"), ("Ben", "user")}


def test_ids_are_deterministic(tmp_path, transcript_file):
    from kenning.api import Vault

    ids = []
    for name in ("a.db", "b.db"):
        with Vault.open(tmp_path / name, overrides=HASH) as v:
            v.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana", stages="0,1")
            ids.append([r["message_id"] for r in rows(v.conn, "SELECT message_id FROM messages ORDER BY message_id")])
    assert ids[0] == ids[1] and len(ids[0]) == 7


def test_jsonl_with_bad_lines(vault, tmp_path):
    lines = [
        {"type": "transcript", "transcript_id": "t-1", "participants": ["Ana", "Ben"]},
        {"type": "session", "id": "s1", "started_at": "2023-03-01T10:00:00Z"},
        {"type": "turn", "speaker": "Ana", "text": "Morning!", "at": "2023-03-01T10:00:05Z"},
        "{not json",
        {"type": "turn", "text": "who said this?"},
        {"type": "turn", "speaker": "Ben", "text": "Hi Ana", "at": "yesterday-ish"},
        {"type": "turn", "speaker": "Ben", "text": 42},
        {"type": "mystery"},
        {"type": "turn", "speaker": "Ana", "text": "Coffee?"},
    ]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    assert resolve_export(p).kind == "transcript_jsonl"
    res = vault.ingest([p], as_of="2024-01-01T00:00:00Z", stages="0,1")[-1]
    assert res.counts["turns_imported"] == 3
    texts = [m["text_raw"] for m in _messages(vault)]
    assert texts == ["Morning!", "Hi Ana", "Coffee?"]
    ms = _messages(vault)
    assert ms[0]["timestamp_quality"] == "original"
    assert ms[1]["timestamp_quality"] == "imputed_prior" and ms[1]["created_at_utc"] == "2023-03-01T10:00:05.000Z"
    rj = rows(vault.conn, "SELECT record_index, action, reason_code, message, raw_text FROM rejects ORDER BY record_index")
    got = {(r["record_index"], r["action"], r["reason_code"]) for r in rj}
    assert got == {(3, "skipped", "MALFORMED_JSON"), (4, "skipped", "MISSING_SPEAKER"),
                   (5, "repaired", "BAD_TIMESTAMP"), (6, "skipped", "WRONG_SHAPE"),
                   (7, "skipped", "UNKNOWN_RECORD_TYPE")}
    assert next(r for r in rj if r["record_index"] == 3)["raw_text"] == "{not json"
    # the run's warnings name the file and the line (1-based) and the reason
    msgs = [e[4] for e in res.events]
    assert any(f"{p}: line 4" in m and "not valid JSON" in m for m in msgs)
    assert any("line 5" in m and "speaker" in m for m in msgs)


def test_json_transcript_bad_session_and_whole_file(vault, tmp_path):
    doc = transcript_doc()
    doc["sessions"].insert(1, {"id": "broken", "turns": "nope"})
    doc["sessions"][0]["started_at"] = "not a date"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    counts = vault.ingest([p], as_of="2024-01-01T00:00:00Z", stages="0,1")[-1].counts
    assert counts["conversations_new"] == 3 and counts["rejected"] == 1 and counts["repaired"] == 1
    codes = {r["reason_code"] for r in rows(vault.conn, "SELECT reason_code FROM rejects")}
    assert codes == {"NO_TURNS", "BAD_TIMESTAMP"}
    first = _messages(vault)[0]
    assert first["timestamp_quality"] == "missing" and first["created_at_utc"] is None
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kenning.transcript/1", "sessions": 5}', encoding="utf-8")
    c2 = vault.ingest([bad], as_of="2024-01-01T00:00:00Z", stages="1")[0].counts
    assert c2["files_failed"] == 1 and c2["rejected"] == 1


def test_sniffing_by_structure():
    assert sniff_kind(b'[{"title": "x", "mapping": {}}]') == "chatgpt_export"
    assert sniff_kind(b'{"title": "x", "mapping": {}}') == "chatgpt_export"
    assert sniff_kind(b'{"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "x", "session_1": []}') == "locomo"
    assert sniff_kind(b'{"participants": [], "sessions": []}') == "transcript_json"
    assert sniff_kind(b'{"type": "session", "id": "1"}\n{"type": "turn", "speaker": "A", "text": "x"}\n') == \
        "transcript_jsonl"


def test_locomo_loader_keeps_dia_ids(vault):
    f = locomo_dir() / "30.json"
    src = orjson.loads(f.read_bytes())
    vault.ingest([f], as_of="2024-01-01T00:00:00Z", stages="0,1")
    n_turns = sum(len(v) for k, v in src.items() if k.startswith("session_") and isinstance(v, list))
    assert scalar(vault.conn, "SELECT COUNT(*) FROM messages") == n_turns
    m = rows(vault.conn, "SELECT m.*, c.created_at_utc AS started FROM messages m JOIN conversations c USING "
                         "(conversation_id) WHERE export_message_id='D1:3'")[0]
    assert m["author_name"] == src["session_1"][2]["speaker"] and m["text_raw"] == src["session_1"][2]["text"]
    # "4:04 pm on 20 January, 2023" → 2023-01-20T16:04
    assert m["started"].startswith(src["session_1_date_time"] and "2023-01-20T16:04")
    with_caption = next(t for k, v in src.items() if k.startswith("session_") and isinstance(v, list)
                        for t in v if t.get("blip_caption"))
    cap = scalar(vault.conn, "SELECT p.text_content FROM message_parts_raw p JOIN messages m USING (message_id) "
                             "WHERE m.export_message_id=? AND p.part_type='image'", (with_caption["dia_id"],))
    assert cap == with_caption["blip_caption"]


def test_cli_ingest_transcript_with_self(tmp_path, transcript_file, hash_config_file):
    db = tmp_path / "cli.db"
    r = run_kenning("ingest", str(transcript_file), "--self", "Ben", "--db", str(db), "--config", str(hash_config_file),
                "--json", "--as-of", "2024-01-01T00:00:00Z")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    stage1 = next(x for x in out["runs"] if x["stage"] == "1")
    assert stage1["counts"]["turns_imported"] == 7
    index = next(x for x in out["runs"] if x["stage"] == "index")
    assert index["counts"]["docs_new"] == 7
    assert index["counts"]["vectors_written"] == 7 + index["counts"].get("entity_docs_new", 0)


def test_cli_reports_bad_transcript(tmp_path, hash_config_file):
    p = tmp_path / "only-bad.jsonl"
    p.write_text('{"type": "turn", "text": "no speaker"}\n{"type": "turn", "speaker": "", "text": "x"}\n')
    r = run_kenning("ingest", str(p), "--db", str(tmp_path / "x.db"), "--config", str(hash_config_file))
    assert r.returncode == 2
    assert "MISSING_SPEAKER" in r.stderr and "line 1" in r.stderr and str(p) in r.stderr
