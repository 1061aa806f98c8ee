"""Same search results before and after a change to the lexical index (issue 24 §2, decisions C1–C19).

Runs a fixed set of queries over a vault — every lexical lane on its own (plain, a speaker, a time range, each
kind, --as-of) and the whole search without vectors, once with the defaults (small vaults: every match ranked) and
once with the shared pool forced (``rank_all_below=1``: the pruned pool of a large vault, R40–R41) — and writes
each ranking (doc ids and scores, best first) to JSON. ``--compare BEFORE.json`` checks that every ranking is the
same: same documents in the same order, scores equal to ``--rel`` (1e-9) relative.

    python benchmarks/search_same.py --vault COPY.db --out before.json            # with the old tree
    python benchmarks/search_same.py --vault COPY2.db --out after.json --compare before.json

The vault is opened read-write (an older vault is upgraded): pass a copy. Queries are words of the vault's own
turns (every 97th turn, 2–4 of its words of 4+ letters, seeded), some with a speaker's name, some with a month."""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.retrieve.search import Searcher  # noqa: E402
from kenning.store import search as search_sql  # noqa: E402

WORD = re.compile(r"[A-Za-z]{4,}")


def make_queries(conn, n: int, seed: int = 24, turns: int = 0) -> list[str]:
    """``turns``: which turns the words come from (doc_rowid % 97 == turns; another value, other turns)."""
    rnd = random.Random(seed)
    texts = [t for (t,) in conn.execute(
        "SELECT m.text_raw FROM search_docs d JOIN messages m ON m.message_id = d.doc_id "
        "WHERE d.doc_kind = 'message' AND d.doc_rowid % 97 = ? ORDER BY d.doc_rowid", (turns,))]
    speakers = [s for s in search_sql.speakers(conn) if s and s.lower() not in ("user", "assistant", "system")]
    out: list[str] = []
    for i, t in enumerate(texts):
        words = list(dict.fromkeys(w.lower() for w in WORD.findall(t or "")))
        if len(words) < 2:
            continue
        q = " ".join(rnd.sample(words, min(len(words), rnd.randint(2, 4))))
        if speakers and i % 3 == 0:
            q = f"what did {rnd.choice(speakers)} say about {q}"
        elif i % 5 == 1:
            q = f"{q} in {rnd.choice(['May', 'June', 'March', 'October'])} 2023"
        out.append(q)
        if len(out) >= n:
            break
    return out


def rankings(v: Vault, queries: list[str], overrides: dict) -> list[dict]:
    from kenning.config.loader import load_config

    cfg = load_config(overrides={"retrieval": {"fts": overrides}}) if overrides else v.config
    s = Searcher(v.conn, cfg, embedder=False)
    speakers = [sp for sp in search_sql.speakers(v.conn) if sp][:3]
    out: list[dict] = []
    for q in queries:
        pq = s.parse(q, __import__("datetime").date(2024, 12, 31), None)
        filters = [{}, {"kinds": ["message"]}, {"kinds": ["entity"]}, {"as_of": "2023-06-30T23:59:59.999Z"},
                   {"start": "2023-03-01", "end": "2023-07-01"}]
        filters += [{"speakers": [sp]} for sp in speakers]
        for f in filters:
            s._pool, s._pool_terms = None, list(pq.terms)  # as search() does: one pool per query
            s._pool_speakers = [(sp, pq.terms) for sp in f.get("speakers", [])]
            rl = s.fts_lane("fts", pq.terms, 1.0, v.config.retrieval.lane_cap, **f)
            out.append({"q": q, "filter": f, "ranked": [[c.key, c.score] for c in rl.items]})
        res = s.search(q, k=20, now="2024-12-31")
        out.append({"q": q, "filter": "search", "ranked": [[h.get("message_id") or h.get("entity_id"), h["score"]]
                                                          for h in res.hits]})
    return out


def compare(a: list[dict], b: list[dict], rel: float) -> list[str]:
    diffs: list[str] = []
    if len(a) != len(b):
        return [f"{len(a)} rankings before, {len(b)} after"]
    for x, y in zip(a, b):
        if (x["q"], x["filter"]) != (y["q"], y["filter"]):
            diffs.append(f"different query order: {x['q']!r} / {y['q']!r}")
            continue
        ka, kb = [r[0] for r in x["ranked"]], [r[0] for r in y["ranked"]]
        if ka != kb:
            diffs.append(f"{x['q']!r} {x['filter']}: order differs at {next((i for i, (p, q) in enumerate(zip(ka, kb)) if p != q), min(len(ka), len(kb)))}")
            continue
        for (k, s1), (_k, s2) in zip(x["ranked"], y["ranked"]):
            if abs(s1 - s2) > rel * max(abs(s1), abs(s2), 1e-300):
                diffs.append(f"{x['q']!r} {x['filter']}: score of {k} {s1!r} vs {s2!r}")
                break
    return diffs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--compare")
    ap.add_argument("--rel", type=float, default=1e-9)
    args = ap.parse_args()
    t0 = time.perf_counter()
    v = Vault.open(Path(args.vault))
    qs = make_queries(v.conn, args.queries)
    got = {"queries": qs, "default": rankings(v, qs, {}), "pool": rankings(v, qs, {"rank_all_below": 1, "pool_min_ratio": 0})}
    v.close()
    Path(args.out).write_text(json.dumps(got))
    n = sum(len(r["ranked"]) for mode in ("default", "pool") for r in got[mode])
    print(f"{len(qs)} queries, {len(got['default']) + len(got['pool'])} rankings, {n} ranked items, "
          f"{time.perf_counter() - t0:.1f} s")
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        if before["queries"] != qs:
            print("the query sets differ (different vault content?)")
            sys.exit(2)
        diffs = [f"[{mode}] {d}" for mode in ("default", "pool") for d in compare(before[mode], got[mode], args.rel)]
        print(f"differences: {len(diffs)}")
        for d in diffs[:50]:
            print("  " + d)
        sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
