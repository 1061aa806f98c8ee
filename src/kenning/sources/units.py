"""Conversation-like units from non-chat sources (issue 18 part 7): a Claude.ai conversation, a note, a mail thread,
a calendar event → rows for ``conversations``, ``messages`` and ``message_parts``, so every later stage works on them
exactly as on a ChatGPT export.

Pure functions, no SQL. Each importer (``sources/claude.py``, ``notes.py``, ``mbox.py``, ``ics.py``) reads its format
into :class:`Unit` values whose ``raw`` holds the record as it stood in the source, losslessly (bytes that are not
UTF-8 as base64, decision I58); :func:`build_unit` makes the rows. A unit's import key covers its raw record, so an
unchanged unit is skipped and a changed one is applied message by message (D12)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import orjson

from kenning.sources.chatgpt import Built, scrub_lone_surrogates
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import FlaggedJcs, canonicalize, sha256_hex


@dataclass
class UnitTurn:
    turn_id: str
    speaker: str | None
    role: str                          # user | assistant | unknown
    text: str | None
    at: str | None                     # canonical UTC (sources.timestamps.format_utc), or None
    raw: Any                           # the turn as it stood in the source (JSON-able, lossless)
    parts: list[dict] = field(default_factory=list)   # extra parts: part_type, text, mime, path, meta, raw
    hidden_text: bool = False          # text kept in parts only (e.g. a model's thinking): never mined


@dataclass
class Unit:
    record_index: int                  # position of the record in its file (mail: the first mail of the thread)
    id_parts: tuple[str, ...]          # stable identity: conversation_id = ids.make(*id_parts)
    export_id: str                     # the source's own id (Claude uuid, note path, thread root, event UID)
    title: str | None
    source_kind: str                   # claude | note | mail | calendar
    raw: Any                           # the whole record, lossless (what the import key hashes)
    turns: list[UnitTurn]
    created_at: str | None = None
    updated_at: str | None = None
    node_rejects: list[tuple[str | None, str, str, Any]] = field(default_factory=list)  # pointer, code, msg, raw
    repairs: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str, dict]] = field(default_factory=list)


def raw_bytes(data: bytes) -> dict[str, str]:
    """Bytes kept losslessly in JSON: the text when they are UTF-8, else base64 (I58)."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def bytes_of(raw: dict[str, str]) -> bytes:
    """The inverse of :func:`raw_bytes`."""
    return raw["text"].encode("utf-8") if "text" in raw else base64.b64decode(raw["base64"])


def import_bytes(unit: Unit) -> bytes:
    return orjson.dumps({"k": unit.source_kind, "id": list(unit.id_parts), "raw": unit.raw},
                        option=orjson.OPT_SORT_KEYS, default=str)


def build_unit(unit: Unit, *, ids: IdFactory, run_id: str, import_key: str) -> Built:
    jcs = FlaggedJcs()

    conversation_id = ids.make(*unit.id_parts)
    raw_conversation_json = jcs(unit.raw)
    messages: list[dict] = []
    parts_rows: list[dict] = []
    seen: set[str] = set()
    for turn in unit.turns:
        if turn.turn_id in seen:
            unit.node_rejects.append((None, "DUPLICATE_TURN_ID", f"a second item with id {turn.turn_id!r}", turn.raw))
            continue
        seen.add(turn.turn_id)
        mid = ids.message(conversation_id, turn.turn_id)
        pieces = []
        if turn.text is not None and not turn.hidden_text:
            pieces.append({"part_type": "text", "text": turn.text, "mime": None, "path": None, "meta": None,
                           "raw": turn.text})
        pieces += turn.parts
        for i, p in enumerate(pieces):
            parts_rows.append({
                "part_id": ids.part(mid, i), "message_id": mid, "part_index": i, "part_type": p["part_type"],
                "text_content": p.get("text"), "mime_type": p.get("mime"), "file_path": p.get("path"),
                "metadata_json": canonicalize(p["meta"]) if p.get("meta") else None,
                "raw_part_json": jcs(p.get("raw")),
            })
        text = None if turn.hidden_text else turn.text
        content_type = "text" if text else ("empty" if text == "" and not turn.parts else
                                            ("mixed" if turn.parts and text else "unknown"))
        raw_message_json = jcs(turn.raw)
        order = len(messages)
        messages.append({
            "message_id": mid, "conversation_id": conversation_id, "role": turn.role, "parent_id": None,
            "tree_path": str(order), "order_index": order, "created_at_utc": turn.at,
            "timestamp_quality": "original" if turn.at else "missing", "content_type": content_type,
            "text_raw": text, "text_part_map_json": None, "code_fence_ranges_json": None,
            "blockquote_ranges_json": None,
            "attachment_count": sum(1 for p in turn.parts if p["part_type"] in ("image", "file")),
            "raw_message_json": raw_message_json, "export_message_id": turn.turn_id, "export_parent_id": None,
            "author_name": turn.speaker, "recipient": None, "export_content_type": None, "is_hidden": 0,
            "is_current_branch": 1, "citation_ranges_json": None, "raw_sha256": sha256_hex(raw_message_json),
            "first_run_id": run_id, "last_changed_run_id": run_id,
        })
    times = [m["created_at_utc"] for m in messages if m["created_at_utc"]]
    conversation = {
        "conversation_id": conversation_id, "export_conversation_id": unit.export_id, "title": unit.title,
        "created_at_utc": unit.created_at or (min(times) if times else None),
        "updated_at_utc": unit.updated_at or (max(times) if times else unit.created_at),
        "message_count": len(messages), "raw_conversation_json": raw_conversation_json,
        "source_kind": unit.source_kind,
        "current_node_message_id": messages[-1]["message_id"] if messages else None,
        "raw_sha256": sha256_hex(raw_conversation_json), "import_key": import_key,
        "first_run_id": run_id, "last_changed_run_id": run_id,
    }
    built = Built(conversation, messages, parts_rows, list(unit.warnings), list(unit.node_rejects),
                  list(unit.repairs))
    if jcs.had_surrogates:
        scrub_lone_surrogates(built)
    return built


__all__ = ["Unit", "UnitTurn", "build_unit", "bytes_of", "import_bytes", "raw_bytes"]
