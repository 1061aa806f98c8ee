"""Kenning's performance suite: one entry point, every figure next to a baseline measured in the same run.

    python benchmarks/run.py search --sizes 100000,1000000 [--vectors hash|none] [--queries 200] [--json OUT]
    python benchmarks/run.py cold --vault V --vectors hash --vocab locomo [--queries 3]
    python benchmarks/run.py facts [--facts-conversations 2000]
    python benchmarks/run.py queries --sizes 100000,1000000 [--queries 40] [--tmp DIR]
    python benchmarks/run.py knowledge_query --kq-sizes 10000,100000 [--queries 200] [--tmp DIR]
    python benchmarks/run.py temporal [--temporal-conversations 2000] [--temporal-seeds 1,2]
    python benchmarks/run.py startup [--startup-reps 5] [--tmp DIR] [--startup-baseline ../main/src]

Sections (each a function registered in SECTIONS; other issues add theirs — ingest throughput, `why`,
`facts` — as one more entry):
- ``search``: builds a vault of N synthetic messages (raw rows written in bulk, then the real search-index
  stage: FTS5 + vectors), and times ``Searcher.search`` (p50/p95) against a bare FTS5 MATCH of the same
  words (baseline 1) and, when vectors are on, a numpy matrix product over the same vectors (baseline 2).
- ``cold``: a cold one-shot search (a fresh process, as a CLI ``kenning search``) on ``--vault``, with the bulk
  vector-mirror / DocMeta loaders against the pre-R60 row-by-row ones (baseline, same run; benchmarks/cold_search.py).
- ``queries``: ``facts`` and ``why`` latency (p50/p95, wall and CPU) on a vault of N assertions and N beliefs,
  each next to a primary-key lookup on its table (baseline, same run); the vault is built once and cached under
  ``--tmp`` or benchmarks/out/ (how: benchmarks/queries.py).
- ``knowledge_query``: every §43 graph query kind and context-packet assembly on a synthetic node store (10
  edges per node) against the seed's ceilings and a primary-key select (benchmarks/knowledge_query.py).
- ``startup``: fresh processes beside ``python -c pass``: ``kenning --help``, ``kenning search --help``, ``status`` and
  a one-shot ``kenning search`` on a cached 100k-message vault, with each one's heaviest imports (benchmarks/startup.py).
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
LOCOMO_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"


def locomo_vocab(data_dir: Path = LOCOMO_DIR) -> dict[str, Any]:
    """The realistic (Zipfian) variant's material: every word of the five LoCoMo dev conversations with its real
    frequency, the turns' lengths, the speakers' names and the questions of categories 1–4."""
    import collections
    import re

    if not data_dir.is_dir():
        data_dir = Path("/work/shared/data/locomo")
    counts: collections.Counter[str] = collections.Counter()
    lengths, names, questions = [], set(), []
    from kenning.bench.locomo_eval import SPLITS

    # The dev conversations only: the test split is for reported evaluation, never for tuning of any kind,
    # speed included (issue 23 part 4; before that, all ten files were read).
    for f in sorted(data_dir / f"{name}.json" for name in SPLITS["dev"]):
        o = json.loads(f.read_text())
        names |= {o["speaker_a"], o["speaker_b"]}
        for key in sorted(o):
            if re.fullmatch(r"session_\d+", key):
                for t in o[key]:
                    w = re.findall(r"[a-z0-9]+", t["text"].lower())
                    counts.update(w)
                    lengths.append(max(1, len(w)))
        questions += [q["question"] for q in o["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("question")]
    words = sorted(counts, key=lambda w: (-counts[w], w))
    return {"words": words, "cum": list(__import__("itertools").accumulate(counts[w] for w in words)),
            "lengths": lengths, "speakers": sorted(names), "questions": questions}


def message_texts(vocab: str, seed: int) -> tuple[Callable[[], str], list[str]]:
    """A text generator and the speakers for a synthetic vault: ``topic`` (the hard case: 60 topic words + 40
    filler words, every query word in ~4% of the vault) or ``locomo`` (words drawn with the LoCoMo conversations'
    real frequencies, turn lengths as theirs: a Zipfian vocabulary of ~5,400 words)."""
    rnd = random.Random(seed)
    if vocab == "topic":
        def topic() -> str:
            words = rnd.choices(FILLER, k=rnd.randint(6, 18)) + rnd.choices(WORDS, k=rnd.randint(1, 4))
            rnd.shuffle(words)
            return " ".join(words)
        return topic, SPEAKERS
    lv = locomo_vocab()
    words, cum, lengths = lv["words"], lv["cum"], lv["lengths"]

    def zipf() -> str:
        return " ".join(rnd.choices(words, cum_weights=cum, k=rnd.choice(lengths)))
    return zipf, lv["speakers"]


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vector_overrides(vectors: str) -> dict:
    if vectors == "none":
        return {"retrieval": {"vector": {"enabled": False}}}
    return {"embeddings": {"backend": vectors}}


def build_vault(path: Path, n: int, vectors: str, seed: int = 7, vocab: str = "topic") -> tuple[Vault, dict[str, float]]:
    """N messages in conversations of 40 turns, written in bulk, then indexed by the real index stage."""
    next_text, speakers = message_texts(vocab, seed)
    v = Vault.open(path, overrides=vector_overrides(vectors))
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
                text = next_text()
                ts = f"2023-{month:02d}-{day:02d}T{10 + i // 10:02d}:{(i * 7) % 60:02d}:00.000Z"
                msgs.append({
                    "message_id": ids.message(cid, i), "conversation_id": cid, "role": "unknown", "parent_id": None,
                    "tree_path": str(i), "order_index": i, "created_at_utc": ts, "timestamp_quality": "original",
                    "content_type": "text", "text_raw": text, "text_part_map_json": None,
                    "code_fence_ranges_json": None, "blockquote_ranges_json": None, "attachment_count": 0,
                    "raw_message_json": json.dumps({"text": text}), "export_message_id": str(i),
                    "export_parent_id": None, "author_name": speakers[(c // per_conv + i) % len(speakers)],
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


def queries(k: int, seed: int = 11, vocab: str = "topic") -> list[str]:
    rnd = random.Random(seed)
    if vocab == "locomo":  # the LoCoMo questions themselves (categories 1–4), a seeded sample
        qs = locomo_vocab()["questions"]
        return [rnd.choice(qs) for _ in range(k)]
    forms = ["what did {s} say about the {w}?", "{w} and {w2}", "when did {s} go to the {w}?",
             "the {w} last summer", "{s} {w} in May 2023", "anything about {w}"]
    return [rnd.choice(forms).format(s=rnd.choice(SPEAKERS), w=rnd.choice(WORDS), w2=rnd.choice(WORDS))
            for _ in range(k)]


CPU_MS: list[float] = []  # CPU time of each timed() call, in order (load on the machine disturbs it least)


def timed(fn: Callable[[], Any], reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
        CPU_MS.append((time.process_time() - c) * 1000)
    return out


def timed_cpu(fns: list[Callable[[], Any]]) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) of each call."""
    wall = [timed(f, 1)[0] for f in fns]
    return wall, CPU_MS[-len(fns):]


