"""Read views over the node store for people and agents: a node with its confidence breakdown, edges, provenance
(checked against raw) and history. Reads never write and never trigger extraction (§41)."""

from __future__ import annotations

from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge.confidence import confidence_breakdown
from kenning.knowledge.errors import NodeNotFound
from kenning.knowledge.lifecycle import sparsity_tier
from kenning.knowledge.provenance import excerpt_hash, provenance_view
from kenning.knowledge.writer import policy_flags
from kenning.knowledge import docs
from kenning.store import knowledge as ksql
from kenning.store import raw as raw_sql


class AmbiguousNode(NodeNotFound):
    def __init__(self, text: str, candidates: list[dict[str, Any]]):
        names = "; ".join(f"{c['id'][:8]} {c['node_kind']} {c['canonical_name']!r}" for c in candidates[:5])
        ValueError.__init__(self, f"{text!r} names {len(candidates)} nodes ({names}); give the id")
        self.node_id = text


def resolve_node(conn: apsw.Connection, text: str) -> dict[str, Any]:
    """The one node ``text`` names (id, id prefix, exact name, alias); a clear error when none or several do."""
    found = ksql.find_nodes(conn, text)
    if not found:
        raise NodeNotFound(text)
    if len(found) > 1 and not any(f["id"] == text for f in found):
        active = [f for f in found if f["is_active"]]
        if len(active) != 1:
            raise AmbiguousNode(text, found)
        return active[0]
    return found[0]


def current_breakdown(conn: apsw.Connection, config: Config, node: dict[str, Any], now: str) -> dict[str, Any]:
    """§5 confidence as of ``now`` (lazy decay on read, §5.5) with every term that produced it."""
    doc = docs.load_node(conn, node["id"])
    return confidence_breakdown(node["alpha"], node["beta"],
                                last_verified_at=node.get("last_verified_at") or node.get("created_at") or now,
                                now=now, node_kind=node["node_kind"], staleness_state=node["staleness_state"],
                                flags=policy_flags(doc), cfg=config.knowledge.confidence)


def verify_entry(conn: apsw.Connection, entry: dict[str, Any]) -> str:
    """§33.3A: does the excerpt still stand in its source? verified | mismatch | source_unavailable | not_checked."""
    excerpt = entry.get("verbatim_excerpt")
    if not excerpt or not entry.get("message_id"):
        return "not_checked"
    text = raw_sql.message_text(conn, entry["message_id"])
    if text is None:
        return "source_unavailable"
    start, end = entry.get("char_start"), entry.get("char_end")
    if start is not None and end is not None and excerpt_hash(text[start:end]) == entry.get("excerpt_hash"):
        return "verified"
    return "verified" if excerpt in text else "mismatch"


def node_view(conn: apsw.Connection, config: Config, text: str, *, now: str, commits: int = 10,
              audience: str = "person") -> dict[str, Any]:
    """``audience``: how promoted edges are read (§42A.2.12A, G64): ``person`` for the CLI and the local UI."""
    from kenning.knowledge.edge_gate import EdgeGate

    node = resolve_node(conn, text)
    b = current_breakdown(conn, config, node, now)
    tier = sparsity_tier(node["node_kind"], entity_type=(node.get("payload") or {}).get("entity_type"),
                         lifecycle_state=node["lifecycle_state"])
    entries = ksql.get_provenance(conn, node["id"])
    for e in entries:
        e["verification"] = verify_entry(conn, e)
    names: dict[str, str] = {}
    edges = []
    for e in EdgeGate(conn, config, audience).edges(ksql.edges_of(conn, node["id"], limit=500)):
        other = e["target_id"] if e["source_id"] == node["id"] else e["source_id"]
        if other not in names:
            o = ksql.get_node(conn, other)
            names[other] = o["canonical_name"] if o else other
        edges.append({**e, "direction": "out" if e["source_id"] == node["id"] else "in",
                      "other_id": other, "other_name": names[other], "current": e["end_date"] is None})
    return {
        **{k: node.get(k) for k in ksql.NODE_COLS},
        "confidence_stored": node["confidence"], "confidence": b["confidence"], "confidence_breakdown": b,
        "sparsity_tier": tier,
        "aliases": [{k: a[k] for k in ("normalized_alias", "alias_type", "confidence")}
                    for a in ksql.get_aliases(conn, node["id"])],
        "edges": edges,
        "provenance": entries,
        "provenance_view": provenance_view(entries, tier),
        "experience": ksql.get_experience(conn, node["id"]),
        "commits": ksql.list_commits(conn, node_id=node["id"], limit=commits),
    }


def node_rows(conn: apsw.Connection, config: Config, *, now: str, kind: str | None = None,
              lifecycle: str | None = None, include_inactive: bool = False, limit: int = 200,
              offset: int = 0) -> dict[str, Any]:
    active = None if include_inactive else True
    items = ksql.list_nodes(conn, kind=kind, lifecycle=lifecycle, active=active, limit=limit, offset=offset)
    total = ksql.count_nodes(conn, kind=kind, lifecycle=lifecycle, active=active)
    out = []
    for n in items:
        b = current_breakdown(conn, config, n, now)
        out.append({**{k: n.get(k) for k in ksql.NODE_COLS}, "confidence": b["confidence"],
                    "confidence_stored": n["confidence"], "conflict_flag": b.get("flag")})
    return {"nodes": out, "total": total, "shown": len(out), "offset": offset}
