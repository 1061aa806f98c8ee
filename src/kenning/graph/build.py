"""Stage 6 core graph (seed 001 §6.1–§6.5.5): nodes and edges projected from stages 1–5.

A :class:`GraphBuilder` accumulates nodes by (node_type, source_id) and edges by edge id; ``rows()`` gives them
in the seed's insertion order ((node_type, node_id) and (edge_type, edge_id)). Nothing upstream is written.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import orjson

from kenning.sources.jcs import canonicalize

SCHEMA_VERSION = "1.0"
NULL = "__NULL__"


def sha(obj: Any) -> str:
    return hashlib.sha256(canonicalize(obj).encode("utf-8")).hexdigest()


def interval_source(valid_from: str | None, valid_to: str | None) -> str:
    """§6.2 ``sha256(JCS([from_or_null, to_or_null]))`` with the §6.2 NULL encoding ("__NULL__", T22)."""
    return sha([valid_from if valid_from is not None else NULL, valid_to if valid_to is not None else NULL])


def value_source(value_type: str, value_jcs: str) -> str:
    """§6.2 over the parsed value, so it equals the hash in the assertion's ``V:`` signature (T22)."""
    return sha([value_type, orjson.loads(value_jcs)])


class GraphBuilder:
    def __init__(self, ids: Any):
        self.ids = ids
        self.nodes: dict[str, tuple] = {}          # node_id -> (node_id, type, source_id, label, metadata)
        self.edges: dict[str, tuple] = {}
        self.stats: Counter = Counter()

    def node_id(self, node_type: str, source_id: str) -> str:
        return self.ids.make("node", node_type, source_id)

    def node(self, node_type: str, source_id: str, label: str, meta: dict[str, Any]) -> str:
        nid = self.node_id(node_type, source_id)
        if nid not in self.nodes:
            self.nodes[nid] = (nid, node_type, source_id, (label or "")[:200],
                               canonicalize({"schema_version": SCHEMA_VERSION, **meta}))
        return nid

    def has(self, node_type: str, source_id: str) -> bool:
        return self.node_id(node_type, source_id) in self.nodes

    def edge(self, edge_type: str, src: str, dst: str, meta: dict[str, Any] | None = None) -> str | None:
        if src not in self.nodes or dst not in self.nodes:
            self.stats[f"edge_endpoint_missing_{edge_type}"] += 1
            return None
        eid = self.ids.make("edge", edge_type, src, dst)
        if eid in self.edges:
            self.stats["edges_merged_same_id"] += 1    # same (type, src, dst): one edge (T23)
            return eid
        self.edges[eid] = (eid, edge_type, src, dst, canonicalize(meta) if meta is not None else None)
        return eid

    def rows(self) -> tuple[list[tuple], list[tuple]]:
        nodes = sorted(self.nodes.values(), key=lambda n: (n[1], n[0]))
        edges = sorted(self.edges.values(), key=lambda e: (e[1], e[0]))
        return nodes, edges


def object_text(a: dict) -> str | None:
    if a["object_entity_id"]:
        return a.get("object_name") or a["object_entity_id"][:8]
    if a["object_value_type"]:
        v = orjson.loads(a["object_value"])
        if isinstance(v, dict) and set(v) == {"kind", "value"}:
            return str(v["value"])
        return str(v)
    return None


def statement(a: dict) -> str:
    obj = object_text(a)
    neg = "not " if a["polarity"] == "negative" else ""
    return f"{a['subject_name']} {neg}{a['predicate_label']}" + (f" {obj}" if obj is not None else "")


