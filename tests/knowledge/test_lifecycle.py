"""DOC72 §5.7 enums, §6 promotion (starting states, hysteresis, quality gates, canPromoteGeneric, routing,
procedure path), §42.2 candidate expiry and §2.2 sparsity tiers."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.config.models import NodeKind
from kenning.knowledge.confidence import apply_evidence
from kenning.knowledge.lifecycle import (LIFECYCLE_STATES, STALENESS_STATES, NodeLifecycleMetadata,
                                         auto_promotion_allowed, can_promote_generic, check_lifecycle_state,
                                         check_staleness_state, cleanup_archive_due, is_suggested_entity_routable,
                                         procedure_transition, repromotion_allowed, rolling_precision,
                                         sparsity_tier, starting_state)

KCFG = load_config().knowledge
CFG = KCFG.lifecycle
NOW = "2026-04-10T12:00:00.000Z"


def test_enums_and_normative_rules():
    assert STALENESS_STATES == ("fresh", "stale", "verification_required", "expired", "invalidated")
    assert LIFECYCLE_STATES == ("observed", "suggested", "confirmed", "managed", "archived", "merged", "split",
                                "retracted")
    with pytest.raises(ValueError, match="staleness state, never a lifecycle state"):
        check_lifecycle_state("stale")
    with pytest.raises(ValueError, match="not one of"):
        check_lifecycle_state("tombstoned")
    with pytest.raises(ValueError, match="staleness_state 'captured'"):
        check_staleness_state("captured")
    assert NodeLifecycleMetadata("observed", "captured").lifecycle_substate == "captured"
    with pytest.raises(ValueError):
        NodeLifecycleMetadata("stale")


def _alpha(kind: str, composite: bool = False) -> float:
    s = starting_state(kind, composite=composite)
    a, _ = (2.0, 2.0) if s.event_type is None else apply_evidence(2.0, 2.0, s.event_type, cfg=KCFG.confidence)
    return round(a, 6)


def test_starting_states_follow_the_seed_table():
    """§6.1, mapped onto the canonical enum (K45) with §6.1's starting α (K46)."""
    for kind in NodeKind.__args__:
        s = starting_state(kind)
        assert s.lifecycle_state in LIFECYCLE_STATES
        assert s.event_type is None or s.event_type in KCFG.confidence.event_weights
    p = starting_state("procedure")
    assert (p.lifecycle_state, p.lifecycle_substate, _alpha("procedure")) == ("observed", "captured", 2.75)
    c = starting_state("procedure", composite=True)
    assert (c.lifecycle_state, c.lifecycle_substate, c.event_type) == ("suggested", "candidate", None)
    g = starting_state("goal")
    assert (g.lifecycle_state, g.lifecycle_substate, _alpha("goal")) == ("managed", "active", 2.95)
    o = starting_state("obligation")
    assert (o.lifecycle_state, o.lifecycle_substate, _alpha("obligation")) == ("managed", "active", 2.65)
    assert (starting_state("work_product").lifecycle_state, _alpha("work_product")) == ("confirmed", 2.75)
    assert starting_state("application").lifecycle_state == "confirmed"
    assert _alpha("application") == 2.75  # K46: the trace §6.1 names, not its "0.95"
    assert starting_state("standing_procedure").lifecycle_substate == "candidate"
    assert starting_state("domain_concept").lifecycle_state == "suggested"
    assert starting_state("world_entity").lifecycle_state == "observed"
    assert starting_state("execution_trace").event_type is None
    assert starting_state("memory_directive").lifecycle_substate == "observation"
    with pytest.raises(ValueError, match="unknown node kind 'person'"):
        starting_state("person")
    with pytest.raises(ValueError, match="only procedures can be composite"):
        starting_state("goal", composite=True)


def test_hysteresis_cooldown_after_a_demotion():
    first = "2026-04-10T00:00:00.000Z"
    d = repromotion_allowed([first], "2026-04-10T23:59:59.999Z", CFG)
    assert not d.allowed and not d.needs_user_confirmation and d.cooldown_remaining_ms == 1
    assert "cooling down" in d.reason
    d = repromotion_allowed([first], "2026-04-11T00:00:00.000Z", CFG)
    assert d.allowed and d.consecutive_demotions == 1
    assert repromotion_allowed([], NOW, CFG).allowed


