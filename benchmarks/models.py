"""Model-layer benchmarks (issue 3 targets), printed as a Markdown section for benchmarks/RESULTS.md.

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python benchmarks/models.py [--vectors 100000] [--skip-minilm]

1. MiniLM embedding throughput, short sentences, batch 64 (target ≥ 500/s on a 2-core machine).
2. Hash embedding throughput (target ≥ 50k/s).
3. Exact top-10 over N 384-d vectors through ``VectorIndex.search`` (in-memory mirror engine and sqlite-vec
   engine) vs a bare numpy matrix product over the same vectors, in the same run (target ≤ 3×).

The machine may be shared: every figure comes with the load average when it was taken, and single-threaded
parts also report throughput per CPU-second (what an idle core would do).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def short_sentences(n: int) -> list[str]:
    """Distinct short first-person sentences (4–10 words) built from the calibration set's statements."""
    from kenning.llm.calibrate import load_pairs

    base = sorted({t for p in load_pairs() for t in (p.a, p.b)})
    tails = ["", " today", " at work", " most days", " these days", " with friends", " lately", " again"]
    out = []
    i = 0
    while len(out) < n:
        out.append(base[i % len(base)] + tails[(i // len(base)) % len(tails)] + ("" if i < len(base) * len(tails)
                                                                                 else f" ({i})"))
        i += 1
    return out


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.1f}"


def bench_minilm(n: int, batch: int) -> dict:
    from kenning.llm.embed import MiniLMEmbedder

    emb = MiniLMEmbedder(batch_size=batch)
    t0 = time.perf_counter()
    emb.embed(["warm up"])
    load_s = time.perf_counter() - t0
    texts = short_sentences(n)
    emb.embed(texts[:batch])
    runs, cpus = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        emb.embed(texts)
        runs.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    import torch

    tok = emb.model.tokenizer(texts[:256], padding=False)["input_ids"]
    return {"sentences": n, "batch_size": batch, "best_per_s": round(n / min(runs)),
            "median_per_s": round(n / statistics.median(runs)), "model_load_s": round(load_s, 1),
            "per_cpu_s": round(n / min(cpus)),
            "mean_tokens": round(sum(map(len, tok)) / len(tok), 1), "torch_threads": torch.get_num_threads(),
            "load_avg": load()}


def bench_hash(n: int) -> dict:
    from kenning.llm.embed import HashEmbedder

    texts = short_sentences(n)
    emb = HashEmbedder(384)
    emb.embed(texts[:2000])
    walls, cpus = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        emb.embed(texts)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    cold = HashEmbedder(384)
    t = time.perf_counter()
    cold.embed(texts)
    cold_s = time.perf_counter() - t
    return {"sentences": n, "best_per_s": round(n / min(walls)), "per_cpu_s": round(n / min(cpus)),
            "cold_per_s": round(n / cold_s), "load_avg": load()}


