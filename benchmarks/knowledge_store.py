"""DOC72 node store speed (issue 17 §12): commits per second through the single writer, and node lookup by id and
by alias at N nodes, each beside a bare-SQLite baseline measured in the same run (ratios, not absolutes).

    python benchmarks/knowledge_store.py --nodes 100000 [--commits 2000] [--lookups 2000]

Goals: writer ≥ 2,000 commits/s; lookup p95 ≤ 3 ms (DOC72 §43 ceiling 10 ms)."""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.config import load_config  # noqa: E402
from kenning.knowledge.eventlog import export_pending  # noqa: E402
from kenning.knowledge.ops import AliasIn, CreateNode, KnowledgeWrite, ProvenanceIn  # noqa: E402
from kenning.knowledge.writer import KnowledgeWriter  # noqa: E402
from kenning.pipeline.clock import Clock  # noqa: E402
from kenning.store import knowledge as ksql  # noqa: E402
from kenning.store.connection import open_store, write_scope  # noqa: E402

T = "2026-03-01T00:00:00.000Z"


def _req(i: int) -> KnowledgeWrite:
    name = f"Person {i:07d}"
    return KnowledgeWrite(source_event="bench", change_summary=f"add {name}", ops=[CreateNode(
        node_kind="world_entity", canonical_name=name, payload={"entity_type": "person",
                                                               "description": f"someone met in {i % 97}"},
        aliases=(AliasIn(alias=f"p{i}"),), provenance=(ProvenanceIn(
            entry_type="conversation_mention", message_id=f"m{i}", char_start=0, char_end=len(name),
            verbatim_excerpt=name, evidence_event="learned_from_chat", created_at=T),))])


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def fill(conn, w: KnowledgeWriter, start: int, stop: int, batch: int = 500) -> None:
    for lo in range(start, stop, batch):
        with write_scope(conn):
            for i in range(lo, min(stop, lo + batch)):
                w.write(_req(i))


def bare_baseline(path: Path, n: int, commits: int, lookups: int) -> dict[str, float]:
    """The floor: one plain row per transaction into an indexed table, and a primary-key select."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE t(id TEXT PRIMARY KEY, name TEXT, payload TEXT)")
    conn.execute("CREATE INDEX t_name ON t(name)")
    with conn:
        conn.executemany("INSERT INTO t VALUES (?,?,?)", ((f"id{i}", f"p{i}", "{}") for i in range(n)))
    t0 = time.perf_counter()
    for i in range(n, n + commits):
        with conn:
            conn.execute("INSERT INTO t VALUES (?,?,?)", (f"id{i}", f"p{i}", '{"entity_type":"person"}'))
    rate = commits / (time.perf_counter() - t0)
    rng = random.Random(5)
    lat = []
    for _ in range(lookups):
        k = f"id{rng.randrange(n)}"
        t1 = time.perf_counter()
        conn.execute("SELECT * FROM t WHERE id=?", (k,)).fetchall()
        lat.append((time.perf_counter() - t1) * 1000)
    conn.close()
    return {"commits_per_s": rate, "lookup_p50_ms": pct(lat, 50), "lookup_p95_ms": pct(lat, 95)}


def run(n: int, commits: int, lookups: int, tmp: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        cfg = load_config(overrides={"knowledge": {"store": {"event_log": "off"}}})
        conn = open_store(Path(d) / "k.db")
        w = KnowledgeWriter(conn, cfg, clock=Clock(T))
        t0 = time.perf_counter()
        fill(conn, w, 0, n)
        fill_s = time.perf_counter() - t0
        # one transaction per commit, as a person's or an agent's single write runs
        t0 = time.perf_counter()
        for i in range(n, n + commits):
            w.write(_req(i))
        writer_rate = commits / (time.perf_counter() - t0)
        # the same with the event-log export after each commit (the default)
        cfg_log = load_config()
        t0 = time.perf_counter()
        export_pending(conn, cfg_log)  # the log catches up with the fill first: not part of the timed writes
        catch_up_s = time.perf_counter() - t0
        wl = KnowledgeWriter(conn, cfg_log, clock=Clock(T))
        t0 = time.perf_counter()
        for i in range(n + commits, n + 2 * commits):
            wl.write(_req(i))
        logged_rate = commits / (time.perf_counter() - t0)
        rng = random.Random(5)
        ids = [r["id"] for r in ksql.list_nodes(conn, limit=n + 2 * commits)]
        by_id, by_alias = [], []
        for _ in range(lookups):
            nid = ids[rng.randrange(len(ids))]
            t1 = time.perf_counter()
            ksql.get_node(conn, nid)
            by_id.append((time.perf_counter() - t1) * 1000)
            alias = f"p{rng.randrange(n)}"
            t1 = time.perf_counter()
            found = ksql.find_nodes(conn, alias)
            by_alias.append((time.perf_counter() - t1) * 1000)
            assert found, alias
        conn.close()
        base = bare_baseline(Path(d) / "bare.db", n, commits, lookups)
    res = {
        "nodes": n, "fill_s": round(fill_s, 1), "fill_nodes_per_s": round(n / fill_s),
        "writer_commits_per_s": round(writer_rate), "log_catch_up_s": round(catch_up_s, 1), "writer_with_log_commits_per_s": round(logged_rate),
        "bare_inserts_per_s": round(base["commits_per_s"]),
        "writer_vs_bare": round(base["commits_per_s"] / writer_rate, 2),
        "lookup_id_p50_ms": round(pct(by_id, 50), 4), "lookup_id_p95_ms": round(pct(by_id, 95), 4),
        "lookup_alias_p50_ms": round(pct(by_alias, 50), 4), "lookup_alias_p95_ms": round(pct(by_alias, 95), 4),
        "bare_lookup_p50_ms": round(base["lookup_p50_ms"], 4), "bare_lookup_p95_ms": round(base["lookup_p95_ms"], 4),
    }
    res["lookup_alias_vs_bare_p95"] = round(res["lookup_alias_p95_ms"] / max(res["bare_lookup_p95_ms"], 1e-6), 1)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--lookups", type=int, default=2000)
    ap.add_argument("--tmp", default=None)
    a = ap.parse_args()
    res = run(a.nodes, a.commits, a.lookups, a.tmp)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
