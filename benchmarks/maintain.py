"""Nightly upkeep at scale (issue 20 part 6): duplicate-merge precision/recall on planted duplicates and the time
of `maintain` at N nodes, beside a baseline measured in the same run (one full read of the rows maintain looks
at: nodes, aliases, edges, provenance).

    python benchmarks/maintain.py --nodes 100000 [--seed 1]

Targets (issue 20): merge precision ≥ 0.95, recall ≥ 0.80, maintain ≤ 60 s at 100k nodes on 2 cores. Without a
model only exact-alias pairs fold (seed 003 §42); the merge queue holds the deterministic proposals (G34) for a
person or a model, and is scored separately."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.bench.synth_graph import graph, iter_truth_pairs, planted  # noqa: E402
from kenning.config import load_config  # noqa: E402
from kenning.knowledge.ops import CreateEdge, CreateNode, KnowledgeWrite, ProvenanceIn  # noqa: E402
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS  # noqa: E402
from kenning.knowledge.eventlog import export_pending  # noqa: E402
from kenning.knowledge.writer import KnowledgeWriter  # noqa: E402
from kenning.pipeline.clock import Clock  # noqa: E402
from kenning.store import upkeep_maintain as msql  # noqa: E402
from kenning.store.connection import open_store, write_scope  # noqa: E402
from kenning.upkeep.maintain.dag import maintain  # noqa: E402

NOW = "2026-03-01T09:00:00.000Z"


def _at(days: int) -> str:
    return (dt.datetime(2026, 3, 1, 9) - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def build(path: Path, n: int, seed: int) -> tuple[list, dict[int, str]]:
    cfg = load_config()
    nodes, edges = graph(n, seed, now_day=NOW[:10])
    conn = open_store(path)
    ids: dict[int, str] = {}
    writers = {d: KnowledgeWriter(conn, cfg, clock=Clock(_at(d)), export_log=False) for d in (10, 20)}
    batch: list = []
    idx: list[int] = []

    def flush(days: int) -> None:
        res = writers[days].write(KnowledgeWrite(source_event="bench", change_summary="synthetic graph", ops=batch))
        del res

    for days in (10, 20):
        with write_scope(conn):
            for i, spec in enumerate(nodes):
                if spec.days_old != days:
                    continue
                op = CreateNode(node_kind=spec.kind, canonical_name=spec.name, lifecycle_state=spec.state,
                                payload=dict(EXAMPLE_PAYLOADS[spec.kind]),
                                aliases=tuple({"alias": a} for a in spec.aliases),
                                provenance=tuple(ProvenanceIn(entry_type="conversation", source_ref=f"{t}#{p}",
                                                              created_at=w, source_metadata={"thread_id": t,
                                                                                             "position": p})
                                                 for t, p, w in spec.sightings))
                ids[i] = writers[days].node_id(spec.kind, spec.name)
                batch.append(op)
                idx.append(i)
                if len(batch) >= 200:
                    flush(days)
                    batch.clear()
            if batch:
                flush(days)
                batch.clear()
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


def baseline_scan(conn) -> float:
    t = time.perf_counter()
    for table in ("nodes", "aliases", "edges", "provenance_entries"):
        for _ in conn.execute(f"SELECT * FROM {table}"):
            pass
    return time.perf_counter() - t


def score(nodes: list, ids: dict[int, str], conn) -> dict:
    truth = {frozenset((ids[a], ids[b])) for a, b in iter_truth_pairs(nodes)}
    kind_of = {}
    for d_i, d in enumerate(planted()["duplicates"]):
        kind_of[f"dup{d_i}"] = d["kind"]
    cluster_kind = {frozenset((ids[a], ids[b])): kind_of[nodes[a].cluster] for a, b in iter_truth_pairs(nodes)}
    merged = {frozenset((m["old_node_id"], m["new_node_id"])) for m in msql.merge_map(conn)}
    queued = {frozenset(i["node_ids"]) for i in msql.queue_items(conn, "merge", status=None, limit=10**9)}
    proposed = merged | queued

    def pr(found: set) -> dict:
        tp = len(found & truth)
        return {"found": len(found), "true_positives": tp,
                "precision": round(tp / len(found), 4) if found else None,
                "recall": round(tp / len(truth), 4) if truth else None,
                "recall_by_kind": {k: round(sum(1 for p in truth if cluster_kind[p] == k and p in found)
                                            / sum(1 for p in truth if cluster_kind[p] == k), 4)
                                   for k in sorted(set(cluster_kind.values()))}}
    one_off = next(ids[i] for i, n in enumerate(nodes) if n.name == planted()["one_off_mention"]["name"])
    weekly = sorted(ids[i] for i, n in enumerate(nodes) if n.name in planted()["weekly_pattern"]["names"])
    pats = msql.patterns(conn)
    return {"auto_fold": pr(merged), "fold_or_queue": pr(proposed),
            "one_off_in_a_pattern_or_merge": any(one_off in p["entity_ids"] for p in pats)
            or any(one_off in pair for pair in proposed),
            "weekly_pattern": next(({"regularity": p["temporal_regularity"],
                                     "confidence": p["regularity_confidence"], "status": p["status"]}
                                    for p in pats if p["entity_ids"] == weekly), None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v.db"
        t = time.perf_counter()
        nodes, ids = build(path, args.nodes, args.seed)
        build_s = time.perf_counter() - t
        conn = open_store(path)
        base = baseline_scan(conn)
        cfg = load_config()
        marks: list[tuple[str, float]] = []
        t = time.perf_counter()
        first = maintain(conn, cfg, now=NOW, progress=lambda s: marks.append((s, time.perf_counter())))
        first_s = time.perf_counter() - t
        ends = [m[1] for m in marks[1:]] + [t + first_s]
        steps_s = {s: round(e - b, 2) for (s, b), e in zip(marks, ends)}  # the last one includes VACUUM
        t = time.perf_counter()
        second = maintain(conn, cfg, now=NOW)  # the same moment: an unchanged vault
        second_s = time.perf_counter() - t
        result = {"nodes": args.nodes, "seed": args.seed, "build_s": round(build_s, 1),
                  "baseline_full_read_s": round(base, 3), "maintain_s": round(first_s, 2),
                  "maintain_vs_baseline": round(first_s / base, 1), "second_run_s": round(second_s, 2),
                  "second_run_changes": second["changes"],
                  "receipt": {k: v for k, v in first.items() if k.endswith("_count") and v},
                  "steps_s": steps_s, **score(nodes, ids, conn)}
        conn.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
