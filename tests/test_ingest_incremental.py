"""A newer export adds only what is new, archives what changed, and keeps what vanished (docs/decisions.md D12)."""

import copy
import json

import apsw

from chatgpt_fixtures import message, simple_chat, write_export

from kenning.store import rawpack


def stage1(proc):
    return next(r for r in json.loads(proc.stdout)["runs"] if r["stage"] == "1")["counts"]


def test_newer_export(tmp_path, cli, vault_path):
    old = [simple_chat(f"c{i}", f"Chat {i}", [("user", f"question {i}"), ("assistant", "answer")]) for i in range(3)]
    cli("ingest", str(write_export(tmp_path / "old.json", old)), db=vault_path)

    new = copy.deepcopy(old)
    # c0: a new turn appended
    last = "c0-m1"
    new[0]["mapping"][last]["children"] = ["c0-m2"]
    new[0]["mapping"].update(dict([message("c0-m2", "user", "follow-up", parent=last, t=1.7e9 + 500)]))
    new[0]["current_node"] = "c0-m2"
    new[0]["update_time"] = 1.7e9 + 600
    # c1: a message edited in place (same id, new text) and the title changed
    new[1]["mapping"]["c1-m1"]["message"]["content"]["parts"] = ["a better answer"]
    new[1]["title"] = "Renamed"
    # c2: unchanged; plus a brand new conversation; and c0 loses nothing, c1 drops its root node
    del new[1]["mapping"]["client-created-root"]
    new.append(simple_chat("c3", "New one", [("user", "hi")]))
    counts = stage1(cli("ingest", str(write_export(tmp_path / "new.json", new)), "--json", db=vault_path))
    assert counts["conversations_new"] == 1
    assert counts["conversations_changed"] == 2
    assert counts["conversations_unchanged"] == 1
    assert counts["messages_new"] == 1 + 2
    assert counts["messages_changed"] == 2  # c1-m1 edited; c0-m1 gained a child (its raw node changed)
    assert counts["messages_retained_missing"] == 1
    assert {c["title"] for c in counts["changed"]} == {"Chat 0", "Renamed"}

    conn = apsw.Connection(str(vault_path))
    rawpack.register(conn)  # the seed's raw columns come back through the *_raw views (V1–V6)
    assert conn.execute("SELECT text_raw FROM messages WHERE export_message_id='c1-m1'").fetchone() == ("a better answer",)
    assert conn.execute("SELECT text_content FROM message_parts_raw p JOIN messages m USING(message_id) "
                        "WHERE m.export_message_id='c1-m1'").fetchall() == [("a better answer",)]
    archived = {t for (t,) in conn.execute("SELECT table_name FROM raw_archive")}
    assert archived == {"conversations", "messages"}
    (old_raw,) = conn.execute("SELECT raw_json FROM raw_archive WHERE table_name='messages'").fetchone()
    assert '"answer"' in old_raw
    # the vanished root is kept, still the tree's root
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE conversation_id='c1'").fetchone() == (3,)
    rows = conn.execute("SELECT export_message_id, tree_path, order_index FROM messages WHERE conversation_id='c0' "
                        "ORDER BY order_index").fetchall()
    assert [r[0] for r in rows] == ["client-created-root", "c0-m0", "c0-m1", "c0-m2"]
    assert conn.execute("SELECT message_count, title FROM conversations WHERE conversation_id='c1'").fetchone() == (3, "Renamed")

    # importing the newer export again changes nothing at all
    again = stage1(cli("ingest", str(tmp_path / "new.json"), "--json", db=vault_path))
    assert again["conversations_unchanged"] == 4 and "messages_new" not in again
    # and re-importing the OLD export afterwards never loses the newer data
    stale = stage1(cli("ingest", str(write_export(tmp_path / "old-copy.json", old, indent=1)), "--json", db=vault_path))
    assert stale["conversations_stale"] == 1  # c0 (older update_time); c1 has the same update_time: compared
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE export_message_id='c0-m2'").fetchone() == (1,)
    (children,) = conn.execute("SELECT raw_message_json FROM messages_raw WHERE export_message_id='c0-m1'").fetchone()
    assert '"children":["c0-m2"]' in children


def test_same_file_again_is_skipped_whole(tmp_path, cli, vault_path):
    src = write_export(tmp_path / "c.json", [simple_chat(f"c{i}", "t", [("user", "x")]) for i in range(4)])
    cli("ingest", str(src), db=vault_path)
    counts = stage1(cli("ingest", str(src), "--json", db=vault_path))
    assert counts["files_unchanged"] == 1 and counts["conversations_unchanged"] == 4 and counts["records"] == 4
    # a changed import config (here: the citation patterns) re-reads the file record by record
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("text_structure:\n  citation_patterns: []\n")
    counts = stage1(cli("ingest", str(src), "--json", "--config", str(cfg), db=vault_path))
    assert "files_unchanged" not in counts and counts["conversations_unchanged"] == 4
