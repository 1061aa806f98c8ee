"""Goal and procedure wording beyond the first frames (issue 18 (d), decisions I111, I112): structural cues, not
phrase lists — and the look-alikes that must stay out of the user's goal and procedure lists."""

from __future__ import annotations

import pytest


from .helpers import names, nodes, run_conversation


@pytest.mark.parametrize("text, expected", [
    ("Busy week. Anyway, the aim is to repaint the whole flat by August, so weekends are taken.",
     "repaint the whole flat"),
    ("One of my resolutions for 2027 is to cook dinner at home five nights a week.",
     "cook dinner at home five nights a week"),
    ("really hoping to finally pass my driving test this summer", "pass my driving test"),
    ("im tryin to stop buying takeaway coffee", "stop buying takeaway coffee"),
    ("I'm on a quest to visit every lighthouse in Cornwall.", "visit every lighthouse in Cornwall"),
    ("I'd like to get to the point where I can play the piano by ear.", "play the piano by ear"),
    ("My plan next year is to move to a four-day week.", "move to a four-day week"),
    ("I would love to see the northern lights before I turn 50.", "see the northern lights"),
    ("This is the year I finally learn to swim.", "learn to swim"),
    ("I've always wanted to build my own canoe.", "build my own canoe"),
    # lead (I121): saving up for something, the household "we" included — the bundled sample's "We want to save …"
    ("We want to save for a new car. If we put aside 800 EUR a month, how long will it take?", "save for a new car"),
    ("I'm saving up for a new bike.", "save up for a new bike"),
])
def test_goal_from_fresh_wording(conn, text, expected):
    run_conversation(conn, [("user", text)])
    assert names(conn, "goal") == [expected]


@pytest.mark.parametrize("text", [
    "My goal was to learn the cello, but that's over.",
    "My flatmate wants to repaint the whole flat by August.",
    "Should I aim to pass my driving test this summer?",
    "My cousin's plan next year is to move to Berlin.",
    "I used to want to play the piano by ear.",
    "I want to know how long it takes to learn the cello.",
    "My sister would love to see the northern lights before she turns 50.",
    "My brother wants to save for a car.",
    "Should we save for a car?",
])
def test_no_goal_from_past_aims_others_aims_or_questions(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "goal") == []


@pytest.mark.parametrize("text, expected, first_step", [
    ("right so to reset the router: unplug it for a minute, then hold the reset pin, finally log in again",
     "reset the router", "unplug it for a minute"),
    ("Steps I go through to onboard a new hire:\n- create their accounts\n- order a laptop\n- book a welcome lunch",
     "onboard a new hire", "create their accounts"),
    ("Whenever I repot a cactus I do it the same way:\n1. wear thick gloves\n2. wrap it in newspaper\n"
     "3. use gritty soil", "repot a cactus", "wear thick gloves"),
    ("Jotting down how to bleed the radiators\n1. turn the heating off\n2. open the valve with the key\n"
     "3. close it when water appears", "bleed the radiators", "turn the heating off"),
    ("Finally worked out how to descale the kettle. First fill it with vinegar, then boil it twice, and finally "
     "rinse it well.", "descale the kettle", "fill it with vinegar"),
    ("The way I prep my bike for a race:\n- pump the tyres to 90\n- check the brakes\n- lube the chain",
     "prep my bike for a race", "pump the tyres to [Number]"),
    ("Sunday meal prep routine for the week\n1. roast two trays of veg\n2. cook a big pot of rice\n"
     "3. portion everything into boxes", "the week", "roast two trays of veg"),
    ("My evening shutdown routine goes like this:\n– close every tab\n– write tomorrow's top three\n"
     "– charge the laptop", "evening shutdown routine", "close every tab"),
    ("The easiest way I've found to clear a blocked sink is to pour in soda crystals, then add boiling water, "
     "then plunge it hard.", "clear a blocked sink", "add boiling water"),
    ("For the weekly shop, I usually check the fridge, then write a list, and once that's done order online.",
     "the weekly shop", "write a list"),
    ("First I sort the whites, then I wash them at 60, and finally I hang them outside — that's how I do "
     "the laundry.", "do the laundry", "sort the whites"),
])
def test_procedure_from_fresh_wording(conn, text, expected, first_step):
    run_conversation(conn, [("user", text)])
    procs = nodes(conn, "procedure")
    assert [p["canonical_name"] for p in procs] == [expected]
    steps = procs[0]["payload"]["steps"]
    assert len(steps) >= 2 and steps[0]["intent"] == first_step


@pytest.mark.parametrize("text", [
    "Could you give me the steps to reset the router?",
    "What's the easiest way to bleed the radiators? I've never done it.",
    "My dad has his own way to do the laundry and it drives me mad.",
    "My goals for this year:\n- run a half marathon\n- read more books",
    "Her routine for mornings:\n1. make coffee\n2. read the news",
])
def test_no_procedure_from_requests_or_other_peoples_ways(conn, text):
    run_conversation(conn, [("user", text)])
    assert names(conn, "procedure") == []


def test_accepted_assistant_steps_after_a_contraction_are_still_mined(conn):
    """"Sure, here's a simple way to …:" — "here's" is not someone else's routine (I112)."""
    run_conversation(conn, [("user", "My shoes stink after every run."),
                            ("assistant", "Sure, here's a simple way to freshen running shoes:\n1. pull out the insoles"
                                          "\n2. stuff them with newspaper\n3. sprinkle baking soda inside"),
                            ("user", "Perfect, I'll use that.")])
    assert names(conn, "procedure") == ["freshen running shoes"]
