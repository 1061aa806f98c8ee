"""Seed 003 §41.2 ``inspect_knowledge``: one read per query type, shaped as InspectKnowledgeResult. The reads of the
node store are ``knowledge/inspect.py``; this dispatcher and ``entity_knowledge_brief`` (built by
``retrieve/brief.py``) sit above ``knowledge/`` (L2)."""

from __future__ import annotations

from typing import Any, Callable

import apsw

from kenning.config import Config
from kenning.knowledge.edge_gate import EdgeGate
from kenning.knowledge.inspect import (NOT_IN_KENNING, QUERY_TYPES, InspectError, _result, confidence,
                                       connected_nodes, experience_record, node_detail, provenance_chain,
                                       search_knowledge, tag_explanation)
from kenning.retrieve.brief import knowledge_brief

__all__ = ["QUERY_TYPES", "InspectError", "inspect_knowledge", "entity_knowledge_brief"]


def inspect_knowledge(conn: apsw.Connection, config: Config, query_type: str, *, now: str, node: str | None = None,
                      query: str | None = None, limit: int | None = None,
                      vectors: bool | None = None, audience: str = "person") -> dict[str, Any]:
    """``audience``: ``person`` (the CLI) or ``agent`` (MCP): how promoted edges are read (§42A.2.12A, G64)."""
    if query_type in NOT_IN_KENNING:
        raise InspectError(f"{query_type} describes an assistant's injection turns, which Kenning does not keep; "
                           f"use one of: {', '.join(QUERY_TYPES)}")
    fn = _TYPES.get(query_type)
    if fn is None:
        raise InspectError(f"unknown query type {query_type!r}; use one of: {', '.join(QUERY_TYPES)}")
    if query_type == "search_knowledge":
        if not (query or node or "").strip():
            raise InspectError("search_knowledge needs a query")
        return search_knowledge(conn, config, (query or node or "").strip(), limit=limit, vectors=vectors)
    if not node:
        raise InspectError(f"{query_type} needs a node (id, id prefix, name or alias)")
    if fn in (node_detail, connected_nodes, entity_knowledge_brief):
        return fn(conn, config, node, now=now, limit=limit, audience=audience)
    return fn(conn, config, node, now=now, limit=limit)


def entity_knowledge_brief(conn: apsw.Connection, config: Config, ref: str, *, now: str,
                           limit: int | None = None, audience: str = "person") -> dict:
    brief = knowledge_brief(conn, config, ref, now=now, gate=EdgeGate(conn, config, audience))
    return _result("entity_knowledge_brief", brief.text, brief.as_dict())


_TYPES: dict[str, Callable[..., dict[str, Any]]] = {
    "node_detail": node_detail, "provenance_chain": provenance_chain, "experience_record": experience_record,
    "confidence_breakdown": confidence, "connected_nodes": connected_nodes, "tag_explanation": tag_explanation,
    "entity_knowledge_brief": entity_knowledge_brief, "search_knowledge": search_knowledge,
}
