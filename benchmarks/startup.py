"""Start-up (issue 24 §4): what a person waits for before the first line, each timing a fresh process.

    python benchmarks/run.py startup [--startup-reps 5] [--tmp DIR] [--startup-baseline ../main/src]
                                                      # (builds the 100k vault once, cached)
    python benchmarks/startup.py --build-only [--tmp DIR]                  # only the cached vault

Timed, interleaved (one round = one process of each kind, rounds repeated; medians reported), wall and CPU
(the child's rusage): ``python -c pass`` (the floor, the baseline of every ratio), ``kenning --help``,
``kenning search --help``, ``kenning status --json`` and a one-shot ``kenning search "…" --json`` on a 100k-message
vault with the vector lane on through the default query path (all-MiniLM-L6-v2 on onnxruntime encodes the
question). Plus, once each, ``python -X importtime`` of ``kenning --help`` and of the search: the heaviest modules
imported, and whether torch / sentence-transformers / transformers / numpy were among them.

The vault: ``kenning bench synth -n 5000 --seed 3`` (≈100k messages) through a full default ``Vault.ingest``, built
once under ``--tmp`` (default benchmarks/out/) and reused. Building embeds every message; to keep that to minutes,
the build (only the build) swaps MiniLM's encoder for the hash embedder at the same 384 dimensions, so the vault's
vector tables are MiniLM's (model id, dimension, one vector per text) and a search reads them exactly as it reads a
MiniLM-built vault — the question is encoded by the real model (decisions F5).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
CONVERSATIONS = 5000  # ≈ 20 messages each: the 100k-message vault
SEED = 3
AS_OF = "2024-06-01T00:00:00Z"
QUESTIONS = ["when did Caroline go to the pottery class?", "what did I decide about the marathon training plan?",
             "who moved to Lisbon last summer?"]
HEAVY = ("torch", "sentence_transformers", "transformers", "numpy", "onnxruntime", "tokenizers", "pydantic",
         "typer", "rich", "scipy", "sklearn", "matplotlib", "networkx", "dateparser")


def vault_dir(tmp: str | None) -> Path:
    d = Path(tmp) if tmp else ROOT / "benchmarks" / "out"
    d.mkdir(parents=True, exist_ok=True)
    return d


def build_vault(tmp: str | None) -> tuple[Path, dict[str, Any]]:
    """The cached 100k-message vault (built here when missing, in a child process so this one stays light)."""
    d = vault_dir(tmp)
    db = d / f"startup-{CONVERSATIONS}x{SEED}.db"
    meta = d / f"startup-{CONVERSATIONS}x{SEED}.json"
    if db.exists() and meta.exists():
        return db, json.loads(meta.read_text())
    code = f"import sys; sys.path.insert(0, {str(SRC)!r}); sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n" \
           f"import startup; startup._build({str(db)!r}, {str(meta)!r})"
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    return db, json.loads(meta.read_text())


def _build(db: str, meta: str) -> None:
    from kenning.api import Vault
    from kenning.bench.synth import write_export
    from kenning.llm import embed

    export = Path(db).with_suffix(".export.json")
    t0 = time.perf_counter()
    stats = write_export(export, CONVERSATIONS, SEED)
    hashed = embed.HashEmbedder(embed.MINILM_DIMENSION)
    # Building only (F5): stand-in vectors under MiniLM's model id; the measured searches encode with the model.
    embed.MiniLMEmbedder.embed = lambda self, texts: hashed.embed(texts)  # type: ignore[method-assign]
    t1 = time.perf_counter()
    with Vault.open(Path(db)) as v:
        runs = v.ingest([export], as_of=AS_OF)
        tables = v.status()["tables"]
    Path(meta).write_text(json.dumps({
        "export": str(export), "conversations": stats["conversations"], "messages": stats["messages"],
        "export_bytes": stats["bytes"], "vault_bytes": Path(db).stat().st_size,
        "synth_s": round(t1 - t0, 1), "ingest_s": round(time.perf_counter() - t1, 1),
        "stages": [r.stage for r in runs], "vectors": tables.get("vector_items"), "messages_rows": tables.get("messages"),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}, indent=1))


def _env(src: Path = SRC) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "COLUMNS": "80", "NO_COLOR": "1"}
    # PYTHONDONTWRITEBYTECODE (set in some shells and CI) would recompile every module on every start: an
    # installed Kenning has its .pyc files, so the warm-up round writes them here too (decisions F8)
    for k in ("KENNING_DB", "KENNING_CONFIG", "KENNING_LLM_BASE_URL", "KENNING_LLM_MODEL", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    return env


def run_once(argv: list[str], src: Path = SRC) -> dict[str, Any]:
    """One fresh process: wall seconds, CPU seconds (its rusage), exit code, stdout's sha256 prefix."""
    import hashlib

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=_env(src))
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.decode()[-2000:]}")
    return {"wall_s": wall, "cpu_s": cpu, "rc": proc.returncode, "out": hashlib.sha256(proc.stdout).hexdigest()[:12]}


