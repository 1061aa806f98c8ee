"""Resilient import (issue 23 part 3): one damaged byte costs at most the conversation it sits in."""

import io
import json

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgpt_fixtures import simple_chat
from conftest import SRC
from kenning.sources.json_stream import Element, RecordStream, StreamProblem


def chats(n):
    return [simple_chat(f"c{i}", f"Chat {i} {{with [brackets]}} \"quoted\"",
                        [("user", f"hello {i}, {{\"a\": [1, 2]}} \\ back"), ("assistant", "fine é ✓")])
            for i in range(n)]


def export_bytes(convs, indent):
    """The export's bytes and each conversation's byte span."""
    parts, spans, pos = [b"["], [], 1
    for i, c in enumerate(convs):
        if i:
            sep = b",\n " if indent else b", "
            parts.append(sep)
            pos += len(sep)
        data = json.dumps(c, ensure_ascii=False, indent=indent).encode()
        spans.append((pos, pos + len(data)))
        parts.append(data)
        pos += len(data)
    parts.append(b"]")
    return b"".join(parts), spans


def consume(data, chunk=64):
    """What stage 1 does with the stream: parse each element; unreadable ones are reported back."""
    stream = RecordStream(io.BytesIO(data), lambda o: isinstance(o, dict) and "mapping" in o, chunk)
    kept, problems = [], []
    for item in stream:
        if isinstance(item, StreamProblem):
            problems.append(item)
            continue
        try:
            obj = json.loads(item.data)
        except ValueError as e:
            stream.damaged(item, "MALFORMED_JSON", str(e))
            continue
        if isinstance(obj, list):  # as stage 1 does: an array where a conversation belongs
            stream.damaged(item, "WRONG_SHAPE", "an array")
            continue
        assert data[item.offset:item.offset + len(item.data)] == item.data
        kept.append(obj)
    return kept, problems


@settings(max_examples=400, deadline=None)
@given(st.integers(3, 12), st.sampled_from([None, 1]), st.data())
def test_a_flipped_byte_costs_only_the_conversation_it_hits(n, indent, data):
    convs = chats(n)
    raw, spans = export_bytes(convs, indent)
    at = data.draw(st.integers(0, len(raw) - 1), label="flipped byte")
    new = data.draw(st.sampled_from(list(b'"{}[],:\\ x0') + [0xFF, 0xC3]), label="new byte")
    damaged = raw[:at] + bytes([new]) + raw[at + 1:]
    kept, problems = consume(damaged, chunk=data.draw(st.sampled_from([7, 64, 4096])))
    survivors = {c["conversation_id"] for c in kept if isinstance(c, dict) and "conversation_id" in c}
    for c, (s, e) in zip(convs, spans):
        if not s <= at < e:
            assert c["conversation_id"] in survivors, (at, new)
            assert c in kept
    for p in problems:  # every damaged range is reported where it is
        if p.code == "DAMAGED_RECORD":
            assert damaged[p.offset:p.offset + len(p.data)] == p.data


def test_quote_flip_keeps_every_later_conversation():
    convs = chats(19)
    raw, spans = export_bytes(convs, None)
    s, e = spans[1]
    at = raw.index(b'"title"', s)  # the opening quote of a key: the scanner's string parity flips
    damaged = raw[:at] + b"x" + raw[at + 1:]
    kept, problems = consume(damaged, chunk=1 << 20)
    assert [c["conversation_id"] for c in kept] == [f"c{i}" for i in range(19) if i != 1]
    (p,) = problems
    assert p.index == 1 and p.offset == s and p.data == damaged[s:e]


def test_extra_bracket_that_closes_the_array_early():
    convs = chats(5)
    raw, spans = export_bytes(convs, None)
    s, e = spans[2]
    at = raw.index(b", ", s)  # a separator inside conversation 2 becomes ']'
    damaged = raw[:at] + b"]" + raw[at + 1:]
    kept, problems = consume(damaged, chunk=1 << 20)
    assert [c["conversation_id"] for c in kept if "conversation_id" in c] == ["c0", "c1", "c3", "c4"]
    assert any(p.code == "DAMAGED_RECORD" and p.offset <= at for p in problems)


def test_damaged_export_through_the_cli(tmp_path, cli, vault_path):
    convs = chats(8)
    raw, spans = export_bytes(convs, None)
    s, e = spans[3]
    at = raw.index(b'"mapping"', s)
    src = tmp_path / "conversations.json"
    src.write_bytes(raw[:at] + b"{" + raw[at + 1:])
    proc = cli("ingest", str(src), "--stages", "1", db=vault_path)
    conn = apsw.Connection(str(vault_path))
    ids = [r[0] for r in conn.execute("SELECT conversation_id FROM conversations ORDER BY conversation_id")]
    assert ids == [f"c{i}" for i in range(8) if i != 3]
    ((code, raw_text, message),) = conn.execute("SELECT reason_code, raw_text, message FROM rejects").fetchall()
    assert code == "DAMAGED_RECORD" and raw_text.startswith('{"title": "Chat 3')
    assert f"bytes {s}–" in message
    assert "DAMAGED_RECORD" in proc.stderr and "record 3" in proc.stderr


