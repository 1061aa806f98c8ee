"""Stage 5 — temporal reasoning (seed 001 §5), one transaction.

seed rules → valid time per assertion (§5.4) → initial status (§5.5) → per (subject, predicate) group:
corrections, retractions, negation closures, functional invalidation (§5.7–§5.10, ``temporal.lifecycle``) →
conflict finalization (§5.11) → transaction-time history (T3, ``temporal.history``).

``assertion_temporalized``, ``invalidation_rules`` and the conflict tables are recomputed each run and come out
identical when nothing changed; ``assertion_tx_history`` only grows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from kenning.pipeline.runner import StageContext
from kenning.sources.jcs import canonicalize
from kenning.store import temporal as tsql
from kenning.temporal.history import Version, merge, replay_group
from kenning.temporal.lifecycle import CLOSED, Conflict, PassContext, run_passes
from kenning.temporal.rules import RuleBook, plan_rules, read_rules_file
from kenning.temporal.validtime import assign


class StageInputMissing(RuntimeError):
    pass


def _retraction_group(r: dict, by_id: dict) -> tuple[str, str] | None:
    if r["target_assertion_id"] and r["target_assertion_id"] in by_id:
        b = by_id[r["target_assertion_id"]]
        return b.subject_entity_id, b.predicate_id
    if r["target_fact_key"]:
        try:
            s, p, _sig = orjson.loads(r["target_fact_key"])
            return s, p
        except (ValueError, TypeError):
            return None
    return None


def _by_signature(bases: list, rets: list[dict], by_id: dict) -> list[tuple[list, list[dict]]]:
    sigs: dict[str, tuple[list, list[dict]]] = {}
    for b in bases:
        sigs.setdefault(b.object_signature, ([], []))[0].append(b)
    for r in rets:
        sig = None
        if r["target_assertion_id"] in by_id:
            sig = by_id[r["target_assertion_id"]].object_signature
        elif r["target_fact_key"]:
            try:
                sig = orjson.loads(r["target_fact_key"])[2]
            except (ValueError, TypeError, IndexError):
                sig = None
        if sig in sigs:
            sigs[sig][1].append(r)
    return [sigs[k] for k in sorted(sigs)]


def _stage4_ambiguous_retractions(rets: list[dict], by_id: dict, threshold: float) -> list[Conflict]:
    """T12: a retraction stage 4 found ambiguous (several facts, A19) has neither target nor fact key; its candidates
    form a RETRACTION_TARGET_NOT_UNIQUE group (key ["retract_ambig", retraction_id, "__NULL__"]). Nothing is
    retracted."""
    out = []
    for r in rets:
        if r["target_assertion_id"] or r["target_fact_key"] or r["confidence"] < threshold or not r["user_grounded"]:
            continue
        target = (orjson.loads(r["raw_retraction_json"] or "{}").get("target") or {})
        cands = sorted(a for a in target.get("candidate_assertion_ids") or [] if a in by_id)
        if target.get("outcome") == "AMBIGUOUS" and len(cands) >= 2:
            out.append(Conflict("RETRACTION_TARGET_NOT_UNIQUE", ["retract_ambig", r["retraction_id"], "__NULL__"],
                                set(cands), {"retraction_id": r["retraction_id"], "target_fact_key": None,
                                             "candidates": cands, "candidate_fact_keys":
                                             target.get("candidate_fact_keys"), "surface": r["surface_text"],
                                             "source": "stage4_ambiguous"}))
    return out


class TemporalReasoning:
    name = "5"
    title = "temporal reasoning"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        missing = tsql.missing_tables(ctx.conn)
        if missing:
            raise StageInputMissing(f"stage 5 needs stages 1–4 first; missing tables: {', '.join(missing)}")
        tcfg = ctx.config.pipeline.temporal_reasoning
        counts: Counter = Counter()
        started = ctx.started_at_utc
        # §5.2.2 rules
        text, origin = read_rules_file(tcfg.invalidation_rules)
        rule_rows, skipped = plan_rules(text, origin, ctx.ids, tsql.predicate_ids(ctx.conn))
        for s in skipped:
            ctx.event("INFO", "RULE_PREDICATE_UNKNOWN", f"rule for {s['predicate_label']!r} skipped: no such predicate "
                      "in this vault", **s)
        book = RuleBook(rule_rows)
        # §5.4–5.5 valid time and eligibility
        times = tsql.time_mentions_of_assertion_messages(ctx.conn)
        texts = tsql.message_texts(ctx.conn)
        bases = [assign(a, times.get(a["message_id"], []), texts.get(a["message_id"]), tcfg, started)
                 for a in tsql.iter_stage5_assertions(ctx.conn)]
        by_id = {b.assertion_id: b for b in bases}
        tx_of = {b.assertion_id: b.tx for b in bases}
        rets = []
        for r in tsql.retractions_for_stage5(ctx.conn):
            r["user_grounded"] = r["role"] == "user"
            r["tx"] = r["created_at_utc"] or started
            r["time_ok"] = r["timestamp_quality"] == "original"
            r["message_time"] = r["created_at_utc"]
            rets.append(r)
        salience = tsql.entity_salience(ctx.conn) if tcfg.use_salience_conflict_tiebreak else {}

        def make_pc(tau: str | None) -> PassContext:
            known = (lambda aid: aid in tx_of) if tau is None else (lambda aid: aid in tx_of and tx_of[aid] <= tau)
            return PassContext(threshold_close=tcfg.threshold_close, margin=tcfg.confidence_supersession_margin,
                               tier_tiebreak=tcfg.use_detector_tier_tiebreak,
                               salience_tiebreak=tcfg.use_salience_conflict_tiebreak,
                               temporal_bound_ends_validity=tcfg.temporal_bound_ends_validity,
                               transition_wins_ties=tcfg.transition_wins_ties,
                               observed_states=tcfg.observed_states_eligible,
                               rule_for=book.rule_for, salience=salience, known=known)

        groups: dict[tuple[str, str], list] = {}
        for b in bases:
            groups.setdefault((b.subject_entity_id, b.predicate_id), []).append(b)
        g_rets: dict[tuple[str, str], list] = {}
        for r in rets:
            g = _retraction_group(r, by_id)
            if g is None:
                counts["retractions_without_target"] += 1
                continue
            g_rets.setdefault(g, []).append(r)
        for g in g_rets:
            groups.setdefault(g, [])
        states: dict = {}
        conflicts = []
        versions: dict[str, list[Version]] = {}
        full_pc = make_pc(None)
        for g in sorted(groups):
            gb = groups[g]
            st, cf = run_passes(gb, g_rets.get(g, []), full_pc)
            states.update(st)
            conflicts.extend(cf)
            if gb:
                rule = book.rule_for(gb[0].predicate_id, gb[0].subject_entity_type)
                functional = rule.is_functional and rule.policy == "close_previous_on_newer_state"
                if functional:
                    versions.update(replay_group(gb, g_rets.get(g, []), make_pc, True, tx_of))
                else:
                    # without the functional walk, claims interact only within one object (negation, retraction
                    # by fact key, correction): replay each object on its own
                    for sig_bases, sig_rets in _by_signature(gb, g_rets.get(g, []), by_id):
                        versions.update(replay_group(sig_bases, sig_rets, make_pc, False, tx_of))
        conflicts.extend(_stage4_ambiguous_retractions(rets, by_id, tcfg.threshold_close))
        for r in rets:
            if r["confidence"] < tcfg.threshold_close:
                counts["retractions_below_threshold"] += 1
            elif not r["user_grounded"]:
                counts["retractions_not_user"] += 1

        # history: append, never rewrite (T3)
        stored = tsql.stored_history(ctx.conn)
        now = ctx.clock.now()
        closes, inserts = [], []
        final_versions: dict[str, list[tuple[str, str | None, str]]] = {}
        for aid in sorted(versions):
            old = stored.get(aid, [])
            ups, new, how = merge(versions[aid], old, now)
            counts[f"history_{how.lower()}"] += 1
            if how == "LATE_KNOWLEDGE":
                ctx.warn("LATE_KNOWLEDGE", "an assertion's earlier history differs from what was recorded; the "
                         "change is recorded at ingest time", assertion_id=aid)
            upd = {v: (to, cr) for v, to, cr in ups}
            seq = [(r["tx_from_utc"], upd.get(r["version"], (r["tx_to_utc"], None))[0], r["status"]) for r in old]
            for v, to, cr in ups:
                closes.append((to, cr, aid, v))
            n0 = len(old)
            for i, ver in enumerate(new):
                inserts.append((aid, n0 + i, ver.tx_from, ver.tx_to, *ver.key, ver.reason, ver.cause, None,
                                ctx.run_id))
                seq.append((ver.tx_from, ver.tx_to, ver.key[0]))
            final_versions[aid] = seq
        for aid in sorted(set(stored) - set(versions)):
            last = stored[aid][-1]
            if last["tx_to_utc"] is None:
                closes.append((max(now, last["tx_from_utc"]), "WITHDRAWN", aid, last["version"]))
                counts["history_withdrawn"] += 1

        # §5.11 conflicts
        detected = tsql.conflict_detected_at(ctx.conn)
        tsql.clear_stage5(ctx.conn)
        tsql.insert_rules(ctx.conn, rule_rows)
        t_rows = []
        for b in bases:
            s = states[b.assertion_id]
            seq = final_versions.get(b.assertion_id) or [(b.tx, None, s.status)]
            superseded_at = None
            if s.status in CLOSED:
                i = len(seq) - 1
                while i > 0 and seq[i - 1][2] == s.status:
                    i -= 1
                superseded_at = seq[i][0]
            raw = {**b.raw, "events": s.events, "status_reason": s.reason if s.status != "ineligible" else None}
            t_rows.append((b.assertion_id, s.valid_time_type, s.valid_from, s.valid_to, s.valid_until_hint, s.status,
                           s.superseded_by, s.retracted_by, s.negated_by, s.rule_id, canonicalize(raw), seq[0][0],
                           superseded_at))
            counts[f"status_{s.status}"] += 1
            counts[f"time_source_{b.time_source.lower()}"] += 1
        tsql.insert_temporalized(ctx.conn, t_rows)
        merged: dict[str, Any] = {}
        for c in conflicts:
            k = canonicalize(c.key)
            if k in merged:
                merged[k].members |= c.members
            else:
                merged[k] = c
        g_rows, m_rows = [], []
        for k in sorted(merged):
            c = merged[k]
            gid = ctx.ids.make("conflict", k)
            g_rows.append((gid, c.conflict_type, k, detected.get(k, started),
                           canonicalize({**c.raw, "conflict_type": c.conflict_type})))
            m_rows.extend((gid, aid) for aid in sorted(c.members))
            counts[f"conflicts_{c.conflict_type}"] += 1
        tsql.insert_conflicts(ctx.conn, g_rows, m_rows)
        tsql.close_history(ctx.conn, closes)
        tsql.insert_history(ctx.conn, inserts)
        if tcfg.publish_beliefs:
            from kenning.beliefs.ledger import BeliefPublishError, publish_beliefs
            from kenning.temporal.feed import conversation_beliefs

            items, fcounts = conversation_beliefs(tsql.feed_rows(ctx.conn), tsql.conflicts(ctx.conn), ctx.ids,
                                                  ctx.config.beliefs.statement_max_chars)
            counts.update(fcounts)
            if items:
                try:   # the ledger checks everything before it writes anything
                    counts.update(publish_beliefs(ctx.conn, ctx.config.beliefs.default_workspace, items,
                                                  ctx).counts())
                except BeliefPublishError as e:
                    ctx.warn("BELIEF_FEED_REJECTED", "the conversation beliefs were not published; stage 5 itself is "
                             "kept", problems=e.problems[:20])
                    counts["beliefs_rejected"] = len(items)
        counts["assertions"] = len(bases)
        counts["rules"] = len(rule_rows)
        counts["conflict_groups"] = len(g_rows)
        counts["history_rows_added"] = len(inserts)
        ctx.progress(records=len(bases), total=len(bases), file="stage 5", unit="assertions")
        return {k: counts[k] for k in sorted(counts)}
