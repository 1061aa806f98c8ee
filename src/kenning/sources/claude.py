"""The Claude.ai data export (issue 18 part 7): ``conversations.json`` (inside the export zip, or alone) — a JSON array
of conversations ``{uuid, name, created_at, updated_at, chat_messages: [{uuid, sender: human|assistant, text,
content: [blocks], created_at, attachments, files}]}`` → :class:`~kenning.sources.units.Unit` values.

- ``human`` turns get role ``user`` and ``assistant`` turns role ``assistant``, so every later stage treats them like
  ChatGPT messages.
- Content blocks: ``text`` → the message text (blocks joined by a blank line); ``thinking`` → a hidden part, never
  mined (I57); ``tool_use`` / ``tool_result`` → tool parts; attachments with ``extracted_content`` and files → file
  parts. Without blocks the message's ``text`` is used.
- A conversation that is not an object, has no ``uuid`` or no ``chat_messages`` list is rejected whole; a message
  without a known sender or without any content is rejected alone (file, record, pointer, reason)."""

from __future__ import annotations

from typing import Any

from kenning.sources.chatgpt import RecordError
from kenning.sources.timestamps import normalize_to_utc
from kenning.sources.units import Unit, UnitTurn

ROLES = {"human": "user", "assistant": "assistant"}
SPEAKERS: dict[str, str | None] = {"human": None, "assistant": None}   # as ChatGPT messages: no author name


def _blocks(msg: dict, ptr: str, warnings: list) -> tuple[list[str], list[dict], bool]:
    """(text pieces, extra parts, saw_blocks) of one message's content blocks."""
    texts: list[str] = []
    parts: list[dict] = []
    content = msg.get("content")
    if not isinstance(content, list):
        return texts, parts, False
    for i, b in enumerate(content):
        if not isinstance(b, dict):
            warnings.append(("BAD_CONTENT_BLOCK", f"content block {i} is not an object; kept raw only",
                             {"pointer": f"{ptr}/content/{i}"}))
            parts.append({"part_type": "other", "text": None, "meta": {"block_index": i}, "raw": b})
            continue
        kind = b.get("type")
        if kind == "text" and isinstance(b.get("text"), str):
            texts.append(b["text"])
        elif kind == "thinking":
            parts.append({"part_type": "other", "text": b.get("thinking") if isinstance(b.get("thinking"), str)
                          else None, "meta": {"context_kind": "hidden_reasoning"}, "raw": b})
        elif kind == "tool_use":
            parts.append({"part_type": "tool_call", "text": None, "meta": {"name": b.get("name")}, "raw": b})
        elif kind == "tool_result":
            inner = b.get("content")
            text = "\n".join(x.get("text", "") for x in inner if isinstance(x, dict)) if isinstance(inner, list) \
                else (inner if isinstance(inner, str) else None)
            parts.append({"part_type": "tool_result", "text": text or None, "meta": {"name": b.get("name")},
                          "raw": b})
        else:
            parts.append({"part_type": "other", "text": None, "meta": {"block_type": kind}, "raw": b})
    return texts, parts, True


def _files(msg: dict) -> list[dict]:
    out = []
    for key in ("attachments", "files"):
        items = msg.get(key)
        if not isinstance(items, list):
            continue
        for a in items:
            if not isinstance(a, dict):
                continue
            name = a.get("file_name") if isinstance(a.get("file_name"), str) else None
            text = a.get("extracted_content") if isinstance(a.get("extracted_content"), str) else None
            mime = a.get("file_type") if isinstance(a.get("file_type"), str) and "/" in a["file_type"] else None
            meta = {k: v for k, v in a.items() if k not in ("extracted_content", "file_name")}
            part_type = "image" if (a.get("file_kind") == "image" or (mime or "").startswith("image/")) else "file"
            out.append({"part_type": part_type, "text": text, "mime": mime, "path": name, "meta": meta or None,
                        "raw": a})
    return out


def claude_unit(index: int, obj: Any) -> Unit:
    """One conversation record → a Unit. Raises RecordError when the record as a whole is unusable."""
    if not isinstance(obj, dict):
        raise RecordError("WRONG_SHAPE", f"a conversation must be a JSON object, found {type(obj).__name__}")
    uuid = obj.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        raise RecordError("NO_CONVERSATION_ID", "a Claude conversation needs a \"uuid\"", "/uuid")
    msgs = obj.get("chat_messages")
    if not isinstance(msgs, list):
        raise RecordError("NO_MESSAGES", "a Claude conversation needs a \"chat_messages\" list", "/chat_messages")
    unit = Unit(index, ("claude_conversation", uuid), uuid, obj.get("name") if isinstance(obj.get("name"), str)
                and obj["name"].strip() else None, "claude", obj, [],
                created_at=normalize_to_utc(obj.get("created_at")), updated_at=normalize_to_utc(obj.get("updated_at")))
    for j, m in enumerate(msgs):
        ptr = f"/chat_messages/{j}"
        if not isinstance(m, dict):
            unit.node_rejects.append((ptr, "WRONG_SHAPE", f"a message must be an object, found {type(m).__name__}", m))
            continue
        sender = m.get("sender")
        if sender not in ROLES:
            unit.node_rejects.append((ptr, "BAD_SENDER", f"\"sender\" must be human or assistant, found {sender!r}",
                                      m))
            continue
        texts, parts, had_blocks = _blocks(m, ptr, unit.warnings)
        if not had_blocks and isinstance(m.get("text"), str):
            texts = [m["text"]]
        parts += _files(m)
        text = "\n\n".join(t for t in texts if t) if texts else None
        if not text and not parts:
            unit.node_rejects.append((ptr, "NO_CONTENT", "the message has no text, content blocks or files", m))
            continue
        at_raw = m.get("created_at")
        at = normalize_to_utc(at_raw) if at_raw is not None else None
        if at_raw is not None and at is None:
            unit.repairs.append(("BAD_TIMESTAMP", f"message {j}: created_at {at_raw!r} is not a time; left missing"))
        mid = m.get("uuid") if isinstance(m.get("uuid"), str) and m["uuid"] else str(j)
        unit.turns.append(UnitTurn(mid, SPEAKERS[sender], ROLES[sender], text, at, m, parts))
    return unit


__all__ = ["claude_unit"]
