"""Knowledge delivery speed (issue 19): every §43 query kind and context-packet assembly (§42A.1) on a synthetic node
store of N nodes with ~10 current edges per node (1M edges at 100k), p50/p95 against the seed's ceilings and
against a bare primary-key select measured in the same run (ratios, not absolutes).

    python benchmarks/knowledge_query.py --sizes 10000,100000 [--reps 200] [--tmp DIR]
    python benchmarks/run.py knowledge_query --kq-sizes 10000,100000

The store is filled through the node store's own SQL functions (``kenning.store.knowledge.insert_node`` /
``insert_alias`` / ``insert_edge``) in transactions of 20,000 rows — not through the single writer, whose
per-commit patches would make a 1M-edge build take most of an hour; the tables, triggers (FTS) and indexes are the
real ones. Kinds: 80% world entities (people, places, organisations), then work products, concepts, procedures,
directives, goals (linked to an entity in the payload) and obligations (deadlines ±60 days); 50 hubs receive 10%
of all edges (~2,000 each at 100k); updated_at spread over a year. Timed on random non-hub entities, plus the
hubs for neighbours and context."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.config import load_config  # noqa: E402
from kenning.retrieve.context import build_context  # noqa: E402
from kenning.retrieve.graph_query import run_query  # noqa: E402
from kenning.sources.ids import IdFactory  # noqa: E402
from kenning.store import knowledge as ksql  # noqa: E402
from kenning.store import knowledge_query as kq  # noqa: E402
from kenning.store.connection import open_store, transaction  # noqa: E402

NOW = "2026-06-01T00:00:00.000Z"
WORDS = ("alder birch cedar delta ember fjord grove harbor iris juniper kestrel lumen maple nectar orchid pine "
         "quartz river sable tundra umber violet willow xenon yarrow zephyr atlas beacon canyon dune echo falcon "
         "glacier heron island jasper kelp lagoon meadow nova onyx prairie quill raven summit thistle urchin vale "
         "wren yucca zenith amber basalt coral drift").split()
RELATIONS = ("domain_knows", "domain_works_with", "domain_lives_in", "domain_works_at", "related_to",
             "domain_member_of", "references", "part_of")
KIND_SHARE = (("world_entity", 0.80), ("work_product", 0.05), ("domain_concept", 0.04), ("procedure", 0.03),
              ("memory_directive", 0.03), ("goal", 0.03), ("obligation", 0.02))


def ts(day: float) -> str:
    base = time.mktime(time.strptime("2026-06-01", "%Y-%m-%d"))
    t = time.gmtime(base - day * 86400)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + ".000Z"


def payload(kind: str, name: str, rng: random.Random, entity_ids: list[str]) -> dict[str, Any]:
    words = " ".join(rng.sample(WORDS, 3))
    if kind == "world_entity":
        return {"entity_type": rng.choice(("person", "person", "place", "organization")),
                "description": f"someone or somewhere about {words}"}
    if kind == "work_product":
        return {"document_type": "memo", "status": "draft", "description": f"a memo on {words}"}
    if kind == "domain_concept":
        return {"concept_name": name, "definition": f"the idea of {words}", "applies_in": [words]}
    if kind == "procedure":
        return {"canonical_name": name, "description": f"how to {words}", "source": "manual_demonstration",
                "steps": [{"step_index": 1, "intent": f"do {words}", "capability_area": "general"}]}
    if kind == "memory_directive":
        return {"memory_type": "preference", "summary": f"prefers {words}", "assertion_class": "preference",
                "applies_when": [words], "scope": "global", "source_certainty": "user_explicitly_stated",
                "priority_class": "absolute" if rng.random() < 0.01 else "default"}
    linked = rng.choice(entity_ids) if entity_ids else None
    if kind == "goal":
        return {"goal_description": f"achieve {words}", "goal_status": "active",
                **({"linked_entity_ids": [linked], "primary_entity_id": linked} if linked else {})}
    due = ts(rng.uniform(-60, 60))
    return {"obligation_description": f"deliver {words}", "status": "pending",
            "deadline": {"date": due, "type": "internal", "consequence_of_missing": "late", "extendable": True},
            **({"linked_entity_refs": [linked]} if linked else {})}


def build(path: Path, n: int, seed: int = 7, edges_per_node: int = 10, hubs: int = 50) -> dict[str, Any]:
    rng = random.Random(seed)
    ids = IdFactory(load_config().ids.id_namespace)
    conn = open_store(path)
    t0 = time.perf_counter()
    kinds = []
    for kind, share in KIND_SHARE:
        kinds += [kind] * int(round(n * share))
    kinds = (kinds + ["world_entity"] * n)[:n]
    rng.shuffle(kinds)
    node_ids = [ids.make("bench_node", i) for i in range(n)]
    entity_ids: list[str] = []
    batch = 20_000
    for lo in range(0, n, batch):
        with transaction(conn):
            for i in range(lo, min(n, lo + batch)):
                kind = kinds[i]
                name = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS).capitalize()} {i:06d}"
                a, b = 2 + rng.random() * 20, 2 + rng.random() * 20
                updated = ts(rng.uniform(0, 365))
                ksql.insert_node(conn, {
                    "id": node_ids[i], "node_kind": kind, "canonical_name": name, "alpha": a, "beta": b,
                    "confidence": a / (a + b), "staleness_state": "fresh", "lifecycle_state": "observed",
                    "created_at": updated, "updated_at": updated, "last_verified_at": updated,
                    "payload": payload(kind, name, rng, entity_ids[-1000:]), "is_active": 1})
                ksql.insert_alias(conn, {"id": ids.make("bench_alias", i), "node_id": node_ids[i],
                                         "normalized_alias": name.lower(), "alias_type": "name", "confidence": 1.0})
                if kind == "world_entity":
                    entity_ids.append(node_ids[i])
    nodes_s = time.perf_counter() - t0
    hub_ids = rng.sample(entity_ids, hubs)
    seen: set[tuple[str, str, str]] = set()
    total = n * edges_per_node
    t0 = time.perf_counter()
    made = 0
    while made < total:
        with transaction(conn):
            for _ in range(min(batch, total - made)):
                src = node_ids[rng.randrange(n)]
                tgt = rng.choice(hub_ids) if rng.random() < 0.10 else node_ids[rng.randrange(n)]
                rel = rng.choice(RELATIONS)
                if src == tgt or (src, rel, tgt) in seen:
                    continue
                seen.add((src, rel, tgt))
                ksql.insert_edge(conn, {"source_id": src, "target_id": tgt, "relation_type": rel,
                                        "confidence": round(rng.random(), 3), "lifecycle_state": "active",
                                        "start_date": ts(rng.uniform(0, 700)), "end_date": None, "payload": None})
                made += 1
    edges_s = time.perf_counter() - t0
    conn.execute("ANALYZE")
    conn.close()
    (path.parent / f"{path.name}.meta.json").write_text(json.dumps({"hubs": hub_ids}))
    return {"nodes": n, "edges": made, "nodes_s": round(nodes_s, 1), "edges_s": round(edges_s, 1),
            "method": "store functions (ksql.insert_node/insert_alias/insert_edge), 20k rows per transaction"}


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def timed(fn: Callable[[Any], Any], items: list[Any]) -> tuple[list[float], int]:
    out, truncated = [], 0
    for it in items:
        t = time.perf_counter()
        r = fn(it)
        out.append((time.perf_counter() - t) * 1000)
        reason = getattr(r, "truncation_reason", None) or (getattr(r, "telemetry", None) or {}).get("truncation_reason")
        truncated += bool(reason and "ceiling" in reason)  # max_results cuts are the caller's limit, not slowness
    return out, truncated


def measure(path: Path, reps: int, seed: int = 11) -> dict[str, Any]:
    cfg = load_config(overrides={"knowledge": {"store": {"event_log": "off"}}})
    ceilings = cfg.knowledge.delivery.query_ceilings
    hubs = json.loads((path.parent / f"{path.name}.meta.json").read_text())["hubs"]
    conn = open_store(path)
    rng = random.Random(seed)
    n = ksql.count_nodes(conn)
    people = [r["id"] for r in ksql.list_nodes(conn, kind="world_entity", limit=min(n, 20000))]
    hubset = set(hubs)
    sample = [x for x in rng.sample(people, min(len(people), reps * 2)) if x not in hubset][:reps]
    named = kq.nodes_by_ids(conn, sample)
    procs = [r["id"] for r in ksql.list_nodes(conn, kind="procedure", limit=reps)]

    def q(kind: str, **kw: Any) -> Callable[[Any], Any]:
        return lambda x: run_query(conn, cfg, kind, now=NOW, **{k: (v(x) if callable(v) else v) for k, v in kw.items()})

    cases: list[tuple[str, str, Callable[[Any], Any], list[Any]]] = [
        ("pk_select (baseline)", "entity_lookup", lambda x: kq.pk_probe(conn, x), sample),
        ("entity_lookup id", "entity_lookup", q("entity_lookup", lookup="id", value=lambda x: x), sample),
        ("entity_lookup alias", "entity_lookup",
         q("entity_lookup", lookup="alias", value=lambda x: named[x]["canonical_name"]), sample),
        ("entity_lookup exact_name", "entity_lookup",
         q("entity_lookup", lookup="exact_name", value=lambda x: named[x]["canonical_name"]), sample),
        ("entity_neighbors depth 1", "entity_neighbors_depth1",
         q("entity_neighbors", entity_id=lambda x: x, depth=1), sample),
        ("entity_neighbors depth 2", "entity_neighbors_depth2",
         q("entity_neighbors", entity_id=lambda x: x, depth=2), sample),
        ("entity_neighbors depth 1, hubs", "entity_neighbors_depth1",
         q("entity_neighbors", entity_id=lambda x: x, depth=1), hubs),
        ("entity_cards ×10 compact", "entity_cards",
         q("entity_cards", entity_ids=lambda i: sample[i:i + 10]), list(range(0, len(sample) - 10))),
        ("entity_cards ×10 full", "entity_cards",
         q("entity_cards", entity_ids=lambda i: sample[i:i + 10], card_tier="full"),
         list(range(0, len(sample) - 10))[:max(20, reps // 4)]),
        ("procedure_bundle", "procedure_bundle", q("procedure_bundle", composite_id=lambda x: x), procs),
        ("goal_context", "goal_context", q("goal_context", entity_id=lambda x: x), sample),
        ("knowledge_brief", "knowledge_brief", q("knowledge_brief", entity_id=lambda x: x), sample),
        ("related_threads", "related_threads", q("related_threads", entity_id=lambda x: x), sample),
        ("entity_scoped_search", "entity_scoped_search",
         q("entity_scoped_search", entity_id=lambda x: x, query=lambda x: " ".join(rng.sample(WORDS, 2))), sample),
        ("context packet", "context",
         lambda x: build_context(conn, cfg, f"what should I tell {named[x]['canonical_name']} about "
                                            f"{rng.choice(WORDS)}?", now=NOW), sample),
        ("context packet, session (novelty)", "context",
         lambda x: build_context(conn, cfg, f"and {named[x]['canonical_name']}?", now=NOW, session="bench"),
         sample),
        ("context packet, hub entity", "context",
         lambda x: build_context(conn, cfg, "what is new here?", now=NOW, entity=x), hubs),
    ]
    out: dict[str, Any] = {}
    base = None
    for label, key, fn, items in cases:
        fn(items[0])  # warm the statement cache
        ms, truncated = timed(fn, items)
        c = ceilings[key]
        entry = {"n": len(ms), "p50_ms": round(statistics.median(ms), 3), "p95_ms": round(pct(ms, 95), 3),
                 "max_ms": round(max(ms), 3), "past_ceiling_truncated": truncated}
        if base is None:
            base = entry
        else:
            entry.update(target_p50_ms=c.p50_ms, target_p95_ms=c.p95_ms, ceiling_ms=c.ceiling_ms,
                         p95_within_target=entry["p95_ms"] <= c.p95_ms,
                         p95_vs_pk_select=round(entry["p95_ms"] / max(base["p95_ms"], 1e-6), 1))
        out[label] = entry
        print(json.dumps({label: entry}), flush=True)
    conn.close()
    return out


def run(sizes: list[int], reps: int, tmp: str | None = None) -> dict[str, Any]:
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        for n in sizes:
            path = Path(d) / f"kq-{n}.db"
            b = build(path, n)
            print(json.dumps({"build": b}), flush=True)
            report[str(n)] = {"build": b, "latency": measure(path, reps)}
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--tmp", default=None)
    a = ap.parse_args()
    print(json.dumps(run([int(x) for x in a.sizes.split(",")], a.reps, a.tmp), indent=2))


if __name__ == "__main__":
    main()
