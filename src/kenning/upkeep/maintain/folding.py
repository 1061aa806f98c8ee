"""§42 semantic folding: candidate pairs of one kind → a verdict FOLD | RELATED | CONFLICT → a merge through the
single writer (α = max(α)+0.5, β = max(β), edges rewired keeping the higher confidence), recorded in the
``NodeMergeMap``. At most ``max_pairs_per_night`` pairs get a verdict per run.

The verdict comes from the model (versioned prompt ``fold_verdict``, every call logged by the model layer) when
one is on; without a model only exact-alias pairs fold (reviewed_by ``rule``), the rest wait in the merge queue.
The seed's blocks apply whatever the verdict says (G31): same kind, both at least ``confirmed``, the same active
work context, no open contradiction on either (unless a person approved the fold), concepts whose provenance is
more than 24 months apart only after a model check, and never a node or pair a person said must not fold."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from kenning.knowledge.ops import MergeNodes
from kenning.store import knowledge as ksql
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.context import StepContext
from kenning.upkeep.maintain.duplicates import embedding_pairs, kept_apart, propose_pairs

_RANK = {"observed": 0, "suggested": 1, "confirmed": 2, "managed": 3}


class FoldVerdict(BaseModel):
    verdict: Literal["FOLD", "RELATED", "CONFLICT"]
    canonical_name: str | None = None
    canonical_description: str | None = None
    confidence: float = Field(ge=0.0, le=1.0)


def fold_blocked(sc: StepContext, a: dict[str, Any], b: dict[str, Any], *, reviewed_by: str) -> str | None:
    """Why the seed forbids folding these two nodes now, or None."""
    fcfg = sc.config.maintain.folding
    if a["node_kind"] != b["node_kind"]:
        return "different kinds"
    if not a["is_active"] or not b["is_active"]:
        return "not both active"
    need = _RANK[fcfg.min_state]
    for n in (a, b):
        if _RANK.get(n["lifecycle_state"], -1) < need:
            return f"{n['canonical_name']!r} is {n['lifecycle_state']}, below {fcfg.min_state}"
    pa, pb = a.get("payload") or {}, b.get("payload") or {}
    if pa.get("never_fold") or pb.get("never_fold"):
        return "a person said never fold"
    if kept_apart(a, b):
        return "a person said these two are different (kept apart)"
    if pa.get("is_vault_owner") or pb.get("is_vault_owner"):
        return "the vault owner is never folded automatically"
    if pa.get("work_context_id") != pb.get("work_context_id"):
        return "different active work contexts"
    dismissed, open_contra = _queue_sets(sc)
    if sc.ids.make("maintain_queue", "merge", *sorted((a["id"], b["id"]))) in dismissed:
        return "a person dismissed this merge (never fold)"
    if reviewed_by != "human":
        if a["id"] in open_contra or b["id"] in open_contra:
            return "an unresolved contradiction or correction (needs a person's OK)"
    if a["node_kind"] == "domain_concept" and reviewed_by == "rule":
        dates = sorted(p["created_at"] for n in (a, b) for p in ksql.get_provenance(sc.conn, n["id"])
                       if p.get("created_at"))
        if dates and sc.age_days(dates[0]) - sc.age_days(dates[-1]) > fcfg.concept_provenance_months * 30.44:
            return f"concept provenance more than {fcfg.concept_provenance_months:g} months apart: needs a model check"
    return None


def _queue_sets(sc: StepContext) -> tuple[set[str], set[str]]:
    """Dismissed merge items and nodes with an open contradiction, read once per step."""
    cached = getattr(sc, "_fold_queue_sets", None)
    if cached is None:
        dismissed = {i["item_id"] for i in msql.queue_items(sc.conn, "merge", status="dismissed", limit=10**9)}
        contra = {nid for i in msql.queue_items(sc.conn, "contradiction", status="pending", limit=10**9)
                  for nid in i["node_ids"]}
        cached = (dismissed, contra)
        setattr(sc, "_fold_queue_sets", cached)
    return cached


def survivor_of(a: dict[str, Any], b: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The node that stays: further along the lifecycle, then more evidence (α), then older, then smaller id."""
    def key(n: dict[str, Any]) -> tuple:
        return (-_RANK.get(n["lifecycle_state"], -1), -n["alpha"], n.get("created_at") or "", n["id"])
    s, m = sorted((a, b), key=key)
    return s, m


def _pair_doc(conn, n: dict[str, Any]) -> dict[str, Any]:
    prov = sorted(ksql.get_provenance(conn, n["id"]), key=lambda p: p.get("created_at") or "")[-3:]
    return {"name": n["canonical_name"], "lifecycle_state": n["lifecycle_state"],
            "aliases": sorted(a["normalized_alias"] for a in ksql.get_aliases(conn, n["id"])),
            "description": (n.get("payload") or {}).get("description"),
            "evidence": [{"date": p.get("created_at"), "excerpt": p.get("verbatim_excerpt")} for p in prov]}


