"""Round 6 of procedure and refusal wording (issue 18 (d), decisions I150–I158): a procedure named by the aim
stated nearest to its steps — in a sentence of its own, in a title, in the user's previous turn or in the
assistant's question — steps as plain lines, imperative sentences, times or one past occasion kept; refusals in
other words than no, read after the acceptance rules so an acceptance with a "no" inside stays one. Every sentence
here is the helper's own and in neither phrasing bank."""

from __future__ import annotations

import pytest

from kenning.bench import synth_mining as sm
from kenning.intake.extractors import cues
from kenning.intake.mining import attribution as attr
from kenning.store import mining as msql

from .helpers import names, nodes, run_conversation

U, A = "user", "assistant"

PROCEDURES = [
    # the task in a sentence of its own, the steps after it (I152)
    ([(U, "I water the plants every Sunday. First I fill the watering can, then I check the soil, and finally I "
          "mist the ferns.")], "water the plants"),
    ([(U, "Changing a bike tyre is easy. Flip the bike over. Lever the old tyre off. Fit the new one.")],
     "changing a bike tyre"),
    ([(U, "It's simple to descale the kettle: fill it with vinegar, boil it once, rinse it three times.")],
     "descale the kettle"),
    ([(U, "I change the bedsheets on Sundays - strip the bed, wash the sheets at 60, put the spare set on.")],
     "change the bedsheets"),
    ([(U, "Every Friday I clean out the fridge: bin the old stuff, wipe the shelves, and make a shopping list.")],
     "clean out the fridge"),
    # routine words and task introducers of every kind (I152)
    ([(U, "Quick guide to repotting a plant:\n- water it the day before\n- loosen the root ball\n- move it to a "
          "bigger pot")], "repotting a plant"),
    ([(U, "For cleaning the fish tank, the order is: unplug the filter, siphon the water, refill the tank.")],
     "fish tank"),
    ([(U, "I follow the same steps every time I deep clean the oven: spray it with degreaser, leave it for an hour, "
          "scrub it with a sponge.")], "deep clean the oven"),
    ([(U, "Each time I travel abroad I: order some local currency, tell the bank, download offline maps.")],
     "travel abroad"),
    ([(U, "Deep cleaning the oven goes like this - spray it, wait an hour, scrub it.")], "deep cleaning the oven"),
    ([(U, "This is the routine I use to study for exams: read the chapter, make flashcards, test myself the next "
          "day.")], "study for exams"),
    ([(U, "I always do these things before a long flight: charge my devices, download films, pack snacks.")],
     "long flight"),
    ([(U, "Before every run I stretch my calves, drink a glass of water, and put on sunscreen.")], "every run"),
    ([(U, "When it's time to defrost the freezer I switch it off, empty it into cool boxes, and put towels on the "
          "floor.")], "defrost the freezer"),
    ([(U, "Defrosting the freezer, step by step: 1. switch it off 2. empty it 3. lay down towels")],
     "defrosting the freezer"),
    ([(U, "So basically when prepping the garden beds for winter, I pull the weeds, spread the compost and cover "
          "them with straw.")], "garden beds"),
    ([(U, "I've been ironing shirts the same way for years: collar first, then the cuffs, then the sleeves, then "
          "the body")], "ironing shirts"),
    ([(U, "ok so before i go on a long drive i check the tyres then top up the washer fluid after that i plan the "
          "stops and finally i download the podcasts")], "long drive"),
    # names say what it achieves, not how many steps or what kind of note (I151)
    ([(U, "Cleaning the gutters in 3 steps: set up the ladder, scoop out the leaves, flush the pipes.")],
     "cleaning the gutters"),
    ([(U, "Pro tip for descaling the kettle: fill it with vinegar, boil it once, rinse it three times.")],
     "descaling the kettle"),
    ([(U, "My go-to steps for fixing a flat tyre are: remove the wheel, find the puncture, patch it.")],
     "fixing a flat tyre"),
    # one task in many frames (I152): the aim is named wherever the user puts it
    ([(U, "I've figured out the best order for restringing the guitar: loosen the old strings, clean the "
          "fretboard, fit the new set.")], "restringing the guitar"),
    ([(U, "Process: loosen the old strings → clean the fretboard → fit the new set (for restringing the guitar)")],
     "restringing the guitar"),
    ([(U, "Restring the guitar? Easy: loosen the old strings, clean the fretboard, fit the new set.")],
     "restring the guitar"),
    ([(U, "Restringing the guitar — my steps: loosen the old strings, clean the fretboard, fit the new set.")],
     "restringing the guitar"),
    ([(U, "In order to restring the guitar, I loosen the old strings, clean the fretboard and fit the new set.")],
     "restring the guitar"),
    ([(U, "If I need to restring the guitar I always loosen the old strings, clean the fretboard, then fit the new "
          "set.")], "restring the guitar"),
    ([(U, "Any time I restring the guitar I loosen the old strings, clean the fretboard and fit the new set.")],
     "restring the guitar"),
    ([(U, "Restringing the guitar takes me ten minutes: I loosen the old strings, clean the fretboard, and fit the "
          "new set.")], "restringing the guitar"),
    ([(U, "When restringing the guitar: 1) loosen the old strings 2) clean the fretboard 3) fit the new set")],
     "restringing the guitar"),
    ([(U, "Guitar restring:\nloosen the old strings\nclean the fretboard\nfit the new set")], "guitar restring"),
    ([(U, "I do it like this when I restring the guitar - loosen the old strings, clean the fretboard, fit the new "
          "set.")], "restring the guitar"),
    ([(U, "Here's how restringing the guitar works for me: loosen the old strings, clean the fretboard, fit the "
          "new set.")], "restringing the guitar"),
    ([(U, "You want to bleed the radiators? First turn the heating off, then open the valve with a key, then close "
          "it when water appears.")], "bleed the radiators"),
    ([(U, "Need to bleed the radiators? Do this: turn the heating off, open the valve, close it when water "
          "appears.")], "bleed the radiators"),
    ([(U, "Our way of bleeding the radiators: turn the heating off, open the valve, close it when water appears.")],
     "bleeding the radiators"),
    ([(U, "how i bleed the radiators (for future me): turn the heating off, open the valve, close it when water "
          "appears")], "bleed the radiators"),
    ([(U, "Note for myself on bleeding radiators\n1. turn the heating off\n2. open the valve\n3. close it when "
          "water appears")], "bleeding radiators"),
    ([(U, "Bleed the radiators by turning the heating off, opening the valve and closing it when water appears.")],
     "bleed the radiators"),
    # the routine's own modifier is kept when the task is a bare thing (I151)
    ([(U, "My tried and tested bedtime routine for the kids: bath at 7, story at 7.30, lights out at 8.")],
     "bedtime routine for the kids"),
    ([(U, "My cleaning routine for the bathroom: spray the shower, scrub the sink, mop the floor.")],
     "cleaning routine for the bathroom"),
    ([(U, "Our budgeting process each month: export the statements, categorise the spending, move the savings.")],
     "budgeting process"),
    ([(U, "The grocery shopping routine I follow: check the fridge, write a list, order online.")],
     "grocery shopping routine"),
    # a noun title over its steps (I156)
    ([(U, "Sunday meal prep — roast the vegetables, cook the rice, portion it into boxes.")], "meal prep"),
    ([(U, "Morning pages, my way: make a coffee, write three pages, close the notebook without rereading.")],
     "morning pages"),
    ([(U, "The trick with cold brew: grind coarse, use cold water, wait 12 hours.")], "cold brew"),
    ([(U, "Weekly review => empty the inbox, check the calendar, pick three priorities")], "weekly review"),
    ([(U, "ok here goes, car wash: rinse the car, soap it from the top down, dry it with a chamois.")], "car wash"),
    # steps with times (I157)
    ([(U, "To set up the tent: at 5, pick a flat spot. At 5:15, lay out the groundsheet. At 5:30, peg the "
          "corners.")], "set up the tent"),
    ([(U, "My Sunday reset: at 9 strip the beds, at 10 hoover the flat, at noon do the food shop.")], "sunday reset"),
    # one past occasion kept as the way to do it (I155)
    ([(U, "What I did the last time I had to move house was label every box, then pack one room a day, then book "
          "the van a month early. It went really well, so I'll do it the same way next time.")], "move house"),
    # the aim in the turn before: the assistant's question, or the user's own remark (I153, I154)
    ([(A, "What's your routine for winding down at night?"),
      (U, "switch off the laptop, read for twenty minutes, put the phone in the kitchen")], "winding down"),
    ([(A, "How do you normally prepare for a job interview?"),
      (U, "- research the company\n- rehearse my answers out loud\n- pick my outfit the night before")],
     "job interview"),
    ([(A, "Walk me through how you file your receipts."),
      (U, "scan them with my phone\nrename each file with the date\ndrop them into the tax folder")],
     "file my receipts"),
    ([(A, "Do you have a system for paying bills?"),
      (U, "yep: check the statement, pay it online, file the receipt")], "paying bills"),
    ([(A, "What's the first thing you do when you start work?"),
      (U, "check my calendar, then clear urgent emails, then plan the day")], "start work"),
    ([(U, "I want to get better at backing up my laptop."), (A, "What do you do now?"),
      (U, "I plug in the drive, then open the app, then run a backup.")], "backing up my laptop"),
]


