"""Transcripts (docs/transcript-format.md) → rows for conversations, messages and message_parts.

A transcript is people talking: participants with names, sessions with a start time, turns with a
speaker, text and optional attachments (images with captions, files). One session becomes one
``conversations`` row (``source_kind='transcript'``), one turn one ``messages`` row whose
``author_name`` is the speaker. Pure functions: no SQL, no I/O; ``pipeline.stage1`` stores the rows.

Two encodings of the same model are read:
- JSON: one object ``{"participants": [...], "sessions": [{"id", "started_at", "turns": [...]}]}``;
- JSONL: one object per line, each with ``"type"``: ``transcript`` (header), ``session``, ``turn``.
A record that cannot be read is reported as a :class:`Problem` (file position, JSON pointer, reason,
raw text) and left out; everything else is imported.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson

from kenning.sources.chatgpt import Built, scrub_lone_surrogates, RecordError, parse_record
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import FlaggedJcs, canonicalize, sha256_hex
from kenning.sources.timestamps import normalize_to_utc

FORMAT_ID = "kenning.transcript/1"


@dataclass
class Problem:
    record_index: int | None     # JSON: session index (None = the whole file); JSONL: line index (0-based)
    pointer: str | None          # JSON pointer inside that record
    action: str                  # skipped | repaired
    code: str
    message: str
    raw: Any                     # the offending value (bytes/str for unreadable lines)


@dataclass
class Participant:
    key: str                     # the participant's id in the file, else its name
    name: str
    aliases: list[str]
    is_self: bool


@dataclass
class Turn:
    record_index: int | None
    pointer: str | None
    obj: dict                    # the turn object as it stood in the file


@dataclass
class Session:
    record_index: int            # JSON: index in "sessions"; JSONL: line of the session record (or first turn)
    session_id: str
    obj: dict                    # the session object without its turns
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Transcript:
    header: dict                 # transcript_id, title, timezone, participants (as in the file)
    participants: list[Participant]
    sessions: list[Session]
    problems: list[Problem]
    kind: str                    # transcript_json | transcript_jsonl | locomo


# -- reading --------------------------------------------------------------------------------------

def _participants(raw: Any, problems: list[Problem], index: int | None, base: str) -> list[Participant]:
    out: list[Participant] = []
    if raw is None:
        return out
    if not isinstance(raw, list):
        problems.append(Problem(index, base, "skipped", "WRONG_SHAPE",
                                f"participants must be a list, found {type(raw).__name__}", raw))
        return out
    for i, p in enumerate(raw):
        ptr = f"{base}/{i}"
        if isinstance(p, str) and p.strip():
            out.append(Participant(p, p, [], False))
            continue
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"].strip():
            problems.append(Problem(index, ptr, "skipped", "BAD_PARTICIPANT",
                                    "a participant needs a non-empty \"name\"", p))
            continue
        aliases = [a for a in p.get("aliases") or [] if isinstance(a, str) and a.strip()]
        key = p.get("id") if isinstance(p.get("id"), str) and p.get("id") else p["name"]
        out.append(Participant(key, p["name"], aliases, p.get("self") is True))
    return out


def read_json(data: bytes) -> Transcript:
    """One transcript object. Raises RecordError when the file as a whole is unusable."""
    obj, repairs = parse_record(data)
    problems = [Problem(None, None, "repaired", code, msg, None) for code, msg in repairs]
    if not isinstance(obj, dict):
        raise RecordError("WRONG_SHAPE", f"a transcript must be a JSON object, found {type(obj).__name__}")
    sessions_raw = obj.get("sessions")
    if not isinstance(sessions_raw, list):
        raise RecordError("NO_SESSIONS", "a transcript needs a \"sessions\" list", "/sessions")
    header = {k: v for k, v in obj.items() if k != "sessions"}
    participants = _participants(obj.get("participants"), problems, None, "/participants")
    sessions: list[Session] = []
    for i, s in enumerate(sessions_raw):
        ptr = f"/sessions/{i}"
        if not isinstance(s, dict):
            problems.append(Problem(i, ptr, "skipped", "WRONG_SHAPE",
                                    f"a session must be an object, found {type(s).__name__}", s))
            continue
        turns_raw = s.get("turns")
        if not isinstance(turns_raw, list):
            problems.append(Problem(i, f"{ptr}/turns", "skipped", "NO_TURNS", "a session needs a \"turns\" list", s))
            continue
        sid = _id_text(s.get("id")) or str(i + 1)
        session = Session(i, sid, {k: v for k, v in s.items() if k != "turns"})
        session.turns = [Turn(i, f"{ptr}/turns/{j}", t) for j, t in enumerate(turns_raw)]
        sessions.append(session)
    return Transcript(header, participants, sessions, problems, "transcript_json")


def read_jsonl(lines: Iterable[bytes]) -> Transcript:
    """Header, session and turn records, one per line. A bad line is a problem; the rest imports."""
    header: dict = {}
    participants: list[Participant] = []
    problems: list[Problem] = []
    sessions: dict[str, Session] = {}
    current: Session | None = None
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj, repairs = parse_record(line.strip())
        except RecordError as e:
            problems.append(Problem(n, None, "skipped", e.code, str(e), line))
            continue
        for code, msg in repairs:
            problems.append(Problem(n, None, "repaired", code, msg, line))
        if not isinstance(obj, dict):
            problems.append(Problem(n, None, "skipped", "WRONG_SHAPE",
                                    f"each line must be a JSON object, found {type(obj).__name__}", line))
            continue
        kind = obj.get("type")
        if kind == "transcript":
            if header:
                problems.append(Problem(n, "/type", "skipped", "SECOND_HEADER",
                                        "a second transcript header; the first one is used", line))
                continue
            header = {k: v for k, v in obj.items() if k != "type"}
            participants = _participants(obj.get("participants"), problems, n, "/participants")
        elif kind == "session":
            sid = _id_text(obj.get("id"))
            if sid is None:
                problems.append(Problem(n, "/id", "skipped", "NO_SESSION_ID", "a session line needs an \"id\"", line))
                continue
            if sid in sessions and sessions[sid].obj.get("__implicit__") is not True:
                problems.append(Problem(n, "/id", "skipped", "DUPLICATE_SESSION", f"session {sid!r} is defined twice", line))
                continue
            body = {k: v for k, v in obj.items() if k != "type"}
            if sid in sessions:  # turns came first: the session line fills in its details
                sessions[sid].obj = body
                current = sessions[sid]
            else:
                current = sessions[sid] = Session(n, sid, body)
        elif kind == "turn":
            sid = _id_text(obj.get("session"))
            if sid is None:
                if current is None:
                    current = sessions.setdefault("1", Session(n, "1", {"id": "1", "__implicit__": True}))
                target = current
            else:
                target = sessions.get(sid)
                if target is None:
                    target = sessions[sid] = Session(n, sid, {"id": sid, "__implicit__": True})
            target.turns.append(Turn(n, None, {k: v for k, v in obj.items() if k != "type"}))
        else:
            problems.append(Problem(n, "/type", "skipped", "UNKNOWN_RECORD_TYPE",
                                    f"\"type\" must be transcript, session or turn, found {kind!r}", line))
    for s in sessions.values():
        s.obj.pop("__implicit__", None)
    return Transcript(header, participants, list(sessions.values()), problems, "transcript_jsonl")


# -- building rows --------------------------------------------------------------------------------

def _id_text(v: Any) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str):
        return v or None
    if isinstance(v, (int, float)):
        return canonicalize(v)
    return None


_LOCOMO_TIME = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)


def parse_time(value: Any, timezone: str | None) -> str | None:
    """ISO-8601 / epoch seconds (as everywhere in Kenning), or the spoken form "1:56 pm on 8 May, 2023"."""
    ts = normalize_to_utc(value, timezone)
    if ts is not None or not isinstance(value, str):
        return ts
    m = _LOCOMO_TIME.match(value)
    if m:
        hh, mm, ampm, day, month, year = m.groups()
        try:
            d = dt.datetime.strptime(f"{int(hh)}:{mm} {ampm.upper()} {day} {month[:3].title()} {year}",
                                     "%I:%M %p %d %b %Y")
        except ValueError:
            return None
        return normalize_to_utc(d, timezone)
    return None


def resolve_speaker(name: str, participants: list[Participant]) -> Participant | None:
    key = name.strip().casefold()
    for p in participants:
        if key in (p.key.casefold(), p.name.casefold(), *(a.casefold() for a in p.aliases)):
            return p
    return None


def self_participant(participants: list[Participant], self_name: str | None) -> Participant | None:
    """``--self NAME`` wins; otherwise a participant marked ``"self": true`` in the file."""
    if self_name:
        return resolve_speaker(self_name, participants)
    marked = [p for p in participants if p.is_self]
    return marked[0] if len(marked) == 1 else None


def _attachment_parts(atts: Any, pointer: str | None, warnings: list) -> list[dict]:
    """Attachments → part descriptions (type, text = caption, mime, path, metadata, raw)."""
    out = []
    if atts is None:
        return out
    if not isinstance(atts, list):
        atts = [atts]
    for i, a in enumerate(atts):
        if not isinstance(a, dict):
            warnings.append(("BAD_ATTACHMENT", f"attachment {i} is not an object; kept raw only",
                             {"pointer": f"{pointer or ''}/attachments/{i}"}))
            out.append({"part_type": "other", "text": None, "mime": None, "path": None, "meta": None, "raw": a})
            continue
        mime = a.get("mime_type") if isinstance(a.get("mime_type"), str) else None
        kind = a.get("kind") if isinstance(a.get("kind"), str) else None
        is_image = kind == "image" or (mime or "").startswith("image/")
        path = next((a[k] for k in ("url", "path", "name") if isinstance(a.get(k), str) and a[k]), None)
        caption = a.get("caption") if isinstance(a.get("caption"), str) and a["caption"].strip() else None
        meta = {k: v for k, v in a.items() if k not in ("url", "path", "mime_type", "caption")}
        if caption is not None:
            meta["caption"] = caption
        out.append({"part_type": "image" if is_image else "file", "text": caption, "mime": mime, "path": path,
                    "meta": meta or None, "raw": a})
    return out


def build_session(
    transcript: Transcript,
    session: Session,
    *,
    ids: IdFactory,
    run_id: str,
    import_key: str,
    self_name: str | None,
    timezone: str,
) -> Built:
    """Rows for one session. Turn-level problems come back in ``node_rejects`` / ``warnings``."""
    header = transcript.header
    tz = header.get("timezone") if isinstance(header.get("timezone"), str) else timezone
    participants = transcript.participants
    me = self_participant(participants, self_name)
    warnings: list[tuple[str, str, dict]] = []
    node_rejects: list[tuple[str | None, str, str, Any]] = []
    turn_errors: list[tuple[Turn, str, str]] = []
    node_repairs: list[tuple[str | None, str, str, Any]] = []
    jcs = FlaggedJcs()

    transcript_id = _id_text(header.get("transcript_id")) or _id_text(header.get("id"))
    session_doc = {"transcript": {k: v for k, v in header.items()}, "session": session.obj,
                   "turns": [t.obj for t in session.turns]}
    raw_conversation_json = jcs(session_doc)
    if transcript_id is not None:
        conversation_id = ids.make("transcript_session", transcript_id, session.session_id)
        export_conversation_id = f"{transcript_id}/{session.session_id}"
    else:
        conversation_id = ids.conversation(sha256_hex(raw_conversation_json))
        export_conversation_id = session.session_id
    started_raw = session.obj.get("started_at", session.obj.get("date_time"))
    started = parse_time(started_raw, tz)
    repairs: list[tuple[str, str]] = []
    if started_raw is not None and started is None:
        repairs.append(("BAD_TIMESTAMP", f"session {session.session_id}: started_at {started_raw!r} is not a time; "
                                         "its turns' times are imputed from each other or left missing"))

    messages: list[dict] = []
    parts_rows: list[dict] = []
    prior_ts: str | None = None
    seen_turn_ids: set[str] = set()
    order_index = 0
    for j, turn in enumerate(session.turns):
        t = turn.obj
        ptr = turn.pointer
        if not isinstance(t, dict):
            turn_errors.append((turn, "WRONG_SHAPE", f"a turn must be an object, found {type(t).__name__}"))
            continue
        speaker = t.get("speaker")
        if not isinstance(speaker, str) or not speaker.strip():
            turn_errors.append((turn, "MISSING_SPEAKER", "the turn has no \"speaker\""))
            continue
        text = t.get("text")
        atts = _attachment_parts(t.get("attachments"), ptr, warnings)
        if text is not None and not isinstance(text, str):
            turn_errors.append((turn, "WRONG_SHAPE", f"\"text\" must be a string, found {type(text).__name__}"))
            continue
        if text is None and not atts:
            turn_errors.append((turn, "NO_TEXT", "the turn has neither \"text\" nor attachments"))
            continue
        turn_id = _id_text(t.get("id")) or str(j)
        if turn_id in seen_turn_ids:
            turn_errors.append((turn, "DUPLICATE_TURN_ID", f"a second turn with id {turn_id!r}"))
            continue
        seen_turn_ids.add(turn_id)
        who = resolve_speaker(speaker, participants)
        if who is None and participants:
            warnings.append(("UNKNOWN_SPEAKER", f"speaker {speaker!r} is not among the participants; kept as given",
                             {"speaker": speaker, "turn": turn_id}))
        author = who.name if who is not None else speaker.strip()
        role = "user" if (me is not None and who is me) else "unknown"
        at_raw = t.get("at", t.get("timestamp"))
        ts = parse_time(at_raw, tz) if at_raw is not None else None
        if at_raw is not None and ts is None:
            node_repairs.append((ptr, "BAD_TIMESTAMP", f"turn {turn_id}: {at_raw!r} is not a time; "
                                 "imputed from the previous turn or the session start", t))
        if ts is not None:
            quality = "original"
        elif prior_ts is not None:
            ts, quality = prior_ts, "imputed_prior"
        elif started is not None:
            ts, quality = started, "imputed_parent"   # the session is the turn's parent (R3)
        else:
            quality = "missing"
        if ts is not None:
            prior_ts = ts
        mid = ids.message(conversation_id, turn_id)
        pieces = ([{"part_type": "text", "text": text, "mime": None, "path": None, "meta": None, "raw": text}]
                  if text is not None else []) + atts
        for i, p in enumerate(pieces):
            parts_rows.append({
                "part_id": ids.part(mid, i), "message_id": mid, "part_index": i, "part_type": p["part_type"],
                "text_content": p["text"], "mime_type": p["mime"], "file_path": p["path"],
                "metadata_json": canonicalize(p["meta"]) if p["meta"] else None, "raw_part_json": jcs(p["raw"]),
            })
        if text:
            content_type = "text"
        elif text == "" and not atts:
            content_type = "empty"
        else:
            content_type = "unknown" if text is None else "text"
        raw_message_json = jcs(t)
        messages.append({
            "message_id": mid, "conversation_id": conversation_id, "role": role, "parent_id": None,
            "tree_path": str(order_index), "order_index": order_index, "created_at_utc": ts,
            "timestamp_quality": quality, "content_type": content_type, "text_raw": text,
            "text_part_map_json": None, "code_fence_ranges_json": None, "blockquote_ranges_json": None,
            "attachment_count": sum(1 for p in atts if p["part_type"] in ("image", "file")),
            "raw_message_json": raw_message_json, "export_message_id": turn_id, "export_parent_id": None,
            "author_name": author, "recipient": None, "export_content_type": None, "is_hidden": 0,
            "is_current_branch": 1, "citation_ranges_json": None, "raw_sha256": sha256_hex(raw_message_json),
            "first_run_id": run_id, "last_changed_run_id": run_id,
        })
        order_index += 1
    for turn, code, message in turn_errors:
        node_rejects.append((turn.pointer, code, message, turn.obj))
    if not messages:
        warnings.append(("EMPTY_SESSION", f"session {session.session_id} has no importable turns", {}))
    title = session.obj.get("title") if isinstance(session.obj.get("title"), str) else None
    if title is None:
        base = header.get("title") if isinstance(header.get("title"), str) else "transcript"
        title = f"{base} — session {session.session_id}"
    times = [m["created_at_utc"] for m in messages if m["created_at_utc"]]
    conversation = {
        "conversation_id": conversation_id,
        "export_conversation_id": export_conversation_id,
        "title": title,
        "created_at_utc": started or (min(times) if times else None),
        "updated_at_utc": max(times) if times else started,
        "message_count": len(messages),
        "raw_conversation_json": raw_conversation_json,
        "source_kind": "transcript",
        "current_node_message_id": messages[-1]["message_id"] if messages else None,
        "raw_sha256": sha256_hex(raw_conversation_json),
        "import_key": import_key,
        "first_run_id": run_id,
        "last_changed_run_id": run_id,
    }
    built = Built(conversation, messages, parts_rows, warnings, node_rejects, repairs, node_repairs=node_repairs)
    if jcs.had_surrogates:
        scrub_lone_surrogates(built)
    return built


def participant_rows(transcript: Transcript, conversation_id: str, self_name: str | None,
                     speakers: Iterable[str]) -> list[dict]:
    """Who takes part in one session: the declared participants plus any undeclared speaker."""
    me = self_participant(transcript.participants, self_name)
    rows = []
    seen = set()
    for p in transcript.participants:
        rows.append({"conversation_id": conversation_id, "participant_key": p.key, "name": p.name,
                     "aliases_json": canonicalize(sorted(set(p.aliases))), "is_self": int(p is me)})
        seen.add(p.name)
    for s in sorted(set(speakers) - seen):
        rows.append({"conversation_id": conversation_id, "participant_key": s, "name": s,
                     "aliases_json": "[]", "is_self": 0})
    return rows


def session_import_bytes(transcript: Transcript, session: Session, self_name: str | None) -> bytes:
    """What a session's import depends on besides config: the session, the header, and who is self."""
    return orjson.dumps({"h": transcript.header, "s": session.obj, "t": [t.obj for t in session.turns],
                         "self": (self_name or "").casefold()}, option=orjson.OPT_SORT_KEYS, default=str)


__all__ = ["FORMAT_ID", "Problem", "Participant", "Session", "Transcript", "Turn", "build_session", "parse_time",
           "participant_rows", "read_json", "read_jsonl", "resolve_speaker", "self_participant",
           "session_import_bytes"]
