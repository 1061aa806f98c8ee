"""Two vaults side by side, table by table (issue 24 §2): SQLite's dbstat bytes per table and index, their totals,
the difference — e.g. a vault before and after an upgrade, or built by two versions from the same export.

    python benchmarks/vault_tables.py BEFORE.db AFTER.db [--top 40]

Both are opened read-only (a vault another version made is not upgraded)."""

from __future__ import annotations

import argparse

import apsw


def sizes(path: str) -> dict[str, int]:
    conn = apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        return dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--top", type=int, default=40, help="rows: the largest tables/indexes of either vault")
    args = ap.parse_args()
    a, b = sizes(args.before), sizes(args.after)
    print(f"| table or index | before MB | after MB | change MB |\n|---|---|---|---|")
    print(f"| **total** | {sum(a.values()) / 1e6:.1f} | {sum(b.values()) / 1e6:.1f} | "
          f"{(sum(b.values()) - sum(a.values())) / 1e6:+.1f} |")
    for n in sorted(set(a) | set(b), key=lambda n: -max(a.get(n, 0), b.get(n, 0)))[:args.top]:
        print(f"| {n} | {a.get(n, 0) / 1e6:.1f} | {b.get(n, 0) / 1e6:.1f} | {(b.get(n, 0) - a.get(n, 0)) / 1e6:+.1f} |")


if __name__ == "__main__":
    main()
