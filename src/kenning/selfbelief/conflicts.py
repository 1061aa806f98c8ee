"""Phase 11 — ConflictEngine (seed 000 §4.15) and conflict resolution (§8.4).

Detection, for a node that just received evidence: its ``top_k_conflict_check`` (20) most similar nodes of the
*opposite* polarity, plus the node with the same canonical hash and the opposite polarity:

* ``contradiction`` (``polarity_flip``): same ``canonical_hash``, opposite polarity ("i am patient" affirm / deny);
* ``tension`` (``semantic_opposition``): another concept, similarity ``>`` the active model's tension threshold,
  opposite polarity ("i love mornings" / "i hate mornings", S10);
* temporal-scope exclusion: two ``state`` nodes (primary stream ``state``) never conflict (invariant 6); every
  other pair may (S23).

Edges are stored once per pair (``node_a_id < node_b_id``); new evidence on a known pair extends its ``evidence``.

Resolution (`kenning self conflicts`): ``temporal_precedence`` (the node said most recently wins),
``evidence_weight`` (the larger Σ source_weight × atom_confidence wins; ties go to the newer), or
``user_override`` (you name the node to keep, or ``both`` to dismiss the conflict). The loser is superseded by
the winner (``contradicted_by_new_source``, or ``manual_correction`` for an override) and leaves `self list`; a
loser restated *after* the winner's latest evidence (temporal precedence again) reopens the conflict.
"""

from __future__ import annotations

from typing import Any

import orjson

from kenning.sources.jcs import canonicalize
from kenning.store import selfbeliefs as sql

METHODS = ("temporal_precedence", "evidence_weight", "user_override")


def opposite(polarity: str) -> str:
    return "deny" if polarity == "affirm" else "affirm"


class ConflictEngine:
    def __init__(self, conn, config, clock, ids, embedder, tension_threshold: float):
        self.conn, self.clock, self.ids, self.embedder = conn, clock, ids, embedder
        self.cfg = config.self_beliefs
        self.tension = tension_threshold

    def detect(self, node: dict, vector, occurrence: dict) -> list[dict]:
        """Edges created or extended for ``node`` given its new ``occurrence``."""
        r = self.cfg.resolution
        other = opposite(node["polarity"])
        cands: dict[str, float | None] = {}
        if r.tension.enabled:
            for s in self.embedder.similar(node["canonical_text"], vector, r.tension.top_k_conflict_check, other,
                                           exclude=[node["belief_id"]]):
                cands[s.belief_id] = s.score
        hard = sql.node_by_key(self.conn, node["canonical_hash"], other)
        if hard is not None and hard["belief_id"] not in cands:
            cands[hard["belief_id"]] = None
        # only the hard pair and candidates above the tension threshold can conflict: load just those
        hard_id = hard["belief_id"] if hard is not None else None
        cands = {bid: sim for bid, sim in cands.items() if bid == hard_id or (sim is not None and sim > self.tension)}
        if not cands:
            return []
        nodes = sql.nodes_by_ids(self.conn, list(cands) + [node["belief_id"]])
        streams = sql.assignments_of(self.conn, list(cands) + [node["belief_id"]])
        mine = (streams.get(node["belief_id"]) or {}).get("primary_stream")
        out = []
        for bid, sim in cands.items():
            m = nodes.get(bid)
            if m is None or m["merged_into_belief_id"] or bid == node["belief_id"]:
                continue
            theirs = (streams.get(bid) or {}).get("primary_stream")
            if self.cfg.conflicts.exclude_state_vs_state and mine == "state" and theirs == "state":
                continue  # invariant 6: two states are two moments, not a conflict
            if m["canonical_hash"] == node["canonical_hash"]:
                kind, method = "contradiction", "polarity_flip"
            elif sim is not None and sim > self.tension:
                kind, method = "tension", "semantic_opposition"
            else:
                continue
            out.append(self.upsert_edge(node["belief_id"], bid, kind, method, sim, occurrence))
        return out

    def upsert_edge(self, a: str, b: str, kind: str, method: str, similarity: float | None, occurrence: dict) -> dict:
        lo, hi = (a, b) if a < b else (b, a)
        now = self.clock.now()
        seen = occurrence.get("occurred_at") or occurrence.get("created_at") or now
        edge = sql.get_edge(self.conn, lo, hi)
        if edge is None:
            edge = {"edge_id": self.ids.make("conflict_edge", lo, hi), "node_a_id": lo, "node_b_id": hi,
                    "conflict_type": kind, "detection_method": method,
                    "evidence": canonicalize({"similarity": similarity, "occurrence_ids": [occurrence["occurrence_id"]],
                                              "threshold": self.tension if kind == "tension" else None}),
                    "status": "active", "created_at": now, "resolved_at": None, "resolution_reason": None,
                    "observed_at": seen, "resolution_method": None, "winner_belief_id": None}
            sql.insert_edge(self.conn, edge)
            return edge
        ev = orjson.loads(edge["evidence"])
        ids = ev.get("occurrence_ids", [])
        if occurrence["occurrence_id"] not in ids:
            ids.append(occurrence["occurrence_id"])
        if similarity is not None:
            ev["similarity"] = max(similarity, ev.get("similarity") or -1.0)
        ev["occurrence_ids"] = ids
        values: dict[str, Any] = {"evidence": canonicalize(ev), "observed_at": max(seen, edge["observed_at"] or seen)}
        if edge["status"] == "resolved" and edge["resolution_method"] == "temporal_precedence" \
                and edge["winner_belief_id"] and a != edge["winner_belief_id"]:
            winner_last = sql.occurrence_stats(self.conn, [edge["winner_belief_id"]]).get(
                edge["winner_belief_id"], {}).get("last_at")
            if winner_last is not None and seen > winner_last:  # restated after the winner: open again
                values.update(status="active", resolved_at=None, resolution_reason=None, resolution_method=None,
                              winner_belief_id=None)
                sql.update_node(self.conn, a, {"superseded_by_belief_id": None, "superseded_at": None,
                                               "supersession_reason": None})
        if values["evidence"] != edge["evidence"] or values["observed_at"] != edge["observed_at"] or "status" in values:
            sql.update_edge(self.conn, edge["edge_id"], values)
        return {**edge, **values}


