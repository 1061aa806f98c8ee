"""Query latency at scale (issue 9 §4): ``facts`` and ``why`` on a vault of N assertions and N beliefs, each next to
a primary-key lookup measured in the same run. Run through the suite's entry point:

    python benchmarks/run.py queries --sizes 100000,1000000 [--queries 40] [--tmp DIR]

How the vault is built (cheap, and every foreign key valid):
1. a real ingest (stages 0–4, rules only, no LLM) of a ``kenning.bench.synth`` export of ``--base-conversations``
   conversations (500: ~10k messages, ~630 assertions); cached as ``facts-base-<conv>.db``;
2. that vault copied, then in ONE transaction its assertions replicated until there are N: copy k gets suffixed
   ids (``<id>~k``) for the assertion, its message (created_at shifted by +k seconds, so every copy keeps the
   base's time order and the copies interleave), that message's conversation (its raw export JSON not copied:
   ``'{}'``), and every entity it names except
   three shared ones — the owner (most rows as subject), the most frequent other subject and the most frequent
   object; so the owner, a mid-frequency person and a frequent object grow with N while the other entities stay
   rare (1–5 rows each). Only messages that carry an assertion are copied (parent_id NULL), time qualifiers point
   at the base's time mention, retractions are not copied; stages 5+ and the search index are not built;
3. N synthetic beliefs written by ``benchmarks/beliefs.py``'s builder (``SynthBeliefs``) in one stage run;
4. ``ANALYZE``.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kenning.api import Vault  # noqa: E402
from kenning.store.connection import transaction  # noqa: E402

STAGES_0_4 = "0,1,2A,2B,3,4"


def base_vault(cache: Path, conversations: int, seed: int = 42) -> Path:
    """The ingested base vault (stages 0–4 of a synthetic export), built once per size and cached."""
    from kenning.bench.synth import write_export

    db = cache / f"facts-base-{conversations}-{seed}.db"
    if db.exists():
        return db
    cache.mkdir(parents=True, exist_ok=True)
    src = cache / f"facts-base-{conversations}-{seed}.json"
    write_export(src, conversations, seed=seed)
    tmp = db.with_suffix(".tmp.db")
    for p in cache.glob(tmp.name + "*"):
        p.unlink()
    with Vault.open(tmp, overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([str(src)], as_of="2025-01-01T00:00:00Z", stages=STAGES_0_4)
    tmp.rename(db)
    return db


def _cols(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _copy_sql(conn, table: str, over: dict[str, str], src: str) -> str:
    """INSERT INTO table SELECT … with some columns replaced by expressions (``x`` is the source row, ``k.n`` the
    copy number, ``k.s`` its id suffix)."""
    cols = _cols(conn, table)
    return (f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(over.get(c, 'x.' + c) for c in cols)} "
            f"FROM {src}")


def shared_entities(conn) -> dict[str, str]:
    """The three entities every copy shares: the owner, the most frequent other subject, the most frequent object
    — of the base vault, or of a replicated one (copies' own entities, ids with ``~``, never count)."""
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    owner = one("SELECT subject_entity_id FROM assertions GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT 1")
    mid = one(f"SELECT subject_entity_id FROM assertions WHERE subject_entity_id <> '{owner}' "
              "AND subject_entity_id NOT LIKE '%~%' GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT 1")
    obj = one(f"SELECT object_entity_id FROM assertions WHERE object_entity_id NOT IN ('{owner}', '{mid}') "
              "AND object_entity_id NOT LIKE '%~%' GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT 1")
    return {"owner": owner, "mid": mid, "object": obj}


def replicate(conn, n: int) -> dict[str, Any]:
    """Copies of the base vault's assertions (with their messages, conversations and non-shared entities, ids
    suffixed ``~k``) until the vault holds ``n`` assertions (the last copy partial); one transaction."""
    base = conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0]
    copies = max(1, -(-n // base))  # the base itself is copy 0
    rem = n - base * (copies - 1)     # rows of the last copy
    shared = shared_entities(conn)
    keep = "(" + ",".join(f"'{e}'" for e in shared.values()) + ")"
    ent = lambda col: f"CASE WHEN x.{col} IS NULL OR x.{col} IN {keep} THEN x.{col} ELSE x.{col} || k.s END"  # noqa: E731
    t0 = time.perf_counter()
    with transaction(conn):
        conn.execute("PRAGMA defer_foreign_keys = ON")
        conn.execute("CREATE TEMP TABLE bench_k (n INTEGER PRIMARY KEY, s TEXT NOT NULL)")
        conn.executemany("INSERT INTO temp.bench_k VALUES (?, ?)", [(k, f"~{k}") for k in range(1, copies)])
        conn.execute("CREATE TEMP TABLE bench_m AS SELECT DISTINCT message_id FROM assertions")
        conn.execute("CREATE TEMP TABLE bench_c AS SELECT DISTINCT m.conversation_id FROM messages m "
                     "JOIN temp.bench_m USING (message_id)")
        conn.execute("CREATE TEMP TABLE bench_e AS SELECT entity_id FROM entities WHERE entity_id NOT IN " + keep
                     + " AND entity_id IN (SELECT subject_entity_id FROM assertions UNION "
                       "SELECT object_entity_id FROM assertions)")
        conn.execute(_copy_sql(conn, "entities", {
            "entity_id": "x.entity_id || k.s", "entity_key": "x.entity_key || k.s",
            "canonical_name": "x.canonical_name || ' #' || k.n"},
            "entities x JOIN temp.bench_e USING (entity_id) CROSS JOIN temp.bench_k k"))
        conn.execute(_copy_sql(conn, "conversations", {
            "conversation_id": "x.conversation_id || k.s", "current_node_message_id": "NULL",
            "raw_conversation_json": "'{}'",  # the export's JSON of the whole conversation: ~32 KB a copy
            "import_key": "x.import_key || k.s", "raw_sha256": "x.raw_sha256 || k.s"},
            "conversations x JOIN temp.bench_c USING (conversation_id) CROSS JOIN temp.bench_k k"))
        conn.execute(_copy_sql(conn, "messages", {
            "message_id": "x.message_id || k.s", "conversation_id": "x.conversation_id || k.s", "parent_id": "NULL",
            "created_at_utc": "strftime('%Y-%m-%dT%H:%M:%fZ', x.created_at_utc, '+' || k.n || ' seconds')"},
            "messages x JOIN temp.bench_m USING (message_id) CROSS JOIN temp.bench_k k"))
        conn.execute(_copy_sql(conn, "assertions", {
            "assertion_id": "x.assertion_id || k.s", "message_id": "x.message_id || k.s",
            "assertion_key": "x.assertion_key || k.s", "fact_key": "x.fact_key || k.s",
            "subject_entity_id": ent("subject_entity_id"), "object_entity_id": ent("object_entity_id"),
            "object_signature": f"CASE WHEN x.object_entity_id IS NULL THEN x.object_signature "
                                f"ELSE 'E:' || {ent('object_entity_id')} END",
            "superseded_by_assertion_id": "x.superseded_by_assertion_id || k.s"},
            # the last copy partial: its first rows by id among those no correction points away from (so every
            # superseded_by it holds has its target in the same copy)
            f"assertions x CROSS JOIN temp.bench_k k WHERE k.n < {copies - 1 if rem < base else copies} OR "
            f"x.assertion_id IN "
            f"(SELECT assertion_id FROM assertions WHERE superseded_by_assertion_id IS NULL ORDER BY assertion_id "
            f"LIMIT {rem})"))
        conn.execute("UPDATE predicates SET assertion_count = (SELECT COUNT(*) FROM assertions a "
                     "WHERE a.predicate_id = predicates.predicate_id)")
        for t in ("bench_k", "bench_m", "bench_c", "bench_e"):
            conn.execute(f"DROP TABLE temp.{t}")
    total = conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0]
    return {"base_assertions": base, "copies": copies, "assertions": total, "shared": shared,
            "messages": conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0],
            "entities": conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0],
            "replicate_s": round(time.perf_counter() - t0, 1)}


