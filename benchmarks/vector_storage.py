"""float32 vs int8 vec0 storage at scale (issue 24 §2, decisions X3): bytes, the mirror's cold load, sqlite-vec's
KNN and the mirror's search, and how far int8's top 10 agrees with float32's — both tables built in one scratch
vault from the same stored vectors of an existing vault, measured alternately in one process (CPU time, min of
--repeat passes).

    python benchmarks/vector_storage.py --vault /tmp/v100k.db --queries 20 --repeat 3

Queries are stored vectors of items picked at random (seeded), their own row excluded from the overlap; one vector per
distinct text is kept (exact ties say nothing about the storage).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(1, str(HERE))

import apsw  # noqa: E402
import numpy as np  # noqa: E402

from _harness import OUT  # noqa: E402
from kenning.llm import index as ix  # noqa: E402
from kenning.store import vectors as vsql  # noqa: E402
from kenning.store.connection import _load_sqlite_vec  # noqa: E402


def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, help="a vault with a float32 active table (read only)")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    src = apsw.Connection(f"file:{args.vault}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    _load_sqlite_vec(src)
    table = src.execute("SELECT table_name, dimension FROM vector_tables WHERE status='active'").fetchone()
    name, dim = table[0], int(table[1])
    every = src.execute(f"SELECT v.rowid, i.space, i.kind, v.embedding, i.text_sha256 FROM {name} v "
                        f"JOIN vector_items i ON i.vid = v.rowid ORDER BY v.rowid").fetchall()
    src.close()
    # one vector per distinct text: identical texts tie exactly, and which of many tied rows make a top 10 says
    # nothing about the storage (the synthetic vault repeats half its texts)
    seen: set[str] = set()
    rows = [r[:4] for r in every if not (r[4] in seen or seen.add(r[4]))]
    work = OUT / "vector_storage"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    conn = apsw.Connection(str(work / "v.db"))
    _load_sqlite_vec(conn)
    conn.execute("CREATE TABLE vector_items(vid INTEGER PRIMARY KEY, space TEXT, item_id TEXT, kind TEXT)")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO vector_items VALUES (?,?,?,?)", [(r[0], r[1], str(r[0]), r[2]) for r in rows])
    tables = {}
    for gen, element in ((1, "float32"), (2, "int8")):
        t = {"table_name": f"vec_items_g{gen}", "dimension": dim, "element": element}
        conn.execute(f"CREATE VIRTUAL TABLE {t['table_name']} USING vec0(space TEXT PARTITION KEY, kind TEXT, "
                     f"embedding {vsql.ELEMENTS[element]}[{dim}] distance_metric=cosine)")
        for a in range(0, len(rows), 4096):
            part = rows[a:a + 4096]
            blobs, _ = ix._stored_form(t, np.stack([np.frombuffer(r[3], "<f4") for r in part]))
            vsql.write_vectors(conn, t["table_name"], [(r[0], r[1], r[2], b) for r, b in zip(part, blobs)], element)
        tables[element] = t
    conn.execute("COMMIT")
    sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    print(f"{len(rows):,} vectors of {dim} dimensions (one per distinct text of {len(every):,}) from {args.vault}")
    print("\n| | float32 | int8 | int8 ÷ float32 |\n|---|---|---|---|")
    mb = {e: sum(b for n, b in sizes.items() if n.startswith(t["table_name"])) / 1e6 for e, t in tables.items()}
    print(f"| vec0 table + shadow tables (MB) | {mb['float32']:.1f} | {mb['int8']:.1f} | "
          f"{mb['int8'] / mb['float32']:.2f} |")
    rng = np.random.default_rng(7)
    picks = rng.choice(len(rows), size=args.queries, replace=False)
    queries = [(rows[i][0], np.frombuffer(rows[i][3], "<f4")) for i in picks]
    load = {e: [] for e in tables}
    knn = {e: [] for e in tables}
    mir = {e: [] for e in tables}
    tops: dict[str, list] = {e: [] for e in tables}
    for rep in range(args.repeat):
        for e, t in tables.items():
            s, (vids, matrix) = cpu(lambda: ix._read_vectors(conn, t))
            load[e].append(s)
            m = ix._Mirror.filled(dim, "v", vids, matrix, ix._item_columns(conn))
            s, res = cpu(lambda: [m.search(q, 11, None, None, None) for _, q in queries])
            mir[e].append(s / len(queries))
            s, _ = cpu(lambda: [vsql.knn(conn, t["table_name"], ix._query_blob(t, q), 11, element=e)
                                for _, q in queries])
            knn[e].append(s / len(queries))
            if rep == 0:
                tops[e] = [[h.vid for h in r if h.vid != own][:10] for r, (own, _) in zip(res, queries)]
            del m, matrix
    f = {k: min(v) for k, v in load.items()}
    print(f"| mirror cold load, CPU s | {f['float32']:.3f} | {f['int8']:.3f} | {f['int8'] / f['float32']:.2f} |")
    k = {e: min(v) * 1000 for e, v in knn.items()}
    print(f"| sqlite-vec KNN k=11, CPU ms/query | {k['float32']:.1f} | {k['int8']:.1f} | {k['int8'] / k['float32']:.2f} |")
    m = {e: min(v) * 1000 for e, v in mir.items()}
    print(f"| mirror search k=11, CPU ms/query | {m['float32']:.2f} | {m['int8']:.2f} | {m['int8'] / m['float32']:.2f} |")
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(tops["float32"], tops["int8"])])
    same1 = np.mean([a[0] == b[0] for a, b in zip(tops["float32"], tops["int8"])])
    print(f"\nint8's top 10 vs float32's (mirror, {args.queries} queries): overlap {overlap:.3f}, same top hit "
          f"{same1:.2f}")
    conn.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
