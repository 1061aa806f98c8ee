"""Round 5 of attribution and procedure wording (issue 18 (d), decisions I140–I145): a reply to an assistant's
suggestion read by its structure — affirmative or negative head after an interjection or thanks, a reference to
the suggestion, a choice of one option, an acceptance with a tweak, a refusal by reason, a deferral, a topic shift —
offers phrased as questions, numbered options, and the assistant's rule and routine shapes. The sentences here are
in neither phrasing bank."""

from __future__ import annotations

import pytest

from kenning.intake.mining import attribution as attr
from kenning.store import knowledge as ksql
from kenning.store import mining as msql

from .helpers import names, nodes, run_conversation


@pytest.mark.parametrize("reply", [
    "Yeah that makes sense, I'll start tomorrow.", "good call, thanks", "Yes — but on Tuesdays instead of Mondays.",
    "ok that sounds good, thanks", "Perfect, adding that to my routine.", "That'll work.", "I'm in!",
    "Of course, go ahead.", "Great suggestion, I'll use it.", "sounds good 👍", "I'll give that a shot.",
    "No problem, let's do it.", "Sure, but make it 8am.", "Option B please.", "I'll go with #2.", "k",
    "Let's do exactly that.", "Please do.", "Go ahead.", "That sounds like a good plan.", "Ooh, good idea.",
    "That's genius, thanks!", "Haha yes, perfect.", "I'm good with that.", "Both, please!", "let's do all of them",
])
def test_acceptances(reply):
    assert attr.reaction(reply) == "accepted"


@pytest.mark.parametrize("reply", [
    "I don't think that'll work for me.", "That's too complicated.", "not interested", "I'm not going to do that.",
    "That's a no from me.", "Thanks, but I'll keep my current routine.", "That sounds awful.", "Eh, I don't love it.",
    "Don't bother.", "I'll leave it, thanks.", "Hmm nope.", "I'd rather do it on Sundays instead.",
    "The second option sounds too complicated.", "No need, thanks.",
    # negated acts and doing it oneself are refusals even with an acceptance phrase inside (I141)
    "Don't set that up.", "I'll do it myself, thanks.", "Thanks but I'm fine.", "I'm ok without it.",
    "I'd rather you didn't.", "That's not what I want.", "Rather not, thanks.", "Not a chance.", "Not keen.",
    "Wouldn't work for me.", "I hate that idea.", "Ugh, no.", "Neither, thanks.", "None of those, sorry.",
])
def test_rejections(reply):
    assert attr.reaction(reply) == "rejected"


@pytest.mark.parametrize("reply", ["Let me think about it.", "Perhaps another time.", "Not yet.", "I'll consider it.",
                                   "Thanks, I'll think about it.", "Not sure that's right.",
                                   "yes but what about rainy days?"])
def test_deferrals_and_doubts_write_nothing(reply):
    assert attr.reaction(reply) == "contested"


@pytest.mark.parametrize("reply", ["Thanks.", "ok thanks", "cool, thank you", "Great, now my printer is broken.",
                                   "Got it. Unrelated question: how tall is Everest?",
                                   "Noted, thanks. Anyway, I need to buy a new laptop.", "lol"])
def test_acknowledgements_and_new_topics_accept_nothing(reply):
    assert attr.reaction(reply) == "uncontested"


@pytest.mark.parametrize("reply, n", [("let's go with the second one", 2), ("Option 1, please.", 1),
                                      ("no, the first one", 1), ("I'll take the last one", -1),
                                      ("option b", 2), ("Sounds good, do it.", None)])
def test_option_choice(reply, n):
    assert attr.option_choice(reply) == n


TWO_RULES = ("I can set this up two ways: 1) whenever a bill arrives, I file it under Finance, or 2) whenever a bill "
             "is overdue, I ping you the same morning.")


def test_choosing_one_option_writes_it_and_turns_down_the_other(conn):
    run_conversation(conn, [("user", "Bills keep slipping through."), ("assistant", TWO_RULES),
                            ("user", "let's go with the second one")])
    (rule,) = nodes(conn, "standing_procedure")
    assert "overdue" in rule["canonical_name"]
    prov = {e["entry_type"]: e for e in ksql.get_provenance(conn, rule["id"])}
    assert prov["user_acceptance"]["message_id"] == "c1-m2"
    (other,) = msql.rejected_options(conn)
    assert "bill arrives" in other["name"] and other["rejection_message_id"] == "c1-m2"


