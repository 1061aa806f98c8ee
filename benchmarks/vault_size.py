"""The full default vault's size ÷ its export, per table, and the vector lane's share (issue 24 §2; decisions X1–X5).

    python benchmarks/vault_size.py                          # full default ingest (hash embedder) of a 10k export
    python benchmarks/vault_size.py --compare /work/main     # … and the same with another checkout's code, same run
    python benchmarks/vault_size.py --upgrade VAULT --export EXPORT   # a copy of an existing vault, upgraded
                                                             # (migrations + vector conversion), then VACUUMed

The ingest runs in a fresh process per tree with `PYTHONPATH=<tree>/src`. ``--upgrade`` measures a vault an older
Kenning built (e.g. a 100k MiniLM one) before and after this code's upgrade — the vector lane's bytes at 100k without
encoding 100k texts again. Sizes are SQLite's dbstat pages per table/index after a VACUUM (what a vault settles to).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _harness import OUT, ROOT, measure_code  # noqa: E402

FULL_INGEST = ("from kenning.api import Vault\nv = Vault.open(ARGS[1], overrides={'embeddings': {'backend': ARGS[2]}})\n"
               "v.ingest([ARGS[0]], as_of='2025-01-01T00:00:00Z')\nv.close()\n")
UPGRADE = ("from kenning.config import load_config\nfrom kenning.llm.index import VectorIndex\n"
           "from kenning.store.connection import open_store, vacuum\n"
           "conn = open_store(ARGS[0])\nVectorIndex(conn, load_config()).ensure_active()\nvacuum(conn)\nconn.close()\n")
VACUUM = "from kenning.store.connection import open_store, vacuum\nc = open_store(ARGS[0])\nvacuum(c)\nc.close()\n"


def vector_lane(name: str) -> bool:
    """The vector lane's tables and indexes: the items, the vec0 tables and their shadow tables, the cache."""
    return (name.startswith(("vector_items", "idx_vector_items", "sqlite_autoindex_vector_items", "vec_items_g",
                             "embedding_cache", "sqlite_autoindex_embedding_cache", "vector_tables", "vector_state")))


def sizes(db: Path) -> list[tuple[str, int]]:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return list(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"))
    finally:
        conn.close()


def report(label: str, db: Path, export_mb: float, top: int) -> dict:
    parts = sizes(db)
    total = db.stat().st_size / 1e6
    lane = sum(b for n, b in parts if vector_lane(n)) / 1e6
    lane_parts = [(n, b) for n, b in parts if vector_lane(n)]
    print(f"\n### {label}\nvault {total:.1f} MB = **{total / export_mb:.2f}× the export** ({export_mb:.1f} MB); "
          f"vector lane {lane:.1f} MB ({lane / total:.0%})")
    print("\n| table / index | MB |\n|---|---|")
    for n, b in parts[:top]:
        print(f"| {n} | {b / 1e6:.1f} |")
    print("\nvector lane: " + ", ".join(f"{n} {b / 1e6:.1f}" for n, b in lane_parts if b >= 50_000))
    return {"label": label, "mb": total, "lane_mb": lane}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=500, help="synthetic conversations (~20 messages each)")
    ap.add_argument("--embedder", default="hash", choices=["hash", "minilm"])
    ap.add_argument("--compare", type=Path, help="another checkout (its src/ is used) measured in the same run")
    ap.add_argument("--upgrade", type=Path, help="measure a copy of this vault before and after the upgrade")
    ap.add_argument("--export", type=Path, help="the export the --upgrade vault was built from (for the ratio)")
    ap.add_argument("--top", type=int, default=14, help="tables listed")
    args = ap.parse_args()
    workdir = OUT / "vault_size"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    try:
        if args.upgrade:
            if not args.export:
                ap.error("--upgrade needs --export (the ratio's denominator)")
            export_mb = args.export.stat().st_size / 1e6
            db = workdir / "upgraded.db"
            shutil.copyfile(args.upgrade, db)
            report(f"{args.upgrade} as given", db, export_mb, args.top)
            m = measure_code(UPGRADE, str(db))
            report(f"after this tree's upgrade + VACUUM ({m.wall:.0f} s wall, {m.cpu:.0f} s CPU, "
                   f"peak RSS {m.peak_rss_mb:.0f} MB)", db, export_mb, args.top)
            return
        from kenning.bench.synth import write_export

        src = workdir / "synth.json"
        stats = write_export(src, args.conversations, seed=42)
        export_mb = stats["bytes"] / 1e6
        trees = [("this tree", ROOT)] + ([(f"{args.compare}", args.compare)] if args.compare else [])
        print(f"export: {args.conversations} conversations, {stats['messages']:,} messages, {export_mb:.1f} MB; "
              f"full default ingest with the {args.embedder} embedder, then VACUUM")
        for label, tree in trees:
            db = workdir / f"{len(label)}-{tree.name}.db"
            env = {"PYTHONPATH": str(tree / "src")}
            m = measure_code(FULL_INGEST, str(src), str(db), args.embedder, env=env)
            measure_code(VACUUM, str(db), env=env)
            report(f"{label} ({m.wall:.0f} s wall, {m.cpu:.0f} s CPU)", db, export_mb, args.top)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
