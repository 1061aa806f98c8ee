"""§42A.5 co-occurrence cliques and procedure motifs [DET].

An observation is a thread (a conversation, else the source a provenance entry names); its time is the earliest
moment a node was seen in it. Cliques: nodes (hubs with more than ``hub_degree`` active edges excluded, at most
``max_nodes``) joined when they share ≥ ``min_pair_support`` observations with lift ≥ ``min_lift``; maximal
cliques (Bron–Kerbosch, networkx) of 2–``max_clique_size`` nodes, at most ``max_cliques``, within
``time_cap_seconds`` (else ``truncated``). Regularity from the coefficient of variation of the intervals between
the clique's observations: < .3 with a mean of 5–9 days → weekly, 25–35 → monthly; < .5 → irregular; else none.
A weekly/monthly pattern with confidence ≥ .6 becomes a standing-procedure candidate for review. Motifs:
contiguous node sequences within a thread (repeats collapsed), length 2–6, support = distinct threads ≥ 3;
only closed motifs (no longer motif with the same support contains them) are kept (G38)."""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict
from typing import Any

import networkx as nx

from kenning.sources.timestamps import parse_utc
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.context import StepContext

MAX_PROCEDURE_CANDIDATES = 50  # motifs queued for review per run, the best supported first (G38)


def regularity(times: list[str]) -> tuple[str, float]:
    """(none|weekly|monthly|irregular, confidence) from the observation times (ISO strings)."""
    ts = sorted(parse_utc(t) for t in times)
    gaps = [(b - a).total_seconds() / 86400 for a, b in zip(ts, ts[1:])]
    if len(gaps) < 2:
        return "none", 0.0
    mean = statistics.fmean(gaps)
    if mean <= 0:
        return "none", 0.0
    cv = statistics.pstdev(gaps) / mean
    # G39: confidence grows with how regular (cv → 0) and how often (3+ intervals) the pattern was seen
    support = min(1.0, len(gaps) / 3)
    if cv < 0.3 and (5 <= mean <= 9 or 25 <= mean <= 35):
        return ("weekly" if mean <= 9 else "monthly"), round((1 - cv / 0.3 * 0.5) * support, 4)
    if cv < 0.5:
        return "irregular", round((1 - cv) * support * 0.5, 4)
    return "none", 0.0


def _procedure_kind(kinds: set[str]) -> str:
    if kinds & {"application", "tool_capability"}:
        return "tool_workflow"
    if "work_product" in kinds:
        return "document_pattern"
    if kinds and kinds <= {"world_entity"}:
        return "communication_pattern"
    if "domain_concept" in kinds:
        return "research_pattern"
    return "composite_unknown"


