"""Round 4 of goal and procedure wording (issue 18 (d), decisions I130–I136): the structural cues — first-person
subject + aim predicate + object, owned aim nouns and labels, aims given as answers; step markers, arrows, leads
naming a routine and its task, task lines, trailers, and lead-in + steps across two messages — and their guards.
The sentences here are in neither phrasing bank."""

from __future__ import annotations

import pytest

from kenning.bench.synth_mining import MiningGen, _last_user, _turns
from kenning.intake.mining import aims

from .helpers import names, nodes, run_conversation


def turns_of(text):
    return _turns(text)


# ---- goals ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    # commitment predicates stand alone; any -ly adverb (even misspelt) may sit between subject and predicate
    ("morning! so im basically determined to get fluent in italian before our trip in 2027",
     "get fluent in italian before our trip"),
    ("We're committed to paying off the mortgage early.", "paying off the mortgage early"),
    ("i am absolutly determined to finish the ironman", "finish the ironman"),
    ("Hi! Quick context: I'm striving to get my blood pressure down.", "get my blood pressure down"),
    ("I'm dead set on opening a bakery someday.", "opening a bakery"),
    ("I have set myself a challenge to swim 1km without stopping.", "swim 1km without stopping"),
    ("I've given myself six months to learn basic French.", "learn basic French"),
    ("I'm working towards running a half marathon in under two hours.", "running a half marathon in under two hours"),
    # wanting / "going to" / "will" with a long horizon, before or after
    ("This summer we're going to finally redo the bathroom.", "redo the bathroom"),
    ("I will learn to code in Python by the end of the year.", "learn to code in Python"),
    # an owned aim noun with any modifiers
    ("my number one aim for next year is to cut my screen time in half.", "cut my screen time in half"),
    ("Honestly the main thing I'm working towards is a promotion to senior engineer.",
     "a promotion to senior engineer"),
])
def test_goal_from_structure(conn, text, expected):
    run_conversation(conn, [("user", text)])
    assert names(conn, "goal") == [expected]


@pytest.mark.parametrize("text", [
    "I wish the train wasn't always late.",
    "I was determined to learn the violin as a kid.",          # past: "was" breaks the chain
    "My son is aiming to get into Oxford.",                    # someone else's
    "We're going to the beach next summer.",                   # going to a place
    "I will be 40 next year, scary.",                          # a state, not an aim
    "I'm not planning to move house in 2027.",                 # negated
    "If we decide to sell the flat next year, what are the tax rules?",
    "I'm committed to the project until Friday.",              # a dated duty is an obligation's business
    "I'm aiming to finish this email by 5pm tomorrow.",
    "I'm trying to understand why my code fails this year.",   # wanting to know
    "Their goal for 2027 is to double revenue.",
    "My old goal was to run an ultra.",
    "I love to cook on Sundays.",                              # a habit, not "I'd love to"
])
def test_no_goal_from_look_alikes(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "goal") == []


def test_a_list_label_gives_one_goal_per_item(conn):
    run_conversation(conn, [("user", "Bucket list, in no particular order: swim with turtles, see Petra, "
                                     "learn to tango.")])
    assert names(conn, "goal") == ["learn to tango", "see Petra", "swim with turtles"]


@pytest.mark.parametrize("question, answer, expected", [
    ("Anything you're hoping to accomplish this year?", "mostly getting my driving licence",
     ["getting my driving licence"]),
    ("What are your goals for the next few months?", "to launch the podcast and get 100 listeners",
     ["launch the podcast and get 100 listeners"]),
    ("What are you working towards right now?", "hmm? a black belt in judo, hopefully by 2028",
     ["a black belt in judo"]),
    ("What are you working towards right now?", "not sure yet to be honest", []),
    ("What are your goals?", "Why do you ask?", []),
    # the assistant asked nothing about aims: a bare phrase is no goal
    ("What did you have for lunch?", "a black bean burrito", []),
])
def test_an_aim_given_as_the_answer_to_the_assistants_question(conn, question, answer, expected):
    run_conversation(conn, [("user", "Hi!"), ("assistant", question), ("user", answer)])
    assert names(conn, "goal") == expected


def test_a_typing_slip_in_a_commitment_word_still_counts_but_only_in_long_words():
    assert aims.subject_aim("Im determind to run a marathon")[0] == "run a marathon"
    assert aims.subject_aim("We're comitted to paying the loan off")[0] == "paying the loan off"
    assert aims._near("aimng", aims._STRONG) is None   # too short to be sure it is a slip


