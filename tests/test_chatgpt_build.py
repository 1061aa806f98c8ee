"""Stage-1 rules on single conversations (seed 001 §1.3–1.13 and docs/decisions.md D1–D9)."""

import orjson
import pytest

from chatgpt_fixtures import conversation, message, simple_chat
from kenning.config import load_config
from kenning.sources.chatgpt import RecordError, build_conversation, parse_record
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize, sha256_hex

CFG = load_config()
IDS = IdFactory(CFG.ids.id_namespace)


def build(conv, retained=None):
    return build_conversation(conv, CFG, IDS, "run-1", "key", retained)


def by_export(built):
    return {m["export_message_id"]: m for m in built.messages}


def test_node_is_message_object():
    b = build(simple_chat("c1", "t", [("user", "hello there"), ("assistant", "hi")]))
    m = by_export(b)["c1-m0"]
    node = orjson.loads(m["raw_message_json"])
    assert set(node) == {"id", "message", "parent", "children"}
    assert m["raw_message_json"] == canonicalize(node)
    assert m["raw_sha256"] == sha256_hex(m["raw_message_json"])
    assert b.conversation["raw_conversation_json"] == canonicalize(simple_chat("c1", "t", [("user", "hello there"), ("assistant", "hi")]))


def test_message_ids_namespaced():
    a = build(simple_chat("c1", "t", [("user", "x")]))
    b = build(simple_chat("c2", "t", [("user", "x")]))
    ra, rb = by_export(a)["client-created-root"], by_export(b)["client-created-root"]
    assert ra["message_id"] != rb["message_id"]
    assert ra["message_id"] == IDS.make("message", "c1", "client-created-root")
    for p in a.parts:
        m = next(m for m in a.messages if m["message_id"] == p["message_id"])
        assert p["part_id"] == IDS.make("part", m["message_id"], p["part_index"])


def test_conversation_without_id_gets_hash_id():
    conv = simple_chat("c1", "t", [("user", "x")])
    del conv["conversation_id"], conv["id"]
    b = build(conv)
    assert b.conversation["export_conversation_id"] is None
    assert b.conversation["conversation_id"] == IDS.make("conversation", sha256_hex(canonicalize(conv)))
    older = simple_chat("c9", "t", [("user", "x")])
    del older["conversation_id"]  # older exports carry only "id"
    assert build(older).conversation["conversation_id"] == "c9"


def test_null_message_root_is_stored():
    b = build(simple_chat("c1", "t", [("user", "x")]))
    root = by_export(b)["client-created-root"]
    assert (root["role"], root["content_type"], root["text_raw"], root["tree_path"]) == ("unknown", "empty", None, "0")
    assert not [w for w in b.warnings if w[0] == "UNKNOWN_ROLE"]


def test_eleven_siblings_order():
    kids = [f"k{i:02d}" for i in range(12)]
    nodes = [message("r", "user", "q", parent=None, children=kids, t=1.7e9)]
    nodes += [message(k, "assistant", f"answer {k}", parent="r", t=1.7e9 + 1) for k in kids]
    b = build(conversation("c", "t", nodes))
    ordered = sorted(b.messages, key=lambda m: m["order_index"])
    assert [m["order_index"] for m in ordered] == list(range(13))
    kid_rows = ordered[1:]
    assert [m["message_id"] for m in kid_rows] == sorted(m["message_id"] for m in kid_rows)  # siblings by message_id
    assert [m["tree_path"] for m in kid_rows] == [f"0/{i}" for i in range(12)]  # 0/10 after 0/9, not after 0/1


def test_tree_paths_parent_prefix_and_permutation():
    conv = conversation("c", "t", [
        message("r", "user", "q", parent=None, children=["b", "a"], t=1.7e9),
        message("a", "assistant", "A", parent="r", children=["a1"], t=1.7e9 + 1),
        message("b", "assistant", "B", parent="r", t=1.7e9 + 2),
        message("a1", "user", "A1", parent="a", t=1.7e9 + 3),
    ])
    b1 = build(conv)
    rows = {m["message_id"]: m for m in b1.messages}
    for m in b1.messages:
        if m["parent_id"]:
            parent = rows[m["parent_id"]]
            assert m["tree_path"].startswith(parent["tree_path"] + "/")
            assert m["order_index"] > parent["order_index"]
    shuffled = dict(conv, mapping=dict(reversed(list(conv["mapping"].items()))))
    shuffled["mapping"]["r"] = dict(shuffled["mapping"]["r"], children=["a", "b"])
    b2 = build(shuffled)
    key = lambda b: sorted((m["message_id"], m["tree_path"], m["order_index"]) for m in b.messages)
    assert key(b1) == key(b2)


