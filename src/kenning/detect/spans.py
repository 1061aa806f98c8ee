"""Spans inside ``text_raw``: exclusion ranges, intersection, and the surface hash (seed 001 §2A.4, §2A.5.2).

Every offset is a code-point index into the stored text, half-open ``[start, end)``. Python ``str``
indices are code points, so an astral emoji or a combining mark before a span counts as exactly the
characters it is; nothing here works on bytes or UTF-16 units.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass
from functools import lru_cache

import orjson

NO_SURFACE = "__NO_SURFACE__"  # E3: the seed's "**NO_SURFACE**" read as the __NULL__/__EMPTY__ style marker

# Exclusion kinds, in the order their suppression reason is reported when a span hits several.
FENCE, BLOCKQUOTE, CITATION = "fence", "blockquote", "citation"
REASON_BY_KIND = {FENCE: "INTERSECTS_CODE_FENCE", BLOCKQUOTE: "INTERSECTS_BLOCKQUOTE", CITATION: "INTERSECTS_CITATION"}
_KIND_RANK = {FENCE: 0, BLOCKQUOTE: 1, CITATION: 2}


def surface_hash(surface: str | None) -> str:
    text = NO_SURFACE if surface is None else surface
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _ranges(raw_json: str | None) -> list[tuple[int, int]]:
    if not raw_json or raw_json == "[]":  # most messages: no need to parse
        return []
    return [(int(r["char_start"]), int(r["char_end"])) for r in orjson.loads(raw_json)]


@dataclass(frozen=True)
class Exclusions:
    """The message's excluded ranges, sorted by start, each with its kind."""

    starts: tuple[int, ...]
    ranges: tuple[tuple[int, int, str], ...]

    @classmethod
    def build(cls, fences_json: str | None, blockquotes_json: str | None, citations_json: str | None,
              *, include_blockquotes: bool, include_citations: bool = True) -> "Exclusions":
        # Immutable, and a function of its arguments: most messages share the empty one, so built once per input.
        return _build(cls, fences_json, blockquotes_json, citations_json, include_blockquotes, include_citations)

    @classmethod
    def _build(cls, fences_json: str | None, blockquotes_json: str | None, citations_json: str | None,
               include_blockquotes: bool, include_citations: bool) -> "Exclusions":
        found: list[tuple[int, int, str]] = [(s, e, FENCE) for s, e in _ranges(fences_json)]
        if include_blockquotes:
            found += [(s, e, BLOCKQUOTE) for s, e in _ranges(blockquotes_json)]
        if include_citations:
            found += [(s, e, CITATION) for s, e in _ranges(citations_json)]
        found = [r for r in found if r[1] > r[0]]
        found.sort(key=lambda r: (r[0], r[1], _KIND_RANK[r[2]]))
        return cls(tuple(r[0] for r in found), tuple(found))

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def hit(self, start: int, end: int) -> str | None:
        """The kind of the strongest exclusion that ``[start, end)`` intersects, or None."""
        if not self.ranges:
            return None
        best: str | None = None
        # ranges starting before `end` may intersect; scan back from there (ranges are few per message)
        i = bisect.bisect_left(self.starts, end)
        for s, e, kind in self.ranges[:i]:
            if s < end and start < e and (best is None or _KIND_RANK[kind] < _KIND_RANK[best]):
                best = kind
        return best

    def kind_ranges(self, *kinds: str) -> list[tuple[int, int]]:
        return [(s, e) for s, e, k in self.ranges if k in kinds]


@lru_cache(maxsize=4096)
def _build(cls, fences_json, blockquotes_json, citations_json, include_blockquotes, include_citations) -> Exclusions:
    return cls._build(fences_json, blockquotes_json, citations_json, include_blockquotes, include_citations)


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


class Occupancy:
    """Spans already taken by winners in one message; answers "does [s,e) overlap any, and which"."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._items: list[tuple[int, int, object]] = []

    def find(self, start: int, end: int) -> object | None:
        i = bisect.bisect_left(self._starts, end)
        # winners never overlap each other, so only the nearest one starting before `end` can reach us
        if i > 0:
            s, e, owner = self._items[i - 1]
            if s < end and start < e:
                return owner
        return None

    def add(self, start: int, end: int, owner: object) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._items.insert(i, (start, end, owner))
