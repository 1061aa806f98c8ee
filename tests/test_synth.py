"""Tests for the synthetic ChatGPT export generator (kenning.bench.synth)."""

from __future__ import annotations

import datetime as dt
import json
import re
import tracemalloc
import zipfile

import orjson
import pytest

from kenning.bench import synth
from kenning.bench.synth import message_text, split_fences

SEED = 7


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def _messages(convs):
    for ci, c in enumerate(convs):
        for nid, node in c["mapping"].items():
            if node["message"] is not None:
                yield ci, c, nid, node["message"]


def _texts(convs, role=None, outside_code=False):
    out = []
    for ci, c, nid, m in _messages(convs):
        if role and m["author"]["role"] != role:
            continue
        if m["content"]["content_type"] not in ("text", "multimodal_text"):
            continue
        t = message_text(m)
        if outside_code:
            t = "".join(s for s, code in split_fences(t) if not code)
        out.append((ci, nid, m, t))
    return out


def _by_id(convs):
    idx = {}
    for ci, c, nid, m in _messages(convs):
        idx[nid] = (ci, c, m)
    return idx


def _path_to_root(mapping, nid):
    path = []
    while nid is not None and nid in mapping:
        path.append(nid)
        nid = mapping[nid]["parent"]
    return path


def _first_time(texts, needle):
    for ci, nid, m, t in texts:
        if needle in t:
            ct = m["create_time"]
            assert isinstance(ct, float), (needle, ct)
            return ct
    raise AssertionError(f"not found: {needle!r}")


@pytest.fixture(scope="module")
def convs8():
    return list(synth.iter_conversations(8, SEED))


@pytest.fixture(scope="module")
def manifest8():
    return synth.build_manifest(8, SEED)


@pytest.fixture(scope="module")
def convs60():
    return list(synth.iter_conversations(60, SEED))


