"""`kenning ingest` end to end through the real CLI: the seed-001 stage 0–1 invariants on the stored vault."""

import json
import zipfile

import apsw
import orjson

from chatgpt_fixtures import conversation, message, simple_chat, write_export
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize, sha256_hex
from kenning.store import rawpack

NS = "550e8400-e29b-41d4-a716-446655440000"


def corpus():
    convs = [simple_chat(f"conv-{i}", f"Chat {i}", [("user", f"I live in Berlin 😀 {i}"), ("assistant", "Noted.\n```py\nx=1\n```"),
                                                    ("user", "> quoted Anna\nthanks")], start=1.7e9 + 86400 * i)
             for i in range(6)]
    convs.append(conversation("branchy", None, [
        message("r", "user", "q", parent=None, children=["a", "b"], t=1.7e9),
        message("a", "assistant", "one", parent="r", t=None),
        message("b", "assistant", "two", parent="r", t=1.7e9 + 5),
    ], current_node="b", update_time=None))
    return convs


def assert_raw_invariants(db):
    """Seed 001 invariants 3, 4, 7, 8, 9, 10 over every stored row."""
    conn = apsw.Connection(str(db))
    rawpack.register(conn)  # the seed's raw columns are derived through views (decisions V1–V6)
    ids = IdFactory(NS)
    per_conv = {}
    for cid, mid, order, path, parent, quality, created, ctype, text, part_map, fences, quotes, raw_json in conn.execute(
            "SELECT conversation_id, message_id, order_index, tree_path, parent_id, timestamp_quality, created_at_utc, "
            "content_type, text_raw, text_part_map_json, code_fence_ranges_json, blockquote_ranges_json, raw_message_json "
            "FROM messages_raw"):
        per_conv.setdefault(cid, []).append((order, path, mid, parent))
        node = orjson.loads(raw_json)
        assert raw_json == canonicalize(node)                                          # invariant 3
        assert mid == ids.make("message", cid, node["id"])                            # invariant 4
        assert (quality == "original") == (node["message"] is not None and node["message"]["create_time"] is not None)
        assert (part_map is not None) == (ctype == "mixed")                           # invariant 9
        for r in orjson.loads(fences or "[]") + orjson.loads(quotes or "[]"):        # invariant 10
            assert 0 <= r["char_start"] < r["char_end"] <= len(text)
    for cid, msgs in per_conv.items():                                                # invariant 7
        assert sorted(o for o, *_ in msgs) == list(range(len(msgs)))
        by_id = {m: (o, p) for o, p, m, _ in msgs}
        for o, p, m, parent in msgs:
            if parent:
                assert by_id[parent][0] < o and p.startswith(by_id[parent][1] + "/")
    for part_id, mid, idx in conn.execute("SELECT part_id, message_id, part_index FROM message_parts"):
        assert part_id == ids.make("part", mid, idx)
    for cid, raw_json, raw_sha in conn.execute("SELECT conversation_id, raw_conversation_json, raw_sha256 FROM conversations_raw"):
        assert raw_json == canonicalize(orjson.loads(raw_json)) and raw_sha == sha256_hex(raw_json)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    for (quality,) in conn.execute("SELECT DISTINCT timestamp_quality FROM messages"):
        assert quality in ("original", "imputed_parent", "imputed_prior", "missing")


