"""The lifecycle passes of stage 5 (seed 001 §5.7–§5.12) as one pure function over a set of assertions.

``run_passes(bases, retractions, ctx)`` takes the assertions of one (subject, predicate) group — or any subset,
which is how transaction time is replayed (T3) — and the retractions aimed at them, and returns each
assertion's :class:`State` plus the conflicts found. Order of passes: corrections → retractions → negations →
functional invalidation; a status only ever moves up the precedence (§5.12).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kenning.sources.jcs import canonicalize
from kenning.temporal.validtime import Base

PRECEDENCE = {"ineligible": 0, "active": 1, "conflicted": 2, "superseded": 3, "negated": 4, "retracted": 5}
CLOSED = ("superseded", "retracted", "negated")


@dataclass
class State:
    status: str
    valid_time_type: str
    valid_from: str | None
    valid_to: str | None
    valid_until_hint: str | None
    superseded_by: str | None = None
    retracted_by: str | None = None
    negated_by: str | None = None
    rule_id: str | None = None
    reason: str = "FIRST_SEEN"
    cause: str | None = None
    events: list[dict] = field(default_factory=list)

    def key(self) -> tuple:
        return (self.status, self.valid_time_type, self.valid_from, self.valid_to, self.valid_until_hint,
                self.superseded_by, self.retracted_by, self.negated_by, self.rule_id)

    def set_status(self, new: str, reason: str, cause: str | None) -> bool:
        if PRECEDENCE[new] > PRECEDENCE[self.status]:
            self.status, self.reason, self.cause = new, reason, cause
            return True
        return False

    def close_at(self, t: str) -> None:
        """valid_to = min(valid_to, t); an instant that gets an end is an interval from then on (T9)."""
        if self.valid_to is None or t < self.valid_to:
            self.valid_to = t
        if self.valid_time_type == "instant":
            self.valid_time_type = "interval"
            self.events.append({"code": "VALID_TIME_TYPE_WIDENED", "to": "interval"})


@dataclass
class Conflict:
    conflict_type: str
    key: list
    members: set[str]
    raw: dict[str, Any]


@dataclass
class Rule:
    rule_id: str
    predicate_id: str | None
    subject_entity_type: str
    is_functional: bool
    policy: str


@dataclass
class PassContext:
    threshold_close: float
    margin: float
    tier_tiebreak: bool
    salience_tiebreak: bool
    temporal_bound_ends_validity: bool
    transition_wins_ties: bool
    rule_for: Callable[[str, str], Rule]
    salience: dict[str, float | None]
    known: Callable[[str], bool]   # is this assertion known at this transaction time (corrections need both ends)
    observed_states: bool = False  # T40–T45: undated claims are observations; repetitions are one state


def initial_state(b: Base) -> State:
    return State(status="active" if b.eligible else "ineligible", valid_time_type=b.valid_time_type,
                 valid_from=b.valid_from, valid_to=b.valid_to, valid_until_hint=b.valid_until_hint)


def _conf_tier_key(b: Base) -> tuple:
    return (-b.confidence, b.best_tier, b.subject_tier or 5, b.assertion_id)


def run_passes(bases: list[Base], retractions: list[dict], pc: PassContext) -> tuple[dict[str, State], list[Conflict]]:
    bases = sorted(bases, key=lambda b: b.order)
    by_id = {b.assertion_id: b for b in bases}
    st = {b.assertion_id: initial_state(b) for b in bases}
    conflicts: dict[str, Conflict] = {}

    def conflict(ctype: str, key: list, members, raw: dict) -> None:
        k = canonicalize(key)
        c = conflicts.get(k)
        if c is None:
            conflicts[k] = Conflict(ctype, key, set(members), raw)
        else:
            c.members |= set(members)

    # §5.7 corrections first
    for b in bases:
        if b.supersession_type == "correction" and b.superseded_by and pc.known(b.superseded_by):
            s = st[b.assertion_id]
            if s.set_status("superseded", "CORRECTED", b.superseded_by):
                s.superseded_by = b.superseded_by
            s.events.append({"code": "CORRECTION_SUPERSESSION_FROM_STAGE4", "by": b.superseded_by})

    # §5.8 retractions, in (message, char_start, id) order
    for r in sorted(retractions, key=lambda r: (r["retraction_message_id"], r["char_start"] is None,
                                                r["char_start"] or 0, r["retraction_id"])):
        rid = r["retraction_id"]
        if r["confidence"] < pc.threshold_close or not r["user_grounded"]:
            continue
        target = None
        if r["target_assertion_id"] and r["target_assertion_id"] in st:
            target = r["target_assertion_id"]
        elif r["target_assertion_id"] is None and r["target_fact_key"]:
            cands = sorted(b.assertion_id for b in bases if b.fact_key == r["target_fact_key"]
                           and st[b.assertion_id].status != "retracted" and b.polarity == "positive"
                           and b.tx <= r["tx"])
            if len(cands) == 1:
                target = cands[0]
            elif len(cands) > 1:
                # §5.8 ambiguity; with no candidate at all there is nothing to group (T12, seed B25)
                conflict("RETRACTION_TARGET_NOT_UNIQUE", ["retract_ambig", rid, r["target_fact_key"]], cands,
                         {"retraction_id": rid, "target_fact_key": r["target_fact_key"], "candidates": cands,
                          "surface": r["surface_text"]})
                continue
            else:
                continue
        if target is None:
            continue
        s, tb = st[target], by_id[target]
        if r["retraction_type"] == "correction" and tb.supersession_type == "correction":
            # projected by the correction pass as a supersession by the replacement (T8); keep the message link
            s.retracted_by = s.retracted_by or rid
            s.events.append({"code": "CORRECTION_RETRACTION_AS_SUPERSESSION", "retraction_id": rid})
            continue
        if r["retraction_type"] == "temporal_bound" and pc.temporal_bound_ends_validity:
            # T7 (seed B21): "I stopped X" ends X's validity; it does not say X was never true
            neg = next((b for b in bases if b.message_id == r["retraction_message_id"] and b.polarity == "negative"
                        and b.object_signature == tb.object_signature), None)
            bound, src = None, None
            if neg is not None and neg.has_explicit and neg.valid_from:
                bound, src = neg.valid_from, "NEGATIVE_CLAIM_VALID_FROM"
            elif r["time_ok"] and r["message_time"]:
                bound, src = r["message_time"], "RETRACTION_MESSAGE_TIME_UPPER_BOUND"
            changed = s.set_status("negated", "ENDED", rid)
            if changed:
                s.retracted_by = rid
                s.negated_by = neg.assertion_id if neg is not None else None
                if bound and s.valid_from and bound > s.valid_from:
                    s.close_at(bound)
                    s.events.append({"code": "TEMPORAL_BOUND_ENDS_VALIDITY", "retraction_id": rid, "valid_to": bound,
                                     "bound_source": src})
                else:
                    s.events.append({"code": "TEMPORAL_BOUND_NO_END", "retraction_id": rid, "bound": bound,
                                     "why": "no time" if not bound else "bound not after valid_from"})
            continue
        if s.set_status("retracted", "RETRACTED", rid):
            s.retracted_by = rid
        s.events.append({"code": "RETRACTED", "retraction_id": rid, "retraction_type": r["retraction_type"]})

    # §5.9 negation closures
    for n in bases:
        if n.polarity != "negative":
            continue
        if not (n.user_grounded and n.confidence >= pc.threshold_close and n.valid_from):
            continue
        same = [b for b in bases if b.polarity == "positive" and b.object_signature == n.object_signature
                and st[b.assertion_id].status == "active" and b.eligible]
        cands = [b for b in same if b.valid_from < n.valid_from]
        too_late = sorted(b.assertion_id for b in same if b.valid_from >= n.valid_from)
        closing = cands if len(cands) == 1 else []
        if pc.observed_states:
            # T42: mentions said without a date are the same state seen again, never a second candidate; two
            # dated states of the same fact are still ambiguous (§5.9)
            dated = [b for b in cands if not b.observed]
            closing = dated + [b for b in cands if b.observed] if len(dated) <= 1 else []
        for p in closing:
            s = st[p.assertion_id]
            s.set_status("negated", "NEGATED", n.assertion_id)
            s.negated_by = n.assertion_id
            s.close_at(n.valid_from)
            s.events.append({"code": "NEGATION_CLOSURE", "by": n.assertion_id, "valid_to": n.valid_from,
                             "negation_time_source": n.time_source})
        if len(cands) > 1 and not closing:
            conflict("NEGATION_AMBIGUOUS", ["neg", n.subject_entity_id, n.predicate_id, n.object_signature,
                                            n.valid_from or "__NULL__"],
                     [n.assertion_id] + [b.assertion_id for b in cands],
                     {"negation": n.assertion_id, "candidates": sorted(b.assertion_id for b in cands)})
        if too_late:
            # T10 (seed B24): a negation never closes a state that starts at or after it
            for aid in too_late:
                st[aid].events.append({"code": "NEGATION_PREDATES_TARGET", "negation": n.assertion_id})

    # §5.10 functional invalidation
    if bases:
        first = bases[0]
        rule = pc.rule_for(first.predicate_id, first.subject_entity_type)
        if rule.is_functional and rule.policy == "close_previous_on_newer_state":
            _functional(bases, st, rule, pc, conflict)
    return st, list(conflicts.values())


def _functional(bases: list[Base], st: dict[str, State], rule: Rule, pc: PassContext, conflict) -> None:
    # T35: a negated state was true until its negation, so it is still a state in the succession: a newer state
    # that starts while it held closes it there (valid_to = min), its status stays negated (§5.12)
    cands = [b for b in bases if st[b.assertion_id].status in ("active", "negated") and b.eligible and b.valid_from]
    if pc.observed_states:
        cands = _override_stale(cands, st, rule)
    if not cands:
        return
    s_id, p_id = cands[0].subject_entity_id, cands[0].predicate_id
    by_t: dict[str, list[Base]] = {}
    for b in cands:
        by_t.setdefault(b.valid_from, []).append(b)
    points = []   # (t, W or None, members)
    for t, group in by_t.items():
        sigs = sorted({b.object_signature for b in group})
        if len(sigs) > 1:
            ids = sorted(b.assertion_id for b in group)
            conflict("OBJECT_DISAGREEMENT", ["obj_disagree", s_id, p_id, t], ids,
                     {"valid_from_utc": t, "object_signatures": sigs, "members": ids})
            for b in group:
                if st[b.assertion_id].set_status("conflicted", "CONFLICTED", None):
                    st[b.assertion_id].events.append({"code": "OBJECT_DISAGREEMENT", "valid_from_utc": t})
            points.append((t, None, group))
            continue
        if len(group) > 1:
            ids = sorted(b.assertion_id for b in group)
            conflict("SAME_TIME_DUPLICATES", ["same_time_dup", s_id, p_id, sigs[0], t], ids,
                     {"valid_from_utc": t, "object_signature": sigs[0], "members": ids})
        key = (lambda b: (-b.confidence, -(pc.salience.get(b.object_signature[2:]) or 0), b.best_tier,
                          b.subject_tier or 5, b.assertion_id)) if pc.salience_tiebreak else _conf_tier_key
        w = sorted(group, key=key)[0]
        points.append((t, w, group))
    points.sort(key=lambda p: (p[0], p[1].assertion_id if p[1] is not None else min(b.assertion_id for b in p[2])))
    prev: tuple | None = None   # (t, W or None, members)
    run: list[Base] = []        # T43: every mention of the state prev belongs to
    for t, w, group in points:
        if prev is None:
            prev, run = (t, w, group), list(group)
            continue
        pt, pw, pgroup = prev
        if w is None or pw is None:
            # T13 (seed B23): a disputed timepoint has no representative; nothing is closed across it
            ids = sorted({b.assertion_id for b in pgroup if pw is None or b is pw} |
                         {b.assertion_id for b in group if w is None or b is w})
            conflict("OBJ_TRANSITION_CONFLICT", ["trans_conflict", s_id, p_id, pt, t], ids,
                     {"prev_valid_from": pt, "cur_valid_from": t, "reason": "DISPUTED_TIMEPOINT", "members": ids})
            prev, run = (t, w, group), list(group)
            continue
        if pw.object_signature == w.object_signature:
            prev = (t, w, group)
            run.extend(group)
            continue
        ps, cs = st[pw.assertion_id], st[w.assertion_id]
        if ps.status == "negated" and ps.valid_to is not None and ps.valid_to <= t:
            # T35: it had ended (negated) before this state began: a gap, not a change of state
            prev, run = (t, w, group), list(group)
            continue
        if ps.status == "conflicted" or cs.status == "conflicted":
            ids = sorted({pw.assertion_id, w.assertion_id})
            conflict("OBJ_TRANSITION_CONFLICT", ["trans_conflict", s_id, p_id, pt, t], ids,
                     {"prev_valid_from": pt, "cur_valid_from": t, "reason": "CONFLICTED_NEIGHBOUR", "members": ids})
            prev, run = (t, w, group), list(group)
            continue
        diff = w.confidence - pw.confidence
        wins, how = False, None
        prev_tier, cur_tier = pw.best_tier, w.best_tier
        if abs(diff) < pc.margin and pc.transition_wins_ties and w.aspect == "transition" \
                and pw.aspect != "transition":
            # T14: "I moved to Paris in March 2023" states the change itself; it wins a confidence tie
            wins, how = True, "TRANSITION_TIEBREAK"
        if not wins and pc.tier_tiebreak and abs(diff) < pc.margin:
            if cur_tier < prev_tier:
                wins, how = True, "DETECTOR_TIER_TIEBREAK"
        if not wins and w.confidence >= pw.confidence + pc.margin - 1e-12 and not (
                pc.tier_tiebreak and abs(diff) < pc.margin and cur_tier > prev_tier):
            wins, how = True, "CONFIDENCE_MARGIN"
        if not wins and pc.observed_states and (pw.observed or w.observed):
            # T44: an undated state says nothing about how sure a change is; the later statement is the news
            wins, how = True, "NEWER_STATEMENT"
        if wins:
            for m in (run if pc.observed_states else [pw]):
                ms = st[m.assertion_id]
                if ms.status not in ("active", "negated") or (ms.status == "negated" and ms.valid_to is not None
                                                              and ms.valid_to <= t):
                    continue
                ms.set_status("superseded", "SUPERSEDED", w.assertion_id)
                ms.superseded_by = w.assertion_id
                ms.rule_id = rule.rule_id
                ms.close_at(t)
                ms.events.append({"code": "FUNCTIONAL_SUPERSESSION", "by": w.assertion_id, "valid_to": t,
                                  "supersession_reason": how, "confidence_diff": round(w.confidence - m.confidence, 6),
                                  "prev_tier": m.best_tier, "cur_tier": cur_tier, "rule_id": rule.rule_id})
        elif ps.status == "negated":
            # T35: the user already ended the earlier state; a newer one too close to call leaves it as it is
            ps.events.append({"code": "NEGATED_STATE_NOT_CLOSED_BY", "by": w.assertion_id,
                              "confidence_diff": round(diff, 6)})
        else:
            for s_ in (ps, cs):
                s_.set_status("conflicted", "CONFLICTED", None)
            ids = sorted({pw.assertion_id, w.assertion_id})
            conflict("OBJ_CONFIDENCE_TOO_CLOSE", ["conf_close", s_id, p_id, pw.assertion_id, w.assertion_id], ids,
                     {"confidence_diff": round(diff, 6), "subject_detection_tiers": [pw.subject_tier, w.subject_tier],
                      "object_detection_tiers": [pw.object_tier, w.object_tier],
                      "reason": "CUR_LOWER_CONFIDENCE" if diff <= -pc.margin else "WITHIN_MARGIN"})
            for s_ in (ps, cs):
                s_.events.append({"code": "OBJ_CONFIDENCE_TOO_CLOSE", "pair": ids, "confidence_diff": round(diff, 6)})
        prev, run = (t, w, group), list(group)


def _override_stale(cands: list[Base], st: dict[str, State], rule: Rule) -> list[Base]:
    """T45: an undated mention said *before* a dated statement whose state already covers its time is stale ("I
    live in Berlin" in a profile, then "I moved to Paris in March" said later about a time before it): the later
    statement overrides it. It is superseded by that statement (valid time untouched) and starts no state."""
    dated = [b for b in cands if not b.observed and st[b.assertion_id].status == "active"]
    if not dated:
        return cands
    keep = []
    for o in cands:
        over = [y for y in dated if o.observed and y.object_signature != o.object_signature and y.tx > o.tx
                and y.valid_from <= o.valid_from and (st[y.assertion_id].valid_to is None
                                                     or st[y.assertion_id].valid_to > o.valid_from)]
        if not over:
            keep.append(o)
            continue
        y = min(over, key=lambda y: (y.tx, y.assertion_id))
        s = st[o.assertion_id]
        if s.set_status("superseded", "SUPERSEDED", y.assertion_id) or s.superseded_by is None:
            s.superseded_by = y.assertion_id
            s.rule_id = rule.rule_id
        s.events.append({"code": "OVERRIDDEN_BY_LATER_STATEMENT", "by": y.assertion_id,
                         "by_valid_from": y.valid_from, "rule_id": rule.rule_id})
    return keep
