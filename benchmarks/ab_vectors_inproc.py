"""Same-process A/B of the vector lanes (R57/R58): another checkout's vector code (llm/index.py `_Mirror.search` and
its Hamming scans, retrieve/vectors.py `DocMeta.mask_fn`) patched in against this checkout's, alternating per pass
over the same loaded vault (one process: no load drift between the two, no second 56 s warm-up); min CPU of
--repeat passes per question, whole search and the vector lanes alone; outputs compared.

    python benchmarks/ab_vectors_inproc.py --before /work/main/src --vault /tmp/h9p4/zipf1m_vec.db --queries 50 --repeat 4
"""
import argparse, sys, time, json, os, importlib.util
ap = argparse.ArgumentParser()
ap.add_argument("--before", default="/work/main/src", help="the other checkout's src/")
ap.add_argument("--vault", required=True)
ap.add_argument("--queries", type=int, default=50)
ap.add_argument("--repeat", type=int, default=4)
args = ap.parse_args()
HERE = __import__("pathlib").Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src")); sys.path.insert(1, str(HERE))
import numpy as np
from kenning.api import Vault
from kenning.retrieve.search import Searcher
from kenning.retrieve import vectors as rv
from kenning.llm import index as li
import run as bench
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m; spec.loader.exec_module(m); return m
mi = load("main_index", f"{args.before}/kenning/llm/index.py")
mv = load("main_vectors", f"{args.before}/kenning/retrieve/vectors.py")
B = {"search": li._Mirror.search, "_hamming_candidates": li._Mirror._hamming_candidates,
     "_hamming_subset": li._Mirror._hamming_subset, "mask_fn": rv.DocMeta.mask_fn}
M = {"search": mi._Mirror.search, "_hamming_candidates": mi._Mirror._hamming_candidates,
     "_hamming_subset": mi._Mirror._hamming_subset, "mask_fn": mv.DocMeta.mask_fn}
def use(d):
    for k in ("search", "_hamming_candidates", "_hamming_subset"): setattr(li._Mirror, k, d[k])
    rv.DocMeta.mask_fn = d["mask_fn"]
import functools, collections
cur = {"i": None, "acc": 0.0}
_vl = Searcher.vector_lane
def vector_lane(self, *a, **k):
    c = time.process_time()
    try: return _vl(self, *a, **k)
    finally: cur["acc"] += time.process_time() - c
Searcher.vector_lane = vector_lane
nq, reps = args.queries, args.repeat
v = Vault.open(args.vault, overrides=bench.vector_overrides("hash"))
s = Searcher(v.conn, v.config)
qs = bench.queries(nq, vocab="locomo")
for d in (M, B):
    use(d)
    for q in qs[:5]: s.search(q, now="2023-12-31")
res = {"main": [1e9]*len(qs), "branch": [1e9]*len(qs)}
vres = {"main": [1e9]*len(qs), "branch": [1e9]*len(qs)}; outs = {"main": [], "branch": []}
load0 = os.getloadavg()
for rep in range(reps):
    for mode in (("main", "branch") if rep % 2 == 0 else ("branch", "main")):
        use(M if mode == "main" else B)
        for i, q in enumerate(qs):
            cur["acc"] = 0.0
            c = time.process_time(); r = s.search(q, k=10, now="2023-12-31")
            vres[mode][i] = min(vres[mode][i], cur["acc"] * 1e3)
            res[mode][i] = min(res[mode][i], (time.process_time() - c) * 1e3)
            if rep == 0: outs[mode].append(json.dumps(r.as_dict(), default=str, sort_keys=True))
pp = lambda a, p: round(float(np.percentile(a, p)), 1)
for m in res: print(m, "cpu p50/p95", pp(res[m], 50), pp(res[m], 95), "mean", round(float(np.mean(res[m])), 1))
for m in vres: print(m, "vector lanes cpu p50/p95", pp(vres[m], 50), pp(vres[m], 95), "mean", round(float(np.mean(vres[m])), 1))
print("ratio branch/main p50 %.2f p95 %.2f" % (pp(res["branch"], 50) / pp(res["main"], 50), pp(res["branch"], 95) / pp(res["main"], 95)))
print("identical output", outs["main"] == outs["branch"], "load", load0, os.getloadavg())
