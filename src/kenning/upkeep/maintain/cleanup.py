"""§42 nightly cleanup [DET]: candidates that never moved on are archived (observed 14 d, suggested 30 d),
conflicting provenance goes to the contradiction queue and the top stale procedures are surfaced; near-duplicates
are queued for merge after the folding step, and nodes without active edges get the orphan flag at the end of the
run (so a run leaves nothing for the next one to find). A person's confirmation or correction exempts
a node from automatic archiving (§42A.6: user-verified never auto-archived)."""

from __future__ import annotations

from typing import Any

from kenning.knowledge.lifecycle import cleanup_archive_due
from kenning.knowledge.ops import ArchiveNode
from kenning.store import knowledge as ksql
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.context import StepContext
from kenning.upkeep.maintain.duplicates import kept_apart, propose_pairs


def run_cleanup(sc: StepContext) -> dict[str, Any]:
    cfg, lc = sc.config.maintain.cleanup, sc.config.knowledge.lifecycle
    counts = {"archived_node_count": 0, "contradiction_queue_count": 0, "stale_procedure_count": 0}
    # 1. candidate decay and suggestion expiry
    ops, exempt = [], 0
    for n in msql.lifecycle_candidates(sc.conn, lc.tiers.candidate_kinds, lc.tiers.candidate_states):
        entered = n["promoted_at"] if n["lifecycle_state"] == "suggested" and n["promoted_at"] else n["created_at"]
        why = cleanup_archive_due(n["lifecycle_state"], entered or sc.now, sc.now, lc)
        if why is None:
            continue
        if n["user_verified"]:
            exempt += 1
            continue
        ops.append(ArchiveNode(id=n["id"], reason=f"§42 cleanup: {why}"))
    sc.write_batches("cleanup", "§42 cleanup: archive candidates that never moved on", ops)
    counts["archived_node_count"] = len(ops)
    counts["user_verified_exempt"] = exempt
    # 2. conflicting provenance → contradiction queue
    for r in msql.contradicted_nodes(sc.conn):
        item = {"item_id": sc.ids.make("maintain_queue", "contradiction", r["id"]), "queue": "contradiction",
                "node_ids": [r["id"]], "reason": f"{r['supporting']} supporting and {r['contradicting']} "
                                                  f"contradicting provenance entries",
                "score": float(r["contradicting"]), "first_seen_at": sc.now}
        counts["contradiction_queue_count"] += msql.queue_add(sc.conn, item)
    # 3. stale procedures: the top N by confidence, oldest verification first
    for r in msql.stale_procedures(sc.conn, sc.days_before(cfg.stale_procedure_days), cfg.stale_procedure_top):
        item = {"item_id": sc.ids.make("maintain_queue", "stale_procedure", r["id"], r["verified_at"]),
                "queue": "stale_procedure", "node_ids": [r["id"]],
                "reason": f"{r['staleness_state']}; last verified {r['verified_at']}",
                "score": float(r["confidence"]), "first_seen_at": sc.now}
        counts["stale_procedure_count"] += msql.queue_add(sc.conn, item)
    return counts


def queue_near_duplicates(sc: StepContext) -> int:
    """Near-duplicates → merge queue; run after the folds so the queue holds what is left for a person."""
    added = 0
    for p in propose_pairs(sc.conn, sc.config):
        a, b = ksql.get_node(sc.conn, p.a), ksql.get_node(sc.conn, p.b)
        if a is not None and b is not None and kept_apart(a, b):
            continue  # a person said "different" (G67): on the nodes, so even a rebuilt queue never asks again
        item = {"item_id": sc.ids.make("maintain_queue", "merge", p.a, p.b), "queue": "merge",
                "node_ids": [p.a, p.b], "reason": p.reason, "score": p.score,
                "detail": {"evidence": p.evidence, "kind": p.kind, "names": [p.name_a, p.name_b]},
                "first_seen_at": sc.now}
        added += msql.queue_add(sc.conn, item)
    return added


def flag_orphans(sc: StepContext) -> dict[str, int]:
    """§42 orphan flag (0 active edges): a flag for a person, nothing is archived for it. Runs last, after
    hygiene has demoted what it demotes, so a second run finds nothing new."""
    added = 0
    if sc.config.maintain.cleanup.orphan_flag:
        for r in msql.orphan_nodes(sc.conn):
            item = {"item_id": sc.ids.make("maintain_queue", "orphan", r["id"]), "queue": "orphan",
                    "node_ids": [r["id"]], "reason": "no active edges", "first_seen_at": sc.now}
            added += msql.queue_add(sc.conn, item)
    return {"orphan_count": added}
