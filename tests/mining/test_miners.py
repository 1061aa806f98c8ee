"""Issue 18 parts 4–5: each class from varied phrasings (and not from look-alikes), §20B attribution (acceptance
vs silence vs rejection), goal evolution and status, obligations with a timezone, procedures scrubbed and
validated after two successes, standing procedures as candidates until confirmed, corrections moving α/β, and
an idempotent re-run."""

from __future__ import annotations

import pytest

from kenning.knowledge import docs
from kenning.store import knowledge as ksql
from kenning.store import mining as msql

from .helpers import names, nodes, run_conversation


@pytest.mark.parametrize("text,expected", [
    ("My goal is to run a marathon by next spring.", "run a marathon"),
    ("I'm trying to learn Portuguese before the trip.", "learn Portuguese"),
    ("Something I'm working towards is paying off the car loan.", "paying off the car loan"),
    ("I've set myself a goal of reading 30 books this year.", "reading 30 books"),
    ("I really want to open a small bakery someday.", "open a small bakery"),
])
def test_goals_from_explicit_aims(conn, text, expected):
    run_conversation(conn, [("user", text)])
    assert names(conn, "goal") == [expected]
    g = nodes(conn, "goal")[0]
    assert g["lifecycle_state"] == "managed" and g["payload"]["goal_status"] == "active"
    prov = ksql.get_provenance(conn, g["id"])
    assert prov[0]["message_id"] == "c1-m0" and prov[0]["verbatim_excerpt"] in text


@pytest.mark.parametrize("text", [
    "What is a good goal for a beginner runner?",
    "What if my goal was to run a marathon?",
    "I went for a run this morning.",
    "My friend's goal is to climb Kilimanjaro.",
])
def test_no_goal_from_questions_hypotheticals_or_plain_events(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "goal") == []


def test_goal_is_never_created_from_an_assistant_suggestion(conn):
    run_conversation(conn, [("user", "I need some motivation."),
                            ("assistant", "I suggest you set a goal: your goal could be to run a 10k by June."),
                            ("user", "Yes, let's do that.")])
    assert names(conn, "goal") == []


def test_sub_goal_links_parent_and_evolution_keeps_the_old_goal(conn):
    run_conversation(conn, [
        ("user", "My goal is to run a marathon by next spring."),
        ("user", "As part of that, I need to run a half marathon in January."),
        ("user", "I've changed my goal: I now want to run an ultramarathon."),
    ])
    goals = {n["canonical_name"]: n for n in nodes(conn, "goal")}
    parent, sub, new = goals["run a marathon"], goals["run a half marathon"], goals["run an ultramarathon"]
    assert sub["payload"]["parent_goal_id"] == parent["id"]
    assert parent["payload"]["sub_goal_ids"] == [sub["id"]]
    assert ksql.current_edge(conn, sub["id"], "sub_goal_of", parent["id"]) is not None
    assert new["payload"]["evolved_from_goal_id"] in (parent["id"], sub["id"])
    old = ksql.get_node(conn, new["payload"]["evolved_from_goal_id"])
    assert old["payload"]["goal_status"] == "evolved" and old["is_active"] == 1


def test_evolution_across_conversations_and_an_aim_whose_old_goal_is_unknown(conn):
    """I176: "my goal is now X instead of Y" finds Y among the active goals though Y was said in another
    conversation; "my goal is now X" with no goal to replace still records X (it was silently dropped)."""
    run_conversation(conn, [("user", "My goal is to become a staff engineer by the end of 2025.")])
    run_conversation(conn, [("user", "My goal is now to become a principal engineer instead of a staff engineer.")],
                     conv="c2", start_day=5)
    goals = {n["canonical_name"]: n for n in nodes(conn, "goal")}
    assert set(goals) == {"become a staff engineer", "become a principal engineer"}
    assert goals["become a principal engineer"]["payload"]["evolved_from_goal_id"] == goals["become a staff engineer"]["id"]
    assert goals["become a staff engineer"]["payload"]["goal_status"] == "evolved"
    run_conversation(conn, [("user", "My goal is now to learn Japanese.")], conv="c3", start_day=9)
    japanese = {n["canonical_name"]: n for n in nodes(conn, "goal")}["learn Japanese"]
    assert japanese["payload"]["goal_status"] == "active" and not japanese["payload"].get("evolved_from_goal_id")


