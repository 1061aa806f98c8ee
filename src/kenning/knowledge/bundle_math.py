"""§42A.2.3–§42A.2.4 and §42A.2.12A as pure functions: bundle ids, pair ordering, hub penalty, salience, evidence
score, ``shouldPromoteEdge`` (in the seed's order), visibility propagation and a bundle's counts from its mentions.
Nothing here but ``visible_promoted_edges`` reads the database: the callers hand in the bundle and the first
supporting mention, so the seed's five score vectors are plain tests. It lives in ``knowledge/`` (L1) because the
edge gate every graph reader uses re-scores bundles with it; ``upkeep.bundles`` re-exports it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from kenning.knowledge.relations import UNDIRECTED

VISIBILITY = ("cloud_allowed", "cloud_warn", "local_only", "blocked")  # least → most restrictive
BLOCKED_CLASSIFICATION = ("deferred_unavailable", "quarantined_review", "unclassified")


def stable_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mention_id(observation_id: str, source_node_id: str, normalized_mention: str, start: int, end: int,
               span_class: str) -> str:
    """§42A.2.3 [NP02]: resolution-independent identity of one mention."""
    return stable_sha256(f"{observation_id}|{source_node_id}|{normalized_mention}|{start}|{end}|{span_class}")


def normalize_pair(source_id: str, target_id: str, relation_type: str) -> tuple[str, str]:
    """§42A.2.2 normalizeEdgePairOrdering: an undirected relation stores its smaller id first. Uses the node store's
    undirected set (K38), which contains the seed's three."""
    if relation_type in UNDIRECTED and target_id < source_id:
        return target_id, source_id
    return source_id, target_id


def bundle_id(source_id: str, target_id: str | None, relation_type: str) -> str:
    """§42A.2.3 [NP03] sha256(source|target|relation) after pair normalization; a null target hashes as "null"
    (§42A.2.16 rekey)."""
    if target_id is not None:
        source_id, target_id = normalize_pair(source_id, target_id, relation_type)
    return stable_sha256(f"{source_id}|{target_id if target_id is not None else 'null'}|{relation_type}")


def most_restrictive(values) -> str:
    vals = list(values)
    for v in ("blocked", "local_only", "cloud_warn"):
        if v in vals:
            return v
    return "cloud_allowed"


def can_read_promoted_edge(*, execution_visibility: str, edge_visibility: str, source_node_visibility: str,
                           target_node_visibility: str, source_classification_state: str = "classified",
                           target_classification_state: str = "classified") -> bool:
    """§42A.2.12A canReadPromotedEdge, as written."""
    if source_classification_state in BLOCKED_CLASSIFICATION or target_classification_state in BLOCKED_CLASSIFICATION:
        return False
    effective = most_restrictive([edge_visibility, source_node_visibility, target_node_visibility])
    if effective == "blocked":
        return False
    if effective == "local_only" and execution_visibility != "local_only":
        return False
    return True


def node_visibility(payload: dict[str, Any] | None) -> str:
    """§42A.2.6A deriveAliasVisibilityClass over DOC72 scope (§4.1): private → local_only, matter_scoped →
    cloud_warn, anything else cloud_allowed (G4)."""
    scope = (payload or {}).get("scope")
    if scope == "private":
        return "local_only"
    if scope == "matter_scoped":
        return "cloud_warn"
    return "cloud_allowed"


@dataclass
class Bundle:
    """§42A.2.3 LinkEvidenceBundle (+ the stored evidence score)."""
    evidence_bundle_id: str
    source_node_id: str
    target_node_id: str
    relation_type: str
    support_mention_ids: list[str] = field(default_factory=list)
    contradiction_mention_ids: list[str] = field(default_factory=list)
    support_count: int = 0
    contradiction_count: int = 0
    distinct_observation_count: int = 0
    distinct_surface_count: int = 0
    distinct_work_context_count: int = 0
    visibility_class: str = "cloud_allowed"
    last_supported_at: str | None = None
    hub_penalty: float = 0.0
    salience_score: float = 0.0
    evidence_score: float = 0.0
    user_verdict: str = "none"
    promotion_state: str = "candidate_relation"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def hub_penalty(degree: int, hub_threshold: int = 150) -> float:
    """§42A.2.4 computeBundleHubPenalty on the target's edge count."""
    if degree <= hub_threshold:
        return 0.0
    return min(0.8, (degree - hub_threshold) / (hub_threshold * 2))


def salience(b: Bundle) -> float:
    """§42A.2.4 computeBundleSalienceScore."""
    s = 0.5
    if b.distinct_surface_count >= 2:
        s += 0.15
    if b.distinct_work_context_count >= 2:
        s += 0.15
    if b.relation_type not in ("semantically_related",):
        s += 0.10
    if b.contradiction_count == 0:
        s += 0.10
    return min(1.0, s)


def evidence_score(b: Bundle) -> float:
    """§42A.2.4 computeEvidenceScore (hub_penalty and salience_score must already be on the bundle)."""
    support = min(1, b.support_count * 0.18)
    spread = min(1, b.distinct_observation_count * 0.14)
    surfaces = min(1, b.distinct_surface_count * 0.10)
    contra = min(1, b.contradiction_count * 0.25)
    return max(0.0, min(1.0, 0.45 * support + 0.25 * spread + 0.10 * surfaces + 0.20 * b.salience_score
                        - 0.25 * contra - 0.15 * b.hub_penalty))


def score(b: Bundle, degree: int, hub_threshold: int = 150) -> Bundle:
    """Hub penalty and salience first, then the evidence score (the seed's required order)."""
    b.hub_penalty = hub_penalty(degree, hub_threshold)
    b.salience_score = salience(b)
    b.evidence_score = evidence_score(b)
    return b


