"""Stage 0+1 import benchmark (issue 2, issue 24 §2–3): throughput, peak RSS and vault size, as ratios to
`json.load` of the same file and to the export's size.

    python benchmarks/ingest.py            # 10k and 100k messages
    python benchmarks/ingest.py --full     # also a full default ingest (hash embedder) of the 10k export: its size
    python benchmarks/ingest.py --big      # also a ~1 GB export (peak RSS only; json.load of 1 GB is not run)

Every figure is measured in this run, in fresh processes, so the ratios compare like with like on a
noisy machine. CPU time (user+sys) is reported beside wall time: it is what other load disturbs least.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _harness import OUT, Measure, best, measure_code, measure_module  # noqa: E402

from kenning.bench.synth import write_export  # noqa: E402

JSON_LOAD = "import json, sys\nwith open(ARGS[0], 'rb') as f:\n    json.load(f)\n"
# Every default stage, with the hash embedder (no model download; the vector lane's size is the embed slice's).
FULL_INGEST = ("from kenning.api import Vault\nv = Vault.open(ARGS[1], overrides={'embeddings': {'backend': 'hash'}})\n"
               "v.ingest([ARGS[0]], as_of='2025-01-01T00:00:00Z')\nv.close()\n")
SIZES = {"10k": 500, "100k": 5000}        # conversations → ~20 messages each
BIG_CONVERSATIONS = 33000                 # ≈ 1 GB of conversations.json


def ingest(db: Path, src: Path) -> Measure:
    return measure_module("kenning", "ingest", str(src), "--db", str(db), "-q", "--stages", "0,1",
                          "--as-of", "2025-01-01T00:00:00Z")


def vault_bytes(db: Path) -> int:
    """The vault as it lies on disk: the file and any WAL left beside it."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def table_sizes(db: Path, top: int = 8) -> list[tuple[str, int]]:
    """The largest tables and indexes (SQLite's dbstat: pages each one occupies)."""
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return list(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT ?", (top,)))
    finally:
        conn.close()


# the vault's areas, for the full-vault size split (issue 24 §2): a table or index goes to the first area whose
# prefix it starts with (an index by its table's name), else "other"
AREAS = {"search": ("search_",), "vectors": ("vec_", "vector_", "embedding_cache"),
         "raw": ("messages", "message_parts", "conversations", "sources"),
         "intake": ("intake_", "extraction_audit", "pending_extraction")}


def area_sizes(db: Path) -> dict[str, int]:
    """Bytes per area (AREAS), every table and index counted once (dbstat; an index under its table)."""
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        out: dict[str, int] = {}
        for name, tbl, size in conn.execute(
                "SELECT d.name, COALESCE(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d "
                "LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY d.name"):
            area = next((a for a, pre in AREAS.items() if tbl.startswith(pre)), "other")
            out[area] = out.get(area, 0) + size
        return out
    finally:
        conn.close()


def fresh_ingest(db: Path, src: Path) -> Measure:
    for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        p.unlink(missing_ok=True)
    return ingest(db, src)


def bench_size(label: str, n: int, workdir: Path, repeat: int = 1) -> dict:
    src = workdir / f"synth-{label}.json"
    stats = write_export(src, n, seed=42)
    baseline = best(lambda: measure_code(JSON_LOAD, str(src)))
    db = workdir / f"{label}.db"
    # best of `repeat` first imports, each into a fresh vault (on a loaded machine one run can be unlucky)
    first = best(lambda: fresh_ingest(db, src), repeat)
    size, tables = vault_bytes(db), table_sizes(db)
    again = ingest(db, src)
    msgs = stats["messages"]
    return {
        "label": label, "messages": msgs, "mb": stats["bytes"] / 1e6, "src": src,
        "vault_mb": size / 1e6, "tables": tables,
        "json_load_wall": baseline.wall, "json_load_cpu": baseline.cpu, "json_load_rss": baseline.peak_rss_mb,
        "import_wall": first.wall, "import_cpu": first.cpu, "import_rss": first.peak_rss_mb,
        "reimport_wall": again.wall, "reimport_cpu": again.cpu,
        "msgs_per_s": msgs / first.wall,
    }


def bench_big(workdir: Path) -> dict:
    src = workdir / "synth-1gb.json"
    stats = write_export(src, BIG_CONVERSATIONS, seed=42)
    first = ingest(workdir / "big.db", src)
    return {"label": "1GB", "messages": stats["messages"], "mb": stats["bytes"] / 1e6, "import_wall": first.wall,
            "import_cpu": first.cpu, "import_rss": first.peak_rss_mb, "msgs_per_s": stats["messages"] / first.wall}


def bench_full(row: dict, workdir: Path) -> dict:
    db = workdir / f"{row['label']}-full.db"
    m = measure_code(FULL_INGEST, str(row["src"]), str(db))
    return {"vault_mb": vault_bytes(db) / 1e6, "tables": table_sizes(db, 12), "areas": area_sizes(db),
            "wall": m.wall, "cpu": m.cpu, "rss": m.peak_rss_mb}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(SIZES), help="exports to import: 10k, 100k (comma-separated)")
    ap.add_argument("--full", action="store_true",
                    help="also run every default stage (hash embedder) on the smallest export and report its size")
    ap.add_argument("--big", action="store_true", help="also import a ~1 GB export (several minutes)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="import each export this many times into a fresh vault and keep the best (default 1)")
    ap.add_argument("--keep", action="store_true", help="keep benchmarks/out/ingest afterwards")
    args = ap.parse_args()
    workdir = OUT / "ingest"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    rows = [bench_size(label, SIZES[label], workdir, args.repeat) for label in args.sizes.split(",")]
    print("| export | messages | MB | import msgs/s | import ÷ json.load (wall) | (CPU) | re-import ÷ import (wall) "
          "| (CPU) | peak RSS import / json.load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['label']} | {r['messages']:,} | {r['mb']:.0f} | {r['msgs_per_s']:,.0f} | "
              f"{r['import_wall'] / r['json_load_wall']:.1f}× | {r['import_cpu'] / r['json_load_cpu']:.1f}× | "
              f"{r['reimport_wall'] / r['import_wall']:.0%} | {r['reimport_cpu'] / r['import_cpu']:.0%} | "
              f"{r['import_rss']:.0f} MB / {r['json_load_rss']:.0f} MB |")
    print("\n| export | MB | vault after stages 0–1 | ÷ export | largest parts |")
    print("|---|---|---|---|---|")
    for r in rows:
        parts = ", ".join(f"{n} {b / 1e6:.1f}" for n, b in r["tables"][:4])
        print(f"| {r['label']} | {r['mb']:.1f} | {r['vault_mb']:.1f} MB | **{r['vault_mb'] / r['mb']:.2f}×** | {parts} |")
    if args.full:
        r = rows[0]
        f = bench_full(r, workdir)
        parts = ", ".join(f"{n} {b / 1e6:.1f}" for n, b in f["tables"])
        print(f"\nfull default ingest (hash embedder) of the {r['label']} export ({r['mb']:.1f} MB): {f['wall']:.0f} s wall, "
              f"{f['cpu']:.0f} s CPU, peak RSS {f['rss']:.0f} MB; vault {f['vault_mb']:.1f} MB = "
              f"**{f['vault_mb'] / r['mb']:.2f}× the export**; largest parts (MB): {parts}")
        print("by area (MB, tables with their indexes): " + ", ".join(
            f"{a} {b / 1e6:.1f} ({b / 1e6 / r['mb']:.2f}× the export)"
            for a, b in sorted(f["areas"].items(), key=lambda kv: -kv[1])))
    if args.big:
        b = bench_big(workdir)
        print(f"\n1 GB export: {b['messages']:,} messages, {b['mb']:.0f} MB; import {b['import_wall']:.0f} s wall, "
              f"{b['import_cpu']:.0f} s CPU, {b['msgs_per_s']:,.0f} msgs/s; **peak RSS {b['import_rss']:.0f} MB**")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
