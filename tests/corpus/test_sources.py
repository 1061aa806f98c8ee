"""Issue 18 part 7 sources — the Claude.ai export, a Markdown/Obsidian notes folder, mbox mail and .ics calendars:
each lands in the same conversations/messages tables, keeps its raw record losslessly, rejects a bad record alone
(file, record, reason) while the rest imports, and changes nothing when imported again."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.sources.inputs import resolve_export
from kenning.sources.jcs import canonicalize
from kenning.sources.units import bytes_of
from kenning.store.connection import rows, scalar
from tests.conftest import run_kenning

DATA = Path(__file__).parent / "data"
AS_OF = "2024-06-01T00:00:00Z"
HASH = {"embeddings": {"backend": "hash"}}
TABLES = ("conversations", "messages", "message_parts", "sources", "source_conversations", "rejects", "raw_archive",
          "note_versions", "note_assessment_pointers")


def dump(conn) -> dict:
    """The imported content; a source row's last_run_id records that the file was seen again (not a change)."""
    out = {t: rows(conn, f"SELECT * FROM {t} ORDER BY 1") for t in TABLES}
    for r in out["sources"]:
        r.pop("last_run_id")
    return out


@pytest.fixture
def vault(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    yield v
    v.close()


def raw_import(v: Vault, path, as_of: str = AS_OF) -> dict:
    return v.ingest([path], as_of=as_of, stages="0,1", llm="none")[-1].counts


def rejects(conn) -> list[tuple]:
    return [(Path(r["source_path"]).name, r["record_index"], r["reason_code"])
            for r in rows(conn, "SELECT * FROM rejects WHERE action='skipped' ORDER BY source_path, record_index")]


def test_kinds_are_recognised_by_structure(tmp_path):
    assert resolve_export(DATA / "claude-conversations.json").kind == "claude_export"
    z = tmp_path / "data-2024-03-02.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.write(DATA / "claude-conversations.json", "conversations.json")
        f.writestr("users.json", "[]")
    assert resolve_export(z).kind == "claude_export"
    folder = tmp_path / "export"
    folder.mkdir()
    shutil.copy(DATA / "claude-conversations.json", folder / "conversations.json")
    assert resolve_export(folder).kind == "claude_export"
    renamed = tmp_path / "inbox.txt"
    shutil.copy(DATA / "mail.mbox", renamed)
    assert resolve_export(renamed).kind == "mbox"
    assert resolve_export(DATA / "calendar.ics").kind == "ics"
    assert resolve_export(DATA / "notes").kind == "notes_folder"


def test_claude_export(vault, tmp_path):
    z = tmp_path / "claude.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.write(DATA / "claude-conversations.json", "conversations.json")
    counts = raw_import(vault, z)
    assert counts["conversations_new"] == 2 and counts["messages_new"] == 5
    conn = vault.conn
    convs = {r["title"]: r for r in rows(conn, "SELECT * FROM conversations_raw")}
    assert set(convs) == {"Porto weekend plan", "Sourdough starter"}
    porto = convs["Porto weekend plan"]
    assert porto["source_kind"] == "claude" and porto["export_conversation_id"].startswith("c1a7e2b0-1111")
    msgs = rows(conn, "SELECT * FROM messages WHERE conversation_id=? ORDER BY order_index",
                (porto["conversation_id"],))
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    # thinking is kept as a hidden part and never in the text the miners read
    assert "Alfa Pendular is fastest" not in msgs[1]["text_raw"] and msgs[1]["text_raw"].startswith("I recommend")
    parts = rows(conn, "SELECT * FROM message_parts WHERE message_id=? ORDER BY part_index", (msgs[1]["message_id"],))
    assert [p["part_type"] for p in parts] == ["text", "other"] and "hidden_reasoning" in parts[1]["metadata_json"]
    att = rows(conn, "SELECT * FROM message_parts_raw WHERE message_id=? AND part_type='file'", (msgs[2]["message_id"],))
    assert att[0]["file_path"] == "itinerary.txt" and att[0]["text_content"].startswith("Day 1: Ribeira")
    # lossless: the stored raw record is the file's record
    original = json.loads((DATA / "claude-conversations.json").read_text())
    assert json.loads(porto["raw_conversation_json"]) == original[0]
    assert porto["raw_conversation_json"] == canonicalize(original[0])
    # bad records: a message with an unknown sender, a conversation without a uuid; the rest imported
    assert rejects(conn) == [("claude.zip!conversations.json", 0, "BAD_SENDER"),
                             ("claude.zip!conversations.json", 1, "NO_CONVERSATION_ID")]
    before = dump(conn)
    again = raw_import(vault, z, as_of="2024-07-01T00:00:00Z")
    assert again["files_unchanged"] == 1 and "conversations_new" not in again
    assert dump(conn) == before


def test_mbox(vault, tmp_path):
    mbox = tmp_path / "Inbox.mbox"
    shutil.copy(DATA / "mail.mbox", mbox)
    counts = raw_import(vault, mbox)
    conn = vault.conn
    assert counts["conversations_new"] == 2 and counts["messages_new"] == 3
    threads = {r["title"]: r for r in rows(conn, "SELECT * FROM conversations WHERE source_kind='mail'")}
    assert set(threads) == {"Porto hotel", "Dentist"}
    msgs = rows(conn, "SELECT * FROM messages WHERE conversation_id=? ORDER BY order_index",
                (threads["Porto hotel"]["conversation_id"],))
    assert [m["author_name"] for m in msgs] == ["Lena Vogel", "Sam Rivera"]      # the reply joined its thread
    assert msgs[0]["created_at_utc"] == "2024-03-04T09:00:00.000Z"
    assert msgs[1]["text_raw"].startswith("Let's go with the guesthouse") and msgs[1]["attachment_count"] == 1
    pdf = rows(conn, "SELECT * FROM message_parts WHERE message_id=? AND part_type='file'", (msgs[1]["message_id"],))
    assert pdf[0]["file_path"] == "booking.pdf" and pdf[0]["mime_type"] == "application/pdf"
    # lossless: every kept mail's bytes come back exactly, Latin-1 ones too (base64)
    data = mbox.read_bytes()
    raws = [json.loads(r["raw_message_json"]) for r in rows(conn, "SELECT raw_message_json FROM messages_raw "
                                                                 "JOIN conversations USING (conversation_id) "
                                                                 "WHERE source_kind='mail'")]
    assert all(bytes_of(r) in data for r in raws) and any("base64" in r for r in raws)
    dentist = rows(conn, "SELECT text_raw, created_at_utc FROM messages WHERE author_name='Anna Berg'")[0]
    assert "Grüße aus München" in dentist["text_raw"] and dentist["created_at_utc"] is None
    assert rejects(conn) == [("Inbox.mbox", 2, "MISSING_SENDER")]
    assert scalar(conn, "SELECT reason_code FROM rejects WHERE action='repaired'") == "BAD_TIMESTAMP"
    before = dump(conn)
    assert raw_import(vault, mbox)["files_unchanged"] == 1
    assert dump(conn) == before
    # a new reply in a later mailbox joins the stored thread; nothing else changes
    reply = (b"\nFrom lena@example.org Tue Mar  5 09:00:00 2024\nFrom: Lena Vogel <lena@example.org>\n"
             b"Subject: Re: Porto hotel\nDate: Tue, 05 Mar 2024 09:00:00 +0100\nMessage-ID: <porto-3@example.org>\n"
             b"In-Reply-To: <porto-2@example.com>\nReferences: <porto-1@example.org> <porto-2@example.com>\n\n"
             b"Booked the guesthouse.\n")
    mbox.write_bytes(data + reply)
    counts = raw_import(vault, mbox)
    assert counts["conversations_changed"] == 1 and counts["messages_new"] == 1
    assert counts["conversations_unchanged"] == 1
    assert scalar(conn, "SELECT message_count FROM conversations WHERE title='Porto hotel'") == 3


def test_mail_from_self_is_the_user(tmp_path):
    with Vault.open(tmp_path / "s.db", overrides={**HASH, "corpus": {"mail": {"self_addresses": ["sam@example.com"]}}}) as v:
        raw_import(v, DATA / "mail.mbox")
        roles = {r["author_name"]: r["role"] for r in rows(v.conn, "SELECT author_name, role FROM messages")}
    assert roles == {"Lena Vogel": "unknown", "Sam Rivera": "user", "Anna Berg": "unknown"}


def test_ics(vault):
    counts = raw_import(vault, DATA / "calendar.ics")
    conn = vault.conn
    assert counts["conversations_new"] == 3
    ev = {r["title"]: r for r in rows(conn, "SELECT c.title, m.* FROM messages m JOIN conversations c "
                                            "USING (conversation_id) WHERE c.source_kind='calendar'")}
    train = ev["Train Lisbon → Porto (Alfa Pendular)"]
    assert train["created_at_utc"] == "2024-04-12T08:30:00.000Z"          # 09:30 Lisbon summer time
    assert "When: 2024-04-12T09:30:00+01:00 – 2024-04-12T12:15:00+01:00 (Europe/Lisbon)" in train["text_raw"]
    assert "Where: Lisboa Santa Apolónia" in train["text_raw"] and "With: Lena Vogel" in train["text_raw"]
    assert "Coach 3, seats 41 and 42" in train["text_raw"]
    meta = json.loads(scalar(conn, "SELECT metadata_json FROM message_parts WHERE message_id=? AND part_type='other'",
                             (train["message_id"],)))
    assert meta["tzid"] == "Europe/Lisbon" and meta["start"] == "2024-04-12T09:30:00+01:00" and not meta["all_day"]
    assert json.loads(scalar(conn, "SELECT metadata_json FROM message_parts WHERE message_id=? AND "
                                   "part_type='other'", (ev["Team standup"]["message_id"],)))["rrule"] == \
        "FREQ=WEEKLY;BYDAY=MO"
    assert ev["Lena's birthday"]["created_at_utc"] == "2024-05-20T00:00:00.000Z"
    text = (DATA / "calendar.ics").read_text()
    for r in rows(conn, "SELECT raw_conversation_json FROM conversations_raw WHERE source_kind='calendar'"):
        assert json.loads(r["raw_conversation_json"])["vevent"] in text
    assert rejects(conn) == [("calendar.ics", 1, "NO_START")]
    before = dump(conn)
    assert raw_import(vault, DATA / "calendar.ics")["files_unchanged"] == 1
    assert dump(conn) == before


def write(p: Path, text: str, mtime: int = 1709600000) -> None:
    p.write_text(text, encoding="utf-8")
    os.utime(p, (mtime, mtime))


def test_notes_folder_versions_and_session_close_rules(vault, tmp_path):
    notes = tmp_path / "vault-notes"
    shutil.copytree(DATA / "notes", notes)
    conn = vault.conn
    counts = raw_import(vault, notes, "2024-06-01T10:00:00Z")
    assert counts["note_deep_first_write"] == 1 and counts["note_skip_placeholder"] == 1
    assert rejects(conn) == [("latin1.md", 0, "NOT_UTF8")]
    # .obsidian is tool state, not a note; the placeholder is kept as a version but not mined
    assert {r["path"] for r in rows(conn, "SELECT path FROM note_versions")} == {"Projects/porto-trip.md", "ideas.md"}
    assert [r["title"] for r in rows(conn, "SELECT title FROM conversations")] == ["Porto trip"]
    porto = notes / "Projects" / "porto-trip.md"
    original = porto.read_text()
    assert scalar(conn, "SELECT content FROM note_versions WHERE path='Projects/porto-trip.md'") == original

    def decisions() -> list[str]:
        return [r["decision"] for r in rows(conn, "SELECT decision FROM note_versions WHERE path=? "
                                                  "ORDER BY observed_at, version_id", ("Projects/porto-trip.md",))]

    def body() -> str:
        return scalar(conn, "SELECT text_raw FROM messages m JOIN conversations c USING (conversation_id) "
                            "WHERE c.title='Porto trip'")

    before = dump(conn)
    assert raw_import(vault, notes, "2024-06-01T10:05:00Z")["notes_unchanged"] == 2
    assert dump(conn) == before
    write(porto, original + "ok\n")                                          # a micro-edit: 2 bytes added
    raw_import(vault, notes, "2024-06-01T11:00:00Z")
    assert decisions()[-1] == "skip_micro_edit" and body() == original       # assessed, not mined
    grown = original + "ok\n" + "The guesthouse has a roof terrace and the owner speaks Portuguese and English.\n"
    write(porto, grown)
    raw_import(vault, notes, "2024-06-01T11:05:00Z")
    assert decisions()[-1] == "shallow" and body() == grown                  # now mined; the old raw is archived
    assert scalar(conn, "SELECT count(*) FROM raw_archive WHERE table_name='messages'") == 1
    write(porto, grown + "We should also visit the Serralves museum and the Bolhão market.\n")
    raw_import(vault, notes, "2024-06-01T11:15:00Z")                        # 10 minutes later, in the same session
    assert decisions()[-1] == "skip_double_extract"
    write(porto, grown + "We should also visit the Serralves museum and the Bolhão market.\n#focus remember the "
                         "historic tram 1 line along the river to Foz.\n")
    raw_import(vault, notes, "2024-06-01T11:20:00Z")
    assert decisions()[-1] == "deep_user_flagged"
    ideas = notes / "ideas.md"
    write(ideas, ideas.read_text() + "A blog about slow travel by train across Europe: Lisbon to Porto, Porto to "
                                     "Vigo, and the night train from Paris to Vienna. " * 2)
    raw_import(vault, notes, "2024-06-02T09:00:00Z")
    assert scalar(conn, "SELECT decision FROM note_versions WHERE path='ideas.md' ORDER BY observed_at DESC") == "deep"
    assert scalar(conn, "SELECT count(*) FROM conversations WHERE source_kind='note'") == 2
    pointer = rows(conn, "SELECT * FROM note_assessment_pointers ORDER BY note_id")
    assert all(p["extraction_baseline_version_id"] is None for p in pointer)


@pytest.mark.slow
def test_every_source_through_the_whole_pipeline(tmp_path):
    """All four sources in one ingest through every default stage: each unit gets a thread; a second ingest of the
    same inputs changes nothing."""
    db = tmp_path / "all.db"
    cfg = tmp_path / "hash.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n")
    notes = tmp_path / "notes"
    shutil.copytree(DATA / "notes", notes)
    inputs = [str(DATA / "claude-conversations.json"), str(DATA / "mail.mbox"), str(DATA / "calendar.ics"), str(notes)]
    common = ["--db", str(db), "--config", str(cfg), "--llm", "none"]
    r = run_kenning("ingest", *inputs, "--as-of", AS_OF, "--json", *common)
    assert r.returncode == 0, r.stderr
    with Vault.open(db, overrides=HASH) as v:
        channels = {r["channel"]: r["n"] for r in rows(v.conn, "SELECT channel, count(*) AS n FROM "
                                                                "conversation_threads GROUP BY channel")}
        assert channels == {"claude": 2, "mail": 2, "calendar": 3, "note": 1}
        porto = rows(v.conn, "SELECT * FROM conversation_threads WHERE title_hint='Porto weekend plan'")[0]
        assert json.loads(porto["key_decisions"]) == [
            "I recommend the Alfa Pendular train from Lisbon Santa Apolonia because it takes under three hours."]
        assert "I still need to book the hotel." in json.loads(porto["unresolved_items"])
        first = dump(v.conn)
    r = run_kenning("ingest", *inputs, "--as-of", "2024-06-02T00:00:00Z", "--json", *common)
    assert r.returncode == 0, r.stderr
    threads = next(x for x in json.loads(r.stdout)["runs"] if x["stage"] == "threads")["counts"]
    assert threads == {"threads_unchanged": 8}
    with Vault.open(db, overrides=HASH) as v:
        after = dump(v.conn)
    assert after == first