@pytest.mark.parametrize("turns, key", PROCEDURES, ids=[k for _, k in PROCEDURES])
def test_a_procedure_is_named_by_its_nearest_aim(conn, turns, key):
    run_conversation(conn, turns)
    got = names(conn, "procedure")
    assert len(got) == 1 and key in got[0].lower(), got


LOOK_ALIKES = [
    [(U, "Yesterday I tried to fix the sink. First the wrench slipped, then the pipe cracked, and finally I called "
         "a plumber.")],
    [(U, "I had an awful Monday. First I missed the bus, then I spilled coffee on my shirt, then the meeting ran "
         "late.")],
    [(U, "My brother waters his plants every Sunday. First he fills the can, then he checks the soil.")],
    [(U, "Things for the camping trip: a tent, a stove, two sleeping bags.")],
    [(U, "Saturday: call the bank, pick up the parcel, email Sam about the invoice.")],
    [(U, "Errands — buy stamps, return the library books, get a haircut.")],
    [(A, "How do you usually wind down at night?"),
     (U, "I don't really have a routine, I just scroll until I'm tired")],
    [(A, "How do you usually prepare for interviews?"), (U, "Why do you ask?")],
    [(U, "Coffee order for the team: flat white, oat latte, double espresso.")],
    [(U, "I love Sundays. I sleep in, make pancakes and read the paper.")],
    [(U, "Last time I moved house, I labelled every box, packed one room a day and booked the van early, but it "
         "was still chaos.")],
    [(U, "My wife's way with the garden: water it at dawn, weed on Saturdays, mulch in autumn.")],
    [(U, "Cleaning the oven is awful. It takes forever. Nobody likes doing it.")],
    [(U, "Ingredients: two eggs, a cup of flour, some milk.")],
    [(U, "Every time I see her I get nervous, my hands shake and I forget my words.")],
    [(U, "Before the meeting I grabbed a coffee, called Sam and printed the slides.")],
    [(U, "The guide to the museum was great: we saw the dinosaurs, had lunch and bought postcards.")],
    [(U, "My sister's guide to packing: roll the clothes, use cubes, leave a third empty.")],
    [(U, "Can you give me a guide to repotting a plant?")],
    [(U, "Before a long flight I get anxious and can't sleep.")],
    [(U, "My weekend: sleep in, see friends, cook dinner.")],
    [(U, "I run every morning. It's the best part of my day.")],
    [(U, "If I ever had to restring a guitar, I'd first watch a video, then ask a friend.")],
    [(U, "If I have to restring the guitar, I'd probably take it to a shop, then pick it up later.")],
    [(U, "In order to save money I cancelled the gym, stopped eating out and sold the car.")],
    [(U, "Any time I call my mum she asks about work, complains about the weather and tells me about the "
         "neighbours.")],
    [(U, "Restring the guitar? No idea how, never done it.")],
    [(U, "What's the best order for the playlist: rock, jazz, pop?")],
    [(U, "You want to come to the party? First ask your boss, then tell me.")],
    [(U, "Need to borrow the car? Ask Dad first, then fill it up after.")],
    [(U, "I got here by taking the bus, walking the last mile and asking a stranger.")],
]