def bench_search(args) -> dict[str, Any]:
    report: dict[str, Any] = {}
    sizes = [int(x) for x in args.sizes.split(",")] if not args.vault else [0]
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="kenning-bench-", dir=args.tmp) as tmp:
            if args.vault and Path(args.vault).exists():  # built earlier by build_vault: time queries only
                v = Vault.open(Path(args.vault), overrides=vector_overrides(args.vectors))
                build = {"reused": args.vault}
                n = search_sql.doc_count(v.conn)
            else:  # --vault PATH that does not exist yet: built there (--sizes' first size) and kept
                v, build = build_vault(Path(args.vault or Path(tmp) / "bench.db"), n or int(args.sizes.split(",")[0]),
                                       args.vectors, vocab=args.vocab)
                print(json.dumps({"build": build}), flush=True)
                if args.build_only:
                    v.close()
                    report[str(n)] = {"build": build}
                    continue
            entry = search_latency(v, args.queries or 200, build, args.vocab, args.recall_queries)
            db = Path(args.vault or Path(tmp) / "bench.db")
            entry["db_mb"] = round(sum(f.stat().st_size for f in db.parent.iterdir() if f.name.startswith(db.name)) / 1e6, 1)
            entry["peak_rss_mb"] = round(peak_rss_mb(), 1)
            v.close()
            report[str(n)] = entry
            print(json.dumps({"search": {str(n): entry}}), flush=True)
    return report


