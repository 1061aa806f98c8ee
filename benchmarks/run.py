"""Kenning's performance suite: one entry point, every figure next to a baseline measured in the same run.

    python benchmarks/run.py search --sizes 100000,1000000 [--vectors hash|none] [--queries 200] [--json OUT]
    python benchmarks/run.py facts [--facts-conversations 2000]

Sections (each a function registered in SECTIONS; other issues add theirs — ingest throughput, `why`,
`facts` — as one more entry):
- ``search``: builds a vault of N synthetic messages (raw rows written in bulk, then the real search-index
  stage: FTS5 + vectors), and times ``Searcher.search`` (p50/p95) against a bare FTS5 MATCH of the same
  words (baseline 1) and, when vectors are on, a numpy matrix product over the same vectors (baseline 2).
- ``facts``: stage 4 on a ``kenning.bench.synth`` export against one precompiled regex pass over the same texts,
  and the LoCoMo dev coverage / precision of ``benchmarks/extraction.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kenning.api import Vault  # noqa: E402
from kenning.pipeline.clock import Clock  # noqa: E402
from kenning.pipeline.runner import run_stage  # noqa: E402
from kenning.pipeline.stages import STAGES  # noqa: E402
from kenning.retrieve.search import Searcher, fts_match  # noqa: E402
from kenning.sources.ids import IdFactory  # noqa: E402
from kenning.sources.jcs import sha256_hex  # noqa: E402
from kenning.store import raw as raw_sql  # noqa: E402
from kenning.store import search as search_sql  # noqa: E402
from kenning.store.connection import transaction  # noqa: E402

WORDS = ("pottery camping violin turtle adoption lake car kids sister moving Lisbon Paris job interview garden "
         "painting sunrise marathon concert guitar recipe vegan tournament screenplay puppy hiking beach museum "
         "book festival dance studio gym yoga coffee budget project deadline meeting manager promotion doctor "
         "dentist birthday wedding holiday flight hotel train bike rain snow summer winter spring autumn").split()
FILLER = ("i you we they it the a and but so really just think feel like went was had have got made said "
          "yesterday today last week month year new old good great fun hard long little big lot time").split()
SPEAKERS = ["Ana", "Ben", "Caroline", "Melanie", "Sam", "Priya", "Tom", "Mia"]


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_vault(path: Path, n: int, vectors: str, seed: int = 7) -> tuple[Vault, dict[str, float]]:
    """N messages in conversations of 40 turns, written in bulk, then indexed by the real index stage."""
    rnd = random.Random(seed)
    v = Vault.open(path, overrides={"retrieval": {"vector": {"backend": vectors if vectors != "none" else "none"}}})
    ids = IdFactory(v.config.ids.id_namespace)
    t0 = time.perf_counter()
    run_id = "bench"
    per_conv = 40
    with transaction(v.conn):
        for c in range(0, n, per_conv):
            cid = ids.make("bench-conv", c)
            day = 1 + (c // per_conv) % 28
            month = 1 + (c // (per_conv * 28)) % 12
            msgs = []
            for i in range(min(per_conv, n - c)):
                words = rnd.choices(FILLER, k=rnd.randint(6, 18)) + rnd.choices(WORDS, k=rnd.randint(1, 4))
                rnd.shuffle(words)
                text = " ".join(words)
                ts = f"2023-{month:02d}-{day:02d}T{10 + i // 10:02d}:{(i * 7) % 60:02d}:00.000Z"
                msgs.append({
                    "message_id": ids.message(cid, i), "conversation_id": cid, "role": "unknown", "parent_id": None,
                    "tree_path": str(i), "order_index": i, "created_at_utc": ts, "timestamp_quality": "original",
                    "content_type": "text", "text_raw": text, "text_part_map_json": None,
                    "code_fence_ranges_json": None, "blockquote_ranges_json": None, "attachment_count": 0,
                    "raw_message_json": json.dumps({"text": text}), "export_message_id": str(i),
                    "export_parent_id": None, "author_name": SPEAKERS[(c // per_conv + i) % len(SPEAKERS)],
                    "recipient": None, "export_content_type": None, "is_hidden": 0, "is_current_branch": 1,
                    "citation_ranges_json": None, "raw_sha256": sha256_hex(text), "first_run_id": run_id,
                    "last_changed_run_id": run_id})
            conv = {"conversation_id": cid, "export_conversation_id": None, "title": f"bench {c // per_conv}",
                    "created_at_utc": msgs[0]["created_at_utc"], "updated_at_utc": msgs[-1]["created_at_utc"],
                    "message_count": len(msgs), "raw_conversation_json": "{}", "source_kind": "transcript",
                    "current_node_message_id": None, "raw_sha256": cid, "import_key": cid, "first_run_id": run_id,
                    "last_changed_run_id": run_id}
            raw_sql.insert_conversation(v.conn, conv, msgs, [])
    t_raw = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = run_stage(v.conn, STAGES["index"], v.config, Clock.from_option("2024-01-01T00:00:00Z"))
    t_index = time.perf_counter() - t0
    return v, {"raw_write_s": round(t_raw, 2), "index_stage_s": round(t_index, 2),
               "index_docs_per_s": round(n / t_index, 1), "index_counts": r.counts}


def queries(k: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    forms = ["what did {s} say about the {w}?", "{w} and {w2}", "when did {s} go to the {w}?",
             "the {w} last summer", "{s} {w} in May 2023", "anything about {w}"]
    return [rnd.choice(forms).format(s=rnd.choice(SPEAKERS), w=rnd.choice(WORDS), w2=rnd.choice(WORDS))
            for _ in range(k)]


def timed(fn: Callable[[], Any], reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def bench_search(args) -> dict[str, Any]:
    import numpy as np

    report: dict[str, Any] = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory(prefix="kenning-bench-", dir=args.tmp) as tmp:
            v, build = build_vault(Path(tmp) / "bench.db", n, args.vectors)
            qs = queries(args.queries)
            s = Searcher(v.conn, v.config)
            for q in qs[:5]:
                s.search(q, now="2023-12-31")  # warm: caches, first-use costs
            lat = [timed(lambda q=q: s.search(q, k=10, now="2023-12-31"), 1)[0] for q in qs]
            lat_fts_lane = [timed(lambda q=q: s.search(q, k=10, now="2023-12-31", lanes=["fts"]), 1)[0] for q in qs]
            matches = [fts_match([w for w in q.lower().replace("?", "").split() if w in WORDS]) or '"kids"'
                       for q in qs]
            bare = [timed(lambda m=m: search_sql.bare_fts_count(v.conn, m, 10), 1)[0] for m in matches]
            entry: dict[str, Any] = {"build": build, "queries": len(qs)}
            entry["search_ms"] = {"p50": round(percentile(lat, 50), 2), "p95": round(percentile(lat, 95), 2)}
            entry["search_fts_lane_ms"] = {"p50": round(percentile(lat_fts_lane, 50), 2),
                                           "p95": round(percentile(lat_fts_lane, 95), 2)}
            entry["baseline_bare_fts5_ms"] = {"p50": round(percentile(bare, 50), 3),
                                              "p95": round(percentile(bare, 95), 3)}
            entry["ratio_search_to_bare_fts5"] = {
                "p50": round(entry["search_ms"]["p50"] / max(entry["baseline_bare_fts5_ms"]["p50"], 1e-6), 1),
                "p95": round(entry["search_ms"]["p95"] / max(entry["baseline_bare_fts5_ms"]["p95"], 1e-6), 1)}
            table = s.vector_table()
            if table:
                emb = s.embedder()
                mat = np.stack([np.frombuffer(b, dtype=np.float32) for (b,) in
                                v.conn.execute(f"SELECT embedding FROM {table} ORDER BY rowid")])
                qv = emb.embed(qs)
                mm = timed(lambda: None, 0)
                for i in range(len(qs)):
                    t = time.perf_counter()
                    sc = mat @ qv[i]
                    np.argpartition(-sc, 10)[:10]
                    mm.append((time.perf_counter() - t) * 1000)
                knn = [timed(lambda i=i: search_sql.vector_search(v.conn, table, qv[i], 50), 1)[0]
                       for i in range(len(qs))]
                entry["vector_knn_ms"] = {"p50": round(percentile(knn, 50), 2), "p95": round(percentile(knn, 95), 2)}
                entry["baseline_numpy_matmul_ms"] = {"p50": round(percentile(mm, 50), 2),
                                                     "p95": round(percentile(mm, 95), 2)}
                entry["ratio_knn_to_numpy"] = round(entry["vector_knn_ms"]["p50"] /
                                                    max(entry["baseline_numpy_matmul_ms"]["p50"], 1e-6), 1)
                del mat
            entry["db_mb"] = round(sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6, 1)
            entry["peak_rss_mb"] = round(peak_rss_mb(), 1)
            v.close()
            report[str(n)] = entry
            print(json.dumps({"search": {str(n): entry}}), flush=True)
    return report


# Hooks for the figures other issues add: ingest throughput (synthetic exports, rules-only with hash and
# minilm embeddings, per stage, peak RSS), `why` and `facts` latency. Each is a function(args) -> dict.
def bench_facts(args) -> dict[str, Any]:
    """Stage 4 (issue 5): speed on a synthetic export against a one-regex baseline, and LoCoMo dev coverage and
    hand-labelled precision (details: benchmarks/extraction.py)."""
    import extraction

    return {"synthetic": extraction.synth_speed(args.facts_conversations, 5),
            "locomo_dev": extraction.run("dev", 100, 5, extraction.LABELS, None)}


def bench_self(args) -> dict[str, Any]:
    """Seed 000 (issue 7): rules-only analyze throughput, one experience into a 50k-node vault (hash, MiniLM),
    gold-set metrics (details: benchmarks/self_beliefs.py)."""
    import self_beliefs

    return self_beliefs.run_all(argparse.Namespace(statements=5000, nodes=args.self_nodes, experiences=60))


SECTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "search": bench_search,
    "facts": bench_facts,
    "self": bench_self,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sections", nargs="*", default=["search"], help=f"which: {', '.join(SECTIONS)}")
    ap.add_argument("--sizes", default="100000,1000000", help="indexed messages, comma-separated")
    ap.add_argument("--vectors", default="hash", choices=["hash", "minilm", "none"])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--tmp", default=os.environ.get("TMPDIR"), help="where the temporary vaults go")
    ap.add_argument("--json", dest="json_out", help="write the whole report here")
    ap.add_argument("--facts-conversations", type=int, default=2000, help="synthetic conversations for `facts`")
    ap.add_argument("--self-nodes", type=int, default=50000, help="belief nodes in the vault for `self`")
    args = ap.parse_args()
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        ap.error(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    report = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
              "sections": {s: SECTIONS[s](args) for s in args.sections}}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