@pytest.mark.parametrize("turns", LOOK_ALIKES, ids=[t[-1][1][:30] for t in LOOK_ALIKES])
def test_procedure_look_alikes_write_nothing(conn, turns):
    run_conversation(conn, turns)
    assert names(conn, "procedure") == []


@pytest.mark.parametrize("reply", [
    "We already own a label printer.", "Can't justify the cost right now.", "My landlord wouldn't let me.",
    "Not that one.", "I'd give that one a miss.", "Nah, forget it.", "Never mind, I'll manage.",
    "We've already got something like that.", "I tried that last year, didn't stick.",
    "Does that need wifi? If so, no.", "Honestly I'd rather just keep using paper instead.",
    "That isn't going to fly with my manager.", "I don't have a printer, so no.", "Nothing for me, thanks.",
    "Sadly that's out of my budget.", "I'm allergic to cats, so that won't happen.",
    # preferring one's own, being covered, a judgement of worth (I150)
    "I prefer my paper planner.", "I'd rather keep it simple.", "Meh.", "I'm all set, thanks.",
    "I've got that covered already.", "I'll manage.", "Seems excessive for a small flat.", "Hard no.",
])
def test_refusals_in_other_words_than_no(reply):
    assert attr.reaction(reply) == "rejected"


@pytest.mark.parametrize("reply", ["No objections, go for it.", "By all means, set it up.",
                                   "Not a bad idea, let's try it.", "I couldn't agree more, do it.",
                                   "Can't wait to try it!", "No worries, I'll do that.",
                                   "I prefer your version, let's go with it.", "I'd rather do that than wait.",
                                   "I wouldn't mind trying that."])
