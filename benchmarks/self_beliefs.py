"""Seed 000 (issue 7) benchmarks: rules-only `analyze` throughput, decomposition of one experience into a vault
with 50k belief nodes (hash and MiniLM embedders), and the gold-set metrics.

    python benchmarks/self_beliefs.py analyze [--statements 5000]
    python benchmarks/self_beliefs.py decompose --backend hash|minilm [--nodes 50000] [--experiences 60]
        [--other-vectors N] [--statements-per-message K]
    python benchmarks/self_beliefs.py gold
    python benchmarks/run.py self              # all three (hash and minilm), one JSON report

Every speed figure comes with a baseline measured in the same process (the machine is shared):
* analyze: statements per second of wall time and of CPU time (this process), against one tokenizing regex pass
  plus ``str.lower`` over the same statements (the cheapest possible "read every statement" loop);
* decompose: the median CPU time (``time.process_time``; the figure for an idle core) and wall time of
  ``HTNBeliefExtractor.extract_and_update_self_knowledge`` (phases 1–13 of one experience, its own write
  transaction) against the median of one bare top-10 vector search over the same 50k nodes (``VectorIndex.search``,
  the floor of any resolver) and of one uncached embedding, with the load average before and after.
  ``--other-vectors N`` adds N message vectors to the same vector table (as in a real vault);
  ``--statements-per-message K`` joins K gold statements into one message (experiences with several atoms).
  The 50k nodes are written in bulk with stream
  assignments; for MiniLM their vectors are random unit vectors (a search costs the same whatever the vectors
  hold; embedding 50k texts would take minutes on this box and measures nothing of the decomposer).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

GOLD = ROOT / "benchmarks" / "data" / "self_beliefs_gold.jsonl"
AS_OF = "2024-06-01T00:00:00Z"


def gold_texts() -> list[str]:
    return [json.loads(line)["text"] for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- analyze ------------------------------------------------------------------------------------------------------
def bench_analyze(n: int = 5000) -> dict[str, Any]:
    from kenning.config import load_config
    from kenning.selfbelief.analyze import Analyzer

    an = Analyzer(load_config())
    base = gold_texts()
    texts = (base * (n // len(base) + 1))[:n]
    for t in base:                                   # warm up (regex compilation, imports)
        an.analyze(t)
    tok = re.compile(r"[A-Za-z']+")
    t0, c0 = time.perf_counter(), time.process_time()
    words = sum(len(tok.findall(t.lower())) for t in texts)
    base_wall, base_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    atoms = sum(len(an.analyze(t).atoms) for t in texts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"statements": n, "distinct_statements": len(base), "atoms": atoms, "words": words,
            "statements_per_s_wall": round(n / wall, 1), "statements_per_s_cpu": round(n / cpu, 1),
            "baseline_statements_per_s_wall": round(n / base_wall, 1),
            "baseline_statements_per_s_cpu": round(n / base_cpu, 1),
            "ratio_to_baseline_cpu": round(cpu / base_cpu, 1), "target_statements_per_s": 2000,
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


# -- decompose -----------------------------------------------------------------------------------------------------
ADJ = ("patient calm anxious curious stubborn shy loud quiet organized messy creative practical honest kind "
       "impatient lazy driven careful reckless generous jealous proud humble confident insecure competitive loyal "
       "moody cheerful grumpy brave timid tidy chaotic focused distracted relaxed tense social private").split()
OBJ = ("with my kids|at work|with strangers|in meetings|about money|about my health|with my partner|in the morning|"
       "at night|on weekends|with my parents|about deadlines|in crowds|with my friends|about food|when driving|"
       "with my team|about politics|at home|on holiday|in traffic|with my boss|about the future|about my body|"
       "with my siblings|in public|online|at the gym|about school|with neighbours").split("|")
FRAMES = ("i am {a} {o}", "i feel {a} {o}", "i tend to be {a} {o}", "i am not {a} {o}", "i get {a} {o}",
          "i am usually {a} {o}", "i have always been {a} {o}", "i become {a} {o}", "i stay {a} {o}",
          "i seem {a} {o}", "i act {a} {o}", "i grow {a} {o}", "i look {a} {o}", "i sound {a} {o}",
          "i turn {a} {o}", "i remain {a} {o}", "i appear {a} {o}", "i come across as {a} {o}",
          "i was {a} {o}", "i used to be {a} {o}", "i am rarely {a} {o}", "i am often {a} {o}",
          "i am mostly {a} {o}", "i am quite {a} {o}", "i am very {a} {o}", "i am a bit {a} {o}",
          "i am less {a} {o}", "i am more {a} {o}", "i am too {a} {o}", "i am so {a} {o}",
          "i am deeply {a} {o}", "i am oddly {a} {o}", "i am always {a} {o}", "i am never {a} {o}",
          "i am kind of {a} {o}", "i am somewhat {a} {o}", "i am fairly {a} {o}", "i am truly {a} {o}",
          "i am mildly {a} {o}", "i am extremely {a} {o}", "i am naturally {a} {o}", "i am secretly {a} {o}")


def synthetic_nodes(n: int) -> list[str]:
    out = []
    for f in FRAMES:
        for a in ADJ:
            for o in OBJ:
                out.append(f.format(a=a, o=o))
                if len(out) == n:
                    return out
    raise ValueError(f"only {len(out)} synthetic node texts; ask for fewer")


def build_vault(path: Path, backend: str, n_nodes: int, n_exps: int, n_other: int = 0,
                per_message: int = 1) -> dict[str, Any]:
    import numpy as np

    from conftest import write_export
    from kenning.api import Vault
    from kenning.llm.index import VectorIndex
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES
    from kenning.selfbelief.canonicalizer import canonical_hash
    from kenning.selfbelief.render import render_statement
    from kenning.sources.ids import IdFactory
    from kenning.store import selfbeliefs as sql
    from kenning.store.connection import transaction

    cfg = path.parent / "bench.yaml"
    cfg.write_text(f"embeddings:\n  backend: {backend}\n"
                   "self_beliefs:\n  ledger:\n    enabled: false\n", encoding="utf-8")
    texts = gold_texts()[:n_exps * per_message]
    turns = []
    for i in range(0, len(texts), per_message):     # per_message > 1: several statements in one message
        turns += [("user", " ".join(texts[i:i + per_message])), ("assistant", "I see.")]
    src = write_export(path.parent / "bench.json", turns)
    timings: dict[str, Any] = {}
    v = Vault.open(path, config_path=cfg)
    t0 = time.perf_counter()
    v.ingest([src], stages="0,1", as_of=AS_OF)
    run_stage(v.conn, STAGES["self"], v.config, Clock.from_option(AS_OF), inputs={"limit": 0})  # detection only
    timings["raw_and_detection_s"] = round(time.perf_counter() - t0, 2)
    ids = IdFactory(v.config.ids.id_namespace)
    node_texts = synthetic_nodes(n_nodes)
    t0 = time.perf_counter()
    now = "2024-01-01T00:00:00.000Z"
    with transaction(v.conn):
        for i, text in enumerate(node_texts):
            pol = "deny" if " not " in text else "affirm"
            h = canonical_hash(text)
            bid = ids.make("belief_node", h, pol)
            sql.insert_node(v.conn, {"belief_id": bid, "canonical_text": text, "canonical_hash": h,
                                     "belief_type": "TRAIT", "polarity": pol, "activation": 0.0, "core_score": 0.0,
                                     "status": "surface", "conflict_count": 0, "created_at": now,
                                     "last_reinforced_at": now, "statement": render_statement(text, "affirm"),
                                     "extractor_version": "bench", "embedding": None, "embedding_model": None})
            sql.insert_assignment(v.conn, {"assignment_id": ids.make("stream_assignment", bid), "belief_id": bid,
                                           "primary_stream": "identity", "secondary_stream": None, "confidence": 0.75,
                                           "migrated_from": None, "migrated_at": None, "migration_history": "[]",
                                           "created_at": now, "updated_at": now})
        idx = VectorIndex(v.conn, v.config)
        if backend != "hash":                          # random unit vectors for the preloaded nodes (see above)
            table = idx.ensure_active()
            rng = np.random.default_rng(7)

            class _Random:
                def embed(self, batch):
                    m = rng.standard_normal((len(batch), table["dimension"])).astype("float32")
                    return m / np.linalg.norm(m, axis=1, keepdims=True)

            real = idx.embedder_for
            idx.embedder_for = lambda *a: _Random()  # type: ignore[method-assign]
        space = v.config.self_beliefs.embeddings.space
        for s in range(0, n_other, 5000):              # other spaces of the same table (messages of a real vault)
            idx.upsert("search", [(f"msg-{i}", f"message {i}: {node_texts[i % n_nodes]} and then {OBJ[i % len(OBJ)]}",
                                   "message") for i in range(s, min(n_other, s + 5000))])
        for s in range(0, n_nodes, 5000):
            idx.upsert(space, [(ids.make("belief_node", canonical_hash(t), "deny" if " not " in t else "affirm"), t,
                                "deny" if " not " in t else "affirm") for t in node_texts[s:s + 5000]])
        if backend != "hash":
            idx.embedder_for = real  # type: ignore[method-assign]
    timings["nodes_written_s"] = round(time.perf_counter() - t0, 2)
    v.close()
    return {"config": str(cfg), **timings}


def bench_decompose(backend: str, n_nodes: int = 50000, n_exps: int = 60, warmup: int = 3,
                    n_other: int = 0, per_message: int = 1) -> dict[str, Any]:
    from kenning.config import load_config
    from kenning.llm.index import VectorIndex
    from kenning.pipeline.clock import Clock
    from kenning.selfbelief.extractor import HTNBeliefExtractor
    from kenning.selfbelief.stage import current_version
    from kenning.sources.ids import IdFactory
    from kenning.store import selfbeliefs as sql
    from kenning.store.connection import open_store

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "v.db"
        info = build_vault(db, backend, n_nodes, n_exps, n_other, per_message)
        config = load_config(info["config"], db)
        conn = open_store(db)
        version = current_version(config, "none")
        pending = sql.pending_experiences(conn, version)
        ex = HTNBeliefExtractor(conn, config, clock=Clock.from_option(AS_OF), ids=IdFactory(config.ids.id_namespace),
                                run_id="bench", extractor_version=version)
        times, cpus, atoms = [], [], 0
        load_before = os.getloadavg()
        for n, exp in enumerate(pending):
            t0, c0 = time.perf_counter(), time.process_time()
            r = ex.extract_and_update_self_knowledge(exp)
            dt, dc = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
            if n >= warmup:
                times.append(dt)
                cpus.append(dc)
                atoms += len(r.analysis.atoms)
        t0 = time.perf_counter()
        ex.finish(publish=False)
        finish_ms = (time.perf_counter() - t0) * 1000
        idx = VectorIndex(conn, config)
        emb = ex.embedder.embed_batch(["i am patient with my kids"])
        base, base_cpu = [], []
        for _ in range(30):
            t0, c0 = time.perf_counter(), time.process_time()
            idx.search(emb[0], 10, space=config.self_beliefs.embeddings.space, kinds=["affirm"])
            base.append((time.perf_counter() - t0) * 1000)
            base_cpu.append((time.process_time() - c0) * 1000)
        emb_ms, emb_cpu = [], []
        active = ex.embedder._active()
        inner = getattr(active, "inner", active)     # past the embedding cache: a real model call
        for i in range(15):                          # one uncached embedding of a short statement
            t0, c0 = time.perf_counter(), time.process_time()
            inner.embed([f"i am patient with my kids number {i}"])
            emb_ms.append((time.perf_counter() - t0) * 1000)
            emb_cpu.append((time.process_time() - c0) * 1000)
        nodes = sql.count_nodes(conn)
        conn.close()
    med, med_cpu = statistics.median(times), statistics.median(cpus)

    return {"backend": backend, "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
            "nodes_before": n_nodes, "other_vectors": n_other, "statements_per_message": per_message,
            "nodes_after": nodes,
            "experiences_timed": len(times), "atoms_per_experience": round(atoms / max(1, len(times)), 2),
            "median_ms": round(med, 2), "median_cpu_ms": round(med_cpu, 2),
            "p90_ms": round(sorted(times)[int(0.9 * (len(times) - 1))], 2), "finish_batch_ms": round(finish_ms, 1),
            "baseline_one_knn_median_ms": round(statistics.median(base), 3),
            "baseline_one_knn_median_cpu_ms": round(statistics.median(base_cpu), 3),
            "ratio_to_knn_cpu": round(med_cpu / statistics.median(base_cpu), 1),
            "baseline_one_embedding_median_ms": round(statistics.median(emb_ms), 2),
            "baseline_one_embedding_median_cpu_ms": round(statistics.median(emb_cpu), 2),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "torch_threads": _torch_threads(),
            "target_ms": 20 if backend == "hash" else 60, **{k: v for k, v in info.items() if k != "config"}}


def _torch_threads():
    if "torch" not in sys.modules:
        return None
    return sys.modules["torch"].get_num_threads()


# -- gold ------------------------------------------------------------------------------------------------------------
def bench_gold() -> dict[str, Any]:
    from kenning.config import load_config
    from kenning.selfbelief.analyze import Analyzer
    from kenning.selfbelief.annotate import evaluate, load_gold, predicted_atoms

    cfg = load_config()
    an = Analyzer(cfg)
    rep = evaluate(load_gold(GOLD), lambda it: predicted_atoms(an.analyze(it["text"], mode=it.get("mode"))),
                   cfg.self_beliefs.annotate.match_min_f1)
    return {k: {"statements": b["statements"], "atoms": b["atoms"],
                **{f: b[f]["accuracy"] for f in ("belief_type", "polarity", "temporal_scope")}}
            for k, b in rep.items() if isinstance(b, dict)}


def run_all(args) -> dict[str, Any]:
    return {"analyze": bench_analyze(args.statements),
            "decompose_hash": bench_decompose("hash", args.nodes, args.experiences),
            "decompose_minilm": bench_decompose("minilm", args.nodes, args.experiences),
            "gold_rules": bench_gold()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["analyze", "decompose", "gold", "all"])
    ap.add_argument("--backend", default="hash", choices=["hash", "minilm"])
    ap.add_argument("--statements", type=int, default=5000)
    ap.add_argument("--nodes", type=int, default=50000)
    ap.add_argument("--experiences", type=int, default=60)
    ap.add_argument("--statements-per-message", type=int, default=1,
                    help="join this many gold statements into one message (experiences with several atoms)")
    ap.add_argument("--other-vectors", type=int, default=0,
                    help="also index this many message vectors in another space of the same table (a real vault)")
    args = ap.parse_args()
    if args.what == "analyze":
        out = bench_analyze(args.statements)
    elif args.what == "decompose":
        out = bench_decompose(args.backend, args.nodes, args.experiences, n_other=args.other_vectors,
                              per_message=args.statements_per_message)
    elif args.what == "gold":
        out = bench_gold()
    else:
        out = run_all(args)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
