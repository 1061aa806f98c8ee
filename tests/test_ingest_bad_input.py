"""Bad input: clear messages, good records still imported, rejects kept, nothing half-written (issue 2 §6)."""

import json
import os
import signal
import subprocess
import sys
import time
import zipfile

import apsw
import pytest

from chatgpt_fixtures import conversation, message, simple_chat, write_export
from conftest import SRC
from vault_dump import CONTENT_TABLES, dump

from kenning.store import rawpack


def good(i):
    return simple_chat(f"good-{i}", f"Good {i}", [("user", f"hello {i}"), ("assistant", "hi")])


def raw_export(path, pieces):
    path.write_bytes(b"[" + b",\n".join(pieces) + b"]")
    return path


def enc(obj):
    return json.dumps(obj).encode()


def rejects(db):
    conn = apsw.Connection(str(db))
    return [dict(zip(("action", "reason_code", "record_index", "record_ref", "pointer", "message", "raw_text"), r))
            for r in conn.execute("SELECT action, reason_code, record_index, record_ref, pointer, message, raw_text "
                                  "FROM rejects ORDER BY record_index, reason_code")]


def count(db, table="conversations"):
    return apsw.Connection(str(db)).execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_malformed_record_rejected_alone(tmp_path, cli, vault_path):
    src = raw_export(tmp_path / "c.json", [enc(good(0)), b'{"title": "broken", "mapping": {"a": 1,, }}', enc(good(1))])
    proc = cli("ingest", str(src), db=vault_path)
    assert count(vault_path) == 2
    (r,) = rejects(vault_path)
    assert (r["action"], r["reason_code"], r["record_index"]) == ("skipped", "MALFORMED_JSON", 1)
    assert r["raw_text"] == '{"title": "broken", "mapping": {"a": 1,, }}'
    assert "c.json: record 1" in proc.stderr and "not valid JSON" in proc.stderr


def test_truncated_file_keeps_everything_before_the_cut(tmp_path, cli, vault_path):
    full = json.dumps([good(0), good(1), good(2)]).encode()
    src = tmp_path / "c.json"
    src.write_bytes(full[: len(full) - 40])
    proc = cli("ingest", str(src), db=vault_path)
    assert count(vault_path) == 2
    assert [r["reason_code"] for r in rejects(vault_path)] == ["TRUNCATED_RECORD"]
    assert "ARRAY_NOT_CLOSED" in proc.stderr


def test_wrong_shapes(tmp_path, cli, vault_path):
    node_bad = good(5)
    node_bad["mapping"]["junk"] = "not a node"
    src = raw_export(tmp_path / "c.json", [enc(good(0)), b"42", enc({"title": "no mapping"}),
                                           enc({"title": "list", "mapping": []}), enc(node_bad)])
    cli("ingest", str(src), db=vault_path)
    assert count(vault_path) == 2
    got = [(r["record_index"], r["reason_code"], r["pointer"]) for r in rejects(vault_path)]
    assert got == [(1, "WRONG_SHAPE", None), (2, "NO_MESSAGES", "/mapping"), (3, "WRONG_SHAPE", "/mapping"),
                   (4, "WRONG_SHAPE", "/mapping/junk")]
    assert count(vault_path, "messages") == 3 + 3  # node-level reject keeps the rest of its conversation


def test_cycles_and_missing_parents_import_with_warnings(tmp_path, cli, vault_path):
    conv = conversation("cyc", "cycle", [message("a", "user", "x", parent="b", t=1.7e9),
                                         message("b", "assistant", "y", parent="a", t=1.7e9),
                                         message("o", "user", "z", parent="gone", t=1.7e9)])
    src = write_export(tmp_path / "c.json", [conv])
    proc = cli("ingest", str(src), db=vault_path)
    assert count(vault_path, "messages") == 3
    assert "PARENT_CYCLE_BROKEN" in proc.stderr and "ORPHAN_MESSAGE" in proc.stderr
    conn = apsw.Connection(str(vault_path))
    codes = {c for (c,) in conn.execute("SELECT code FROM run_events")}
    assert {"PARENT_CYCLE_BROKEN", "ORPHAN_MESSAGE"} <= codes


def test_invalid_strings_are_repaired_and_kept(tmp_path, cli, vault_path):
    surrogate = enc(good(0)).replace(b"hello 0", b"hello \\ud83d 0")
    bad_utf8 = enc(good(1)).replace(b"hello 1", "hello caf\xe9 1".encode("latin-1"))
    src = raw_export(tmp_path / "c.json", [surrogate, bad_utf8, enc(good(2))])
    cli("ingest", str(src), db=vault_path)
    assert count(vault_path) == 3
    got = [(r["action"], r["reason_code"]) for r in rejects(vault_path)]
    assert got == [("repaired", "LONE_SURROGATE"), ("repaired", "INVALID_UTF8")]
    conn = apsw.Connection(str(vault_path))
    texts = sorted(t for (t,) in conn.execute("SELECT text_raw FROM messages WHERE role='user'"))
    assert texts == ["hello 2", "hello caf\ufffd 1", "hello \ufffd 0"]
    rawpack.register(conn)
    (raw,) = conn.execute("SELECT raw_message_json FROM messages_raw "
                          "WHERE text_raw LIKE 'hello \ufffd 0'").fetchone()
    assert "\\ud83d" in raw  # lossless in the raw layer