def search_latency(v: Vault, nq: int, build: dict, vocab: str = "topic", recall_queries: int = 50) -> dict[str, Any]:
    """Searcher.search p50/p95, wall and CPU (all lanes; FTS lane only) against a bare FTS5 MATCH … ORDER BY rank
    LIMIT 10 of the same words (the FTS lane's words; baseline, same run); recall@10 of the FTS lane's pruned top 10
    (the shared pool, R40–R41) against the unpruned BM25 top 10 (every match ranked); and — with vectors — the vector
    lane's search (1-bit codes + exact re-rank above quantize_above) against an exact numpy scan of the same vectors,
    with recall@10 of the first against the second."""
    qs = queries(nq, vocab=vocab)
    load_before = os.getloadavg()
    s = Searcher(v.conn, v.config)
    t0 = time.perf_counter()
    for q in qs[:5]:
        s.search(q, now="2023-12-31")  # warm: caches, vector mirror and codes, first-use costs
    warm_s = time.perf_counter() - t0
    lat, lat_cpu = timed_cpu([lambda q=q: s.search(q, k=10, now="2023-12-31") for q in qs])
    lat_fts_lane, lat_fts_lane_cpu = timed_cpu([lambda q=q: s.search(q, k=10, now="2023-12-31", lanes=["fts"])
                                                for q in qs])
    words = [s.parse(q, __import__("datetime").date(2023, 12, 31), None).terms for q in qs]
    matches = [fts_match(ws) or '"kids"' for ws in words]
    bare, bare_cpu = timed_cpu([lambda m=m: search_sql.bare_fts_count(v.conn, m, 10) for m in matches])
    entry: dict[str, Any] = {"build": build, "vocab": vocab, "queries": len(qs), "warm_s": round(warm_s, 2)}
    entry["search_ms"] = pp(lat)
    entry["search_cpu_ms"] = pp(lat_cpu)
    entry["search_fts_lane_ms"] = pp(lat_fts_lane)
    entry["search_fts_lane_cpu_ms"] = pp(lat_fts_lane_cpu)
    entry["baseline_bare_fts5_ms"] = pp(bare, 3)
    entry["baseline_bare_fts5_cpu_ms"] = pp(bare_cpu, 3)
    entry["ratio_search_to_bare_fts5"] = {k: round(entry["search_ms"][k] / max(entry["baseline_bare_fts5_ms"][k], 1e-6), 2)
                                          for k in ("p50", "p95")}
    entry["ratio_search_to_bare_fts5_cpu"] = {
        k: round(entry["search_cpu_ms"][k] / max(entry["baseline_bare_fts5_cpu_ms"][k], 1e-6), 2) for k in ("p50", "p95")}
    if recall_queries:
        entry["fts_pruning"] = pruning_recall(v, s, qs[:recall_queries])
    entry["load_avg"] = {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]}
    emb = s.embedder()
    if emb is not None:
        qv = emb.embed(qs)
        approx, exact, recall = [], [], []
        for i in range(len(qs)):
            t = time.perf_counter()
            a = s.vectors.knn(qv[i], 10)
            approx.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            e = s.vectors.knn(qv[i], 10, exact=True)
            exact.append((time.perf_counter() - t) * 1000)
            recall.append(len({r for r, _ in a} & {r for r, _ in e}) / max(1, len(e)))
        entry["vector_search_ms"] = pp(approx)
        entry["baseline_exact_numpy_ms"] = pp(exact)
        entry["ratio_vector_to_exact"] = round(entry["vector_search_ms"]["p50"] / max(entry["baseline_exact_numpy_ms"]["p50"], 1e-6), 2)
        entry["vector_recall@10_vs_exact"] = round(sum(recall) / len(recall), 4)
        entry["vectors"] = s.vectors.meta().rowid.shape[0]
    return entry