# -- pathological content: bounded, or refused with a reason (config: import_limits) ---------------------

def _limits_config(tmp_path, **limits):
    import yaml

    f = tmp_path / "limits.yaml"
    f.write_text(yaml.safe_dump({"import_limits": limits}))
    return f


def _rows(db, sql):
    return apsw.Connection(str(db)).execute(sql).fetchall()


def test_too_many_parts_and_too_long_messages_are_rejected_alone(tmp_path, cli, vault_path):
    many = simple_chat("parts", "Parts", [("user", "a"), ("assistant", "ok")])
    many["mapping"]["parts-m0"]["message"]["content"]["parts"] = ["w"] * 5000
    long = simple_chat("long", "Long", [("user", "x" * 50_000), ("assistant", "fine")])
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps([many, long, simple_chat("ok", "Ok", [("user", "hi"), ("assistant", "yo")])]))
    cfg = _limits_config(tmp_path, max_parts_per_message=1000, max_message_chars=10_000)
    proc = cli("ingest", str(src), "--stages", "0,1", "--config", str(cfg), db=vault_path)
    got = _rows(vault_path, "SELECT record_index, reason_code, pointer FROM rejects ORDER BY record_index")
    assert got == [(0, "TOO_MANY_PARTS", "/mapping/parts-m0"), (1, "MESSAGE_TOO_LONG", "/mapping/long-m0")]
    assert "import_limits.max_parts_per_message" in proc.stderr
    # the rest of each conversation is kept
    assert _rows(vault_path, "SELECT COUNT(*) FROM conversations") == [(3,)]
    texts = {t for (t,) in _rows(vault_path, "SELECT text_raw FROM messages WHERE text_raw IS NOT NULL")}
    assert {"ok", "fine", "hi", "yo"} <= texts


def test_deep_nesting_and_huge_records_are_refused_with_a_reason(tmp_path, cli, vault_path):
    deep = simple_chat("deep", "Deep", [("user", "a")])
    text = json.dumps(deep)
    text = text[:-1] + ', "junk": ' + "[" * 5000 + "]" * 5000 + "}"
    big = json.dumps(simple_chat("big", "Big", [("user", "b" * 30000)]))
    src = tmp_path / "conversations.json"
    src.write_text("[" + text + ", " + big + ", " + json.dumps(simple_chat("ok", "Ok", [("user", "hi")])) + "]")
    cfg = _limits_config(tmp_path, max_record_bytes=20000)
    proc = cli("ingest", str(src), "--stages", "0,1", "--config", str(cfg), db=vault_path)
    got = _rows(vault_path, "SELECT record_index, reason_code FROM rejects ORDER BY record_index")
    assert got == [(0, "TOO_DEEP"), (1, "RECORD_TOO_LARGE")]
    assert "nest 5,001 deep" in proc.stderr and "max_record_bytes" in proc.stderr
    assert _rows(vault_path, "SELECT conversation_id FROM conversations") == [("ok",)]


@pytest.mark.slow
def test_a_ten_megabyte_word_finishes_with_default_limits(tmp_path, cli, vault_path):
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps([simple_chat("w", "Word", [("user", "x" * 4_000_000), ("assistant", "ok")])]))
    cli("ingest", str(src), db=vault_path, timeout=240)
    assert _rows(vault_path, "SELECT COUNT(*) FROM messages WHERE length(text_raw) = 4000000") == [(1,)]


def test_a_damaged_claude_export_keeps_the_other_conversations(tmp_path, cli, vault_path):
    """The Claude importer reads through the same resynchronising stream (P30)."""
    base = json.loads((SRC.parent / "tests" / "corpus" / "data" / "claude-conversations.json").read_text())
    convs = []
    for i in range(6):
        c = json.loads(json.dumps(base[2]))  # the fixture's plain conversation (the others test bad shapes)
        c["uuid"] = f"claude-{i}"
        c["name"] = f"Claude chat {i}"
        for j, m in enumerate(c["chat_messages"]):
            m["uuid"] = f"claude-{i}-m{j}"
        convs.append(c)
    raw, spans = export_bytes(convs, None)
    s, e = spans[2]
    at = raw.index(b'"chat_messages"', s)  # the key's opening quote: the scanner's string parity flips
    src = tmp_path / "conversations.json"
    src.write_bytes(raw[:at] + b"x" + raw[at + 1:])
    cli("ingest", str(src), "--stages", "0,1", db=vault_path, check=False)
    conn = apsw.Connection(str(vault_path))
    titles = sorted(t for (t,) in conn.execute("SELECT title FROM conversations"))
    assert titles == [f"Claude chat {i}" for i in range(6) if i != 2]
    codes = [c for (c,) in conn.execute("SELECT reason_code FROM rejects")]
    assert codes and set(codes) <= {"MALFORMED_JSON", "DAMAGED_RECORD"}
