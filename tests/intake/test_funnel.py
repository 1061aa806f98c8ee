"""Issue 18 part 1: envelopes, the dedup key, scoreImportance (the seed's three vectors), the strict policy order,
one stored dispatch decision per observation, the queue and the audit — on real vault files."""

from __future__ import annotations

import pytest

from kenning.api import Vault
from kenning.config import load_config
from kenning.intake import extractors as seam
from kenning.intake.envelope import IntakeUnit, build_envelope, dedup_key
from kenning.intake.policy import MemoryModeState, resolve_extraction_policy
from kenning.intake.scoring import IntakeScoreFeatures, SurfaceWeightProfile, score_decision, score_importance
from kenning.store import intake as isql
from kenning.store import knowledge as ksql
from tests.intake.helpers import AS_OF, HASH, STAGES, remember_extractor, two_conversations

P = SurfaceWeightProfile("chat")


def feats(intent=0.0, novelty=0.0, domain=0.0, centrality=0.0, action=0.0, matter=0.0, dup=0.0, privacy=0.0):
    return IntakeScoreFeatures(intent, novelty, domain, centrality, action, matter, dup, privacy)


# ---- §20A.4 the seed's three test vectors -----------------------------------------------------------------

def test_seed_vector_all_positives_half_is_047_shallow():
    s = score_importance(feats(.5, .5, .5, .5, .5, .5, 0, 0), P)
    assert s == pytest.approx(0.47)
    assert score_decision(s, P) == "shallow"


def test_seed_vector_intent_085_others_one_is_0907_deep():
    s = score_importance(feats(.85, 1, 1, 1, 1, 1, 0, 0), P)
    assert s == pytest.approx(0.907)
    assert score_decision(s, P) == "deep"


def test_seed_vector_all_08_dup_and_privacy_half_is_0662():
    s = score_importance(feats(.8, .8, .8, .8, .8, .8, .5, .5), P)
    assert s == pytest.approx(0.662)
    assert score_decision(s, P) == "shallow"
    # during the §20A.5 first 30 days the conservative thresholds (deep ≥ .65) make the same score deep (I5)
    cal = SurfaceWeightProfile.from_config(load_config(None, None), "chat", calibrating=True)
    assert score_decision(s, cal) == "deep"


def test_hard_overrides_intent_then_privacy():
    assert score_importance(feats(intent=0.9, privacy=1.0), P) == 1.0
    assert score_importance(feats(intent=0.89, novelty=1, domain=1, privacy=0.85), P) == 0.0
    assert score_importance(feats(dup=1, privacy=0.5), P) == 0.0  # clamped at 0


def test_config_defaults_are_the_seed_weights():
    prof = SurfaceWeightProfile.from_config(load_config(None, None), "chat")
    assert prof == SurfaceWeightProfile("chat")
    assert (prof.intent, prof.novelty, prof.domain, prof.centrality, prof.action, prof.matter, prof.dup,
            prof.privacy, prof.min_score_for_shallow, prof.min_score_for_deep, prof.schema_version) == \
        (.22, .18, .22, .14, .12, .06, .10, .08, .45, .75, 1)


# ---- §20A.6 the strict order ------------------------------------------------------------------------------

NORMAL = MemoryModeState()
INCOGNITO = MemoryModeState.incognito("t", "user", ("conversation",))
SUPPRESSED = MemoryModeState(suppress_extraction=True)