def beliefs_bench():
    """benchmarks/beliefs.py, loaded by its path: a bare ``import beliefs`` finds whatever module of that name came
    first (under pytest, the ``tests/beliefs`` package)."""
    name = "kenning_bench_beliefs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("beliefs.py"))
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def build(cache: Path, n: int, base_conversations: int = 500, beliefs: int | None = None) -> tuple[Path, dict]:
    """The size-N vault (N assertions, N beliefs), cached under ``cache/queries-<N>/``."""
    bb = beliefs_bench()

    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage

    nb = n if beliefs is None else beliefs
    root = cache / f"queries-{n}-{nb}-{base_conversations}"
    db = root / "kenning.db"
    if db.exists():  # reused; a migration added since it was built is applied here, and timed
        t = time.perf_counter()
        with Vault.open(db) as v:
            pass
        return db, {"reused": str(db), "open_and_migrate_s": round(time.perf_counter() - t, 1)}
    t0 = time.perf_counter()
    base = base_vault(cache, base_conversations)
    base_s = time.perf_counter() - t0
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    tmp = root / "building.db"
    shutil.copyfile(base, tmp)
    info: dict[str, Any] = {"base_s": round(base_s, 1)}
    with Vault.open(tmp) as v:
        info.update(replicate(v.conn, n))
        t = time.perf_counter()
        if nb:
            run_stage(v.conn, bb.SynthBeliefs(nb, root / "ws"), v.config, Clock.from_option("2026-01-01T00:00:00Z"))
        info["beliefs_s"] = round(time.perf_counter() - t, 1)
        info["beliefs"] = nb
        t = time.perf_counter()
        v.conn.execute("ANALYZE")
        info["analyze_s"] = round(time.perf_counter() - t, 1)
    tmp.rename(db)
    info["build_s"] = round(time.perf_counter() - t0, 1)
    return db, info


