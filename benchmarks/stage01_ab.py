"""Stages 0+1 CPU of two source trees, interleaved, beside `json.load` of the same export (issue 24 §3, J1–J9).

    python benchmarks/stage01_ab.py --base /path/to/other/checkout/src [--messages 100k] [--rounds 2]

On a loaded machine one process's CPU time moves with the load; running the two trees (and the `json.load`
baseline) in alternation, each in a fresh process, compares them under the same conditions. Each import runs
`Vault.ingest(stages="0,1")` into a fresh vault and reports the CPU time of that call only (no interpreter start-up,
no imports), so the figure is the stages' own work.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _harness import OUT, measure_code  # noqa: E402

from kenning.bench.synth import write_export  # noqa: E402

HERE = Path(__file__).resolve().parents[1] / "src"
JSON_LOAD = "import json, sys\nwith open(ARGS[0], 'rb') as f:\n    json.load(f)\n"
STAGES = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from kenning.api import Vault
v = Vault.open(sys.argv[3])
t = time.process_time()
v.ingest([sys.argv[2]], as_of="2025-01-01T00:00:00Z", stages="0,1")
print(json.dumps({"cpu": time.process_time() - t}))
v.close()
"""
SIZES = {"10k": 500, "100k": 5000}


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the tree comes from argv[1] alone
    env["HF_HUB_OFFLINE"] = "1"
    return env


def stages_cpu(src_root: Path, export: Path, db: Path) -> float:
    for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        p.unlink(missing_ok=True)
    out = subprocess.run([sys.executable, "-c", STAGES, str(src_root), str(export), str(db)], capture_output=True,
                         text=True, env=_env(), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["cpu"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the other tree's src/ directory (e.g. a checkout of main)")
    ap.add_argument("--messages", default="100k", choices=sorted(SIZES))
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    workdir = OUT / "stage01_ab"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    export = workdir / f"synth-{args.messages}.json"
    write_export(export, SIZES[args.messages], seed=42)
    trees = {"base": Path(args.base).resolve(), "this": HERE}
    runs: dict[str, list[float]] = {"base": [], "this": [], "json.load": []}
    for _ in range(args.rounds):
        for name, root in trees.items():
            runs[name].append(stages_cpu(root, export, workdir / f"{name}.db"))
        runs["json.load"].append(measure_code(JSON_LOAD, str(export)).cpu)
    base = min(runs["json.load"])
    print(f"| {args.messages} export | stages 0+1 CPU, each round (s) | best | ÷ json.load CPU ({base:.2f} s) |")
    print("|---|---|---|---|")
    for name in ("base", "this"):
        print(f"| {name} | {', '.join(f'{x:.2f}' for x in runs[name])} | {min(runs[name]):.2f} | "
              f"{min(runs[name]) / base:.1f}× |")
    print(f"\nthis ÷ base (best of each): {min(runs['this']) / min(runs['base']):.2f}")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