def build_core(g: GraphBuilder, data: dict[str, Any], cfg: Any) -> None:
    """§6.4 node inventory and §6.5.1–§6.5.5 edges."""
    tier_meta = cfg.include_detection_tier_metadata
    for e in data["entities"]:
        g.node("Entity", e["entity_id"], e["canonical_name"], {
            "entity_id": e["entity_id"], "entity_type": e["entity_type"], "entity_key": e["entity_key"],
            "canonical_name": e["canonical_name"], "status": e["status"], "salience_score": e["salience_score"],
            "mention_count": e["mention_count"], "first_seen_at_utc": e["first_seen_at_utc"],
            "last_seen_at_utc": e["last_seen_at_utc"]})
    for p in data["predicates"]:
        g.node("Predicate", p["predicate_id"], p["canonical_label"], {
            "predicate_id": p["predicate_id"], "canonical_label": p["canonical_label"], "category": p["category"],
            "arity": p["arity"], "inverse_label": p["inverse_label"], "assertion_count": p["assertion_count"]})
    if cfg.include_message_nodes:
        for m in data["messages"]:
            text = " ".join((m["text_raw"] or "").split())
            g.node("Message", m["message_id"], f"{m['role']} {(m['created_at_utc'] or '?')[:10]}: {text[:60]}", {
                "message_id": m["message_id"], "conversation_id": m["conversation_id"], "role": m["role"],
                "created_at_utc": m["created_at_utc"], "order_index": m["order_index"],
                "conversation_title": m["title"]})
    for r in data["retractions"]:
        g.node("Retraction", r["retraction_id"], f"{r['retraction_type']}: {r['surface_text'] or ''}", {
            "retraction_id": r["retraction_id"], "retraction_type": r["retraction_type"],
            "message_id": r["retraction_message_id"], "confidence": r["confidence"], "surface_text": r["surface_text"],
            "target_assertion_id": r["target_assertion_id"], "replacement_assertion_id": r["replacement_assertion_id"]})
    for c in data["conflicts"]:
        g.node("ConflictGroup", c["conflict_group_id"], c["conflict_type"], {
            "conflict_group_id": c["conflict_group_id"], "conflict_type": c["conflict_type"],
            "conflict_key": c["conflict_key"], "detected_at_utc": c["detected_at_utc"],
            "member_count": len(c["member_ids"])})
    if cfg.include_lexicon_nodes:
        for t in data["lexicon_terms"]:
            g.node("LexiconTerm", t["term_id"], t["canonical_surface"], {
                "term_id": t["term_id"], "build_id": t["build_id"], "term_key": t["term_key"],
                "canonical_surface": t["canonical_surface"], "score": t["score"],
                "entity_type_hint": t["entity_type_hint"]})
    if cfg.include_time_mention_nodes:
        for t in data["time_mentions"]:
            g.node("TimeMention", t["time_mention_id"], t["surface_text"][:60], {k: t[k] for k in (
                "time_mention_id", "message_id", "surface_text", "resolved_type", "valid_from_utc", "valid_to_utc",
                "resolution_granularity", "timezone_assumed", "confidence", "anchor_time_utc", "pattern_id")})
    for a in data["assertions"]:
        aid = a["assertion_id"]
        an = g.node("Assertion", aid, statement(a), {
            "assertion_id": aid, "statement": statement(a), "subject_entity_id": a["subject_entity_id"],
            "predicate": a["predicate_label"], "object_signature": a["object_signature"], "modality": a["modality"],
            "polarity": a["polarity"], "asserted_role": a["asserted_role"], "confidence_final": a["confidence_final"],
            "status": a["status"], "valid_time_type": a["valid_time_type"], "valid_from_utc": a["valid_from_utc"],
            "valid_to_utc": a["valid_to_utc"], "valid_until_hint_utc": a["valid_until_hint_utc"],
            "asserted_at_utc": a["t_asserted_at_utc"], "superseded_at_utc": a["superseded_at_utc"],
            "surface_text": a["surface_text"], "message_id": a["message_id"]})
        subj = g.node_id("Entity", a["subject_entity_id"])
        g.edge("HAS_SUBJECT", an, subj, {"detection_tier": a["subject_detection_tier"]} if tier_meta else None)
        g.edge("HAS_PREDICATE", an, g.node_id("Predicate", a["predicate_id"]))
        if a["object_entity_id"]:
            g.edge("HAS_OBJECT", an, g.node_id("Entity", a["object_entity_id"]),
                   {"detection_tier": a["object_detection_tier"]} if tier_meta else None)
        elif a["object_value_type"]:
            vsrc = value_source(a["object_value_type"], a["object_value"])
            vn = g.node("Value", vsrc, object_text(a) or "", {"object_value_type": a["object_value_type"],
                                                             "object_value": orjson.loads(a["object_value"])})
            g.edge("HAS_OBJECT", an, vn)
        if a["valid_from_utc"]:
            tn = g.node("TimeInterval", interval_source(a["valid_from_utc"], a["valid_to_utc"]),
                        f"{a['valid_from_utc'][:10]} → {(a['valid_to_utc'] or '…')[:10]}",
                        {"valid_from_utc": a["valid_from_utc"], "valid_to_utc": a["valid_to_utc"], "hint_only": False})
            g.edge("VALID_IN", an, tn, {"valid_time_type": a["valid_time_type"]})
        if a["valid_until_hint_utc"]:
            tn = g.node("TimeInterval", interval_source(None, a["valid_until_hint_utc"]),
                        f"… → {a['valid_until_hint_utc'][:10]} (until)",
                        {"valid_from_utc": None, "valid_to_utc": a["valid_until_hint_utc"], "hint_only": True})
            g.edge("VALID_UNTIL_HINT", an, tn)
        if cfg.include_time_qualifier_edges and a["temporal_qualifier_id"] and cfg.include_time_mention_nodes:
            g.edge("QUALIFIED_BY_TIME", an, g.node_id("TimeMention", a["temporal_qualifier_id"]),
                   {"temporal_qualifier_type": a["temporal_qualifier_type"]})
        if cfg.include_message_nodes:
            if g.edge("ASSERTED_IN", an, g.node_id("Message", a["message_id"])) is None:
                g.stats["asserted_in_missing"] += 1
    # §6.5.3 lifecycle, after every Assertion node exists
    inverse = cfg.include_inverse_lifecycle_edges
    for a in data["assertions"]:
        an = g.node_id("Assertion", a["assertion_id"])
        if a["temporal_superseded_by_assertion_id"]:
            newer = g.node_id("Assertion", a["temporal_superseded_by_assertion_id"])
            g.edge("SUPERSEDES", newer, an, {"rule_id": a["rule_id_applied"], "status": a["status"],
                                             "valid_to_utc": a["valid_to_utc"]})
        if a["retracted_by_retraction_id"]:
            rn = g.node_id("Retraction", a["retracted_by_retraction_id"])
            g.edge("RETRACTED_BY", an, rn)
            if inverse:
                g.edge("RETRACTS", rn, an)
        if a["negated_by_assertion_id"]:
            nn = g.node_id("Assertion", a["negated_by_assertion_id"])
            g.edge("NEGATED_BY", an, nn)
            if inverse:
                g.edge("NEGATES", nn, an)
    # §6.5.4 conflicts
    for c in data["conflicts"]:
        cn = g.node_id("ConflictGroup", c["conflict_group_id"])
        members = [g.node_id("Assertion", m) for m in c["member_ids"]]
        for m in members:
            g.edge("HAS_CONFLICT_MEMBER", cn, m, {"conflict_type": c["conflict_type"]})
        if len(members) <= cfg.conflict_pairwise_max_n:
            for i, x in enumerate(sorted(members)):
                for y in sorted(members)[i + 1:]:
                    g.edge("CONFLICTS_WITH", x, y, {"conflict_type": c["conflict_type"],
                                                    "conflict_group_id": c["conflict_group_id"]})
    # §6.5.5 lexicon provenance
    if cfg.include_lexicon_nodes:
        for t in data["lexicon_terms"]:
            eid = data["entity_by_type_key"].get((t["entity_type_hint"], t["term_key"]))
            if eid:
                g.edge("DERIVED_FROM_LEXICON", g.node_id("Entity", eid), g.node_id("LexiconTerm", t["term_id"]),
                       {"build_id": t["build_id"], "score": t["score"]})
                g.stats["lexicon_terms_linked"] += 1