def pruning_recall(v: Vault, s: Searcher, qs: list[str]) -> dict[str, Any]:
    """The FTS lane's top 10 from the shared pool (pruned) against the unpruned BM25 top 10 (``rank_all_below: 0``:
    FTS5 ranks every match) of the same queries: recall@10 by id, and with ties counted (a pruned hit whose exact
    score is at least the unpruned 10th score is as good — the synthetic vault has many equal scores)."""
    from kenning.config import load_config

    exact = Searcher(v.conn, load_config(overrides={**vector_overrides("none"), "retrieval": {
        "vector": {"enabled": False}, "fts": {"rank_all_below": 0}}}))
    rec, tie, pooled, cpu_exact = [], [], [], []
    for q in qs:
        a = s.search(q, k=10, now="2023-12-31", lanes=["fts"]).hits
        c = time.process_time()
        e = exact.search(q, k=10, now="2023-12-31", lanes=["fts"]).hits
        cpu_exact.append((time.process_time() - c) * 1000)
        if not e:
            continue
        ea = {h["message_id"] for h in e}
        rec.append(len(ea & {h["message_id"] for h in a}) / len(e))
        tenth = e[-1]["lanes"]["fts"]["score"]
        tie.append(min(1.0, sum(h["lanes"]["fts"]["score"] >= tenth - 1e-6 for h in a) / len(e)))
        pooled.append(1.0 if s.fts_pool(s.parse(q, __import__("datetime").date(2023, 12, 31), None).terms) else 0.0)
    n = max(1, len(rec))
    return {"queries": len(rec), "recall@10_vs_unpruned": round(sum(rec) / n, 4),
            "recall@10_ties_counted": round(sum(tie) / n, 4), "share_of_queries_pooled": round(sum(pooled) / n, 3),
            "unpruned_fts_lane_cpu_ms": pp(cpu_exact)}


def pp(xs: list[float], nd: int = 2) -> dict[str, float]:
    return {"p50": round(percentile(xs, 50), nd), "p95": round(percentile(xs, 95), nd)}


def bench_facts(args) -> dict[str, Any]:
    """Stage 4 (issue 5): speed on a synthetic export against a one-regex baseline, and LoCoMo dev coverage and
    hand-labelled precision (details: benchmarks/extraction.py)."""
    import extraction

    return {"synthetic": extraction.synth_speed(args.facts_conversations, 5),
            "locomo_dev": extraction.run("dev", 100, 5, extraction.LABELS, None)}


INGEST_SNIPPET = """
import json, sys, time
from kenning.api import Vault
src, db, backend, out = ARGS
v = Vault.open(db, overrides={"embeddings": {"backend": backend}})
times = {}
for stage in ["0,1", "2A", "2B", "3", "4", "5", "6", "self", "index"]:
    t = time.perf_counter(); c = time.process_time()
    runs = v.ingest([src], as_of="2025-01-01T00:00:00Z", stages=stage)
    times[stage] = {"wall_s": round(time.perf_counter() - t, 2), "cpu_s": round(time.process_time() - c, 2),
                    "counts": {k: x for r in runs for k, x in r.counts.items() if isinstance(x, (int, float))}}
# query latency on the vault just built: search, facts (--about an entity, as the CLI), bare PK lookup (baseline)
import random, statistics
from kenning.cli.facts import fact_filters
from kenning.store import assertions as asql
from kenning.retrieve.search import Searcher
rnd = random.Random(3)
def pct(xs, p):
    xs = sorted(xs); return round(xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))], 3)
def lat(fn, args):
    out = []
    for a in args:
        t = time.perf_counter(); fn(a); out.append((time.perf_counter() - t) * 1000)
    return {"p50": pct(out, 50), "p95": pct(out, 95), "n": len(out)}
words = [w for (w,) in v.conn.execute("SELECT term FROM search_fts_vocab WHERE doc BETWEEN 5 AND 5000 "
                                      "ORDER BY doc DESC LIMIT 400")]
qs = [" ".join(rnd.sample(words, 3)) for _ in range(100)]
s = Searcher(v.conn, v.config)
for q in qs[:5]: s.search(q, now="2025-01-01")
subjects = [n for (n,) in v.conn.execute("SELECT e.canonical_name FROM entities e WHERE e.status='active' AND EXISTS "
                                         "(SELECT 1 FROM assertions a WHERE a.subject_entity_id=e.entity_id) "
                                         "ORDER BY e.entity_id LIMIT 100")]
ids = [i for (i,) in v.conn.execute("SELECT assertion_id FROM assertions ORDER BY assertion_id LIMIT 100")]
def facts_about(name):
    sid, preds, _ = fact_filters(v.conn, name, None)
    return asql.facts(v.conn, subject_ids=sid, predicate_norms=preds, limit=200)
times["queries"] = {
    "search_ms": lat(lambda q: s.search(q, k=10, now="2025-01-01"), qs),
    "facts_about_ms": lat(facts_about, subjects or ["me"]),
    "baseline_pk_lookup_ms": lat(lambda i: v.conn.execute("SELECT * FROM assertions WHERE assertion_id=?", (i,)).fetchall(), ids * 3),
    "assertions": v.conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0],
}
v.close()
open(out, "w").write(json.dumps(times))
"""


