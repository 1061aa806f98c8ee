"""Deterministic synthetic ChatGPT export generator (test + benchmark corpus).

Produces a realistic ``conversations.json`` (the file inside a ChatGPT data export .zip) for one
coherent persona, deliberately containing the tricky cases later pipeline stages must handle
(branching trees, orphans, null / string timestamps, odd content types, detector bait, lexicon
traps, dated facts and their lifecycle, self-statements).  A manifest records the ground truth of
everything that was injected.

Public API::

    iter_conversations(n_conversations, seed, *, start="2022-09-01", months=18) -> Iterator[dict]
    write_export(out_path, n_conversations, seed, *, zip_output=None, **kw) -> dict
    build_manifest(n_conversations, seed, **kw) -> dict
    message_text(message) -> str        # helper: all human-readable text of one message
    split_fences(text) -> list[(str, bool)]   # helper: markdown text split into (segment, in_code)

Only the standard library and ``orjson`` are used.  All randomness comes from
``random.Random`` instances seeded from ``seed`` (never the global RNG, never the clock).

Layout of the output: the first ``min(n, 8)`` generated conversations are fixed *scenario*
conversations (S0..S7) that carry every injected case; the rest are varied generic *filler*
conversations.  The top-level array is ordered by ``update_time`` descending (conversations
without ``update_time`` are placed by ``create_time``), like real exports, so the scenarios are
interleaved with filler in the output.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import random
import re
import time as _time
import zipfile
from pathlib import Path
from typing import Any, Iterator

import orjson

from . import synth_persona as P
from .synth_graph import planted as _upkeep_planted

__all__ = ["iter_conversations", "write_export", "build_manifest", "message_text", "split_fences",
           "N_SCENARIOS", "GENERATOR_VERSION"]

GENERATOR_VERSION = 1
N_SCENARIOS = 8
_UTC = _dt.timezone.utc
_AUTO = object()
_HEX = "0123456789abcdef"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_AIRPORTS = ("FRA", "CDG", "TXL", "AMS", "LHR", "MUC", "LIS")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")

# Scenario conversations: position on the timeline (fraction of the span).
_SCENARIO_P = (0.02, 0.10, 0.19, 0.29, 0.37, 0.45, 0.63, 0.97)
_P_MOVE = 0.335      # moved Berlin -> Paris
_P_LISBON = 0.205    # month-long stay in Lisbon
_P_GLOBEX = 0.895    # started at Globex


# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------
def _uuid(rng: random.Random) -> str:
    v = (rng.getrandbits(128) & ~(0xF << 76) | (0x4 << 76)) & ~(0x3 << 62) | (0x2 << 62)
    h = "%032x" % v
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _file_id(rng: random.Random) -> str:
    return "file-" + "".join(rng.choices(_ALNUM, k=22))


def _hexs(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_HEX, k=n))


def _epoch(day: str | _dt.date) -> float:
    if isinstance(day, str):
        day = _dt.date.fromisoformat(day)
    return _dt.datetime(day.year, day.month, day.day, tzinfo=_UTC).timestamp()


def _add_months(d: _dt.date, k: int) -> _dt.date:
    m = d.month - 1 + k
    return _dt.date(d.year + m // 12, m % 12 + 1, 1)


def _date(ts: float) -> _dt.date:
    return _dt.datetime.fromtimestamp(ts, _UTC).date()


def _month_year(d: _dt.date) -> str:
    return f"{_MONTHS[d.month - 1]} {d.year}"


def _ym(d: _dt.date) -> str:
    return f"{d.year:04d}-{d.month:02d}"


def _r6(t: float) -> float:
    return round(t, 6)


_FENCE_RE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})(.*)$")


def split_fences(text: str) -> list[tuple[str, bool]]:
    """Split markdown ``text`` into ``(segment, in_code)`` pieces (CommonMark-style fences:
    ``` or ~~~, >= 3 chars, closing fence of the same char and >= the opening length; an
    unclosed fence runs to the end of the text)."""
    if "```" not in text and "~~~" not in text:
        return [(text, False)]
    out: list[tuple[str, bool]] = []
    buf: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        m = _FENCE_RE.match(line.rstrip("\r\n"))
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                if buf:
                    out.append(("".join(buf), False))
                buf = [line]
                fence = m.group(1)
            else:
                buf.append(line)
        else:
            buf.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                out.append(("".join(buf), True))
                buf = []
                fence = None
    if buf:
        out.append(("".join(buf), fence is not None))
    return out


def message_text(message: dict | None) -> str:
    """All human-readable text of a message, newline-joined (text parts, audio transcriptions,
    code, tool output, quotes, context strings, thoughts).  Returns "" for null messages."""
    if not message:
        return ""
    c = message.get("content") or {}
    ct = c.get("content_type")
    if ct in ("text", "multimodal_text"):
        out = []
        for part in c.get("parts") or ():
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if part.get("content_type") == "audio_transcription":
                    out.append(part.get("text") or "")
                elif part.get("content_type") == "real_time_user_audio_video_asset_pointer":
                    pass
        return "\n".join(out)
    if ct in ("code", "execution_output", "tether_quote", "sonic_webpage", "system_error"):
        return c.get("text") or ""
    if ct == "tether_browsing_display":
        return c.get("result") or ""
    if ct == "user_editable_context":
        return "\n".join(x for x in (c.get("user_profile"), c.get("user_instructions")) if x)
    if ct == "model_editable_context":
        return c.get("model_set_context") or ""
    if ct == "thoughts":
        return "\n".join((t.get("summary") or "") + "\n" + (t.get("content") or "") for t in c.get("thoughts") or ())
    if ct == "reasoning_recap":
        return c.get("content") or ""
    return ""


# ---------------------------------------------------------------------------------------------
# content constructors
# ---------------------------------------------------------------------------------------------
def _text(*parts: str) -> dict:
    return {"content_type": "text", "parts": list(parts)}


def _code(text: str) -> dict:
    return {"content_type": "code", "language": "unknown", "response_format_name": None, "text": text}


def _img(rng: random.Random, w: int, h: int, dalle: dict | None = None) -> dict:
    return {"content_type": "image_asset_pointer", "asset_pointer": "file-service://" + _file_id(rng),
            "size_bytes": rng.randint(80_000, 2_400_000), "width": w, "height": h, "fovea": None,
            "metadata": {"dalle": dalle, "gizmo": None, "generation": None, "container_pixel_height": None,
                         "container_pixel_width": None, "emu_omit_glimpse_image": None,
                         "emu_patches_override": None, "sanitized": True, "asset_pointer_link": None,
                         "watermarked_asset_pointer": None}}


def _audio(rng: random.Random, dur: float) -> dict:
    return {"content_type": "audio_asset_pointer", "asset_pointer": "file-service://" + _file_id(rng),
            "size_bytes": int(dur * 96_000), "format": "wav",
            "metadata": {"start_timestamp": None, "end_timestamp": None, "pretokenized_vq": None,
                         "interruptions": None, "original_audio_source": None, "transcription": None,
                         "word_transcription": None, "start": 0.0, "end": round(dur, 2)}}


def _transcription(text: str, direction: str) -> dict:
    return {"content_type": "audio_transcription", "text": text, "direction": direction, "decoding_id": None}


def _voice_in(rng: random.Random, text: str) -> dict:
    dur = 1.5 + len(text) / 14.0
    rt = {"content_type": "real_time_user_audio_video_asset_pointer", "expiry_datetime": None,
          "frames_asset_pointers": [], "video_container_asset_pointer": None,
          "audio_asset_pointer": _audio(rng, dur), "audio_start_timestamp": round(rng.uniform(0.5, 40.0), 3)}
    return {"content_type": "multimodal_text", "parts": [rt, _transcription(text, "in")]}


def _voice_out(rng: random.Random, text: str) -> dict:
    dur = 1.0 + len(text) / 15.0
    return {"content_type": "multimodal_text", "parts": [_transcription(text, "out"), _audio(rng, dur)]}


# ---------------------------------------------------------------------------------------------
# lexicon bookkeeping (counted over what is really written)
# ---------------------------------------------------------------------------------------------
def _term_re(variants: list[str]) -> re.Pattern:
    alt = "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))
    return re.compile(r"(?<![A-Za-z0-9_])(?:" + alt + r")(?![A-Za-z0-9_])")


class _Lexicon:
    def __init__(self, month_term: str):
        # term -> (variants, expectation, reason, extra)
        self.spec: dict[str, tuple] = {
            "Project Phoenix": (["Project Phoenix", "ProjectPhoenix", "PHX", "Phx"], "selected", None,
                                {"kind": "project", "note": "case/spacing variants PHX, Phx, ProjectPhoenix; "
                                 "'Phoenix Lee' is a person whose name overlaps the term"}),
            "Blue Garden": (["Blue Garden"], "selected", None, {"kind": "place", "note": "introduced in quotes"}),
            "Acme Corp": (["Acme Corp"], "selected", None, {"kind": "ORG", "note": "written as 'Acme Corp.'"}),
            "Globex": (["Globex"], "selected", None, {"kind": "ORG"}),
            "Quantum Ledger": (["Quantum Ledger"], "rejected", "assistant_only", {}),
            "Nightjar": (["Nightjar"], "rejected", "single_conversation", {}),
            "StreamMerger": (["StreamMerger"], "rejected", "mostly_in_code", {}),
            month_term: ([month_term], "rejected", "month_name", {}),
            "Weekly Sync": (["Weekly Sync"], "rejected", "repeated_context",
                            {"note": "always written as 'Agenda for the Weekly Sync:'"}),
            "USA": (["USA"], "rejected", "stoplisted_acronym", {}),
        }
        self.res = {t: _term_re(v[0]) for t, v in self.spec.items()}
        self.any = _term_re([x for v in self.spec.values() for x in v[0]])
        self.needles = tuple(sorted({x for v in self.spec.values() for x in v[0]}))
        self.counts = {t: {"user_mentions": 0, "user_mentions_in_code": 0, "assistant_mentions": 0,
                           "assistant_mentions_in_code": 0, "variants": {}, "_convs": set(), "_ctx": set()}
                       for t in self.spec}

    def scan(self, text: str, role: str, gen_idx: int) -> None:
        if not text:
            return
        for nd in self.needles:  # cheap substring pre-filter (much faster than the regex)
            if nd in text:
                break
        else:
            return
        for seg, in_code in split_fences(text):
            if not self.any.search(seg):
                continue
            for term, rx in self.res.items():
                for m in rx.finditer(seg):
                    c = self.counts[term]
                    if role == "user":
                        c["user_mentions_in_code" if in_code else "user_mentions"] += 1
                        if not in_code:
                            c["_convs"].add(gen_idx)
                            c["_ctx"].add(seg[max(0, m.start() - 16):m.start()].lower())
                    else:
                        c["assistant_mentions_in_code" if in_code else "assistant_mentions"] += 1
                    c["variants"][m.group(0)] = c["variants"].get(m.group(0), 0) + 1

    def report(self) -> dict:
        sel, rej = [], []
        for term, (variants, expect, reason, extra) in self.spec.items():
            c = self.counts[term]
            entry = {"term": term, "variants": variants, "reason": reason, **extra,
                     "counts": {k: v for k, v in c.items() if not k.startswith("_")}}
            entry["counts"]["user_conversations"] = len(c["_convs"])
            entry["counts"]["user_distinct_left_contexts"] = len(c["_ctx"])
            (sel if expect == "selected" else rej).append(entry)
        return {"expected_selected": sel, "expected_rejected": rej,
                "counting": "case-sensitive, word-bounded; text/multimodal_text parts of user+assistant "
                            "messages; in-code = inside a fenced block (split_fences)"}


# ---------------------------------------------------------------------------------------------
# one conversation under construction
# ---------------------------------------------------------------------------------------------
class _Conv:
    def __init__(self, gen: "_Gen", rng: random.Random, gen_idx: int, *, create_t: float, style: str,
                 model: str, scenario: str | None = None):
        self.gen, self.rng, self.gi = gen, rng, gen_idx
        self.style, self.model, self.scenario = style, model, scenario
        self.cid = _uuid(rng)
        self.id_mode = "both" if style == "new" else "id_only"
        self.mapping: dict[str, dict] = {}
        self.root = "client-created-root" if style == "new" else _uuid(rng)
        self.mapping[self.root] = {"id": self.root, "message": None, "parent": None, "children": []}
        self.cur = self.root
        self.t = create_t
        self.create_t = create_t
        self.max_t = create_t
        self.req = None
        self.n_messages = 0
        self.flags: list[str] = []
        self.safe_urls: list[str] = []
        self.voice = None

    # -- primitives ---------------------------------------------------------------------------
    def add(self, role: str, content: dict, *, parent: Any = _AUTO, name: str | None = None, t: Any = _AUTO,
            gap: float | None = None, recipient: str = "all", hidden: bool = False, weight: float = 1.0,
            end_turn: Any = _AUTO, meta: dict | None = None, move: bool = True, nid: str | None = None,
            update_time: Any = None, model: str | None = None) -> str:
        rng = self.rng
        if parent is _AUTO:
            parent = self.cur
        nid = nid or _uuid(rng)
        if t is _AUTO:
            if gap is None and role == "user" and self.max_t == self.create_t:
                gap = rng.uniform(0.3, 4.0)  # first message: right after the conversation was created
            if gap is None:
                gap = (rng.uniform(15.0, 200.0) if role == "user" else
                       rng.uniform(2.0, 30.0) if role == "assistant" else rng.uniform(0.5, 6.0))
            self.t += gap
            ct: Any = _r6(self.t)
        elif isinstance(t, float):
            ct = t
            self.t = max(self.t, t)
        else:
            ct = t  # None or an ISO string
        if isinstance(ct, float):
            self.max_t = max(self.max_t, ct)
        if role == "user" and recipient == "all" and not hidden:
            self.req = f"{_hexs(rng, 16)}-{rng.choice(_AIRPORTS)}"
        slug = model or self.model
        if role == "user":
            md = ({"selected_github_repos": [], "serialization_metadata": {"custom_symbol_offsets": []},
                   "request_id": self.req, "message_source": None, "timestamp_": "absolute", "message_type": None}
                  if self.style == "new" else {"timestamp_": "absolute", "message_type": None})
        elif role == "assistant":
            md = {"finish_details": ({"type": "stop", "stop_tokens": [200002]} if end_turn is not False
                                     else {"type": "stop", "stop_tokens": [200007]}),
                  "is_complete": True, "citations": [], "content_references": [], "message_type": None,
                  "model_slug": slug, "default_model_slug": self.model, "parent_id": parent,
                  "request_id": self.req, "timestamp_": "absolute"}
            if self.style == "old":
                md = {"message_type": None, "model_slug": slug, "finish_details": {"type": "stop", "stop": "<|im_end|>"},
                      "timestamp_": "absolute"}
        elif role == "tool":
            md = {"is_complete": True, "message_type": None, "model_slug": slug, "default_model_slug": self.model,
                  "parent_id": parent, "request_id": self.req, "timestamp_": "absolute"}
        else:
            md = {}
        if hidden:
            md["is_visually_hidden_from_conversation"] = True
        if meta:
            md.update(meta)
        if end_turn is _AUTO:
            end_turn = True if role == "assistant" and recipient == "all" else (True if role == "system" else None)
        if update_time is _AUTO:
            update_time = _r6(ct + rng.uniform(0.05, 2.0)) if isinstance(ct, float) else None
        msg = {"id": nid, "author": {"role": role, "name": name, "metadata": {}}, "create_time": ct,
               "update_time": update_time, "content": content, "status": "finished_successfully",
               "end_turn": end_turn, "weight": weight, "metadata": md, "recipient": recipient}
        if self.style == "new":
            msg["channel"] = None
        self.mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        pnode = self.mapping.get(parent)
        if pnode is not None:
            pnode["children"].append(nid)
        self.n_messages += 1
        if move:
            self.cur = nid
        return nid

    def user(self, text: str, **kw) -> str:
        return self.add("user", _text(text), **kw)

    def asst(self, text: str, **kw) -> str:
        return self.add("assistant", _text(text), **kw)

    def system_hidden(self) -> str:
        return self.add("system", _text(""), t=None, weight=0.0, hidden=True)

    def user_context(self, profile: str, instructions: str) -> str:
        c = {"content_type": "user_editable_context",
             "user_profile": P.USER_PROFILE_PREAMBLE + profile + "```",
             "user_instructions": P.USER_INSTRUCTIONS_PREAMBLE + instructions + "```"}
        return self.add("user", c, t=None, hidden=True,
                        meta={"user_context_message_data": {"about_user_message": profile,
                                                            "about_model_message": instructions},
                              "is_user_system_message": True})

    def msg(self, nid: str) -> dict:
        return self.mapping[nid]["message"]

    def flag(self, case: str, nid: str | None = None) -> None:
        self.flags.append(case)
        self.gen._case(self, case, nid)

    # -- annotations (honest: every stated text is verified to be in the message) -----------
    def note(self, _list: str, nid: str, text: str, **fields) -> dict:
        node = self.mapping[nid]
        body = message_text(node["message"])
        if text not in body:
            raise AssertionError(f"manifest text not in message {nid}: {text!r}")
        m = node["message"]
        entry = {"conversation_id": self.cid if self.id_mode != "none" else None, "_gi": self.gi,
                 "scenario": self.scenario, "message_id": nid, "role": m["author"]["role"],
                 "create_time": m["create_time"], "text": text}
        entry.update(fields)
        self.gen.notes[_list].append(entry)
        return entry

    def selfs(self, nid: str, *sids: str) -> None:
        body = message_text(self.mapping[nid]["message"])
        for sid in sids:
            canonical, pol, scope, modality, trait, group, contra = P.SELF_STATEMENTS[sid]
            # the statement may be embedded mid-sentence: record the exact substring written
            text = canonical
            for cand in (canonical, canonical.rstrip(".;"), canonical[0].lower() + canonical[1:],
                         canonical[0].lower() + canonical[1:].rstrip(".;")):
                if cand in body:
                    text = cand
                    break
            e = {"sid": sid, "canonical": canonical, "polarity": pol, "scope": scope, "modality": modality,
                 "trait": trait, "paraphrase_group": group, "contradicts": list(contra)}
            if sid in P.SELF_STATEMENT_CLAUSES:
                e["clauses"] = P.SELF_STATEMENT_CLAUSES[sid]
            self.note("self_statements", nid, text, **e)

    def fact(self, nid: str, text: str, case: str, predicate: str | None, obj: Any, **reading) -> None:
        r = {"case": case, "subject": reading.pop("subject", "SELF"), "predicate": predicate, "object": obj}
        r.setdefault("polarity", "affirm" if predicate is not None else None)
        r.update(reading)
        r.setdefault("valid_from", None)
        r.setdefault("valid_to", None)
        self.note("facts", nid, text, expected=r)

    def timex(self, nid: str, text: str, kind: str, value: Any, **kw) -> None:
        self.note("time_expressions", nid, text, kind=kind, value=value, **kw)

    def bait(self, nid: str, kind: str, text: str) -> None:
        body = message_text(self.msg(nid))
        outside = "".join(s for s, c in split_fences(body) if not c)
        if text not in outside:
            raise AssertionError(f"bait {text!r} not outside code in {nid}")
        self.note("detector_bait", nid, text, kind=kind, in_code=False)

    # -- finish --------------------------------------------------------------------------------
    def finish(self, *, title: str | None, current: str | None = None, update_time: Any = _AUTO,
               shuffle: bool = False) -> dict:
        rng = self.rng
        mapping = self.mapping
        if shuffle:
            keys = list(mapping)
            rng.shuffle(keys)
            pos = {k: i for i, k in enumerate(keys)}
            if len(keys) > 2 and all(n["parent"] not in pos or pos[n["parent"]] < pos[k] for k, n in mapping.items()):
                keys.insert(0, keys.pop())  # make sure the order really is not parent-before-child
            mapping = {k: mapping[k] for k in keys}
        if update_time is _AUTO:
            update_time = _r6(self.max_t + rng.uniform(0.5, 4.0))
        cur = current or self.cur
        if self.style == "old":
            conv = {"title": title, "create_time": _r6(self.create_t), "update_time": update_time,
                    "mapping": mapping, "moderation_results": [], "current_node": cur, "plugin_ids": None,
                    "id": self.cid}
            return conv
        conv = {"title": title, "create_time": _r6(self.create_t), "update_time": update_time, "mapping": mapping,
                "moderation_results": [], "current_node": cur, "plugin_ids": None,
                "conversation_id": self.cid, "conversation_template_id": None, "gizmo_id": None,
                "gizmo_type": None, "is_archived": False, "is_starred": None, "safe_urls": self.safe_urls,
                "blocked_urls": [], "default_model_slug": self.model, "conversation_origin": None,
                "voice": self.voice, "async_status": None, "disabled_tool_ids": [], "is_do_not_remember": False,
                "memory_scope": "global_enabled", "sugar_item_id": None, "id": self.cid}
        if self.id_mode == "none":
            del conv["conversation_id"], conv["id"]
        return conv


# ---------------------------------------------------------------------------------------------
# the generator
# ---------------------------------------------------------------------------------------------
class _Gen:
    def __init__(self, n_conversations: int, seed: int, *, start: str = "2022-09-01", months: int = 18):
        if n_conversations < 0:
            raise ValueError("n_conversations must be >= 0")
        if months < 3:
            raise ValueError("months must be >= 3")
        self.n = int(n_conversations)
        self.seed = seed
        self.start = _dt.date.fromisoformat(start)
        self.months = int(months)
        self.t0 = _epoch(self.start)
        self.t1 = _epoch(_add_months(self.start, self.months))
        self.span = self.t1 - self.t0
        self.notes: dict[str, list] = {k: [] for k in ("facts", "self_statements", "time_expressions",
                                                         "detector_bait")}
        self.cases: dict[str, list] = {}
        self.scen_info: dict[int, dict] = {}
        self.month_term = _MONTHS[self._d(_P_MOVE).month - 1]
        self.lex = _Lexicon(self.month_term)
        self.n_messages = 0
        self.pos_of: dict[int, int] = {}
        topics = list(P.TOPICS)
        self._topics = topics
        self._topic_w = [P.TOPICS[t]["weight"] for t in topics]

    # -- time helpers ---------------------------------------------------------------------------
    def at(self, p: float, hour: float = 0.0) -> float:
        day = _date(self.t0 + p * self.span)
        return _epoch(day) + hour * 3600.0

    def _d(self, p: float) -> _dt.date:
        return _date(self.t0 + p * self.span)

    def _model_for(self, t: float, rng: random.Random) -> str:
        d = _date(t)
        if d < _dt.date(2023, 3, 14):
            return "text-davinci-002-render-sha"
        if d < _dt.date(2023, 11, 6):
            return "gpt-4" if rng.random() < 0.4 else "text-davinci-002-render-sha"
        if d < _dt.date(2024, 5, 13):
            return "gpt-4" if rng.random() < 0.7 else "text-davinci-002-render-sha"
        return rng.choice(("gpt-4o", "gpt-4o", "gpt-4o", "o1", "gpt-4o-mini"))

    def _rng(self, *key: Any) -> random.Random:
        return random.Random("kenning-synth:%s:%s" % (self.seed, ":".join(map(str, key))))

    def _case(self, conv: _Conv, case: str, nid: str | None) -> None:
        self.cases.setdefault(case, []).append({"conversation_id": conv.cid if conv.id_mode != "none" else None,
                                                "_gi": conv.gi, "scenario": conv.scenario, "message_id": nid})

    # -- bookkeeping for every finished conversation ---------------------------------------------
    def _account(self, conv: _Conv, d: dict) -> dict:
        self.n_messages += conv.n_messages
        lex = self.lex
        gi = conv.gi
        for node in d["mapping"].values():
            m = node["message"]
            if m is None:
                continue
            role = m["author"]["role"]
            if role not in ("user", "assistant"):
                continue
            c = m["content"]
            if c["content_type"] not in ("text", "multimodal_text"):
                continue
            for part in c["parts"]:
                if isinstance(part, str):
                    lex.scan(part, role, gi)
                elif isinstance(part, dict) and part.get("content_type") == "audio_transcription":
                    lex.scan(part["text"], role, gi)
        return d

    # -- plan + iteration -----------------------------------------------------------------------
    # upper bound of the time one filler turn can take (edit branch + user + tool call + regen):
    # guarantees the planned update_time (the sort key) is never exceeded by the messages.
    _TURN_MAX = 600.0

    def _plan_filler(self, gi: int) -> tuple[random.Random, float, float, int]:
        rng = self._rng("conv", gi)
        p = rng.random() ** 0.8
        create_t = self.t0 + p * (self.span - 86400.0) + rng.uniform(6, 23) * 3600.0
        r = rng.random()
        if r < 0.78:
            dur = rng.uniform(90.0, 5400.0)
        elif r < 0.95:
            dur = rng.uniform(3 * 3600.0, 3 * 86400.0)
        else:
            dur = rng.uniform(3 * 86400.0, 40 * 86400.0)
        turns = min(120, 1 + int(rng.lognormvariate(1.75, 0.85)))
        dur = max(dur, turns * self._TURN_MAX + 60.0)
        return rng, _r6(create_t), dur, turns

    def iterate(self) -> Iterator[dict]:
        n_s = min(self.n, N_SCENARIOS)
        scen: dict[int, dict] = {}
        builders = (self._s0, self._s1, self._s2, self._s3, self._s4, self._s5, self._s6, self._s7)
        for k in range(n_s):
            scen[k] = builders[k]()
        order = []
        for k, d in scen.items():
            key = d["update_time"] if d["update_time"] is not None else d["create_time"]
            order.append((key, k))
        for gi in range(n_s, self.n):
            # only the sort key is kept; the conversation is re-planned lazily (memory stays flat)
            _rng, ct, dur, _turns = self._plan_filler(gi)
            order.append((_r6(ct + dur), gi))
        order.sort(key=lambda x: (-x[0], x[1]))
        for pos, (key, gi) in enumerate(order):
            self.pos_of[gi] = pos
        for pos, (key, gi) in enumerate(order):
            if gi in scen:
                d = scen.pop(gi)
                self.scen_info[gi]["index"] = pos
            else:
                rng, ct, dur, turns = self._plan_filler(gi)
                d = self._filler(gi, rng, ct, _r6(ct + dur), turns)
            yield d

    # -- manifest ---------------------------------------------------------------------------------
    def manifest(self) -> dict:
        def fix(e: dict) -> dict:
            e = dict(e)
            gi = e.pop("_gi")
            e["conversation_index"] = self.pos_of.get(gi)
            return e
        out = {
            "generator": "kenning.bench.synth", "version": GENERATOR_VERSION, "seed": self.seed,
            "n_conversations": self.n, "start": self.start.isoformat(), "months": self.months,
            "timeline": {"from": _dt.datetime.fromtimestamp(self.t0, _UTC).isoformat(),
                         "to": _dt.datetime.fromtimestamp(self.t1, _UTC).isoformat()},
            "messages": self.n_messages,
            "persona": {
                "subject": "SELF", "residence": [
                    {"object": "Berlin", "valid_from": str(self.start.year - 3), "valid_to": _ym(self._d(_P_MOVE))},
                    {"object": "Paris", "valid_from": _ym(self._d(_P_MOVE)), "valid_to": None}],
                "employment": [{"object": "Acme Corp", "valid_from": None, "valid_to": _ym(self._d(_P_GLOBEX))},
                               {"object": "Globex", "valid_from": _ym(self._d(_P_GLOBEX)), "valid_to": None}],
                "people": {"sister": "Anna (Lisbon)", "partner": "Sam (works at Initech)",
                           "children": ["Mia", "Leo"], "colleague": "Priya Sharma", "friend": "Tom"},
                "timeline": self._true_timeline(),
            },
            "scenarios": [self.scen_info[k] for k in sorted(self.scen_info)],
            "cases": {k: [fix(e) for e in v] for k, v in sorted(self.cases.items())},
            "case_flags": sorted(self.cases),
            "facts": [fix(e) for e in self.notes["facts"]],
            "self_statements": [fix(e) for e in self.notes["self_statements"]],
            "time_expressions": [fix(e) for e in self.notes["time_expressions"]],
            "detector_bait": [fix(e) for e in self.notes["detector_bait"]],
            "lexicon": self.lex.report(),
            # issue 20 part 6: the planted upkeep cases (duplicates, a one-off mention, a weekly pattern) the
            # upkeep benchmark builds its knowledge graph from (kenning.bench.synth_graph)
            "upkeep": _upkeep_planted(self.seed),
        }
        return out

    def _true_timeline(self) -> dict[str, list[dict]]:
        """The persona's true home and employer, day by day: the change points every statement about them is written
        from (sprinkle windows, profiles, the scenarios' move and job change). ``from`` None: before anything the
        export says; ``to`` None: still true at the end of the timeline."""
        move, globex = self._d(_P_MOVE).isoformat(), self._d(_P_GLOBEX).isoformat()
        return {"lives_in": [{"object": "Berlin", "from": f"{self.start.year - 3}-01-01", "to": move},
                             {"object": "Paris", "from": move, "to": None}],
                "works_at": [{"object": "Acme Corp", "from": None, "to": globex},
                             {"object": "Globex", "from": globex, "to": None}]}

    def _scen_conv(self, k: int, name: str, *, style: str, hour: float, model: str | None = None) -> _Conv:
        rng = self._rng("scenario", k)
        ct = _r6(self.at(_SCENARIO_P[k], hour) + rng.uniform(0, 600))
        conv = _Conv(self, rng, k, create_t=ct, style=style, model=model or self._model_for(ct, rng),
                     scenario=name)
        return conv

    def _scen_done(self, conv: _Conv, d: dict, k: int, name: str) -> dict:
        self.scen_info[k] = {"scenario": name, "index": None, "conversation_id": d.get("conversation_id"),
                             "id": d.get("id"), "id_style": conv.id_mode, "title": d["title"],
                             "create_time": d["create_time"], "update_time": d["update_time"],
                             "style": conv.style, "messages": conv.n_messages,
                             "cases": sorted(set(conv.flags))}
        return self._account(conv, d)

    # =============================================================================================
    # Scenario conversations
    # =============================================================================================
    def _s0(self) -> dict:
        """S0 (new style, client-created-root): half-marathon plan; residence since, undated job,
        regenerated assistant reply, correction Porto->Lisbon, emoji + combining marks."""
        name = "S0_half_marathon"
        c = self._scen_conv(0, name, style="new", hour=6.5)
        rng = c.rng
        c.flag("client_created_root", c.root)
        sysid = c.system_hidden()
        c.flag("hidden_system_message", sysid)
        ctx = c.user_context(P.PROFILE_BERLIN, P.INSTRUCTIONS_A)
        c.flag("user_editable_context", ctx)
        y_berlin = self.start.year - 3
        y_marathon = self.start.year - 1
        u1 = c.user(
            "Hi! I'm finally doing it: I signed up for the autumn half marathon 🏃. Some background: "
            f"I've lived in Berlin since {y_berlin}. I run every morning, usually 5-8 km before the kids wake up. "
            f"I ran my first marathon in {y_marathon}, but that was a disaster. I'm a runner, but not a fast one. "
            "Can you build me a 10-week plan?")
        c.fact(u1, f"I've lived in Berlin since {y_berlin}.", "residence_since", "lives_in", "Berlin",
               valid_from=str(y_berlin))
        c.fact(u1, "I run every morning", "habit", "habit", "running", scope="habitual")
        c.timex(u1, f"since {y_berlin}", "since", str(y_berlin))
        c.timex(u1, f"in {y_marathon}", "year", str(y_marathon))
        c.selfs(u1, "SS44")
        plan_a = ("Here's a simple 10-week plan built around your morning runs:\n\n"
                  "| Week | Easy runs | Long run | Quality |\n|---|---|---|---|\n"
                  "| 1-2 | 3 x 6 km | 10 km | strides |\n| 3-4 | 3 x 7 km | 12 km | 5 x 800 m |\n"
                  "| 5-6 | 3 x 7 km | 14 km | tempo 20 min |\n| 7-8 | 3 x 8 km | 16-18 km | tempo 30 min |\n"
                  "| 9 | 3 x 6 km | 12 km | race pace 5 km |\n| 10 | 2 x 5 km | race | - |\n\n"
                  "Keep the easy runs genuinely easy — you should be able to talk in full sentences.")
        c.asst(plan_a, move=False)
        a2 = c.asst(plan_a.replace("Here's a simple 10-week plan built around your morning runs:",
                                   "Sure — since you already run most mornings, we can build on that base. "
                                   "A 10-week plan:")
                    + "\n\nOne rest day per week is non-negotiable, especially after the long run.",
                    gap=rng.uniform(40, 90))
        c.flag("regenerated_assistant_reply", u1)
        c.flag("current_node_non_first_branch", a2)
        u2 = c.user(
            "Nice. Context on my schedule: I work at Acme Corp. and I'm leading Project Phoenix, which is eating "
            "most of my evenings. I love my job, honestly, so I don't mind much. I always keep my promises, so if "
            "I commit to this plan I'll stick to it.")
        c.fact(u2, "I work at Acme Corp.", "employment_undated", "works_at", "Acme Corp", dated=False)
        c.selfs(u2, "SS11", "SS21")
        c.asst("Got it. With Project Phoenix taking your evenings, mornings are your best slot. I'd move the "
               "quality session to Saturday morning and keep weekday runs short. If a week gets busy at Acme, "
               "drop the quality session first and keep the long run.")
        u3 = c.user(
            "🎉👩‍👩‍👧 Family weekend coming up: Zoe\u0308 is bringing her kids, we'll do brunch at the "
            "A\u030angstro\u0308m café near Tempelhof with Anna, then a slow 10 km. My sister lives in Porto. "
            "She's flying in on Friday.\nWill one skipped run hurt my plan?")
        c.flag("emoji_and_combining_before_entity", u3)
        c.fact(u3, "My sister lives in Porto.", "misstatement_later_corrected", "sister_lives_in", "Porto",
               person="Anna", superseded_by="Lisbon")
        c.asst("Not at all — one skipped run won't matter. Enjoy the weekend! Since your sister is coming "
               "from Porto, maybe plan the brunch for Saturday so she's not rushing from the airport.")
        u4 = c.user("I meant Lisbon, not Porto. She moved years ago, I always mix that up.")
        c.fact(u4, "I meant Lisbon, not Porto.", "correction", "sister_lives_in", "Lisbon", person="Anna",
               corrects="Porto", corrects_message_id=u3)
        c.flag("correction", u4)
        c.asst("Lisbon, noted! Same advice either way: Saturday brunch, easy 10 km on Sunday.")
        u5 = c.user("One more thing about me: I'm curious by nature, and I'm an introvert, so group runs are a no "
                    "for me. I am someone who needs a plan. Can you add a simple checklist for race week?")
        c.selfs(u5, "SS06", "SS15", "SS36")
        c.asst("Race-week checklist:\n\n- [ ] Lay out kit on Friday\n- [ ] Pin bib to shirt\n- [ ] Test "
               "breakfast during the last long run\n- [ ] Sleep well two nights before\n- [ ] Start slower "
               "than you think\n\nSolo running is perfectly fine — plenty of people train alone.")
        d = c.finish(title="Half Marathon Training Plan")
        return self._scen_done(c, d, 0, name)

    def _s1(self) -> dict:
        """S1: log parser help.  Code fences of every kind, python tool, system_error, edited user
        message, detector bait, retraction of a unique fact, StreamMerger (mostly in code)."""
        name = "S1_log_parser"
        c = self._scen_conv(1, name, style="new", hour=20.0)
        rng = c.rng
        c.system_hidden()
        day = _date(c.create_t)
        deadline = day + _dt.timedelta(days=21)
        incident = day - _dt.timedelta(days=4)
        code_user = (
            "```python\nimport re\nfrom datetime import date\n\n# owner: priya.sharma@acme-corp.com\n"
            "# spec: https://wiki.acme-corp.com/phoenix/logs?rev=12#merge\n"
            f"CUTOFF = date({deadline.year}, {deadline.month}, {deadline.day})  # deadline {deadline.isoformat()}\n\n\n"
            "class StreamMerger:\n    \"\"\"Merge several log streams by timestamp.\"\"\"\n\n"
            "    def __init__(self, *streams):\n        self.streams = list(streams)\n        self.x = 0\n\n"
            "    def __iter__(self):\n        heads = [next(s, None) for s in self.streams]\n"
            "        while any(h is not None for h in heads):\n"
            "            i = min((k for k, h in enumerate(heads) if h), key=lambda k: heads[k][0])\n"
            "            yield heads[i]\n            heads[i] = next(self.streams[i], None)\n"
            "            self.x += 1\n\n\nmerger = StreamMerger(open_stream('a.log'), open_stream('b.log'))\n```")
        u1 = c.user(
            "I'm writing a log parser for the ProjectPhoenix repo at Acme Corp. My colleague Priya Sharma wrote the "
            "first version yesterday and it keeps dropping lines. The StreamMerger class is the culprit I think. "
            "Here's the code:\n\n" + code_user + "\n\nAny idea why lines go missing?")
        c.flag("closed_python_fence_with_email_url_date", u1)
        c.fact(u1, "My colleague Priya Sharma wrote the first version", "relationship", "colleague", "Priya Sharma",
               person="Priya Sharma")
        c.timex(u1, "yesterday", "relative", (day - _dt.timedelta(days=1)).isoformat(), anchor="message_time")
        c.timex(u1, deadline.isoformat(), "date", deadline.isoformat(), in_code=True)
        a1 = c.asst(
            "The bug is in `__iter__`: `if h` skips heads that are falsy, and an empty tuple or a line with "
            "timestamp `0` is falsy, so those streams are silently ignored. Compare against `None` instead:\n\n"
            "```python\nclass StreamMerger:\n    def __iter__(self):\n        heads = [next(s, None) for s in "
            "self.streams]\n        while any(h is not None for h in heads):\n            i = min((k for k, h "
            "in enumerate(heads) if h is not None), key=lambda k: heads[k][0])\n            yield heads[i]\n"
            "            heads[i] = next(self.streams[i], None)\n```\n\nIf you ever need tamper-evident "
            "storage for these logs, something like a Quantum Ledger-style append-only store is an option, but "
            "that's probably overkill here.")
        # edited user message: original + edited sibling under a1
        u2a = c.user("Can you rewrite it in C++?", move=False)
        c.asst("Here's a C++ version using a priority queue:\n\n```c++\n#include <queue>\n#include <string>\n"
               "#include <vector>\n\nstruct Head { long ts; std::string line; size_t src; };\n"
               "struct Cmp { bool operator()(const Head& a, const Head& b) const { return a.ts > b.ts; } };\n\n"
               "std::vector<std::string> merge(std::vector<std::vector<Head>>& streams) {\n"
               "    std::priority_queue<Head, std::vector<Head>, Cmp> pq;\n    std::vector<size_t> pos(streams.size(), 0);\n"
               "    for (size_t i = 0; i < streams.size(); ++i)\n        if (!streams[i].empty()) pq.push(streams[i][0]);\n"
               "    std::vector<std::string> out;\n    while (!pq.empty()) {\n        Head h = pq.top(); pq.pop();\n"
               "        out.push_back(h.line);\n        if (++pos[h.src] < streams[h.src].size()) pq.push(streams[h.src][pos[h.src]]);\n"
               "    }\n    return out;\n}\n```", parent=u2a, move=False)
        u2b = c.user("Can you make it handle gzip files too? Also, I'm not very organized, so the code should be "
                     "dead simple.", parent=a1, gap=rng.uniform(60, 120))
        c.flag("edited_user_message", u2b)
        c.selfs(u2b, "SS19")
        c.add("assistant", _code("import gzip, io\n\ndef open_stream(path):\n    opener = gzip.open if "
                                 "path.endswith('.gz') else open\n    with opener(path, 'rt', encoding='utf-8') as fh:\n"
                                 "        for line in fh:\n            yield (line[:19], line)\n\n"
                                 "print(sum(1 for _ in open_stream('sample.log.gz')))\n"),
              recipient="python", end_turn=False)
        c.flag("tool_python")
        ex = c.add("tool", {"content_type": "execution_output", "text": "1842\n"}, name="python",
                   meta={"aggregate_result": {"status": "success", "run_id": _uuid(rng), "start_time": _r6(c.t),
                                              "update_time": _r6(c.t + 0.8), "code": "", "end_time": _r6(c.t + 0.9),
                                              "final_expression_output": "1842", "in_kernel_exception": None,
                                              "system_exception": None, "messages": [], "jupyter_messages": [],
                                              "timeout_triggered": None},
                              "is_complete": True}, update_time=_AUTO)
        c.flag("execution_output", ex)
        c.asst("Done — `open_stream` now transparently handles `.gz` files; the sample file yields 1842 lines. "
               "The merger itself doesn't need to change.")
        bait_lines = [
            ("email", "ops@example.org"), ("email", "priya.sharma@acme-corp.com"),
            ("phone", "+49 30 1234567"), ("phone", "(555) 123-4567"), ("phone", "555.123.4567"),
            ("url", "https://grafana.acme-corp.com/d/phoenix?orgId=1&from=now-6h#panel-4"),
            ("ipv4", "192.168.001.010"), ("ipv4", "10.0.0.1"), ("ipv6", "2001:db8:85a3::8a2e:370:7334"),
            ("uuid", "3F2504E0-4F89-11D3-9A0C-0305E82C3301"),
            ("unix_path", "/var/lib/phoenix/runs/3f2504e0-4f89-11d3-9a0c-0305e82c3301/output.log"),
            ("uuid_in_path", "3f2504e0-4f89-11d3-9a0c-0305e82c3301"),
            ("windows_path", "C:\\Users\\Kenning\\Documents\\phoenix\\notes.docx"),
            ("sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            ("sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("cve", "CVE-2021-44228"), ("doi", "doi:10.1000/xyz123"), ("arxiv", "arXiv:2106.09685"),
            ("orcid", "0000-0002-1825-0097"), ("domain", "example.org"),
            ("url_with_domain", "https://example.org/status"), ("hashtag", "#phoenix-incident"),
            ("handle", "@priya_dev"), ("code_token", "foo_bar()"), ("code_token", "self.x"),
            ("iso_date", incident.isoformat()),
        ]
        u3 = c.user(
            "Here are my scratch notes from the incident, maybe useful for the write-up:\n"
            "- on-call: ops@example.org or Priya (priya.sharma@acme-corp.com), phone +49 30 1234567, the vendor is "
            "(555) 123-4567 / 555.123.4567\n"
            "- dashboard: https://grafana.acme-corp.com/d/phoenix?orgId=1&from=now-6h#panel-4\n"
            "- hosts 192.168.001.010, 10.0.0.1 and 2001:db8:85a3::8a2e:370:7334\n"
            "- run id 3F2504E0-4F89-11D3-9A0C-0305E82C3301, logs in "
            "/var/lib/phoenix/runs/3f2504e0-4f89-11d3-9a0c-0305e82c3301/output.log and my copy in "
            "C:\\Users\\Kenning\\Documents\\phoenix\\notes.docx\n"
            "- bad commit da39a3ee5e6b4b0d3255bfef95601890afd80709, image digest "
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "- related reading: CVE-2021-44228, doi:10.1000/xyz123, arXiv:2106.09685, Priya's ORCID is "
            "0000-0002-1825-0097\n"
            "- status page on example.org (https://example.org/status); ping @priya_dev in #phoenix-incident\n"
            f"- the incident started on {incident.isoformat()}; root cause: foo_bar() resets self.x on every call")
        for kind, s in bait_lines:
            c.bait(u3, kind, s)
        c.timex(u3, incident.isoformat(), "date", incident.isoformat(), in_code=False)
        c.flag("detector_bait", u3)
        a3 = c.asst(
            "Here's a draft post-mortem outline. I've kept the contact as ops@example.org and linked the "
            "dashboard (https://grafana.acme-corp.com/d/phoenix?orgId=1&from=now-6h#panel-4). The root cause "
            "line reads: *`foo_bar()` resets `self.x` on every call*. For background see "
            "[the Log4Shell advisory](https://nvd.nist.gov/vuln/detail/CVE-2021-44228) and "
            "[Python's gzip docs](https://docs.python.org/3/library/gzip.html).\n\n"
            "````markdown\n## Timeline\n```bash\ngrep -c ERROR output.log\n```\n## Impact\n- dropped lines\n````\n\n"
            "And a config snippet for the rotation job:\n\n~~~yaml\nrotation:\n  schedule: \"0 6 * * *\"\n"
            "  keep: 14\n~~~\n\n"
            "  > Priya Sharma: the merger was only ever tested with two streams.\n\n"
            "That quote from the review thread is worth keeping in the write-up.")
        c.bait(a3, "email", "ops@example.org")
        c.bait(a3, "code_token", "foo_bar()")
        c.flag("markdown_links", a3)
        c.flag("four_backtick_fence", a3)
        c.flag("tilde_fence", a3)
        c.flag("indented_blockquote_with_person", a3)
        u4 = c.user("Agenda for the Weekly Sync: parser status, on-call rotation. Also, unrelated: I am not a morning "
                    "person, so can you schedule the log rotation job at 10:00 instead of 6:00? I never procrastinate "
                    "on important work, but I'm easily distracted when I work from home. I get bored easily with "
                    "this kind of plumbing too.")
        c.selfs(u4, "SS02", "SS05", "SS46", "SS29")
        c.add("assistant", _code("import yaml\ncfg = yaml.safe_load(open('rotation.yaml'))\ncfg['rotation']"
                                 "['schedule'] = '0 10 * * *'\nprint(cfg)"), recipient="python", end_turn=False)
        err = c.add("tool", {"content_type": "system_error", "name": "tool_error",
                             "text": "Encountered exception: <class 'FileNotFoundError'>: rotation.yaml"},
                    name="python")
        c.flag("system_error", err)
        c.asst("I couldn't open `rotation.yaml` in the sandbox, but the change is just the cron expression: "
               "`0 10 * * *` runs daily at 10:00.")
        u5 = c.user("Off-topic: we adopted a cat last week, so excuse the typos 😅 she walks on the keyboard.")
        c.fact(u5, "we adopted a cat last week", "retracted_fact", "has_pet", "cat", retracted=True)
        c.timex(u5, "last week", "relative", self._last_week(_date(c.msg(u5)["create_time"])), anchor="message_time")
        c.asst("Ha, congratulations on the new cat! Typos forgiven. 🐈")
        u6 = c.user("Actually, that's not true. It's my neighbour's cat, we're just feeding her while they're away.")
        c.fact(u6, "Actually, that's not true.", "retraction_unique", None, None, retracts_message_id=u5,
               retracts="has_pet cat", ambiguous=False)
        c.flag("retraction_unique", u6)
        c.asst("Got it — temporary cat-sitting duty, then.")
        lease_month = self.month_term
        u7 = c.user(f"Should I learn Rust? I'm a patient person, so the borrow checker doesn't scare me. My lease "
                    f"ends in {lease_month}, so I'll have more free evenings after the move.")
        c.fact(u7, "Should I learn Rust?", "question", "considering_learning", "Rust", asserted=False)
        c.selfs(u7, "SS09")
        c.timex(u7, lease_month, "month_name_only", lease_month, note="underspecified month (no year)")
        c.asst(self._long_answer(rng, "Rust", 3200))
        u8 = c.user("One last snippet before I log off, it's cut off but you get the idea:\n\n```python\n"
                    "for line in merger:\n    if line[1].startswith('ERROR'):\n        alerts.append(line)\n")
        c.flag("unclosed_fence", u8)
        c.asst("Looks fine — just remember to close the file handles (a `with` block per stream).")
        d = c.finish(title="Fix log parser bug", shuffle=True)
        c.flag("shuffled_mapping", None)
        return self._scen_done(c, d, 1, name)

    def _s2(self) -> dict:
        """S2: older export style (UUID root, only `id`, no `channel`), root-level user message with
        null create_time, browsing + tether_* + 【†】 citations, dalle, Nightjar, Blue Garden, USA."""
        name = "S2_lisbon_trip_old_style"
        c = self._scen_conv(2, name, style="old", hour=19.0, model="text-davinci-002-render-sha")
        rng = c.rng
        c.flag("uuid_root_null_message", c.root)
        c.flag("conversation_id_missing_only_id", None)
        u1 = c.user("I'm planning a trip to see my sister over the holidays. My sister Anna lives in Lisbon. "
                    "I love hiking, so any trails near the city? I hate cilantro, which I hear is everywhere in "
                    "Portuguese food — is that true?", t=None)
        c.flag("null_time_root_level_message", u1)
        c.fact(u1, "My sister Anna lives in Lisbon.", "relationship", "sister_lives_in", "Lisbon", person="Anna")
        c.fact(u1, "I love hiking", "preference", "likes", "hiking")
        c.fact(u1, "I hate cilantro", "preference", "dislikes", "cilantro")
        b1 = c.add("assistant", _code('search("hiking trails near Lisbon Sintra Arrábida")'), recipient="browser",
                   end_turn=False, t=_r6(c.t + 4.0))
        c.flag("tool_browser", b1)
        src1 = "https://www.visitportugal.com/en/content/sintra-trails"
        src2 = "https://www.tasteatlas.com/coriander-portugal"
        c.safe_urls += [src1, src2]
        tb = c.add("tool", {"content_type": "tether_browsing_display",
                            "result": "# 【0†Sintra trails†www.visitportugal.com】\nThe Sintra-Cascais natural park has "
                                      "marked trails from 5 to 20 km...\n# 【1†Coriander in Portuguese cooking†"
                                      "www.tasteatlas.com】\nCoriander (coentros) is common in Alentejo dishes...",
                            "summary": None, "assets": [], "tether_id": None}, name="browser")
        c.flag("tether_browsing_display", tb)
        c.add("assistant", _code("mclick([0, 1])"), recipient="browser", end_turn=False)
        tq = c.add("tool", {"content_type": "tether_quote", "url": src1, "domain": "www.visitportugal.com",
                            "text": "The Sintra-Cascais natural park has marked trails from 5 to 20 km, most starting "
                                    "near the Palácio da Pena.", "title": "Sintra trails", "tether_id": None},
                   name="browser")
        c.flag("tether_quote", tq)
        answer = ("Great choice! Sintra has lovely marked trails between 5 and 20 km【11†source】. And yes, "
                  "coriander (cilantro) is common, especially in Alentejo cooking【12†source】 — ask for "
                  "\"sem coentros\".")
        i1 = answer.index("【11†source】")
        i2 = answer.index("【12†source】")
        a1 = c.add("assistant", _text(answer), meta={"citations": [
            {"start_ix": i1, "end_ix": i1 + len("【11†source】"), "citation_format_type": "tether_og",
             "metadata": {"type": "webpage", "title": "Sintra trails", "url": src1, "text": "", "pub_date": None,
                          "extra": {"cited_message_idx": 11, "search_result_idx": None, "evidence_text": "source"}}},
            {"start_ix": i2, "end_ix": i2 + len("【12†source】"), "citation_format_type": "tether_og",
             "metadata": {"type": "webpage", "title": "Coriander in Portuguese cooking", "url": src2, "text": "",
                          "pub_date": None,
                          "extra": {"cited_message_idx": 12, "search_result_idx": None, "evidence_text": "source"}}}]})
        c.flag("citation_marker_tether", a1)
        u2 = c.user("Also, I'm afraid of flying, so I'd rather take the train if possible. Last week I checked and "
                    "the night trains were already sold out. Is the train even realistic?")
        c.selfs(u2, "SS39")
        c.timex(u2, "Last week", "relative", self._last_week(_date(c.msg(u2)["create_time"])), anchor="message_time")
        c.asst("It's a long way by train (roughly 30+ hours with changes via Paris and Hendaye or Madrid), but it "
               "is doable. Booking each leg separately often finds availability when through-tickets are sold out.")
        u3 = c.user("Different topic: my side project Nightjar needs a logo. Nightjar is a small birdwatching app "
                    "I'm building with my friend Tom. Could you draw something for Nightjar?")
        c.fact(u3, "my friend Tom", "relationship", "friend", "Tom", person="Tom")
        prompt = "A minimalist flat logo of a nightjar bird at dusk, muted teal and orange palette"
        dl = c.add("assistant", _code(orjson.dumps({"prompt": prompt, "size": "1024x1024", "n": 1}).decode()),
                   recipient="dalle.text2im", end_turn=False)
        c.flag("tool_dalle", dl)
        c.add("tool", {"content_type": "multimodal_text", "parts": [
            _img(rng, 1024, 1024, dalle={"gen_id": "".join(rng.choices(_ALNUM, k=16)), "prompt": prompt,
                                         "seed": rng.randint(1, 2**31), "parent_gen_id": None, "edit_op": None,
                                         "serialization_title": "DALL-E generation metadata"})]},
              name="dalle.text2im")
        c.asst("Here's a first logo concept: a nightjar silhouette against a dusk gradient. Want a version with the "
               "app name set in a rounded sans-serif?")
        u4 = c.user("Also we finally named our community garden plot: we call it \"Blue Garden\". Tom says it "
                    "sounds like a band. Unrelated: do I need a visa for the USA if I fly via New York at some "
                    "point? Tom lives in the USA now and keeps inviting us.")
        c.flag("quoted_term", u4)
        c.asst("\"Blue Garden\" is a lovely name. For the USA, EU citizens usually travel under the Visa Waiver "
               "Program with an approved ESTA, also for transit.")
        u5 = c.user("I value honesty more than comfort, so tell me straight: is my plan too packed? I'm a good "
                    "listener, but I'm not good at small talk, and I don't consider myself creative — so Anna "
                    "will plan the fun parts.")
        c.selfs(u5, "SS03", "SS30", "SS31", "SS24")
        c.asst("Honestly: it's a bit packed. Drop one of the day trips and keep an unplanned day in Lisbon with "
               "Anna — that's usually the best day of a family visit.")
        d = c.finish(title="Lisbon trip & hiking")
        return self._scen_done(c, d, 2, name)

    def _s3(self) -> dict:
        """S3: title null; a user message with 12 assistant regenerations (current branch through the
        11th); critic role; journal entry with a date 5 chars from a fact and another ~300 chars away."""
        name = "S3_steering_group_title_null"
        c = self._scen_conv(3, name, style="new", hour=21.0, model="gpt-4")
        rng = c.rng
        c.system_hidden()
        c.flag("title_null", None)
        day = _date(c.t + 60)
        review = day + _dt.timedelta(days=140)
        fact = "I joined the Phoenix steering group"
        text = (f"Journal: {day.isoformat()} ... {fact} today, which is a big deal for me. I'm a "
                "perfectionist, so I'm already worried about the slides. I feel anxious before big presentations, "
                "and this one will be in front of the whole leadership team. I used to be really shy, and some of "
                "that is still there. "
                f"The first PHX review with leadership is on {review.isoformat()}. Any tips?")
        u1 = c.user(text)
        i_d1 = text.index(day.isoformat()) + len(day.isoformat())
        i_f = text.index(fact)
        i_d2 = text.index(review.isoformat())
        c.fact(u1, fact, "dated_event_near_date", "member_of", "Phoenix steering group",
               valid_from=day.isoformat(), date_distance_chars=i_f - i_d1)
        c.timex(u1, day.isoformat(), "date", day.isoformat(), distance_to_fact_chars=i_f - i_d1)
        c.timex(u1, review.isoformat(), "date", review.isoformat(), distance_to_fact_chars=i_d2 - (i_f + len(fact)),
                note="far date (~300 chars after the fact); must not be attached to it")
        c.flag("date_near_and_far_from_fact", u1)
        c.selfs(u1, "SS22", "SS07", "SS13")
        # 12 regenerations; ensure the children list is not in sorted order
        ids = [_uuid(rng) for _ in range(12)]
        if ids == sorted(ids):
            ids[0], ids[1] = ids[1], ids[0]
        openers = ["Congratulations!", "That's great news!", "Well done!", "Congrats — that's a real milestone.",
                   "Nice, that's a big step.", "Congratulations on joining!", "What a great opportunity!",
                   "That's exciting!", "Big congrats!", "Congratulations — well deserved.",
                   "Congratulations! Let's make the first review go smoothly.", "Great news, and good timing."]
        regen = []
        for k in range(12):
            regen.append(c.asst(
                f"{openers[k]} A few tips for the first review: lead with the decision you need, keep each slide to "
                f"one message, rehearse the first two minutes out loud, and prepare answers for the three hardest "
                f"questions. (draft {k + 1})", parent=u1, move=False, nid=ids[k], gap=rng.uniform(20, 60)))
        c.flag("node_with_12_children", u1)
        c.flag("children_not_sorted", u1)
        chosen = regen[10]
        c.cur = chosen
        c.flag("current_node_non_first_branch", chosen)
        crit = c.add("critic", _text("Critique: the previous reply assumes the user will present alone; it should "
                                     "ask who else is presenting before giving rehearsal advice."),
                     parent=chosen, gap=1.0)
        c.flag("unmapped_role_critic", crit)
        u2 = c.user("Honestly, maybe I'm just not cut out for management. I tend to overthink decisions, and I "
                    "think I'm bad at saying no.", parent=chosen)
        c.selfs(u2, "SS08", "SS16", "SS04")
        c.asst("Those are very common feelings early in a leadership role, and noticing them is a good sign. "
               "Try a small rule: never say yes in the same meeting — say \"let me check and get back to you\".")
        lis = self._d(_P_LISBON)
        u3 = c.user(f"During {_month_year(lis)} I was in Lisbon with my sister and didn't check email once — it "
                    "was great. I plan to learn Japanese next year; I love learning languages. Would a language "
                    "goal help with the stress?")
        c.fact(u3, f"During {_month_year(lis)} I was in Lisbon", "during_interval", "located_in", "Lisbon",
               valid_from=_ym(lis), valid_to=_ym(lis))
        c.fact(u3, "I plan to learn Japanese next year", "intention", "plans_to_learn", "Japanese", asserted=False,
               target_year=str(day.year + 1))
        c.timex(u3, _month_year(lis), "month", _ym(lis))
        c.timex(u3, "next year", "relative", str(day.year + 1), anchor="message_time")
        c.selfs(u3, "SS50")
        c.asst("It can! A small daily habit outside work (10 minutes of Japanese) gives you a sense of progress "
               "that doesn't depend on anyone else's approval. Spaced repetition apps make it easy to keep up.")
        d = c.finish(title=None, shuffle=True)
        return self._scen_done(c, d, 3, name)

    def _s4(self) -> dict:
        """S4: move to Paris; ISO-string create_time, float rounding edges; multimodal image upload
        with attachment; assistant claim corroborated by the user; partner Sam; Phoenix Lee."""
        name = "S4_paris_move"
        c = self._scen_conv(4, name, style="new", hour=18.0, model="gpt-4")
        rng = c.rng
        c.system_hidden()
        c.user_context(P.PROFILE_BERLIN, P.INSTRUCTIONS_A)  # stale profile: still says Berlin
        mv = self._d(_P_MOVE)
        c.t += 20.0
        iso = _dt.datetime.fromtimestamp(c.t, _UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        u1 = c.user(f"I moved to Paris in {_month_year(mv)}. Still living out of boxes 📦. Can you help me with a "
                    "checklist for registering my address, getting a carte Vitale, and so on?", t=iso)
        c.flag("iso_string_create_time", u1)
        c.fact(u1, f"I moved to Paris in {_month_year(mv)}.", "residence_change", "lives_in", "Paris",
               valid_from=_ym(mv), closes={"predicate": "lives_in", "object": "Berlin", "valid_to": _ym(mv)})
        c.timex(u1, _month_year(mv), "month", _ym(mv))
        c.asst(self._long_answer(rng, "Paris admin", 2600))
        img = _img(rng, 1536, 2048)
        att = {"id": img["asset_pointer"].split("//")[1], "name": "lettre_prefecture.jpg", "size": img["size_bytes"],
               "mime_type": "image/jpeg", "width": 1536, "height": 2048}
        u2 = c.add("user", {"content_type": "multimodal_text", "parts": [
            img, "Here's a photo of the letter I got from the préfecture. What does it want from me? I'm impatient "
                 "with bureaucracy, I admit."]}, meta={"attachments": [att]})
        c.flag("multimodal_image_upload", u2)
        c.flag("attachments", u2)
        c.selfs(u2, "SS37")
        c.asst("The letter asks you to confirm your new address within 30 days and to bring proof of residence "
               "(a utility bill or your lease) to your appointment.")
        sync = _date(c.t) + _dt.timedelta(days=6)
        retro = sync + _dt.timedelta(days=2)
        sync_dt = f"{sync.isoformat()}T09:30:00"
        u3 = c.user("Agenda for the Weekly Sync: Phx migration status, hiring. Can you draft a short note to the "
                    "team? I had lunch with Phoenix Lee from design and she agreed to help. Here's what she wrote:\n\n"
                    "   > Happy to help with the Phx mockups. Tell Priya Sharma I'll send them on Friday.\n\n"
                    f"The sync moved to {sync_dt} and the retro is on {retro.isoformat()}.")
        c.flag("person_name_overlapping_lexicon_term", u3)
        c.flag("indented_blockquote_with_person", u3)
        c.flag("two_times_one_message", u3)
        c.timex(u3, sync_dt, "datetime", sync_dt)
        c.timex(u3, retro.isoformat(), "date", retro.isoformat())
        a3 = c.asst("Here's a draft:\n\n> Hi all — quick update before the sync. Phoenix Lee from design will "
                    "help with the Phx mockups (thanks!). Hiring: two interviews this week. The retro is on "
                    f"{retro.isoformat()}.\n\nYou mentioned you live in Paris now, so I've put the times in Paris "
                    "time (CET). PS: if the audit team asks about Quantum Ledger, point them to the finance wiki.")
        c.fact(a3, "You mentioned you live in Paris now", "assistant_claim_corroborated", "lives_in", "Paris",
               source="assistant", corroborated_by="next user message")
        u4 = c.user("Yes, I live in Paris now. My partner Sam works at Initech, so he's still commuting to Berlin "
                    "twice a month.")
        c.fact(u4, "Yes, I live in Paris now.", "user_corroborates_assistant_claim", "lives_in", "Paris",
               corroborates_message_id=a3)
        c.fact(u4, "My partner Sam works at Initech", "relationship", "partner_works_at", "Initech", person="Sam")
        c.flag("assistant_claim_corroborated", a3)
        c.asst("Got it — I'll keep Paris time as the default and note Sam's Berlin trips if you want help planning "
               "around them.")
        edge = float(int(c.t + 100)) + 0.9996
        u5 = c.user("I'm becoming more confident at work, I think. I am patient, but I'm not a competitive person, "
                    "and I used to be a night owl, which helped for late launches. Thanks for the help!", t=edge)
        c.flag("timestamp_rounding_edge_9996", u5)
        c.selfs(u5, "SS14", "SS10", "SS28", "SS27")
        edge2 = float(int(edge + 5)) + 0.999999
        a5 = c.asst("You're welcome, and good luck with the move — it sounds like you're handling it well.", t=edge2)
        c.flag("timestamp_rounding_edge_999999", a5)
        d = c.finish(title="Paris move checklist", shuffle=True)
        return self._scen_done(c, d, 4, name)

    def _s5(self) -> dict:
        """S5: conversation with neither `id` nor `conversation_id`; voice mode (audio content types);
        dated negation, ambiguous negation, conflicting address (Hamburg), retraction after two facts,
        'scratch that', 'the sunday before 25 May'."""
        name = "S5_voice_no_ids"
        c = self._scen_conv(5, name, style="new", hour=8.0, model="gpt-4")
        rng = c.rng
        c.id_mode = "none"
        c.voice = "juniper"
        c.flag("conversation_without_any_id", None)
        c.system_hidden()
        day = _date(c.t + 60)
        since = _add_months(day, -1)
        t1 = f"Okay so, quick update on the flat. Since {_month_year(since)} I don't live in Berlin anymore. The " \
             "lease finally ended and I handed back the keys."
        u1 = c.add("user", _voice_in(rng, t1))
        c.flag("audio_voice_messages", u1)
        c.fact(u1, f"Since {_month_year(since)} I don't live in Berlin anymore.", "negation_dated", "lives_in",
               "Berlin", polarity="deny", valid_from=_ym(since))
        c.timex(u1, _month_year(since), "month", _ym(since))
        c.add("assistant", _voice_out(rng, "That's a big milestone! How does it feel to have the Berlin chapter "
                                            "officially closed?"))
        t2 = "Honestly I don't really live there anymore either, it's more like a storage unit for our stuff."
        u2 = c.add("user", _voice_in(rng, t2))
        c.fact(u2, "I don't really live there anymore", "negation_ambiguous", "lives_in", None, polarity="deny",
               ambiguous=True, note="'there' has no resolvable antecedent")
        c.add("assistant", _voice_out(rng, "Ha, I know that feeling. Where does most of your stuff live now?"))
        conflict_date = f"{self.start.year - 4}-06-01"
        u3 = c.user(f"On {conflict_date} I lived in Hamburg — I need that for a tax form that wants my address "
                    "history. I've been feeling more settled since the move, and I'm proud of how I handled "
                    "the move.")
        c.fact(u3, f"On {conflict_date} I lived in Hamburg", "conflicting_residence_same_date", "lives_in",
               "Hamburg", valid_from=conflict_date, valid_to=conflict_date, conflicts_with="Munich")
        c.timex(u3, conflict_date, "date", conflict_date)
        c.selfs(u3, "SS32", "SS35")
        c.asst("For the address history, list each address with from/to dates; if you're unsure about exact "
               "days, the month is usually enough.")
        u4 = c.user("Anna moved to Porto and she's getting married in June.")
        c.fact(u4, "Anna moved to Porto", "retracted_fact", "sister_lives_in", "Porto", person="Anna",
               retracted=True)
        c.fact(u4, "she's getting married in June", "retracted_fact", "getting_married", "June", person="Anna",
               retracted=True)
        c.asst("Congratulations to Anna on both counts!")
        u5 = c.user("Actually, that's not true. I was mixing it up with her friend's news.")
        c.fact(u5, "Actually, that's not true.", "retraction_after_two_facts", None, None, retracts_message_id=u4,
               retracts=["Anna moved to Porto", "she's getting married in June"], ambiguous=True)
        c.flag("retraction_after_two_facts", u5)
        c.asst("No problem — so Anna is still in Lisbon and no wedding news. Noted.")
        may25 = _dt.date(day.year, 5, 25)
        sunday_before = may25 - _dt.timedelta(days=(may25.weekday() + 1) % 7 or 7)
        u6 = c.user("We're going to the Blue Garden open day on the sunday before 25 May — scratch that, it's the "
                    "sunday after. Sam says I'm stubborn, and he's probably right. I've always been a curious "
                    "person, and I'm getting better at setting boundaries at Acme Corp.")
        c.fact(u6, "the sunday before 25 May — scratch that", "retraction_scratch_that", "attends_event",
               "Blue Garden open day", retracted=True, replacement="the sunday after 25 May")
        c.flag("scratch_that", u6)
        c.timex(u6, "the sunday before 25 May", "relative_anchored", sunday_before.isoformat(),
                note="retracted by 'scratch that'")
        c.selfs(u6, "SS26", "SS47", "SS18")
        c.asst("Enjoy the Blue Garden open day! Setting boundaries at work is a skill — it sounds like it's paying off.")
        d = c.finish(title="Voice chat: flat & garden")
        return self._scen_done(c, d, 5, name)

    def _s6(self) -> dict:
        """S6: update_time null; cover letter; Munich conflict; lifecycle changes; duplicate fact with
        identical timestamps; text parts []; null-time child with relative date; orphan chain."""
        name = "S6_cover_letter_update_null"
        c = self._scen_conv(6, name, style="new", hour=22.0, model="gpt-4")
        rng = c.rng
        c.system_hidden()
        c.flag("update_time_null", None)
        u1 = c.user("I need help with a cover letter for a product role at Globex. Background: I hate my job now. Project Phoenix got cancelled "
                    "and half the team left. I'm a pretty organized person these days, so I've kept notes of "
                    "everything I shipped.")
        c.selfs(u1, "SS12", "SS20")
        c.asst(self._long_answer(rng, "cover letter", 4200))
        conflict_date = f"{self.start.year - 4}-06-01"
        u2 = c.user("Some personal bits for the 'about me' paragraph: I stopped running after a knee injury, I no "
                    "longer eat meat, and I used to play guitar in a band. I'm not really a runner anymore, so skip "
                    f"the marathon stuff. Also for the background check form: On {conflict_date} I lived in Munich.")
        c.fact(u2, "I stopped running", "habit_stopped", "habit", "running", polarity="deny", scope="transitional",
               ends="I run every morning")
        c.fact(u2, "I no longer eat meat", "habit_stopped", "diet", "eats meat", polarity="deny", scope="transitional")
        c.fact(u2, "I used to play guitar", "past_habit", "habit", "playing guitar", scope="past")
        c.fact(u2, f"On {conflict_date} I lived in Munich", "conflicting_residence_same_date", "lives_in", "Munich",
               valid_from=conflict_date, valid_to=conflict_date, conflicts_with="Hamburg")
        c.timex(u2, conflict_date, "date", conflict_date)
        c.selfs(u2, "SS45")
        a2 = c.asst("I'd keep the guitar (it shows persistence) and leave out diet and running — they don't add much "
                    "to a cover letter.")
        parent_t = c.msg(a2)["create_time"]
        u3 = c.user("I overthink everything. 3 days ago I spent two hours rewriting one sentence of this letter.",
                    t=None)
        c.flag("null_time_child_with_timed_parent", u3)
        c.selfs(u3, "SS17")
        c.timex(u3, "3 days ago", "relative", (_date(parent_t) - _dt.timedelta(days=3)).isoformat(),
                anchor="imputed", note="message create_time is null; anchor must be imputed from neighbours")
        c.asst("That's very normal with cover letters. Set a timer: 20 minutes per paragraph, then move on.")
        dup_text = "I have two kids, Mia and Leo. I care a lot about what my kids think of me."
        same_t = _r6(c.t + 95.0)
        u4a = c.user(dup_text, t=same_t)
        empty = c.add("assistant", _text(), t=_r6(same_t + 3.0))
        c.flag("text_parts_empty", empty)
        u4b = c.user(dup_text, t=same_t)
        c.flag("duplicate_fact_same_time", u4b)
        c.fact(u4a, "I have two kids, Mia and Leo.", "duplicate_same_time", "has_children", "Mia; Leo",
               duplicate_message_id=u4b)
        c.fact(u4b, "I have two kids, Mia and Leo.", "duplicate_same_time", "has_children", "Mia; Leo",
               duplicate_message_id=u4a)
        c.selfs(u4a, "SS43")
        c.asst("That matters — and it's a good angle for the 'why this role' paragraph if the new job has a "
               "better work-life balance.", t=_r6(same_t + 12.0))
        c.t = same_t + 12.0
        u5 = c.user("I'm usually patient with my kids, but lately I've been snapping at them. I've been sleeping "
                    "badly for weeks. I almost never lose my temper, so this is new.")
        c.selfs(u5, "SS01", "SS23", "SS34")
        c.asst("That sounds exhausting, and it makes sense given the situation at work. Sleep is usually the first "
               "lever — would it help to talk through an evening routine?")
        c.user("Agenda for the Weekly Sync: handover of the Project Phoenix docs. Can you write a script that "
               "bundles them? We also need to water Blue Garden while Sam is away.")
        c.asst("Here's a small script:\n\n```python\nfrom pathlib import Path\nimport zipfile\n\n"
               "class StreamMerger:  # reused from the log tool, just concatenates files\n"
               "    def __init__(self, paths):\n        self.paths = paths\n\n"
               "with zipfile.ZipFile('phoenix_handover.zip', 'w') as zf:\n"
               "    for p in StreamMerger(sorted(Path('docs').glob('*.md'))).paths:\n        zf.write(p)\n```\n\n"
               "And a reminder for the garden: water on Tuesday and Friday evenings.")
        last = c.cur
        # orphan chain: parent id missing from mapping, all create_time null (unimputable)
        missing = _uuid(rng)
        o1 = c.user("Can you remind me what we said about the reference letter?", parent=missing, t=None,
                    move=False)
        o2 = c.asst("We said you'd ask your former team lead and send them a short summary of your projects.",
                    parent=o1, t=None, move=False)
        c.user("Right, thanks.", parent=o2, t=None, move=False)
        c.flag("orphan_node", o1)
        c.flag("null_time_chain_unimputable", o1)
        d = c.finish(title="Cover letter help", current=last, update_time=None, shuffle=True)
        return self._scen_done(c, d, 6, name)

    def _s7(self) -> dict:
        """S7: new job at Globex; until-hint; memory (bio) write; model_editable_context; thoughts;
        reasoning_recap; web.run + sonic_webpage + PUA citations; computer_output; unknown content type;
        uncorroborated assistant claim; overlapping time expressions."""
        name = "S7_globex_week_plan"
        c = self._scen_conv(7, name, style="new", hour=7.0, model="gpt-4")
        rng = c.rng
        c.system_hidden()
        c.user_context(P.PROFILE_PARIS, P.INSTRUCTIONS_B)
        mv = self._d(_P_MOVE)
        gx = self._d(_P_GLOBEX)
        mem1 = (mv + _dt.timedelta(days=30)).isoformat()
        mem2 = (gx + _dt.timedelta(days=7)).isoformat()
        mec = c.add("assistant", {"content_type": "model_editable_context",
                                  "model_set_context": f"1. [{mem1}]. User lives in Paris; previously lived in "
                                                       f"Berlin.\n\n2. [{mem2}]. User works at Globex as a product "
                                                       "engineer.\n\n3. [" + mem2 + "]. User has two kids (Mia and "
                                                       "Leo) and a partner named Sam.",
                                  "repository": None, "repo_summary": None, "structured_context": None},
                    t=None, hidden=True)
        c.flag("model_editable_context", mec)
        day = _date(c.t + 60)
        until = _add_months(day, 4)
        u1 = c.user(f"In {_month_year(gx)} I started working at Globex. I'll be working remotely until "
                    f"{_month_year(until)}, then they want me in the office. Globex is headquartered in the USA, so "
                    "some meetings are late. I'm turning into a morning person, weirdly. Can you help me plan my "
                    "week?")
        c.fact(u1, f"In {_month_year(gx)} I started working at Globex.", "job_change_dated", "works_at", "Globex",
               valid_from=_ym(gx), closes={"predicate": "works_at", "object": "Acme Corp", "valid_to": _ym(gx)})
        c.fact(u1, f"I'll be working remotely until {_month_year(until)}", "until_hint", "work_mode", "remote",
               valid_to=_ym(until))
        c.timex(u1, _month_year(gx), "month", _ym(gx))
        c.timex(u1, f"until {_month_year(until)}", "until", _ym(until))
        c.selfs(u1, "SS33")
        th = c.add("assistant", {"content_type": "thoughts", "thoughts": [
            {"summary": "Planning the week", "content": "The user works remotely and has late meetings with the US "
                                                        "office; mornings should hold focus work.",
             "chunks": [], "finished": True}], "source_analysis_msg_id": _uuid(rng)},
            end_turn=False, model="o1", meta={"reasoning_status": "is_reasoning"})
        c.flag("thoughts", th)
        rr = c.add("assistant", {"content_type": "reasoning_recap", "content": "Thought for 12s"}, end_turn=False,
                   model="o1", meta={"reasoning_status": "reasoning_ended", "finished_duration_sec": 12})
        c.flag("reasoning_recap", rr)
        bio = c.add("assistant", _code("User lives in Paris and works at Globex."), recipient="bio", end_turn=False,
                    model="o1")
        c.flag("bio_memory_write", bio)
        c.fact(bio, "User lives in Paris and works at Globex.", "assistant_memory_write", "lives_in; works_at",
               "Paris; Globex", source="assistant_bio")
        c.add("tool", _text("Model set context updated."), name="bio")
        a1 = c.asst("Here's a week template:\n\n- **Mornings (07:00-11:00):** deep work, since you're becoming a "
                    "morning person\n- **Afternoons:** reviews and 1:1s\n- **Evenings (2x/week):** US calls\n\n"
                    "Since you're based in Munich, a 9:00 start also lines up well with the Berlin office.",
                    model="o1")
        c.fact(a1, "Since you're based in Munich", "assistant_claim_uncorroborated", "lives_in", "Munich",
               source="assistant", corroborated=False)
        c.flag("assistant_claim_uncorroborated", a1)
        u2 = c.user(f"Can you check when the next JLPT registration closes? A friend said it closes in "
                    f"{_month_year(_add_months(day, 1))} — specifically "
                    f"{_MONTHS[_add_months(day, 1).month - 1]} 15, {_add_months(day, 1).year} — but I'm not sure.")
        nm = _add_months(day, 1)
        c.timex(u2, _month_year(nm), "month", _ym(nm))
        c.timex(u2, f"{_MONTHS[nm.month - 1]} 15, {nm.year}", "date", f"{nm.year:04d}-{nm.month:02d}-15",
                overlaps=[_MONTHS[nm.month - 1]])
        c.flag("overlapping_time_expressions", u2)
        ws = c.add("assistant", _code(orjson.dumps({"search_query": [{"q": "JLPT registration deadline"}]}).decode()),
                   recipient="web.run", end_turn=False)
        c.flag("tool_web_run", ws)
        url = "https://www.jlpt.jp/e/application/overseas_index.html"
        c.safe_urls.append(url)
        sw = c.add("tool", {"content_type": "sonic_webpage", "url": url, "domain": "www.jlpt.jp",
                            "title": "JLPT | Application Information",
                            "text": "Application periods differ by test site; check your local host institution.",
                            "snippet": "Application periods differ by test site.", "pub_date": None,
                            "crawl_date": None, "pub_timestamp": None, "ref_id": "turn0search0"}, name="web.run")
        c.flag("sonic_webpage", sw)
        cite = "\ue200cite\ue202turn0search0\ue201"
        ans = ("Registration deadlines depend on your local test site, so check the Paris host institution "
               f"directly {cite}. The dates your friend mentioned may be for a different country.")
        i = ans.index(cite)
        a2 = c.add("assistant", _text(ans), meta={"content_references": [
            {"matched_text": cite, "start_idx": i, "end_idx": i + len(cite), "alt": "([jlpt.jp](" + url + "))",
             "type": "grouped_webpages", "items": [{"title": "JLPT | Application Information", "url": url,
                                                    "attribution": "jlpt.jp"}]}]})
        c.flag("citation_marker_pua", a2)
        u3 = c.user("Honesty matters more to me than being comfortable, so: I think I'm a decent manager, actually, "
                    "even though I left. I'm no longer afraid of flying, which makes the Tokyo trip possible. I'm "
                    "learning to be kinder to myself. I'm not a people pleaser anymore. I was never good at math, "
                    "though, so the budget part scares me. I'm not an early adopter; I wait until things are proven.")
        c.selfs(u3, "SS48", "SS41", "SS40", "SS25", "SS42", "SS38", "SS49")
        c.asst("That's a healthy set of reflections. For the Tokyo budget, let's keep the maths simple: a daily "
               "amount times the number of days, plus flights and a 10% buffer.")
        fw = c.add("assistant", {"content_type": "foo_widget", "widget_state": {"kind": "timer", "seconds": 1500},
                                 "fallback": None})
        c.flag("unknown_content_type", fw)
        c.user("Can you open the Globex benefits portal and check the remote work policy?")
        c.add("assistant", _code('{"action": "open_url", "url": "https://benefits.globex.example/remote"}'),
              recipient="computer.do", end_turn=False)
        co = c.add("tool", {"content_type": "computer_output", "computer_id": _uuid(rng),
                            "screenshot": _img(rng, 1280, 800), "tether_id": None,
                            "state": {"type": "browser_state", "id": _uuid(rng),
                                      "url": "https://benefits.globex.example/remote",
                                      "title": "Remote work policy"}, "is_ephemeral": False}, name="computer")
        c.flag("computer_output", co)
        c.asst("The portal says remote work is approved per team until further notice, and expenses go through "
               "Quantum Ledger. Your manager confirms the office return date.")
        d = c.finish(title="Week plan at Globex")
        return self._scen_done(c, d, 7, name)

    # -- helpers for scenario texts -----------------------------------------------------------------
    @staticmethod
    def _last_week(d: _dt.date) -> dict:
        mon = d - _dt.timedelta(days=d.weekday() + 7)
        return {"from": mon.isoformat(), "to": (mon + _dt.timedelta(days=6)).isoformat()}

    def _long_answer(self, rng: random.Random, subject: str, target: int) -> str:
        topic = {"Rust": "coding", "Paris admin": "writing", "cover letter": "writing"}.get(subject, "work")
        T = P.TOPICS[topic]
        slots = {k: rng.choice(v) for k, v in T["slots"].items()}
        if subject == "Rust":
            slots["lang"] = "Rust"
        return self._reply(rng, T, slots, target)

    # =============================================================================================
    # Filler
    # =============================================================================================
    @staticmethod
    def _fill(s: str, slots: dict) -> str:
        if "{" not in s:
            return s
        for k, v in slots.items():
            s = s.replace("{" + k + "}", v)
        return s

    def _reply(self, rng: random.Random, T: dict, slots: dict, target: int) -> str:
        fill = self._fill
        out = [rng.choice(P.GENERIC_INTROS)]
        size = len(out[0])
        sentences = rng.sample(T["sentences"], len(T["sentences"]))  # no repeats within a reply
        headings = rng.sample(T["headings"], len(T["headings"]))
        bullets = rng.sample(T["bullets"], len(T["bullets"]))
        elab = rng.sample(P.GEN_ELAB, len(P.GEN_ELAB))
        code = T.get("code")
        si = 0
        use_head = target > 900

        def sentence() -> str:
            nonlocal si
            r = rng.random()
            if si < len(sentences) and r < 0.75:
                s = fill(sentences[si], slots)
                si += 1
            elif r < 0.88 and elab:
                return elab.pop()
            else:
                s = rng.choice(P.GEN_A) + " " + rng.choice(P.GEN_B)
                s = s[0].upper() + s[1:]
            if rng.random() < 0.18:
                keep = s.startswith(("I ", "I'")) or s[1:2].isupper() or s[:1] in "`{\\"
                s = rng.choice(P.GEN_STARTERS) + " " + (s if keep else s[0].lower() + s[1:])
            return s

        while size < target:
            if use_head and headings:
                h = "### " + fill(headings.pop(), slots)
                out.append(h)
                size += len(h)
            para = " ".join(sentence() for _ in range(rng.randint(2, 5)))
            out.append(para)
            size += len(para)
            r = rng.random()
            if r < 0.35 and len(bullets) >= 3:
                mark = "- " if rng.random() < 0.7 else None
                k = min(len(bullets), rng.randint(3, 6))
                items, bullets = bullets[:k], bullets[k:]
                bl = "\n".join((mark or f"{i}. ") + fill(b, slots) for i, b in enumerate(items, 1))
                out.append(bl)
                size += len(bl)
            elif code and r < 0.6:
                lang, src = rng.choice(code)
                blk = f"```{lang}\n{src}```"
                out.append(blk)
                size += len(blk)
        out.append(fill(rng.choice(T["closings"] + P.GENERIC_CLOSINGS), slots))
        return "\n\n".join(out)

    def _reply_target(self, rng: random.Random) -> int:
        r = rng.random()
        if r < 0.15:
            return rng.randint(60, 300)
        if r < 0.70:
            return rng.randint(400, 1500)
        if r < 0.95:
            return rng.randint(1500, 3500)
        return rng.randint(3500, 6200)

    def _sprinkle(self, rng: random.Random, p: float) -> tuple[str, tuple] | None:
        if rng.random() < 0.5:
            pool = [(sid, w) for sid, w in P.SPRINKLE_SELF.items() if w[0] <= p <= w[1]]
            if not pool:
                return None
            sid = rng.choice(pool)[0]
            return P.SELF_STATEMENTS[sid][0], ("self", sid)
        pool = [f for f in P.SPRINKLE_FACTS if f[3] <= p <= f[4]]
        if not pool:
            return None
        f = rng.choice(pool)
        return f[0], ("fact", f)

    def _filler(self, gi: int, rng: random.Random, create_t: float, upd_planned: float, turns: int) -> dict:
        p = min(1.0, max(0.0, (create_t - self.t0) / self.span))
        tname = rng.choices(self._topics, self._topic_w)[0]
        T = P.TOPICS[tname]
        slots = {k: rng.choice(v) for k, v in T["slots"].items()}
        style = "old" if (p < 0.3 and rng.random() < 0.5) else "new"
        conv = _Conv(self, rng, gi, create_t=create_t, style=style, model=self._model_for(create_t, rng))
        fill = self._fill
        if style == "new":
            conv.system_hidden()
            # custom instructions exist since mid-2023; the profile follows the persona's timeline
            if _date(create_t) >= _dt.date(2023, 7, 20) and rng.random() < 0.35:
                profile = (P.PROFILE_BERLIN if p < _P_MOVE else P.PROFILE_PARIS_ACME if p < _P_GLOBEX
                           else P.PROFILE_PARIS)
                conv.user_context(profile, rng.choice((P.INSTRUCTIONS_A, P.INSTRUCTIONS_B)))
        slack = upd_planned - create_t - turns * self._TURN_MAX - 60.0
        gap_turn = rng.randrange(turns) if (slack > 3 * 3600 and turns > 1) else -1
        sprinkle = self._sprinkle(rng, p) if rng.random() < 0.12 else None
        openers, followups = T["openers"], T["followups"] + P.GENERIC_FOLLOWUPS
        fpool: list[str] = []  # follow-ups cycle without immediate repeats
        for k in range(turns):
            if k == gap_turn:
                conv.t += slack * rng.uniform(0.6, 0.95)  # the user came back to it later
            if k == 0:
                utext = fill(rng.choice(openers), slots)
            else:
                if not fpool:
                    fpool = rng.sample(followups, len(followups))
                utext = fill(fpool.pop(), slots)
            if k > 0 and T.get("code") and rng.random() < 0.12:
                lang, src = rng.choice(T["code"])
                utext += f"\n\nHere's what I have:\n\n```{lang}\n{src}```"
            if k == 0 and sprinkle is not None:
                lead = rng.choice(P.SPRINKLE_LEADS)
                utext = utext + "\n\n" + lead.replace("{s}", sprinkle[0])
            r = rng.random()
            if k > 0 and r < 0.03:  # edited user message: original branch abandoned
                orig = conv.user(fill(rng.choice(followups), slots), move=False)
                conv.asst(self._reply(rng, T, slots, rng.randint(80, 600)), parent=orig, move=False)
            if r > 0.97:
                name, mime = rng.choice(P.ATTACHMENT_NAMES)
                fid = _file_id(rng)
                u = conv.user(utext, meta={"attachments": [{"id": fid, "name": name, "size": rng.randint(2_000, 4_000_000),
                                                            "mime_type": mime}]})
            elif 0.94 < r <= 0.97:
                img = _img(rng, rng.choice((800, 1024, 1536)), rng.choice((600, 768, 1024)))
                u = conv.add("user", {"content_type": "multimodal_text", "parts": [img, utext]})
            else:
                u = conv.user(utext)
            if k == 0 and sprinkle is not None:
                kind, payload = sprinkle[1]
                if kind == "self":
                    conv.selfs(u, payload)
                else:
                    text, pred, obj, _a, _b, extra = payload
                    reading = dict(extra)
                    conv.fact(u, text, "sprinkled", pred, obj, source="filler", **reading)
            r2 = rng.random()
            if tname == "coding" and r2 < 0.08:
                conv.add("assistant", _code("import statistics\nprint(statistics.mean([3, 5, 8, 13]))"),
                         recipient="python", end_turn=False)
                conv.add("tool", {"content_type": "execution_output", "text": "7.25\n"}, name="python",
                         update_time=_AUTO)
            elif r2 < 0.015:
                prompt = rng.choice(P.DALLE_PROMPTS)
                conv.add("assistant", _code(orjson.dumps({"prompt": prompt, "size": "1024x1024"}).decode()),
                         recipient="dalle.text2im", end_turn=False)
                conv.add("tool", {"content_type": "multimodal_text", "parts": [_img(rng, 1024, 1024, dalle={
                    "gen_id": "".join(rng.choices(_ALNUM, k=16)), "prompt": prompt, "seed": rng.randint(1, 2**31),
                    "parent_gen_id": None, "edit_op": None, "serialization_title": "DALL-E generation metadata"})]},
                    name="dalle.text2im")
            target = self._reply_target(rng)
            if r2 > 0.96:  # regenerated reply; the second one is kept
                conv.asst(self._reply(rng, T, slots, target), move=False)
            conv.asst(self._reply(rng, T, slots, target))
        title = fill(rng.choice(T["titles"]), slots)
        upd = upd_planned if conv.max_t < upd_planned else _r6(conv.max_t + 1.0)
        d = conv.finish(title=title, update_time=upd, shuffle=rng.random() < 0.3)
        return self._account(conv, d)


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------
def iter_conversations(n_conversations: int, seed: int, *, start: str = "2022-09-01",
                       months: int = 18) -> Iterator[dict]:
    """Yield conversation dicts deterministically (same n/seed -> identical output).

    Order is update_time descending (like real exports).  Scenario conversations (up to 8,
    carrying every injected case) are generated first; the rest is generic filler generated
    lazily one conversation at a time."""
    yield from _Gen(n_conversations, seed, start=start, months=months).iterate()


def build_manifest(n_conversations: int, seed: int, **kw) -> dict:
    """Ground truth of what the generator injected for (n_conversations, seed, **kw).
    Regenerates the corpus in memory-flat streaming fashion without serialising it."""
    g = _Gen(n_conversations, seed, **kw)
    for _ in g.iterate():
        pass
    return g.manifest()


def _manifest_path(out_path: Path) -> Path:
    name = out_path.name
    for suf in (".json.zip", ".zip", ".json"):
        if name.endswith(suf):
            name = name[: -len(suf)]
            break
    else:
        name = out_path.stem
    return out_path.with_name(name + ".manifest.json")


_CHAT_HTML = (b"<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n<title>ChatGPT Data Export</title>\n"
              b"</head>\n<body>\n<div id=\"root\"></div>\n<script>\n// synthetic export: conversation data lives "
              b"in conversations.json\nvar jsonData = [];\n</script>\n</body>\n</html>\n")


def write_export(out_path: str | Path, n_conversations: int, seed: int, *, zip_output: bool | None = None,
                 mining_conversations: int = 0, mining_bank: str = "tuning", **kw) -> dict:
    """Stream-write a synthetic export.

    A JSON array is written one conversation at a time (memory stays flat).  If ``out_path``
    ends with ``.zip`` (or ``zip_output`` is true) a zip with ``conversations.json``,
    ``user.json`` and a ``chat.html`` stub is written instead.  The manifest is written to
    ``<stem>.manifest.json`` next to ``out_path``.

    Returns ``{"conversations", "messages", "bytes" (uncompressed conversations.json size),
    "file_bytes", "path", "manifest_path", "seconds"}``."""
    out_path = Path(out_path)
    if zip_output is None:
        zip_output = out_path.suffix.lower() == ".zip"
    t_start = _time.perf_counter()
    g = _Gen(n_conversations, seed, **kw)
    # issue 18: planted mining conversations come after the generator's own, from their own RNG stream, so the
    # existing conversations of every seed stay byte-identical (and none are added unless asked for)
    mg = None
    if mining_conversations:
        from kenning.bench.synth_mining import MiningGen
        mg = MiningGen(mining_conversations, seed, bank=mining_bank)
    dumps = orjson.dumps
    stats = {"conversations": 0, "messages": 0, "bytes": 0}

    def _stream(fh) -> None:
        n = 0
        written = 1
        fh.write(b"[")
        for conv in (g.iterate() if mg is None else itertools.chain(g.iterate(), mg.iterate())):
            b = dumps(conv)
            if n:
                fh.write(b",")
                written += 1
            fh.write(b)
            written += len(b)
            n += 1
        fh.write(b"]")
        stats["conversations"] = n
        stats["bytes"] = written + 1

    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".tmp")
    try:
        _write(tmp, zip_output, g, _stream)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(out_path)
    stats["messages"] = g.n_messages
    manifest = g.manifest()
    if mg is not None:
        manifest["mining"] = mg.manifest()
    mpath = _manifest_path(out_path)
    mpath.write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    stats["file_bytes"] = out_path.stat().st_size
    stats["path"] = str(out_path)
    stats["manifest_path"] = str(mpath)
    stats["seconds"] = round(_time.perf_counter() - t_start, 3)
    return stats


def _write(tmp: Path, zip_output: bool, g: _Gen, _stream) -> None:
    if zip_output:
        urng = g._rng("user")
        user = {"id": "user-" + "".join(urng.choices(_ALNUM, k=24)), "email": "kenning.persona@example.com",
                "chatgpt_plus_user": True, "birth_year": None, "phone_number": None}
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            zi = zipfile.ZipInfo("conversations.json", date_time=(2024, 3, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(zi, "w", force_zip64=True) as fh:
                _stream(fh)
            for nm, data in (("user.json", orjson.dumps(user)), ("chat.html", _CHAT_HTML)):
                zi = zipfile.ZipInfo(nm, date_time=(2024, 3, 1, 0, 0, 0))
                zi.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(zi, data)
    else:
        with open(tmp, "wb", buffering=1 << 20) as fh:
            _stream(fh)
