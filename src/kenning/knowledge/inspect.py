"""Seed 003 §41.2 ``inspect_knowledge``: one read per query type, shaped as InspectKnowledgeResult
(query_type, result_summary for a model to relay, result_data, suggested_actions).

Inspection only reads: it never writes, never embeds, never triggers extraction (§41; the tests compare the vault
file's bytes and commit count before and after). The DOC24 turn-level types (injection_history,
injection_decision, agent_profile, suppression_list) have no data in Kenning and are refused by name (D33).

The dispatcher ``inspect_knowledge`` and the brief it serves are ``retrieve/inspect.py``: the brief is built by
``retrieve/``, which sits above ``knowledge/`` (L2); the reads here are the node store's own.
"""

from __future__ import annotations

import re
from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge.lifecycle import sparsity_tier
from kenning.knowledge.provenance import provenance_view
from kenning.knowledge.read import current_breakdown, node_view, resolve_node, verify_entry
from kenning.store import knowledge as ksql

QUERY_TYPES = ("node_detail", "provenance_chain", "experience_record", "confidence_breakdown", "connected_nodes",
               "tag_explanation", "entity_knowledge_brief", "search_knowledge")
NOT_IN_KENNING = ("injection_history", "injection_decision", "agent_profile", "suppression_list")


class InspectError(ValueError):
    """A request inspect_knowledge cannot answer (unknown type, missing node or query); the message says why."""


def _result(query_type: str, summary: str, data: dict[str, Any], actions: list[str] | None = None) -> dict[str, Any]:
    return {"query_type": query_type, "result_summary": summary, "result_data": data,
            "suggested_actions": actions or []}


def _label(n: dict[str, Any]) -> str:
    return f"{n['canonical_name']} ({n['node_kind']}, {n['id'][:8]})"


def node_detail(conn: apsw.Connection, config: Config, ref: str, *, now: str, limit: int | None = None,
                audience: str = "person") -> dict:
    view = node_view(conn, config, ref, now=now, audience=audience)
    b = view["confidence_breakdown"]
    from kenning.knowledge import said   # beside the decayed value: the evidence's mean, when last said (H3)

    view["said"] = r = said.reading(conn, config, view, now, view["provenance"])
    when = f", last said {r['last_said']} ({said.ago(r['days_since_said'])})" if r["last_said"] else ""
    summary = (f"{_label(view)}: confidence {b['confidence']:.2f} now (Beta mean {b['beta_mean']:.2f} from α "
               f"{b['alpha']:.1f}, β {b['beta']:.1f}{when}), {view['lifecycle_state']}, {view['staleness_state']}; "
               f"{len(view['edges'])} edge(s), "
               f"{view['provenance_view']['total']} provenance entr(y/ies), {len(view['commits'])} recent commit(s)")
    return _result("node_detail", summary, view, _actions(view, b))


def _actions(node: dict[str, Any], b: dict[str, Any]) -> list[str]:
    ref = node["id"][:8]
    acts = [f"kenning node confirm {ref}   # if it is right", f"kenning node correct {ref} …   # if it is wrong"]
    if b.get("flag"):
        acts.append(f"kenning inspect tag_explanation {ref}   # why it carries [{b['flag']}]")
    return acts


def provenance_chain(conn: apsw.Connection, config: Config, ref: str, *, now: str, limit: int | None = None) -> dict:
    node = resolve_node(conn, ref)
    entries = ksql.get_provenance(conn, node["id"])
    for e in entries:
        e["verification"] = verify_entry(conn, e)
    tier = sparsity_tier(node["node_kind"], entity_type=(node.get("payload") or {}).get("entity_type"),
                         lifecycle_state=node["lifecycle_state"])
    # the chain: every entry oldest first, each with the one it supersedes (§33 supersedes_entry_id)
    chain = sorted(entries, key=lambda e: (e["created_at"] or "", e["id"]))
    verdicts: dict[str, int] = {}
    for e in chain:
        verdicts[e["verification"]] = verdicts.get(e["verification"], 0) + 1
    data = {"node": {k: node[k] for k in ("id", "canonical_name", "node_kind")}, "entries": chain,
            "verification": verdicts, "tiered_view": provenance_view(entries, tier),
            "commits": ksql.list_commits(conn, node_id=node["id"], limit=limit or 20)}
    shown = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) or "none"
    summary = f"{_label(node)}: {len(chain)} provenance entr(y/ies) ({shown})"
    return _result("provenance_chain", summary, data)


