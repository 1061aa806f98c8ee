"""The upkeep benchmark's two halves, shared by ``benchmarks/maintain.py`` and its small-scale test: build the
synthetic knowledge graph (``synth_graph``) through the single writer, and score what ``maintain`` made of the
planted duplicates and distractors.

How duplicate recall is counted (G62): a planted duplicate is one person under 2–3 names; every pair of those
names is a true pair. A pair is *found* when its two nodes are joined by folds (``node_merge_map``) and/or pending
merge candidates (one click each in ``kenning review merges``) — directly or through the cluster's other names,
since merging "Sam Ferreira" into "Samuel Ferreira" and "Samuel Fereira" into it joins all three. Precision is
counted per proposal (each fold or merge candidate is one decision a person or the rules make): right when both
nodes belong to one planted person. ``auto_fold`` counts folds only; ``fold_or_queue`` counts both."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from kenning.bench.synth_graph import NodeSpec, graph, planted
from kenning.config import load_config
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
from kenning.knowledge.eventlog import export_pending
from kenning.knowledge.ops import CreateEdge, CreateNode, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import open_store, write_scope

NOW = "2026-03-01T09:00:00.000Z"


def _at(days: int) -> str:
    return (dt.datetime(2026, 3, 1, 9) - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def build(path: Path, n: int, seed: int, config: Any = None) -> tuple[list[NodeSpec], dict[int, str]]:
    cfg = config or load_config()
    nodes, edges = graph(n, seed, now_day=NOW[:10])
    conn = open_store(path)
    ids: dict[int, str] = {}
    writers = {d: KnowledgeWriter(conn, cfg, clock=Clock(_at(d)), export_log=False) for d in (10, 20)}
    batch: list = []
    for days in (10, 20):
        with write_scope(conn):
            for i, spec in enumerate(nodes):
                if spec.days_old != days:
                    continue
                batch.append(CreateNode(
                    node_kind=spec.kind, canonical_name=spec.name, lifecycle_state=spec.state,
                    payload={**EXAMPLE_PAYLOADS[spec.kind], **spec.attrs},
                    aliases=tuple({"alias": a} for a in spec.aliases),
                    provenance=tuple(ProvenanceIn(entry_type="conversation", source_ref=f"{t}#{p}", created_at=w,
                                                  source_metadata={"thread_id": t, "position": p})
                                     for t, p, w in spec.sightings)))
                ids[i] = writers[days].node_id(spec.kind, spec.name)
                if len(batch) >= 200:
                    writers[days].write(KnowledgeWrite(source_event="bench", change_summary="synthetic graph",
                                                       ops=batch))
                    batch = []
            if batch:
                writers[days].write(KnowledgeWrite(source_event="bench", change_summary="synthetic graph", ops=batch))
                batch = []
    w = writers[10]
    with write_scope(conn):
        for k in range(0, len(edges), 500):
            ops = []
            for a, rel, b, c in edges[k:k + 500]:
                learned = (a + b) % 10 == 0  # a tenth were promoted by the back-link pipeline, long ago
                ops.append(CreateEdge(source_id=ids[a], relation_type=rel, target_id=ids[b], confidence=c,
                                      start_date=_at(10 + (a * 7 + b) % 300) if learned else None,
                                      payload={"learned_by": "backlink_pipeline_v2"} if learned else None))
            w.write(KnowledgeWrite(source_event="bench", change_summary="synthetic edges", ops=ops))
    export_pending(conn, cfg)  # the event log catches up before the timed run (as after any real import)
    conn.close()
    return nodes, ids


def _components(pairs: set[frozenset]) -> dict[str, str]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        a, b = sorted(p)
        parent[find(a)] = find(b)
    return {x: find(x) for x in list(parent)}


def score(nodes: list[NodeSpec], ids: dict[int, str], conn, seed: int = 1) -> dict[str, Any]:
    plan = planted(seed)
    cluster_of = {ids[i]: n.cluster for i, n in enumerate(nodes) if n.cluster}
    kind_of = {f"dup{k}": d["kind"] for k, d in enumerate(plan["duplicates"])}
    members: dict[str, list[str]] = {}
    for nid, c in sorted(cluster_of.items()):
        members.setdefault(c, []).append(nid)
    truth = [(c, frozenset((m[x], m[y]))) for c, m in members.items() for x in range(len(m))
             for y in range(x + 1, len(m))]
    merged = {frozenset((m["old_node_id"], m["new_node_id"])) for m in msql.merge_map(conn)}
    queued = {frozenset(i["node_ids"]) for i in msql.queue_items(conn, "merge", status="pending", limit=10**9)}
    distractor_ids = {ids[i] for i, n in enumerate(nodes) if n.group is not None and n.cluster is None}

    def pr(found: set[frozenset]) -> dict[str, Any]:
        right = [p for p in found if len({cluster_of.get(x) for x in p}) == 1 and cluster_of.get(next(iter(p)))]
        comp = _components(found)
        hit = [(c, p) for c, p in truth if all(x in comp for x in p) and len({comp[x] for x in p}) == 1]
        kinds = sorted(set(kind_of.values()))
        return {"proposals": len(found), "right": len(right),
                "precision": round(len(right) / len(found), 4) if found else None,
                "true_pairs": len(truth), "found_pairs": len(hit),
                "recall": round(len(hit) / len(truth), 4) if truth else None,
                "recall_by_kind": {k: f"{sum(1 for c, _ in hit if kind_of[c] == k)}/"
                                      f"{sum(1 for c, _ in truth if kind_of[c] == k)}" for k in kinds},
                "distractor_proposals": sum(1 for p in found if p & distractor_ids)}

    one_off = next(ids[i] for i, n in enumerate(nodes) if n.name == plan["one_off_mention"]["name"])
    weekly = sorted(ids[i] for i, n in enumerate(nodes) if n.name in plan["weekly_pattern"]["names"])
    pats = msql.patterns(conn)
    return {"auto_fold": pr(merged), "fold_or_queue": pr(merged | queued),
            "one_off_in_a_pattern_or_merge": any(one_off in p["entity_ids"] for p in pats)
            or any(one_off in pair for pair in merged | queued),
            "weekly_pattern": next(({"regularity": p["temporal_regularity"],
                                     "confidence": p["regularity_confidence"], "status": p["status"]}
                                    for p in pats if p["entity_ids"] == weekly), None)}
