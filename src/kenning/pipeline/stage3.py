"""Stage 3 — entity canonicalization (seed 001 §3), one transaction.

Detector-role-weighted selection of each active entity's canonical name; only ``canonical_name`` changes,
and a history row is written exactly when it does. The lexicon bonus comes from the newest completed
lexicon build and is added before both selection and confidence (docs/decisions.md E26). Reruns: the
stage runs only when stage 2B's fingerprint or this stage's configuration changed (E10).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import groupby
from typing import Any

from kenning.detect.detectors import detector_tier
from kenning.pipeline.runner import StageContext
from kenning.sources.jcs import canonicalize, jcs_hash
from kenning.store import entities as esql
from kenning.store import mentions as msql

METHOD = "detector_role_weighted"


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


def choose_name(mentions: list[tuple], cfg: Any, trust: Any, lexicon_term: dict | None) -> dict[str, Any] | None:
    """§3.4.3–3.4.6 for one entity. ``mentions`` are (mention_id, surface, detector, confidence, role, created,
    conversation_id, order_index, message_id). Returns the decision (winner, confidence, audit) or None."""
    tier_w = {1: cfg.detector_weight_tier1, 2: cfg.detector_weight_tier2, 3: cfg.detector_weight_tier3,
              4: cfg.detector_weight_tier4}
    weighted: dict[str, float] = defaultdict(float)
    count: Counter = Counter()
    best_tier: dict[str, int] = {}
    first: dict[str, tuple] = {}
    by_tier: dict[str, Counter] = defaultdict(Counter)
    for mention_id, surface, detector, conf, role, created, conv, order_index, message_id in mentions:
        if surface is None:
            continue
        tier = detector_tier(detector)
        role_w = (trust.trust_weight_user if role == "user" else
                  trust.trust_weight_assistant_uncorroborated if role == "assistant" else cfg.other_role_weight)
        weighted[surface] += role_w * tier_w[tier] * (0.5 + 0.5 * conf)
        count[surface] += 1
        best_tier[surface] = min(best_tier.get(surface, 5), tier)
        by_tier[surface][tier] += 1
        occ = (created is None, created or "", conv, order_index, message_id, mention_id)
        if surface not in first or occ < first[surface]:
            first[surface] = occ
    if not weighted:
        return None

    def rank(ws: dict[str, float]) -> list[str]:
        return sorted(ws, key=lambda s: (-round(ws[s], 12), best_tier[s], -count[s], first[s], s))

    plain_winner = rank(weighted)[0]
    bonus_applied = False
    if lexicon_term is not None and lexicon_term["canonical_surface"] in weighted:
        weighted[lexicon_term["canonical_surface"]] += cfg.lexicon_canonical_bonus
        bonus_applied = True
    order = rank(weighted)
    win = order[0]
    total = sum(weighted.values())
    base = weighted[win] / total if total > 0 else 1.0
    confidence = _clamp(base + (4 - best_tier[win]) * cfg.detector_tier_confidence_bonus)
    return {
        "winner": win, "confidence": round(confidence, 9), "tier": best_tier[win],
        "bonus_changed_outcome": bonus_applied and plain_winner != win,
        "audit": {
            "surfaces": [{"surface": s, "weighted_score": round(weighted[s], 9), "unweighted_count": count[s],
                          "best_detector_tier": best_tier[s],
                          "tier_counts": {str(k): v for k, v in sorted(by_tier[s].items())},
                          "first_occurrence": {"created_at_utc": first[s][1] or None, "conversation_id": first[s][2],
                                               "order_index": first[s][3], "message_id": first[s][4],
                                               "mention_id": first[s][5]}} for s in order],
            "lexicon": None if lexicon_term is None else {
                "lexicon_term_id": lexicon_term["term_id"], "lexicon_score": lexicon_term["score"],
                "canonical_surface": lexicon_term["canonical_surface"], "bonus_applied": bonus_applied,
                "bonus": cfg.lexicon_canonical_bonus if bonus_applied else 0},
            "rationale": "weighted_score DESC > best_detector_tier ASC > unweighted_count DESC > first occurrence "
                         "ASC > surface ASC",
        },
    }


class EntityCanonicalization:
    name = "3"
    title = "entity canonicalization"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        cfg = ctx.config.entities.canonicalization
        trust = ctx.config.pipeline.trust_weights
        config_snapshot = {"canonicalization": cfg.model_dump(mode="json"), "trust_weights": trust.model_dump(mode="json")}
        build = esql.latest_build(ctx.conn)
        fingerprint = jcs_hash({"2B": msql.get_fingerprint(ctx.conn, "2B"),
                                "build": build["build_id"] if build else None, "config": config_snapshot})
        if msql.get_fingerprint(ctx.conn, "3") == fingerprint:
            return {"skipped_unchanged": 1}
        seq = esql.next_canon_seq(ctx.conn)
        started = ctx.clock.now()
        run_id = ctx.ids.make("canon_run", started, METHOD, seq)
        esql.insert_canon_run(ctx.conn, {"run_id": run_id, "method": METHOD, "started_at_utc": started,
                                         "config_json": canonicalize(config_snapshot), "pipeline_run_id": ctx.run_id})
        terms: dict[str, dict] = {}
        if build is not None:
            for t in esql.terms_of_build(ctx.conn, build["build_id"]):
                terms.setdefault(t["term_key"], t)
        mentions: dict[str, list[tuple]] = {}
        for eid, group in groupby(esql.mentions_for_canonicalization(ctx.conn), key=lambda r: r[0]):
            mentions[eid] = [(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]) for r in group]
        by_type: Counter = Counter()
        changes_by_type: Counter = Counter()
        tier_dist: Counter = Counter()
        surface_dist: Counter = Counter()
        confidences: list[float] = []
        hist_rows, name_updates = [], []
        processed = bonus_count = 0
        for ent in esql.active_entities_ordered(ctx.conn, cfg.enable_salience_prioritization):
            processed += 1
            by_type[ent["entity_type"]] += 1
            ms = mentions.get(ent["entity_id"], [])
            surface_dist[str(len({m[1] for m in ms if m[1] is not None}))] += 1
            term = terms.get(ent["entity_key"])
            if term is not None and term["entity_type_hint"] != ent["entity_type"]:
                term = None
            decision = choose_name(ms, cfg, trust, term)
            if decision is None:
                continue
            tier_dist[str(decision["tier"])] += 1
            if decision["bonus_changed_outcome"]:
                bonus_count += 1
            if decision["winner"] == ent["canonical_name"]:
                continue
            changes_by_type[ent["entity_type"]] += 1
            confidences.append(decision["confidence"])
            hist_rows.append((ctx.ids.make("canon_hist", ent["entity_id"], run_id), ent["entity_id"], run_id,
                              ent["canonical_name"], decision["winner"], METHOD, decision["confidence"], started,
                              canonicalize({**decision["audit"], "weights": config_snapshot,
                                            "previous_name": ent["canonical_name"]})))
            name_updates.append((decision["winner"], ent["entity_id"]))
        esql.insert_name_history(ctx.conn, hist_rows)
        esql.set_canonical_names(ctx.conn, name_updates)
        stats = {"entities_by_type": dict(sorted(by_type.items())), "changes_by_type": dict(sorted(changes_by_type.items())),
                 "avg_confidence": round(sum(confidences) / len(confidences), 9) if confidences else None,
                 "surface_distribution": dict(sorted(surface_dist.items(), key=lambda kv: int(kv[0]))),
                 "detector_tier_distribution": dict(sorted(tier_dist.items())),
                 "lexicon_bonus_applied_count": bonus_count,
                 "lexicon_build_id": build["build_id"] if build else None}
        esql.finish_canon_run(ctx.conn, run_id, ctx.clock.now(), processed, len(hist_rows), canonicalize(stats))
        msql.set_fingerprint(ctx.conn, "3", fingerprint, ctx.run_id)
        return {"entities_processed": processed, "names_changed": len(hist_rows), "canon_run_id": run_id,
                "lexicon_bonus_applied_count": bonus_count}