# ----------------------------------------------------------------------------------------------
# determinism + basic format
# ----------------------------------------------------------------------------------------------
def test_determinism_byte_identical(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    sa = synth.write_export(a, 40, 123)
    synth.write_export(b, 40, 123)
    synth.write_export(c, 40, 124)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    assert (tmp_path / "a.manifest.json").read_bytes() == (tmp_path / "b.manifest.json").read_bytes()
    assert sa["conversations"] == 40
    assert sa["bytes"] == len(a.read_bytes()) == sa["file_bytes"]
    # iterator == file content
    assert orjson.loads(a.read_bytes()) == [orjson.loads(orjson.dumps(x)) for x in synth.iter_conversations(40, 123)]


def test_valid_json_and_tree_consistency(tmp_path):
    out = tmp_path / "export.json"
    stats = synth.write_export(out, 60, SEED)
    data = json.loads(out.read_text(encoding="utf-8"))  # stdlib parser: strictly valid JSON
    assert isinstance(data, list) and len(data) == 60
    n_msgs = 0
    orphans = []
    for c in data:
        assert isinstance(c, dict) and isinstance(c["mapping"], dict)
        mapping = c["mapping"]
        assert c["current_node"] in mapping
        roots = [k for k, v in mapping.items() if v["parent"] is None]
        assert len(roots) == 1, roots
        assert mapping[roots[0]]["message"] is None
        for nid, node in mapping.items():
            assert node["id"] == nid
            if node["message"] is not None:
                n_msgs += 1
                assert node["message"]["id"] == nid
            for ch in node["children"]:
                assert mapping[ch]["parent"] == nid
            assert len(set(node["children"])) == len(node["children"])
            p = node["parent"]
            if p is not None:
                if p in mapping:
                    assert nid in mapping[p]["children"]
                else:
                    orphans.append(nid)
        assert isinstance(c["create_time"], float)
        for key in ("title", "update_time", "moderation_results", "plugin_ids"):
            assert key in c
    assert len(orphans) == 1  # only the deliberate one
    assert stats["messages"] == n_msgs


def test_top_level_order_update_time_desc(convs60):
    keys = [c["update_time"] if c["update_time"] is not None else c["create_time"] for c in convs60]
    assert keys == sorted(keys, reverse=True)


def test_small_n_and_zero(tmp_path):
    assert list(synth.iter_conversations(0, 1)) == []
    out = tmp_path / "zero.json"
    s = synth.write_export(out, 0, 1)
    assert orjson.loads(out.read_bytes()) == [] and s["conversations"] == 0
    three = list(synth.iter_conversations(3, 1))
    assert len(three) == 3
    m = synth.build_manifest(3, 1)
    assert len(m["scenarios"]) == 3


def test_new_style_conversation_keys(convs8):
    full = [c for c in convs8 if "conversation_id" in c]
    assert full
    c = full[0]
    assert c["conversation_id"] == c["id"]
    expected = {"moderation_results": [], "plugin_ids": None, "gizmo_id": None, "conversation_template_id": None,
                "is_archived": False, "blocked_urls": [], "conversation_origin": None, "async_status": None,
                "disabled_tool_ids": [], "is_do_not_remember": False, "memory_scope": "global_enabled"}
    for k, v in expected.items():
        assert c[k] == v, k
    for k in ("safe_urls", "voice", "default_model_slug"):
        assert k in c
    m = next(n["message"] for n in c["mapping"].values() if n["message"] and n["message"]["author"]["role"] == "user")
    for k in ("id", "author", "create_time", "update_time", "content", "status", "end_turn", "weight", "metadata",
              "recipient", "channel"):
        assert k in m
    assert m["status"] == "finished_successfully"
    assert set(m["author"]) == {"role", "name", "metadata"}


# ----------------------------------------------------------------------------------------------
# every case present with n = 8
# ----------------------------------------------------------------------------------------------
def test_tree_cases(convs8):
    roots = {}
    for c in convs8:
        r = [k for k, v in c["mapping"].items() if v["parent"] is None][0]
        roots[r] = c
    assert "client-created-root" in roots
    uuid_re = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    assert any(uuid_re.match(r) for r in roots), "old-style UUID root"
    for r, c in roots.items():
        assert c["mapping"][r]["message"] is None

    hidden = [m for _, _, _, m in _messages(convs8)
              if m["author"]["role"] == "system" and m["content"].get("parts") == [""]
              and m["create_time"] is None and m["weight"] == 0.0
              and m["metadata"].get("is_visually_hidden_from_conversation") is True]
    assert hidden

    def kids(c, nid, role):
        return [k for k in c["mapping"][nid]["children"]
                if (c["mapping"][k]["message"] or {}).get("author", {}).get("role") == role]

    regen = edited = big = unsorted = 0
    for c in convs8:
        for nid, node in c["mapping"].items():
            if len(kids(c, nid, "assistant")) >= 2:
                regen += 1
            if len(kids(c, nid, "user")) >= 2:
                edited += 1
            if len(node["children"]) >= 11:
                big += 1
            if node["children"] != sorted(node["children"]):
                unsorted += 1
    assert regen >= 2 and edited >= 1 and big >= 1 and unsorted >= 1

    # current_node on a non-first branch somewhere
    nonfirst = False
    for c in convs8:
        path = _path_to_root(c["mapping"], c["current_node"])
        for nid in path:
            p = c["mapping"][nid]["parent"]
            if p is not None and c["mapping"][p]["children"].index(nid) > 0:
                nonfirst = True
    assert nonfirst
    # the 12-children node: current branch goes through child #11 (index 10 -> string-sort trap)
    for c in convs8:
        for nid, node in c["mapping"].items():
            if len(node["children"]) >= 11:
                path = _path_to_root(c["mapping"], c["current_node"])
                chosen = [k for k in node["children"] if k in path]
                assert chosen and node["children"].index(chosen[0]) == 10

    # orphan: parent id missing from mapping, chain below it fully null-timed
    orphans = [(c, nid) for c in convs8 for nid, n in c["mapping"].items()
               if n["parent"] is not None and n["parent"] not in c["mapping"]]
    assert len(orphans) == 1
    c, o = orphans[0]
    chain = [o]
    while c["mapping"][chain[-1]]["children"]:
        chain.append(c["mapping"][chain[-1]]["children"][0])
    assert len(chain) >= 2
    assert all(c["mapping"][k]["message"]["create_time"] is None for k in chain)

    # shuffled mapping key order: a child listed before its parent
    def shuffled(c):
        pos = {k: i for i, k in enumerate(c["mapping"])}
        return any(n["parent"] in pos and pos[n["parent"]] > pos[k] for k, n in c["mapping"].items())
    assert any(shuffled(c) for c in convs8)


def test_conversation_level_cases(convs8):
    assert any("id" in c and "conversation_id" not in c for c in convs8)
    assert any("id" not in c and "conversation_id" not in c for c in convs8)
    assert any(c["title"] is None for c in convs8)
    assert any(c["update_time"] is None for c in convs8)
    times = [c["create_time"] for c in convs8]
    assert max(times) - min(times) >= 90 * 86400
    assert any(c["default_model_slug"] for c in convs8 if "default_model_slug" in c)


def test_timestamp_cases(convs8):
    msgs = list(_messages(convs8))
    floats = [m["create_time"] for _, _, _, m in msgs if isinstance(m["create_time"], float)]
    assert any(abs(t * 1e6 - round(t * 1e6)) < 1e-3 and round(t % 1, 6) not in (0.0,) for t in floats)
    assert any(round(t % 1, 4) == 0.9996 for t in floats), "rounding edge x.9996"
    isos = [m["create_time"] for _, _, _, m in msgs if isinstance(m["create_time"], str)]
    assert isos
    for s in isos:
        assert dt.datetime.fromisoformat(s.replace("Z", "+00:00")).tzinfo is not None
    # null create_time on a child whose parent has a time
    found_child = found_rootlevel = False
    for ci, c, nid, m in msgs:
        if m["create_time"] is not None or m["author"]["role"] != "user":
            continue
        if m["content"]["content_type"] != "text":
            continue
        p = c["mapping"][nid]["parent"]
        if p not in c["mapping"]:
            continue
        pm = c["mapping"][p]["message"]
        if pm is None:
            found_rootlevel = True
        elif isinstance(pm["create_time"], float):
            found_child = True
    assert found_child and found_rootlevel


def test_roles_and_tools(convs8):
    roles = {m["author"]["role"] for _, _, _, m in _messages(convs8)}
    assert {"user", "assistant", "system", "tool"} <= roles
    assert "critic" in roles
    tool_names = {m["author"]["name"] for _, _, _, m in _messages(convs8) if m["author"]["role"] == "tool"}
    assert {"python", "browser", "dalle.text2im", "bio", "web.run"} <= tool_names
    code_recipients = {m["recipient"] for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "code"}
    assert {"python", "bio", "dalle.text2im", "web.run", "browser"} <= code_recipients
    bio = [m for _, _, _, m in _messages(convs8) if m["recipient"] == "bio"]
    assert bio and "User lives in Paris and works at Globex." in message_text(bio[0])


def test_content_types(convs8):
    cts = {m["content"]["content_type"] for _, _, _, m in _messages(convs8)}
    need = {"text", "multimodal_text", "code", "execution_output", "tether_browsing_display", "tether_quote",
            "sonic_webpage", "system_error", "user_editable_context", "model_editable_context", "thoughts",
            "reasoning_recap", "computer_output", "foo_widget"}
    assert need <= cts, need - cts
    part_types = {p["content_type"] for _, _, _, m in _messages(convs8)
                  if m["content"]["content_type"] == "multimodal_text" for p in m["content"]["parts"]
                  if isinstance(p, dict)}
    assert {"image_asset_pointer", "audio_transcription", "audio_asset_pointer",
            "real_time_user_audio_video_asset_pointer"} <= part_types
    img = next(p for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "multimodal_text"
               for p in m["content"]["parts"] if isinstance(p, dict) and p["content_type"] == "image_asset_pointer")
    assert img["asset_pointer"].startswith("file-service://file-") and "fovea" in img and "dalle" in img["metadata"]
    mixed = [m for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "multimodal_text"
             and any(isinstance(p, str) for p in m["content"]["parts"])
             and any(isinstance(p, dict) for p in m["content"]["parts"])]
    assert mixed
    assert any(m["content"]["content_type"] == "text" and m["content"]["parts"] == []
               for _, _, _, m in _messages(convs8))
    uec = next(m for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "user_editable_context")
    assert uec["author"]["role"] == "user"
    assert uec["content"]["user_profile"].startswith("The user provided the following information about themselves.")
    assert "User profile:\n```I'm a product engineer living in" in uec["content"]["user_profile"]
    assert uec["content"]["user_instructions"].startswith("The user provided the additional info")
    mec = next(m for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "model_editable_context")
    assert re.match(r"1\. \[\d{4}-\d{2}-\d{2}\]\. User lives in", mec["content"]["model_set_context"])
    th = next(m for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "thoughts")
    t0 = th["content"]["thoughts"][0]
    assert set(t0) == {"summary", "content", "chunks", "finished"} and "source_analysis_msg_id" in th["content"]
    rr = next(m for _, _, _, m in _messages(convs8) if m["content"]["content_type"] == "reasoning_recap")
    assert re.fullmatch(r"Thought for \d+s", rr["content"]["content"])


def test_text_features(convs8):
    texts = _texts(convs8)
    alltext = "\n".join(t for *_, t in texts)
    # emoji (astral + ZWJ family) and combining marks before an entity on the same line
    line = next(ln for t in (x[3] for x in texts) for ln in t.splitlines() if "👩‍👩‍👧" in ln)
    assert "🎉" in line and "Zoe\u0308" in line and "A\u030angstro\u0308m" in line
    assert line.index("\u0308") < line.index("Anna")
    assert any(ord(ch) > 0xFFFF for ch in line)
    # fences
    blocks = [seg for *_, t in texts for seg, code in split_fences(t)
              if code and seg.startswith("```python\n") and seg.rstrip().endswith("\n```")]
    pys = [b for b in blocks
           if re.search(r"[\w.]+@[\w-]+\.\w+", b) and "https://" in b and re.search(r"\d{4}-\d{2}-\d{2}", b)]
    assert pys, "closed python fence with email, URL and date"
    assert "```c++\n" in alltext and "````markdown\n" in alltext and "~~~yaml\n" in alltext
    unclosed = [t for *_, t in texts if split_fences(t)[-1][1] and not
                re.search(r"^ {0,3}(```|~~~)\s*$", split_fences(t)[-1][0].splitlines()[-1])]
    assert unclosed
    assert re.search(r"^ {1,3}> .*\b(Priya Sharma|Phoenix Lee|Anna)\b", alltext, re.M)
    assert "【11†source】" in alltext
    assert "\ue200cite\ue202turn0search0\ue201" in alltext
    assert re.search(r"\[[^\]]+\]\(https?://[^)]+\)", alltext)


DETECTOR_BAIT = [
    "ops@example.org", "priya.sharma@acme-corp.com",
    "https://grafana.acme-corp.com/d/phoenix?orgId=1&from=now-6h#panel-4", "doi:10.1000/xyz123",
    "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "192.168.001.010",
    "2001:db8:85a3::8a2e:370:7334", "+49 30 1234567", "(555) 123-4567", "555.123.4567",
    "/var/lib/phoenix/runs/3f2504e0-4f89-11d3-9a0c-0305e82c3301/output.log",
    "C:\\Users\\Kenning\\Documents\\phoenix\\notes.docx", "example.org", "#phoenix-incident", "@priya_dev",
    "CVE-2021-44228", "arXiv:2106.09685", "0000-0002-1825-0097", "https://example.org/status", "foo_bar()",
    "self.x",
]


def test_detector_bait_outside_code(convs8):
    user = "\n".join(t for *_, t in _texts(convs8, "user", outside_code=True))
    asst = "\n".join(t for *_, t in _texts(convs8, "assistant", outside_code=True))
    for s in DETECTOR_BAIT:
        assert s in user, s
    for s in ("ops@example.org", "foo_bar()", "https://grafana.acme-corp.com/d/phoenix?orgId=1&from=now-6h#panel-4"):
        assert s in asst, s


def test_lexicon_cases(convs8):
    user = _texts(convs8, "user", outside_code=True)
    asst = _texts(convs8, "assistant")
    phx = re.compile(r"(?<![A-Za-z])(Project Phoenix|ProjectPhoenix|PHX|Phx)(?![A-Za-z])")
    hits = [(ci, m.group(0)) for ci, _, _, t in user for m in phx.finditer(t)]
    assert len(hits) >= 3 and len({ci for ci, _ in hits}) >= 2
    assert {"PHX", "Phx"} <= {v for _, v in hits}
    assert not any("Quantum Ledger" in t for *_, t in _texts(convs8, "user"))
    assert any("Quantum Ledger" in t for *_, t in asst)
    nj = {ci for ci, _, _, t in _texts(convs8, "user") if "Nightjar" in t}
    assert len(nj) == 1 and sum(t.count("Nightjar") for *_, t in _texts(convs8, "user")) >= 3
    in_code = out_code = 0
    for *_, t in _texts(convs8):
        for seg, code in split_fences(t):
            if code:
                in_code += seg.count("StreamMerger")
            else:
                out_code += seg.count("StreamMerger")
    assert in_code > out_code >= 1
    assert sum(t.count("USA") for *_, t in user) >= 2
    assert any('"Blue Garden"' in t for *_, t in user)
    assert any("Acme Corp." in t for *_, t in user)
    assert any("Phoenix Lee" in t for *_, t in user)
    assert sum(t.count("Agenda for the Weekly Sync:") for *_, t in user) >= 3
    assert sum(t.count("Weekly Sync") for *_, t in user) == sum(t.count("Agenda for the Weekly Sync:") for *_, t in user)
    assert len({ci for ci, _, _, t in user if re.search(r"\bMarch\b", t)}) >= 2


def test_time_expression_cases(convs8):
    user = _texts(convs8, "user")
    alltext = "\n".join(t for *_, t in user)
    for s in ("yesterday", "3 days ago", "the sunday before 25 May", "March 2024", "March 15, 2024", "in 2021"):
        assert s in alltext, s
    assert re.search(r"(?i)\blast week\b", alltext)
    assert re.search(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\b", alltext)
    assert re.search(r"(?<![\dT:-])\d{4}-\d{2}-\d{2}(?![\dT])", alltext)
    rel_null = [m for _, _, m, t in user if "3 days ago" in t]
    assert rel_null and rel_null[0]["create_time"] is None
    # a date inside a code fence
    assert any(re.search(r"\d{4}-\d{2}-\d{2}", seg) for *_, t in user for seg, code in split_fences(t) if code)
    # date ~5 chars before a fact and another ~300 chars after it in the same message
    msg = next(t for *_, t in user if "I joined the Phoenix steering group" in t)
    i_fact = msg.index("I joined the Phoenix steering group")
    dates = [m for m in re.finditer(r"\d{4}-\d{2}-\d{2}", msg)]
    assert len(dates) == 2
    assert i_fact - dates[0].end() == 5
    assert 250 <= dates[1].start() - (i_fact + len("I joined the Phoenix steering group")) <= 350


def test_fact_lifecycle_chronology(convs8):
    user = _texts(convs8, "user")
    t_berlin = _first_time(user, "I've lived in Berlin since 2019.")
    t_paris = next(m["create_time"] for _, _, m, t in user if "I moved to Paris in March 2023." in t)
    assert isinstance(t_paris, str)  # that message carries the ISO-string timestamp
    t_paris = dt.datetime.fromisoformat(t_paris.replace("Z", "+00:00")).timestamp()
    t_neg = _first_time(user, "Since April 2023 I don't live in Berlin anymore.")
    t_globex = _first_time(user, "In January 2024 I started working at Globex.")
    assert t_berlin < t_paris < t_neg < t_globex
    assert _first_time(user, "I work at Acme Corp.") < t_globex
    assert _first_time(user, "I run every morning") < _first_time(user, "I stopped running")
    assert _first_time(user, "My sister lives in Porto.") < _first_time(user, "I meant Lisbon, not Porto.")
    assert _first_time(user, "I love my job") < _first_time(user, "I hate my job now.")
    assert _first_time(user, "I'm afraid of flying") < _first_time(user, "I'm no longer afraid of flying")
    alltext = "\n".join(t for *_, t in user)
    for s in ("I no longer eat meat", "I used to play guitar", "until June 2024", "During December 2022 I was in Lisbon",
              "Should I learn Rust?", "I plan to learn Japanese next year", "I love hiking", "I hate cilantro",
              "My sister Anna lives in Lisbon.", "My partner Sam works at Initech", "My colleague Priya",
              "my friend Tom", "scratch that", "I don't really live there anymore"):
        assert s in alltext, s
    assert alltext.count("Actually, that's not true.") >= 2
    ham = [ci for ci, _, _, t in user if "On 2018-06-01 I lived in Hamburg" in t]
    mun = [ci for ci, _, _, t in user if "On 2018-06-01 I lived in Munich" in t]
    assert ham and mun and ham[0] != mun[0]
    # duplicate fact with identical timestamps
    dups = {}
    for _, nid, m, t in user:
        if "I have two kids, Mia and Leo." in t:
            dups.setdefault(m["create_time"], []).append(nid)
    assert any(len(v) == 2 for v in dups.values())


def test_assistant_claims(convs8):
    for c in convs8:
        for nid, node in c["mapping"].items():
            m = node["message"]
            if m and "You mentioned you live in Paris" in message_text(m):
                nxt = node["children"][0]
                assert "Yes, I live in Paris now." in message_text(c["mapping"][nxt]["message"])
                break
        else:
            continue
        break
    else:
        raise AssertionError("corroborated assistant claim missing")
    asst = "\n".join(t for *_, t in _texts(convs8, "assistant"))
    assert "Since you're based in Munich" in asst
    user = "\n".join(t for *_, t in _texts(convs8, "user"))
    assert "Munich" in user and "I live in Munich" not in user


def test_self_statements(convs8, manifest8):
    user = "\n".join(t for *_, t in _texts(convs8, "user"))
    ss = manifest8["self_statements"]
    sids = {e["sid"] for e in ss}
    assert len(sids) >= 40
    for e in ss:
        assert e["text"] in user
        assert e["polarity"] in ("affirm", "deny")
        assert e["scope"] in ("state", "ongoing", "habitual", "past", "transitional")
    groups = {}
    for e in ss:
        if e["paraphrase_group"]:
            groups.setdefault(e["paraphrase_group"], set()).add(e["sid"])
    assert sum(1 for v in groups.values() if len(v) >= 2) >= 4
    by_sid = {e["sid"]: e for e in ss}
    contradictions = [(e["sid"], o) for e in ss for o in e["contradicts"]]
    assert len(contradictions) >= 4
    for a, b in contradictions:  # contradicting statement is made later
        ta, tb = by_sid[a]["create_time"], by_sid[b]["create_time"]
        if isinstance(ta, str):
            ta = dt.datetime.fromisoformat(ta.replace("Z", "+00:00")).timestamp()
        if isinstance(tb, str):
            tb = dt.datetime.fromisoformat(tb.replace("Z", "+00:00")).timestamp()
        assert ta > tb, (a, b)
    for s in ("I'm usually patient with my kids, but lately I've been snapping at them.", "I am not a morning person",
              "I value honesty more than comfort", "I think I'm bad at saying no.", "I'm a patient person.",
              "I am patient."):
        assert s.rstrip(".") in user


# ----------------------------------------------------------------------------------------------
# manifest
# ----------------------------------------------------------------------------------------------
def _check_manifest(convs, man):
    idx = _by_id(convs)
    n_checked = 0
    for section in ("facts", "self_statements", "time_expressions", "detector_bait"):
        assert man[section], section
        for e in man[section]:
            assert e["message_id"] in idx, (section, e)
            ci, c, m = idx[e["message_id"]]
            assert e["conversation_index"] == ci
            assert e["conversation_id"] == c.get("conversation_id", c.get("id"))
            assert e["text"] in message_text(m), (section, e["text"])
            assert m["author"]["role"] == e["role"]
            n_checked += 1
    for case, entries in man["cases"].items():
        for e in entries:
            ci = e["conversation_index"]
            assert 0 <= ci < len(convs)
            if e["message_id"] is not None:
                assert e["message_id"] in convs[ci]["mapping"], case
    for s in man["scenarios"]:
        c = convs[s["index"]]
        assert c["title"] == s["title"] and c["create_time"] == s["create_time"]
    return n_checked


def test_manifest_points_at_real_messages(convs8, manifest8):
    assert _check_manifest(convs8, manifest8) > 100
    flags = set(manifest8["case_flags"])
    for f in ("orphan_node", "node_with_12_children", "regenerated_assistant_reply", "edited_user_message",
              "iso_string_create_time", "citation_marker_pua", "conversation_without_any_id", "bio_memory_write"):
        assert f in flags
    facts = {e["expected"]["case"] for e in manifest8["facts"]}
    for f in ("residence_since", "residence_change", "employment_undated", "job_change_dated", "negation_dated",
              "negation_ambiguous", "retraction_unique", "retraction_after_two_facts", "retraction_scratch_that",
              "correction", "habit_stopped", "past_habit", "until_hint", "during_interval", "question", "intention",
              "preference", "relationship", "assistant_claim_corroborated", "assistant_claim_uncorroborated",
              "assistant_memory_write", "conflicting_residence_same_date", "duplicate_same_time"):
        assert f in facts, f
    paris = next(e for e in manifest8["facts"] if e["expected"]["case"] == "residence_change")
    assert paris["expected"]["object"] == "Paris" and paris["expected"]["valid_from"] == "2023-03"
    lex = manifest8["lexicon"]
    rej = {e["term"]: e for e in lex["expected_rejected"]}
    assert {e["reason"] for e in rej.values()} == {"assistant_only", "single_conversation", "mostly_in_code",
                                                    "month_name", "repeated_context", "stoplisted_acronym"}
    assert rej["Quantum Ledger"]["counts"]["user_mentions"] == 0
    assert rej["Quantum Ledger"]["counts"]["assistant_mentions"] >= 2
    assert rej["Nightjar"]["counts"]["user_conversations"] == 1
    assert rej["Weekly Sync"]["counts"]["user_distinct_left_contexts"] == 1
    sel = {e["term"]: e for e in lex["expected_selected"]}
    assert sel["Project Phoenix"]["counts"]["user_mentions"] >= 3
    assert sel["Project Phoenix"]["counts"]["user_conversations"] >= 2


def test_manifest_with_filler_and_file(tmp_path, convs60):
    out = tmp_path / "bench.json"
    synth.write_export(out, 60, SEED)
    man = orjson.loads((tmp_path / "bench.manifest.json").read_bytes())
    assert man == orjson.loads(orjson.dumps(synth.build_manifest(60, SEED)))
    assert _check_manifest(convs60, man) > 100
    # filler sprinkles respect the persona timeline
    move = dt.datetime(2023, 3, 1, tzinfo=dt.timezone.utc).timestamp()
    for e in man["facts"]:
        if e["expected"]["case"] != "sprinkled":
            continue
        if e["text"] == "I live in Berlin.":
            assert e["create_time"] < move
        if e["text"] == "I live in Paris.":
            assert e["create_time"] > move


def test_custom_timeline_is_consistent():
    convs = list(synth.iter_conversations(20, 3, start="2020-01-01", months=30))
    man = synth.build_manifest(20, 3, start="2020-01-01", months=30)
    _check_manifest(convs, man)
    times = [c["create_time"] for c in convs]
    lo = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    assert min(times) >= lo
    assert any("since 2017" in t for *_, t in _texts(convs, "user"))


# ----------------------------------------------------------------------------------------------
# zip + streaming + size distribution
# ----------------------------------------------------------------------------------------------
def test_zip_output(tmp_path):
    zp = tmp_path / "export.zip"
    jp = tmp_path / "plain.json"
    stats = synth.write_export(zp, 25, 99)
    synth.write_export(jp, 25, 99)
    assert (tmp_path / "export.manifest.json").exists()
    with zipfile.ZipFile(zp) as zf:
        names = set(zf.namelist())
        assert {"conversations.json", "user.json", "chat.html"} <= names
        raw = zf.read("conversations.json")
        assert "email" in orjson.loads(zf.read("user.json"))
    assert raw == jp.read_bytes()
    assert len(raw) == stats["bytes"]
    assert orjson.loads(raw) == orjson.loads(orjson.dumps(list(synth.iter_conversations(25, 99))))
    zp2 = tmp_path / "again.zip"
    synth.write_export(zp2, 25, 99)
    assert zp2.read_bytes() == zp.read_bytes()  # zip output is deterministic too
    forced = tmp_path / "forced.bin"
    synth.write_export(forced, 3, 1, zip_output=True)
    assert zipfile.is_zipfile(forced)


@pytest.mark.slow
def test_streaming_memory_is_flat(tmp_path):
    out = tmp_path / "big.json"
    tracemalloc.start()
    try:
        stats = synth.write_export(out, 2000, 5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = out.stat().st_size
    assert stats["conversations"] == 2000 and stats["bytes"] == size
    assert size > 20_000_000
    assert peak < size / 8, (peak, size)


def test_size_distribution(convs60):
    counts = [sum(1 for n in c["mapping"].values() if n["message"]) for c in convs60]
    mean = sum(counts) / len(counts)
    assert 10 <= mean <= 35
    assert max(counts) >= 2 * mean  # heavy tail
    lens = [len(t) for *_, t in _texts(convs60, "assistant")]
    assert any(2000 <= n <= 6500 for n in lens) and any(n > 4000 for n in lens)
    titles = {c["title"] for c in convs60}
    assert len(titles) >= 25
