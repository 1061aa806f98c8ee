"""DOC72 §34 experience: the record's columns, retention (20 kept, older folded, never lost), the α/β feeds, the
why-rule for bad outcomes, distributions and trends, and the light form."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.config import load_config
from kenning.knowledge.experience import (RECORD_COLUMNS, apply_usage_event, experience_depth, light_experience,
                                          new_record)

CFG = load_config().knowledge.experience


def _at(i: int) -> str:
    return f"2026-03-{1 + i // 24:02d}T{i % 24:02d}:00:00.000Z"


def _ev(i: int, outcome: str | None = "success", **kw) -> dict:
    e = {"used_at": _at(i), "usage_type": "executed", "outcome": outcome, **kw}
    if outcome in ("failure", "corrected", "adverse_ruling"):
        e.setdefault("outcome_detail", "step 4 failed: PDF/A required")
    return e


def _run(events, kind="procedure", record=None):
    rec, alpha, beta, archived = record or new_record(), 0.0, 0.0, []
    for e in events:
        u = apply_usage_event(rec, e, kind=kind, cfg=CFG)
        rec, alpha, beta = u.record, alpha + u.alpha_delta, beta + u.beta_delta
        archived += u.archived_events
    return rec, alpha, beta, archived


def test_new_record_has_exactly_the_columns():
    r = new_record()
    assert tuple(r) == RECORD_COLUMNS
    assert set(RECORD_COLUMNS) == {
        "total_usage_count", "total_success_count", "total_failure_count", "total_correction_count",
        "recent_usage_count", "recent_success_count", "recent_failure_count", "recent_correction_count",
        "last_used_at", "variant_distribution", "context_distribution", "recent_events", "older_event_summary",
        "overall_trend", "trend_signal"}
    assert r["overall_trend"] == "new" and r["total_usage_count"] == 0 and r["older_event_summary"] is None


def test_25_events_keep_20_and_fold_5():
    outcomes = ["success"] * 3 + ["failure", "corrected"] + ["success"] * 18 + ["failure", "ignored"]
    events = [_ev(i, o, context="Henderson" if i % 3 else "Narayanan", variant_used="shortcut" if i < 4 else "menu")
              for i, o in enumerate(outcomes)]
    rec, _, _, archived = _run(events)
    assert len(rec["recent_events"]) == 20 and [e["used_at"] for e in archived] == [_at(i) for i in range(5)]
    assert rec["recent_events"][0]["used_at"] == _at(5) and rec["recent_events"][-1]["used_at"] == _at(24)
    s = rec["older_event_summary"]
    assert s["total_count"] == 5 and s["date_range"] == {"from": _at(0), "to": _at(4)}
    assert (s["success_count"], s["failure_count"], s["correction_count"], s["rated_count"]) == (3, 1, 1, 5)
    assert s["success_rate"] == pytest.approx(0.6)
    assert s["most_common_variant"] == "shortcut" and s["most_common_context"] == "Henderson"
    assert (rec["total_usage_count"], rec["total_success_count"], rec["total_failure_count"],
            rec["total_correction_count"]) == (25, 21, 2, 1)
    assert (rec["recent_usage_count"], rec["recent_success_count"], rec["recent_failure_count"],
            rec["recent_correction_count"]) == (20, 18, 1, 0)
    assert rec["last_used_at"] == _at(24)
    variants = {d["variant_label"]: d for d in rec["variant_distribution"]}
    assert variants["shortcut"]["count"] == 4 and variants["shortcut"]["recent_count"] == 0
    assert variants["menu"]["count"] == 21 and variants["menu"]["recent_count"] == 20
    assert variants["menu"]["last_used_at"] == _at(24) and variants["menu"]["trend"] == "increasing"
    assert variants["shortcut"]["trend"] == "decreasing"
    assert rec["overall_trend"] == "shifting" and "shortcut" in rec["trend_signal"]
    contexts = {d["context_label"]: d for d in rec["context_distribution"]}
    assert contexts["Henderson"]["count"] + contexts["Narayanan"]["count"] == 25


def test_alpha_plus_one_at_the_20th_and_40th_success():
    deltas = []
    rec = new_record()
    for i in range(45):
        u = apply_usage_event(rec, _ev(i), kind="procedure", cfg=CFG)
        rec = u.record
        deltas.append(u.alpha_delta)
    assert [i + 1 for i, d in enumerate(deltas) if d] == [20, 40] and all(d in (0, 1.0) for d in deltas)
    assert rec["overall_trend"] == "stable"


def test_beta_plus_one_at_three_consecutive_failures_then_the_streak_restarts():
    _, _, beta, _ = _run([_ev(i, "failure") for i in range(3)])
    assert beta == 1.0
    _, _, beta, _ = _run([_ev(i, "failure") for i in range(5)])
    assert beta == 1.0  # failures 4 and 5 are a new streak of 2
    _, _, beta, _ = _run([_ev(i, "failure") for i in range(6)])
    assert beta == 2.0
    _, _, beta, _ = _run([_ev(i, o) for i, o in enumerate(["failure", "success", "failure", "failure"])])
    assert beta == 0.0
    # neutral outcomes neither extend nor break a streak; adverse rulings are failures
    _, _, beta, _ = _run([_ev(0, "failure"), _ev(1, "ignored"), _ev(2, None), _ev(3, "adverse_ruling"),
                          _ev(4, "failure")])
    assert beta == 1.0


def test_a_failure_streak_longer_than_the_window_is_counted_through_the_summary():
    _, _, beta, _ = _run([_ev(i, "failure") for i in range(30)])
    assert beta == 10.0


def test_bad_outcomes_must_say_why():
    with pytest.raises(ValueError, match="must say why in outcome_detail"):
        apply_usage_event(new_record(), {"used_at": _at(0), "usage_type": "executed", "outcome": "failure"},
                          kind="procedure", cfg=CFG)
    with pytest.raises(ValueError, match="outcome_detail"):
        apply_usage_event(new_record(), {"used_at": _at(0), "usage_type": "applied", "outcome": "corrected",
                                         "outcome_detail": "  "}, kind="goal", cfg=CFG)
    ok = apply_usage_event(new_record(), _ev(0, "adverse_ruling"), kind="domain_concept", cfg=CFG)
    assert ok.record["recent_events"][0]["outcome_detail"].startswith("step 4")


def test_event_shape_order_and_duplicates():
    u = apply_usage_event(new_record(), {"occurred_at": _at(3), "usage_type": "injected", "agent_id": "a1"},
                          kind="memory_directive", cfg=CFG)
    e = u.record["recent_events"][0]
    assert e == {"event_id": "use-1", "used_at": _at(3), "usage_type": "injected", "agent_id": "a1"}
    both = apply_usage_event(new_record(), {"occurred_at": _at(1), "used_at": _at(2), "usage_type": "applied"},
                             kind="goal", cfg=CFG)
    assert both.record["last_used_at"] == _at(2)
    with pytest.raises(ValueError, match="apply events in time order"):
        apply_usage_event(u.record, _ev(2), kind="procedure", cfg=CFG)
    with pytest.raises(ValueError, match="usage_type"):
        apply_usage_event(new_record(), {"used_at": _at(0), "usage_type": "glanced"}, kind="goal", cfg=CFG)
    with pytest.raises(ValueError, match="not a YYYY-MM-DD"):
        apply_usage_event(new_record(), {"used_at": "yesterday", "usage_type": "applied"}, kind="goal", cfg=CFG)
    with pytest.raises(ValueError, match="unknown node kind"):
        apply_usage_event(new_record(), _ev(0), kind="person", cfg=CFG)
    once = apply_usage_event(new_record(), _ev(0, event_id="e1"), kind="goal", cfg=CFG)
    again = apply_usage_event(once.record, _ev(0, event_id="e1"), kind="goal", cfg=CFG)
    assert again.record == once.record and again.reason.endswith("already recorded")


def test_overall_trend_rules():
    rec, *_ = _run([_ev(i) for i in range(4)])
    assert rec["overall_trend"] == "new"
    rec, *_ = _run([_ev(i) for i in range(10)])
    assert rec["overall_trend"] == "stable" and rec["trend_signal"] is None
    rec, *_ = _run([_ev(i, "success" if i < 5 else "failure") for i in range(10)])
    assert rec["overall_trend"] == "declining" and rec["trend_signal"] == "success rate fell from 1.00 to 0.00"
    rec, *_ = _run([_ev(i, "failure" if i < 3 else "success") for i in range(30)])
    assert rec["overall_trend"] == "growing"  # the folded 10 succeeded 7 times, the window 20 of 20


def test_experience_depth_by_tier():
    assert experience_depth("A", "goal", CFG) == "full"
    assert experience_depth("B", "procedure", CFG) == "full"  # §34.2 beyond §2.2 (K54)
    assert experience_depth("B", "application", CFG) == "light"
    assert experience_depth("C", "world_entity", CFG) == "minimal"
    assert experience_depth("A", "world_entity", CFG) == "full"  # a matter


def test_light_experience():
    p = light_experience({"name": "Word"}, {"used_at": _at(1), "usage_type": "invoked", "outcome": "success"})
    assert p == {"name": "Word", "usage_count": 1, "last_used_at": _at(1), "last_outcome": "success"}
    p = light_experience(p, {"used_at": _at(0), "usage_type": "invoked", "outcome": "failure"})
    assert p["usage_count"] == 2 and p["last_used_at"] == _at(1) and p["last_outcome"] == "success"
    m = light_experience({}, {"used_at": _at(2), "usage_type": "accessed"}, minimal=True)
    assert m == {"usage_count": 1, "last_used_at": _at(2)}


outcome_st = st.sampled_from(["success", "failure", "corrected", "ignored", "adverse_ruling", "partial_success",
                              "unknown", None])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(outcome_st, st.sampled_from([None, "a", "b"]), st.sampled_from([None, "x", "y"])),
                max_size=45))
def test_folding_never_loses_a_count(items):
    rec, alpha, beta, archived = _run([_ev(i, o, variant_used=v, context=c) for i, (o, v, c) in enumerate(items)])
    s = rec["older_event_summary"] or {"total_count": 0, "success_count": 0, "failure_count": 0,
                                       "correction_count": 0}
    assert len(rec["recent_events"]) == min(len(items), 20) and len(archived) == s["total_count"]
    assert rec["total_usage_count"] == len(items) == rec["recent_usage_count"] + s["total_count"]
    assert rec["total_success_count"] == rec["recent_success_count"] + s["success_count"]
    assert rec["total_failure_count"] == rec["recent_failure_count"] + s["failure_count"]
    assert rec["total_correction_count"] == rec["recent_correction_count"] + s["correction_count"]
    assert sum(d["count"] for d in rec["variant_distribution"]) == sum(1 for _, v, _ in items if v)
    assert sum(d["count"] for d in rec["context_distribution"]) == sum(1 for *_, c in items if c)
    assert alpha == rec["total_success_count"] // 20
    assert rec["overall_trend"] in ("growing", "stable", "declining", "shifting", "new")
