"""RFC 6902 patches between two node/edge documents, computed directly (DOC72 §37 stores patches, not snapshots).

Objects are diffed key by key (sorted, so the same change always gives the same patch); any other value that
differs — a list, a number, a string — is replaced whole. No move/copy detection: the patches are for replay and
reversal, and a plain add/remove/replace patch is both smaller to reason about and ~20× faster to make than
``jsonpatch.make_patch``. Applying uses the ``jsonpatch`` library (the reference implementation)."""

from __future__ import annotations

from typing import Any

import jsonpatch
import orjson


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def diff(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[dict[str, Any]] = []
        for k in sorted(before.keys() - after.keys()):
            ops.append({"op": "remove", "path": f"{path}/{_escape(k)}"})
        for k in sorted(after):
            if k not in before:
                ops.append({"op": "add", "path": f"{path}/{_escape(k)}", "value": after[k]})
            elif before[k] != after[k] or type(before[k]) is not type(after[k]):
                ops.extend(diff(before[k], after[k], f"{path}/{_escape(k)}"))
        return ops
    if before == after and type(before) is type(after):
        return []
    return [{"op": "replace", "path": path, "value": after}]


def apply(doc: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """``doc`` with ``patch`` applied (a new object; ``doc`` is not changed). Raises jsonpatch's errors."""
    return jsonpatch.apply_patch(doc, patch)


def copy(doc: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON document (orjson round trip: several times faster than copy.deepcopy)."""
    return orjson.loads(orjson.dumps(doc))