@pytest.mark.parametrize("text,status", [
    ("I finally achieved my goal of running a marathon!", "achieved"),
    ("I'm giving up on the marathon, my knee can't take it.", "abandoned"),
])
def test_goal_achieved_or_abandoned_when_the_user_says_so(conn, text, status):
    run_conversation(conn, [("user", "My goal is to run a marathon by next spring."), ("user", text)])
    g = nodes(conn, "goal")
    assert len(g) == 1 and g[0]["payload"]["goal_status"] == status


@pytest.mark.parametrize("text,name,date,kind", [
    ("I have to renew my passport by March 20.", "renew my passport", "2026-03-20T23:59:00+00:00", "statutory"),
    ("The invoice for Acme is due on April 3rd.", "invoice for Acme", "2026-04-03T23:59:00+00:00", "contractual"),
    ("Need to remember: renew the car insurance before 2026-05-01.", "renew the car insurance",
     "2026-05-01T23:59:00+00:00", "contractual"),
    ("We must submit the grant report no later than 15 June 2026.", "submit the grant report",
     "2026-06-15T23:59:00+00:00", "internal"),
    ("The deadline for the tax return is the end of the month.", "tax return", "2026-03-31T23:59:00+00:00",
     "statutory"),
])
def test_obligations_with_deadline_timezone_and_type(conn, text, name, date, kind):
    run_conversation(conn, [("user", text)])
    (o,) = nodes(conn, "obligation")
    assert o["canonical_name"] == name
    assert o["payload"]["deadline"]["date"] == date and o["payload"]["deadline"]["type"] == kind
    assert o["payload"]["status"] == "pending" and o["lifecycle_state"] == "managed"


def test_obligation_deadline_uses_the_configured_timezone(conn):
    from kenning.config import load_config
    base = load_config()
    cfg = base.model_copy(update={"mining": base.mining.model_copy(update={"timezone": "Europe/Berlin"})})
    run_conversation(conn, [("user", "I have to file the VAT return by March 10.")], config=cfg)
    (o,) = nodes(conn, "obligation")
    assert o["payload"]["deadline"]["date"] == "2026-03-10T23:59:00+01:00"


@pytest.mark.parametrize("text", [
    "Do I have to renew my passport by March?",
    "I have to say, the weather is lovely.",
    "Rent was due last month and I paid it.",
])
def test_no_obligation_without_a_deadline_statement(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "obligation") == []


def test_obligation_completed_and_overdue_computed(conn):
    from kenning.intake.mining.obligations import is_overdue
    run_conversation(conn, [("user", "I have to renew my passport by March 1."),
                            ("user", "I need to pay the plumber by March 5.")])
    run_conversation(conn, [("user", "I renewed my passport today.")], conv="c2", start_day=2)
    by = {n["canonical_name"]: n["payload"] for n in nodes(conn, "obligation")}
    assert by["renew my passport"]["status"] == "completed"
    assert not is_overdue(by["renew my passport"], "2026-04-01T00:00:00Z")
    assert is_overdue(by["pay the plumber"], "2026-04-01T00:00:00Z")
    assert not is_overdue(by["pay the plumber"], "2026-03-04T00:00:00Z")


def test_procedure_steps_scrubbed_and_validated_after_two_successes(conn):
    run_conversation(conn, [("user", "Here's how I back up my laptop:\n1. plug in the drive at /Volumes/Backup\n"
                                     "2. run the sync script\n3. email a note to ops@example.com")])
    (p,) = nodes(conn, "procedure")
    assert p["canonical_name"] == "back up my laptop"
    assert [s["intent"] for s in p["payload"]["steps"]] == [
        "plug in the drive at [File Path]", "run the sync script", "email a note to [Email Address]"]
    assert "ops@example.com" not in str(p["payload"])
    assert (p["lifecycle_state"], p["lifecycle_substate"]) == ("observed", "captured")
    run_conversation(conn, [("user", "I followed my laptop backup routine last night and it worked.")], conv="c2")
    assert ksql.get_node(conn, p["id"])["lifecycle_substate"] == "captured"
    run_conversation(conn, [("user", "The laptop backup routine worked again, no problems.")], conv="c3")
    after = ksql.get_node(conn, p["id"])
    assert after["lifecycle_substate"] == "validated" and after["alpha"] > p["alpha"]


def test_procedure_from_sequence_words(conn):
    run_conversation(conn, [("user", "My process for onboarding a client: first I send the welcome pack, then I "
                                     "book a kickoff call, and finally I set up the shared folder.")])
    (p,) = nodes(conn, "procedure")
    assert p["canonical_name"] == "onboarding a client"
    assert len(p["payload"]["steps"]) == 3


