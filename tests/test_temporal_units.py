"""Stage 5's pure parts: alignment (T5), qualifier interpretation, the functional walk's tie-breaks and margins,
status precedence (§5.12)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kenning.temporal.lifecycle import PRECEDENCE, PassContext, Rule, State, run_passes
from kenning.temporal.validtime import Base, _interpret, alignment, assign

RULE = Rule("rule-lives", "p", "PERSON", True, "close_previous_on_newer_state")


def pc(**over) -> PassContext:
    base = dict(threshold_close=0.7, margin=0.01, tier_tiebreak=True, salience_tiebreak=False,
                temporal_bound_ends_validity=True, transition_wins_ties=True, rule_for=lambda p, t: RULE,
                salience={}, known=lambda a: True)
    base.update(over)
    return PassContext(**base)


def base(aid: str, sig: str, t: str, conf: float, tier: int = 1, otier: int | None = 4, aspect=None,
         polarity="positive", order: int = 0) -> Base:
    b = Base(assertion_id=aid, message_id=f"m-{aid}", subject_entity_id="s", subject_entity_type="PERSON",
             predicate_id="p", predicate_label="lives_in", object_signature=sig, fact_key=f"[s,p,{sig}]",
             modality="state", polarity=polarity, confidence=conf, subject_tier=tier, object_tier=otier,
             user_grounded=True, order=("c", order, f"m-{aid}", aid), tx=f"2024-01-0{order + 1}T00:00:00.000Z",
             tx_source="MESSAGE_TIME", superseded_by=None, supersession_type=None, aspect=aspect,
             valid_time_type="interval", valid_from=t, has_explicit=True, eligible=polarity == "positive")
    return b


def test_alignment_keeps_the_window_meaningful():
    """T5: 1/(1+gap·k) with k so that the window's edge scores exactly the minimum; the seed's 1/(1+gap) is 0.09
    at 10 characters, under its own 0.1 floor."""
    assert alignment(0, 200, 0.1) == 1.0
    assert alignment(200, 200, 0.1) == pytest.approx(0.1)
    assert alignment(201, 200, 0.1) == 0.0
    assert 0.1 < alignment(50, 200, 0.1) < alignment(10, 200, 0.1) < 1.0
    assert 1 / (1 + 10) < 0.1 < alignment(10, 200, 0.1)


def test_proximity_stays_in_the_claims_sentence():
    """T6: "I work at Acme Corp" after "since 2019." is two characters away but in another sentence."""
    text = "I live in Berlin since 2019. I work at Acme Corp."
    cfg = SimpleNamespace(time_link_proximity_chars=200, time_link_min_alignment=0.1, fallback_valid_from_asserted=True,
                          threshold_close=0.7, proximity_same_sentence=True, observed_states_eligible=False,
                          context_dated_by_conversation=True)
    tm = {"time_mention_id": "t1", "char_start": 23, "char_end": 27, "surface_text": "2019", "resolved_type":
          "interval", "valid_from_utc": "2019-01-01T00:00:00.000Z", "valid_to_utc": "2020-01-01T00:00:00.000Z",
          "confidence": 0.9}
    a = {"assertion_id": "a", "message_id": "m", "subject_entity_id": "s", "subject_entity_type": "PERSON",
         "predicate_id": "p", "predicate_label": "works_at", "object_signature": "E:x", "fact_key": "k",
         "modality": "state", "polarity": "positive", "confidence_final": 0.9, "subject_detection_tier": 1,
         "object_detection_tier": 4, "asserted_role": "user", "has_user_corroboration": 0, "conversation_id": "c",
         "order_index": 0, "asserted_at_utc": "2024-01-01T00:00:00.000Z", "superseded_by_assertion_id": None,
         "supersession_type": None, "temporal_qualifier_id": None, "temporal_qualifier_type": None,
         "timestamp_quality": "original", "char_start": 29, "char_end": 48}
    b = assign(a, [tm], text, cfg, "2025-01-01T00:00:00.000Z")
    assert b.time_source == "ASSERTED_AT_FALLBACK" and not b.eligible
    assert b.raw["time_link"]["candidates"][0]["gap"] == "2 (other sentence)"
    b2 = assign(a, [tm], text, SimpleNamespace(**{**vars(cfg), "proximity_same_sentence": False}), "x")
    assert b2.time_source == "PROXIMITY"
    # an imputed timestamp never gives a fallback valid_from (invariant 20)
    b3 = assign({**a, "timestamp_quality": "imputed_parent"}, [], text, cfg, "x")
    assert b3.valid_from is None and b3.raw["fallback_blocked_reason"] == "TIMESTAMP_NOT_ORIGINAL"


def test_during_on_an_instant_is_downgraded():
    flags: list[str] = []
    tm = {"resolved_type": "instant", "valid_from_utc": "2024-05-01T10:00:00.000Z", "valid_to_utc": None}
    assert _interpret("during", tm, flags) == ("instant", "2024-05-01T10:00:00.000Z", None, None)
    assert flags == ["DURING_INSTANT_DOWNGRADED"]
    iv = {"resolved_type": "interval", "valid_from_utc": "2024-05-01T00:00:00.000Z",
          "valid_to_utc": "2024-06-01T00:00:00.000Z"}
    assert _interpret("during", iv, []) == ("interval", iv["valid_from_utc"], iv["valid_to_utc"], None)
    assert _interpret("since", iv, []) == ("interval", iv["valid_from_utc"], None, None)
    assert _interpret("until", iv, []) == ("unknown", None, None, iv["valid_to_utc"])


def test_confidence_margin_supersedes():
    a, b = base("a", "E:berlin", "2019-01-01", 0.80), base("b", "E:paris", "2023-03-01", 0.85, order=1)
    st, cf = run_passes([a, b], [], pc())
    assert (st["a"].status, st["a"].valid_to, st["a"].superseded_by) == ("superseded", "2023-03-01", "b")
    assert st["b"].status == "active" and not cf
    assert st["a"].events[-1]["supersession_reason"] == "CONFIDENCE_MARGIN"


def test_tier_tiebreak_decides_a_near_tie():
    a, b = base("a", "E:x", "2019", 0.80, tier=2), base("b", "E:y", "2020", 0.805, tier=1, order=1)
    st, _ = run_passes([a, b], [], pc())
    assert st["a"].status == "superseded" and st["a"].events[-1]["supersession_reason"] == "DETECTOR_TIER_TIEBREAK"
    # the newer claim from a weaker detector: too close
    a, b = base("a", "E:x", "2019", 0.80, tier=1), base("b", "E:y", "2020", 0.805, tier=2, order=1)
    st, cf = run_passes([a, b], [], pc())
    assert st["a"].status == st["b"].status == "conflicted"
    assert [c.conflict_type for c in cf] == ["OBJ_CONFIDENCE_TOO_CLOSE"]
    # the tie-break switched off: confidence only, still too close
    st, cf = run_passes([base("a", "E:x", "2019", 0.80, tier=2), base("b", "E:y", "2020", 0.805, tier=1, order=1)],
                        [], pc(tier_tiebreak=False))
    assert st["a"].status == "conflicted"


def test_a_much_less_confident_newer_state_conflicts():
    a, b = base("a", "E:x", "2019", 0.95), base("b", "E:y", "2020", 0.72, order=1)
    st, cf = run_passes([a, b], [], pc())
    assert st["a"].status == st["b"].status == "conflicted"
    assert cf[0].raw["reason"] == "CUR_LOWER_CONFIDENCE"


def test_transition_wins_a_tie_and_only_a_tie():
    a, b = base("a", "E:x", "2019", 0.79), base("b", "E:y", "2023", 0.79, aspect="transition", order=1)
    st, _ = run_passes([a, b], [], pc())
    assert st["a"].status == "superseded" and st["a"].events[-1]["supersession_reason"] == "TRANSITION_TIEBREAK"
    st, _ = run_passes([a, b], [], pc(transition_wins_ties=False))
    assert st["a"].status == "conflicted"


def test_same_state_continues_and_an_instant_closed_becomes_an_interval():
    a, b = base("a", "E:x", "2019", 0.8), base("b", "E:x", "2020", 0.8, order=1)
    c = base("c", "E:y", "2021", 0.9, order=2)
    b.valid_time_type = "instant"
    st, _ = run_passes([a, b, c], [], pc())
    assert st["a"].status == "active"                     # x continues into b
    assert (st["b"].status, st["b"].valid_time_type, st["b"].valid_to) == ("superseded", "interval", "2021")


def test_non_functional_rules_never_close():
    a, b = base("a", "E:x", "2019", 0.8), base("b", "E:y", "2020", 0.9, order=1)
    st, cf = run_passes([a, b], [], pc(rule_for=lambda p, t: Rule("d", None, "*", False, "none")))
    assert st["a"].status == st["b"].status == "active" and not cf


def test_status_never_goes_down():
    s = State("ineligible", "unknown", None, None, None)
    for new in ("active", "retracted", "superseded", "conflicted", "negated", "active"):
        before = s.status
        s.set_status(new, "X", None)
        assert PRECEDENCE[s.status] >= PRECEDENCE[before]
    assert s.status == "retracted"


def test_retraction_by_fact_key_zero_one_many():
    """T12 (seed B25): zero matches make no group; several make RETRACTION_TARGET_NOT_UNIQUE."""
    a, b = base("a", "E:x", "2019", 0.8), base("b", "E:x", "2020", 0.8, order=1)
    r = {"retraction_id": "r1", "retraction_message_id": "m9", "char_start": 0, "target_assertion_id": None,
         "target_fact_key": "[s,p,E:x]", "retraction_type": "full", "confidence": 0.9, "surface_text": "not true",
         "user_grounded": True, "tx": "2024-02-01T00:00:00.000Z", "time_ok": True, "message_time": None}
    st, cf = run_passes([a, b], [r], pc())
    assert [c.conflict_type for c in cf] == ["RETRACTION_TARGET_NOT_UNIQUE"] and cf[0].members == {"a", "b"}
    assert st["a"].status == "active"
    st, cf = run_passes([a], [r], pc())
    assert st["a"].status == "retracted" and st["a"].retracted_by == "r1" and not cf
    st, cf = run_passes([a], [{**r, "target_fact_key": "[s,p,E:zzz]"}], pc())
    assert st["a"].status == "active" and not cf
    # below the threshold or not the user's: nothing
    st, _ = run_passes([a], [{**r, "confidence": 0.5}], pc())
    assert st["a"].status == "active"


def test_a_move_closes_a_state_the_user_also_negated_later():
    """T35 (the bundled sample): "I've lived in Berlin since 2019", "I moved to Paris in March 2023", "since April
    2023 I don't live in Berlin" — Berlin ends at the move (min of the two ends), stays negated, names Paris."""
    berlin = base("a", "E:berlin", "2019-01-01", 0.79)
    paris = base("b", "E:paris", "2023-03-01", 0.88, aspect="transition", order=1)
    neg = base("c", "E:berlin", "2023-04-01", 0.88, polarity="negative", order=2)
    st, cf = run_passes([berlin, paris, neg], [], pc())
    assert (st["a"].status, st["a"].valid_to, st["a"].superseded_by, st["a"].negated_by) == \
        ("negated", "2023-03-01", "b", "c")
    assert st["b"].status == "active" and st["b"].valid_to is None and not cf
    # a state negated before the next one starts is a gap, not a change: nothing is superseded
    early = base("c", "E:berlin", "2021-01-01", 0.88, polarity="negative", order=2)
    st, cf = run_passes([berlin, paris, early], [], pc())
    assert (st["a"].status, st["a"].valid_to, st["a"].superseded_by) == ("negated", "2021-01-01", None)
    # a newer state too close to call does not put the user's own ending in conflict
    plain = base("b", "E:paris", "2023-03-01", 0.79, order=1)
    st, cf = run_passes([berlin, plain, neg], [], pc())
    assert (st["a"].status, st["a"].valid_to, st["b"].status) == ("negated", "2023-04-01", "active") and not cf
