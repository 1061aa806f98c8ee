"""Stages 2A–3 throughput on a synthetic export, as a ratio to a plain regex pass over the same texts.

    python benchmarks/entities.py [--messages 100000] [--workdir benchmarks/out]

Uses kenning.bench.synth when it exists; otherwise a built-in generator of the same flavour (names,
lexicon terms, detector bait, times, code fences, emoji). Stages 0–1 (import) are not timed here.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.store.connection import open_store  # noqa: E402

USER = [
    "🎉 Project Phoenix update: PHX is on track, said my sister Anna on {date}.",
    "I moved to Paris in March 2023 with my partner Sam; yesterday we visited Lisbon.",
    "Mail anna@example.com or check https://example.com/phx/{n}?ref=mail#top about Blue Garden.",
    "Last week I met Dr. Smith at Acme Corp. 3 days ago Priya told me the budget is {n} EUR.",
    "My colleague Tom thinks ProjectPhoenix needs a new name. #deepwork @priya_k",
    "The build at /srv/phx/build-{n}/out.log failed with hash {hash}, ip 10.0.{a}.{b}.",
    "Remind me next month about the dentist and summer 2022 photos. Call +1 (415) 555-{n4}.",
]
ASSISTANT = [
    "Sure! Here is how Project Phoenix could work:\n```python\ndef phx_{n}():\n    return 'bob@code.example'\n```\n"
    "Let me know if Acme Corp needs more.",
    "> Quoted: Berlin is lovely in May.\nBased on that, CVE-2021-44228 and doi:10.1000/{n} are relevant.",
    "Great question about Blue Garden. On 2024-03-{d:02d} the team at Globex Corporation shipped it.",
]


def builtin_export(path: Path, messages: int, seed: int) -> None:
    rng = random.Random(seed)
    convs, per = [], 10
    t0 = 1_690_000_000.0
    for ci in range(max(1, messages // per)):
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        start = t0 + ci * 3600 * 7
        for mi in range(per):
            role = "user" if mi % 2 == 0 else "assistant"
            tpl = rng.choice(USER if role == "user" else ASSISTANT)
            text = tpl.format(n=rng.randrange(10**6), n4=rng.randrange(1000, 9999), a=rng.randrange(256),
                              b=rng.randrange(256), d=rng.randrange(1, 28), hash="%040x" % rng.getrandbits(160),
                              date=f"2024-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}")
            nid = f"c{ci}-m{mi}"
            ts = None if rng.random() < 0.05 else start + mi * 30
            mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
                "id": nid, "author": {"role": role}, "create_time": ts,
                "content": {"content_type": "text", "parts": [text]}, "recipient": "all", "metadata": {}}}
            mapping[parent]["children"].append(nid)
            parent = nid
        convs.append({"conversation_id": f"conv-{ci}", "title": f"conv {ci}", "create_time": start,
                      "update_time": start + 600, "mapping": mapping, "current_node": parent})
    path.write_text(json.dumps(convs, ensure_ascii=False), encoding="utf-8")


def baseline(db: Path) -> tuple[float, int]:
    """A plain regex pass (emails, URLs, capitalized words, ISO dates) over the same texts, read from the vault."""
    rx = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|https?://\S+|\b[A-Z][a-z]+\b|\d{4}-\d{2}-\d{2}")
    conn = open_store(db, readonly=True)
    t = time.perf_counter()
    n = 0
    for (text,) in conn.execute("SELECT text_raw FROM messages WHERE text_raw IS NOT NULL "
                                "ORDER BY conversation_id, order_index, message_id"):
        n += sum(1 for _ in rx.finditer(text))
    dt = time.perf_counter() - t
    conn.close()
    return dt, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "out")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    export = args.workdir / f"entities-{args.messages}.json"
    db = args.workdir / f"entities-{args.messages}.db"
    for p in (db, Path(str(db) + "-wal"), Path(str(db) + "-shm")):
        p.unlink(missing_ok=True)
    try:
        from kenning.bench.synth import write_export  # the shared generator, once it lands

        write_export(export, max(1, args.messages // 10), args.seed)
        source = "kenning.bench.synth"
    except ImportError:
        builtin_export(export, args.messages, args.seed)
        source = "builtin generator"
    with Vault.open(db) as v:
        v.ingest([export], as_of="2025-01-01T00:00:00Z", stages="0,1")
        n_msgs = v.conn.execute("SELECT COUNT(*) FROM messages WHERE text_raw IS NOT NULL").fetchone()[0]
        chars = v.conn.execute("SELECT SUM(length(text_raw)) FROM messages").fetchone()[0]
        timings = {}
        for stage in ("2A", "2B", "3"):
            t = time.perf_counter()
            r = v.ingest([export], as_of="2025-01-01T00:00:00Z", stages=stage)[0]
            timings[stage] = (time.perf_counter() - t, r.counts)
        t = time.perf_counter()
        again = v.ingest([export], as_of="2025-01-01T00:00:00Z", stages="2A,2B,3")
        rerun = time.perf_counter() - t
        counts = {n: v.conn.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0] for n in (
            "entity_mention_candidates", "entity_mentions", "time_mentions", "entities", "lexicon_terms")}
    base, base_hits = baseline(db)
    total = sum(t for t, _ in timings.values())
    print(f"corpus: {n_msgs:,} messages with text, {chars:,} characters ({source}, seed {args.seed})")
    for stage, (t, _) in timings.items():
        print(f"stage {stage}: {t:8.2f} s  {n_msgs / t:10,.0f} messages/s")
    print(f"stages 2A–3: {total:8.2f} s  {n_msgs / total:10,.0f} messages/s")
    print(f"baseline (one regex pass over the same texts): {base:.2f} s, {n_msgs / base:,.0f} messages/s, "
          f"{base_hits:,} hits")
    print(f"ratio stages 2A–3 / baseline: {total / base:.1f}× the baseline's time")
    print(f"rerun of 2A–3 on the unchanged vault: {rerun:.2f} s "
          f"({', '.join(f'{r.stage}: ' + ('skipped' if r.counts.get('skipped_unchanged') else str(r.counts.get('messages_processed', 0)) + ' processed') for r in again)})")
    print("rows:", ", ".join(f"{k} {v:,}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