def test_no_procedure_from_a_single_step_or_a_question(conn):
    run_conversation(conn, [("user", "How do I back up my laptop? First, is that even needed?"),
                            ("user", "Here's how I relax: a long walk.")])
    assert names(conn, "procedure") == []


@pytest.mark.parametrize("text,signal,safety,excl", [
    ("Whenever an email from my landlord arrives, flag it and remind me to reply, unless it's a newsletter.",
     "email_received", "confirm_first", ["it's a newsletter"]),
    ("Every Monday morning, send me a summary of my open tasks.", "time_based", "confirm_first", []),
    ("If a new invoice PDF shows up in the Finance folder, file it under Receipts automatically.",
     "file_added", "auto_safe", []),
    ("Remind me to stretch every time a meeting ends.", "calendar_event", "confirm_first", []),
])
def test_standing_procedures_candidate_with_trigger_exclusions_and_safety(conn, text, signal, safety, excl):
    run_conversation(conn, [("user", text)])
    (s,) = nodes(conn, "standing_procedure")
    assert (s["lifecycle_state"], s["lifecycle_substate"]) == ("suggested", "candidate")
    pl = s["payload"]
    assert pl["trigger_conditions"][0]["signal_type"] == signal and pl["safety_class"] == safety
    assert pl["trigger_exclusions"] == excl and pl["action_steps"]


@pytest.mark.parametrize("text", [
    "If I were rich, I would buy a boat.",
    "Whenever I think about it, I get sad?",
    "Every Monday is hard.",
])
def test_no_standing_procedure_from_look_alikes(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "standing_procedure") == []


def test_standing_procedure_confirmed_when_the_user_accepts_the_restatement(conn):
    run_conversation(conn, [("user", "Whenever my sister emails me, remind me to call her back."),
                            ("assistant", "Got it. Whenever your sister emails you, I'll remind you to call her back. "
                                          "Shall I set that up?"),
                            ("user", "Yes, please do that.")])
    states = {n["canonical_name"]: (n["lifecycle_state"], n["lifecycle_substate"])
              for n in nodes(conn, "standing_procedure")}
    assert ("confirmed", "active") in states.values()


@pytest.mark.parametrize("text,mtype,applies,not_applies", [
    ("I prefer metric units when talking about distances.", "preference", ["talking about distances"], []),
    ("Please never schedule meetings on Fridays, unless it's urgent.", "constraint", ["always"], ["it's urgent"]),
    ("I'm allergic to peanuts.", "constraint", ["always"], []),
    ("From now on, always answer in British English.", "standing_order", ["always"], []),
    ('When I say "the shop" I mean the bike shop on Main Street.', "vocabulary_mapping",
     ["the user says “the shop”"], []),
    ("I like my summaries short and in bullet points.", "preference", ["always"], []),
])
def test_memory_directives(conn, text, mtype, applies, not_applies):
    run_conversation(conn, [("user", text)])
    (d,) = nodes(conn, "memory_directive")
    p = d["payload"]
    assert p["memory_type"] == mtype and p["applies_when"] == applies and p["does_not_apply_when"] == not_applies
    assert p["source_certainty"] == "user_explicitly_stated" and d["lifecycle_state"] == "confirmed"


@pytest.mark.parametrize("text", [
    "Do you prefer tea or coffee?",
    "I always forget my keys.",
    "My brother prefers the mountains.",
])
def test_no_directive_from_look_alikes(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "memory_directive") == []


# ---- §20B attribution -----------------------------------------------------------------------------------------

SUGGESTION = ("Here's how to clean the espresso machine: first descale it with citric acid, then flush it twice "
              "with water, and finally wipe the steam wand.")


def test_accepted_suggestion_written_with_dual_provenance(conn):
    run_conversation(conn, [("user", "My coffee tastes bitter."), ("assistant", SUGGESTION),
                            ("user", "Perfect, I'll use that.")])
    (p,) = nodes(conn, "procedure")
    prov = {e["entry_type"]: e for e in ksql.get_provenance(conn, p["id"])}
    assert prov["agent_suggestion"]["message_id"] == "c1-m1" and prov["user_acceptance"]["message_id"] == "c1-m2"
    assert p["lifecycle_state"] == "observed" and p["lifecycle_substate"] == "captured"
    assert "authority_level=directive; participant_type=agent" in str(p["payload"]["annotations"])


