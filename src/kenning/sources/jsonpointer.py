"""RFC 6901 JSON pointers, read-only and forgiving: a pointer that does not resolve gives MISSING."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable


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


def _walk(doc: Any, tokens: tuple[str, ...]) -> Any:
    """RFC 6901 evaluation, every case (lists, dict subclasses, missing members)."""
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


def _missing(_doc: Any) -> Any:
    return MISSING


def _compile(pointer: str) -> Callable[[Any], Any]:
    """A function giving what ``_walk`` gives for ``pointer``: straight dict lookups while the path runs through
    plain dicts (the importer reads ~10 pointers per message), ``_walk`` for everything else (J3)."""
    try:
        tokens = _tokens(pointer)
    except ValueError:
        return _missing
    if len(tokens) == 1:
        (a,) = tokens

        def get(doc: Any) -> Any:
            if type(doc) is dict:
                return doc.get(a, MISSING)
            return _walk(doc, tokens)
    elif len(tokens) == 2:
        a, b = tokens

        def get(doc: Any) -> Any:
            if type(doc) is dict:
                x = doc.get(a, MISSING)
                if type(x) is dict:
                    return x.get(b, MISSING)
                if x is MISSING:
                    return MISSING
            return _walk(doc, tokens)
    elif len(tokens) == 3:
        a, b, c = tokens

        def get(doc: Any) -> Any:
            if type(doc) is dict:
                x = doc.get(a, MISSING)
                if type(x) is dict:
                    y = x.get(b, MISSING)
                    if type(y) is dict:
                        return y.get(c, MISSING)
                    if y is MISSING:
                        return MISSING
                elif x is MISSING:
                    return MISSING
            return _walk(doc, tokens)
    else:
        def get(doc: Any) -> Any:
            return _walk(doc, tokens)
    if len(_compiled) > 4096:  # pointers come from the config: a handful, but never let it grow unbounded
        _compiled.clear()
    _compiled[pointer] = get
    return get


_compiled: dict[str, Callable[[Any], Any]] = {}


def resolve(doc: Any, pointer: str | None) -> Any:
    if pointer is None:
        return MISSING
    get = _compiled.get(pointer)
    if get is None:
        get = _compile(pointer)
    return get(doc)


def resolve_first(doc: Any, pointers: str | list[str] | None) -> Any:
    """Resolve a pointer, or the first of a list of pointers that gives a non-null value."""
    if pointers is None or isinstance(pointers, str):
        return resolve(doc, pointers)
    for p in pointers:
        get = _compiled.get(p)
        if get is None:
            get = _compile(p)
        v = get(doc)
        if v is not MISSING and v is not None:
            return v
    return MISSING


def is_valid_pointer(pointer: str) -> bool:
    try:
        _tokens(pointer)
        return True
    except ValueError:
        return False