def run_folding(sc: StepContext, llm: Any = None) -> dict[str, Any]:
    """``llm``: an enabled model-layer client (or None: rule folds only)."""
    fcfg = sc.config.maintain.folding
    from kenning.upkeep.maintain.cleanup import queue_near_duplicates

    counts = {"fold_candidate_count": 0, "folded_pair_count": 0, "merged_node_count": 0, "fold_related_count": 0,
              "fold_conflict_count": 0, "fold_blocked_count": 0}
    use_model = llm is not None and getattr(llm, "enabled", False)
    decided = 0
    # a fold can give the survivor aliases that pair it with a third node: propose again until nothing folds
    # (bounded by the nightly cap)
    while True:
        before = decided
        decided = _fold_round(sc, llm, use_model, counts, decided)
        if decided == before or decided >= fcfg.max_pairs_per_night:
            break
    counts["merge_queue_count"] = queue_near_duplicates(sc)
    return counts


def _fold_round(sc: StepContext, llm: Any, use_model: bool, counts: dict[str, int], decided: int) -> int:
    fcfg = sc.config.maintain.folding
    pairs = propose_pairs(sc.conn, sc.config)
    if use_model:  # §42 [EMB] candidates: nodes updated since the last finished fold step, same kind, close
        seen = {(p.a, p.b) for p in pairs}
        since = msql.last_high_water(sc.conn, "folding")
        pairs += [p for p in embedding_pairs(sc.conn, sc.config, since) if (p.a, p.b) not in seen]
    for p in pairs:
        if decided >= fcfg.max_pairs_per_night:
            break
        if not use_model and p.evidence != "shared_alias":
            continue  # §42: without a model only exact-alias folds; the others wait in the merge queue
        if msql.fold_decision(sc.conn, p.a, p.b) is not None:
            continue
        a, b = ksql.get_node(sc.conn, p.a), ksql.get_node(sc.conn, p.b)
        if a is None or b is None or not a["is_active"] or not b["is_active"]:
            continue  # one of them was merged earlier tonight
        reviewed_by = "llm" if use_model else "rule"
        why = fold_blocked(sc, a, b, reviewed_by=reviewed_by)
        counts["fold_candidate_count"] += 1
        if why is not None:
            counts["fold_blocked_count"] += 1
            continue
        decided += 1
        if use_model:
            res = llm.structured(fcfg.prompt, {"pair": {"kind": a["node_kind"], "evidence": p.reason,
                                                        "node_a": _pair_doc(sc.conn, a),
                                                        "node_b": _pair_doc(sc.conn, b)}},
                                 FoldVerdict, item_key=f"{p.a}|{p.b}")
            if not res.ok:
                continue  # no verdict (logged by the model layer); the pair stays in the merge queue
            v, prompt_version = res.value, res.prompt_version
        else:
            v, prompt_version = FoldVerdict(verdict="FOLD", confidence=1.0), None
        msql.put_fold_decision(sc.conn, {"node_a_id": p.a, "node_b_id": p.b, "verdict": v.verdict,
                                         "canonical_name": v.canonical_name,
                                         "canonical_description": v.canonical_description,
                                         "reviewed_by": reviewed_by, "confidence": v.confidence,
                                         "decided_at": sc.now, "prompt_version": prompt_version})
        if v.verdict == "RELATED":
            counts["fold_related_count"] += 1
            continue
        if v.verdict == "CONFLICT":
            counts["fold_conflict_count"] += 1
            item = {"item_id": sc.ids.make("maintain_queue", "contradiction", p.a, p.b), "queue": "contradiction",
                    "node_ids": [p.a, p.b], "reason": "the fold check found the two in conflict",
                    "score": v.confidence, "first_seen_at": sc.now}
            msql.queue_add(sc.conn, item)
            continue
        merge(sc, a, b, canonical_name=v.canonical_name, description=v.canonical_description,
              reason=f"{reviewed_by} fold: {p.reason}")
        counts["folded_pair_count"] += 1
        counts["merged_node_count"] += 1
    return decided


def merge(sc: StepContext, a: dict[str, Any], b: dict[str, Any], *, canonical_name: str | None = None,
          description: str | None = None, reason: str) -> str:
    """Fold the weaker node into the stronger one through the single writer; returns the commit id."""
    surv, old = survivor_of(a, b)
    res = sc.write("folding", f"§42 fold {old['canonical_name']!r} into {surv['canonical_name']!r}", [
        MergeNodes(survivor_id=surv["id"], merged_id=old["id"], canonical_name=canonical_name,
                   canonical_description=description, reason=reason)])
    msql.insert_merge(sc.conn, old["id"], surv["id"], sc.now, res.commit_id or "")
    msql.resolve_queue_items_of(sc.conn, old["id"])
    return res.commit_id or ""