def experience_record(conn: apsw.Connection, config: Config, ref: str, *, now: str, limit: int | None = None) -> dict:
    node = resolve_node(conn, ref)
    rec = ksql.get_experience(conn, node["id"])
    light = {k: v for k, v in (node.get("payload") or {}).items() if k.startswith(("usage", "success", "failure",
                                                                                    "last_used", "experience"))}
    data = {"node": {k: node[k] for k in ("id", "canonical_name", "node_kind")}, "record": rec,
            "payload_experience": light or None}
    if rec:
        summary = (f"{_label(node)}: used {rec['total_usage_count']}×, {rec['total_success_count']} success(es), "
                   f"{rec['total_failure_count']} failure(s), {rec['total_correction_count']} correction(s); "
                   f"trend {rec['overall_trend']}")
    else:
        summary = f"{_label(node)}: no usage recorded yet"
    return _result("experience_record", summary, data)


def confidence(conn: apsw.Connection, config: Config, ref: str, *, now: str, limit: int | None = None) -> dict:
    node = resolve_node(conn, ref)
    b = current_breakdown(conn, config, node, now)
    entries = ksql.get_provenance(conn, node["id"])
    authority = sorted({e["authority_type"] for e in entries if e.get("authority_type")})
    data = {"node": {k: node[k] for k in ("id", "canonical_name", "node_kind")}, "breakdown": b,
            "confidence_stored": node["confidence"], "authority_types": authority,
            "experience": ksql.get_experience(conn, node["id"]),
            "formula": "confidence = α/(α+β) × decay(age, half-life), then caps (§5.1); α, β capped at the "
                       "evidence cap; conflict = (1 − |α−β|/(α+β)) × min((α+β)/mass_total, 1) (§5.6)"}
    hl = "no decay" if b["half_life_days"] is None else f"half-life {b['half_life_days']:.0f} d"
    summary = (f"{_label(node)}: α {b['alpha']:.2f}, β {b['beta']:.2f} → mean {b['beta_mean']:.2f}; age "
               f"{b['age_days']:.1f} d, {hl}, decay {b['decay']:.3f}; caps {b['caps_applied'] or 'none'} → "
               f"{b['confidence']:.2f}; conflict score {b['conflict_score']:.2f}")
    return _result("confidence_breakdown", summary, data)


def connected_nodes(conn: apsw.Connection, config: Config, ref: str, *, now: str, limit: int | None = None,
                    audience: str = "person") -> dict:
    from kenning.knowledge.edge_gate import EdgeGate

    node = resolve_node(conn, ref)
    cap = min(limit or config.inspect.connected_limit, config.inspect.connected_limit)
    # promoted edges the reader may not see are left out (§42A.2.12A, G64); the degree counts what is shown
    edges = EdgeGate(conn, config, audience).edges(ksql.edges_of(conn, node["id"], current_only=True, limit=cap + 1))
    items = []
    for e in edges[:cap]:
        out = e["source_id"] == node["id"]
        other = ksql.get_node(conn, e["target_id"] if out else e["source_id"]) or {}
        items.append({"node_id": other.get("id"), "canonical_name": other.get("canonical_name"),
                      "node_kind": other.get("node_kind"), "relation_type": e["relation_type"],
                      "direction": "out" if out else "in", "confidence": e["confidence"],
                      "start_date": e["start_date"]})
    data = {"node": {k: node[k] for k in ("id", "canonical_name", "node_kind")}, "connected": items,
            "truncated": len(edges) > cap,
            "degree": ksql.edge_degree(conn, node["id"]) if len(edges) > cap else len(edges)}
    names = "; ".join(f"{i['relation_type']} {i['canonical_name']}" for i in items[:5])
    return _result("connected_nodes", f"{_label(node)}: {len(items)} current edge(s){': ' + names if names else ''}",
                   data)