def test_offer_question_accepted_becomes_the_rule_with_the_offer_quoted(conn):
    offer = "Would you like me to remind you every month on the 25th to pay the rent?"
    run_conversation(conn, [("user", "I keep forgetting the rent."), ("assistant", offer), ("user", "yes please")])
    (rule,) = nodes(conn, "standing_procedure")
    assert "pay the rent" in rule["canonical_name"]
    prov = {e["entry_type"]: e for e in ksql.get_provenance(conn, rule["id"])}
    assert prov["agent_suggestion"]["verbatim_excerpt"].startswith("Would you like me to remind you")


def test_offer_question_refused_or_unanswered_writes_nothing(conn):
    offer = "Should I always answer in Portuguese from now on?"
    run_conversation(conn, [("user", "Olá!"), ("assistant", offer), ("user", "nah, not for me")], conv="a")
    run_conversation(conn, [("user", "Olá!"), ("assistant", offer)], conv="b")   # silence is never acceptance
    assert nodes(conn, "memory_directive") == []
    (opt,) = msql.rejected_options(conn)
    assert opt["node_kind"] == "memory_directive"


def test_an_ok_before_a_new_topic_only_acknowledges(conn):
    sugg = "Here's a routine you could use before a long drive:\n- check the tyre pressure\n- top up the washer fluid"
    run_conversation(conn, [("user", "Road trip soon."), ("assistant", sugg),
                            ("user", "ok. different question: what's a good playlist for driving?")])
    (p,) = nodes(conn, "procedure")
    assert (p["lifecycle_state"], p["lifecycle_substate"]) == ("suggested", "candidate")
    assert "user_acceptance" not in {e["entry_type"] for e in ksql.get_provenance(conn, p["id"])}


@pytest.mark.parametrize("assistant, expected", [
    ("I could archive every newsletter automatically whenever one arrives.", "archive every newsletter"),
    ("I can set a rule so that if a flight gets delayed, I notify you right away.", "flight gets delayed"),
])
def test_assistant_rules_in_its_own_voice(conn, assistant, expected):
    run_conversation(conn, [("user", "Any ideas?"), ("assistant", assistant), ("user", "Definitely, do that.")])
    assert any(expected in n for n in names(conn, "standing_procedure"))


@pytest.mark.parametrize("assistant, expected", [
    ("A good process for onboarding a new hire would be: send the welcome email, set up their accounts, then "
     "schedule a buddy lunch.", "onboarding a new hire"),
    ("My suggestion for your weekly review: first clear your inbox, then look at next week's calendar, and lastly "
     "pick three priorities.", "weekly review"),
])
def test_assistant_routines(conn, assistant, expected):
    run_conversation(conn, [("user", "Any ideas?"), ("assistant", assistant), ("user", "Fine by me.")])
    assert names(conn, "procedure") == [expected]


@pytest.mark.parametrize("text, expected, first", [
    ("Before teaching a lesson I always print the handouts, test the projector and write the agenda on the board.",
     "teaching a lesson", "print the handouts"),
    ("To bleed a radiator I usually turn the heating off, open the valve and close it when water comes out.",
     "bleed a radiator", "turn the heating off"),
    ("quick notes on how I restring the guitar: loosen the old strings > thread the new ones > tune it up twice",
     "restring the guitar", "loosen the old strings"),
])
def test_user_procedure_shapes(conn, text, expected, first):
    run_conversation(conn, [("user", text)])
    (p,) = nodes(conn, "procedure")
    assert p["canonical_name"] == expected and len(p["payload"]["steps"]) == 3
    assert p["payload"]["steps"][0]["intent"] == first   # the first step is not swallowed by the task


def test_procedure_look_alike_before_with_a_feeling(conn):
    run_conversation(conn, [("user", "Before exams I always get nervous and sleep badly.")])
    assert names(conn, "procedure") == []
