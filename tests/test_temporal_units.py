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


# -- issue 22 §5: undated states (T40–T45) ---------------------------------------------------------------------------

def said(aid: str, sig: str, when: str, conf: float = 0.8, order: int = 0, polarity="positive", tx=None) -> Base:
    """An undated claim: an observation at the time it was said (T40)."""
    b = base(aid, sig, when, conf, polarity=polarity, order=order)
    b.valid_time_type, b.has_explicit, b.observed, b.time_source = "instant", False, True, "ASSERTED_AT_FALLBACK"
    b.tx = tx or when
    return b


def dated(aid: str, sig: str, start: str, tx: str, conf: float = 0.8, order: int = 0, **kw) -> Base:
    b = base(aid, sig, start, conf, order=order, **kw)
    b.tx = tx
    return b


def test_repetitions_are_one_state_and_a_later_job_closes_every_mention():
    """T43, T44: "I work at Acme" said three times, then "I started at Globex in January 2024" (dated, said later,
    a little less confident): the state — every mention — ends at the change; the seed would keep the older
    mentions current and conflict the last pair on confidence."""
    acme = [said(f"a{i}", "E:acme", d, 0.87, order=i) for i, d in enumerate(("2023-01-05", "2023-06-01",
                                                                             "2023-11-20"))]
    globex = dated("g", "E:globex", "2024-01-01", "2024-02-10", 0.81, order=5, aspect="transition")
    st, cf = run_passes(acme + [globex], [], pc(observed_states=True))
    assert not cf and st["g"].status == "active" and st["g"].valid_to is None
    for a in acme:
        s = st[a.assertion_id]
        assert (s.status, s.superseded_by, s.valid_to, s.valid_time_type) == ("superseded", "g", "2024-01-01",
                                                                               "interval")
        [ev] = [e for e in s.events if e["code"] == "FUNCTIONAL_SUPERSESSION"]
        assert ev["supersession_reason"] == "NEWER_STATEMENT"
    # both dated and too close: the seed's rule still holds (T15)
    d1, d2 = dated("d1", "E:acme", "2020-01-01", "2023-01-01", 0.87), dated("d2", "E:globex", "2024-01-01",
                                                                          "2024-02-01", 0.81, order=1)
    st, cf = run_passes([d1, d2], [], pc(observed_states=True))
    assert st["d1"].status == st["d2"].status == "conflicted"


def test_undated_states_close_each_other_in_the_order_said():
    """T44: Berlin (said), Paris (said later), Berlin again (said later still: a move back) — three states."""
    b1, p, b2 = said("b1", "E:berlin", "2022-01-01"), said("p", "E:paris", "2023-01-01", order=1), \
        said("b2", "E:berlin", "2024-01-01", order=2)
    st, _ = run_passes([b1, p, b2], [], pc(observed_states=True))
    assert (st["b1"].status, st["b1"].valid_to, st["b1"].superseded_by) == ("superseded", "2023-01-01", "p")
    assert (st["p"].status, st["p"].valid_to, st["p"].superseded_by) == ("superseded", "2024-01-01", "b2")
    assert st["b2"].status == "active"


def test_a_stale_undated_mention_is_overridden_by_a_later_dated_statement():
    """T45: a profile says "living in Berlin" on 22 March; later that day "I moved to Paris in March 2023" — the
    Berlin mention is out of date, not a move back: superseded by the Paris statement, its valid time untouched."""
    old = said("b0", "E:berlin", "2022-10-01")
    stale = said("b1", "E:berlin", "2023-03-22T10:00:00.000Z", order=1)
    move = dated("p", "E:paris", "2023-03-01", "2023-03-22T10:05:00.000Z", order=2, aspect="transition")
    later = said("p2", "E:paris", "2023-06-01", order=3)
    st, cf = run_passes([old, stale, move, later], [], pc(observed_states=True))
    assert (st["b1"].status, st["b1"].superseded_by, st["b1"].valid_to) == ("superseded", "p", None)
    assert any(e["code"] == "OVERRIDDEN_BY_LATER_STATEMENT" for e in st["b1"].events)
    assert (st["b0"].status, st["b0"].valid_to) == ("superseded", "2023-03-01")
    assert st["p"].status == st["p2"].status == "active" and not cf
    # said *after* the move statement, the same words are a move back, not stale
    back = said("b1", "E:berlin", "2023-03-22T10:00:00.000Z", order=4, tx="2023-03-23T00:00:00.000Z")
    st, _ = run_passes([old, move, back], [], pc(observed_states=True))
    assert st["b1"].status == "active" and st["p"].status == "superseded"


def test_a_negation_ends_every_undated_mention_but_two_dated_states_stay_ambiguous():
    """T42: "I like jazz" said twice, then "I don't like jazz any more": one state, ended. Two dated states of the
    same fact are still §5.9's ambiguity (the seed's own example)."""
    like = [said("l1", "V:jazz", "2022-01-01"), said("l2", "V:jazz", "2022-06-01", order=1)]
    neg = said("n", "V:jazz", "2023-01-01", order=2, polarity="negative")
    neg.eligible = False
    st, cf = run_passes(like + [neg], [], pc(observed_states=True, rule_for=lambda p, t: Rule("r", None, "*", False,
                                                                                               "none")))
    assert all((st[i].status, st[i].negated_by, st[i].valid_to) == ("negated", "n", "2023-01-01") for i in ("l1", "l2"))
    assert not cf
    two = [base("d1", "V:jazz", "2018", 0.8), base("d2", "V:jazz", "2019", 0.8, order=1)]
    st, cf = run_passes(two + like + [neg], [], pc(observed_states=True))
    assert [c.conflict_type for c in cf] == ["NEGATION_AMBIGUOUS"]
    assert all(st[i].status == "active" for i in ("d1", "d2", "l1", "l2"))


