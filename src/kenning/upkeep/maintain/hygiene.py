"""§42A.6 hygiene [DET]: a promoted (pipeline-learned) edge's confidence decays with a 90-day half-life from its
last reinforcement; below the 0.18 floor it is demoted one state (active → observed, observed → archived; kept,
never deleted), marked ``demoted_at`` so it is demoted once, and its evidence bundle returns to
``candidate_relation`` (support kept; the back-link pipeline promotes it again only on new evidence: the
support count at demotion is kept in the edge payload as ``demoted_support_count``, G60). Candidate nodes isolated for 30 days are
archived. User-verified and authority-backed edges and nodes are never touched (G37)."""

from __future__ import annotations

from typing import Any

from kenning.knowledge.ops import ArchiveNode, UpdateEdge
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.context import StepContext


def decayed(confidence: float, days: float, half_life_days: float) -> float:
    """Confidence after ``days`` without reinforcement: c · 0.5^(days / half-life)."""
    return confidence * 0.5 ** (max(0.0, days) / half_life_days)


def _exempt(payload: dict[str, Any]) -> bool:
    return bool(payload.get("user_verified") or payload.get("authority_backed") or payload.get("learned_by") == "user"
                or payload.get("user_verdict") in ("approved", "relation_corrected"))


def run_hygiene(sc: StepContext) -> dict[str, Any]:
    h = sc.config.maintain.hygiene
    counts = {"demoted_edge_count": 0, "archived_candidate_node_count": 0, "reviewed_bundle_count": 0,
              "user_verified_exempt": 0}
    ops = []
    bundles = []
    for e in msql.learned_edges(sc.conn):
        payload = e["payload"] or {}
        if _exempt(payload):
            counts["user_verified_exempt"] += 1
            continue
        if payload.get("demoted_at"):
            continue  # demoted once already; a re-promotion rewrites the payload and makes it eligible again
        since = payload.get("last_reinforced_at") or payload.get("last_supported_at") or e["start_date"]
        now_conf = decayed(e["confidence"], sc.age_days(since), h.half_life_days)
        if now_conf >= h.floor:
            continue
        bid = payload.get("evidence_bundle_id") or payload.get("bundle_id")
        # the watermark (G60): the back-link pipeline re-promotes this edge only once its bundle has more support
        mark = max(int(payload.get("support_count") or 0), msql.bundle_support_count(sc.conn, bid) if bid else 0)
        ops.append(UpdateEdge(source_id=e["source_id"], relation_type=e["relation_type"], target_id=e["target_id"],
                              lifecycle_state="observed" if (e["lifecycle_state"] or "active") == "active"
                              else "archived", confidence=round(now_conf, 6),
                              payload_set={"demoted_at": sc.now, "demoted_support_count": mark,
                                           "demoted_reason": f"§42A.6 hygiene: decayed to {now_conf:.3f} "
                                                             f"(floor {h.floor:g})"}))
        if bid:
            bundles.append(bid)
    sc.write_batches("hygiene", "§42A.6 hygiene: demote decayed promoted edges", ops)
    counts["demoted_edge_count"] = len(ops)
    # the bundle hook: the back-link pipeline's table, when this vault has it
    counts["reviewed_bundle_count"] = sum(msql.return_bundle_to_candidate(sc.conn, b) for b in bundles)
    states = set(sc.config.knowledge.lifecycle.tiers.candidate_states)
    cutoff = sc.days_before(h.isolated_candidate_days)
    verified = {n["id"] for n in msql.lifecycle_candidates(sc.conn, sorted(sc.config.knowledge.lifecycle.tiers.kinds),
                                                            sorted(states)) if n["user_verified"]}
    archive = [ArchiveNode(id=r["id"], reason=f"§42A.6 hygiene: isolated candidate for "
                                              f"{h.isolated_candidate_days:g}+ days")
               for r in msql.orphan_nodes(sc.conn)
               if r["lifecycle_state"] in states and (r["created_at"] or sc.now) <= cutoff and r["id"] not in verified]
    sc.write_batches("hygiene", "§42A.6 hygiene: archive isolated candidates", archive)
    counts["archived_candidate_node_count"] = len(archive)
    return counts
