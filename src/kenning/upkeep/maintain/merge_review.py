"""The merge queue as a person sees it (G63): near-duplicate candidates with their evidence, and the one-click
answers — ``merge`` (the same fold the nightly run makes: through the single writer, α = max(α)+0.5, β = max(β),
edges rewired, ``node_merge_map``; undo with ``kenning rollback``) or ``keep_apart`` (never proposed or folded
again, G31). The seed's blocks still apply (a person's fold may go past an open contradiction, nothing else)."""

from __future__ import annotations

from typing import Any

from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.eventlog import export_pending
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import write_scope
from kenning.upkeep.maintain.context import StepContext

ACTIONS = ("merge", "keep_apart")


class MergeReviewError(KnowledgeError):
    """A merge answer that cannot apply (unknown or settled candidate, a blocked fold)."""


def _node_doc(conn, node_id: str) -> dict[str, Any]:
    n = ksql.get_node(conn, node_id) or {}
    return {"id": node_id, "name": n.get("canonical_name"), "kind": n.get("node_kind"),
            "lifecycle_state": n.get("lifecycle_state"), "confidence": n.get("confidence"),
            "is_active": bool(n.get("is_active")),
            "aliases": sorted(a["normalized_alias"] for a in ksql.get_aliases(conn, node_id))[:10]}


def merge_candidates(conn, *, page: int = 1, page_size: int = 25, status: str = "pending") -> dict[str, Any]:
    """One page of merge candidates, strongest evidence first, each with both nodes and the reason."""
    page_size = max(1, min(100, page_size))
    items = msql.queue_page(conn, "merge", status=status, limit=page_size, offset=(page - 1) * page_size)
    out = []
    for i in items:
        a, b = (_node_doc(conn, x) for x in i["node_ids"])
        out.append({"ref": i["item_id"], "evidence": (i["detail"] or {}).get("evidence"), "reason": i["reason"],
                    "score": i["score"], "status": i["status"], "first_seen_at": i["first_seen_at"],
                    "nodes": [a, b], "available_actions": list(ACTIONS)})
    return {"page": page, "page_size": page_size, "total_items": msql.queue_total(conn, "merge", status),
            "items": out}


def _item(conn, ref: str) -> dict[str, Any]:
    hits = msql.queue_item_by_prefix(conn, "merge", ref) if len(ref) >= 6 else []
    if not hits:
        raise MergeReviewError(f"no merge candidate {ref!r} (see `kenning review merges`)")
    if len(hits) > 1 and hits[0]["item_id"] != ref:
        raise MergeReviewError(f"{ref!r} names more than one merge candidate: type more of its ref")
    return hits[0]


def resolve_merge(conn, config, ref: str, action: str, *, now: str) -> dict[str, Any]:
    """``merge`` or ``keep_apart`` one candidate; returns a receipt (commit id for a merge)."""
    if action not in ACTIONS:
        raise MergeReviewError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
    item = _item(conn, ref)
    if item["status"] != "pending":
        return {"ref": item["item_id"], "action": action, "status": "unchanged",
                "detail": f"this candidate is already {item['status']}", "commit_id": None, "created": False}
    a_id, b_id = sorted(item["node_ids"])
    with write_scope(conn):
        sc = StepContext(conn, config, now, generation=0)
        sc.writer = KnowledgeWriter(conn, config, clock=Clock(now))  # a person's commit: logged like any other
        if action == "keep_apart":
            msql.put_fold_decision(conn, {"node_a_id": a_id, "node_b_id": b_id, "verdict": "RELATED",
                                          "reviewed_by": "human", "confidence": 1.0, "decided_at": now})
            msql.set_queue_status(conn, item["item_id"], "dismissed")
            return {"ref": item["item_id"], "action": action, "status": "success", "commit_id": None,
                    "created": True, "detail": "kept apart: never proposed or folded again"}
        from kenning.upkeep.maintain.folding import fold_blocked, merge, survivor_of

        a, b = ksql.get_node(conn, a_id), ksql.get_node(conn, b_id)
        if a is None or b is None:
            raise MergeReviewError("one of the two nodes no longer exists")
        why = fold_blocked(sc, a, b, reviewed_by="human")
        if why is not None:
            raise MergeReviewError(f"cannot merge {a['canonical_name']!r} and {b['canonical_name']!r}: {why}")
        survivor = survivor_of(a, b)[0]
        commit = merge(sc, a, b, reason=f"merged by you: {item['reason']}")
        msql.put_fold_decision(conn, {"node_a_id": a_id, "node_b_id": b_id, "verdict": "FOLD",
                                      "reviewed_by": "human", "confidence": 1.0, "decided_at": now})
        msql.set_queue_status(conn, item["item_id"], "resolved")
    export_pending(conn, config)
    return {"ref": item["item_id"], "action": action, "status": "success", "commit_id": commit, "created": True,
            "detail": f"merged into {survivor['canonical_name']!r}", "survivor_id": survivor["id"]}