def tag_explanation(conn: apsw.Connection, config: Config, ref: str, *, now: str, limit: int | None = None) -> dict:
    """Why the node would carry [caution] / [distinguish] (§5.6 conflict score) or a stale tag (staleness state,
    or older than stale_after_half_lives × its kind's half-life, as the brief reads it)."""
    node = resolve_node(conn, ref)
    b = current_breakdown(conn, config, node, now)
    conflict = config.knowledge.confidence.conflict
    tags: list[dict[str, Any]] = []
    if b["flag"]:
        bound = conflict.distinguish_above if b["flag"] == "distinguish" else conflict.caution_above
        tags.append({"tag": b["flag"], "because": f"conflict score {b['conflict_score']:.3f} > {bound} "
                     f"(α {b['alpha']:.2f} and β {b['beta']:.2f} are close and there is enough evidence)"})
    if node["staleness_state"] != "fresh":
        tags.append({"tag": "stale", "because": f"staleness_state is {node['staleness_state']}"})
    else:
        k = config.knowledge.delivery.brief.stale_after_half_lives
        if b["half_life_days"] is not None and b["age_days"] > k * b["half_life_days"]:
            tags.append({"tag": "stale", "because": f"last verified {b['age_days']:.0f} days ago, more than "
                         f"{k:g} × the {node['node_kind']} half-life of {b['half_life_days']:.0f} days"})
    data = {"node": {k: node[k] for k in ("id", "canonical_name", "node_kind")}, "tags": tags,
            "conflict_score": b["conflict_score"], "thresholds": {"caution_above": conflict.caution_above,
                                                                  "distinguish_above": conflict.distinguish_above},
            "alpha": b["alpha"], "beta": b["beta"], "staleness_state": node["staleness_state"],
            "age_days": b["age_days"], "half_life_days": b["half_life_days"]}
    if tags:
        summary = f"{_label(node)}: " + "; ".join(f"[{t['tag']}] because {t['because']}" for t in tags)
    else:
        summary = (f"{_label(node)}: no tags (conflict score {b['conflict_score']:.3f} ≤ {conflict.caution_above}, "
                   f"fresh)")
    return _result("tag_explanation", summary, data)


_WORD = re.compile(r"\w+", re.UNICODE)


def _vector_ids(conn: apsw.Connection, config: Config, query: str, k: int) -> list[tuple[str, float]]:
    """Nearest nodes in the vector space ``nodes``; the query is embedded without the vault's embedding cache,
    so the read stays a read (D56). Empty when the space has no vectors or another model made them."""
    from kenning.knowledge.vectors import SPACE
    from kenning.llm.embed import get_embedder
    from kenning.llm.index import VectorIndex
    from kenning.store import vectors as vsql

    table = vsql.active_table(conn)
    if table is None:
        return []
    emb = get_embedder(config, table["model_id"], dimension=int(table["dimension"]))
    if emb.model_id != table["model_id"]:
        return []
    q = emb.embed([query])[0]
    hits = VectorIndex(conn, config).search(q, k, space=SPACE, model_id=table["model_id"])
    return [(h.item_id, h.score) for h in hits]


def search_knowledge(conn: apsw.Connection, config: Config, query: str, *, limit: int | None = None,
                     vectors: bool | None = None) -> dict:
    """Exact name / alias first, then FTS5 over ``fts_nodes`` (names, aliases, descriptions), then (when
    ``inspect.search_vectors`` or ``vectors``) the node vectors, best first."""
    cap = min(limit or config.inspect.search_limit, config.inspect.search_limit)
    ids: list[str] = []
    how: dict[str, str] = {}
    for n in ksql.find_nodes(conn, query, limit=cap):
        if n["id"] not in how:
            ids.append(n["id"])
            how[n["id"]] = "name_or_alias"
    words = _WORD.findall(query)
    if words:
        # each word quoted (an FTS5 phrase), so a person's punctuation is never FTS syntax
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        for nid in ksql.fts_node_ids(conn, match, limit=cap):
            if nid not in how:
                ids.append(nid)
                how[nid] = "fts"
    scores: dict[str, float] = {}
    if config.inspect.search_vectors if vectors is None else vectors:
        for nid, score in _vector_ids(conn, config, query, cap):
            scores[nid] = round(score, 4)
            if nid not in how:
                ids.append(nid)
                how[nid] = "vector"
    hits = []
    for nid in ids[:cap]:
        n = ksql.get_node(conn, nid)
        if n is None:
            continue
        hits.append({"node_id": nid, "canonical_name": n["canonical_name"], "node_kind": n["node_kind"],
                     "confidence": n["confidence"], "lifecycle_state": n["lifecycle_state"],
                     "is_active": bool(n["is_active"]), "matched_by": how[nid],
                     **({"vector_score": scores[nid]} if nid in scores else {})})
    summary = (f"{len(hits)} node(s) for {query!r}: " + "; ".join(_label({**h, "id": h["node_id"]})
                                                                  for h in hits[:5])) if hits else \
        f"no node matches {query!r}"
    return _result("search_knowledge", summary, {"query": query, "hits": hits, "truncated": len(ids) > cap})