@pytest.mark.parametrize("kw, decision, reason", [
    # 1. incognito beats everything, Focus included
    (dict(mode=INCOGNITO, event_class="critical", budget_ok=True, score_decision="deep", focus_pressed=True,
          privileged=True), "skip", "incognito_mode"),
    # 2. suppress_extraction beats privilege, critical, Focus
    (dict(mode=SUPPRESSED, event_class="critical", budget_ok=True, score_decision="deep", focus_pressed=True,
          privileged=True), "skip", "extraction_disabled"),
    # 3. privilege / legal hold beats critical and Focus
    (dict(mode=NORMAL, event_class="critical", budget_ok=True, score_decision="deep", focus_pressed=True,
          privileged=True), "skip", "privilege_block"),
    # 4. critical lane beats the budget and a skip score
    (dict(mode=NORMAL, event_class="critical", budget_ok=False, score_decision="skip", focus_pressed=False),
     "deep", "critical_lane"),
    # 5. over budget: deep work defers (Focus raises to deep, and deep still waits for a slot)
    (dict(mode=NORMAL, event_class="normal", budget_ok=False, score_decision="deep", focus_pressed=False),
     "defer", "budget_deferred"),
    (dict(mode=NORMAL, event_class="normal", budget_ok=False, score_decision="skip", focus_pressed=True),
     "defer", "budget_deferred"),
    # ... shallow costs no budget (I6)
    (dict(mode=NORMAL, event_class="normal", budget_ok=False, score_decision="shallow", focus_pressed=False),
     "shallow", "score_dispatch"),
    # 6. the score decides
    (dict(mode=NORMAL, event_class="normal", budget_ok=True, score_decision="skip", focus_pressed=False),
     "skip", "score_dispatch"),
    (dict(mode=NORMAL, event_class="normal", budget_ok=True, score_decision="deep", focus_pressed=False),
     "deep", "score_dispatch"),
    # 7. Focus raises a step-6 result to deep
    (dict(mode=NORMAL, event_class="normal", budget_ok=True, score_decision="shallow", focus_pressed=True),
     "deep", "focus_override"),
])
def test_resolve_extraction_policy_strict_order(kw, decision, reason):
    res = resolve_extraction_policy(**kw)
    assert (res.decision, res.reason_code) == (decision, reason)
    assert res.allow == (decision != "skip")


def test_critical_lane_goes_shallow_when_its_reserved_slots_are_used():
    res = resolve_extraction_policy(mode=NORMAL, event_class="critical", budget_ok=False, score_decision="skip",
                                    focus_pressed=False, critical_depth="shallow")
    assert (res.decision, res.reason_code) == ("shallow", "critical_lane")


# ---- envelopes ----------------------------------------------------------------------------------------------

def test_dedup_key_is_surface_ref_version_and_ignores_the_trigger():
    a = IntakeUnit("note", "note:n1", "v3", "user", "note_version", "text", focus=True, critical_class="x")
    b = IntakeUnit("note", "note:n1", "v3", "user", "note_version", "other trigger, same version")
    ea = build_envelope(a, feats(), NORMAL, AS_OF)
    eb = build_envelope(b, feats(), NORMAL, AS_OF)
    assert ea.dedup_key == eb.dedup_key == dedup_key("note", "note:n1", "v3")
    assert ea.observation_id == eb.observation_id
    assert dedup_key("note", "note:n1", "v4") != ea.dedup_key
    assert dedup_key("email", "note:n1", "v3") != ea.dedup_key


def test_envelope_builder_takes_any_surface_and_rejects_unknown_ones():
    for surface, kind in (("email", "mail"), ("note", "note_version"), ("task", "calendar_event")):
        env = build_envelope(IntakeUnit(surface, f"{kind}:1", "v1", "user", kind, "x"), feats(), NORMAL, AS_OF)
        assert env.surface == surface and env.row("run")["unit_kind"] == kind
    with pytest.raises(ValueError, match="unknown intake surface 'fax'.*mail:1"):
        build_envelope(IntakeUnit("fax", "mail:1", "v1", "user", "mail", "x"), feats(), NORMAL, AS_OF)


# ---- the stages on a real vault -----------------------------------------------------------------------------

@pytest.fixture
def with_test_extractor(monkeypatch):
    monkeypatch.setattr(seam, "registered", lambda: {"test_remember": remember_extractor})


def ingest(tmp_path, export, **kw):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    v.ingest([export], as_of=AS_OF, stages=STAGES, **kw)
    return v