def fact_cases(conn, shared: dict[str, str]) -> dict[str, tuple[str | None, str | None, str | None]]:
    """(--about, --predicate, --role) of each timed `facts` shape, by the names the CLI would be given."""
    name = lambda eid: conn.execute("SELECT canonical_name FROM entities WHERE entity_id=?", (eid,)).fetchone()[0]  # noqa: E731
    rare = conn.execute("SELECT e.canonical_name FROM entities e JOIN assertions a ON a.subject_entity_id=e.entity_id "
                        "WHERE e.canonical_name LIKE '% #%' GROUP BY e.entity_id HAVING COUNT(*) = 1 "
                        "ORDER BY e.entity_id LIMIT 1").fetchone()
    top_pred = conn.execute("SELECT canonical_label FROM predicates ORDER BY assertion_count DESC, predicate_id "
                            "LIMIT 1").fetchone()[0]
    rare_pred = conn.execute("SELECT canonical_label FROM predicates WHERE assertion_count > 0 "
                             "ORDER BY assertion_count, predicate_id LIMIT 1").fetchone()[0]
    return {
        "about me (owner)": ("me", None, None),
        f"about {name(shared['mid'])} (mid-frequency subject)": (name(shared["mid"]), None, None),
        f"about {name(shared['object'])} (frequent object)": (name(shared["object"]), None, None),
        f"about {rare[0] if rare else '?'} (rare)": (rare[0] if rare else name(shared["mid"]), None, None),
        f"about me --predicate {top_pred}": ("me", top_pred, None),
        f"--predicate {rare_pred} (rare)": (None, rare_pred, None),
        f"about me --predicate {rare_pred} (rare)": ("me", rare_pred, None),
        "about me --role assistant": ("me", None, "assistant"),
        "no filter": (None, None, None),
    }


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def _pp(wall: list[float], cpu: list[float], base_p50: float, base_p95: float) -> dict[str, Any]:
    return {"n": len(wall), "p50_ms": round(_pct(wall, 50), 3), "p95_ms": round(_pct(wall, 95), 3),
            "cpu_p50_ms": round(_pct(cpu, 50), 3), "cpu_p95_ms": round(_pct(cpu, 95), 3),
            "ratio_p50_to_pk": round(_pct(wall, 50) / max(base_p50, 1e-6), 1),
            "ratio_p95_to_pk": round(_pct(wall, 95) / max(base_p95, 1e-6), 1)}


