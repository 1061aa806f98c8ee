"""Same-process A/B of the whole search (R59): every method of ``Searcher`` and ``FtsPool`` (retrieve/search.py),
``DocMeta`` (retrieve/vectors.py) and the vector index's ``_Mirror`` (llm/index.py) taken from another checkout
and swapped in against this checkout's, alternating per pass over one loaded vault (one process: no load drift, one
warm-up); the mirror's cached row sets are kept per side, its write paths (not timed) are this checkout's. Min CPU (``time.process_time``) and wall of ``--repeat``
passes per question; the two sides' search output compared.

    python benchmarks/ab_search_inproc.py --before /work/main/src --vault /tmp/h9p4/zipf1m_vec.db --queries 50 --repeat 4
"""
import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

ap = argparse.ArgumentParser()
ap.add_argument("--before", default="/work/main/src", help="the other checkout's src/")
ap.add_argument("--vault", required=True)
ap.add_argument("--vocab", default="locomo", choices=["topic", "locomo"])
ap.add_argument("--vectors", default="hash", choices=["none", "hash", "minilm"])
ap.add_argument("--queries", type=int, default=50)
ap.add_argument("--repeat", type=int, default=4)
ap.add_argument("--out", help="write each side's output (JSON lines) to OUT.main / OUT.branch")
args = ap.parse_args()
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(1, str(HERE))
import numpy as np  # noqa: E402

from kenning.api import Vault  # noqa: E402
from kenning.llm import index as li  # noqa: E402
from kenning.retrieve import search as rs  # noqa: E402
from kenning.retrieve import vectors as rv  # noqa: E402

import run as bench  # noqa: E402


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


other = {"search": load("before_search", f"{args.before}/kenning/retrieve/search.py"),
         "vectors": load("before_vectors", f"{args.before}/kenning/retrieve/vectors.py"),
         "index": load("before_index", f"{args.before}/kenning/llm/index.py")}
CLASSES = [(rs.Searcher, other["search"].Searcher), (rs.FtsPool, other["search"].FtsPool),
           (rv.DocMeta, other["vectors"].DocMeta), (li._Mirror, other["index"]._Mirror)]


WRITES = {"upsert", "delete", "_grow", "_compact"}  # the mirror's write paths stay this checkout's (not timed)


def methods(cls):
    return {k: v for k, v in vars(cls).items() if callable(v) or isinstance(v, (staticmethod, classmethod))
            if not k.startswith("__") and k not in WRITES}


SIDES = {"branch": [(c, methods(c)) for c, _ in CLASSES], "main": [(c, methods(o)) for c, o in CLASSES]}
ROWSETS: dict = {"branch": {}, "main": {}}


def use(side):
    for cls, ms in SIDES[side]:
        for k, v in ms.items():
            setattr(cls, k, v)
    for mirror in li._MIRRORS.values():
        mirror.row_sets = ROWSETS[side].setdefault(id(mirror), {})


v = Vault.open(args.vault, overrides=bench.vector_overrides(args.vectors))
s = rs.Searcher(v.conn, v.config)
qs = bench.queries(args.queries, vocab=args.vocab)
for side in ("main", "branch"):
    use(side)
    for q in qs[:5]:
        s.search(q, now="2023-12-31")
cpu = {m: [1e12] * len(qs) for m in SIDES}
wall = {m: [1e12] * len(qs) for m in SIDES}
outs: dict = {m: [] for m in SIDES}
load0 = os.getloadavg()
for rep in range(args.repeat):
    for side in (("main", "branch") if rep % 2 == 0 else ("branch", "main")):
        use(side)
        for i, q in enumerate(qs):
            t, c = time.perf_counter(), time.process_time()
            r = s.search(q, k=10, now="2023-12-31")
            cpu[side][i] = min(cpu[side][i], (time.process_time() - c) * 1e3)
            wall[side][i] = min(wall[side][i], (time.perf_counter() - t) * 1e3)
            if rep == 0:
                outs[side].append(json.dumps(r.as_dict(), default=str, sort_keys=True))
pp = lambda a, p: round(float(np.percentile(a, p)), 1)  # noqa: E731
res = {m: {"cpu_ms": {"p50": pp(cpu[m], 50), "p95": pp(cpu[m], 95), "mean": round(float(np.mean(cpu[m])), 1)},
           "wall_ms": {"p50": pp(wall[m], 50), "p95": pp(wall[m], 95)}} for m in SIDES}
print(json.dumps({"vault": args.vault, "queries": len(qs), "min_of": args.repeat, **res,
                  "ratio_cpu": {p: round(res["branch"]["cpu_ms"][p] / res["main"]["cpu_ms"][p], 3) for p in ("p50", "p95")},
                  "identical_output": outs["main"] == outs["branch"],
                  "load_avg": {"before": [round(x, 2) for x in load0], "after": [round(x, 2) for x in os.getloadavg()]}}))
if args.out:
    for m in SIDES:
        Path(f"{args.out}.{m}").write_text("\n".join(outs[m]))
