"""Two source trees side by side on copies of one vault (issue 24 §2, decisions C1–C4): the index stage's time
(every search document indexed again: FTS table, forward index, counts — vectors off) and a warm search's latency
(the queries of benchmarks/search_same.py, whole search without vectors, and the plain FTS lane alone; wall and
CPU; and a new searcher's first search; ``--fresh-queries``: each timed pass on queries the searcher has not run), each tree
in its own process, interleaved ``--rounds`` times (the box is shared: compare ratios of one run).

    git archive <base commit> src | tar -x -C /tmp/base
    python benchmarks/fts_detail_ab.py --vault V.db --base-src /tmp/base/src [--rounds 3]

Each process opens its own copy of ``V.db`` (the new tree upgrades its copy first, outside the timings)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from kenning.api import Vault
from kenning.config import load_config
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import run_stage
from kenning.pipeline.stages import STAGES
from kenning.retrieve.search import Searcher
from kenning.store import search as search_sql
import search_same
what, db = sys.argv[3], sys.argv[4]
v = Vault.open(Path(db))
out = {}
if what == "index":
    cfg = load_config(overrides={"retrieval": {"vector": {"enabled": False}}})
    with v.conn:
        search_sql.clear_index(v.conn)
    t0, c0 = time.perf_counter(), time.process_time()
    r = run_stage(v.conn, STAGES["index"], cfg, Clock.from_option("2025-01-02T00:00:00Z"))
    out = {"index_wall_s": time.perf_counter() - t0, "index_cpu_s": time.process_time() - c0,
           "docs": r.counts.get("docs_total")}
else:
    fresh = sys.argv[5] == "1"
    qs = search_same.make_queries(v.conn, 60)
    s = Searcher(v.conn, v.config, embedder=False)
    t, c = time.perf_counter(), time.process_time()
    s.search(qs[0], k=10, now="2024-12-31")  # a new searcher's first search: its caches, the in-memory index (C6)
    out["first_search_ms"], out["first_search_cpu_ms"] = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
    for q in (search_same.make_queries(v.conn, 60, turns=1) if fresh else qs):
        s.search(q, k=10, now="2024-12-31")  # warm: caches, first-use costs
    for lanes, key, turns in ((None, "search", 2), (["fts"], "fts_lane", 3)):
        lat, cpu = [], []
        for q in (search_same.make_queries(v.conn, 60, turns=turns) if fresh else qs):
            t, c = time.perf_counter(), time.process_time()
            s.search(q, k=10, now="2024-12-31", lanes=lanes)
            lat.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        lat.sort()
        out[key + "_ms_p50"] = lat[len(lat) // 2]
        out[key + "_ms_mean"] = sum(lat) / len(lat)
        out[key + "_ms_p95"] = lat[int(0.95 * (len(lat) - 1))]
        out[key + "_cpu_ms_mean"] = sum(cpu) / len(cpu)
v.close()
print(json.dumps(out))
"""


def run(src: Path, what: str, db: Path, fresh: bool = False) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(src)}
    p = subprocess.run([sys.executable, "-c", CHILD, str(src), str(ROOT / "benchmarks"), what, str(db), str(int(fresh))],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--base-src", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--fresh-queries", action="store_true",
                    help="warm the searcher on other queries than it is timed on, and time the FTS lane on queries "
                         "the whole-search pass did not run (no query's words all seen before: C10's cache cold)")
    ap.add_argument("--skip-index", action="store_true", help="time searches only (a large vault's index stage is long)")
    args = ap.parse_args()
    trees = {"base": Path(args.base_src).resolve(), "new": ROOT / "src"}
    tmp = Path(tempfile.mkdtemp(prefix="fts_ab_"))
    dbs = {}
    for name, src in trees.items():
        dbs[name] = tmp / f"{name}.db"
        shutil.copy(args.vault, dbs[name])
        run(src, "search", dbs[name])  # the upgrade (new tree: migration 0120), once, untimed
    res: dict = {name: [] for name in trees}
    load = [os.getloadavg()]
    for _ in range(args.rounds):
        for name, src in trees.items():
            res[name].append({**run(src, "search", dbs[name], args.fresh_queries),
                              **({} if args.skip_index else run(src, "index", dbs[name]))})
    load.append(os.getloadavg())
    summary = {"load_avg": [[round(x, 2) for x in la] for la in load], "rounds": args.rounds}
    for key in res["base"][0]:
        if key == "docs":
            continue
        b = statistics.median(r[key] for r in res["base"])
        n = statistics.median(r[key] for r in res["new"])
        summary[key] = {"base": round(b, 3), "new": round(n, 3), "new_over_base": round(n / b, 3)}
    print(json.dumps(summary, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "runs": res}, indent=1))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
