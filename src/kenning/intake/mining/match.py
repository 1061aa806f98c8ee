"""Finding the existing node a later message talks about ("I finally ran that marathon", "the backup routine
worked again"): the best fuzzy match among the kind's active nodes, nodes from this conversation preferred."""

from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz

_STOP = frozenset("a an the my our to of for and on in at by with i me your this that it".split())


def _words(s: str) -> set[str]:
    return {w for w in "".join(c.lower() if c.isalnum() else " " for c in s).split() if w not in _STOP}


def best_match(text: str, nodes: list[dict[str, Any]], *, threshold: float = 60.0) -> dict[str, Any] | None:
    """The node whose name best matches ``text`` (token-set ratio, ties by shared words then id), or None."""
    want = _words(text)
    best, best_key = None, None
    for n in nodes:
        name = n["canonical_name"]
        shared = len(want & _words(name))
        if not shared:
            continue
        score = fuzz.token_set_ratio(text.lower(), name.lower())
        if score < threshold:
            continue
        key = (score, shared, n["id"])
        if best_key is None or key > best_key:
            best, best_key = n, key
    return best