def commands(db: Path) -> dict[str, list[str]]:
    py = sys.executable
    k = [py, "-m", "kenning"]
    return {
        "python -c pass": [py, "-c", "pass"],
        "kenning --help": k + ["--help"],
        "kenning search --help": k + ["search", "--help"],
        "kenning status --json": k + ["status", "--json", "--db", str(db)],
        **{f"kenning search (q{i + 1})": k + ["search", q, "--json", "--now", "2024-06-01", "--db", str(db)]
           for i, q in enumerate(QUESTIONS)},
    }


def import_profile(argv: list[str], top: int = 8) -> dict[str, Any]:
    """``python -X importtime``: the total, the heaviest top-level-ish modules (cumulative µs), heavy ones loaded."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, env=_env())
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "cumulative" in line:
            continue
        _, cum, raw = line[len("import time:"):].split("|")
        rows.append((int(cum), raw[1:].rstrip()))  # one space after "|", then two per level of nesting
    roots = [(c, n) for c, n in rows if not n.startswith(" ")]
    total = sum(c for c, _ in roots)
    names = {n.strip() for _, n in rows}
    return {"imports_s": round(total / 1e6, 3), "modules": len(names),
            "heaviest": [[n.strip(), round(c / 1e6, 3)] for c, n in sorted(roots, reverse=True)[:top]],
            "heavy_loaded": sorted(h for h in HEAVY if h in names)}


def bench_startup(reps: int = 5, tmp: str | None = None, baseline: str | None = None) -> dict[str, Any]:
    """Each command ``reps`` times, interleaved; with ``baseline`` (another checkout's ``src``, e.g. the main
    branch before this work) the Kenning commands run from it too, in the same rounds."""
    db, meta = build_vault(tmp)
    cmds = {name: (argv, SRC) for name, argv in commands(db).items()}
    if baseline:
        cmds.update({f"{name} [baseline]": (argv, Path(baseline)) for name, argv in commands(db).items()
                     if name.startswith("kenning")})
    for argv, src in cmds.values():  # one warm-up round: .pyc files written, page cache filled
        run_once(argv, src)
    samples: dict[str, list[dict]] = {name: [] for name in cmds}
    for _ in range(reps):
        for name, (argv, src) in cmds.items():
            samples[name].append(run_once(argv, src))
            print(json.dumps({"startup": name, **{k: round(v, 3) if isinstance(v, float) else v
                                                  for k, v in samples[name][-1].items()}}), flush=True)
    floor = statistics.median(s["wall_s"] for s in samples["python -c pass"])
    floor_cpu = statistics.median(s["cpu_s"] for s in samples["python -c pass"])
    table = {}
    for name, runs in samples.items():
        wall = statistics.median(r["wall_s"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        table[name] = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "wall_ratio_to_python": round(wall / floor, 1),
                       "cpu_ratio_to_python": round(cpu / max(floor_cpu, 1e-3), 1),
                       "same_output_every_run": len({r["out"] for r in runs}) == 1}
        base = f"{name} [baseline]"
        if base in samples:
            table[name]["same_output_as_baseline"] = {r["out"] for r in runs} == {r["out"] for r in samples[base]}
    searches = [table[n]["wall_s"] for n in table if n.startswith("kenning search (") and "[" not in n]
    all_cmds = commands(db)
    return {"vault": {**meta, "path": str(db)}, "reps": reps, "baseline": baseline, "load_avg": os.getloadavg(),
            "table": table,
            "goals": {"help_wall_s_le_0.3": table["kenning --help"]["wall_s"] <= 0.3,
                      "search_wall_s_le_1.5": max(searches) <= 1.5},
            "imports": {"kenning --help": import_profile(all_cmds["kenning --help"]),
                        "kenning search --help": import_profile(all_cmds["kenning search --help"]),
                        "kenning search": import_profile(all_cmds["kenning search (q1)"])}}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--startup-reps", type=int, default=5)
    ap.add_argument("--startup-baseline", default=None, help="another checkout's src/ to time beside this one")
    ap.add_argument("--build-only", action="store_true")
    a = ap.parse_args()
    if a.build_only:
        print(json.dumps(build_vault(a.tmp)[1], indent=1))
    else:
        print(json.dumps(bench_startup(a.startup_reps, a.tmp, a.startup_baseline), indent=1))
