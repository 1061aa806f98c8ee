"""`kenning ui` page latency on a big vault: every page type through a real server (`kenning ui` in its own
process on a loopback port), p50 / p95 over varied requests, and each URL's first view, next to the server's floor
(a static file from the same server, same run) as the baseline.

    PYTHONPATH=src python benchmarks/web_pages.py --vault /tmp/ui-bench/vault-100k.db --reps 3

The vault is reused when it exists; otherwise a 100k-message one is built (`kenning bench synth -n 5000`, then
every ingest stage with hash vectors, ~3–15 min). Target: every page ≤ 200 ms p95.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
AS_OF = "2025-01-01T00:00:00Z"
TARGET_MS = 200.0


def build(vault: Path) -> None:
    from kenning.api import Vault
    from kenning.bench.synth import write_export

    src = vault.with_suffix(".json")
    if not src.exists():
        write_export(src, 5000, 42)
    tmp = vault.with_suffix(".building.db")
    with Vault.open(tmp, overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([src], as_of=AS_OF)
    tmp.rename(vault)


def targets(vault: Path, n: int) -> dict[str, list[str]]:
    """Varied URLs per page type, read from the vault through store functions (most salient / newest first)."""
    from kenning.api import Vault
    from kenning.store import entities as esql
    from kenning.store import knowledge as ksql
    from kenning.store import web as web_sql

    with Vault.open(vault, readonly=True) as v:
        top = esql.list_entities(v.conn, "PERSON", n) + esql.list_entities(v.conn, "LOCATION", n // 2)
        ents = [e["canonical_name"] for e in top]
        # the nodes of the most salient entities (their pages also carry mentions and facts), then any others
        nodes = [f[0]["id"] for f in (ksql.find_nodes(v.conn, e) for e in ents) if f]
        nodes += [x["id"] for x in ksql.list_nodes(v.conn, limit=n) if x["id"] not in nodes]
        convs, total = web_sql.list_conversations(v.conn, limit=n)
    q = urllib.parse.quote
    words = ["garden", "running last winter", "what did my sister say about Leo", "trip to Lisbon", "new job",
             "doctor appointment", "birthday party", "the book I was reading", "moving flat", "learning Japanese"]
    return {
        "home": ["/"] * n,
        "search": [f"/search?q={q(w)}" for w in (words + ents)[:n]],
        "search (kind + as-of)": [f"/search?q={q(w)}&kind=message&as_of=2024-06-01" for w in words[:n]],
        "why": [f"/why?q={q(w)}" for w in (["where do I live?", "where do I work?"] + ents)[:n]],
        "why on a date": [f"/why?q={q('where do I live?')}&until=20{y}-0{m}-01" for y in (22, 23, 24)
                          for m in (1, 4, 7)][:n],
        "node": [f"/node/{i}" for i in nodes[:n]],
        "entity": [f"/entity/{e['entity_id']}" for e in top[:n]],
        "nodes": [f"/nodes?page={i}" for i in range(n)],
        "self": ["/self", "/self?stream=identity", "/self?status=core", "/self?stream=state"] * (n // 4 + 1),
        "timeline (you)": [f"/timeline?page={i}" for i in range(-1, 3)] * (n // 4 + 1),
        "conversations": [f"/conversations?page={i}" for i in range(n)],
        "conversation": [f"/conversation/{c['conversation_id']}" for c in convs],
        "review": ["/review"] * n,
    }, [f"/timeline?entity={q(e)}" for e in ents[:n]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def get(self, path: str) -> tuple[float, int, bytes]:
        t = time.perf_counter()
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        body = r.read()
        return (time.perf_counter() - t) * 1000, r.status, body


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, default=Path("/tmp/ui-bench/vault-100k.db"))
    ap.add_argument("--n", type=int, default=12, help="distinct URLs per page type")
    ap.add_argument("--reps", type=int, default=3, help="views of each URL (the first is its first view)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    if not args.vault.exists():
        args.vault.parent.mkdir(parents=True, exist_ok=True)
        build(args.vault)
    pages, entity_timelines = targets(args.vault, args.n)
    port = free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as cfg:
        cfg.write("embeddings:\n  backend: hash\n")      # the vault's vectors were made by the hash embedder
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "ui", "--db", str(args.vault), "--port", str(port),
                             "--config", cfg.name, "--as-of", AS_OF], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        c = None
        for _ in range(600):
            try:
                c = Client(port)
                c.get("/static/kenning.css")
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(3)        # the server's warm-up (vector mirror, embedder) runs at startup
        base = [c.get("/static/kenning.css")[0] for _ in range(200)]
        out = {"vault": str(args.vault), "baseline_static_ms": {"p50": round(pct(base, 50), 2),
                                                                "p95": round(pct(base, 95), 2)}, "pages": {}}
        for name, urls in pages.items():
            first, all_ = [], []
            for u in urls:
                for rep in range(args.reps):
                    ms, status, _ = c.get(u)
                    if status != 200:
                        raise SystemExit(f"{u}: HTTP {status}")
                    all_.append(ms)
                    if rep == 0:
                        first.append(ms)
            out["pages"][name] = {"n": len(all_), "p50": round(pct(all_, 50), 1), "p95": round(pct(all_, 95), 1),
                                  "first_p95": round(pct(first, 95), 1), "max": round(max(all_), 1)}
            print(name, out["pages"][name], flush=True)
        # an entity's timeline: the page answers at once ("computing…") while the worker builds it; then cached
        first, ready, later = [], [], []
        for u in entity_timelines:
            ms, status, body = c.get(u)
            first.append(ms)
            t0 = time.perf_counter()
            while b'id="computing"' in body:
                time.sleep(0.05)
                ms, status, body = c.get(u)
            ready.append((time.perf_counter() - t0) * 1000 + first[-1])
            later += [c.get(u)[0] for _ in range(args.reps)]
        out["pages"]["timeline (entity)"] = {"n": len(first) + len(later), "p50": round(pct(first + later, 50), 1),
                                             "p95": round(pct(first + later, 95), 1),
                                             "first_p95": round(pct(first, 95), 1), "max": round(max(first + later), 1),
                                             "ready_p50": round(pct(ready, 50), 1),
                                             "ready_p95": round(pct(ready, 95), 1)}
        print("timeline (entity)", out["pages"]["timeline (entity)"], flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
        os.unlink(cfg.name)
    b95 = out["baseline_static_ms"]["p95"]
    print(f"\nbaseline (static file from the same server): p50 {out['baseline_static_ms']['p50']} ms, p95 {b95} ms")
    print("| page | requests | p50 ms | p95 ms | first view p95 ms | max ms | p95 / static p95 | ≤ 200 ms p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in out["pages"].items():
        print(f"| {name} | {r['n']} | {r['p50']} | {r['p95']} | {r['first_p95']} | {r['max']} | "
              f"{r['p95'] / max(b95, 1e-6):.0f}× | {'yes' if r['p95'] <= TARGET_MS else '**no**'} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
