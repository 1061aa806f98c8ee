"""One cold one-shot search in this (fresh) process, split into parts — what a CLI `kenning search` pays (R60).

    python benchmarks/cold_search.py --vault V --vectors hash --vocab locomo --query 0 [--baseline]

Prints one JSON line: the whole process (imports included), the first search (wall / CPU), its parts (the vector
mirror's load, the 1-bit codes, the search metadata DocMeta — the codes are built in the vector worker thread while
the main thread goes on, so the parts can overlap), the next search of the same question (what is left warm), the
load average and the search output's sha256 (compare two runs). ``--baseline`` puts back the pre-R60 loaders: every
row of ``all_vectors`` through ``_Mirror.upsert`` (``kenning.llm.index._rowwise_mirror``), the codes' centre from a
copy of the rows, and DocMeta read row by row in vid order — the baseline of ``run.py cold``.
"""

from __future__ import annotations

import time

T0, C0 = time.perf_counter(), time.process_time()

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--vault", required=True)
ap.add_argument("--vectors", default="hash", choices=["hash", "minilm"])
ap.add_argument("--vocab", default="locomo", choices=["topic", "locomo"])
ap.add_argument("--query", type=int, default=0, help="which of run.py's seeded questions")
ap.add_argument("--now", default="2023-12-31")
ap.add_argument("--baseline", action="store_true", help="the pre-R60 row-by-row loaders")
args = ap.parse_args()
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(1, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from kenning.api import Vault  # noqa: E402
from kenning.llm import index as ix  # noqa: E402
from kenning.retrieve import vectors as rv  # noqa: E402
from kenning.store.connection import read_snapshot  # noqa: E402

import run as bench  # noqa: E402  (its queries())


def rowwise_mirror(self, table):
    """VectorIndex._mirror before R60 (the row-by-row loader)."""
    key = ix._mirror_key(self.conn, table["table_name"])
    m = ix._MIRRORS.get(key)
    if m is not None and m.version == table["version"]:
        return m
    m = ix._MIRRORS[key] = ix._rowwise_mirror(self.conn, table)
    return m


def ensure_codes_copy(self):
    """_Mirror.ensure_codes before R60: the centre from a boolean-indexed copy of the rows, 64k-row blocks."""
    with self.lock:
        if self.codes is not None:
            return
        n = self.n
        live = self.matrix[:n][self.valid[:n]] if n else self.matrix[:0]
        self.center = live.mean(axis=0).astype(np.float32) if len(live) else np.zeros(self.dim, np.float32)
        self.codes = np.zeros(((self.dim + 63) // 64, len(self.vids)), dtype=np.uint64)
        for i in range(0, n, 65536):
            self.codes[:, i:min(n, i + 65536)] = self._pack(self.matrix[i:min(n, i + 65536)])


def doc_meta_rowwise(cls, conn, space, key):
    """DocMeta.load before R60: row by row, the rows sorted by vid."""
    return rv._rowwise_doc_meta(conn, space, key)


if args.baseline:
    ix.VectorIndex._mirror = rowwise_mirror
    ix._Mirror.ensure_codes = ensure_codes_copy
    rv.DocMeta.load = classmethod(doc_meta_rowwise)

PARTS: dict[str, list[float]] = {}


def timed(owner, name: str, label: str) -> None:
    f = getattr(owner, name)

    def g(*a, **k):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return f(*a, **k)
        finally:
            p = PARTS.setdefault(label, [0.0, 0.0])
            p[0] += time.perf_counter() - t
            p[1] += time.thread_time() - c

    setattr(owner, name, g)


timed(ix.VectorIndex, "_mirror", "mirror_load")
timed(ix._Mirror, "ensure_codes", "codes")
timed(rv.DocMeta, "load", "doc_meta")
q = bench.queries(args.query + 1, vocab=args.vocab)[args.query]
load = os.getloadavg()
t, c = time.perf_counter(), time.process_time()
v = Vault.open(args.vault, overrides=bench.vector_overrides(args.vectors))
out = v.search(q, now=args.now).as_dict()
first = (time.perf_counter() - t, time.process_time() - c)
total = (time.perf_counter() - T0, time.process_time() - C0)
t, c = time.perf_counter(), time.process_time()
v.search(q, now=args.now)
again = (time.perf_counter() - t, time.process_time() - c)
with read_snapshot(v.conn):
    vectors = int(v.conn.execute("SELECT COUNT(*) FROM vector_items").fetchone()[0])
print(json.dumps({
    "loader": "row-by-row (pre-R60)" if args.baseline else "bulk (R60)", "question": q, "vectors": vectors,
    "process_wall_s": round(total[0], 2), "process_cpu_s": round(total[1], 2),
    "first_search_wall_s": round(first[0], 2), "first_search_cpu_s": round(first[1], 2),
    "parts_wall_cpu_s": {k: [round(w, 2), round(x, 2)] for k, (w, x) in PARTS.items()},
    "next_search_wall_ms": round(again[0] * 1000, 1), "next_search_cpu_ms": round(again[1] * 1000, 1),
    "load_avg": [round(x, 2) for x in load], "load_avg_after": [round(x, 2) for x in os.getloadavg()],
    "output_sha256": hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()[:16]}), flush=True)