def test_uncontested_suggestion_is_suggested_only(conn):
    run_conversation(conn, [("user", "My coffee tastes bitter."), ("assistant", SUGGESTION),
                            ("user", "By the way, I moved to Lisbon last year.")])
    (p,) = nodes(conn, "procedure")
    assert (p["lifecycle_state"], p["lifecycle_substate"]) == ("suggested", "candidate")
    assert "authority_level=observation" in str(p["payload"]["annotations"])


def test_silence_is_never_acceptance(conn):
    # the conversation ends on the suggestion: no user turn answers it, nothing is written
    run_conversation(conn, [("user", "My coffee tastes bitter."), ("assistant", SUGGESTION)])
    assert nodes(conn, "procedure") == []


@pytest.mark.parametrize("reply", ["No, I'd rather not use citric acid.", "Nope, that won't work for my machine."])
def test_rejected_suggestion_not_written_but_recorded(conn, reply):
    run_conversation(conn, [("user", "My coffee tastes bitter."), ("assistant", SUGGESTION), ("user", reply)])
    assert nodes(conn, "procedure") == []
    (opt,) = msql.rejected_options(conn)
    assert opt["node_kind"] == "procedure" and opt["rejection_message_id"] == "c1-m2"


def test_contested_suggestion_not_written(conn):
    run_conversation(conn, [("user", "My coffee tastes bitter."), ("assistant", SUGGESTION),
                            ("user", "Hmm, are you sure citric acid is safe for it?")])
    assert nodes(conn, "procedure") == [] and msql.rejected_options(conn) == []


# ---- corrections (§10.5) --------------------------------------------------------------------------------------


def test_correction_moves_alpha_beta_and_records_the_reason(conn):
    run_conversation(conn, [("user", "I have to renew my passport by March 20."),
                            ("assistant", "Noted."),
                            ("user", "Actually, the passport has to be renewed by April 2.")])
    (o,) = nodes(conn, "obligation")
    assert o["payload"]["deadline"]["date"] == "2026-04-02T23:59:00+00:00"
    assert o["beta"] > 2.0 and o["alpha"] > 2.95
    corr = [e for e in ksql.get_provenance(conn, o["id"]) if e["entry_type"] == "user_correction"]
    assert corr and "April 2" in corr[0]["correction_reason"]


def test_correction_of_a_directive(conn):
    run_conversation(conn, [("user", "I prefer window seats on flights."),
                            ("user", "No, I meant I prefer aisle seats on flights.")])
    by = {n["canonical_name"]: n for n in nodes(conn, "memory_directive")}
    old = by["I prefer window seats on flights"]
    assert old["beta"] > 2.0
    assert "I prefer aisle seats on flights" in by


# ---- idempotence ---------------------------------------------------------------------------------------------


def test_rerun_adds_no_nodes_and_no_commits(conn):
    turns = [("user", "My goal is to run a marathon by next spring. I have to renew my passport by March 20."),
             ("assistant", SUGGESTION), ("user", "Perfect, I'll use that."),
             ("user", "Whenever an email from my landlord arrives, flag it."),
             ("user", "Actually, the passport has to be renewed by April 2.")]
    run_conversation(conn, turns)
    before = (ksql.commit_count(conn), ksql.dump(conn))
    results = run_conversation(conn, turns)
    assert sum(r.items for _, r in results) == 0
    assert (ksql.commit_count(conn), ksql.dump(conn)) == before
    assert docs  # the documents module is the writer's view; the dump above compares every table


def test_episodic_and_accessible_only_content_is_never_promoted(conn):
    from kenning.config import load_config
    from kenning.intake.extractors import ExtractionContext, Observation, registered

    cfg = load_config()
    ctx = ExtractionContext(conn=conn, config=cfg, depth="shallow", now="2026-03-02T12:00:00.000Z")
    for mode in ("episodic_recall", "accessible_only"):
        obs = Observation(observation_id=f"o-{mode}", unit_kind="message", role="user", message_id=f"m-{mode}",
                          text="My goal is to run a marathon. I have to renew my passport by March 20.",
                          created_at="2026-03-01T09:00:00.000Z", persistence_mode=mode)
        results = [fn(ctx, obs) for fn in registered().values()]
        assert sum(r.items for r in results) == 0
        assert any("never auto-promoted" in (r.skipped_reason or "") for r in results)
    assert ksql.count_nodes(conn) == 0