def test_timestamp_quality():
    conv = conversation("c", "t", [
        message("r", "system", "", parent=None, children=["u"], t=None),          # no prior → missing
        message("u", "user", "hi", parent="r", children=["a"], t=1700000000.5),    # original
        message("a", "assistant", "yo", parent="u", children=["x"], t=None),       # imputed_parent
        message("x", "user", "more", parent="a", t="2023-11-14T22:20:00Z"),        # ISO string, original
        message("o", "user", "orphan", parent="gone", t=None),                     # a root later in order → prior
    ])
    rows = by_export(build(conv))
    assert (rows["r"]["timestamp_quality"], rows["r"]["created_at_utc"]) == ("missing", None)
    assert (rows["u"]["timestamp_quality"], rows["u"]["created_at_utc"]) == ("original", "2023-11-14T22:13:20.500Z")
    assert (rows["a"]["timestamp_quality"], rows["a"]["created_at_utc"]) == ("imputed_parent", "2023-11-14T22:13:20.500Z")
    assert rows["x"]["created_at_utc"] == "2023-11-14T22:20:00.000Z"
    o = rows["o"]
    before = [m for m in rows.values() if m["order_index"] < o["order_index"] and m["created_at_utc"]]
    if before:
        assert o["timestamp_quality"] == "imputed_prior"
        assert o["created_at_utc"] == max(before, key=lambda m: m["order_index"])["created_at_utc"]
    else:
        assert o["timestamp_quality"] == "missing"


def test_orphan_becomes_root_with_warning():
    conv = conversation("c", "t", [message("a", "user", "x", parent="missing-parent", t=1.7e9)])
    b = build(conv)
    m = by_export(b)["a"]
    assert m["parent_id"] is None and m["export_parent_id"] == "missing-parent"
    assert [w[0] for w in b.warnings] == ["ORPHAN_MESSAGE"]


def test_cycle_broken():
    conv = conversation("c", "t", [
        message("a", "user", "x", parent="b", t=1.7e9),
        message("b", "assistant", "y", parent="a", t=1.7e9),
        message("s", "user", "self", parent="s", t=1.7e9),
    ])
    b = build(conv)
    codes = sorted(w[0] for w in b.warnings)
    assert codes == ["PARENT_CYCLE_BROKEN", "PARENT_CYCLE_BROKEN"]
    assert sorted(m["order_index"] for m in b.messages) == [0, 1, 2]
    rows = {m["message_id"]: m for m in b.messages}
    for m in b.messages:
        if m["parent_id"]:
            assert m["tree_path"].startswith(rows[m["parent_id"]]["tree_path"] + "/")


def test_current_branch():
    conv = conversation("c", "t", [
        message("r", "user", "q", parent=None, children=["a1", "a2"], t=1.7e9),
        message("a1", "assistant", "first try", parent="r", t=1.7e9 + 1),
        message("a2", "assistant", "regenerated", parent="r", t=1.7e9 + 2),
    ], current_node="a1")
    rows = by_export(build(conv))
    assert (rows["r"]["is_current_branch"], rows["a1"]["is_current_branch"], rows["a2"]["is_current_branch"]) == (1, 1, 0)
    conv2 = dict(conv, current_node=None)
    rows2 = by_export(build(conv2))
    assert rows2["a2"]["is_current_branch"] == 1  # fallback: most recent child


def test_text_extraction_and_part_map():
    content = {"content_type": "multimodal_text", "parts": [
        "before 😀",
        {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc", "size_bytes": 10,
         "width": 1, "height": 1},
        {"content_type": "audio_transcription", "text": "spoken words", "direction": "in"},
    ]}
    conv = conversation("c", "t", [message("m", "user", None, parent=None, content=content, t=1.7e9,
                                           metadata={"attachments": [
                                               {"id": "file-abc", "name": "pic.png", "mime_type": "image/png"},
                                               {"id": "file-pdf", "name": "cv.pdf", "mime_type": "application/pdf", "size": 5}]})])
    b = build(conv)
    m = b.messages[0]
    assert m["content_type"] == "mixed"
    assert m["text_raw"] == "before 😀\n\nspoken words"
    part_map = orjson.loads(m["text_part_map_json"])
    texts = {p["part_index"]: p["text_content"] for p in b.parts}
    for entry in part_map:  # slices reproduce each part's text, "\n\n" exactly between them
        assert m["text_raw"][entry["char_start"]:entry["char_end"]] == texts[entry["part_index"]]
    assert [e["part_index"] for e in part_map] == [0, 2]
    types = [(p["part_type"], p["mime_type"], p["file_path"]) for p in b.parts]
    assert types == [("text", None, None), ("image", "image/png", "file-service://file-abc"),
                     ("text", None, None), ("file", "application/pdf", "cv.pdf")]
    assert m["attachment_count"] == 2
    assert orjson.loads(b.parts[2]["metadata_json"])["context_kind"] == "audio_transcription"