def test_synthetic_corpus_imports_cleanly(tmp_path, cli, vault_path):
    from kenning.bench.synth import write_export as synth

    out = tmp_path / "export.zip"
    stats = synth(out, 16, 11)
    report = json.loads(cli("ingest", str(out), "--json", db=vault_path).stdout)
    raw = next(r for r in report["runs"] if r["stage"] == "1")
    assert raw["counts"]["conversations_new"] == 16
    assert raw["counts"]["messages_new"] >= stats["messages"]  # mapping nodes incl. null roots
    assert raw["warnings"] == {"ORPHAN_MESSAGE": 1, "UNKNOWN_ROLE": 1}
    assert_raw_invariants(vault_path)
    conn = apsw.Connection(str(vault_path))
    kinds = {k for (k,) in conn.execute("SELECT DISTINCT export_content_type FROM messages")}
    assert {"user_editable_context", "thoughts", "tether_browsing_display", "multimodal_text", "code"} <= kinds
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE citation_ranges_json IS NOT NULL").fetchone()[0] >= 2
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE recipient='bio'").fetchone()[0] >= 1
    # the 12-regeneration node: tree paths sort numerically, current branch marked once per conversation
    for (cid,) in conn.execute("SELECT conversation_id FROM conversations"):
        leafs = conn.execute("SELECT COUNT(*) FROM messages WHERE conversation_id=? AND is_current_branch=1 "
                             "AND message_id NOT IN (SELECT parent_id FROM messages WHERE parent_id IS NOT NULL "
                             "AND is_current_branch=1)", (cid,)).fetchone()[0]
        assert leafs == 1


def test_ingest_status_and_invariants(tmp_path, cli, vault_path):
    src = write_export(tmp_path / "conversations.json", corpus())
    proc = cli("ingest", str(src), "--json", db=vault_path)
    report = json.loads(proc.stdout)
    raw = next(r for r in report["runs"] if r["stage"] == "1")
    assert raw["counts"]["conversations_new"] == 7 and raw["counts"]["messages_new"] == 6 * 4 + 3
    status = json.loads(cli("status", "--json", db=vault_path).stdout)
    assert status["tables"]["conversations"] == 7
    # every stage's latest run, stage 1 included however many stages follow it
    assert {r["stage"] for r in status["last_runs"]} >= {"0", "1", "knowledge", "intake", "extract", "threads",
                                                         "backlinks", "index"}

    assert_raw_invariants(vault_path)


def test_zip_and_folder_inputs(tmp_path, cli, vault_path):
    src = write_export(tmp_path / "export" / "conversations.json", corpus()[:2])
    z = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(src, "conversations.json")
        zf.writestr("user.json", "{}")
    cli("ingest", str(z), db=vault_path)
    again = json.loads(cli("ingest", str(tmp_path / "export"), "--json", db=vault_path).stdout)
    raw = next(r for r in again["runs"] if r["stage"] == "1")
    assert raw["counts"]["conversations_unchanged"] == 2 and raw["counts"].get("conversations_new", 0) == 0


def test_stages_option_and_unknown_stage(tmp_path, cli, vault_path):
    src = write_export(tmp_path / "c.json", corpus()[:1])
    proc = cli("ingest", str(src), "--stages", "1", "--json", db=vault_path)
    assert [r["stage"] for r in json.loads(proc.stdout)["runs"]] == ["1"]
    bad = cli("ingest", str(src), "--stages", "1,9x", db=vault_path, check=False)
    assert bad.returncode == 1 and "unknown stage" in bad.stderr and "Traceback" not in bad.stderr


def test_config_show_and_env_db(tmp_path, cli, vault_path):
    shown = json.loads(cli("config", "show", "--json").stdout)
    assert shown["config"]["ids"]["id_namespace"] == NS and len(shown["config_hash"]) == 64
    src = write_export(tmp_path / "c.json", corpus()[:1])
    cli("ingest", str(src), env={"KENNING_DB": str(vault_path)})
    assert vault_path.exists()


def test_not_a_vault_gives_a_clear_error(tmp_path, cli):
    junk = tmp_path / "junk.db"
    junk.write_text("this is not sqlite" * 100)
    proc = cli("status", db=junk, check=False)
    assert proc.returncode == 1 and "error:" in proc.stderr and "Traceback" not in proc.stderr
    missing = cli("status", db=tmp_path / "nope.db", check=False)
    assert missing.returncode == 1 and "no vault" in missing.stderr
