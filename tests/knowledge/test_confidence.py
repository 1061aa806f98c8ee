"""DOC72 §5 confidence: the seed's fixtures, each cap and its order, the 200 cap, the conflict flags."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.config import load_config
from kenning.knowledge.confidence import (apply_evidence, cap_evidence, compute_confidence, conflict_flag,
                                          conflict_score, confidence_breakdown, event_weight)

CFG = load_config().knowledge.confidence


def test_seed_procedure_fixture_step_by_step():
    """§5.5 "Example — procedure node": 2/2 → .50; taught → .60; 2 traces → .69; a day later (90 d) → .685."""
    a, b = CFG.prior.alpha, CFG.prior.beta
    assert round(compute_confidence(a, b, 0, 90), 2) == 0.50
    a, b = apply_evidence(a, b, "taught_by_user", cfg=CFG)
    assert a == pytest.approx(2.95) and b == 2.0
    assert round(compute_confidence(a, b, 0, 90), 2) == 0.60
    for _ in range(2):
        a, b = apply_evidence(a, b, "learned_from_trace", cfg=CFG)
    assert a == pytest.approx(4.45)
    assert round(compute_confidence(a, b, 0, 90), 2) == 0.69
    assert math.exp(-math.log(2) / 90) == pytest.approx(0.992, abs=5e-4)  # "decay ≈ 0.992"
    assert round(compute_confidence(a, b, 1, 90), 3) == 0.685
    for _ in range(10):  # "After 10 more successes: α ≈ 12, C_base ≈ 0.86, decayed ≈ 0.85"
        a, b = apply_evidence(a, b, "learned_from_trace", cfg=CFG)
    assert round(a) == 12 and round(compute_confidence(a, b, 0, 90), 2) == 0.86
    assert round(compute_confidence(a, b, 1, 90), 2) == 0.85


def test_seed_worked_examples():
    """§2.2: pineapple α 4.95 → .71; loss causation α 4.90 → .71 (two binding authorities + a confirmation,
    half-life 365, decay ≈ 1); Table of Contents α 5.45 → .73."""
    assert round(compute_confidence(4.95, 2, 0, 180), 2) == 0.71
    a, b = 2.0, 2.0
    for ev in ("supported_by_authority", "supported_by_authority", "confirmed_by_user"):
        a, b = apply_evidence(a, b, ev, cfg=CFG)
    assert a == pytest.approx(4.90)
    assert round(compute_confidence(a, b, 3, 365), 2) == 0.71
    assert round(compute_confidence(5.45, 2, 0, 90), 2) == 0.73


def test_evidence_cap_at_200_keeps_the_ratio_and_gives_new_evidence_impact():
    assert cap_evidence(150, 50) == (150, 50)  # exactly 200: untouched
    a, b = cap_evidence(300, 100)
    assert (a, b) == pytest.approx((150, 50)) and a / (a + b) == pytest.approx(0.75)
    assert compute_confidence(300, 100, 0, None) == pytest.approx(0.75)
    a, b = apply_evidence(150, 50, "confirmed_by_user", contradicts=True, cfg=CFG)
    assert a + b == pytest.approx(200) and b > 50  # stored capped: the next contradiction still moves the mean


def test_each_cap_and_their_order_after_decay():
    base = compute_confidence(9, 1, 0, 365)  # 0.9
    assert base == pytest.approx(0.9)
    assert compute_confidence(9, 1, 0, 365, domain_principle_no_authority=True) == pytest.approx(0.39)
    assert compute_confidence(9, 1, 0, 365, staleness_expired=True) == pytest.approx(0.675)
    assert compute_confidence(9, 1, 0, 365, staleness_invalidated=True) == 0.0
    assert compute_confidence(9, 1, 0, 365, superseded_authority=True) == pytest.approx(0.15)
    # applied after decay: one half-life halves 0.9 to 0.45, then min(0.45, 0.39)
    assert compute_confidence(9, 1, 365, 365, domain_principle_no_authority=True) == pytest.approx(0.39)
    assert compute_confidence(9, 1, 730, 365, domain_principle_no_authority=True) == pytest.approx(0.225)
    # order: the no-authority cap first, then ×0.75 → 0.2925 (the other order would give min(0.675, 0.39) = 0.39)
    both = compute_confidence(9, 1, 0, 365, domain_principle_no_authority=True, staleness_expired=True)
    assert both == pytest.approx(0.39 * 0.75)
    every = compute_confidence(9, 1, 0, 365, domain_principle_no_authority=True, staleness_expired=True,
                               staleness_invalidated=True, superseded_authority=True)
    assert every == 0.0


def test_no_half_life_means_no_decay():
    assert compute_confidence(3, 1, 10_000, None) == pytest.approx(0.75)
    assert CFG.half_life_days["application"] is None
    assert CFG.half_life_days["execution_trace"] is None and CFG.half_life_days["tool_capability"] is None
    assert CFG.half_life_days["obligation"] == 30 and CFG.half_life_days["domain_concept"] == 365


def test_breakdown_names_every_term():
    b = confidence_breakdown(4.45, 2.0, last_verified_at="2026-03-01T00:00:00.000Z", now="2026-03-02T00:00:00.000Z",
                             node_kind="procedure", staleness_state="expired",
                             flags={"domain_principle_no_authority": False, "superseded_authority": True}, cfg=CFG)
    assert b["age_days"] == 1.0 and b["half_life_days"] == 90
    assert b["beta_mean"] == pytest.approx(4.45 / 6.45)
    assert b["decay"] == pytest.approx(math.exp(-math.log(2) / 90))
    assert b["caps_applied"] == ["staleness_expired", "superseded_authority"]
    assert b["confidence"] == pytest.approx(0.15)
    assert b["conflict_score"] == pytest.approx((1 - 2.45 / 6.45) * 6.45 / 50) and b["flag"] is None
    fresh = confidence_breakdown(4.45, 2.0, last_verified_at="2026-03-02T00:00:00.000Z",
                                 now="2026-03-02T00:00:00.000Z", node_kind="procedure", staleness_state="fresh",
                                 flags=None, cfg=CFG)
    assert fresh["caps_applied"] == [] and round(fresh["confidence"], 2) == 0.69
    big = confidence_breakdown(300, 100, last_verified_at="2026-03-02T00:00:00.000Z", now="2026-03-01T00:00:00.000Z",
                               node_kind="application", staleness_state="stale", flags=[], cfg=CFG)
    assert (big["alpha"], big["beta"]) == pytest.approx((150, 50)) and big["age_days"] == 0.0
    assert big["half_life_days"] is None and big["decay"] == 1.0
    with pytest.raises(ValueError, match="unknown confidence policy flag"):
        confidence_breakdown(2, 2, last_verified_at="2026-03-02T00:00:00.000Z", now="2026-03-02T00:00:00.000Z",
                             node_kind="goal", staleness_state="fresh", flags=["stale"], cfg=CFG)
    with pytest.raises(ValueError, match="unknown node kind"):
        confidence_breakdown(2, 2, last_verified_at="2026-03-02T00:00:00.000Z", now="2026-03-02T00:00:00.000Z",
                             node_kind="person", staleness_state="fresh", flags=None, cfg=CFG)


def test_event_weights_and_contradictions():
    assert event_weight("confirmed_by_user", CFG) == 1.0
    assert event_weight("learned_from_chat", CFG) == 0.55
    assert event_weight("agent_observation", CFG) == 0.20
    assert event_weight("supported_by_statute", CFG) == event_weight("supported_by_rule", CFG) == 0.90
    assert len(CFG.event_weights) == 21
    with pytest.raises(ValueError, match="unknown evidence event 'learned_from_fax'.*confirmed_by_user"):
        event_weight("learned_from_fax", CFG)
    assert apply_evidence(2, 2, "learned_from_email", contradicts=True, cfg=CFG) == (2, pytest.approx(2.65))


def test_conflict_flags_at_the_boundaries():
    assert conflict_score(0, 0) == 0.0
    assert conflict_score(25, 25) == 1.0  # balanced, full mass
    assert conflict_score(10, 10) == pytest.approx(0.4)  # balanced, little mass: low evidence, not conflict
    assert conflict_score(40, 10) == pytest.approx(0.4)
    assert conflict_flag(0.7) == "caution" and conflict_flag(0.7000001) == "distinguish"
    assert conflict_flag(0.5) is None and conflict_flag(0.5000001) == "caution"
    assert conflict_flag(conflict_score(25, 25), CFG) == "distinguish"
    assert conflict_flag(conflict_score(15, 15), CFG) == "caution"  # 0.6
    assert conflict_flag(conflict_score(2, 2), CFG) is None


evidence = st.floats(min_value=0.01, max_value=1e6, allow_nan=False)


@given(evidence, evidence, st.floats(min_value=0, max_value=1e5), st.one_of(st.none(), st.floats(1, 3650)),
       st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_confidence_is_always_in_0_1(a, b, age, hl, f1, f2, f3, f4):
    c = compute_confidence(a, b, age, hl, domain_principle_no_authority=f1, staleness_expired=f2,
                           staleness_invalidated=f3, superseded_authority=f4)
    assert 0.0 <= c <= 1.0


@given(evidence, evidence)
def test_capped_evidence_keeps_the_ratio(a, b):
    ca, cb = cap_evidence(a, b)
    assert ca + cb <= 200 * (1 + 1e-12)
    assert ca / (ca + cb) == pytest.approx(a / (a + b), rel=1e-9)
    assert conflict_score(a, b) >= 0
