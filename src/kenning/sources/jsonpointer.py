"""RFC 6901 JSON pointers, read-only and forgiving: a pointer that does not resolve gives MISSING."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


@lru_cache(maxsize=512)
def _tokens(pointer: str) -> tuple[str, ...]:
    if pointer in ("", "/"):
        return () if pointer == "" else ("",)
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer must start with '/': {pointer!r}")
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


def resolve(doc: Any, pointer: str | None) -> Any:
    if pointer is None:
        return MISSING
    try:
        tokens = _tokens(pointer)
    except ValueError:
        return MISSING
    cur = doc
    for tok in tokens:
        if type(cur) is dict:  # the common case first: plain dict lookups
            cur = cur.get(tok, MISSING)
            if cur is MISSING:
                return MISSING
        elif isinstance(cur, dict):
            if tok not in cur:
                return MISSING
            cur = cur[tok]
        elif isinstance(cur, list):
            if not tok.isdigit() or (len(tok) > 1 and tok[0] == "0"):
                return MISSING
            i = int(tok)
            if i >= len(cur):
                return MISSING
            cur = cur[i]
        else:
            return MISSING
    return cur


def resolve_first(doc: Any, pointers: str | list[str] | None) -> Any:
    """Resolve a pointer, or the first of a list of pointers that gives a non-null value."""
    if pointers is None or isinstance(pointers, str):
        return resolve(doc, pointers)
    for p in pointers:
        v = resolve(doc, p)
        if v is not MISSING and v is not None:
            return v
    return MISSING


def is_valid_pointer(pointer: str) -> bool:
    try:
        _tokens(pointer)
        return True
    except ValueError:
        return False