def test_a_dated_duty_is_not_a_goal_but_a_year_is_a_horizon():
    assert aims.day_deadline("renew my passport by June 19")
    assert aims.day_deadline("file it by 2026-02-01")
    assert not aims.day_deadline("run a marathon by the end of the year")
    assert aims.LONG_HORIZON.search("by 2027") and not aims.LONG_HORIZON.search("by 2026-02-01")


# ---- procedures ------------------------------------------------------------------------------------------------

def procs(conn):
    return {n["canonical_name"]: [s["intent"] for s in n["payload"]["steps"]] for n in nodes(conn, "procedure")}


@pytest.mark.parametrize("text, task, n_steps", [
    ("Quick note on how I water the balcony plants: fill the big can -> add a drop of feed -> water the tomatoes",
     "water the balcony plants", 3),                                                     # arrows
    ("My Sunday reset routine:\n[x] strip the beds\n[x] run the dishwasher\n[ ] plan the week's meals",
     "sunday reset routine", 3),                                                         # checkboxes
    ("good morning! here's my system for invoicing clients. first, I export the hours. next, I draft the invoice. "
     "finally, I email it.", "invoicing clients", 3),                                    # lead sentence, then steps
    ("Renew the car insurance:\n1. get three quotes online\n2. call the current insurer\n3. switch if it's cheaper",
     "renew the car insurance", 3),                                                      # a task line over a list
    ("Clean the fish tank\n1- unplug the filter\n2- swap a third of the water\n3- wipe the glass",
     "clean the fish tank", 3),                                                          # "1-" markers, no colon
    ("Open the spreadsheet, paste the new figures, refresh the pivot table. That's my whole routine for the "
     "monthly report.", "the monthly report", 3),                                        # task after the steps
    ("unplug the filter, then refill the feeder, then wipe the glass. that's my fish tank routine", "fish tank", 3),
    ("I descale the kettle the same way every time: fill it with vinegar, boil it twice, rinse it out.",
     "descale the kettle", 3),
    ("Before I water the plants I always fill the can, check the soil and mist the leaves.", "water the plants", 3),
    ("I water the plants by filling the can, checking the soil and misting the leaves.", "water the plants", 3),
    ("My usual drill when watering the plants - fill the can, check the soil, mist the leaves.",
     "watering the plants", 3),
    ("My approach to watering the plants: 1) fill the can 2) check the soil 3) mist the leaves",
     "watering the plants", 3),                                                          # inline numbers
    ("Step one: preheat the oven. Step two: butter the tin. Step three: pour in the batter.  That's how I bake my "
     "banana bread.", "bake my banana bread", 3),
    ("I clean the fish tank every Sunday: first unplug the filter, then swap a third of the water, then wipe the "
     "glass.", "clean the fish tank", 3),                                                # "a third" is one step
    ("Notes to self - cleaning the fish tank\n1) unplug the filter\n2) swap a third of the water\n3) wipe the glass",
     "cleaning the fish tank", 3),                                                       # a gerund after an aside
    ("The way to clean the fish tank: you unplug the filter, then you swap the water, then you wipe the glass.",
     "clean the fish tank", 3),
    # a closing question is no part of the quote; "today's" is no one else's; markdown and emoji numbers
    ("My routine for today's school run:\n1. pack the lunches\n2. check the bags\n3. walk them to the gate\n"
     "Any thoughts on how to speed it up?", "today's school run", 3),
    ("**How I get the spare room ready**\n1. wash the sheets\n2. clear the desk\n3. put out fresh towels",
     "get the spare room ready", 3),
    ("1\ufe0f\u20e3 wash the sheets\n2\ufe0f\u20e3 clear the desk\n3\ufe0f\u20e3 put out fresh towels\nthat's how I get "
     "the spare room ready", "get the spare room ready", 3),
    ("Here's what works for me when I get the spare room ready for guests: wash the sheets, clear the desk, put "
     "out fresh towels.", "get the spare room ready for guests", 3),
    ("Okay, so for getting the spare room ready it's first wash the sheets, then clear the desk, then put out fresh "
     "towels.", "getting the spare room ready", 3),
])
def test_procedure_from_step_structure(conn, text, task, n_steps):
    run_conversation(conn, [("user", text)])
    got = procs(conn)
    assert list(got) == [task] and len(got[task]) == n_steps
    assert not any(s.lower().startswith(("i ", "you ")) for s in got[task])   # the act, not who does it


