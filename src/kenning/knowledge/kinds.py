"""The 11 canonical node kinds of DOC72 §4 (seed order) and the check every write makes on a kind."""

from __future__ import annotations

from rapidfuzz import fuzz, process

NODE_KINDS: tuple[str, ...] = (
    "world_entity", "application", "procedure", "execution_trace", "standing_procedure", "goal",
    "domain_concept", "obligation", "work_product", "memory_directive", "tool_capability",
)
_KINDS = frozenset(NODE_KINDS)

# Everyday words for what a kind holds (DOC72 §4 table, §4.5), so "person" or "preference" points at the right kind.
_WORDS = {
    "person": "world_entity", "people": "world_entity", "entity": "world_entity", "organization": "world_entity",
    "org": "world_entity", "place": "world_entity", "matter": "world_entity", "app": "application",
    "skill": "procedure", "trace": "execution_trace", "automation": "standing_procedure", "plan": "goal",
    "intention": "goal", "concept": "domain_concept", "term": "domain_concept", "commitment": "obligation",
    "deadline": "obligation", "document": "work_product", "preference": "memory_directive",
    "constraint": "memory_directive", "memory": "memory_directive", "directive": "memory_directive",
    "tool": "tool_capability",
}


class UnknownKind(ValueError):
    """A node kind outside DOC72 §4's eleven."""

    def __init__(self, kind: object, suggestions: tuple[str, ...] = ()):
        self.kind = kind
        self.suggestions = suggestions
        hint = f"; did you mean {' or '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown node kind {kind!r}{hint} (kinds: {', '.join(NODE_KINDS)})")


def closest(value: str, choices, *, limit: int = 3, cutoff: float = 60.0) -> tuple[str, ...]:
    """The canonical names most like ``value``, best first; ties broken by name so the message is stable."""
    hits = process.extract(value, list(choices), scorer=fuzz.WRatio, limit=None, score_cutoff=cutoff)
    ranked = sorted(((-score, name) for name, score, _ in hits))
    return tuple(name for _, name in ranked[:limit])


def check_kind(kind: str) -> str:
    """``kind`` if it is one of the eleven, else UnknownKind naming the kinds and the closest one."""
    if isinstance(kind, str) and kind in _KINDS:
        return kind
    suggestions: tuple[str, ...] = ()
    if isinstance(kind, str) and kind:
        word = kind.strip().lower().rstrip("s")
        suggestions = (_WORDS[word],) if word in _WORDS else closest(kind, NODE_KINDS, limit=1)
    raise UnknownKind(kind, suggestions)