def test_two_consecutive_demotions_need_a_person():
    hist = ["2026-03-01T00:00:00.000Z", "2026-03-05T00:00:00.000Z"]
    d = repromotion_allowed(hist, NOW, CFG)  # long past the cooldown
    assert not d.allowed and d.needs_user_confirmation and d.consecutive_demotions == 2
    assert repromotion_allowed(hist, NOW, CFG, user_confirmed=True).allowed
    # a person's confirmation after the first demotion: only the second one counts
    d = repromotion_allowed(hist, NOW, CFG, reset_at="2026-03-02T00:00:00.000Z")
    assert d.allowed and d.consecutive_demotions == 1


def _outcome(kind: str, outcome: str, at: str = "2026-04-09T00:00:00.000Z") -> dict:
    return {"extracted_item_kind": kind, "outcome": outcome, "occurred_at": at}


def test_rolling_precision_counts_confirmations_against_corrections():
    outs = [_outcome("entity", "confirmed")] * 3 + [_outcome("entity", "used_successfully"),
                                                    _outcome("entity", "corrected"),
                                                    _outcome("entity", "ignored"), _outcome("entity", "promoted"),
                                                    _outcome("entity", "rejected", "2026-04-01T00:00:00.000Z")]
    assert rolling_precision(outs, NOW) == 0.8  # the rejection 9 days ago is outside the 7 days
    assert rolling_precision(outs, NOW, days=10) == pytest.approx(4 / 6)
    assert rolling_precision([_outcome("entity", "ignored")], NOW) is None
    assert rolling_precision([_outcome("entity", "rejected", "2026-04-10T12:00:00.001Z")], NOW) is None  # future


def test_quality_gate_floors_freeze_auto_promotion():
    ok = [_outcome("entity", "confirmed")] * 17 + [_outcome("entity", "corrected")] * 3  # 0.85: at the floor
    r = auto_promotion_allowed("entity", ok, NOW, CFG)
    assert r.allowed and r.precision == pytest.approx(0.85) and r.floor == 0.85 and r.action is None
    low = ok + [_outcome("entity", "contradicted")]
    r = auto_promotion_allowed("entity", low, NOW, CFG)
    assert not r.allowed and r.action == "disable_auto_promotion" and r.counted == 21
    # preference floor 0.75 is measured on memory_directive outcomes; entity outcomes do not count
    prefs = [_outcome("memory_directive", "confirmed")] * 3 + [_outcome("memory_directive", "rejected")]
    assert auto_promotion_allowed("preference", prefs + low, NOW, CFG).allowed  # exactly 0.75
    assert not auto_promotion_allowed("goal", [{"candidate_class": "goal", "outcome": "confirmed",
                                                "occurred_at": NOW}] * 8 + [_outcome("goal", "rejected")],
                                      NOW, CFG).allowed  # 8/9 < 0.90
    assert {k: v for k, v in CFG.quality_gates.floors.items()} == {
        "entity": 0.85, "relationship": 0.80, "preference": 0.75, "goal": 0.90, "obligation": 0.80,
        "procedure": None}
    r = auto_promotion_allowed("procedure", [_outcome("standing_procedure", "rejected")], NOW, CFG)
    assert r.allowed and r.floor is None and r.precision == 0.0
    assert auto_promotion_allowed("obligation", [], NOW, CFG).precision is None
    with pytest.raises(ValueError, match="unknown candidate class"):
        auto_promotion_allowed("vibe", [], NOW, CFG)


