"""Each piece of raw text stored once (issue 24 §2; docs/decisions.md V1–V6): the seed's raw columns come back byte
for byte through the ``*_raw`` views and the store's accessors, offsets still point into ``text_raw``, an
old-format vault is rewritten by migration 0100, and a changed conversation re-places its messages."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatgpt_fixtures import conversation, message, simple_chat, write_export
from kenning.api import Vault
from kenning.config import load_config
from kenning.sources.chatgpt import build_conversation, parse_record
from kenning.sources.ids import IdFactory
from kenning.store import migrate as migrate_mod
from kenning.store import raw as raw_sql
from kenning.store.connection import open_store, rows
from kenning.store.sqltext import insert_sql

CFG = load_config()
IDS = IdFactory(CFG.ids.id_namespace)
AS_OF = "2025-01-01T00:00:00Z"
SEED_TABLES = {"conversations": raw_sql.CONVERSATION_COLUMNS, "messages": raw_sql.MESSAGE_COLUMNS,
               "message_parts": raw_sql.PART_COLUMNS}
VIEWS = {"conversations": ("conversations_raw", "conversation_id"), "messages": ("messages_raw", "message_id"),
         "message_parts": ("message_parts_raw", "part_id")}


def seed_rows(conn, table: str) -> dict[str, tuple]:
    """Every seed column of ``table``, as the seed defines it, read through its view."""
    view, key = VIEWS[table]
    cols = SEED_TABLES[table]
    return {r[key]: tuple(r[c] for c in cols) for r in rows(conn, f"SELECT * FROM {view}")}


def built_rows(built) -> dict[str, dict[str, tuple]]:
    return {"conversations": {built.conversation["conversation_id"]:
                              tuple(built.conversation[c] for c in raw_sql.CONVERSATION_COLUMNS)},
            "messages": {m["message_id"]: tuple(m[c] for c in raw_sql.MESSAGE_COLUMNS) for m in built.messages},
            "message_parts": {p["part_id"]: tuple(p[c] for c in raw_sql.PART_COLUMNS) for p in built.parts}}


# Odd text: every plane, controls, NUL, combining marks, and lone surrogates (which JSON can carry as \\udXXX).
odd_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
part_items = st.one_of(odd_text, st.fixed_dictionaries({"content_type": st.just("audio_transcription"),
                                                       "text": odd_text, "direction": st.sampled_from(["in", "out"])}))
_counter = itertools.count()


@pytest.fixture(scope="module")
def shared_vault(tmp_path_factory):
    conn = open_store(tmp_path_factory.mktemp("rawonce") / "v.db")
    yield conn
    conn.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.lists(part_items, min_size=1, max_size=3)),
                      min_size=1, max_size=4),
       title=odd_text)
def test_raw_json_comes_back_byte_for_byte(shared_vault, turns, title):
    cid = f"conv-{next(_counter)}"
    ids = [f"{cid}-m{i}" for i in range(len(turns))]
    nodes = [message("root", None, None, parent=None, children=ids[:1], null_message=True)]
    for i, (role, parts) in enumerate(turns):
        nodes.append(message(ids[i], role, parts, parent="root" if i == 0 else ids[i - 1],
                             children=ids[i + 1:i + 2], t=1.7e9 + i))
    record = json.dumps(conversation(cid, title, nodes)).encode()  # ensure_ascii: lone surrogates as \udXXX
    obj, _ = parse_record(record)
    built = build_conversation(obj, CFG, IDS, "run-1", "key-" + cid)
    want = built_rows(built)
    with shared_vault:
        raw_sql.insert_conversation(shared_vault, built.conversation, built.messages, built.parts)
    for table, expected in want.items():
        got = seed_rows(shared_vault, table)
        assert {k: got[k] for k in expected} == expected, table
    # the store's own readers (stage 1's change detection) see the same values
    assert raw_sql.conversation_raw(shared_vault, cid) == built.conversation["raw_conversation_json"]
    stored = raw_sql.messages_of(shared_vault, cid)
    assert {m: r["raw_message_json"] for m, r in stored.items()} == {m["message_id"]: m["raw_message_json"]
                                                                     for m in built.messages}
    # stored once: the conversation's text is compressed, and nothing a view can derive is kept again
    (z, literal), = shared_vault.execute("SELECT raw_conversation_z, raw_conversation_json FROM conversations "
                                         "WHERE conversation_id=?", (cid,))
    assert z is not None and literal == ""
    assert shared_vault.execute("SELECT count(*) FROM messages WHERE conversation_id=? AND raw_at IS NULL",
                                (cid,)).fetchone() == (0,)
    for p in built.parts:
        text_at, raw_at, text = shared_vault.execute(
            "SELECT text_at, raw_at, text_content FROM message_parts WHERE part_id=?", (p["part_id"],)).fetchone()
        assert raw_at is not None
        nul = "\x00" in (p["text_content"] or "") or "\x00" in (next(
            m["text_raw"] for m in built.messages if m["message_id"] == p["message_id"]) or "")
        if p["text_content"] is not None and not nul:
            assert text_at is not None and text is None


def synth_vault(tmp_path, name: str, n: int = 12) -> tuple[Vault, str]:
    from kenning.bench.synth import write_export as synth

    src = tmp_path / f"{name}.json"
    synth(src, n, seed=5)
    v = Vault.open(tmp_path / f"{name}.db")
    v.ingest([src], as_of=AS_OF, stages="0,1")
    return v, str(src)


def test_offsets_point_into_text_raw_and_parts_are_slices_of_it(tmp_path):
    v, _ = synth_vault(tmp_path, "a")
    try:
        texts = dict(v.conn.execute("SELECT message_id, text_raw FROM messages"))
        n = 0
        for mid, at, length, text in v.conn.execute(
                "SELECT p.message_id, p.text_at, p.text_len, r.text_content FROM message_parts p "
                "JOIN message_parts_raw r USING (part_id) WHERE p.text_at IS NOT NULL"):
            assert texts[mid][at:at + length] == text
            n += 1
        assert n > 100
        for mid, part_map in v.conn.execute("SELECT message_id, text_part_map_json FROM messages "
                                            "WHERE text_part_map_json IS NOT NULL"):
            parts = dict(v.conn.execute("SELECT part_index, text_content FROM message_parts_raw WHERE message_id=?",
                                        (mid,)))
            for span in json.loads(part_map):
                assert texts[mid][span["char_start"]:span["char_end"]] == parts[span["part_index"]]
    finally:
        v.close()


def test_an_old_format_vault_is_rewritten_by_the_migration(tmp_path, monkeypatch):
    fresh, _ = synth_vault(tmp_path, "fresh")
    want = {t: seed_rows(fresh.conn, t) for t in SEED_TABLES}
    stored_fresh = {t: sorted(fresh.conn.execute(f"SELECT * FROM {t}").fetchall()) for t in SEED_TABLES}
    fresh.close()
    # the vault as it stood before migration 0100: every text kept literally in the seed's columns
    old_path = tmp_path / "old.db"
    real = migrate_mod.available_migrations
    with monkeypatch.context() as m:
        m.setattr(migrate_mod, "available_migrations", lambda: [x for x in real() if x[0] < 100])
        old = open_store(old_path)
        assert not old.execute("SELECT count(*) FROM sqlite_master WHERE name='messages_raw'").fetchone()[0]
        with old:
            for table in ("conversations", "messages", "message_parts"):
                cols = SEED_TABLES[table]
                old.executemany(insert_sql(table, cols), list(want[table].values()))
        old.close()
    upgraded = open_store(old_path)
    try:
        assert upgraded.execute("PRAGMA freelist_count").fetchone() == (0,)  # the freed pages went back (V5)
        for table in SEED_TABLES:
            assert seed_rows(upgraded, table) == want[table], table
        # rewritten exactly as a fresh import stores them (same offsets, same compressed bytes)
        for table in SEED_TABLES:
            assert sorted(upgraded.execute(f"SELECT * FROM {table}").fetchall()) == stored_fresh[table], table
    finally:
        upgraded.close()


def test_a_changed_conversation_places_its_messages_again(tmp_path, cli, vault_path):
    old = [simple_chat("c0", "Chat", [("user", "first question"), ("assistant", "first answer")])]
    cli("ingest", str(write_export(tmp_path / "old.json", old)), "--stages", "0,1", db=vault_path)
    new = json.loads(json.dumps(old))
    new[0]["mapping"]["c0-m1"]["children"] = ["c0-m2"]
    new[0]["mapping"]["c0-m2"] = message("c0-m2", "user", "a follow-up ✓ \U0001F600", parent="c0-m1", t=1.7e9 + 500)[1]
    new[0]["current_node"] = "c0-m2"
    new[0]["update_time"] = 1.7e9 + 600
    new[0]["title"] = "Chat, renamed"
    cli("ingest", str(write_export(tmp_path / "new.json", new)), "--stages", "0,1", db=vault_path)
    conn = open_store(vault_path)
    try:
        obj, _ = parse_record(json.dumps(new[0]).encode())
        built = build_conversation(obj, CFG, IDS, "r", "k")
        assert raw_sql.conversation_raw(conn, "c0") == built.conversation["raw_conversation_json"]
        got = seed_rows(conn, "messages")
        for m in built.messages:
            assert got[m["message_id"]][raw_sql.MESSAGE_COLUMNS.index("raw_message_json")] == m["raw_message_json"]
        # every message of the stored record lies in it again: nothing kept twice
        assert conn.execute("SELECT count(*) FROM messages WHERE raw_at IS NULL").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM raw_archive WHERE table_name='conversations'").fetchone() == (1,)
    finally:
        conn.close()


def test_forget_leaves_no_raw_text(tmp_path, cli, vault_path):
    chats = [simple_chat("c0", "Keep", [("user", "ordinary words")]),
             simple_chat("c1", "Secret", [("user", "the zebra password is hunter2")])]
    cli("ingest", str(write_export(tmp_path / "e.json", chats)), "--stages", "0,1", db=vault_path)
    cli("forget", "--conversation", "c1", "--yes", db=vault_path)
    conn = open_store(vault_path)
    try:
        blobs = [r for (r,) in conn.execute("SELECT raw_conversation_json FROM conversations_raw")]
        assert len(blobs) == 1 and "hunter2" not in blobs[0]
        assert not [r for (r,) in conn.execute("SELECT raw_message_json FROM messages_raw") if "hunter2" in r]
    finally:
        conn.close()


def test_incognito_drop_keeps_the_messages_it_does_not_drop(tmp_path):
    """Intake's drop (I11) clears a conversation's record; a message still placed in it gets its own copy first."""
    from kenning.store import intake as intake_sql

    conn = open_store(tmp_path / "v.db")
    try:
        obj, _ = parse_record(json.dumps(simple_chat("c9", "Mixed", [("user", "private thing"),
                                                                     ("assistant", "public answer")])).encode())
        built = build_conversation(obj, CFG, IDS, "run-1", "key")
        with conn:
            raw_sql.insert_conversation(conn, built.conversation, built.messages, built.parts)
        private = next(m for m in built.messages if m["text_raw"] == "private thing")
        with conn:
            intake_sql.drop_message_text(conn, [private["message_id"]], "run-2")
            intake_sql.drop_conversation_raw(conn, ["c9"])
        assert raw_sql.conversation_raw(conn, "c9") == "{}"
        got = dict(conn.execute("SELECT message_id, raw_message_json FROM messages_raw"))
        for m in built.messages:
            assert got[m["message_id"]] == ("{}" if m is private else m["raw_message_json"])
        assert "private thing" not in "".join(got.values())
        parts = dict(conn.execute("SELECT part_id, text_content FROM message_parts_raw"))
        assert "private thing" not in [t for t in parts.values() if t]
    finally:
        conn.close()


def test_a_read_only_command_upgrades_an_old_vault_first(tmp_path, monkeypatch):
    """An old vault's first command may be a read (`kenning status`, `search`, the UI): read-only opens apply the
    pending migrations first, once, instead of failing on a table this version's readers expect."""
    from tests.conftest import run_cli

    path = tmp_path / "old.db"
    real = migrate_mod.available_migrations
    with monkeypatch.context() as m:
        m.setattr(migrate_mod, "available_migrations", lambda: [x for x in real() if x[0] < 100])
        open_store(path).close()  # a vault as the version before 0100 left it
    probe = open_store(path, readonly=True, migrate=False)
    assert migrate_mod.needs_upgrade(probe) is True
    probe.close()
    status = json.loads(run_cli("status", "--json", db=path).stdout)
    assert "db" in status
    after = open_store(path, readonly=True)
    try:
        assert not migrate_mod.needs_upgrade(after)
        assert after.execute("SELECT count(*) FROM sqlite_master WHERE name='messages_raw'").fetchone()[0] == 1
    finally:
        after.close()