def _time(fn: Callable[[Any], Any], args: list) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for a in args:
        c, t = time.process_time(), time.perf_counter()
        fn(a)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return wall, cpu


def facts_cli_path(conn, about: str | None, predicate: str | None, role: str | None, limit: int = 200) -> list[dict]:
    """What `kenning facts --about … --predicate … --role …` runs (without --valid-at/--believed-at)."""
    from kenning.cli.facts import fact_filters, fact_view
    from kenning.store import assertions as asql

    sid, preds, _ = fact_filters(conn, about, predicate)
    return [fact_view(r) for r in asql.facts(conn, subject_ids=sid, predicate_norms=preds, role=role, limit=limit)]


def ids_digest(views: list[dict]) -> str:
    """sha256 of the answer's assertion ids in order (before/after a change: the same rows, the same order)."""
    import hashlib

    return hashlib.sha256("\n".join(v["assertion_id"] for v in views).encode()).hexdigest()[:16]


def digests(db: Path) -> dict[str, dict]:
    """``ids_digest`` of every timed shape and the wall ms of that one (second) call — run by each checkout on the
    same vault to compare their answers."""
    out = {}
    with Vault.open(db, readonly=True) as v:
        cases = fact_cases(v.conn, shared_entities(v.conn))
        for k, c in cases.items():
            facts_cli_path(v.conn, *c)
            t = time.perf_counter()
            got = facts_cli_path(v.conn, *c)
            out[k] = {"ids_sha256": ids_digest(got), "rows": len(got), "ms": round((time.perf_counter() - t) * 1000, 2)}
    return out


def measure(db: Path, reps: int, seed: int = 42) -> dict[str, Any]:
    """`facts` (each shape ``reps`` times, shapes interleaved) and `why` (beliefs.py's query mix, ``reps`` per
    kind), each next to a primary-key lookup on its own table (baseline, same run)."""
    import os

    bb = beliefs_bench()

    from kenning.store import beliefs as bsql

    rng = random.Random(seed)
    out: dict[str, Any] = {"load_avg_before": [round(x, 2) for x in os.getloadavg()]}
    with Vault.open(db, readonly=True) as v:
        conn = v.conn
        n_ass = conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0]
        ids = [r[0] for r in conn.execute("SELECT assertion_id FROM assertions ORDER BY random() LIMIT ?",
                                          (reps * 5,))]
        shared = shared_entities(conn)
        cases = fact_cases(conn, shared)
        for c in cases.values():  # warm: first-use costs (imports, statement cache)
            facts_cli_path(conn, *c)
        pk = lambda i: conn.execute("SELECT * FROM assertions WHERE assertion_id=?", (i,)).fetchall()  # noqa: E731
        bw, bc = _time(pk, ids)
        b50, b95 = _pct(bw, 50), _pct(bw, 95)
        res: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in cases}
        rows: dict[str, int] = {}
        for _ in range(reps):  # interleaved: load drift hits every shape alike
            for k, c in cases.items():
                w, cp = _time(lambda a: facts_cli_path(conn, *a), [c])
                res[k][0].extend(w)
                res[k][1].extend(cp)
        digest: dict[str, str] = {}
        for k, c in cases.items():
            got = facts_cli_path(conn, *c)
            rows[k] = len(got)
            digest[k] = ids_digest(got)
        allw = [x for w, _ in res.values() for x in w]
        allc = [x for _, cp in res.values() for x in cp]
        out["facts"] = {"assertions": n_ass, "baseline_pk_lookup": {"n": len(bw), "p50_ms": round(b50, 4),
                                                                   "p95_ms": round(b95, 4),
                                                                   "cpu_p50_ms": round(_pct(bc, 50), 4)},
                        "all_shapes": _pp(allw, allc, b50, b95),
                        "shapes": {k: {**_pp(w, cp, b50, b95), "rows": rows[k], "ids_sha256": digest[k]}
                                   for k, (w, cp) in res.items()}}
        total = bsql.count_beliefs(conn, bb.WS)
        if total:
            out["why"] = {"beliefs": total, **bb.why_mix(v, total, reps, rng)}
    out["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    return out