def test_part_classification():
    def one(content, **kw):
        conv = conversation("c", "t", [message("m", kw.pop("role", "assistant"), None, parent=None,
                                               content=content, t=1.7e9, **kw)])
        b = build(conv)
        return b.messages[0], b.parts

    m, parts = one({"content_type": "code", "language": "unknown", "text": "bio.update('User lives in Paris')"},
                   recipient="bio")
    assert parts[0]["part_type"] == "tool_call" and m["recipient"] == "bio"
    m, parts = one({"content_type": "text", "parts": ["User lives in Paris."]}, recipient="bio")
    assert parts[0]["part_type"] == "tool_call" and m["text_raw"] == "User lives in Paris."
    m, parts = one({"content_type": "tether_browsing_display", "result": "L0: page text", "summary": None,
                    "tether_id": None}, role="tool", name="browser")
    assert (parts[0]["part_type"], m["text_raw"], m["author_name"]) == ("tool_result", "L0: page text", "browser")
    profile = ("The user provided the following information about themselves.\nUser profile:\n"
               "```I'm a teacher in Lyon.```")
    m, parts = one({"content_type": "user_editable_context", "user_profile": profile,
                    "user_instructions": "The user provided the additional info about how they would like you to "
                                         "respond:\n```Be brief.```"}, role="user")
    assert m["text_raw"] == "I'm a teacher in Lyon.\n\nBe brief."
    meta = orjson.loads(parts[0]["metadata_json"])
    assert meta["context_kind"] == "user_editable_context"
    assert [m["text_raw"][s["char_start"]:s["char_end"]] for s in meta["sections"]] == ["I'm a teacher in Lyon.", "Be brief."]
    m, parts = one({"content_type": "thoughts", "thoughts": [{"summary": "S1", "content": "C1"},
                                                             {"summary": "S2", "content": "C2"}]})
    assert m["text_raw"] == "C1\n\nC2" and orjson.loads(parts[0]["metadata_json"])["summaries"] == ["S1", "S2"]
    m, parts = one({"content_type": "reasoning_recap", "content": "Thought for 12s"})
    assert parts[0]["part_type"] == "other" and m["text_raw"] == "Thought for 12s"
    m, parts = one({"content_type": "model_editable_context", "model_set_context": "1. User lives in Berlin"})
    assert orjson.loads(parts[0]["metadata_json"])["context_kind"] == "model_memory"
    m, parts = one({"content_type": "foo_widget", "blob": 1})
    assert (parts[0]["part_type"], m["content_type"], m["text_raw"]) == ("other", "unknown", None)
    m, parts = one({"content_type": "text", "parts": []})
    assert (parts, m["content_type"]) == ([], "empty")
    m, parts = one({"content_type": "system_error", "name": "tool_error", "text": "Timeout"}, role="tool")
    assert parts[0]["part_type"] == "tool_result"


def test_unknown_role_and_hidden_flag():
    conv = conversation("c", "t", [
        message("a", "Critic", "x", parent=None, children=["b"], t=1.7e9),
        message("b", "system", "", parent="a", t=None),
    ])
    conv["mapping"]["b"]["message"]["weight"] = 0.0
    b = build(conv)
    rows = by_export(b)
    assert rows["a"]["role"] == "unknown" and [w[0] for w in b.warnings] == ["UNKNOWN_ROLE"]
    assert rows["b"]["is_hidden"] == 1 and rows["a"]["is_hidden"] == 0
    assert rows["b"]["text_raw"] == "" and rows["b"]["content_type"] == "text"


def test_bad_shapes_raise_record_errors():
    with pytest.raises(RecordError) as e:
        build([1, 2])
    assert e.value.code == "WRONG_SHAPE"
    with pytest.raises(RecordError) as e:
        build({"title": "x"})
    assert e.value.code == "NO_MESSAGES"
    with pytest.raises(RecordError) as e:
        build({"title": "x", "mapping": [1]})
    assert e.value.pointer == "/mapping"
    b = build({"title": "x", "id": "c", "mapping": {"bad": 3, "ok": message("ok", "user", "hi", parent=None, t=1.7e9)[1]}})
    assert [r[1] for r in b.node_rejects] == ["WRONG_SHAPE"] and len(b.messages) == 1


def test_parse_record_fallbacks():
    assert parse_record(b'{"n": 12345678901234567890123}')[0] == {"n": 12345678901234567890123}
    obj, repairs = parse_record(b'{"t": "a\\ud83d"}')
    assert obj == {"t": "a\ud83d"} and repairs == []
    obj, repairs = parse_record('{"t": "caf\xe9"}'.encode("latin-1"))
    assert obj == {"t": "caf\ufffd"} and repairs[0][0] == "INVALID_UTF8"
    for bad in (b'{"a": NaN}', b'{"a": 1,,}', b"{"):
        with pytest.raises(RecordError):
            parse_record(bad)


def test_retained_nodes_stay_in_tree():
    first = simple_chat("c", "t", [("user", "a"), ("assistant", "b")])
    stored = {e: n for e, n in first["mapping"].items()}
    newer = simple_chat("c", "t", [("user", "a")])
    b = build(newer, retained=stored)
    assert b.retained == 1 and {m["export_message_id"] for m in b.messages} == set(stored)


def test_spliced_conversation_json_equals_plain_jcs():
    conv = simple_chat("c1", "t😀", [("user", "a 1.0, b"), ("assistant", "é\ue000")])
    conv["mapping"]["odd-node"] = "not a node"
    conv["weight"] = 1.5e16
    conv["mapping"]["\ue001"] = conv["mapping"].pop("c1-m1")
    b = build(conv)
    assert b.conversation["raw_conversation_json"] == canonicalize(conv)