def test_can_promote_generic_operators():
    doc = {"confidence": 0.7, "payload": {"refs": ["a", "b"], "excerpt": "word", "nothing": None, "score": 0.8,
                                          "flag": True}}
    assert can_promote_generic(doc, None, 0.6) and not can_promote_generic(doc, None, 0.59)
    assert can_promote_generic(doc, [], 0.0)  # K49: [] is truthy in the seed's JavaScript; every() of none
    req = lambda f, op, v=None: {"field": f, "operator": op, "value": v}  # noqa: E731
    assert can_promote_generic(doc, [req("payload.refs", "exists")], 0)
    assert can_promote_generic(doc, [req("payload.nothing", "exists")], 0)  # null is not undefined
    assert not can_promote_generic(doc, [req("payload.missing", "exists")], 0)
    assert not can_promote_generic(doc, [req("payload.nothing.deeper", "exists")], 0)
    assert can_promote_generic(doc, [req("payload.refs", "min_count", 2)], 0)
    assert not can_promote_generic(doc, [req("payload.refs", "min_count", 3)], 0)
    assert not can_promote_generic(doc, [req("payload.excerpt", "min_count", 1)], 0)  # not an array
    assert can_promote_generic(doc, [req("payload.score", "confidence_gte", 0.8)], 0)
    assert not can_promote_generic(doc, [req("payload.score", "confidence_gte", 0.81)], 0)
    assert not can_promote_generic(doc, [req("payload.flag", "confidence_gte", 0)], 0)  # a boolean is no number
    assert can_promote_generic(doc, [req("payload.excerpt", "min_length", 4)], 0)
    assert not can_promote_generic(doc, [req("payload.excerpt", "min_length", 5)], 0)
    assert can_promote_generic({"t": "😀"}, [req("t", "min_length", 2)], 0)  # UTF-16 code units, like .length
    assert can_promote_generic(doc, [req("payload.refs.1", "min_length", 1)], 0)  # arrays index like JS
    assert can_promote_generic(doc, [req("payload.missing", "sounds_right", 1)], 0)  # unknown operator passes
    assert not can_promote_generic(doc, [req("payload.refs", "exists"), req("payload.missing", "exists")], 1.0)


def test_suggested_entity_routing():
    assert is_suggested_entity_routable(0.60, 2, True, CFG)
    assert not is_suggested_entity_routable(0.59, 2, True, CFG)
    assert not is_suggested_entity_routable(0.9, 1, True, CFG)
    assert not is_suggested_entity_routable(0.9, 3, False, CFG)


def test_procedure_transitions():
    t = procedure_transition("captured", 1, cfg=CFG)
    assert not t.changed and (t.lifecycle_state, t.lifecycle_substate) == ("observed", "captured")
    t = procedure_transition("captured", 2, cfg=CFG)
    assert t.changed and (t.lifecycle_state, t.lifecycle_substate) == ("confirmed", "validated")
    assert procedure_transition("candidate", 1, composite=True, cfg=CFG).lifecycle_substate == "validated"
    assert procedure_transition("captured", 1, user_taught=True, cfg=CFG).lifecycle_substate == "validated"
    assert procedure_transition("validated", 0, cfg=CFG).lifecycle_substate == "validated"
    t = procedure_transition("validated", 5, cross_skill_uses=1, cfg=CFG)
    assert (t.lifecycle_state, t.lifecycle_substate) == ("confirmed", "promoted")
    assert procedure_transition("captured", 2, cross_skill_uses=1, cfg=CFG).lifecycle_substate == "promoted"
    assert procedure_transition("promoted", 0, cfg=CFG).lifecycle_substate == "promoted"  # never backwards
    with pytest.raises(ValueError, match="procedure substate 'active'"):
        procedure_transition("active", 3, cfg=CFG)


def test_candidate_decay_and_suggestion_expiry():
    assert cleanup_archive_due("observed", "2026-03-27T12:00:00.000Z", NOW, CFG) is not None  # 14 days
    assert cleanup_archive_due("observed", "2026-03-27T12:00:00.001Z", NOW, CFG) is None
    assert cleanup_archive_due("suggested", "2026-03-20T00:00:00.000Z", NOW, CFG) is None  # 21 days < 30
    assert "archive" in cleanup_archive_due("suggested", "2026-03-01T00:00:00.000Z", NOW, CFG)
    assert cleanup_archive_due("confirmed", "2020-01-01T00:00:00.000Z", NOW, CFG) is None


def test_sparsity_tiers():
    for kind in ("domain_concept", "goal", "obligation", "standing_procedure", "work_product"):
        assert sparsity_tier(kind, cfg=CFG) == "A"
    for kind in ("procedure", "application"):
        assert sparsity_tier(kind, cfg=CFG) == "B"
    assert sparsity_tier("world_entity", entity_type="matter", lifecycle_state="confirmed") == "A"
    assert sparsity_tier("world_entity", important=True, lifecycle_state="confirmed") == "B"
    assert sparsity_tier("world_entity", entity_type="person", lifecycle_state="confirmed") == "C"
    assert sparsity_tier("world_entity", important=True, lifecycle_state="suggested") == "C"
    assert sparsity_tier("world_entity", entity_type="matter", lifecycle_state="observed") == "C"
    assert sparsity_tier("domain_concept", lifecycle_state="suggested") == "A"  # only entities are candidates
    with pytest.raises(ValueError, match="unknown node kind"):
        sparsity_tier("matter")