def test_source_imports_are_deterministic(tmp_path):
    """Same inputs, config and frozen clock ⇒ identical raw tables, in two separate vaults."""
    inputs = [DATA / "claude-conversations.json", DATA / "mail.mbox", DATA / "calendar.ics", DATA / "notes"]
    dumps = []
    for name in ("a.db", "b.db"):
        with Vault.open(tmp_path / name, overrides=HASH) as v:
            v.ingest(inputs, as_of=AS_OF, stages="0,1", llm="none")
            dumps.append(dump(v.conn))
    assert dumps[0] == dumps[1] and dumps[0]["conversations"]


def test_cli_bad_inputs_say_what_to_do(tmp_path):
    """Through the real CLI: an empty folder, a folder whose only note is not UTF-8 and a truncated calendar each end
    with an error a person can act on; the good events of the calendar are still imported."""
    db = ["--db", str(tmp_path / "bad.db"), "--stages", "0,1", "--as-of", AS_OF]
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_kenning("ingest", str(empty), *db)
    assert r.returncode == 2 and "without a conversations.json or Markdown notes (.md)" in r.stdout + r.stderr
    latin = tmp_path / "latin"
    latin.mkdir()
    shutil.copy(DATA / "notes" / "latin1.md", latin / "latin1.md")
    r = run_kenning("ingest", str(latin), *db)
    assert r.returncode == 2 and "not UTF-8 text" in r.stdout + r.stderr and "save it as UTF-8" in r.stdout + r.stderr
    cut = tmp_path / "cut.ics"
    text = (DATA / "calendar.ics").read_text()
    cut.write_text(text[: text.index("UID:standup@example.com")])
    r = run_kenning("ingest", str(cut), *db, "--json")
    assert r.returncode == 0, r.stderr
    raw = next(x for x in json.loads(r.stdout)["runs"] if x["stage"] == "1")["counts"]
    assert raw["conversations_new"] == 1 and raw["rejected"] == 2     # NO_START and the cut-off event


