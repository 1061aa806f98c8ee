"""Each piece of raw text stored once (issue 24 §2, decisions V1–V6).

Seed 001 keeps the JCS text of a conversation, of each of its messages and of each message part, plus the text
extracted from the parts — the same words four or five times. The vault keeps them once:

- ``conversations.raw_conversation_z``: the conversation's JCS text, zlib-compressed at a fixed level (zlib is
  deterministic for a given level and input, so identical input still gives identical bytes);
  ``raw_conversation_json`` then holds ``''``.
- ``messages.raw_at``/``raw_len``: where the message's JCS text lies in its conversation's JCS text (JCS of a
  nested value is a substring of the JCS of the whole, so this is exact); ``raw_message_json`` then holds ``''``.
- ``message_parts.raw_at``/``raw_len``: where the part's JCS text lies in its message's JCS text;
  ``message_parts.text_at``/``text_len``: where the part's text lies in ``messages.text_raw`` (its
  ``text_content`` then is NULL).

A value that is not found where it should be (a message an older export kept, a redacted row, a hand-built
fixture) is stored literally, with the offsets NULL: the offsets are only ever a shortcut, never a guess.
Offsets are in code points, as Python slices and SQLite's ``substr`` count them.

The SQL views ``conversations_raw``, ``messages_raw`` and ``message_parts_raw`` (migration 0100) give the seed's
columns back under their seed names; ``kenning_inflate`` is registered on every connection for them.
"""

from __future__ import annotations

import zlib
from typing import Any

import apsw

# Measured on the 10k export: level 1 makes the JCS text 5.1× smaller, level 6 5.9×, but level 1 leaves stage 1
# 6% less CPU (faster than before the raw text was packed at all) for a vault 1.9% larger: speed is the scarcer goal.
ZLIB_LEVEL = 1

_cache: dict[bytes, str] = {}
_CACHE_ENTRIES = 4      # the views inflate one conversation per message row: remember the last few


def deflate(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), ZLIB_LEVEL)


def inflate(blob: bytes) -> str:
    hit = _cache.get(blob)
    if hit is not None:
        return hit
    text = zlib.decompress(blob).decode("utf-8")
    if len(_cache) >= _CACHE_ENTRIES:  # oldest first; tolerant of another thread evicting the same entry
        _cache.pop(next(iter(_cache), None), None)
    _cache[bytes(blob)] = text
    return text


def _sql_deflate(text: Any) -> bytes | None:
    return None if text is None else deflate(str(text))


def _sql_inflate(blob: Any) -> str | None:
    return None if blob is None else inflate(bytes(blob))


def register(conn: apsw.Connection) -> None:
    """``kenning_deflate(text)`` / ``kenning_inflate(blob)`` for the migration and the ``*_raw`` views."""
    conn.create_scalar_function("kenning_deflate", _sql_deflate, 1, deterministic=True)
    conn.create_scalar_function("kenning_inflate", _sql_inflate, 1, deterministic=True)


MIGRATION = 100   # 0100_raw_once.sql


def reclaim(conn: apsw.Connection) -> bool:
    """After migration 0100 rewrote an existing vault's raw rows, give the freed pages back to the disk (the
    point of the migration) — once, right away. Skipped for a vault with no conversations (nothing was freed)
    and when another connection holds the vault (``kenning maintain`` or ``forget`` vacuum later)."""
    if conn.execute("SELECT NOT EXISTS (SELECT 1 FROM conversations)").fetchone()[0]:
        return False
    from kenning.store.connection import vacuum

    try:
        vacuum(conn)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except (apsw.BusyError, apsw.LockedError):
        return False
    return True


def place(outer: str | None, inner: str | None) -> tuple[int | None, int | None]:
    """(offset, length) of ``inner`` inside ``outer``, or (None, None) when it is not there."""
    if outer is None or inner is None:
        return None, None
    if outer is inner:  # a one-part message's text_raw is its part's text (the same object): no search
        return 0, len(inner)
    at = outer.find(inner)
    return (at, len(inner)) if at >= 0 else (None, None)


def pack_conversation(conv: dict) -> dict:
    raw = conv["raw_conversation_json"]
    return {**conv, "raw_conversation_json": "", "raw_conversation_z": deflate(raw)}


def pack_message(msg: dict, conversation_raw: str | None) -> dict:
    """``raw_at_hint``: where the importer says the message lies (checked, never trusted; else searched)."""
    raw, hint = msg["raw_message_json"], msg.get("raw_at_hint")
    if hint is not None and conversation_raw is not None and conversation_raw.startswith(raw, hint):
        at, n = hint, len(raw)
    else:
        at, n = place(conversation_raw, raw)
    return {**msg, "raw_message_json": "" if at is not None else msg["raw_message_json"], "raw_at": at, "raw_len": n}


def pack_part(part: dict, message: dict | None) -> dict:
    msg_raw = message["raw_message_json"] if message else None
    text_raw = message["text_raw"] if message else None
    ra, rn = place(msg_raw, part["raw_part_json"])
    text = part["text_content"]
    # SQLite's length() and substr() stop at a NUL: such a text stays literal so the views stay exact
    nul = (text is not None and "\x00" in text) or (text_raw is not None and "\x00" in text_raw)
    ta, tn = place(text_raw, text) if not nul else (None, None)
    return {**part, "raw_part_json": "" if ra is not None else part["raw_part_json"], "raw_at": ra, "raw_len": rn,
            "text_content": None if ta is not None else part["text_content"], "text_at": ta, "text_len": tn}


def unpack_conversation(row: dict) -> dict:
    if row.get("raw_conversation_z") is not None:
        row["raw_conversation_json"] = inflate(row["raw_conversation_z"])
    row.pop("raw_conversation_z", None)
    return row


def unpack_message(row: dict, conversation_raw: str | None) -> dict:
    at, n = row.pop("raw_at", None), row.pop("raw_len", None)
    if at is not None and conversation_raw is not None:
        row["raw_message_json"] = conversation_raw[at:at + n]
    return row
