"""Seed 003 §42A.4.5 WorkContextConstellation for an entity: the scene around it — primary entities, active goals
and obligations, recent changes, unresolved items. A local_only artifact, like compiled truth (G64). It reads goals
through ``retrieve.graph_query``, so it lives above ``knowledge/`` (L2; it was in ``knowledge/compiled.py``)."""

from __future__ import annotations

from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge.edge_gate import EdgeGate, gated_neighbors
from kenning.knowledge.read import current_breakdown, resolve_node
from kenning.retrieve.graph_query import goal_status, goals_for
from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import knowledge as ksql
from kenning.store import knowledge_query as kq


def constellation(conn: apsw.Connection, config: Config, ref: str, *, now: str) -> dict[str, Any]:
    """The scene around one entity: Kenning has no work contexts, so the entity stands for one (D47)."""
    pol = config.inspect.constellation
    node = resolve_node(conn, ref)
    scan = config.knowledge.delivery.neighbor_scan_limit
    gate = EdgeGate(conn, config, "person")  # a local_only artifact, like compiled truth (G64)
    nb = gated_neighbors(gate, node["id"], limit=pol.max_primary_entities * 3, scan_limit=scan)
    primary = [{"node_id": node["id"], "canonical_name": node["canonical_name"], "node_kind": node["node_kind"],
                "relevance_score": 1.0}]
    seen = {node["id"]}
    for n in nb:
        if n["id"] in seen or n["node_kind"] in ("goal", "obligation"):
            continue
        seen.add(n["id"])
        if len(primary) < pol.max_primary_entities:
            primary.append({"node_id": n["id"], "canonical_name": n["canonical_name"], "node_kind": n["node_kind"],
                            "relevance_score": round(min(1.0, n["edge_confidence"] * n["confidence"]), 4)})
    primary.sort(key=lambda p: (-p["relevance_score"], p["canonical_name"], p["node_id"]))
    goals = goals_for(conn, config, [node["id"]], limit=config.knowledge.delivery.goals.max_items, gate=gate)
    active_goals = sorted(({"node_id": g["id"], "canonical_name": g["canonical_name"], "status": goal_status(g)}
                           for g in goals), key=lambda g: (g["canonical_name"], g["node_id"]))
    obls = {n["id"]: n for n in nb if n["node_kind"] == "obligation"}
    for n in kq.linked_by_payload(conn, "obligation", [node["id"]],
                                  limit=config.knowledge.delivery.obligations.max_items):
        obls.setdefault(n["id"], n)
    open_st = set(config.knowledge.delivery.obligations.open_statuses)
    active_obls = []
    for n in sorted(obls.values(), key=lambda n: (str(((n.get("payload") or {}).get("deadline") or {}).get("date")
                                                      or "9"), n["id"])):
        p = n.get("payload") or {}
        if p.get("status") and p["status"] not in open_st:
            continue
        due = (p.get("deadline") or {}).get("date") if isinstance(p.get("deadline"), dict) else None
        active_obls.append({"node_id": n["id"], "canonical_name": n["canonical_name"],
                            **({"due_hint": f"due {due[:10]}"} if due else {})})
    changes = []
    for pid in [p["node_id"] for p in primary]:
        for c in ksql.list_commits(conn, node_id=pid, limit=pol.max_recent_changes):
            changes.append({"kind": c["source_event"], "ref_id": c["commit_id"], "summary": c["change_summary"][:300],
                            "occurred_at": c["timestamp"]})
    uniq = {c["ref_id"]: c for c in changes}
    recent = sorted(uniq.values(), key=lambda c: (c["occurred_at"], c["ref_id"]), reverse=True)[:pol.max_recent_changes]
    unresolved = []
    for pid in [p["node_id"] for p in primary]:
        n = ksql.get_node(conn, pid)
        b = current_breakdown(conn, config, n, now)
        if b.get("flag"):
            unresolved.append(f"[{b['flag']}] {n['canonical_name']}: evidence for and against is close "
                              f"(conflict score {b['conflict_score']:.2f})")
    coverage = min(1.0, len(primary) / pol.max_primary_entities)
    # §42A.4.5 scene confidence: entity coverage, goals/obligations, recent activity, confirmed motifs (none yet)
    scene = round(0.4 * coverage + 0.2 * bool(active_goals or active_obls) + 0.2 * bool(recent), 4)
    return {"work_context_id": node["id"], "work_context_name": node["canonical_name"],
            "visibility_class": "local_only", "scene_confidence": scene, "primary_entities": primary,
            "active_goals": active_goals, "active_obligations": active_obls, "recent_changes": recent,
            "unresolved_items": unresolved, "likely_next_procedures": [], "expected_but_missing_concepts": [],
            "updated_at": format_utc(parse_utc(now)), "stale": False, "schema_version": 2}
