"""Stages 2A–3 throughput on a synthetic export, beside a plain regex pass over the same texts.

    python benchmarks/entities.py [--messages 20000] [--rounds 3] [--compare-src PATH] [--corpus synth|builtin]

The corpus is kenning.bench.synth (about 20 messages per conversation, long assistant answers) or, with
``--corpus builtin``, this script's own dense generator (short lines full of names, lexicon terms, detector
bait, times). Stages 0–1 build the vault once; each round then copies it and runs 2A, 2B and 3 (and an
unchanged rerun) in a fresh process, importing Kenning from this checkout or, with ``--compare-src``, from
another source tree too (e.g. ``git archive <commit> src | tar -x -C /tmp/base`` → ``/tmp/base/src``). Rounds
alternate between the trees and the best of each figure is kept: the machine is shared, so the figures of
one run are the ones to compare, and CPU time (process_time) is the one other load disturbs least.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AS_OF = "2025-01-01T00:00:00Z"
STAGES = ("2A", "2B", "3")
MESSAGES_PER_SYNTH_CONVERSATION = 20  # kenning.bench.synth's average

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
    """The dense corpus (tests/test_entities_equivalence.py fingerprints it: keep it as it is)."""
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


def build(db: Path, export: Path) -> None:
    """Stages 0–1 into ``db`` (with Kenning imported from the tree on PYTHONPATH when run as ``--build``)."""
    from kenning.api import Vault

    with Vault.open(db) as v:
        v.ingest([export], as_of=AS_OF, stages="0,1")


# ---- child: time the stages in a fresh process, with Kenning imported from the tree on PYTHONPATH ----------------

def child(db: Path, export: Path) -> None:
    import kenning.pipeline.stages  # noqa: F401  (imported before timing, as after stages 0–1 of a real ingest)
    from kenning.api import Vault

    out: dict = {"stages": {}}
    with Vault.open(db) as v:
        for stage in STAGES:
            w, c = time.perf_counter(), time.process_time()
            v.ingest([export], as_of=AS_OF, stages=stage)
            out["stages"][stage] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
        w, c = time.perf_counter(), time.process_time()
        v.ingest([export], as_of=AS_OF, stages=",".join(STAGES))
        out["rerun"] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
        out["rows"] = {t: v.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in (
            "entity_mention_candidates", "entity_mentions", "time_mentions", "entities", "lexicon_terms")}
        out["content"] = content_digests(v.conn)
    print(json.dumps(out))


# Every table stages 2A, 2B and 3 write (as tests/test_entities_equivalence.py fingerprints them).
STAGE_TABLES = ("entity_mention_candidates", "entity_mentions", "time_mentions", "ner_model_runs", "ner_model_run_io",
                "detect_message_state", "stage_fingerprints", "entities", "lexicon_builds", "lexicon_term_candidates",
                "lexicon_terms", "entity_canonicalization_runs", "entity_canonical_name_history")


def content_digests(conn) -> dict[str, str]:
    """sha256 of each stage table's rows in primary-key order: two trees compared with --compare-src must write the
    same bytes (the same config and clock give the same run ids)."""
    import hashlib

    out = {}
    for t in STAGE_TABLES:
        pk = [r[1] for r in sorted(conn.execute(f'PRAGMA table_info("{t}")'), key=lambda r: r[5]) if r[5]]
        h = hashlib.sha256()
        for row in conn.execute(f'SELECT * FROM "{t}" ORDER BY {", ".join(pk)}'):
            h.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
            h.update(b"\n")
        out[t] = h.hexdigest()
    return out


def run_child(src: Path, base_db: Path, export: Path, workdir: Path) -> dict:
    db = workdir / "round.db"
    for p in (db, Path(str(db) + "-wal"), Path(str(db) + "-shm")):
        p.unlink(missing_ok=True)
    shutil.copy(base_db, db)
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run([sys.executable, __file__, "--child", str(db), str(export)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"stages failed with {src}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- parent -------------------------------------------------------------------------------------------------------

def regex_baseline(db: Path) -> tuple[float, float, int]:
    """A plain regex pass (emails, URLs, capitalized words, ISO dates) over the same texts, read from the vault."""
    from kenning.store.connection import open_store

    rx = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|https?://\S+|\b[A-Z][a-z]+\b|\d{4}-\d{2}-\d{2}")
    conn = open_store(db, readonly=True)
    w, c = time.perf_counter(), time.process_time()
    hits = 0
    for (text,) in conn.execute("SELECT text_raw FROM messages WHERE text_raw IS NOT NULL "
                                "ORDER BY conversation_id, order_index, message_id"):
        hits += sum(1 for _ in rx.finditer(text))
    w, c = time.perf_counter() - w, time.process_time() - c
    conn.close()
    return w, c, hits


def best_of(runs: list[dict]) -> dict:
    stages = {s: {k: min(r["stages"][s][k] for r in runs) for k in ("wall", "cpu")} for s in STAGES}
    total = {k: min(sum(r["stages"][s][k] for s in STAGES) for r in runs) for k in ("wall", "cpu")}
    rerun = {k: min(r["rerun"][k] for r in runs) for k in ("wall", "cpu")}
    return {"stages": stages, "total": total, "rerun": rerun, "rows": runs[-1]["rows"],
            "content": runs[-1].get("content")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corpus", choices=("synth", "builtin"), default="synth")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--compare-src", type=Path, help="another Kenning source tree to time the same way")
    ap.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "out")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from kenning.api import Vault

    args.workdir.mkdir(parents=True, exist_ok=True)
    stem = f"entities-{args.corpus}-{args.messages}-{args.seed}"
    export, base_db = args.workdir / f"{stem}.json", args.workdir / f"{stem}.db"
    for p in (base_db, Path(str(base_db) + "-wal"), Path(str(base_db) + "-shm")):
        p.unlink(missing_ok=True)
    if args.corpus == "synth":
        from kenning.bench.synth import write_export

        write_export(export, max(1, args.messages // MESSAGES_PER_SYNTH_CONVERSATION), args.seed)
    else:
        builtin_export(export, args.messages, args.seed)
    if args.compare_src:
        # Stages 0–1 by the compared (older) tree: this checkout upgrades the vault when it opens it (before its
        # timing starts), whereas an older tree cannot open a vault a newer migration changed.
        subprocess.run([sys.executable, __file__, "--build", str(base_db), str(export)], check=True,
                       env={**os.environ, "PYTHONPATH": str(args.compare_src.resolve())})
    else:
        build(base_db, export)
    import apsw  # a plain read: Kenning's own open would upgrade the compared tree's vault (V7)

    conn = apsw.Connection(str(base_db), flags=apsw.SQLITE_OPEN_READONLY)
    n_msgs = conn.execute("SELECT COUNT(*) FROM messages WHERE text_raw IS NOT NULL").fetchone()[0]
    chars = conn.execute("SELECT SUM(length(text_raw)) FROM messages").fetchone()[0]
    conn.close()

    trees = {"this checkout": ROOT / "src"}
    if args.compare_src:
        trees = {f"compared ({args.compare_src})": args.compare_src.resolve(), **trees}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, src in trees.items():
            runs[name].append(run_child(src, base_db, export, args.workdir))
    base_w, base_c, base_hits = min((regex_baseline(base_db) for _ in range(args.rounds)), key=lambda r: r[1])

    print(f"corpus: {n_msgs:,} messages with text, {chars:,} characters ({args.corpus}, seed {args.seed}); "
          f"best of {args.rounds} rounds, fresh process each")
    results = {name: best_of(r) for name, r in runs.items()}
    for name, res in results.items():
        print(f"\n{name}")
        print(f"{'step':<14}{'wall s':>9}{'CPU s':>9}{'msg/s (CPU)':>13}")
        for s in STAGES:
            w, c = res["stages"][s]["wall"], res["stages"][s]["cpu"]
            print(f"{'stage ' + s:<14}{w:9.2f}{c:9.2f}{n_msgs / c:13,.0f}")
        w, c = res["total"]["wall"], res["total"]["cpu"]
        print(f"{'stages 2A–3':<14}{w:9.2f}{c:9.2f}{n_msgs / c:13,.0f}")
        print(f"{'rerun':<14}{res['rerun']['wall']:9.2f}{res['rerun']['cpu']:9.2f}")
        print(f"ratio to the regex baseline (CPU): {c / base_c:.1f}×; rows: "
              + ", ".join(f"{k} {v:,}" for k, v in res["rows"].items()))
    print(f"\nbaseline (one regex pass over the same texts): wall {base_w:.2f} s, CPU {base_c:.2f} s, "
          f"{n_msgs / base_c:,.0f} messages/s, {base_hits:,} hits")
    if args.compare_src:
        old, new = results.values()
        print(f"speed-up of this checkout over the compared tree, stages 2A–3: CPU "
              f"{old['total']['cpu'] / new['total']['cpu']:.1f}×, wall {old['total']['wall'] / new['total']['wall']:.1f}×"
              f"; rows {'identical' if old['rows'] == new['rows'] else 'DIFFER'}; content of the stage tables "
              + ("not compared (the other tree's script predates it)" if not old["content"] else
                 "byte-identical" if old["content"] == new["content"] else
                 "DIFFERS in " + ", ".join(t for t in new["content"] if old["content"].get(t) != new["content"][t])))
        print("(expected to differ from a tree before docs/decisions.md N10–N12: ner_model_run_io, ner_model_runs, "
              "detect_message_state, stage_fingerprints)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "--build":
        build(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