def test_acceptances_with_a_no_inside(reply):
    assert attr.reaction(reply) == "accepted"


@pytest.mark.parametrize("reply, want", [("Oh wow, I didn't know that.", "uncontested"),
                                         ("Huh, never heard of that before.", "uncontested"),
                                         ("Interesting, no idea that existed.", "uncontested"),
                                         ("Thanks. I can't believe how cold it is today.", "uncontested"),
                                         ("I'm not sure, why would that help?", "contested"),
                                         ("Not yet, maybe next week.", "contested"),
                                         ("Does it cost money? No idea.", "contested"),
                                         ("I don't know, is that safe?", "contested"),
                                         ("Is that safe? I'm not sure.", "contested")])
def test_interest_and_doubt_are_no_refusal(reply, want):
    assert attr.reaction(reply) == want


def test_a_refusal_with_its_reason_records_the_option_and_writes_no_directive(conn):
    run_conversation(conn, [(U, "Any tips for my mornings?"),
                            (A, "Here's how to start the day: first drink a glass of water, then stretch for five "
                                "minutes, and finally plan the top three tasks."),
                            (U, "Thanks, but I'd give it a miss - I don't have the time.")])
    assert names(conn, "procedure") == [] and names(conn, "memory_directive") == []
    assert [r["rejection_message_id"] for r in msql.rejected_options(conn)] == ["c1-m2"]


def test_the_funnel_cue_sees_round_six_shapes():
    cue = cues()["procedures"]
    for text in ["I water the plants every Sunday. First I fill the can, then I check the soil.",
                 "scan them with my phone\nrename each file with the date\ndrop them into the tax folder",
                 "Sunday meal prep — roast the vegetables, cook the rice, portion it into boxes.",
                 "What I did last time I had to move house was label every box, then pack one room a day. "
                 "Worked well, doing it again."]:
        assert cue(text), text
    assert not cue("I had pasta for lunch and a nap after.")


def test_steps_with_times_keep_their_times(conn):
    run_conversation(conn, [(U, "To set up the tent: at 5, pick a flat spot. At 5:15, lay out the groundsheet.")])
    (p,) = nodes(conn, "procedure")
    assert p["canonical_name"] == "set up the tent"
    assert [s["intent"] for s in p["payload"]["steps"]] == ["at 5 pick a flat spot",
                                                           "At 5:[Number] lay out the groundsheet"]


def test_round_six_is_in_the_tuning_bank_only_by_its_own_lists():
    for frame in sm.R6_PROC_FRAMES + sm.R6_PROC_NEG:
        assert frame in sm.PROC_FRAMES or frame in sm.PROC_NEG
    assert set(sm.R6_REJECT) <= set(sm.REJECT) and set(sm.R6_ACCEPT) <= set(sm.ACCEPT)
    assert sm._gerund("make cold brew") == "making cold brew" and sm._gerund("back up my laptop") == \
        "backing up my laptop"


def test_a_reason_given_in_passing_is_no_constraint_but_a_real_one_still_is(conn):
    run_conversation(conn, [(U, "I don't have the money for a gym right now.")], conv="a")
    assert names(conn, "memory_directive") == []
    run_conversation(conn, [(U, "I don't eat pork, please remember that.")], conv="b")
    assert len(names(conn, "memory_directive")) == 1
