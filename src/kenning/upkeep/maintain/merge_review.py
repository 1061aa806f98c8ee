"""The merge queue as a person sees it (G63): near-duplicate candidates with their evidence, and the one-click
answers — ``merge`` (the same fold the nightly run makes: through the single writer, α = max(α)+0.5, β = max(β),
edges rewired, ``node_merge_map``; undo with ``kenning rollback``) or ``keep_apart`` (never proposed or folded
again, G31; a commit on both nodes, G67). The seed's blocks still apply (a person's fold may go past an open contradiction, nothing else)."""

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


def _keep_apart_commit(sc: StepContext, a_id: str, b_id: str, item: dict[str, Any]) -> str | None:
    """One commit that records "different" on both nodes (the user's verdict is canonical: it must survive a
    rebuild from the log, re-ingest and reindex, like every confirmation and correction)."""
    from kenning.knowledge.ops import UpdateNode

    ops = []
    for me, other in ((a_id, b_id), (b_id, a_id)):
        node = ksql.get_node(sc.conn, me)
        if node is None:
            continue
        apart = sorted(set((node.get("payload") or {}).get("kept_apart_from") or ()) | {other})
        ops.append(UpdateNode(id=me, payload_set={"kept_apart_from": apart}, by_user=True))
    if not ops:
        return None
    names = (item.get("detail") or {}).get("names") or []
    res = sc.write("merge_review", f"kept apart by you: {' / '.join(names) or item['item_id']}", ops)
    return res.commit_id


def resolve_merge(conn, config, ref: str, action: str, *, now: str) -> dict[str, Any]:
    """``merge`` or ``keep_apart`` one candidate; returns a receipt (the commit id of either: both are a person's
    verdict, logged like any other commit)."""
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
            commit = _keep_apart_commit(sc, a_id, b_id, item)
            msql.put_fold_decision(conn, {"node_a_id": a_id, "node_b_id": b_id, "verdict": "RELATED",
                                          "reviewed_by": "human", "confidence": 1.0, "decided_at": now})
            msql.set_queue_status(conn, item["item_id"], "dismissed")
            receipt = {"ref": item["item_id"], "action": action, "status": "success", "commit_id": commit,
                       "created": True, "detail": "kept apart: never proposed or folded again"}
        else:
            receipt = _merge(sc, item, a_id, b_id, now)
    export_pending(conn, config)
    return receipt


def _merge(sc: StepContext, item: dict[str, Any], a_id: str, b_id: str, now: str) -> dict[str, Any]:
    from kenning.upkeep.maintain.folding import fold_blocked, merge, survivor_of

    conn = sc.conn
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
    return {"ref": item["item_id"], "action": "merge", "status": "success", "commit_id": commit, "created": True,
            "detail": f"merged into {survivor['canonical_name']!r}", "survivor_id": survivor["id"]}