def should_promote(b: Bundle, policy: Any, first_mention: dict[str, Any] | None) -> tuple[bool, str]:
    """§42A.2.4 shouldPromoteEdge in the seed's order, with the reason (the review queue shows it). The first
    supporting mention is read by the caller (the seed's async helper, spec defect 4)."""
    if b.visibility_class == "blocked":
        return False, "visibility blocked"
    if b.relation_type in policy.hard_block_relation_types:
        return False, f"{b.relation_type} is hard-blocked from promotion"
    if b.user_verdict == "rejected":
        return False, "rejected by you"
    if b.user_verdict == "approved":
        return True, "approved by you"
    if policy.allow_single_observation_promotion and b.support_count == 1 and b.distinct_observation_count == 1:
        if not first_mention:
            return False, "single mention: no supporting mention"
        if policy.single_observation_requires_alias_exact and first_mention.get("resolution_method") != "alias_exact":
            return False, "single mention not resolved by exact alias"
        if (first_mention.get("graph_context_score") or 0.0) < policy.single_observation_min_graph_context:
            return False, "single mention with weak graph context"
        if b.relation_type in policy.single_observation_blocked_relation_types:
            return False, "single mention of a blocked relation"
        return True, "single mention: exact alias with strong graph context"
    if b.support_count < policy.min_support_count_for_promotion:
        return False, f"support {b.support_count} < {policy.min_support_count_for_promotion}"
    if b.distinct_observation_count < policy.min_distinct_observations_for_promotion:
        return False, f"observations {b.distinct_observation_count} < {policy.min_distinct_observations_for_promotion}"
    if evidence_score(b) < policy.min_salience_for_promotion:
        return False, f"evidence {evidence_score(b):.3f} < {policy.min_salience_for_promotion}"
    return True, "enough evidence"


def is_generic(relation_type: str) -> bool:
    return relation_type == "semantically_related" or relation_type.startswith("learned_")


def select_promotions(bundles: list[Bundle], policy: Any, budget: Any,
                      first_mentions: dict[str, dict[str, Any] | None]) -> list[tuple[Bundle, str]]:
    """§42A.2.4 materializePromotedEdges' loop: which bundles become edges, in order, under the per-source budget
    (≤ 25 promoted, ≤ 3 generic). The seed leaves the loop's order open: strongest evidence first (G10)."""
    promoted: dict[str, int] = {}
    generic: dict[str, int] = {}
    out = []
    for b in sorted(bundles, key=lambda x: (x.user_verdict != "approved", -x.evidence_score, x.evidence_bundle_id)):
        ok, why = should_promote(b, policy, first_mentions.get(b.evidence_bundle_id))
        if not ok:
            continue
        n = promoted.get(b.source_node_id, 0)
        if n >= budget.max_promoted_edges_per_source_node:
            continue
        if is_generic(b.relation_type):
            g = generic.get(b.source_node_id, 0)
            if g >= budget.max_generic_relations_per_source_node:
                continue
            generic[b.source_node_id] = g + 1
        promoted[b.source_node_id] = n + 1
        out.append((b, why))
    return out


def bundle_from_mentions(bid: str, ms: list[dict[str, Any]]) -> Bundle:
    """§42A.2.3 counts of one bundle from its (unsuppressed) mentions, nested groups once; not yet scored."""
    sup = [m for m in ms if m["polarity"] == "support"]
    con = [m for m in ms if m["polarity"] == "contradiction"]
    first = ms[0]
    src, tgt = normalize_pair(first["source_node_id"], first["resolved_node_id"], first["relation_hypothesis"])
    b = Bundle(evidence_bundle_id=bid, source_node_id=src, target_node_id=tgt,
                 relation_type=first["relation_hypothesis"])
    b.support_mention_ids = _group_heads(sup)
    b.contradiction_mention_ids = _group_heads(con)
    b.support_count = len(b.support_mention_ids)
    b.contradiction_count = len(b.contradiction_mention_ids)
    b.distinct_observation_count = len({m["observation_id"] for m in sup})
    b.distinct_surface_count = len({m["surface"] for m in sup})
    b.distinct_work_context_count = len({m["work_context_id"] for m in sup if m["work_context_id"]})
    b.visibility_class = most_restrictive(m["visibility_class"] for m in ms)
    b.last_supported_at = max((m["occurred_at"] for m in sup), default=None)
    return b


def _group_heads(ms: list[dict[str, Any]]) -> list[str]:
    """One mention id per (observation, span group): a nested span inside its parent adds nothing (§42A.2.3)."""
    seen, out = set(), []
    for m in sorted(ms, key=lambda x: x["append_seq"]):
        key = (m["observation_id"], m["group_id"])
        if key not in seen:
            seen.add(key)
            out.append(m["mention_id"])
    return out


def visible_promoted_edges(conn, execution_visibility: str = "cloud_allowed") -> list[dict[str, Any]]:
    """§42A.2.12A: the promoted edges a reader running at ``execution_visibility`` may see — every consumer of
    back-link edges should read through this (or ``can_read_promoted_edge``). Kenning nodes carry no PropA
    classification state: they count as classified."""
    from kenning.store import upkeep as usql

    edges = usql.promoted_edges(conn)
    facts = usql.node_facts(conn, {x for e in edges for x in (e["source_id"], e["target_id"])})
    out = []
    for e in edges:
        src, tgt = facts.get(e["source_id"], {}), facts.get(e["target_id"], {})
        if can_read_promoted_edge(execution_visibility=execution_visibility,
                                  edge_visibility=(e["payload"] or {}).get("visibility_class", "cloud_allowed"),
                                  source_node_visibility=node_visibility({"scope": src.get("scope")}),
                                  target_node_visibility=node_visibility({"scope": tgt.get("scope")})):
            out.append(e)
    return out
