"""Seed 003 §42A.4 compiled truth: the per-node read model (render input + a markdown rendering) with the four
stable-JSON sha256 hashes that say when it is stale, the < 5 minute build lock, stale served while rebuilt
(§42A.4.5 WorkContextConstellation reads goals through retrieve/, so it is ``retrieve/constellation.py``, L2). Derived data: never on the node, never in a prompt (§42A.7).

Hashing follows the seed's ``stableJson`` with JCS (RFC 8785) as the key-sorted JSON text (D44): identical for
the ASCII field names hashed here, and defined where ``localeCompare`` is locale-dependent.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge.edge_gate import EdgeGate
from kenning.knowledge.read import resolve_node
from kenning.sources.jcs import canonicalize
from kenning.sources.timestamps import parse_utc
from kenning.store import compiled as csql
from kenning.store import knowledge as ksql
from kenning.store import knowledge_query as kq

STALE_REASONS = ("node_changed", "relationships_changed", "provenance_changed", "renderer_changed")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def node_hash(node: dict[str, Any]) -> str:
    """computeNodeHash: id, canonical_name, node_kind, confidence, lifecycle_state, updated_at, payload."""
    return _sha(canonicalize({k: node.get(k) for k in ("id", "canonical_name", "node_kind", "confidence",
                                                        "lifecycle_state", "updated_at")}
                             | {"payload": node.get("payload")}))


def relationship_hash(node_id: str, edges: list[dict[str, Any]]) -> str:
    """computeRelationshipHash over the node's current edges, sorted source|target|relation, prefixed by the id."""
    items = sorted(({k: e.get(k) for k in ("source_id", "target_id", "relation_type", "confidence",
                                           "lifecycle_state")} | {"payload": e.get("payload")} for e in edges),
                   key=lambda e: f"{e['source_id']}|{e['target_id']}|{e['relation_type']}")
    return _sha(f"{node_id}|{canonicalize(items)}")


def provenance_hash(entries: list[dict[str, Any]]) -> str:
    """computeProvenanceHash: id, entry_type, source_ref, authority_type, still_current, created_at; id|created_at."""
    items = sorted(({k: e.get(k) for k in ("id", "entry_type", "source_ref", "authority_type", "still_current",
                                           "created_at")} for e in entries),
                   key=lambda e: f"{e['id']}|{e['created_at']}")
    return _sha(canonicalize(items))


def render_input(conn: apsw.Connection, config: Config, node: dict[str, Any], edges: list[dict[str, Any]],
                 entries: list[dict[str, Any]]) -> dict[str, Any]:
    """§42A.4.3 KnowledgeSummaryRenderInput (buildKnowledgeSummaryRenderInput)."""
    ct = config.inspect.compiled_truth
    others = kq.nodes_by_ids(conn, sorted({e["target_id"] if e["source_id"] == node["id"] else e["source_id"]
                                           for e in edges}))
    related, low = [], []
    for e in sorted(edges, key=lambda e: (-e["confidence"], e["relation_type"], e["source_id"], e["target_id"])):
        o = others.get(e["target_id"] if e["source_id"] == node["id"] else e["source_id"])
        if o is None:
            continue
        item = {"node_id": o["id"], "canonical_name": o["canonical_name"], "node_kind": o["node_kind"],
                "relation_type": e["relation_type"], "confidence": e["confidence"]}
        if e["confidence"] < ct.low_confidence_below:
            low.append({k: item[k] for k in ("node_id", "canonical_name", "relation_type", "confidence")})
        elif len(related) < ct.max_related:
            related.append(item)
    recent = sorted(entries, key=lambda e: (e.get("created_at") or "", e["id"]), reverse=True)[:ct.recent_provenance]
    return {"node_id": node["id"], "canonical_name": node["canonical_name"], "node_kind": node["node_kind"],
            "visibility_class": "local_only", "confidence": node["confidence"],
            "lifecycle_state": node["lifecycle_state"], "payload": node.get("payload") or {},
            "related_entities": related, "low_confidence_items": low,
            "recent_provenance": [{"date": (e.get("created_at") or "")[:10],
                                   "summary": (e.get("verbatim_excerpt") or e.get("source_description")
                                               or e["entry_type"])[:500]} for e in recent],
            "schema_version": 1}