def _cfg(**over):
    base_ = dict(time_link_proximity_chars=200, time_link_min_alignment=0.1, fallback_valid_from_asserted=True,
                 threshold_close=0.7, proximity_same_sentence=True, observed_states_eligible=True,
                 context_dated_by_conversation=True)
    return SimpleNamespace(**{**base_, **over})


def test_undated_claims_are_eligible_at_their_message_time_and_the_profile_at_its_conversation():
    """T40: an undated claim is eligible, valid from its message time (time_basis observed); with the setting off,
    the seed's NONEXPLICIT_TIME_SOURCE. T41: the custom-instructions profile has no time of its own and is dated
    by its conversation; an imputed timestamp still gives no valid time (invariant 20)."""
    a = {"assertion_id": "a", "message_id": "m", "subject_entity_id": "s", "subject_entity_type": "PERSON",
         "predicate_id": "p", "predicate_label": "works_at", "object_signature": "E:x", "fact_key": "k",
         "modality": "state", "polarity": "positive", "confidence_final": 0.9, "subject_detection_tier": 1,
         "object_detection_tier": 4, "asserted_role": "user", "has_user_corroboration": 0, "conversation_id": "c",
         "order_index": 0, "asserted_at_utc": "2024-01-01T00:00:00.000Z", "superseded_by_assertion_id": None,
         "supersession_type": None, "temporal_qualifier_id": None, "temporal_qualifier_type": None,
         "timestamp_quality": "original", "char_start": 0, "char_end": 19, "export_content_type": "text",
         "conversation_created_at_utc": "2023-12-31T00:00:00.000Z"}
    b = assign(a, [], "I work at Acme Corp.", _cfg(), "2025-01-01T00:00:00.000Z")
    assert b.eligible and b.observed and b.valid_from == a["asserted_at_utc"] and b.raw["time_basis"] == "observed"
    seed = assign(a, [], "I work at Acme Corp.", _cfg(observed_states_eligible=False), "x")
    assert not seed.eligible and seed.reasons == ["NONEXPLICIT_TIME_SOURCE"] and seed.raw["time_basis"] == "observed"
    profile = {**a, "asserted_at_utc": None, "timestamp_quality": "missing", "export_content_type":
               "user_editable_context"}
    p = assign(profile, [], "I work at Acme Corp.", _cfg(), "2025-01-01T00:00:00.000Z")
    assert (p.valid_from, p.tx, p.tx_source, p.time_source) == ("2023-12-31T00:00:00.000Z",) * 2 + (
        "CONVERSATION_TIME", "CONVERSATION_TIME")
    assert p.eligible
    off = assign(profile, [], "I work at Acme Corp.", _cfg(context_dated_by_conversation=False), "2025-01-01Z")
    assert off.valid_from is None and off.tx_source == "INGEST_TIME" and not off.eligible
    imputed = assign({**a, "timestamp_quality": "imputed_parent"}, [], "I work at Acme Corp.", _cfg(), "x")
    assert imputed.valid_from is None and not imputed.eligible


def test_replay_fast_path_gives_the_full_replays_history():
    """T49: a claim said at τ that only continues the newest state is not recomputed with the whole group; the
    versions are those of rerunning every pass at every τ, over random groups of dated and undated states,
    negations, ineligible claims, corrections and retractions."""
    import random

    from kenning.temporal.history import replay_group

    rng = random.Random(22)
    for case in range(250):
        n = rng.randint(1, 14)
        bases, rets = [], []
        for i in range(n):
            day = f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            said_day = f"2024-{rng.randint(1, 3):02d}-{rng.randint(1, 9):02d}"
            sig = rng.choice(("E:x", "E:x", "E:y", "E:z"))
            pol = "negative" if rng.random() < 0.12 else "positive"
            if rng.random() < 0.6:
                b = said(f"a{i:02d}", sig, said_day, rng.choice((0.8, 0.85, 0.9)), order=i, polarity=pol)
            else:
                b = dated(f"a{i:02d}", sig, day, said_day, rng.choice((0.8, 0.85, 0.9)), order=i, polarity=pol,
                          aspect=rng.choice((None, "transition")))
            b.eligible = pol == "positive" and rng.random() > 0.15
            bases.append(b)
        if n > 2 and rng.random() < 0.2:
            old, new = bases[0], bases[-1]
            old.superseded_by, old.supersession_type = new.assertion_id, "correction"
        if rng.random() < 0.2:
            t = rng.choice(bases)
            rets.append({"retraction_id": "r1", "retraction_message_id": "m9", "char_start": 0,
                         "target_assertion_id": t.assertion_id, "target_fact_key": None,
                         "retraction_type": rng.choice(("full", "temporal_bound")), "confidence": 0.9,
                         "surface_text": "not true", "user_grounded": True, "tx": "2024-02-15",
                         "time_ok": True, "message_time": "2024-02-15"})
        tx_of = {b.assertion_id: b.tx for b in bases}
        for functional in (True, False):
            rule = RULE if functional else Rule("r", "p", "*", False, "none")
            make = lambda tau: pc(observed_states=True, rule_for=lambda p, t: rule)  # noqa: E731
            fast = replay_group(bases, rets, make, functional, tx_of)
            full = replay_group(bases, rets, make, functional, tx_of, fast=False)
            assert fast == full, case
