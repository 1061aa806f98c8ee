"""DOC72's governed relation vocabulary (§7, §7.0A, §4.4, §42A.2.2): the check every edge write makes, and the
smaller-id-first ordering of undirected relations (§42A.2.2 normalizeEdgePairOrdering)."""

from __future__ import annotations

import re

from kenning.knowledge.kinds import closest

# §7 table (procedures, goals, work products and obligations, concepts, standing procedures).
SECTION_7: frozenset[str] = frozenset({
    "part_of_application", "uses_procedure", "depends_on_procedure", "validated_by_trace", "specializes",
    "constrained_by", "preferred_in_context", "composes_into", "learned_from",
    "serves_goal", "sub_goal_of", "competes_with", "stakeholder_of", "informed_by_decision", "tracked_by_deadline",
    "uses_style", "has_archetype", "obligated_to", "fulfills_obligation", "about_case", "addresses_concept",
    "version_of", "created_by_procedure",
    "parent_concept", "related_concept", "triggers_procedure", "promoted_to_task",
    "contradicts", "tension_with", "limits", "distinguishes", "overrules", "narrows", "expands",
})
# §7.0A CoreRelationType.
SECTION_7_0A: frozenset[str] = frozenset({
    "related_to", "part_of", "specializes", "contradicts", "supersedes", "version_of", "cites", "references",
    "applies_to", "produced_by", "has_tool", "executes_via", "alternative_to", "learned_from",
    "applies_to_concept", "applies_to_actor", "applies_to_procedure",
    "about_case", "addresses_concept", "created_by_procedure", "serves_goal",
    "constrained_by", "preferred_in_context", "validated_by_trace",
    "uses_procedure", "depends_on_procedure", "composes_into",
    "parent_concept", "related_concept", "tension_with", "limits", "distinguishes", "overrules", "narrows", "expands",
})
# §4.4 work-product connections (only reviewed_by is new).
SECTION_4_4: frozenset[str] = frozenset({
    "about_case", "addresses_concept", "uses_style", "created_by_procedure", "serves_goal", "reviewed_by",
    "version_of",
})
# §42A.2.2 CoreRelationTypeSchema (the legal profile's types are a domain extension, not core: K37).
SECTION_42A_2_CORE: frozenset[str] = frozenset({
    "linked_to_context", "affiliated_with", "produced_by", "referenced_in", "managed_by", "created_by",
    "collaborated_with", "used_in", "depends_on", "part_of", "semantically_related",
})

RELATION_TYPES: frozenset[str] = SECTION_7 | SECTION_7_0A | SECTION_4_4 | SECTION_42A_2_CORE

# Symmetric in meaning (K38): §42A.2.2's UndirectedRelationTypes plus the canonical relations that say the same
# thing read either way. Everything else, and every domain_/learned_ extension, is directed.
UNDIRECTED: frozenset[str] = frozenset({
    "affiliated_with", "collaborated_with", "semantically_related",
    "related_to", "related_concept", "competes_with", "tension_with", "contradicts", "alternative_to",
})

# §7.0A `domain_${string}` and §42A.2.2 `learned_` (max 80 chars); the rest must be snake_case.
_EXTENSION = re.compile(r"(?:domain|learned)_[a-z0-9]+(?:_[a-z0-9]+)*")
_MAX_LEN = 80
_RULE = ("a relation type must be a canonical DOC72 relation (§7, §7.0A, §4.4, §42A.2) or a snake_case "
         "extension named domain_<name> or learned_<name> (at most 80 characters)")


class RelationError(ValueError):
    """A relation type outside the governed vocabulary."""

    def __init__(self, value: object, suggestions: tuple[str, ...] = ()):
        self.value = value
        self.suggestions = suggestions
        hint = f"; closest: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(f"unknown relation type {value!r}: {_RULE}{hint}")


def check_relation(name: str) -> str:
    """``name`` if the vocabulary allows it, else RelationError naming the value, the rule and the nearest names."""
    if isinstance(name, str) and (name in RELATION_TYPES
                                  or (len(name) <= _MAX_LEN and _EXTENSION.fullmatch(name))):
        return name
    suggestions = ()
    if isinstance(name, str) and name.strip():
        spaced = re.sub(r"[\s\-]+", "_", name.strip().lower())
        ok = spaced in RELATION_TYPES or (len(spaced) <= _MAX_LEN and _EXTENSION.fullmatch(spaced))
        suggestions = (spaced,) if ok else closest(name, sorted(RELATION_TYPES))
    raise RelationError(name, suggestions)


def is_undirected(name: str) -> bool:
    return name in UNDIRECTED


def normalize_edge(source_id: str, relation_type: str, target_id: str) -> tuple[str, str, str]:
    """The stored form of an edge: the relation checked, and an undirected one's smaller id first."""
    check_relation(relation_type)
    if relation_type in UNDIRECTED and target_id < source_id:
        source_id, target_id = target_id, source_id
    return source_id, relation_type, target_id
