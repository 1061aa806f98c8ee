"""Belief-ledger benchmarks (seed 002 / issue 8 targets).

1. `why` p95 on a synthetic vault of N beliefs (default 1,000,000), reported next to — and as a ratio to — a
   bare primary-key lookup on the same table measured in the same run. Target: why p95 <= 50 ms.
2. `beliefs verify` throughput: every quote anchor re-hashed against its live raw file. Target: >= 5,000 quotes/s.

    PYTHONPATH=src python benchmarks/beliefs.py [--beliefs 1000000] [--queries 400] [--rebuild]

The synthetic vault (and its raw files) is cached under benchmarks/out/ and rebuilt with --rebuild.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.beliefs.ledger import jarr  # noqa: E402
from kenning.beliefs.quotes import quote_hash  # noqa: E402
from kenning.pipeline.clock import Clock  # noqa: E402
from kenning.pipeline.runner import run_stage  # noqa: E402
from kenning.store import beliefs as sql  # noqa: E402

WS = "bench"
CHAIN = 4            # beliefs per subject: 3 superseded ancestors, 1 current
TOPICS = 1000
PER_FILE = 500       # quotes per raw file
PER_PAGE = 100       # beliefs per wiki page document
CITIES = ["Lisbon", "Oslo", "Quito", "Hanoi", "Accra", "Perth", "Lima", "Riga", "Dakar", "Turin"]


def sentence(i: int) -> str:
    return f"Record {i}: the widget w{i} ships from {CITIES[i % 10]} with {i % 97} parts."


def ts(day: int) -> str:
    return f"20{20 + day // 365:02d}-{1 + (day % 365) // 31:02d}-{1 + (day % 31) % 28:02d}T00:00:00.000Z"


class SynthBeliefs:
    """One stage run that bulk-writes N beliefs through the store functions."""

    name, title = "bench-synth", "synthetic belief ledger"

    def __init__(self, n: int, root: Path):
        self.n, self.root = n, root

    def run(self, ctx):
        conn, n, root = ctx.conn, self.n, self.root
        sql.insert_workspace(conn, WS, str(root), ctx.started_at_utc, ctx.run_id)
        sql.defer_foreign_keys(conn)
        raw_dir = root / "raw" / "synth"
        raw_dir.mkdir(parents=True, exist_ok=True)
        files = (n + PER_FILE - 1) // PER_FILE
        offsets: list[tuple[int, int]] = []
        for f in range(files):
            text, pos = [], 0
            for i in range(f * PER_FILE, min(n, (f + 1) * PER_FILE)):
                s = sentence(i)
                offsets.append((pos, pos + len(s)))
                text.append(s)
                pos += len(s) + 1
            (raw_dir / f"f{f:05d}.md").write_text("\n".join(text) + "\n", encoding="utf-8")
        doc = lambda kind, path: ctx.ids.make("document", WS, kind, path)  # noqa: E731
        docs = [{"id": doc("raw_source", f"raw/synth/f{f:05d}.md"), "kind": "raw_source",
                 "path": f"raw/synth/f{f:05d}.md"} for f in range(files)]
        docs += [{"id": doc("wiki_page", f"wiki/p{p:06d}.md"), "kind": "wiki_page", "path": f"wiki/p{p:06d}.md"}
                 for p in range((n + PER_PAGE - 1) // PER_PAGE)]
        for d in docs:
            sql.insert_document(conn, {**d, "workspace": WS, "title": None, "sha256": None, "size_bytes": None,
                                       "conversation_id": None, "created_at": ctx.started_at_utc,
                                       "first_run_id": ctx.run_id, "last_changed_run_id": ctx.run_id})
        batch_p, batch_b, links = [], [], []
        for i in range(n):
            f, page = i // PER_FILE, i // PER_PAGE
            subj, pos = i // CHAIN, i % CHAIN
            start, end = offsets[i]
            pid = f"prov-{i}"
            batch_p.append({"id": pid, "workspace": WS, "document_id": docs[files + page]["id"], "footnote_key": "1",
                            "source_kind": "raw_file", "raw_path": f"raw/synth/f{f:05d}.md",
                            "raw_document_id": docs[f]["id"], "conversation_id": None, "message_id": None,
                            "char_start": start, "char_end": end, "page_hint": None, "quote": sentence(i),
                            "quote_hash": quote_hash(sentence(i))})
            last = pos == CHAIN - 1 or i == n - 1
            batch_b.append({
                "belief_id": f"b-{i:07d}", "workspace": WS,
                "statement": f"Widget w{i} ships from {CITIES[i % 10]} (subject s{subj}, revision {pos}).",
                "topic": f"topic-{subj % TOPICS}", "subject": f"widget family s{subj}", "predicate": "ships_from",
                "object": CITIES[i % 10], "wiki_document_id": docs[files + page]["id"], "wiki_section_anchor": "#",
                "footnote_ids": '["1"]', "provenance_ids": jarr([pid]), "asserted_at": ts(pos * 90 + subj % 60),
                "asserted_in_run": ctx.run_id, "superseded_at": None if last else ts((pos + 1) * 90 + subj % 60),
                "superseded_by_belief_id": None if last else f"b-{i + 1:07d}",
                "superseded_in_run": None if last else ctx.run_id,
                "supersession_reason": None if last else "contradicted_by_new_source",
                "source_valid_from": None, "source_valid_to": None, "supporting_count": 1,
                "contradicting_belief_ids": None, "confidence_hint": "single_source", "created_at": ctx.started_at_utc,
                "recorded_at": ctx.started_at_utc,
                "superseded_recorded_at": None if last else ctx.started_at_utc})
            links.append((f"b-{i:07d}", pid, 0))
            if len(batch_b) >= 20000:
                sql.insert_provenance(conn, batch_p)
                sql.insert_beliefs(conn, batch_b)
                sql.set_belief_links(conn, links, [])
                batch_p, batch_b, links = [], [], []
                print(f"  {i + 1:,} beliefs", file=sys.stderr, end="\r")
        sql.insert_provenance(conn, batch_p)
        sql.insert_beliefs(conn, batch_b)
        sql.set_belief_links(conn, links, [])
        return {"beliefs": n, "raw_files": files}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def timed(fn, args_list) -> list[float]:
    out = []
    for a in args_list:
        t = time.perf_counter()
        fn(a)
        out.append((time.perf_counter() - t) * 1000)
    return out


def why_mix(v: Vault, total: int, q: int, rng: random.Random) -> dict:
    """The `why` query mix on a vault built by ``SynthBeliefs`` (q calls per kind: belief id, subject, full-text
    word; q/10 topics), next to a bare primary-key lookup on wiki_beliefs (baseline, same run): wall ms p50/p95,
    ratio of p95 to the lookup's, and the mixed p95 of the first three kinds. Also checks one answer's shape."""
    ids = [f"b-{rng.randrange(total):07d}" for _ in range(q)]
    subjects = [f"widget family s{rng.randrange(total // CHAIN)}" for _ in range(q)]
    fts_words = [f"w{rng.randrange(total)}" for _ in range(q)]
    topics = [f"topic-{rng.randrange(min(TOPICS, total // CHAIN))}" for _ in range(max(20, q // 10))]
    for warm in ids[:20]:   # warm the page cache the same way for both sides
        sql.bare_lookup(v.conn, warm)
        v.why(warm, workspace=WS)
    bare = timed(lambda b: sql.bare_lookup(v.conn, b), ids * 5)
    kinds = {
        "belief_id": timed(lambda b: v.why(b, workspace=WS), ids),
        "subject": timed(lambda s: v.why(s, workspace=WS), subjects),
        "fts": timed(lambda w: v.why(w, workspace=WS), fts_words),
        "topic (50 of ~1000 beliefs, each quote re-verified)": timed(lambda t: v.why(t, workspace=WS), topics),
    }
    sample = v.why(subjects[0], workspace=WS)
    assert len(sample["supersession_chain"]) == CHAIN and sample["current_beliefs"]
    assert all(s["verified_against_source"] for b in sample["current_beliefs"] + sample["history"]
               for s in b["supporting_sources"])
    mixed = kinds["belief_id"] + kinds["subject"] + kinds["fts"]
    bare_p95 = pct(bare, 95)
    return {
        "bare_lookup_ms": {"p50": pct(bare, 50), "p95": bare_p95},
        "why_ms": {k: {"n": len(x), "p50": pct(x, 50), "p95": pct(x, 95), "ratio_p95_to_bare": pct(x, 95) / bare_p95}
                   for k, x in kinds.items()},
        "why_mixed_p50_ms": pct(mixed, 50), "why_mixed_p95_ms": pct(mixed, 95),
        "why_mixed_ratio_to_bare": pct(mixed, 95) / bare_p95,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--beliefs", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=400, help="why calls per query kind")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    n = args.beliefs
    base = args.out / f"beliefs-{n}"
    db = base / "kenning.db"
    if args.rebuild and base.exists():
        shutil.rmtree(base)
    build_s = None
    if not db.exists():
        base.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        with Vault.open(db) as v:
            run_stage(v.conn, SynthBeliefs(n, base / "ws"), v.config, Clock.from_option("2026-01-01T00:00:00Z"))
            v.conn.execute("ANALYZE")
        build_s = time.perf_counter() - t
        print(f"built {n:,} beliefs in {build_s:.1f}s", file=sys.stderr)

    rng = random.Random(42)
    with Vault.open(db, readonly=True) as v:
        total = sql.count_beliefs(v.conn, WS)
        mix = why_mix(v, total, args.queries, rng)
        t = time.perf_counter()
        report = v.verify_beliefs(workspace=WS)
        verify_s = time.perf_counter() - t
    result = {
        "beliefs": total, "sqlite": __import__("apsw").sqlite_lib_version(), "python": platform.python_version(),
        "machine": platform.machine(), "build_seconds": build_s, **mix,
        "verify": {"quotes": report["quotes_checked"], "seconds": verify_s,
                   "quotes_per_second": report["quotes_checked"] / verify_s, "drifted": report["drifted"]},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "beliefs.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