def bench_topk(n: int, dim: int, queries: int) -> dict:
    from kenning.config import load_config
    from kenning.llm.index import VectorIndex, drop_mirrors
    from kenning.store import open_store
    from kenning.store import vectors as vsql

    cfg = load_config(overrides={"embeddings": {"backend": "hash", "dimension": dim}})
    tmp = Path(tempfile.mkdtemp(prefix="kenning-bench-"))
    conn = open_store(tmp / "bench.db")
    idx = VectorIndex(conn, cfg)
    texts = short_sentences(n)
    t = time.perf_counter()
    for i in range(0, n, 10_000):
        idx.upsert("bench", [(f"s{j}", texts[j]) for j in range(i, min(n, i + 10_000))])
    index_s = time.perf_counter() - t
    table = idx.active()["table_name"]
    # the very vectors the index holds, as one float32 matrix
    vids, mat = [], []
    for vid, _, _, _, blob in vsql.all_vectors(conn, table):
        vids.append(vid)
        mat.append(np.frombuffer(blob, dtype=np.float32))
    m = np.ascontiguousarray(np.vstack(mat))
    qs = idx.embedder_for(idx.active()["model_id"], dim).embed(short_sentences(n + queries)[n:])

    def timed(fn) -> float:
        fn(qs[0])
        ts = []
        for q in qs:
            t0 = time.perf_counter()
            fn(q)
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1000

    matmul_ms = timed(lambda q: m @ q)
    drop_mirrors()
    t = time.perf_counter()
    numpy_engine = VectorIndex(conn, cfg)  # the default engine (auto → the in-memory mirror at this size)
    numpy_engine.search(qs[0], k=10)
    mirror_load_s = time.perf_counter() - t
    mirror_ms = timed(lambda q: numpy_engine.search(q, k=10))
    filtered_ms = timed(lambda q: numpy_engine.search(q, k=10, space="bench"))
    sqlite_engine = VectorIndex(conn, cfg, engine="sqlite")
    sqlite_ms = timed(lambda q: sqlite_engine.search(q, k=10))
    matmul_again_ms = timed(lambda q: m @ q)
    # exactness: both engines give the brute-force top-10
    q = qs[1]
    truth = np.argsort(-(m @ q), kind="stable")[:10]
    truth_scores = (m @ q)[truth]
    for eng in (numpy_engine, sqlite_engine):
        got = eng.search(q, k=10)
        assert np.allclose([h.score for h in got], truth_scores, atol=1e-5), eng.engine
    assert numpy_engine._use_mirror(numpy_engine.active())
    base = (matmul_ms + matmul_again_ms) / 2
    conn.close()
    return {"vectors": n, "dimension": dim, "queries": queries, "index_build_s": round(index_s, 1),
            "matmul_ms": round(base, 2), "mirror_topk_ms": round(mirror_ms, 2),
            "mirror_topk_space_filter_ms": round(filtered_ms, 2), "sqlite_vec_topk_ms": round(sqlite_ms, 2),
            "mirror_ratio": round(mirror_ms / base, 2), "sqlite_vec_ratio": round(sqlite_ms / base, 2),
            "mirror_load_s": round(mirror_load_s, 2), "load_avg": load()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--minilm-sentences", type=int, default=2048)
    ap.add_argument("--hash-sentences", type=int, default=100_000)
    ap.add_argument("--skip-minilm", action="store_true")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "out" / "models.json")
    args = ap.parse_args()
    results: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                     "date": time.strftime("%Y-%m-%d")}
    if not args.skip_minilm:
        results["minilm"] = bench_minilm(args.minilm_sentences, 64)
    results["hash"] = bench_hash(args.hash_sentences)
    results["topk"] = bench_topk(args.vectors, 384, args.queries)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    r = results
    print(f"Measured {r['date']} on {r['machine']} (load average at each step in brackets).\n")
    print("| what | result | target |")
    print("|---|---|---|")
    if "minilm" in r:
        mm = r["minilm"]
        print(f"| MiniLM embedding, {mm['sentences']} short sentences (~{mm['mean_tokens']} tokens), batch "
              f"{mm['batch_size']}, {mm['torch_threads']} torch threads | **{mm['best_per_s']}/s** best of 3, "
              f"median {mm['median_per_s']}/s; {mm['per_cpu_s']}/CPU-s [load {mm['load_avg']}] | ≥ 500/s |")
    h = r["hash"]
    print(f"| hash embedding, {h['sentences']:,} short sentences | **{h['best_per_s']:,}/s** wall, "
          f"{h['per_cpu_s']:,}/CPU-s, cold cache {h['cold_per_s']:,}/s [load {h['load_avg']}] | ≥ 50,000/s |")
    t = r["topk"]
    print(f"| exact top-10 over {t['vectors']:,} × {t['dimension']}-d: numpy matmul alone | {t['matmul_ms']} ms "
          f"(median of {t['queries']}) | baseline |")
    print(f"| … `VectorIndex.search`, default engine (in-memory mirror) | **{t['mirror_topk_ms']} ms = "
          f"{t['mirror_ratio']}×** (with a space filter {t['mirror_topk_space_filter_ms']} ms) [load "
          f"{t['load_avg']}] | ≤ 3× |")
    print(f"| … `VectorIndex.search`, sqlite-vec KNN engine | {t['sqlite_vec_topk_ms']} ms = "
          f"{t['sqlite_vec_ratio']}× | (fallback) |")
    print(f"\nBuilding the 100k index (hash-embed + vec0 insert): {t['index_build_s']} s; loading the mirror: "
          f"{t['mirror_load_s']} s. Raw figures: `{args.json.relative_to(ROOT)}`.")


if __name__ == "__main__":
    main()
