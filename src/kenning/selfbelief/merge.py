"""`kenning self merge A B` — the explicit merge of seed 000 §3.3 / §8.3 (invariant 4: never automatic).

A is folded into B: A's occurrences move to B (one that B already has for the same experience and version is
soft-deleted instead), A's tentative links and conflict edges are re-pointed to B (pairs B already has absorb
them), the A–B link is marked ``accepted`` / ``merged``, A leaves the vector index and is marked
``merged_into_belief_id = B`` (a future atom with A's hash resolves to B), an ``identity`` stream on A carries over
to B (ratchet), and both are rescored. In the belief ledger A becomes superseded by B.
"""

from __future__ import annotations

from typing import Any

import orjson

from kenning.sources.jcs import canonicalize
from kenning.store import selfbeliefs as sql


class MergeError(ValueError):
    pass


def _resolve(conn, ref: str) -> dict:
    found = sql.find_nodes(conn, ref)
    exact = [n for n in found if n["belief_id"] == ref]
    if exact:
        return exact[0]
    if len(found) != 1:
        raise MergeError(f"{ref!r} matches {len(found)} self-belief nodes; give more of the id")
    return found[0]


def merge_nodes(ctx, ex, a_ref: str, b_ref: str) -> dict[str, Any]:
    conn, now = ctx.conn, ctx.clock.now()
    a, b = _resolve(conn, a_ref), _resolve(conn, b_ref)
    if a["belief_id"] == b["belief_id"]:
        raise MergeError("a node cannot be merged into itself")
    for n in (a, b):
        if n["merged_into_belief_id"]:
            raise MergeError(f"{n['belief_id']} was already merged into {n['merged_into_belief_id']}")
    if a["polarity"] != b["polarity"]:
        raise MergeError(f"{a['belief_id']} ({a['polarity']}) and {b['belief_id']} ({b['polarity']}) have opposite "
                         "polarity: that is a contradiction, not a duplicate (`kenning self conflicts`)")
    aid, bid = a["belief_id"], b["belief_id"]
    moved, folded = sql.repoint_occurrences(conn, aid, bid, now)
    # links
    links_moved = 0
    for link in sql.links_of(conn, aid, ("pending", "accepted", "rejected")):
        other = link["to_belief_id"] if link["from_belief_id"] == aid else link["from_belief_id"]
        if other == bid:
            sql.update_link(conn, link["link_id"], {"status": "accepted", "status_reason": "merged", "merged_at": now,
                                                    "updated_at": now})
            continue
        sql.delete_link(conn, link["link_id"])
        existing = sql.get_link(conn, bid, other)
        if existing is not None:
            sql.update_link(conn, existing["link_id"], {
                "support_both": existing["support_both"] + link["support_both"],
                "support_one": existing["support_one"] + link["support_one"], "updated_at": now})
        else:
            lo, hi = (bid, other) if bid < other else (other, bid)
            sql.insert_link(conn, {**link, "link_id": ctx.ids.make("tentative_link", lo, hi), "from_belief_id": lo,
                                   "to_belief_id": hi, "updated_at": now})
        links_moved += 1
    # conflict edges
    edges_moved = 0
    for e in sql.edges_of(conn, [aid], None):
        other = e["node_b_id"] if e["node_a_id"] == aid else e["node_a_id"]
        sql.delete_edge(conn, e["edge_id"])
        if other == bid:
            continue
        existing = sql.get_edge(conn, bid, other)
        if existing is not None:
            ev, ev2 = orjson.loads(existing["evidence"]), orjson.loads(e["evidence"])
            ev["occurrence_ids"] = sorted(set(ev.get("occurrence_ids", [])) | set(ev2.get("occurrence_ids", [])))
            sql.update_edge(conn, existing["edge_id"], {"evidence": canonicalize(ev)})
        else:
            lo, hi = (bid, other) if bid < other else (other, bid)
            sql.insert_edge(conn, {**e, "edge_id": ctx.ids.make("conflict_edge", lo, hi), "node_a_id": lo,
                                   "node_b_id": hi})
        edges_moved += 1
    # streams: identity is never lost by merging (ratchet)
    sa, sb = sql.get_assignment(conn, aid), sql.get_assignment(conn, bid)
    if sa and sb and sa["primary_stream"] == "identity" and sb["primary_stream"] != "identity":
        ex.streams._move(bid, sb, "identity", {"reason": "merged", "from_node": aid})
    sql.update_node(conn, aid, {"merged_into_belief_id": bid, "merged_at": now})
    ex.embedder.unindex([aid])
    return {"merged": aid, "into": bid, "occurrences_moved": moved, "occurrences_folded": folded,
            "links_moved": links_moved, "edges_moved": edges_moved}
