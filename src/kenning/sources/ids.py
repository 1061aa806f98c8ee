"""Deterministic identifiers: ``uuid5(KG_NS_UUID, JCS([...]))`` (seed 001, "Identifier policy")."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import orjson

from kenning.sources.jcs import canonical_bytes

_dumps = orjson.dumps
_REFUSED = (TypeError, orjson.JSONEncodeError)

DEFAULT_NAMESPACE = "550e8400-e29b-41d4-a716-446655440000"
NULL = "__NULL__"
EMPTY = "__EMPTY__"


def _uuid5_text(ns_bytes: bytes, name: str | bytes) -> str:
    """``str(uuid.uuid5(ns, name))`` without building UUID objects (hot in the importer); ``name`` as text or as
    its UTF-8 bytes."""
    h = bytearray(hashlib.sha1(ns_bytes + (name if type(name) is bytes else name.encode("utf-8"))).digest()[:16])
    h[6] = (h[6] & 0x0F) | 0x50
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def encode_component(v: Any) -> Any:
    """Seed 001: None -> "__NULL__", "" -> "__EMPTY__" inside ID components."""
    if v is None:
        return NULL
    if isinstance(v, str) and v == "":
        return EMPTY
    return v


class IdFactory:
    """Makes every deterministic ID from one namespace (``ids.id_namespace`` in config)."""

    def __init__(self, namespace: str = DEFAULT_NAMESPACE):
        self.namespace = uuid.UUID(namespace)
        self._ns_bytes = self.namespace.bytes

    def make(self, *components: Any) -> str:
        comps = [encode_component(c) for c in components]
        for c in comps:
            if type(c) is not str and type(c) is not int:
                return _uuid5_text(self._ns_bytes, canonical_bytes(comps))
        # Only strings and integers: orjson writes exactly their JCS text (no floats, no keys to order); it
        # refuses lone surrogates and integers beyond 64 bits, which the exact path then takes (J9).
        try:
            return _uuid5_text(self._ns_bytes, _dumps(comps))
        except _REFUSED:
            return _uuid5_text(self._ns_bytes, canonical_bytes(comps))

    # named formulas, so every call site spells the seed's formula the same way
    def conversation(self, raw_conversation_sha256: str) -> str:
        return self.make("conversation", raw_conversation_sha256)

    def message(self, conversation_id: str, message_index_or_export_id: Any) -> str:
        return self.make("message", conversation_id, message_index_or_export_id)

    def part(self, message_id: str, part_index: int) -> str:
        return self.make("part", message_id, part_index)

    def run(self, stage: str, started_at_utc: str, config_hash: str, seq: int) -> str:
        return self.make("run", stage, started_at_utc, config_hash, seq)

    def reject(self, source_sha256: str, record_index: int | None, pointer: str | None, reason_code: str) -> str:
        return self.make("reject", source_sha256, record_index, pointer, reason_code)