def test_big_integers_survive(tmp_path, cli, vault_path):
    c = good(0)
    c["plugin_ids"] = [123456789012345678901234567890]
    src = write_export(tmp_path / "c.json", [c])
    cli("ingest", str(src), db=vault_path)
    conn = apsw.Connection(str(vault_path))
    rawpack.register(conn)
    (raw,) = conn.execute("SELECT raw_conversation_json FROM conversations_raw").fetchone()
    assert "123456789012345678901234567890" in raw


@pytest.mark.parametrize("content,needle", [
    (b"", "empty"), (b'"hello"', "expected a JSON array"), (b"[]", None),
])
def test_nothing_importable_exits_nonzero(tmp_path, cli, vault_path, content, needle):
    src = tmp_path / "c.json"
    src.write_bytes(content)
    proc = cli("ingest", str(src), db=vault_path, check=False)
    if needle is None:  # an empty export is not an error
        assert proc.returncode == 0
        return
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    if needle != "empty":
        assert proc.returncode == 2


def test_all_records_bad_exits_nonzero_but_keeps_rejects(tmp_path, cli, vault_path):
    src = raw_export(tmp_path / "c.json", [b"1", b"2"])
    proc = cli("ingest", str(src), db=vault_path, check=False)
    assert proc.returncode == 2 and "nothing could be imported" in proc.stderr
    assert len(rejects(vault_path)) == 2


def test_unreadable_inputs(tmp_path, cli, vault_path):
    z = tmp_path / "x.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "hi")
    proc = cli("ingest", str(z), str(tmp_path / "missing.json"), db=vault_path, check=False)
    assert proc.returncode == 2
    assert "no conversations.json inside" in proc.stderr and "no such file" in proc.stderr


def test_injected_failure_rolls_back_stage(tmp_path, monkeypatch):
    from kenning.api import Vault
    from kenning.pipeline.runner import StageFailed
    from kenning.store import raw as raw_sql

    db = tmp_path / "v.db"
    first = write_export(tmp_path / "a.json", [good(0)])
    with Vault.open(db) as v:
        v.ingest([first])
    before = dump(db, CONTENT_TABLES + ("rejects", "sources", "source_conversations", "run_events"))
    calls = {"n": 0}
    real = raw_sql.insert_conversation

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk on fire")
        return real(*a, **k)

    monkeypatch.setattr(raw_sql, "insert_conversation", flaky)
    second = write_export(tmp_path / "b.json", [good(i) for i in range(1, 6)] + [b"x" and 7])
    with Vault.open(db) as v, pytest.raises(StageFailed):
        v.ingest([second], stages="1")
    after = dump(db, CONTENT_TABLES + ("rejects", "sources", "source_conversations"))
    assert after == {k: v for k, v in before.items() if k != "run_events"}
    conn = apsw.Connection(str(db))
    assert conn.execute("SELECT status, error FROM runs WHERE stage='1' ORDER BY seq DESC LIMIT 1").fetchone() == (
        "failed", "RuntimeError: disk on fire")


def _user_shell_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_import_leaves_vault_as_before(tmp_path, cli, sig):
    db = tmp_path / "v.db"
    cli("ingest", str(write_export(tmp_path / "a.json", [good(0)])), db=db)
    before = dump(db, CONTENT_TABLES)
    big = write_export(tmp_path / "big.json", [good(i) for i in range(1, 40000)])
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    # What the parent's main thread has ignored or blocked is inherited through exec, and a Python child leaves an
    # ignored SIGINT ignored: the import is started as a user's shell starts it, with SIGINT default and unblocked.
    parent_sigint = (signal.getsignal(signal.SIGINT), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "ingest", str(big), "--db", str(db), "-q"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_user_shell_signals)
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until the import transaction is under way
        wal = db.with_name(db.name + "-wal")
        if wal.exists() and wal.stat().st_size > 2_000_000:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    # communicate, not wait: a child blocked writing to a full stdout/stderr pipe would never exit
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the import did not stop within 120 s of signal {sig} (parent's SIGINT handler, blocked: "
                    f"{parent_sigint}); its stderr: {err.decode()[-2000:]}")
    assert proc.returncode != 0, err.decode()[-2000:]
    assert dump(db, CONTENT_TABLES) == before


def put(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("make,needle", [
    (lambda d: d / "missing.json", "no such file"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "folder without a conversations.json"),
    (lambda d: put(d / "notes.txt", b"Dear diary, today..."), "is not a ChatGPT export"),
    (lambda d: put(d / "blank.json", b"  \n"), "is empty"),
    (lambda d: put(d / "pic.png", b"\x89PNG\r\n\x1a\n" + bytes(200)), "not a ChatGPT export"),
])
def test_bad_paths_are_refused_before_a_vault_exists(tmp_path, cli, vault_path, make, needle):
    """Issue 23 part 3: no vault file, no stage run, a message naming the path."""
    path = make(tmp_path)
    proc = cli("ingest", str(path), db=vault_path, check=False)
    assert proc.returncode == 2
    assert needle in proc.stderr and str(path.name) in proc.stderr and "no vault was touched" in proc.stderr
    assert not vault_path.exists() and not vault_path.parent.exists()
    assert "stage" not in proc.stdout


def test_empty_list_and_single_object_get_a_clear_message(tmp_path, cli, vault_path):
    empty = tmp_path / "empty.json"
    empty.write_text("[ ]")
    proc = cli("ingest", str(empty), db=vault_path)
    assert "empty list" in proc.stderr and "no conversations" in proc.stderr and "nothing to import" in proc.stderr
    assert not vault_path.exists()
    single = tmp_path / "one.json"
    single.write_text(json.dumps(good(7)))
    proc = cli("ingest", str(single), "--stages", "0,1", db=vault_path)
    assert "single conversation object" in proc.stderr
    assert count(vault_path) == 1