@pytest.mark.parametrize("text", [
    "What's your routine for staying focused? I'm curious.",
    "Groceries for tonight:\n- two onions\n- a jar of pesto\n- fresh basil",
    "Weekend plans:\n- brunch with Sam\n- hike on Sunday morning",
    "Agenda for tomorrow's call:\n1. budget review\n2. hiring plan",
    "Things to sort before the move:\n1. cancel the gym membership\n2. redirect the post",
    "My dad's system for mowing the lawn: first the edges, then stripes. It takes him hours.",
    "I used to meal prep like this: cook on Sunday, then freeze portions. Not anymore.",
    "First we missed the bus, then we got lost in the rain. That's how I ended up at the wrong wedding.",
    "When I got home I made tea, read the post and fed the cat.",
    "When I get paid I'll buy a bike, a tent and a stove.",
    "When I was in Rome, I saw the Colosseum, ate pasta and visited the Vatican.",
    "My sister's way to make pancakes: mix flour and eggs, add milk, fry them.",
    "For dinner it's soup, then pasta, then cake.",                          # dishes, not acts
    "I start by filling the can, after that I check the soil, and I finish by misting the leaves.",  # no task
])
def test_no_procedure_from_look_alikes(conn, text):
    run_conversation(conn, [("user", text)])
    assert procs(conn) == {}


@pytest.mark.parametrize("turns, task, n_steps", [
    ([("user", "Let me tell you my process for packing for a work trip"), ("assistant", "Sure!"),
      ("user", "- lay out clothes for each day\n- roll everything into the carry-on\n- charge the laptop")],
     "packing for a work trip", 3),
    ([("user", "When I restring my guitar I begin with loosening all the pegs."), ("assistant", "Okay."),
      ("user", "After that I swap the strings one by one, and then I tune it twice.")], "restring my guitar", 3),
    ([("user", "Can I tell you how I clean the fish tank?"), ("assistant", "Of course!"),
      ("user", "I unplug the filter, then I swap a third of the water, then I wipe the glass.")],
     "clean the fish tank", 3),
])
def test_a_lead_in_and_its_steps_in_two_messages(conn, turns, task, n_steps):
    run_conversation(conn, turns)
    got = procs(conn)
    assert list(got) == [task] and len(got[task]) == n_steps
    prov_msgs = {p["message_id"] for n in nodes(conn, "procedure") for p in __import__(
        "kenning.store.knowledge", fromlist=["x"]).get_provenance(conn, n["id"])}
    assert prov_msgs == {"c1-m2"}   # written from the message with the steps


@pytest.mark.parametrize("turns", [
    # a question for steps, then a list: the user's own steps only when the lead-in offered them
    [("user", "How do I clean the fish tank?"), ("assistant", "Which part?"),
     ("user", "unplug the filter, swap a third of the water, wipe the glass")],
    # a feeling, then a list of states: no steps
    [("user", "I'm not sure how I feel about this."), ("assistant", "That's okay."),
     ("user", "Tired, stressed, and a bit sad.")],
    # a story, then what happened
    [("user", "Here's what happened at work today."), ("assistant", "Go on."),
     ("user", "My boss yelled, then the server crashed, then I went home.")],
])
def test_no_procedure_across_messages_without_a_lead_in(conn, turns):
    run_conversation(conn, turns)
    assert procs(conn) == {}


def test_an_accepted_arrow_routine_from_the_assistant_is_written_with_its_steps(conn):
    run_conversation(conn, [("user", "My inbox is a mess."),
                            ("assistant", "Here's a simple routine to tidy your inbox: archive anything old -> "
                                          "answer the quick ones -> flag the rest for Friday."),
                            ("user", "ok I'll follow those steps")])
    assert procs(conn) == {"tidy your inbox": ["archive anything old", "answer the quick ones",
                                               "flag the rest for Friday"]}


# ---- the bank's multi-turn frames ------------------------------------------------------------------------------

def test_a_multi_turn_frame_plants_its_item_on_the_last_user_turn():
    t = turns_of("assistant: What are you aiming for? ||| user: to swim a mile")
    assert t == [("assistant", "What are you aiming for?"), ("user", "to swim a mile")] and _last_user(t) == 1
    assert turns_of("plain text") == [("user", "plain text")] and _last_user(turns_of("plain text")) == 0
    gen = MiningGen(300, 3)
    convs = list(gen.iterate())
    by_id = {m["id"]: m for c in convs for m in (n["message"] for n in c["mapping"].values()) if m}
    planted = [t for t in gen.truth if t["class"] in ("goal", "procedure") and t["positive"]]
    assert planted and all(by_id[t["message_id"]]["author"]["role"] == "user" for t in planted)
    assert not any(" ||| " in by_id[t["message_id"]]["content"]["parts"][0] for t in planted)
