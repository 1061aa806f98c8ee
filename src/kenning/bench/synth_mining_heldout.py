"""The HELD-OUT phrasing bank of the mining benchmark (issue 18 (d); decision I100).

Written in one go before any rule was tuned against it, and never used for tuning: the rules are changed only
while looking at the tuning bank's misses (``synth_mining.TUNING``); this bank is only ever measured, its misses
are not printed by the benchmark (``--misses`` covers the tuning bank alone). Everything differs from the tuning
bank — sentence frames, slot fillers, acceptances, fillers — and it adds the distractors a real export is full of:
questions, hypotheticals, other people's aims and duties (third person), and assistant suggestions the user does
not take up. Do not edit it to make a figure better; add new phrasings to the tuning bank instead."""

from __future__ import annotations

from kenning.bench.synth_mining import Bank

GOALS = [("become fluent in Japanese", "japanese"), ("climb Kilimanjaro", "kilimanjaro"),
         ("pay off my student loan", "student loan"), ("open a small bakery", "bakery"),
         ("run my first triathlon", "triathlon"), ("learn to play the cello", "cello"),
         ("get promoted to team lead", "team lead"), ("build an emergency fund of six months", "emergency fund"),
         ("finish restoring the old Vespa", "vespa"), ("publish a children's book", "children's book")]
GOAL_FRAMES = [
    "This year is all about one thing for me: I want to {g}.",
    "I've decided I'm going to {g} before I'm 35.",
    "The plan is to {g} by the end of {year}.",
    "One of my resolutions is to {g}.",
    "I'm aiming to {g} within the next eighteen months.",
    "Ultimately what I want is to {g}.",
    "I'm working on a long-term project: I want to {g}.",
    "My target for {year} is to {g}.",
    "I have this dream of being able to {g}, and I'm finally going for it.",
    "Personal goal: {g} by {year}.",
]
GOAL_NEG = [
    "My friend Priya wants to {g} next year.",
    "Should I try to {g}, or is that unrealistic?",
    "If I had more time I'd {g}.",
    "Everyone at work says they want to {g}.",
    "Wouldn't it be funny if I decided to {g}?",
    "How long does it usually take to {g}?",
]

OBLIGATIONS = [("renew the car insurance", "car insurance", ""), ("send the invoice to Acme", "invoice", ""),
               ("pay the water bill", "water bill", ""), ("submit my expense claim", "expense claim", ""),
               ("get the boiler serviced", "boiler", ""), ("return the library books", "library", ""),
               ("sign the mortgage papers", "mortgage", ""),
               ("book the vet for the dog's vaccinations", "vet", ""), ("apply for the visa", "visa", ""),
               ("finish the slides for the board meeting", "slides", "")]
OBL_FRAMES = [
    "I need to {o} by {date}, otherwise there's a late fee.",
    "I've promised to {o} by {date}.",
    "I can't forget to {o} by {date}.",
    "By {date} I have to {o}.",
    "I'm on the hook to {o} by {date}.",
    "It's on me to {o} before {date}.",
    "Must {o} by {date}.",
    "I should really {o} by {date}, it's a hard deadline.",
    "Adding this so I don't drop it: {o} by {date}.",
]
OBL_DUE_FRAMES = ["My {n} is due by {date}.", "Heads-up, the {n} needs to be paid by {date}.",
                  "The {n} has to be in by {date}."]
OBL_DUE = [("car insurance renewal", "insurance"), ("rent", "rent"), ("VAT return", "vat"),
           ("phone bill", "phone bill"), ("annual report", "annual report")]
OBL_NEG = [
    "My brother has to {o} by {date}.",
    "Did you know people have to {o} by {date} in some countries?",
    "If I had to {o} by {date}, could I manage it?",
    "Last month I forgot to {o} and it cost me.",
    "Should I {o} by {date} or wait?",
    "My manager needs to {o} before {date}, not me.",
]

PROCS = [("set up a new laptop", "new laptop", ["install the password manager", "sign in to the cloud drive",
                                                "turn on disk encryption", "copy my dotfiles"]),
         ("prepare the weekly newsletter", "newsletter", ["collect links from the team channel",
                                                          "write a short intro", "schedule it for Tuesday at 8"]),
         ("do the monthly budget review", "budget review", ["download the card statements",
                                                            "categorise every expense", "compare against the plan"]),
         ("onboard a new contractor", "contractor", ["send the NDA", "create their accounts", "book an intro call"]),
         ("bake sourdough", "sourdough", ["feed the starter the night before", "mix the dough and rest it for an hour",
                                          "stretch and fold four times", "bake at 250 degrees"])]
PROC_FRAMES = [
    "Quick write-up of how I {p}:\n1) {s0}\n2) {s1}\n3) {s2}",
    "My process to {p} is: {s0}; {s1}; {s2}.",
    "When it's time to {p}, I {s0}, then {s1}, then {s2}.",
    "How to {p}, step by step:\n* {s0}\n* {s1}\n* {s2}",
    "The way I {p}: step one, {s0}; step two, {s1}; step three, {s2}.",
    "For future reference, to {p} you {s0}, {s1} and finally {s2}.",
]
PROC_NEG = ["What's the best way to {p}?", "My colleague has a complicated way to {p}.",
            "I wonder whether there's an app to {p}.", "If I ever need to {p}, I'll ask you."]

