"""The same searches by two Kenning versions on their own vaults, in fresh processes (a one-shot `kenning search`,
as a person runs it), interleaved: wall and CPU medians per question and whether the output bytes are equal.
For a storage change (issue 24 §2): the old code on the old vault against the new code on the upgraded copy.

    python benchmarks/search_ab.py --side main=../main/src:/tmp/base.db --side new=src:/tmp/upgraded.db [--reps 3]

The questions are benchmarks/startup.py's (the cold-search goal of issue 24 §4)."""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import QUESTIONS  # noqa: E402


def run(src: str, db: str, q: str) -> tuple[float, float, bytes]:
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1", "COLUMNS": "80", "NO_COLOR": "1"}
    for k in ("KENNING_DB", "KENNING_CONFIG", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "kenning", "search", q, "--json", "--now", "2024-06-01", "--db", db],
                       capture_output=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 2):
        raise SystemExit(p.stderr.decode()[-2000:])
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", action="append", required=True, help="NAME=SRC:DB (twice)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    sides = {}
    for s in args.side:
        name, rest = s.split("=", 1)
        src, db = rest.rsplit(":", 1)
        sides[name] = (str(Path(src).resolve()), db)
    for src, db in sides.values():  # warm-up: .pyc files, the page cache
        for q in QUESTIONS:
            run(src, db, q)
    got: dict[tuple[str, int], list] = {}
    for _ in range(args.reps):
        for i, q in enumerate(QUESTIONS):
            for name, (src, db) in sides.items():
                got.setdefault((name, i), []).append(run(src, db, q))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| question | " + " | ".join(f"{n} wall / CPU (median s)" for n in sides) + " | same output bytes |")
    print("|---|" + "---|" * len(sides) + "---|")
    for i in range(len(QUESTIONS)):
        outs = {hashlib.sha256(o).hexdigest() for n in sides for _w, _c, o in got[(n, i)]}
        cells = [f"{statistics.median(w for w, _c, _o in got[(n, i)]):.2f} / "
                 f"{statistics.median(c for _w, c, _o in got[(n, i)]):.2f}" for n in sides]
        print(f"| q{i + 1} | " + " | ".join(cells) + f" | {'yes' if len(outs) == 1 else 'NO'} |")


if __name__ == "__main__":
    main()