def test_session_close_rules_in_the_seed_order():
    """§20B.2 onNoteSessionClose, branch by branch, at the thresholds (I60–I62)."""
    from kenning.config import load_config
    from kenning.sources.notes import assess

    cfg = load_config().corpus.notes
    now = "2024-06-01T12:00:00.000Z"

    def a(content, prior=None, flight=False, last=None):
        return assess(content=content, prior=prior, baseline_in_flight=flight, last_extracted_at=last, now=now,
                      cfg=cfg)[0]

    assert a("x" * 500, prior="y", flight=True) == "defer"                   # 1: in flight wins over everything
    assert a("x" * 199) == "skip_placeholder" and a("x" * 200) == "deep_first_write"   # 2
    base = "line one\n"
    assert a(base + "x" * 49 + "\n", prior=base) == "skip_micro_edit"       # 3: 49 added bytes
    assert a(base + "x" * 50 + "\n", prior=base) == "shallow"               # 5: 50 bytes, no signals
    assert a(base + "#focus " + "x" * 50 + "\n", prior=base, last="2024-06-01T11:59:00.000Z") == "deep_user_flagged"
    assert a(base + "due 2024-07-01 " + "x" * 40 + "\n", prior=base) == "deep"   # a deadline/date signal
    assert a(base + "x" * 250 + "\n", prior=base) == "deep"                 # ≥ double_extract_bytes
    in_session = "2024-06-01T11:45:00.000Z"                                 # 15 minutes ago (timeout 20)
    assert a(base + "x" * 120 + "\n", prior=base, last=in_session) == "skip_double_extract"   # 6
    assert a(base + "x" * 250 + "\n", prior=base, last=in_session) == "deep"
    assert a(base + "x" * 120 + "\n", prior=base, last="2024-06-01T11:30:00.000Z") == "shallow"  # session over
