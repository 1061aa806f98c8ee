"""Finding an entity by what a person types: canonical name, alias, normalized key or id prefix. Shared by the CLI
(``kenning entities``, ``facts``, ``timeline``) and ``graph/timeline.py``, so it lives below both (L5; it was in
``cli/entities.py``, which re-exports it)."""

from __future__ import annotations

from kenning.detect.keys import collapse
from kenning.store import entities as esql


def find_entities(conn, name: str) -> list[dict]:
    """By canonical name, then alias, then normalized key, then id prefix (all case-insensitive)."""
    found = esql.entities_by_name(conn, name) or esql.entities_by_alias(conn, name)
    if not found:
        found = esql.entities_by_key(conn, collapse(name))
    if not found and len(name) >= 6:
        found = esql.entities_by_id_prefix(conn, name)
    return found
