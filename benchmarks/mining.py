"""Issue 18 part 8: precision / recall of the rule miners per class on `kenning bench synth --mining N` output,
and observations mined per second (baseline in the same run: the same loop with no extractor, i.e. building the
Observations alone — the ratio is the miners' cost per observation).

Usage: PYTHONPATH=src python benchmarks/mining.py [--conversations 400] [--seed 11] [--bank both] [--json]
       [--through-ingest]

``--through-ingest`` (audit, I172) measures the product path instead of the miners alone: the planted export goes
through `Vault.ingest` with every default stage and no model (the funnel decides which turns are mined, the queue
drains them), then the same scoring, with the export's message ids mapped to the vault's.

Two phrasing banks (decision I100): ``tuning`` — the rules are tuned on it, ``--misses`` prints its misses — and
``heldout`` — written before any tuning against it, only ever measured, its misses never printed.

Scoring (message level, class by class): a planted positive is found when a node of its class has provenance on
its message and the node's name contains the planted key word; every node of a class whose provenance message
carries no planted positive of that class is a false positive (look-alike negatives are planted to catch those).
Attribution classes: an acceptance is found when the suggested kind is written with a user_acceptance entry on the
accepting message; a rejection when nothing is written from it and the option is recorded; contested when
nothing is written; uncontested when the suggestion is written at `suggested`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import orjson

from kenning.bench.synth import write_export
from kenning.config import load_config
from kenning.intake.extractors import ExtractionContext, Observation, registered
from kenning.intake.mining.attribution import is_correction
from kenning.store import knowledge as ksql
from kenning.store import mining as msql
from kenning.store.connection import open_store

MISSES: list | None = None
CLASSES = ("goal", "obligation", "procedure", "standing_procedure", "memory_directive")
ATTRIBUTION = ("acceptance", "rejection", "contested", "uncontested")


def observations(convs: list[dict]) -> list[Observation]:
    out = []
    for c in convs:
        node, chain = c["mapping"][c["current_node"]], []
        while node and node.get("message"):
            chain.append(node["message"])
            node = c["mapping"].get(node["parent"])
        ctx: list[dict] = []
        for m in reversed(chain):
            text = m["content"]["parts"][0]
            at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(m["create_time"]))
            role = m["author"]["role"]
            out.append(Observation(observation_id=m["id"], unit_kind="message", text=text, role=role,
                                   conversation_id=c["id"], message_id=m["id"], created_at=at,
                                   critical=role == "user" and is_correction(text), context=tuple(ctx[-4:])))
            ctx.append({"role": role, "text": text, "message_id": m["id"]})
    return out


def score(conn, truth: list[dict]) -> dict[str, dict]:
    by_msg: dict[str, set[str]] = defaultdict(set)
    for t in truth:
        if t["positive"] and t["class"] in CLASSES:
            by_msg[t["message_id"]].add(t["class"])
    written: dict[str, list[dict]] = defaultdict(list)   # message id → nodes with provenance there
    nodes_by_kind: dict[str, list[dict]] = defaultdict(list)
    for kind in CLASSES:
        for n in ksql.list_nodes(conn, kind=kind, active=None, limit=10**6):
            prov = ksql.get_provenance(conn, n["id"])
            n = {**n, "_prov": prov}
            nodes_by_kind[kind].append(n)
            for p in prov:
                if p.get("message_id"):
                    written[p["message_id"]].append(n)
    rejected = {r["rejection_message_id"] for r in msql.rejected_options(conn)}
    res: dict[str, dict] = {}
    for cls in CLASSES:
        pos = [t for t in truth if t["class"] == cls and t["positive"]]
        hit = [t for t in pos if any(n["node_kind"] == cls and t["key"].lower() in n["canonical_name"].lower()
                                     for n in written[t["message_id"]])]
        tp = len(hit)
        if MISSES is not None:
            MISSES.extend((cls, t["text"], [n["canonical_name"] for n in written[t["message_id"]]]) for t in pos
                          if t not in hit)
        fp = 0
        for n in nodes_by_kind[cls]:
            own = [p for p in n["_prov"] if p["entry_type"] in ("user_statement", "agent_suggestion")]
            if own and not any(cls in by_msg.get(p["message_id"], ()) for p in n["_prov"]) and not any(
                    t["class"] in ATTRIBUTION and t.get("node_kind") == cls
                    and t.get("suggestion_message_id") in {p["message_id"] for p in n["_prov"]} for t in truth):
                fp += 1
                if MISSES is not None:
                    MISSES.append((cls + " FP", n["canonical_name"], own[0].get("verbatim_excerpt")))
        found = tp + fp
        res[cls] = {"planted": len(pos), "found": found, "tp": tp,
                    "precision": round(tp / found, 3) if found else 1.0,
                    "recall": round(tp / len(pos), 3) if pos else 1.0,
                    "negatives_planted": sum(1 for t in truth if t["class"] == cls and not t["positive"])}
    for cls in ATTRIBUTION:
        pos = [t for t in truth if t["class"] == cls]
        ok = prev = 0
        wrong_writes = 0
        for t in pos:
            ns = [n for n in written[t["suggestion_message_id"]] if n["node_kind"] == t["node_kind"]]
            accepted = [n for n in ns if any(p["entry_type"] == "user_acceptance" and p["message_id"] == t["message_id"]
                                             for p in n["_prov"])]
            if cls == "acceptance":
                ok += bool(accepted)
            elif cls == "rejection":
                ok += (not ns) and t["message_id"] in rejected
                wrong_writes += bool(ns)
            elif cls == "contested":
                ok += not ns
                wrong_writes += bool(ns)
            else:
                # written as a suggestion (a node already known from elsewhere keeps its state; the entry shows it)
                ok += any(not any(p["entry_type"] == "user_acceptance" and p["message_id"] == t["message_id"]
                                  for p in n["_prov"]) for n in ns)
            if MISSES is not None and ok == prev:
                MISSES.append((cls, t["text"], t.get("node_kind")))
            prev = ok
        res[cls] = {"planted": len(pos), "correct": ok, "recall": round(ok / len(pos), 3) if pos else 1.0,
                    "precision": round(1 - wrong_writes / len(pos), 3) if pos else 1.0}
    return res


def measure(bank: str, n: int, seed: int, show_misses: bool) -> dict:
    """One bank: its planted export, every observation through every miner (rules only), scored."""
    global MISSES
    MISSES = [] if show_misses else None
    tmp = Path(tempfile.mkdtemp(prefix=f"kenning-mining-bench-{bank}-"))
    stats = write_export(tmp / "export.json", 2, seed, mining_conversations=n, mining_bank=bank)
    manifest = orjson.loads(Path(stats["manifest_path"]).read_bytes())["mining"]
    convs = [c for c in orjson.loads((tmp / "export.json").read_bytes()) if str(c["id"]).startswith("mining-")]
    obs = observations(convs)
    cfg = load_config()
    conn = open_store(tmp / "v.db")
    ext = registered()
    chosen = [ext[n] for n in cfg.mining.extractors]

    t0 = time.perf_counter()
    base = [Observation(**{**o.__dict__}) for o in obs]  # baseline: building the observations only
    t_base = time.perf_counter() - t0
    del base

    ctx = ExtractionContext(conn=conn, config=cfg, depth="shallow", now="2026-01-01T00:00:00.000Z")
    t0 = time.perf_counter()
    with conn:
        for o in obs:
            for fn in chosen:
                fn(ctx, o)
    t_mine = time.perf_counter() - t0
    res = score(conn, manifest["planted"])
    conn.close()
    out = {"bank": bank, "observations": len(obs), "observations_per_s": round(len(obs) / t_mine, 1),
           "ms_per_observation": round(1000 * t_mine / len(obs), 3),
           "mine_vs_build_ratio": round(t_mine / max(t_base, 1e-9), 1), "classes": res}
    out["misses"] = MISSES
    return out


def measure_through_ingest(bank: str, n: int, seed: int) -> dict:
    """One bank through `kenning ingest` (funnel, queue, miners; hash embeddings, no model), scored as above."""
    from kenning.api import Vault

    tmp = Path(tempfile.mkdtemp(prefix=f"kenning-mining-ingest-{bank}-"))
    stats = write_export(tmp / "export.json", 2, seed, mining_conversations=n, mining_bank=bank)
    manifest = orjson.loads(Path(stats["manifest_path"]).read_bytes())["mining"]
    t0 = time.perf_counter()
    with Vault.open(tmp / "v.db", overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([tmp / "export.json"], as_of="2026-01-01T00:00:00Z", llm="none")
        t_ingest = time.perf_counter() - t0
        ids = {e: k for k, e in v.conn.execute("SELECT message_id, export_message_id FROM messages")}
        truth = [{**t, **{f: ids.get(t[f], "unmapped:" + str(t[f])) for f in ("message_id", "suggestion_message_id")
                          if t.get(f)}} for t in manifest["planted"]]
        decisions = dict(v.conn.execute("SELECT decision, count(*) FROM intake_dispatch_decisions GROUP BY 1"))
        res = score(v.conn, truth)
    return {"bank": bank, "path": "ingest", "messages": len(ids), "ingest_s": round(t_ingest, 1),
            "funnel_decisions": decisions, "classes": res, "misses": None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=400)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--bank", choices=("tuning", "heldout", "both"), default="both",
                    help="Which phrasing bank to measure (decision I100): the rules are tuned on 'tuning' only.")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--through-ingest", action="store_true",
                    help="Score what `kenning ingest` (funnel + queue + miners, no model) writes, not the miners "
                         "run on every turn (I172).")
    ap.add_argument("--misses", action="store_true",
                    help="Print every miss and false positive of the TUNING bank (the held-out bank's are never "
                         "printed: looking at them would make it a tuning bank).")
    a = ap.parse_args()
    banks = ("tuning", "heldout") if a.bank == "both" else (a.bank,)
    reports = {b: measure_through_ingest(b, a.conversations, a.seed) if a.through_ingest
               else measure(b, a.conversations, a.seed, a.misses and b == "tuning") for b in banks}
    report = {"conversations": a.conversations, "seed": a.seed,
              "banks": {b: {k: v for k, v in r.items() if k != "misses"} for b, r in reports.items()}}
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        for b, r in report["banks"].items():
            if r.get("path") == "ingest":
                print(f"[{b}] through ingest: {r['messages']} messages in {r['ingest_s']} s; funnel "
                      f"{r['funnel_decisions']}")
            else:
                print(f"[{b}] {r['observations']} observations, {r['observations_per_s']}/s "
                      f"({r['ms_per_observation']} ms each)")
            for cls, c in r["classes"].items():
                print(f"  {cls:20s} planted {c['planted']:4d}  P {c['precision']:.3f}  R {c['recall']:.3f}")
    for m in reports.get("tuning", {}).get("misses") or []:
        print("MISS", *m, sep=" | ")
    bad = [(b, c) for b, r in report["banks"].items() for c in CLASSES
           if r["classes"][c]["precision"] < 0.8 or r["classes"][c]["recall"] < 0.7]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