def bench_ingest(args) -> dict[str, Any]:
    """End-to-end `kenning ingest` (every stage, rules only, no LLM) of synthetic exports, per embedder: wall/CPU per
    stage, messages/s, peak RSS of the whole process — next to `json.load` of the same file (baseline, same run)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _harness import best, measure_code

    from kenning.bench.synth import write_export

    sizes = {"1k": 50, "10k": 500, "100k": 5000}
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kenning-ingest-", dir=args.tmp) as tmp:
        for label in args.ingest_sizes.split(","):
            src = Path(tmp) / f"synth-{label}.json"
            stats = write_export(src, sizes[label], seed=42)
            base = best(lambda: measure_code("import json, sys\nwith open(ARGS[0], 'rb') as f:\n    json.load(f)\n",
                                             str(src)), 2)
            for backend in args.ingest_embedders.split(","):
                db, out = Path(tmp) / f"{label}-{backend}.db", Path(tmp) / f"{label}-{backend}.json"
                m = measure_code(INGEST_SNIPPET, str(src), str(db), backend, str(out))
                stages = json.loads(out.read_text())
                msgs = stats["messages"]
                entry = {"messages": msgs, "mb": round(stats["bytes"] / 1e6, 1), "wall_s": round(m.wall, 1),
                         "cpu_s": round(m.cpu, 1), "peak_rss_mb": round(m.peak_rss_mb, 1),
                         "msgs_per_s": round(msgs / m.wall, 1),
                         "baseline_json_load": {"wall_s": round(base.wall, 2), "peak_rss_mb": round(base.peak_rss_mb, 1)},
                         "ratio_wall_to_json_load": round(m.wall / max(base.wall, 1e-6), 1),
                         "ratio_rss_to_json_load": round(m.peak_rss_mb / max(base.peak_rss_mb, 1e-6), 2),
                         "queries": stages.pop("queries"),
                         "stages": {k: {**v, "msgs_per_s": round(msgs / max(v["wall_s"], 1e-6), 1)}
                                    for k, v in stages.items()}}
                report[f"{label}/{backend}"] = entry
                print(json.dumps({"ingest": {f"{label}/{backend}": entry}}), flush=True)
                db.unlink(missing_ok=True)
    return report


def bench_vectors(args) -> dict[str, Any]:
    """The vector lane's index alone at N vectors (default 1M): 1-bit codes + exact re-rank (R16) against the exact
    numpy scan of the same mirror (baseline, same run), unfiltered and with a 1-in-8 filter (a speaker lane);
    recall@10 against the exact result. Vectors: `--vectors` embeddings (hash: 20k, minilm: 3k synthetic turns), each
    mixed with another (minilm: plus a little noise) so that 1M vectors have structure without embedding 1M texts."""
    import numpy as np

    from kenning.config import load_config
    from kenning.llm.embed import get_embedder
    from kenning.llm.index import _Mirror, limit_blas_threads

    backend = args.vectors if args.vectors != "none" else "hash"
    cfg = load_config(overrides={"embeddings": {"backend": backend}})
    limit_blas_threads(cfg.embeddings.vector_index.blas_threads)
    vcfg = cfg.embeddings.vector_index
    rnd = random.Random(5)
    base_n = 20000 if backend == "hash" else 3000  # MiniLM embeds ~100 texts/s here
    texts = [" ".join(rnd.choices(FILLER, k=8) + rnd.choices(WORDS, k=3)) for _ in range(base_n)]
    emb = get_embedder(cfg)
    base = emb.embed(texts)
    report: dict[str, Any] = {}
    for n in [int(x) for x in args.vector_sizes.split(",")]:
        t0 = time.perf_counter()
        g = np.random.default_rng(9)
        m = _Mirror(base.shape[1], "bench")
        step = 100_000
        for i in range(0, n, step):
            k = min(step, n - i)
            a, b = g.integers(0, base_n, k), g.integers(0, base_n, k)
            v = base[a] + 0.5 * base[b]
            if backend != "hash":  # dense vectors: a little noise so that no two are alike
                v += 0.05 * g.standard_normal(v.shape, dtype=np.float32) / np.sqrt(v.shape[1])
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            if i == 0:
                m.upsert([(0, "search", "0", "message", v[0])])  # registers the space and kind codes
                m._grow(n)
            # bulk fill (the per-row upsert costs minutes at 1M here; the arrays end up the same)
            m.matrix[i:i + k] = v
            m.vids[i:i + k] = np.arange(i, i + k)
            m.valid[i:i + k] = True
            m.space_codes[i:i + k] = m.space_codes[0]
            m.kind_codes[i:i + k] = m.kind_codes[0]
            m.item_ids[i:i + k] = [str(x) for x in range(i, i + k)]
            m.pos_of.update({x: x for x in range(i, i + k)})
            m.n = i + k
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        m.ensure_codes()
        codes_s = time.perf_counter() - t0
        qs = emb.embed(queries(args.queries or 200))
        rerank = args.rerank or max(10 * vcfg.rerank_factor, vcfg.rerank_min)
        entry: dict[str, Any] = {"vectors": n, "build_s": round(build_s, 1), "codes_s": round(codes_s, 2),
                                 "rerank_candidates": rerank, "mirror_mb": round(m.matrix.nbytes / 1e6, 1),
                                 "codes_mb": round(m.codes.nbytes / 1e6, 1)}
        every8 = lambda vids: (vids % 8) == 3  # noqa: E731 - a lane's filter (one speaker in eight)
        for label, allow in (("all", None), ("filtered_1_in_8", every8)):
            approx, exact, recall, tie_recall, approx_cpu, exact_cpu = [], [], [], [], [], []
            for q in qs:
                t, c = time.perf_counter(), time.process_time()
                a = m.search(q, 10, "search", None, None, allow, 1, rerank)
                approx.append((time.perf_counter() - t) * 1000)
                approx_cpu.append((time.process_time() - c) * 1000)
                t, c = time.perf_counter(), time.process_time()
                e = m.search(q, 10, "search", None, None, allow, 0, 0)
                exact.append((time.perf_counter() - t) * 1000)
                exact_cpu.append((time.process_time() - c) * 1000)
                recall.append(len({h.vid for h in a} & {h.vid for h in e}) / max(1, len(e)))
                # ties: synthetic turns share words, so many vectors score exactly alike and which of them the
                # exact top 10 lists is arbitrary; count an approximate hit as found when it scores as high as
                # the exact 10th
                tie_recall.append(sum(h.score >= e[-1].score - 1e-6 for h in a) / max(1, len(e)))
            entry[label] = {"quantized_ms": pp(approx), "baseline_exact_ms": pp(exact),
                            "quantized_cpu_ms": pp(approx_cpu), "baseline_exact_cpu_ms": pp(exact_cpu),
                            "ratio_p95": round(percentile(approx, 95) / max(percentile(exact, 95), 1e-6), 3),
                            "recall@10_vs_exact": round(sum(recall) / len(recall), 4),
                            "recall@10_ties_counted": round(sum(tie_recall) / len(tie_recall), 4)}
        entry["peak_rss_mb"] = round(peak_rss_mb(), 1)
        report[str(n)] = entry
        print(json.dumps({"vectors": {str(n): entry}}), flush=True)
        del m
    return report


def bench_queries(args) -> dict[str, Any]:
    """`facts` and `why` query latency at each of --sizes (N assertions + N beliefs per vault), next to a
    primary-key lookup (baseline, same run); vaults cached (benchmarks/queries.py says how they are built)."""
    import queries as qb

    cache = Path(args.tmp) / "kenning-queries" if args.tmp else Path(__file__).resolve().parent / "out"
    report: dict[str, Any] = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        db, build = qb.build(cache, n, args.base_conversations)
        print(json.dumps({"queries": {str(n): {"build": build}}}), flush=True)
        entry = {"build": build, **qb.measure(db, args.queries or 40)}
        entry["peak_rss_mb"] = round(peak_rss_mb(), 1)
        report[str(n)] = entry
        print(json.dumps({"queries": {str(n): entry}}), flush=True)
    return report


def bench_self(args) -> dict[str, Any]:
    """Seed 000 (issue 7): rules-only analyze throughput, one experience into a 50k-node vault (hash, MiniLM),
    gold-set metrics (details: benchmarks/self_beliefs.py)."""
    import self_beliefs

    return self_beliefs.run_all(argparse.Namespace(statements=5000, nodes=args.self_nodes, experiences=60))


def bench_cold(args) -> dict[str, Any]:
    """A cold one-shot search (a fresh process: open the vault, one question, as a CLI `kenning search` does) on an
    indexed vault (``--vault``), with this code's bulk loaders (R60) against the pre-R60 row-by-row ones (baseline,
    same run: benchmarks/cold_search.py --baseline), ``--queries`` questions (default 3), the two alternating in
    separate processes; every figure wall and CPU, the ratio bulk / baseline, and whether both printed the same
    search output."""
    if not args.vault or not Path(args.vault).exists():
        raise SystemExit("cold: --vault PATH of an indexed vault (build one with `run.py search --build-only`)")
    import subprocess

    script = str(Path(__file__).resolve().parent / "cold_search.py")
    runs: dict[str, list[dict]] = {"bulk": [], "baseline": []}
    for i in range(args.queries or 3):
        for side in (("baseline", "bulk") if i % 2 == 0 else ("bulk", "baseline")):
            cmd = [sys.executable, script, "--vault", args.vault, "--vectors", args.vectors, "--vocab", args.vocab,
                   "--query", str(i)] + (["--baseline"] if side == "baseline" else [])
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps({"cold": side, **r}), flush=True)
            runs[side].append(r)

    def med(side: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[side]), 2)

    def med_part(side: str, part: str, j: int) -> float:
        return round(statistics.median(r["parts_wall_cpu_s"].get(part, [0, 0])[j] for r in runs[side]), 2)

    entry: dict[str, Any] = {"vault": args.vault, "vectors": runs["bulk"][0]["vectors"], "questions": len(runs["bulk"])}
    for side in runs:
        entry[side] = {k: med(side, k) for k in ("process_wall_s", "process_cpu_s", "first_search_wall_s",
                                                 "first_search_cpu_s", "next_search_wall_ms", "next_search_cpu_ms")}
        entry[side]["parts_wall_cpu_s"] = {p: [med_part(side, p, 0), med_part(side, p, 1)]
                                           for p in ("mirror_load", "codes", "doc_meta")}
    entry["ratio_bulk_to_baseline"] = {k: round(entry["bulk"][k] / max(entry["baseline"][k], 1e-6), 3)
                                       for k in ("process_wall_s", "process_cpu_s", "first_search_wall_s",
                                                 "first_search_cpu_s")}
    entry["same_output"] = all(a["output_sha256"] == b["output_sha256"]
                               for a, b in zip(runs["bulk"], runs["baseline"]))
    entry["load_avg"] = [r["load_avg"][0] for side in runs for r in runs[side]]
    return entry


def bench_knowledge_query(args) -> dict[str, Any]:
    """Issue 19: every §43 query kind and context-packet assembly at each of --kq-sizes nodes (~10 edges per node),
    p50/p95 against the seed's ceilings and a primary-key select (baseline, same run); details in
    benchmarks/knowledge_query.py."""
    import knowledge_query

    return knowledge_query.run([int(x) for x in args.kq_sizes.split(",")], args.queries or 200, args.tmp)


def bench_temporal(args) -> dict[str, Any]:
    """Issue 22 §5: stage 5 against the synthetic persona's true home and employer — state changes closed
    correctly and states left wrongly current, next to the seed's eligibility rule (baseline, same vault, same
    run; details: benchmarks/temporal.py)."""
    import temporal

    return temporal.run_all(args.temporal_conversations, [int(s) for s in args.temporal_seeds.split(",")], args.tmp)


def bench_startup(args) -> dict[str, Any]:
    """Issue 24 §4: start-up in fresh processes against ``python -c pass`` (benchmarks/startup.py)."""
    import startup

    return startup.bench_startup(args.startup_reps, args.tmp, args.startup_baseline)


def bench_ingest_ready(args) -> dict[str, Any]:
    """Issue 24 §1: full default `kenning ingest` — time until every non-vector lane is ready, then until the vector
    lane is complete (`kenning reindex --vectors`, what the background fill runs), peak RSS of each, beside
    `json.load` and the pre-change encoder batching (same run; details: benchmarks/ingest_ready.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import ingest_ready

    return ingest_ready.run(args.ingest_sizes, args.tmp)


SECTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "search": bench_search,
    "cold": bench_cold,
    "ingest": bench_ingest,
    "ingest_ready": bench_ingest_ready,
    "vectors": bench_vectors,
    "facts": bench_facts,
    "self": bench_self,
    "queries": bench_queries,
    "knowledge_query": bench_knowledge_query,
    "temporal": bench_temporal,
    "startup": bench_startup,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sections", nargs="*", default=["search"], help=f"which: {', '.join(SECTIONS)}")
    ap.add_argument("--sizes", default="100000,1000000", help="indexed messages, comma-separated")
    ap.add_argument("--vectors", default="hash", choices=["hash", "minilm", "none"])
    ap.add_argument("--queries", type=int, default=None,
                    help="search/vectors: queries (200); queries: reps per shape (40); cold: questions (3)")
    ap.add_argument("--tmp", default=os.environ.get("TMPDIR"), help="where the temporary vaults go")
    ap.add_argument("--json", dest="json_out", help="write the whole report here")
    ap.add_argument("--ingest-sizes", default="10k,100k", help="ingest: synthetic export sizes (10k, 100k)")
    ap.add_argument("--ingest-embedders", default="hash,minilm", help="ingest: embedding backends")
    ap.add_argument("--vector-sizes", default="1000000", help="vectors: mirror sizes")
    ap.add_argument("--rerank", type=int, default=0, help="vectors: re-ranked candidates (default: from config)")
    ap.add_argument("--vault", help="search: time queries on this indexed vault (built there first if missing)")
    ap.add_argument("--vocab", default="topic", choices=["topic", "locomo"],
                    help="search: synthetic text: 60 topic words (hard) or LoCoMo's words at their real frequencies")
    ap.add_argument("--recall-queries", type=int, default=50,
                    help="search: queries whose pruned FTS top 10 is compared with the unpruned one (0: none)")
    ap.add_argument("--build-only", action="store_true", help="search: build the vault (--vault PATH), no timing")
    ap.add_argument("--facts-conversations", type=int, default=2000, help="synthetic conversations for `facts`")
    ap.add_argument("--base-conversations", type=int, default=500,
                    help="queries: conversations of the synthetic export ingested as the base vault")
    ap.add_argument("--self-nodes", type=int, default=50000, help="belief nodes in the vault for `self`")
    ap.add_argument("--kq-sizes", default="10000,100000", help="knowledge_query: node-store sizes (10 edges/node)")
    ap.add_argument("--temporal-conversations", type=int, default=2000, help="temporal: synthetic conversations")
    ap.add_argument("--temporal-seeds", default="1,2", help="temporal: synthetic export seeds, comma-separated")
    ap.add_argument("--startup-reps", type=int, default=5, help="startup: rounds of fresh processes (medians)")
    ap.add_argument("--startup-baseline", default=None,
                    help="startup: another checkout's src/ (e.g. main before the change), timed in the same rounds")
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