def render_markdown(ri: dict[str, Any]) -> str:
    """A deterministic rendering, polymorphic by node_kind (§42A.A.3): facts first, then relationships."""
    p = ri["payload"]
    lines = [f"# {ri['canonical_name']}", f"*{ri['node_kind']}* · confidence {ri['confidence']:.2f} · "
             f"{ri['lifecycle_state']}", ""]
    kind = ri["node_kind"]
    if kind == "procedure":
        facts = [("Intent", p.get("intent") or p.get("description")), ("Applies when", p.get("applicability")),
                 ("Steps", "; ".join(str(s.get("description", s)) if isinstance(s, dict) else str(s)
                                     for s in p.get("steps") or []) or None)]
    elif kind == "obligation":
        deadline = p.get("deadline") or {}
        facts = [("Obligee", p.get("obligee") or p.get("obligee_ref")), ("Deadline", deadline.get("date")
                                                                          if isinstance(deadline, dict) else deadline),
                 ("Status", p.get("status"))]
    elif kind == "standing_procedure":
        facts = [("Trigger", p.get("trigger")), ("Action", p.get("action")), ("Frequency", p.get("frequency"))]
    else:
        facts = [("Type", p.get("entity_type")), ("About", p.get("description") or p.get("definition")
                                                  or p.get("summary"))]
    lines += [f"- **{k}:** {v}" for k, v in facts if v]
    if ri["related_entities"]:
        lines += ["", "## Relationships"]
        lines += [f"- {r['relation_type']}: {r['canonical_name']} ({r['confidence']:.2f})"
                  for r in ri["related_entities"]]
    if ri["low_confidence_items"]:
        lines += ["", "## Uncertain"]
        lines += [f"- {r['relation_type']}: {r['canonical_name']} ({r['confidence']:.2f})"
                  for r in ri["low_confidence_items"]]
    if ri["recent_provenance"]:
        lines += ["", "## Recent sources"]
        lines += [f"- {r['date']}: {r['summary']}" for r in ri["recent_provenance"]]
    return "\n".join(lines) + "\n"


def _current(conn: apsw.Connection, config: Config, node: dict[str, Any]) -> dict[str, Any]:
    """The read model as the node stands now (nothing stored)."""
    # the artifact is local_only (render_input): promoted edges as a person on this machine may read them (G64)
    edges = EdgeGate(conn, config, "person").edges(ksql.edges_of(conn, node["id"], current_only=True))
    entries = ksql.get_provenance(conn, node["id"])
    ri = render_input(conn, config, node, edges, entries)
    return {"node_id": node["id"], "canonical_name": node["canonical_name"], "node_kind": node["node_kind"],
            "visibility_class": ri["visibility_class"], "markdown": render_markdown(ri),
            "render_contract_id": config.inspect.compiled_truth.renderer_version, "render_input": ri,
            "node_hash": node_hash(node), "relationship_hash": relationship_hash(node["id"], edges),
            "provenance_hash": provenance_hash(entries), "render_input_hash": _sha(canonicalize(ri)),
            "schema_version": 2}


def stale_reason(stored: dict[str, Any], now_model: dict[str, Any]) -> str | None:
    """The first of node / relationships / provenance / renderer that differs from what was rendered."""
    for reason, key in zip(STALE_REASONS, ("node_hash", "relationship_hash", "provenance_hash",
                                           "render_contract_id")):
        if stored[key] != now_model[key]:
            return reason
    return None


def _lock_fresh(lock: dict[str, Any] | None, now: str, minutes: float) -> bool:
    if not lock or lock["status"] != "building":
        return False
    age = parse_utc(now) - parse_utc(lock["build_started_at"])
    return age < dt.timedelta(minutes=minutes)


def compiled_truth(conn: apsw.Connection, config: Config, ref: str, *, now: str, build: bool = False,
                   job_id: str | None = None) -> dict[str, Any]:
    """CompiledTruthReadModel (schema 3): ready | stale | building. Reading never writes: a missing model is
    rendered on the fly (``persisted`` false) and a stale one is served as it is, marked stale. ``build`` (a
    writable connection) rebuilds a missing or stale model under the build lock, unless another job holds a
    lock younger than ``inspect.compiled_truth.lock_minutes``: then the stale model comes back as ``building``."""
    node = resolve_node(conn, ref)
    fresh = _current(conn, config, node)
    stored = csql.get_truth(conn, node["id"])
    lock = csql.get_lock(conn, node["id"])
    minutes = config.inspect.compiled_truth.lock_minutes
    reason = stale_reason(stored, fresh) if stored else None
    if stored and reason is None:
        return _model(stored, "ready", None, persisted=True)
    building = _lock_fresh(lock, now, minutes) and (lock or {}).get("owner_job_id") != job_id
    if not build or building:
        if stored:
            return _model(stored, "building" if building else "stale", reason, persisted=True)
        return _model({**fresh, "rendered_at": now}, "building" if building else "ready", None, persisted=False)
    owner = job_id or f"truth:{node['id']}:{now}"
    _locked(conn, lambda: csql.put_lock(conn, node["id"], "building", now, owner))
    row = {**fresh, "rendered_at": now}

    def finish() -> None:
        csql.put_truth(conn, row)
        csql.put_lock(conn, node["id"], "idle", now, owner)

    _locked(conn, finish)
    return _model(row, "ready", None, persisted=True, rebuilt=reason or "missing")


def _locked(conn: apsw.Connection, fn: Any) -> None:
    from kenning.store.connection import transaction

    with transaction(conn):
        fn()


def _model(m: dict[str, Any], status: str, reason: str | None, *, persisted: bool,
           rebuilt: str | None = None) -> dict[str, Any]:
    out = {k: m[k] for k in csql.TRUTH_COLS if k in m}
    out.update(status=status, stale=reason is not None, stale_reason=reason, persisted=persisted,
               schema_version=3)
    if rebuilt:
        out["rebuilt_because"] = rebuilt
    return out