def test_one_decision_per_observation_stored_and_skips_audited(tmp_path, with_test_extractor):
    v = ingest(tmp_path, two_conversations(tmp_path))
    try:
        obs = v.conn.execute("SELECT COUNT(*) FROM intake_observations").fetchone()[0]
        decs = isql.decisions(v.conn)
        assert obs == len(decs) == 7 + 4 + 2  # every turn and each conversation
        assert all(d["reason_codes"] for d in decs)
        by_ref = {d["source_ref"]: d for d in decs}
        correction = by_ref["message:" + msg_id(v, "conv-plans", 4)]
        assert correction["decision"] == "deep" and correction["queue_class"] == "critical_non_drop"
        assert correction["reason_codes"] == ["critical_lane", "user_correction"]
        accept = by_ref["message:" + msg_id(v, "conv-plans", 2)]
        assert "explicit_accepted_recommendation" in accept["reason_codes"]
        ok = by_ref["message:" + msg_id(v, "conv-plans", 5)]
        assert ok["decision"] == "skip" and ok["reason_codes"] == ["score_dispatch", "below_shallow_threshold"]
        conv = by_ref["conversation:" + conv_id(v, "conv-plans")]
        assert conv["persistence_mode"] == "episodic_recall"
        # a skip is never silent: one audit record with its reason
        skip_audit = v.conn.execute("SELECT skip_reason, dispatch_decision FROM extraction_audit "
                                    "WHERE source_content_ref=?", (ok["source_ref"],)).fetchall()
        assert skip_audit == [("score_dispatch,below_shallow_threshold", "skip")]
        # every queued row was drained and audited; the test extractor's commits are linked from its audit
        assert {r["status"] for r in isql.queue_rows(v.conn, limit=100)} == {"audited"}
        pref = v.conn.execute("SELECT knowledge_commit_ids, items_promoted FROM extraction_audit "
                              "WHERE source_content_ref=? AND dispatch_decision<>'skip'",
                              ("message:" + msg_id(v, "conv-secret", 2),)).fetchall()
        assert len(pref) == 1 and pref[0][1] == 1
        commit = ksql.get_commit(v.conn, __import__("orjson").loads(pref[0][0])[0])
        assert commit is not None and commit["source_event"] == "test.extract"
    finally:
        v.close()


def msg_id(v: Vault, export_conv: str, i: int) -> str:
    return v.conn.execute("SELECT message_id FROM messages WHERE export_message_id=?",
                          (f"{export_conv}-m{i}",)).fetchone()[0]


def conv_id(v: Vault, export_conv: str) -> str:
    return v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id=?",
                          (export_conv,)).fetchone()[0]


def test_rerunning_the_stages_adds_nothing(tmp_path, with_test_extractor):
    export = two_conversations(tmp_path)
    v = ingest(tmp_path, export)
    try:
        tables = ("intake_observations", "intake_dispatch_decisions", "pending_extractions", "extraction_audit",
                  "knowledge_commits", "extraction_budget_days")
        before = {t: v.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
        results = v.ingest([export], as_of="2024-06-02T00:00:00Z", stages="intake,extract")
        after = {t: v.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
        assert results[0].counts.get("conversations_unchanged") == 2
        assert results[1].counts.get("extractions", 0) == 0
        assert {t: len(r) for t, r in after.items() if t != "extraction_budget_days"} == \
            {t: len(r) for t, r in before.items() if t != "extraction_budget_days"}
        assert after["intake_dispatch_decisions"] == before["intake_dispatch_decisions"]
    finally:
        v.close()


def test_shallow_scoring_is_rules_only(tmp_path):
    """Shallow needs no model: the funnel runs with llm none and every decision is made (speed is benchmarked)."""
    v = ingest(tmp_path, two_conversations(tmp_path), llm="none")
    try:
        assert v.conn.execute("SELECT COUNT(*) FROM llm_extraction_runs").fetchone()[0] == 0
        assert v.conn.execute("SELECT COUNT(*) FROM intake_dispatch_decisions").fetchone()[0] == 13
    finally:
        v.close()


def test_a_bad_pattern_in_config_is_a_clear_error(tmp_path):
    from kenning.config import load_config

    cfg = tmp_path / "bad.yaml"
    cfg.write_text("intake:\n  incognito:\n    title_patterns: ['([unclosed']\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"intake.incognito.title_patterns\[0\] is not a valid regular expression"):
        load_config(cfg, None)
