"""Resilient import (issue 23 part 3): one damaged byte costs at most the conversation it sits in."""

import io
import json

import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgpt_fixtures import simple_chat
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