STANDING = [("a bill arrives by email", "bill", "add it to my budget spreadsheet"),
            ("someone books a meeting after 6pm", "6pm", "decline it politely"),
            ("my flight is delayed", "delayed", "look up the next train for me"),
            ("a client sends a contract", "contract", "save it to the Contracts folder"),
            ("the server goes down", "server", "page the on-call engineer")]
STANDING_FRAMES = [
    "From now on, whenever {t}, {a}.",
    "Rule for you: when {t}, {a}.",
    "Each time {t}, I want you to {a}.",
    "Please {a} whenever {t}.",
    "In case {t}, {a} straight away.",
    "Going forward, if {t}, {a} without asking me.",
]
STANDING_TIME = [("Every Sunday evening, give me a preview of the week ahead.", "week ahead"),
                 ("On the first of every month, remind me to pay the rent.", "rent"),
                 ("Every weekday at 7, send me the top headlines.", "headlines")]
STANDING_NEG = ["Whenever it rains, my knee hurts.", "Every time my brother visits, he eats everything.",
                "If the train is late again, I'll scream.", "What should I do whenever I feel stressed?",
                "Whenever you get a chance, could you explain APRs?", "My mum calls me every Sunday."]

DIRECTIVES = [
    ("Please always give me prices in euros.", "euros"),
    ("I don't eat pork, so leave it out of any meal plans.", "pork"),
    ("Keep it casual with me, no formal language.", "casual"),
    ("When I say 'the cabin' I mean our place in the Lake District.", "cabin"),
    ("I'd rather you didn't suggest meetings before 10am.", "10am"),
    ("Remember that I'm lactose intolerant.", "lactose"),
    ("Use Celsius for all temperatures, please.", "celsius"),
    ("No spoilers for any TV shows, ever.", "spoilers"),
    ("Always address me as Alex, not Alexander.", "alex"),
    ("I hate long preambles, get straight to the point.", "preambles"),
]
DIRECTIVE_NEG = ["My dad always wants prices in dollars.", "Do you use Celsius or Fahrenheit?",
                 "Would it help if I gave you more context?", "Some people prefer formal language.",
                 "What if I asked you to always use euros?", "My sister never eats pork."]

SUGGESTIONS = [
    ("procedure", "tent", "Here's a simple way to pitch the tent: first lay out the footprint, then clip the poles "
     "to the inner, and finally stake out the guy lines."),
    ("standing_procedure", "receipt", "How about this rule: whenever a receipt comes in, I file it under Expenses."),
    ("memory_directive", "kilometres", "Got it, I'll always give distances in kilometres for you."),
    ("procedure", "starter", "Try this routine for the sourdough starter: 1. discard half\n2. feed it equal flour "
     "and water\n3. leave it somewhere warm"),
]
ACCEPT = ["Brilliant, let's do it that way.", "Yep, that works for me.", "Deal, I'll go with that.",
          "That's exactly what I needed, I'm doing it."]
REJECT = ["Not for me, thanks.", "I'd prefer not to do it like that.", "No thanks, I'll skip that one."]
CONTEST = ["Are you certain? That sounds off.", "Wait, why that order?"]
MOVE_ON = ["Anyway, my holiday starts next week.", "Okay. Different topic: my printer is broken."]

FILLER_USER = ["Can you recommend a podcast about history?", "It's been a long week.",
               "Translate 'good morning' into Portuguese.", "How many litres are in a gallon?",
               "I just got back from a walk by the river."]
FILLER_ASSISTANT = ["Of course, here are a few options.", "Sorry to hear that, hope the weekend is restful.",
                    "Here you go.", "Sure thing."]

ASSISTANT_NEG = [
    ("You could set yourself a goal to run a half marathon next spring.", "Maybe, I'll think about it.", "goal"),
    ("Don't forget you might need to renew your library card by March 1.", "Hm, not sure that applies to me.",
     "obligation"),
    ("One option: whenever a newsletter arrives, I archive it for you.", "No, leave my newsletters alone.",
     "standing_procedure"),
    ("Should I always write to you in formal English?", "No, definitely not.", "memory_directive"),
    ("A good way to plan a trip: first set a budget, then pick dates, then book flights.",
     "Are you sure that's the right order?", "procedure"),
]

HELDOUT = Bank("heldout", GOALS, GOAL_FRAMES, GOAL_NEG, OBLIGATIONS, OBL_FRAMES, OBL_DUE_FRAMES, OBL_DUE, OBL_NEG,
               PROCS, PROC_FRAMES, PROC_NEG, STANDING, STANDING_FRAMES, STANDING_TIME, STANDING_NEG, DIRECTIVES,
               DIRECTIVE_NEG, SUGGESTIONS, ACCEPT, REJECT, CONTEST, MOVE_ON, FILLER_USER, FILLER_ASSISTANT,
               ASSISTANT_NEG)
