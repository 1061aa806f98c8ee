"""Model-layer benchmarks (issue 3 targets), printed as a Markdown section for benchmarks/RESULTS.md.

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python benchmarks/models.py [--vectors 100000] [--skip-minilm]
                                                                          [--minilm-only]

1. MiniLM embedding throughput, short sentences, batch 64 (target ≥ 500/s on a 2-core machine), on both
   runtimes (onnxruntime, the default, and sentence-transformers/torch) in the same run, with their ratio.
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
import shutil
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


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.1f}"


def bench_minilm(n: int, batch: int, rounds: int = 3) -> dict:
    """Both runtimes of the minilm backend in the same run, rounds interleaved (torch, onnx, torch, onnx, …) so
    a change in the machine's load hits both alike; the ONNX export is made (or found in the cache) first."""
    from kenning.llm.embed import MiniLMEmbedder

    texts = short_sentences(n)
    embs, load_s = {}, {}
    variants = {"torch": ("torch", False), "onnx": ("onnx", False), "onnx_spin": ("onnx", True)}
    for name, (rt, spin) in variants.items():
        emb = MiniLMEmbedder(batch_size=batch, runtime=rt, onnx_spin_wait=spin)
        t0 = time.perf_counter()
        emb.embed(["warm up"])
        load_s[name] = time.perf_counter() - t0
        if emb.active_runtime != rt:
            raise SystemExit(f"the {rt} runtime is not available: {emb.fallback_reason}")
        emb.embed(texts[:batch])
        embs[name] = emb
    runs: dict[str, list[float]] = {k: [] for k in variants}
    cpus: dict[str, list[float]] = {k: [] for k in variants}
    vecs = {}
    loads = []
    for _ in range(rounds):
        for rt, emb in embs.items():
            t, c = time.perf_counter(), time.process_time()
            vecs[rt] = emb.embed(texts)
            runs[rt].append(time.perf_counter() - t)
            cpus[rt].append(time.process_time() - c)
            loads.append(os.getloadavg()[0])
    import torch

    tok = embs["torch"].model.tokenizer(texts[:256], padding=False)["input_ids"]
    out = {"sentences": n, "batch_size": batch, "rounds": rounds,
           "mean_tokens": round(sum(map(len, tok)) / len(tok), 1),
           "min_cosine_onnx_vs_torch": float((vecs["onnx"] * vecs["torch"]).sum(axis=1).min()),
           "load_avg_min": round(min(loads), 1), "load_avg_max": round(max(loads), 1), "load_avg": load()}
    for rt in variants:
        out[rt] = {"best_per_s": round(n / min(runs[rt])), "median_per_s": round(n / statistics.median(runs[rt])),
                   "per_cpu_s": round(n / min(cpus[rt])), "model_load_s": round(load_s[rt], 1)}
    out["torch"]["threads"] = torch.get_num_threads()
    out["onnx"]["threads"] = out["onnx_spin"]["threads"] = embs["onnx"]._onnx.threads
    out["onnx_spin_ratio_best"] = round(min(runs["torch"]) / min(runs["onnx_spin"]), 2)
    out["onnx_torch_ratio_best"] = round(min(runs["torch"]) / min(runs["onnx"]), 2)
    out["onnx_torch_ratio_median"] = round(statistics.median(runs["torch"]) / statistics.median(runs["onnx"]), 2)
    out["onnx_torch_ratio_cpu"] = round(min(cpus["torch"]) / min(cpus["onnx"]), 2)
    return out


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
    from kenning.llm.index import drop_mirrors

    cfg = load_config(overrides={"embeddings": {"backend": "hash", "dimension": dim}})
    tmp = Path(tempfile.mkdtemp(prefix="kenning-bench-"))
    try:
        return _bench_topk(tmp, cfg, n, dim, queries)
    finally:
        drop_mirrors()
        shutil.rmtree(tmp, ignore_errors=True)  # the 100k-vector vault is ~400 MB


def _bench_topk(tmp: Path, cfg, n: int, dim: int, queries: int) -> dict:
    from kenning.llm.index import VectorIndex, drop_mirrors
    from kenning.store import open_store
    from kenning.store import vectors as vsql

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
    ap.add_argument("--minilm-only", action="store_true", help="only the MiniLM runtimes (no hash, no top-k)")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "out" / "models.json")
    args = ap.parse_args()
    results: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                     "date": time.strftime("%Y-%m-%d")}
    if not args.skip_minilm:
        results["minilm"] = bench_minilm(args.minilm_sentences, 64)
    if not args.minilm_only:
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
        for rt, label in (("torch", "sentence-transformers/torch"), ("onnx", "onnxruntime (default)"),
                          ("onnx_spin", "onnxruntime, `onnx_spin_wait: true`")):
            x = mm[rt]
            print(f"| MiniLM embedding, {label}, {x['threads']} threads: {mm['sentences']} short sentences "
                  f"(~{mm['mean_tokens']} tokens), batch {mm['batch_size']} | **{x['best_per_s']}/s** best of "
                  f"{mm['rounds']}, median {x['median_per_s']}/s; {x['per_cpu_s']}/CPU-s [load "
                  f"{mm['load_avg_min']}–{mm['load_avg_max']}] | ≥ 500/s |")
        print(f"| … onnx / torch, same run, rounds interleaved | **{mm['onnx_torch_ratio_best']}×** best, "
              f"{mm['onnx_torch_ratio_median']}× median, {mm['onnx_torch_ratio_cpu']}× per CPU-s; min cosine "
              f"{mm['min_cosine_onnx_vs_torch']:.7f}; with spinning threads {mm['onnx_spin_ratio_best']}× "
              f"best | |")
    if args.minilm_only:
        print(f"\nRaw figures: `{_rel(args.json)}`.")
        return
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
    print(f"\nBuilding the {t['vectors']:,}-vector index (hash-embed + vec0 insert): {t['index_build_s']} s; "
          f"loading the mirror: "
          f"{t['mirror_load_s']} s. Raw figures: `{_rel(args.json)}`.")


if __name__ == "__main__":
    main()
