"""Back-link pipeline (issue 20 parts 1–2, DOC72 §42A.2) on a synthetic ChatGPT export plus a planted one-off
mention: speed of the `backlinks` stage beside stage 2A (entity detection over the same messages) measured in the
same run, promotion throughput beside a bare scoring loop over the same bundles, and the safety count the issue
asks for — single-mention promotions outside the seed's exception (alias-exact, graph context ≥ .7) must be 0.

    python benchmarks/backlinks.py --conversations 300 [--seed 7]

Speed figures are ratios against baselines from the same run; never asserted in tests."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.bench.synth import write_export  # noqa: E402
from kenning.knowledge.writer import KnowledgeWriter  # noqa: E402
from kenning.pipeline.clock import Clock  # noqa: E402
from kenning.store import upkeep as usql  # noqa: E402
from kenning.store.connection import write_scope  # noqa: E402
from kenning.upkeep import bundles as B  # noqa: E402
from kenning.upkeep.promotion import aggregate_bundles, promote_all  # noqa: E402

AS_OF = "2024-06-01T00:00:00Z"
HASH = {"embeddings": {"backend": "hash"}}
ONE_OFF = "Zorblax Industries"


def planted(path: Path) -> Path:
    """One conversation naming a one-off organisation once, beside people the export names often."""
    doc = {"format": "kenning.transcript/1", "transcript_id": "one-off", "title": "a one-off mention",
           "participants": [{"id": "me", "name": "Me"}, {"id": "kim", "name": "Kim"}],
           "sessions": [{"id": "s1", "started_at": "2023-03-03T10:00:00Z", "turns": [
               {"id": "t1", "speaker": "Me", "text": f"Kim said {ONE_OFF} called about the invoice."},
               {"id": "t2", "speaker": "Kim", "text": "I will call them back tomorrow."}]}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def single_mention_violations(conn, policy) -> tuple[int, int]:
    """(single-mention promotions, of them outside the seed's exception)."""
    singles = bad = 0
    for b in usql.all_bundles(conn):
        if b["promotion_state"] not in ("reinforced_relation", "user_verified") or b["support_count"] != 1:
            continue
        singles += 1
        m = usql.first_mention(conn, b["support_mention_ids"][0])
        ok = b["user_verdict"] == "approved" or (
            m and m["resolution_method"] == "alias_exact"
            and m["graph_context_score"] >= policy.single_observation_min_graph_context
            and b["relation_type"] not in policy.single_observation_blocked_relation_types)
        bad += 0 if ok else 1
    return singles, bad


def promotion_throughput(tmp: Path, n_nodes: int, n_bundles: int) -> dict:
    """n_bundles promotable bundles over n_nodes nodes: promote_all (scoring, budgets, one writer commit per edge)
    vs. the floor — the same edges inserted by bare SQL in one transaction."""
    from kenning.knowledge.ops import CreateNode, KnowledgeWrite

    v = Vault.open(tmp / "p.db", overrides=HASH)
    conn, cfg = v.conn, v.config
    clock = Clock.from_option(AS_OF)
    w = KnowledgeWriter(conn, cfg, clock=clock)
    ids = []
    with write_scope(conn):
        for i in range(n_nodes):
            r = w.write(KnowledgeWrite(source_event="bench", change_summary="node", ops=[CreateNode(
                node_kind="world_entity", canonical_name=f"Person {i:06d}", payload={"entity_type": "person"})]))
            ids.append(r.node_ids[0])
    rows = []
    pairs = [(ids[i], ids[(i * 7 + k) % n_nodes]) for i in range(n_nodes) for k in range(1, 40)]
    pairs = [(a, b) for a, b in pairs if a != b][:n_bundles]
    for a, b in pairs:
        bid = B.bundle_id(a, b, "collaborated_with")
        src, tgt = B.normalize_pair(a, b, "collaborated_with")
        for o in range(4):
            rows.append(dict(mention_id=f"{bid}{o}", observation_id=f"o{o}", source_node_id=src, resolved_node_id=tgt,
                             normalized_mention="x", span_class="canonical_alias", state="candidate_relation",
                             visibility_class="cloud_allowed", work_context_id=f"c{o % 2}", surface=f"s{o % 2}",
                             occurred_at=AS_OF, start_offset=0, end_offset=1, mention_text="x", is_nested=0,
                             parent_mention_id=None, group_id=f"g{o}", relation_hypothesis="collaborated_with",
                             resolution_method="alias_exact", resolution_confidence=0.9, graph_context_score=0.3,
                             suppression_reason=None, context_window="", polarity="support", evidence_bundle_id=bid))
    with write_scope(conn):
        usql.insert_mentions(conn, rows)
        bids = usql.all_bundle_ids_in_mentions(conn)
        t = time.perf_counter()
        aggregate_bundles(conn, cfg, bids, {})
        agg = time.perf_counter() - t
        t = time.perf_counter()
        c = promote_all(conn, cfg, w, clock.now())
        promo = time.perf_counter() - t
    t = time.perf_counter()
    with write_scope(conn):
        conn.execute("CREATE TEMP TABLE bare_edges(source_id, target_id, relation_type, confidence, payload)")
        conn.executemany("INSERT INTO bare_edges VALUES (?,?,?,?,?)",
                         [(a, b, "collaborated_with", 0.7, '{"learned_by":"x"}') for a, b in pairs])
    bare = time.perf_counter() - t
    v.close()
    return {"nodes": n_nodes, "bundles": len(bids), "aggregate_s": round(agg, 3),
            "aggregate_bundles_per_s": round(len(bids) / agg), "promote_s": round(promo, 3),
            "edges_promoted": c["edges_promoted"], "promotions_per_s": round(c["edges_promoted"] / promo),
            "bare_insert_s": round(bare, 4), "promote_vs_bare_insert": round(promo / bare)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=2000, help="nodes for the promotion-throughput part")
    ap.add_argument("--bundles", type=int, default=5000, help="promotable bundles for the throughput part")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        export = tmp / "export.json"
        write_export(export, a.conversations, a.seed)
        v = Vault.open(tmp / "v.db", overrides=HASH)
        secs: dict[str, float] = {}
        t0 = time.perf_counter()
        for path in (export, planted(tmp / "one-off.json")):
            for stage in ("0", "1", "2A", "2B", "3", "4", "5", "knowledge", "backlinks"):
                t = time.perf_counter()
                v.ingest([path], as_of=AS_OF, stages=stage)
                secs[stage] = secs.get(stage, 0.0) + time.perf_counter() - t
        total = time.perf_counter() - t0
        conn, cfg = v.conn, v.config
        mentions = usql.mention_counts(conn)
        counts = usql.bundle_counts(conn)
        singles, bad = single_mention_violations(conn, cfg.backlinks.promotion)
        one_off = [b for b in usql.all_bundles(conn) if any(
            (m := usql.get_mention(conn, mid)) and m["mention_text"] == ONE_OFF for mid in b["support_mention_ids"])]
        one_off_mentions = conn.execute("SELECT count(*) FROM mention_observations_derived WHERE mention_text=?",
                                        (ONE_OFF,)).fetchone()[0]
        one_off_candidates = conn.execute("SELECT count(*) FROM entity_creation_candidates WHERE "
                                          "suggested_canonical_name=?", (ONE_OFF,)).fetchone()[0]
        # promotion throughput: re-aggregate and re-decide every bundle vs. a bare loop scoring the same rows
        ids = [b["evidence_bundle_id"] for b in usql.all_bundles(conn)]
        writer = KnowledgeWriter(conn, cfg, clock=Clock.from_option(AS_OF))
        t = time.perf_counter()
        with write_scope(conn):
            aggregate_bundles(conn, cfg, ids, {})
            promote_all(conn, cfg, writer, Clock.from_option(AS_OF).now())
        full = time.perf_counter() - t
        t = time.perf_counter()
        rows = usql.all_bundles(conn)
        for r in rows:
            B.score(B.Bundle(**r), 0)
        bare = time.perf_counter() - t
        v.close()
        throughput = promotion_throughput(tmp, a.nodes, a.bundles)
    out = {"conversations": a.conversations, "seed": a.seed, "ingest_total_s": round(total, 2),
           "stage_s": {k: round(x, 3) for k, x in secs.items()},
           "backlinks_vs_2A": round(secs["backlinks"] / secs["2A"], 2),
           "mentions": mentions, "bundles": counts,
           "single_mention_promotions": singles, "single_mention_promotions_outside_exception": bad,
           "one_off_mentions_recorded": one_off_mentions, "one_off_entity_candidates": one_off_candidates,
           "one_off_bundles": len(one_off),
           "one_off_promoted": sum(1 for b in one_off if b["promotion_state"] != "candidate_relation"),
           "reaggregate_and_promote_s": round(full, 3), "bundles_per_s": round(len(ids) / full, 1) if full else None,
           "bare_scoring_s": round(bare, 4), "ratio_vs_bare": round(full / bare, 1) if bare else None,
           "promotion_throughput": throughput}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
