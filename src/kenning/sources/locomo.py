"""LoCoMo conversations (``../shared/data/locomo/*.json``) read as transcripts.

A LoCoMo file holds two speakers (``speaker_a``, ``speaker_b``), sessions ``session_N`` with
``session_N_date_time`` ("1:56 pm on 8 May, 2023"), and turns ``{speaker, dia_id, text, img_url?,
blip_caption?, query?}``. Each session becomes a transcript session with that start time; each turn
keeps its ``dia_id`` as the turn id (→ ``messages.export_message_id``), so evaluation can map the
annotated evidence ("D1:3") to stored messages. Images become attachments with the BLIP caption.
The annotations (``qa``, observations, summaries, event lists) are evaluation data and are not
imported: they are read by :mod:`kenning.bench.locomo_eval` straight from the file.
"""

from __future__ import annotations

import re
from typing import Any

from kenning.sources.chatgpt import RecordError, parse_record
from kenning.sources.transcript import Participant, Problem, Session, Transcript, Turn

_SESSION = re.compile(r"^session_(\d+)$")


def looks_like_locomo(obj: Any) -> bool:
    return isinstance(obj, dict) and "speaker_a" in obj and "speaker_b" in obj and any(
        _SESSION.match(k) for k in obj)


def session_numbers(obj: dict) -> list[int]:
    nums = {int(m.group(1)) for k in obj if (m := _SESSION.match(k))}
    nums |= {int(k.split("_")[1]) for k in obj if re.fullmatch(r"session_\d+_date_time", k)}
    return sorted(nums)


def _turn(t: Any) -> Any:
    if not isinstance(t, dict):
        return t
    out = {k: v for k, v in t.items() if k not in ("dia_id", "img_url", "blip_caption", "query")}
    out["id"] = t.get("dia_id")
    urls = t.get("img_url")
    urls = [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else ([urls] if isinstance(urls, str) else [])
    caption = t.get("blip_caption")
    if urls or isinstance(caption, str):
        atts = []
        for i, u in enumerate(urls or [None]):
            a: dict[str, Any] = {"kind": "image"}
            if u:
                a["url"] = u
            if i == 0 and isinstance(caption, str):
                a["caption"] = caption
            if i == 0 and isinstance(t.get("query"), str):
                a["query"] = t["query"]
            atts.append(a)
        out["attachments"] = atts
    return out


def from_obj(obj: dict) -> Transcript:
    if not looks_like_locomo(obj):
        raise RecordError("WRONG_SHAPE", "not a LoCoMo conversation (speaker_a, speaker_b, session_N)")
    a, b = obj.get("speaker_a"), obj.get("speaker_b")
    problems: list[Problem] = []
    participants = [Participant(n, n, [], False) for n in (a, b) if isinstance(n, str) and n.strip()]
    header = {
        "format": "locomo",
        "transcript_id": f"locomo:{a}:{b}:{obj.get('session_1_date_time')}",
        "title": f"{a} & {b}",
        "participants": [p.name for p in participants],
    }
    sessions: list[Session] = []
    for n in session_numbers(obj):
        turns = obj.get(f"session_{n}")
        if turns is None:
            continue  # a date with no turns (the files list more dates than sessions)
        if not isinstance(turns, list):
            problems.append(Problem(n, f"/session_{n}", "skipped", "WRONG_SHAPE",
                                    f"session_{n} must be a list of turns", turns))
            continue
        s = Session(n, f"session_{n}", {"id": f"session_{n}", "started_at": obj.get(f"session_{n}_date_time")})
        s.turns = [Turn(n, f"/session_{n}/{j}", _turn(t)) for j, t in enumerate(turns)]
        sessions.append(s)
    return Transcript(header, participants, sessions, problems, "locomo")


def read_locomo(data: bytes) -> Transcript:
    obj, repairs = parse_record(data)
    t = from_obj(obj)
    t.problems[:0] = [Problem(None, None, "repaired", c, m, None) for c, m in repairs]
    return t


def dia_id(text: str) -> str | None:
    """Normalise an evidence reference: "D1:3", "D:11:26" and "D30:05" → "D1:3", "D11:26", "D30:5"."""
    m = re.fullmatch(r"\s*D:?(\d+):0*(\d+)\s*", text)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def evidence_ids(evidence: Any) -> list[str]:
    """The evidence list of a QA item, split on ';' / whitespace and normalised (R9)."""
    out: list[str] = []
    for e in evidence or []:
        if not isinstance(e, str):
            continue
        for piece in re.split(r"[;,\s]+(?=D)", e.strip()):
            d = dia_id(piece)
            if d and d not in out:
                out.append(d)
    return out
