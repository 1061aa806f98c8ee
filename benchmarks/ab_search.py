"""A/B timing of `Searcher.search` on a built vault, for two checkouts of the code (R50).

Run it once per checkout, back to back, on the same vault; each question is timed ``--repeat`` times in passes over
the whole list and the minimum CPU (``time.process_time``) and wall time are kept — on a shared, loaded box that is
steadier than one pass. ``--out FILE`` writes each question's search output (JSON, one line per question) so that
the two runs can be compared byte for byte (``cmp``). The vector lanes are off (as in ``run.py search --vectors none``)
unless ``--vectors hash|minilm`` turns them on with that embedder (the vault must hold that model's vectors).

    python benchmarks/ab_search.py --src /path/to/main/src --vault /tmp/h9perf/zipf1m.db --vocab locomo --out a.txt
    python benchmarks/ab_search.py --src src               --vault /tmp/h9perf/zipf1m.db --vocab locomo --out b.txt
    cmp a.txt b.txt
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"), help="the checkout's src/")
ap.add_argument("--vault", required=True)
ap.add_argument("--vocab", default="locomo", choices=["topic", "locomo"])
ap.add_argument("--queries", type=int, default=50)
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--out")
ap.add_argument("--mmap-mb", type=int, help="PRAGMA mmap_size in MiB after the Searcher is made (either checkout; R52)")
ap.add_argument("--vectors", default="none", choices=["none", "hash", "minilm"],
                help="none: vector lanes off (default); else the embedder of the vault's vectors, lanes on")
ap.add_argument("--fts", action="append", default=[], metavar="KEY=VALUE",
                help="a retrieval.fts setting (this checkout's names), e.g. forward_index=false")
args = ap.parse_args()
sys.path.insert(0, str(Path(args.src).resolve()))
sys.path.insert(1, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from kenning.api import Vault  # noqa: E402  (imported before run.py, which puts this checkout's src/ first)
from kenning.retrieve.search import Searcher  # noqa: E402

import run as bench  # noqa: E402  (its queries())
fts = {k: json.loads(x) for k, x in (a.split("=", 1) for a in args.fts)}
over: dict = bench.vector_overrides(args.vectors)
if fts:
    over.setdefault("retrieval", {})["fts"] = fts
v = Vault.open(args.vault, overrides=over)
s = Searcher(v.conn, v.config)
if args.mmap_mb is not None:
    v.conn.execute(f"PRAGMA mmap_size={args.mmap_mb * 1024 * 1024}").fetchall()
qs = bench.queries(args.queries, vocab=args.vocab)
for q in qs[:5]:
    s.search(q, now="2023-12-31")  # warm
cpu, wall, out = [1e12] * len(qs), [1e12] * len(qs), []
load = os.getloadavg()
for rep in range(args.repeat):
    for i, q in enumerate(qs):
        t, c = time.perf_counter(), time.process_time()
        r = s.search(q, k=10, now="2023-12-31")
        cpu[i] = min(cpu[i], (time.process_time() - c) * 1e3)
        wall[i] = min(wall[i], (time.perf_counter() - t) * 1e3)
        if rep == 0:
            out.append(json.dumps(r.as_dict() if hasattr(r, "as_dict") else [h for h in r.hits], default=str,
                                  sort_keys=True))
pp = lambda a, p: round(float(np.percentile(a, p)), 1)  # noqa: E731
import kenning  # noqa: E402

print(json.dumps({"code": str(Path(kenning.__file__).parent), "vault": args.vault, "queries": len(qs),
                  "mmap_mb": args.mmap_mb, "fts": fts, "vectors": args.vectors,
                  "min_of": args.repeat, "cpu_ms": {"p50": pp(cpu, 50), "p95": pp(cpu, 95)},
                  "wall_ms": {"p50": pp(wall, 50), "p95": pp(wall, 95)},
                  "load_avg": {"before": [round(x, 2) for x in load], "after": [round(x, 2) for x in os.getloadavg()]}}))
if args.out:
    Path(args.out).write_text("\n".join(out))
