"""Nightly upkeep at scale (issue 20 part 6): duplicate-merge precision/recall on planted duplicates and the time
of `maintain` at N nodes, beside a baseline measured in the same run (one full read of the rows maintain looks
at: nodes, aliases, edges, provenance).

    python benchmarks/maintain.py --nodes 100000 [--seed 1]

Targets (issue 20): merge precision ≥ 0.95, recall ≥ 0.80, maintain ≤ 60 s at 100k nodes on 2 cores. Without a
model only exact-alias pairs fold (seed 003 §42); the merge queue holds the deterministic proposals (G34, G61)
for a person (one click each) or a model, and is scored separately (how recall is counted: G62,
``kenning.bench.upkeep_bench``)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.bench.upkeep_bench import NOW, build, score  # noqa: E402
from kenning.config import load_config  # noqa: E402
from kenning.store.connection import open_store  # noqa: E402
from kenning.upkeep.maintain.dag import maintain  # noqa: E402


def baseline_scan(conn) -> float:
    t = time.perf_counter()
    for table in ("nodes", "aliases", "edges", "provenance_entries"):
        for _ in conn.execute(f"SELECT * FROM {table}"):
            pass
    return time.perf_counter() - t


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
                  "steps_s": steps_s, **score(nodes, ids, conn, args.seed)}
        conn.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
