"""How an edge mutation names its edge: one string for the edge's primary key (``knowledge_commit_mutations.
target_id``). Here, below ``knowledge/``, because the forget registry in ``store/forget.py`` matches mutations by it
too (L5); ``knowledge.docs`` re-exports the three functions."""

from __future__ import annotations


def edge_key(source_id: str, relation_type: str, target_id: str, start_date: str) -> str:
    """The ``target_id`` of an edge mutation: one string naming the edge's primary key."""
    return f"{source_id}|{relation_type}|{target_id}|{start_date}"


def parse_edge_key(key: str) -> tuple[str, str, str, str]:
    src, rel, tgt, start = key.split("|", 3)
    return src, rel, tgt, start


def is_edge_key(target_id: str) -> bool:
    return "|" in target_id