# -- resolution (§8.4) ----------------------------------------------------------------------------------------
class ConflictResolutionError(ValueError):
    pass


def resolve_edge(conn, clock, edge: dict, method: str, keep: str | None = None) -> dict[str, Any]:
    """Resolve one active edge; returns what was decided (winner, loser, reason)."""
    if edge["status"] != "active":
        raise ConflictResolutionError(f"conflict {edge['edge_id']} is already {edge['status']}")
    if method not in METHODS:
        raise ConflictResolutionError(f"unknown resolution {method!r}; use one of {', '.join(METHODS)}")
    a, b = edge["node_a_id"], edge["node_b_id"]
    stats = sql.occurrence_stats(conn, [a, b])
    weights = {x: sum(o["source_weight"] * o["atom_confidence"] for o in occ)
               for x, occ in sql.live_occurrences(conn, [a, b]).items()}
    last = {x: (stats.get(x) or {}).get("last_at") or "" for x in (a, b)}
    now = clock.now()
    if method == "user_override":
        if keep is None:
            raise ConflictResolutionError("user_override needs --keep NODE (or --keep both)")
        if keep == "both":
            sql.update_edge(conn, edge["edge_id"], {"status": "resolved", "resolved_at": now,
                                                   "resolution_method": "dismissed",
                                                   "resolution_reason": "user: both hold (not a conflict)"})
            return {"edge_id": edge["edge_id"], "method": "dismissed", "winner": None, "loser": None}
        matches = [x for x in (a, b) if x.startswith(keep)]
        if len(matches) != 1:
            raise ConflictResolutionError(f"--keep {keep!r} names neither side of conflict {edge['edge_id']}")
        winner = matches[0]
        reason = f"user override: kept {winner}"
        supersession = "manual_correction"
    elif method == "temporal_precedence":
        winner = max((a, b), key=lambda x: (last[x], weights.get(x, 0.0), x))
        reason = f"temporal precedence: {winner} was said last ({last[winner]})"
        supersession = "contradicted_by_new_source"
    else:
        winner = max((a, b), key=lambda x: (weights.get(x, 0.0), last[x], x))
        reason = f"evidence weight: {weights.get(winner, 0.0):.3f} vs {weights.get(a if winner == b else b, 0.0):.3f}"
        supersession = "contradicted_by_new_source"
    loser = a if winner == b else b
    sql.update_edge(conn, edge["edge_id"], {"status": "resolved", "resolved_at": now, "resolution_method": method,
                                           "resolution_reason": reason, "winner_belief_id": winner})
    sql.update_node(conn, loser, {"superseded_by_belief_id": winner, "superseded_at": now,
                                  "supersession_reason": supersession})
    return {"edge_id": edge["edge_id"], "method": method, "winner": winner, "loser": loser, "reason": reason}
