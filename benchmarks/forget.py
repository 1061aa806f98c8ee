"""`kenning forget` benchmark (issue 23 §1): how long forgetting one conversation takes in a full vault, as ratios
to baselines measured in the same run.

    python benchmarks/forget.py --conversations 300

A synthetic export goes through every default stage (hash embeddings, no model); then, on copies of that vault:
the preview of forgetting one conversation (the removal run and rolled back), the removal applied without the
file rewrite, and the file rewrite (secure_delete + VACUUM + WAL truncate). Baselines: a plain `VACUUM` of the same
vault, and the import itself. Wall and CPU time (process CPU: what other load disturbs least)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.bench.synth import write_export  # noqa: E402
from kenning.forget import forget  # noqa: E402
from kenning.forget.apply import scrub_file  # noqa: E402

HASH = {"embeddings": {"backend": "hash"}}


def timed(fn) -> tuple[float, float, object]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def copy(src: Path, dst: Path) -> Path:
    for suffix in ("", "-wal"):
        p = Path(str(src) + suffix)
        if p.exists():
            shutil.copy2(p, str(dst) + suffix)
    return dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        export = tmp / "synth.json"
        stats = write_export(export, args.conversations, seed=7)
        base = tmp / "base.db"
        with Vault.open(base, overrides=HASH) as v:
            ingest_w, ingest_c, _ = timed(lambda: v.ingest([export], as_of="2025-01-01T00:00:00Z"))
            v.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            target = v.conn.execute("SELECT conversation_id FROM conversations ORDER BY conversation_id LIMIT 1 "
                                    "OFFSET ?", (args.conversations // 2,)).fetchone()[0]
        size_mb = base.stat().st_size / 1e6
        res: dict = {"conversations": args.conversations, "messages": stats["messages"], "vault_mb": round(size_mb, 1),
                     "ingest_wall_s": round(ingest_w, 2), "ingest_cpu_s": round(ingest_c, 2)}
        with Vault.open(copy(base, tmp / "vac.db"), overrides=HASH) as v:
            w, c, _ = timed(lambda: v.conn.execute("VACUUM"))
        res.update(vacuum_wall_s=round(w, 3), vacuum_cpu_s=round(c, 3))
        with Vault.open(copy(base, tmp / "p.db"), overrides=HASH) as v:
            w, c, rep = timed(lambda: forget(v.conn, v.config, "conversation", target))
        res.update(preview_wall_s=round(w, 3), preview_cpu_s=round(c, 3), rows=sum(rep.removed.values()))
        with Vault.open(copy(base, tmp / "a.db"), overrides=HASH) as v:
            w, c, _ = timed(lambda: forget(v.conn, v.config, "conversation", target, apply=True, vacuum=False))
            res.update(apply_wall_s=round(w, 3), apply_cpu_s=round(c, 3))
            w, c, _ = timed(lambda: scrub_file(v.conn))
            res.update(scrub_wall_s=round(w, 3), scrub_cpu_s=round(c, 3))
        res["apply_vs_vacuum_cpu"] = round(res["apply_cpu_s"] / max(res["vacuum_cpu_s"], 1e-6), 2)
        res["apply_plus_scrub_vs_ingest_cpu"] = round((res["apply_cpu_s"] + res["scrub_cpu_s"])
                                                      / res["ingest_cpu_s"], 3)
        print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
