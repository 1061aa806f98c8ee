"""A Claude export read with the mapping in docs/claude-export.yaml (issue 23 part 4: the user guide's promise)."""

import json

import apsw

from conftest import SRC

MAPPING = SRC.parent / "docs" / "claude-export.yaml"


def claude_conversation():
    def msg(uid, sender, text, t, parent):
        return {"uuid": uid, "text": text, "content": [{"type": "text", "text": text}], "sender": sender,
                "created_at": t, "updated_at": t, "attachments": [], "files": [], "parent_message_uuid": parent}

    return {"uuid": "3f1c-claude", "name": "Moving to Porto", "created_at": "2024-03-01T10:00:00.000000Z",
            "updated_at": "2024-03-01T10:05:00.000000Z", "chat_messages": [
                msg("m1", "human", "I moved to Porto last month.", "2024-03-01T10:00:00.000000Z",
                    "00000000-0000-4000-8000-000000000000"),
                msg("m2", "assistant", "Congratulations on the move!", "2024-03-01T10:00:05.000000Z", "m1")]}


def test_a_claude_export_imports_with_the_documented_mapping(tmp_path, cli):
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps([claude_conversation()]))
    db = tmp_path / "kenning.db"
    cli("ingest", str(src), "--config", str(MAPPING), "--stages", "0,1,2A,2B,3,4", db=db)
    conn = apsw.Connection(str(db))
    assert conn.execute("SELECT conversation_id, title FROM conversations").fetchall() == [
        ("3f1c-claude", "Moving to Porto")]
    rows = conn.execute("SELECT role, text_raw, created_at_utc FROM messages ORDER BY order_index").fetchall()
    assert rows == [("user", "I moved to Porto last month.", "2024-03-01T10:00:00.000Z"),
                    ("assistant", "Congratulations on the move!", "2024-03-01T10:00:05.000Z")]
    facts = json.loads(cli("facts", "--json", db=db).stdout)
    assert any("Porto" in str(f["object"]) and f["asserted_role"] == "user" for f in facts)