def run_motifs(sc: StepContext) -> dict[str, Any]:
    m = sc.config.maintain.motifs
    counts = {"pattern_count": 0, "motif_count": 0, "standing_procedure_candidate_count": 0,
              "procedure_candidate_count": 0}
    obs = msql.observations(sc.conn)
    degrees = msql.node_degrees(sc.conn)
    hubs = {n for n, d in degrees.items() if d > m.hub_degree}
    threads: dict[str, set[str]] = defaultdict(set)
    seq: dict[str, list[tuple[Any, str]]] = defaultdict(list)
    when: dict[str, str] = {}
    surfaces: dict[str, set[str]] = defaultdict(set)
    contexts: dict[str, set[str]] = defaultdict(set)
    for o in obs:
        if o["node_id"] in hubs:
            continue
        t = o["thread_id"]
        threads[t].add(o["node_id"])
        seq[t].append((o["position"], o["node_id"]))
        if o["occurred_at"] and (t not in when or o["occurred_at"] < when[t]):
            when[t] = o["occurred_at"]
        surfaces[t].add(o["surface"])
        if o["work_context_id"]:
            contexts[t].add(o["work_context_id"])
    kinds = {r["id"]: r["node_kind"] for r in msql.active_names(sc.conn)}
    truncated = False

    # ---- cliques
    node_threads: dict[str, set[str]] = defaultdict(set)
    for t, nodes in threads.items():
        for n in nodes:
            node_threads[n].add(t)
    nodes = sorted(node_threads, key=lambda n: (-len(node_threads[n]), n))
    if len(nodes) > m.max_nodes:
        nodes, truncated = nodes[:m.max_nodes], True
    keep = set(nodes)
    pair = Counter()
    for t, ns in threads.items():
        ns = sorted(ns & keep)
        for i, a in enumerate(ns):
            for b in ns[i + 1:]:
                pair[(a, b)] += 1
    total = len(threads) or 1
    g = nx.Graph()
    for (a, b), n_ab in sorted(pair.items()):
        lift = n_ab * total / (len(node_threads[a]) * len(node_threads[b]))
        if n_ab >= m.min_pair_support and lift >= m.min_lift:
            g.add_edge(a, b)
    started = time.monotonic()
    found = 0
    for clique in nx.find_cliques(g):
        if time.monotonic() - started > m.time_cap_seconds or found >= m.max_cliques:
            truncated = True
            break
        if not 2 <= len(clique) <= m.max_clique_size:
            continue
        members = sorted(clique)
        shared = set.intersection(*(node_threads[n] for n in members))
        if len(shared) < m.min_pair_support:
            continue
        found += 1
        times = sorted(when[t] for t in shared if t in when)
        reg, conf = regularity(times)
        span = (parse_utc(times[-1]) - parse_utc(times[0])).total_seconds() / 86400 if len(times) > 1 else 0.0
        standing = reg in ("weekly", "monthly") and conf >= m.standing_min_confidence
        pid = sc.ids.make("co_occurrence_pattern", *members)
        p = {"pattern_id": pid, "entity_ids": members,
             "co_occurrence_count": len(shared) * len(members),  # (observation, member) sightings
             "distinct_observation_count": len(shared),
             "surfaces": sorted(set().union(*(surfaces[t] for t in shared))),
             "work_context_ids": sorted(set().union(*(contexts[t] for t in shared))),
             "temporal_span_days": round(span, 4), "temporal_regularity": reg, "regularity_confidence": conf,
             "suggested_procedure_kind": _procedure_kind({kinds.get(n, "") for n in members}),
             "status": "pending_review" if standing else "detected"}
        counts["pattern_count"] += msql.upsert_pattern(sc.conn, p)
        if standing:
            counts["standing_procedure_candidate_count"] += msql.queue_add(sc.conn, {
                "item_id": sc.ids.make("maintain_queue", "standing_procedure_candidate", pid),
                "queue": "standing_procedure_candidate", "node_ids": members,
                "reason": f"{reg} co-occurrence in {len(shared)} observations (confidence {conf:.2f})",
                "score": conf, "detail": {"pattern_id": pid}, "first_seen_at": sc.now})

    # ---- contiguous motifs
    lo, hi = m.motif_length
    support: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for t, items in seq.items():
        order = [n for _, n in sorted(items, key=lambda x: (x[0] if x[0] is not None else 0, x[1]))]
        collapsed = [n for i, n in enumerate(order) if i == 0 or n != order[i - 1]]
        for size in range(lo, hi + 1):
            for i in range(len(collapsed) - size + 1):
                gram = tuple(collapsed[i:i + size])
                if len(set(gram)) == len(gram):
                    support[gram].add(t)
    frequent = {g: ts for g, ts in support.items() if len(ts) >= m.min_motif_support}
    covered = set()  # a motif a one-step-longer motif with the same support contains
    for o, ts in frequent.items():
        for sub in (o[:-1], o[1:]):
            if len(sub) >= lo and sub in frequent and len(frequent[sub]) == len(ts):
                covered.add(sub)
    closed = [(g, ts) for g, ts in frequent.items() if g not in covered]
    closed.sort(key=lambda x: (-len(x[1]), -len(x[0]), x[0]))
    for rank, (gram, ts) in enumerate(closed):
        mid = sc.ids.make("procedure_motif", *gram)
        motif = {"motif_id": mid, "steps": [{"sequence_index": i, "node_id": n} for i, n in enumerate(gram)],
                 "support_count": len(ts), "success_support_count": 0, "failure_support_count": 0,
                 "suggested_node_kind": "procedure", "status": "pending_review"}
        counts["motif_count"] += msql.upsert_motif(sc.conn, motif)
        if rank < MAX_PROCEDURE_CANDIDATES:
            counts["procedure_candidate_count"] += msql.queue_add(sc.conn, {
                "item_id": sc.ids.make("maintain_queue", "procedure_candidate", mid), "queue": "procedure_candidate",
                "node_ids": list(gram), "reason": f"the same {len(gram)} steps in {len(ts)} threads",
                "score": float(len(ts)), "detail": {"motif_id": mid}, "first_seen_at": sc.now})
    counts["truncated"] = truncated
    return counts
