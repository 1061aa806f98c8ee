"""Planted mining content for ``kenning bench synth --mining N`` (issue 18 part 8): conversations whose user turns
state goals, obligations, procedures, standing procedures and directives in VARIED natural phrasings (several
sentence frames per class, filled from slot lists, with look-alike negatives: questions, hypotheticals, other
people's aims, habits), and assistant suggestions the user accepts, rejects, contests or lets stand.

The ground truth goes into the manifest's ``mining`` section: one record per planted item with the export message
id it is in and a key word its mined name must contain. Separate from the main generator (own RNG stream), so
the existing conversations for every seed stay byte-identical."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any, Iterator

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]

GOALS = [("run a marathon", "marathon"), ("learn Spanish", "spanish"), ("write a novel", "novel"),
         ("save for a house deposit", "deposit"), ("get my pilot's licence", "pilot"),
         ("build a vegetable garden", "garden"), ("lose ten kilos", "kilos"), ("launch my pottery shop", "pottery"),
         ("read fifty books", "books"), ("switch careers into data science", "data science"),
         ("cycle from Paris to Rome", "rome"), ("finish my PhD thesis", "thesis")]
GOAL_FRAMES = [
    "My goal is to {g} by {year}.", "I'm trying to {g} this year.", "My big ambition right now is to {g}.",
    "Something I'm working towards is to {g}.", "I've set myself a goal to {g} before I turn 40.",
    "Honestly, the thing I want to achieve this year is to {g}.", "I really want to {g} eventually.",
    "Long story short, my main objective is to {g}.", "I'm determined to {g} by next summer.",
    "Okay so my new aim is to {g}, whatever it takes.",
    "This year I'm going to {g}, no excuses.", "I'd love to {g} within two years.",
    "Big plan for {year}: my goal is to {g}.", "I hope to {g} before the kids start school.",
]
GOAL_NEG = [
    "What would be a realistic goal if I wanted to {g}?", "My sister's goal is to {g}.",
    "What if I tried to {g}?", "Imagine if I could {g} by {year}.", "Do people usually {g} in a year?",
    "I'll probably {g} someday, who knows?", "Is it hard to {g}?",
]

OBLIGATIONS = [("renew my passport", "passport", "renew my passport"), ("pay the electricity bill", "electricity",
               "pay the electricity bill"), ("file my tax return", "tax", "file my tax return"),
               ("submit the grant report", "grant", "submit the grant report"),
               ("return the rental car", "rental", "return the rental car"),
               ("send the signed lease to the landlord", "lease", "send the signed lease"),
               ("book the MOT for the van", "mot", "book the MOT"),
               ("hand in the quarterly budget", "budget", "hand in the quarterly budget"),
               ("register for the conference", "conference", "register for the conference"),
               ("pay the nursery fees", "nursery", "pay the nursery fees")]
OBL_FRAMES = [
    "I have to {o} by {date}.", "Note to self: I need to {o} before {date}.", "I must {o} no later than {date}.",
    "Ugh, I've got to {o} by {date}, can't forget.", "Reminder that we need to {o} by {date}.",
    "I'm supposed to {o} by {date}.", "I really need to {o} before {date} or there'll be a fine.",
    "Don't let me forget, I have to {o} by {date}.", "Gotta {o} by {date}.",
    "Heads up: I need to {o} by {date} at the latest.",
]
OBL_DUE_FRAMES = ["The {n} is due on {date}.", "Our {n} is due {date}.", "The deadline for the {n} is {date}."]
OBL_DUE = [("quarterly VAT payment", "vat"), ("electricity bill", "electricity"), ("library books", "library"),
           ("council tax instalment", "council"), ("project proposal", "proposal"), ("dentist invoice", "dentist")]
OBL_NEG = ["Do I have to {o} by {date}?", "I had to {o} last year, what a pain.", "My partner has to {o} by {date}.",
           "What happens if I don't {o} by {date}?"]

PROCS = [("back up my laptop", "laptop", ["plug in the external drive", "open the backup app", "run a full backup",
                                          "eject the drive safely"]),
         ("make cold brew", "cold brew", ["grind 100 grams of coffee coarsely", "mix it with a litre of water",
                                          "leave it in the fridge overnight", "strain it through a filter"]),
         ("close the month in the books", "close the month", ["export the bank statement",
                                                              "match every transaction", "send the report to "
                                                              "accounts@example.com"]),
         ("prepare for a client call", "client call", ["read the last meeting notes", "check open invoices",
                                                        "write three questions"]),
         ("clean the espresso machine", "espresso", ["descale it with citric acid", "flush it twice with water",
                                                     "wipe the steam wand"]),
         ("publish a blog post", "blog post", ["write the draft in Markdown", "proofread it aloud",
                                               "upload it to /var/www/blog", "share the link"])]
PROC_FRAMES = [
    "Here's how I {p}:\n{numbered}", "My routine for when I {p}: first {s0}, then {s1}, and finally {s2}.",
    "This is how I {p} — {dashed}", "The steps to {p}:\n{numbered}",
    "When I {p}, I first {s0}, then {s1}, after that {s2}.",
    "To {p}, I start by {s0}, then {s1}, then {s2}.", "My checklist for when I {p}:\n- {s0}\n- {s1}\n- {s2}",
]
PROC_NEG = ["How do I {p}? Is there a trick?", "I tried to {p} yesterday, it was a mess.",
            "Any tips on how to {p}?"]

STANDING = [("an email from my landlord arrives", "landlord", "flag it and remind me to reply"),
            ("a new invoice lands in the Finance folder", "invoice", "file it under Receipts"),
            ("my sister texts me", "sister", "remind me to call her back"),
            ("a meeting gets cancelled", "cancelled", "block the slot for focus time"),
            ("the build fails", "build", "send me a summary of the error"),
            ("a package is delivered", "package", "add it to the returns tracker")]
STANDING_FRAMES = [
    "Whenever {t}, please {a}.", "Every time {t}, {a}.", "If {t_if}, {a}.", "Any time {t}, {a}, unless it's "
    "a weekend.", "Each time {t}, {a} automatically.",
    "Any time {t}, just {a}, no need to ask.", "Whenever {t}, {a} and then let me know.",
]
STANDING_TIME = [("Every Monday morning, send me a summary of my open tasks.", "open tasks"),
                 ("Each Friday afternoon, remind me to review my budget.", "budget"),
                 ("Every morning, tell me the weather before I leave.", "weather"),
                 ("Remind me to stretch every time a meeting ends.", "stretch")]
STANDING_NEG = ["If I were rich, I would buy a boat.", "Whenever I think about it, I get nervous?",
                "Every Monday is hard for me.", "What if my landlord emails me again?"    "Whenever you have a moment, no rush.", "Every time I try, I fail.",
]

DIRECTIVES = [
    ("I prefer metric units when talking about distances.", "metric"),
    ("Please never schedule meetings on Fridays, unless it's urgent.", "fridays"),
    ("I'm allergic to peanuts.", "peanuts"),
    ("From now on, always answer in British English.", "british"),
    ('When I say "the shop" I mean the bike shop on Main Street.', "shop"),
    ("I like my summaries short and in bullet points.", "summaries"),
    ("Don't ever cc my manager on personal emails.", "manager"),
    ("I'd much rather get one long email than lots of short ones.", "email"),
    ("Going forward, please use 24-hour time in anything you write for me.", "24-hour"),
    ('"The lab" means my home office upstairs.', "lab"),
    ("I can't eat gluten.", "gluten"),
    ("My preference is aisle seats on long flights.", "aisle"),
    ("Please keep replies under 200 words.", "200 words"),
    ("Never use emojis in anything you write for me.", "emojis"),
    ("I'm vegetarian, so no meat recipes please.", "vegetarian"),
]
DIRECTIVE_NEG = ["Do you prefer tea or coffee?", "My brother prefers the mountains.", "I always forget my keys.",
                 "Would it be better to use metric units?"    "I used to prefer tea, now I drink anything.", "Never mind, forget it.",
]

SUGGESTIONS = [
    ("procedure", "espresso", "Here's how to clean the espresso machine: first descale it with citric acid, then "
     "flush it twice with water, and finally wipe the steam wand."),
    ("procedure", "houseplants", "Here's how to repot your houseplants: first water them the day before, then "
     "loosen the root ball, and finally move them into a pot one size up."),
    ("standing_procedure", "backup", "I suggest a rule: whenever a backup fails, send you an alert with the log."),
    ("memory_directive", "french", "Noted — from now on, I'll always reply in French."),
    ("procedure", "tyre", "I recommend this: the steps to change a tyre: 1. loosen the nuts\n2. jack up the car\n"
     "3. swap the wheel\n4. tighten the nuts in a star pattern"),
]
ACCEPT = ["Perfect, I'll use that.", "Yes, let's do that.", "Sounds good, go with that.", "Great, I'll do exactly that.",
          "Ok let's go with that!", "Love it, let's use that."]
REJECT = ["No, I'd rather not.", "Nope, that won't work for me.", "Let's not do that.", "I don't like that idea.",
          "Nah, I'll pass on that."]
CONTEST = ["Hmm, are you sure that's right?", "I'm not sure about that, why would that help?",
           "But what about the warranty?"]
MOVE_ON = ["By the way, I moved to Lisbon last year.", "Unrelated, but my cat is sick today.",
           "Thanks. Also the weather here is awful."]

FILLER_USER = ["Can you summarise this article for me?", "I watched a great film last night.",
               "Tell me a joke about penguins.", "What's the capital of Mongolia?", "I had pasta for lunch.",
               "My back hurts a bit today.", "Explain how compound interest works."]
FILLER_ASSISTANT = ["Sure — here is a short summary.", "That sounds lovely!", "Happy to help with that.",
                    "Here's a quick explanation.", "Good question!"]


# Tuning-bank additions written while tuning the rules for issue 18 (d) (decision I100): more natural variety for
# the rules to be improved on. Never copied from the held-out bank.
GOALS += [("visit every national park in the country", "national park"), ("learn to sail", "sail"),
          ("get a first-class degree", "degree")]
GOAL_FRAMES += [
    "I want to {g} before the end of next year.", "My plan for the next few years is to {g}.", "Goal for {year}: {g}.",
    "I've made up my mind to {g}.", "What I'm really going for is to {g}.", "I'm hoping to {g} by {year}.",
    "The big thing on my list is to {g}.", "New year's resolution: {g}.", "I intend to {g} this decade.",
]
GOAL_NEG += ["My neighbour is trying to {g}.", "Would it be crazy to {g}?", "If only I could {g}.",
             "Lots of people say they want to {g}."]
OBL_FRAMES += [
    "I've got a deadline: {o} by {date}.", "Need to {o} by {date}, no extensions.", "On my plate: {o} before {date}.",
    "By {date}, I need to {o}.", "I committed to {o} by {date}.", "Mustn't forget: {o} by {date}.",
]
OBL_DUE_FRAMES += ["The {n} must be paid by {date}.", "My {n} is due {date}.",
                   "The {n} needs to be submitted by {date}."]
OBL_NEG += ["My colleague needs to {o} by {date}.", "If I needed to {o} by {date}, what would I do?",
            "Can I {o} by {date}?"]
PROC_FRAMES += [
    "How I {p}:\n1) {s0}\n2) {s1}\n3) {s2}", "My method to {p}: {s0}; then {s1}; then {s2}.",
    "Procedure for when I {p}: step 1, {s0}; step 2, {s1}; step 3, {s2}.",
    "Notes on how to {p}:\n* {s0}\n* {s1}\n* {s2}", "To {p} I usually {s0}, {s1} and lastly {s2}.",
]
STANDING_FRAMES += [
    "From now on, when {t}, please {a}.", "Whenever {t}, I'd like you to {a}.", "Please {a} every time {t}.",
    "When {t}, always {a}.", "Standing instruction: if {t_if}, {a}.", "In the event that {t}, {a}.",
]
STANDING_TIME += [("Every evening at 9, remind me to take my vitamins.", "vitamins"),
                  ("On the last day of each month, send me my spending summary.", "spending")]
STANDING_NEG += ["Whenever I travel, I get a cold.", "If it snows tomorrow, we'll stay home."]
DIRECTIVES += [
    ("Always show amounts in pounds sterling.", "sterling"),
    ("I'm not a fan of exclamation marks, please avoid them.", "exclamation"),
    ("Keep your answers formal with me.", "formal"),
    ("Remember that I work night shifts.", "night shifts"),
    ("I'd rather you didn't book anything on Sundays.", "sundays"),
    ("Use the metric system for recipes, please.", "recipes"),
    ("No small talk, just answers.", "small talk"),
    ("When I say 'the office' I mean the co-working space on Elm Road.", "office"),
]
DIRECTIVE_NEG += ["My wife prefers the window seat.", "Does everyone prefer short answers?",
                  "Some people hate emojis."]
SUGGESTIONS += [
    ("procedure", "bike chain", "A quick way to clean the bike chain: first degrease it, then scrub it with a brush, "
     "and finally oil every link."),
    ("standing_procedure", "overdue", "Maybe a rule like this: whenever an invoice is overdue, I remind you the next "
     "morning."),
    ("memory_directive", "miles", "Understood, I'll always use miles for you."),
]
ACCEPT += ["Yep, sounds great.", "Deal.", "That works, let's do that.", "Great idea, I'll go with it.", "Nice, do it."]
REJECT += ["No thanks.", "Not a good fit for me."]
CONTEST += ["Are you sure about that?"]
MOVE_ON += ["Anyway, different topic: my car needs new tyres."]
ASSISTANT_NEG = [
    ("Maybe your goal could be to write a memoir.", "Eh, I doubt it.", "goal"),
    ("You probably need to renew your gym membership by the 30th.", "I don't think so.", "obligation"),
    ("I could set a rule: whenever a calendar invite arrives, I accept it.", "Please don't do that.",
     "standing_procedure"),
    ("I'll always answer in German from now on, okay?", "No, English is fine.", "memory_directive"),
]


# Tuning round 2 (issue 18 (d)): horizons first, labelled plans, "I'd like to", steps after a colon without
# sequence words, "in N steps", date-as-subject deadlines, "I'll need to", once-a-week rules, diet constraints.
GOAL_FRAMES += [
    "Over the next two years I want to {g}.", "By {year}, I'd like to {g}.", "It's my ambition to {g}.",
    "Top priority this year: {g}.", "Eventually I'd like to {g}.", "Step one of my five-year plan: {g}.",
    "I'd like to {g} by {year}.",
]
GOAL_NEG += ["I'd like to know how people {g}.", "It's my brother's ambition to {g}."]
OBL_FRAMES += ["I'll need to {o} before {date}.", "{date_cap} is the deadline to {o}.", "Deadline to {o}: {date}."]
OBL_NEG += ["I'll never need to {o}, luckily."]
PROC_FRAMES += [
    "Here's what I do to {p}: {s0}, {s1}, then {s2}.", "I always {p} like this: {s0}, then {s1}, then {s2}.",
    "I {p} in three steps: {s0}, {s1} and {s2}.",
]
PROC_NEG += ["Here's what I think about how people {p}: it's overrated."]
STANDING_TIME += [("Once a week, send me a list of unpaid invoices.", "unpaid invoices")]
DIRECTIVES += [
    ("I'd appreciate it if you always kept answers to three paragraphs.", "paragraphs"),
    ("My preferred name is Jo.", "jo"),
    ("I'm diabetic, so keep sugar out of recipes.", "diabetic"),
    ("Write to me in plain English, nothing fancy.", "plain english"),
]
DIRECTIVE_NEG += ["My preferred airline went bust.", "Is it rude to write in plain English?"]


# Tuning round 3 (issue 18 (d), slice i18tune, decision I110): written blind to the held-out bank, from how people
# type to a chat assistant — aims mid-paragraph, lowercase without punctuation, typos in the frame words, deadlines
# and sub-goals; procedures as bullets, "first … then … finally …", routines and step lists with a lead-in; and
# look-alikes: questions, hypotheticals, other people's aims, past or abandoned aims, advice-seeking.
GOAL_FRAMES += [
    "ok so i'm trying to {g} this year and could use some structure",
    "Work has been chaotic lately. Anyway, the goal is to {g} by {year}, so I need to carve out time.",
    "hoping to finally {g} this year",
    "I'm working towards being able to {g}.", "I want to get to the point where I can {g}.",
    "im tryin to {g} before i turn 35 lol", "My plan this year is to {g}.",
    "The aim is to {g} by the end of {year}.", "I've decided I'm going to {g} next year.",
    "Really want to {g} this year, it's been on my mind for ages.",
    "I'm on a mission to {g}.", "i want to {g} by {year} - thats the dream",
    "One of my goals for {year} is to {g}.", "Trying to {g} this year, wish me luck.",
]
GOAL_NEG += [
    "I used to want to {g} but I've let that go.", "Years ago my goal was to {g}.",
    "Should I try to {g} or is that unrealistic?", "My husband wants to {g} by {year}.",
    "If I had more time I'd {g}.", "how long does it take to {g}?", "My friend's plan this year is to {g}.",
    "Is it worth trying to {g} at my age?",
]
PROC_FRAMES += [
    "Whenever I {p} I do it the same way:\n- {s0}\n- {s1}\n- {s2}",
    "ok so to {p}: first {s0}, then {s1}, finally {s2}",
    "My usual process to {p} is: {s0}, then {s1}, and then {s2}.",
    "For reference, this is my routine when I {p}:\n1. {s0}\n2. {s1}\n3. {s2}",
    "Steps I follow to {p}:\n• {s0}\n• {s1}\n• {s2}",
    "how i {p}: {s0}, then {s1}, then {s2}",
    "First I {s0}, then I {s1}, and finally I {s2} — that's how I {p}.",
    "Writing this down so I don't forget how to {p}.\n1. {s0}\n2. {s1}\n3. {s2}",
]
SUGGESTIONS += [
    ("procedure", "gutters", "Sure, here's a simple way to clear the gutters:\n1. set the ladder on firm ground\n"
     "2. scoop out the leaves\n3. flush the downpipe with a hose"),
]
PROC_NEG += [
    "What's the best way to {p}? I've never done it.", "My dad has his own way to {p}, it drives me mad.",
    "Could you give me steps to {p}?", "If I had to {p} I'd probably just wing it.",
    "I used to {p} every week but I stopped.",
]


# Tuning round 4 (issue 18 (d), slice i18blind, decisions I130–I139): written blind to the held-out bank, from how
# people type to a chat assistant about aims and routines. A frame may span turns: parts joined by " ||| ", each
# "assistant: …" or "user: …" (a plain part is the user's); the planted item is the LAST user turn — an aim given
# as the answer to the assistant's "what are you working towards?", a step list sent after its lead-in.
GOALS += [("get my 5k under 25 minutes", "5k"), ("pay off my credit card", "credit card"),
          ("get my AWS certification", "aws"), ("learn to play the guitar", "guitar")]
GOAL_FRAMES += [
    "hey! quick one before my actual question - im determined to {g} this year so keep that in mind",
    "Hi there. So my big thing this year is to {g}.",
    "I've set myself a target: {g} by {year}.",
    "the plan is to {g} by spring, then we'll see",
    "We're aiming to {g} before the baby arrives.",
    "Step one is sorting out my schedule, but the bigger goal is to {g}.",
    "tryna {g} before i turn 40",
    "Im determind to {g} by {year}",
    "This year I want to {g}.",
    "What I want more than anything is to {g}.",
    "Thanks for that! Also, for context, I'm working on a plan to {g} within 18 months.",
    "Priority number one for me: {g}.",
    "I'm giving myself until {year} to {g}.",
    "Been thinking about it a lot and I'm committing to {g} in {year}.",
    "So we've decided: we're going to {g} next year.",
    "Bucket list, in no particular order: {g}, see the Alps, learn to bake bread.",
    "i've made it my mission to {g}",
    "Resolution time: I will {g} in {year}.",
    "assistant: What are you working towards at the moment? ||| user: honestly? to {g} by {year}",
    "assistant: Is there anything you're hoping to achieve this year? ||| user: {g}, ideally before summer",
    "assistant: What's your main goal right now? ||| user: mainly I want to {g}",
]
GOAL_NEG += [
    "I wish I could {g} but it's not realistic for me.", "My team's goal is to {g} by {year}.",
    "We were going to {g} last year but it fell through.", "I gave up trying to {g} ages ago.",
    "Do you think I could {g} by {year}?", "If I ever decide to {g}, what should I budget?",
    "My daughter is determined to {g}.", "I was planning to {g} but I've dropped the idea.",
    "People keep telling me to {g}.", "I wish it would stop raining so I could get outside.",
    "assistant: What are you working towards at the moment? ||| user: not sure yet, to be honest",
    "assistant: Maybe a good goal would be to {g}? ||| user: nah, not my thing",
]
PROCS += [("do my weekly meal prep", "meal prep", ["plan five dinners", "write the shopping list",
                                                     "cook two big batches", "portion everything into boxes"]),
          ("onboard a new client", "onboard", ["send the welcome pack", "set up a shared folder",
                                                "book a kickoff call"]),
          ("bake sourdough", "sourdough", ["feed the starter the night before", "mix the dough in the morning",
                                            "bake it at 250 degrees for 40 minutes"])]
PROC_FRAMES += [
    "When I {p}, I start by {s0}, after that I {s1}, and I finish by {s2}.",
    "my process for when I {p}:\n{numbered}",
    "How I {p}: {s0} -> {s1} -> {s2}",
    "Step 1: {s0}\nStep 2: {s1}\nStep 3: {s2}\nThat's how I {p}.",
    "Checklist before I {p}:\n[ ] {s0}\n[ ] {s1}\n[ ] {s2}",
    "so the way I {p} is: {s0}, {s1}, {s2}",
    "{p_cap}:\n1. {s0}\n2. {s1}\n3. {s2}",
    "ok here's the drill for when I {p}. first, {s0}. second, {s1}. third, {s2}.",
    "In short: {s0}, then {s1}, then {s2}. That's the whole process for when I {p}.",
    "Hi! Sharing how I handle it when I need to {p}:\n- {s0}\n- {s1}\n- {s2}\nAny improvements?",
    "user: I'll write down how I {p}, one sec ||| assistant: Sure, go ahead. ||| user: 1. {s0}\n2. {s1}\n3. {s2}",
    "user: My routine when I {p} starts with {s0}. ||| assistant: Okay, and then? ||| user: Then I {s1}, and "
    "finally I {s2}.",
    "I {p} the same way every time: {s0}, next {s1}, and {s2} at the end.",
]
PROC_NEG += [
    "Can you walk me through how to {p}?", "What steps would you take to {p}?",
    "My to-do list for Saturday:\n- call the bank\n- pick up the dry cleaning\n- book the vet",
    "If I ever had to {p}, I'd first ask a friend, then watch a video.",
    "My flatmate's routine when she has to {p}: first she panics, then she calls me.",
    "I used to {p} like this: {s0}, then {s1}. Not anymore.",
    "Shopping list:\n- oat milk\n- eggs\n- coffee beans",
    "assistant: Here's a routine you could try to {p}:\n1. {s0}\n2. {s1}\n3. {s2} ||| user: Nah, too fiddly for me.",
]
SUGGESTIONS += [
    ("procedure", "inbox", "Here's a simple routine to clear your inbox: archive anything older than a month -> "
     "reply to the quick ones -> flag the rest for Friday."),
    ("procedure", "presentation", "I'd suggest these steps to prepare the presentation:\nStep 1: outline the three "
     "main points\nStep 2: draft one slide per point\nStep 3: rehearse it out loud twice"),
]
ACCEPT += ["ok I'll follow those steps", "that's perfect, adding it to my notes - I'll do that"]
ASSISTANT_NEG += [
    ("Your goal could be to run a half marathon by June.", "Hmm, I'm not sure that's for me.", "goal"),
    ("You could try this routine: 1. stretch\n2. plan the day\n3. check email last", "No thanks, I'll pass.",
     "procedure"),
]


# Tuning round 5 (issue 18 (d), slice i18attr, decisions I140–I149): written blind to the held-out bank, from how
# people answer an assistant's suggestion in chat — short affirmative heads ("yep", "deal", "👍"), a reference to the
# suggestion ("that works for me", "I'll give it a go"), a choice of an option by ordinal or name, acceptance with a
# tweak ("yes but make it Tuesday"); refusals with a reason, after an interjection ("hmm no"), by cost or effort,
# or by sticking with one's own way; deferrals ("maybe later") write nothing; an "ok" that only acknowledges before
# a new topic, thanks and a new topic, a neutral remark let the suggestion stand.
SUGGESTIONS += [
    ("standing_procedure", "plan the week", "Want me to set that up? Every Sunday evening, I could remind you to "
     "plan the week."),
    ("procedure", "packing", "You could try this when packing for a trip:\n1. lay everything out on the bed\n"
     "2. remove a third of it\n3. roll the clothes instead of folding them"),
    ("standing_procedure", "overdue", "Two options: 1) every Monday I send you a list of your open tasks, or "
     "2) whenever a task is overdue, I ping you the same day."),
    ("memory_directive", "bullet", "Got it — from now on I'll always put the key points in bullet lists."),
    ("procedure", "tax documents", "One approach that works well for sorting tax documents: first gather every "
     "receipt into one folder, then label each by month, and finally scan them into a spreadsheet."),
]
ACCEPT += [
    "sounds good, do that", "yep", "ok let's try it", "I'll take the second one", "that works for me",
    "love it!", "deal, thanks", "sure, why not", "👍", "yes but make it Tuesday", "Go with option 2.",
    "Yes please!", "Alright, let's give it a go.", "Makes sense, I'll do that.", "works for me 👍",
    "Thanks, that's perfect!", "Absolutely, set that up.", "I like it, let's go with your version.",
    "ok cool, I'll try that this weekend", "Definitely, do that.", "Option 1 please.",
    "Let's try the first one.", "That's a great plan, thanks - doing it.", "Fine by me.",
    "Yes, but make it a bit shorter.", "go for it", "sure thing",
]
REJECT += [
    "nah", "not for me", "I'd rather not", "that won't work because I work weekends", "let's skip that",
    "hmm no", "too expensive", "Honestly no, too much hassle.", "I'll stick with what I have.",
    "Thanks, but no thanks.", "Eh, no.", "That's not going to work for me, I'm away a lot.",
    "Not really my style.", "No way, that sounds like way too much work.", "I'm good, thanks.",
    "Definitely not.", "I'd prefer my own way, thanks.", "Pass.",
]
CONTEST += ["Maybe later.", "I'll think about it.", "Not now, maybe next month.", "Why would I do that?",
            "What's the point of step 2?"]
MOVE_ON += ["ok. different question: how do I boil an egg properly?", "Thanks! Now, about my trip to Rome...",
            "Interesting.", "Hm, interesting, I never knew that.", "Right. My sister is visiting next week, by the way."]
ASSISTANT_NEG += [
    ("How about a rule: whenever someone shares a file, I summarise it?", "maybe later", "standing_procedure"),
    ("You could try this: 1. sort the mail\n2. shred the junk\n3. file the bills", "too much effort honestly",
     "procedure"),
]
PROC_FRAMES += [
    "quick brain dump of how I {p}: {s0} > {s1} > {s2}",
    "Every time I {p}: {s0}. Then {s1}. Last, {s2}.",
    "I've got a system for when I {p}: {s0}, {s1}, and then {s2}. Works every time.",
    "user: Let me tell you how I {p}. ||| assistant: Sure! ||| user: first I {s0}, then I {s1}, and last I {s2}",
]
PROC_NEG += ["My mum's system to {p}: first she {s0}, then she {s1}.",
             "Do you {s0} first or {s1} first when you {p}?"]


# Tuning round 6 (issue 18 (d), slice i18blind6, decisions I150–I169): written blind to the held-out bank, before any
# rule change of the round. Procedure shapes rounds 1–5 did not use: a list with no lead-in whose aim is in the turn
# before (the assistant's "how do you usually …?", the user's own remark), one run-on sentence with "then … after
# that … finally", a past occasion kept as the way to do it ("what I did last time was …"), a titled checklist of
# "- " bullets, steps split over two user messages, steps with times ("at 9, …"), a note "X: a, b, c" under a gerund
# title; look-alikes: a story of one bad day, someone else's way, things needed (not acts), a day's to-do list, "I
# just wing it". Refusals in other words than no — a reason ("I already have one", "can't afford that", "my boss
# won't allow it"), "I'd pass", "not the second one", "rather … instead", a question answered by oneself ("will that
# work? … no, forget it") — and acceptances with a "no" or "not" inside ("no problem, let's do it", "why not").
R6_PROC_FRAMES = [
    "assistant: How do you usually {p}? ||| user: 1. {s0}\n2. {s1}\n3. {s2}",
    "assistant: How do you usually {p}? ||| user: {s0}, then {s1}, and {s2} at the end",
    "user: I finally worked out a decent way to {p}. ||| assistant: Oh nice, how does it go? ||| user: {s0}\n{s1}\n"
    "{s2}",
    "ok so when i need to {p} i {s0} then {s1} after that {s2} and finally i check nothing was missed",
    "What I did last time I had to {p} was {s0}, then {s1}, then {s2}. Worked a treat, so that's how I'll do it "
    "from now on.",
    "Checklist - {p_ing}\n- {s0}\n- {s1}\n- {s2}",
    "user: Step one when I {p}: {s0}. ||| assistant: ok, go on ||| user: Step two, {s1}. Step three, {s2}.",
    "To {p} on a Saturday: at 9, {s0}. At 10, {s1}. At 11, {s2}.",
    "{p_ing_cap}: {s0}; {s1}; {s2}.",
    "user: I always forget a step when I {p}. ||| assistant: Want to write them down here? ||| user: good idea. "
    "{s0}, {s1}, {s2}.",
]
R6_PROC_NEG = [
    "Last week when I had to {p} it all went wrong: first the power cut out, then the cat knocked my tea over, and "
    "finally I gave up.",
    "This is how Tom does it when he has to {p}: {s0}, then {s1}, then {s2}.",
    "Stuff I need to {p}:\n- a USB cable\n- the charger\n- my notebook",
    "Tomorrow:\n1. call the plumber\n2. email Sam about the invoice\n3. pick up the kids at 4",
    "assistant: How do you usually {p}? ||| user: honestly I just wing it, no real system",
]
R6_REJECT = [
    "Thanks, but I'd pass - I don't have the time.", "not the second one", "I'd pass.", "that's not for me",
    "skip that", "let's not", "no need", "I already have one.", "can't afford that right now",
    "my boss won't allow it", "Hmm, I'd rather just do it by hand instead.", "Will that work offline? Actually no, "
    "forget it.", "Appreciate it, but we already do something similar.", "We tried that before and it didn't help.",
]
R6_ACCEPT = ["no problem, let's do it", "no doubt, go ahead", "why not", "Can't argue with that, let's do it.",
             "No complaints here, set it up.", "I don't see why not!", "Nothing to lose, I'll try it."]
PROC_FRAMES += R6_PROC_FRAMES
PROC_NEG += R6_PROC_NEG
REJECT += R6_REJECT
ACCEPT += R6_ACCEPT


def _gerund(p: str) -> str:
    """"back up my laptop" → "backing up my laptop" (the bank's task verbs only)."""
    verb, _, rest = p.partition(" ")
    stem = verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb
    return f"{stem}ing {rest}".strip()


@dataclass(frozen=True)
class Bank:
    """One phrasing bank: the sentence frames, slot fillers and distractors the planted conversations are made of.
    ``tuning`` (below) is what the rules may be tuned on; ``heldout`` (``synth_mining_heldout``) was written before
    any tuning against it and is only ever measured (decision I100)."""
    name: str
    goals: list
    goal_frames: list
    goal_neg: list
    obligations: list
    obl_frames: list
    obl_due_frames: list
    obl_due: list
    obl_neg: list
    procs: list
    proc_frames: list
    proc_neg: list
    standing: list
    standing_frames: list
    standing_time: list
    standing_neg: list
    directives: list
    directive_neg: list
    suggestions: list
    accept: list
    reject: list
    contest: list
    move_on: list
    filler_user: list
    filler_assistant: list
    # (assistant turn, user reply, class): an assistant's suggestion of a goal/obligation the user does not take up,
    # or a rejected/contested rule: nothing may be written from either turn (held-out distractors)
    assistant_neg: list = field(default_factory=list)


TUNING = Bank("tuning", GOALS, GOAL_FRAMES, GOAL_NEG, OBLIGATIONS, OBL_FRAMES, OBL_DUE_FRAMES, OBL_DUE, OBL_NEG, PROCS,
              PROC_FRAMES, PROC_NEG, STANDING, STANDING_FRAMES, STANDING_TIME, STANDING_NEG, DIRECTIVES,
              DIRECTIVE_NEG, SUGGESTIONS, ACCEPT, REJECT, CONTEST, MOVE_ON, FILLER_USER, FILLER_ASSISTANT,
              ASSISTANT_NEG)


def bank_named(name: str) -> Bank:
    if name == "tuning":
        return TUNING
    if name == "heldout":
        from kenning.bench.synth_mining_heldout import HELDOUT
        return HELDOUT
    raise ValueError(f"unknown mining phrasing bank {name!r}; known: tuning, heldout")


def _turns(text: str) -> list[tuple[str, str]]:
    """A frame's turns: parts joined by " ||| ", each "assistant: …" or "user: …" (a bare part is the user's)."""
    if " ||| " not in text:
        return [("user", text)]
    out = []
    for part in text.split(" ||| "):
        role, sep, said = part.partition(": ")
        out.append((role, said) if sep and role in ("user", "assistant") else ("user", part))
    return out


def _last_user(turns: list[tuple[str, str]]) -> int:
    return max(i for i, (role, _) in enumerate(turns) if role == "user")


def _date_phrase(rng: random.Random, day: dt.date) -> str:
    d = day + dt.timedelta(days=rng.randint(5, 120))
    style = rng.randrange(5)
    if style == 0:
        return f"{_MONTHS[d.month - 1]} {d.day}"
    if style == 1:
        return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"
    if style == 2:
        return d.isoformat()
    if style == 3:
        return f"the {d.day}{'th' if 10 <= d.day % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d.day % 10, 'th')} of {_MONTHS[d.month - 1]}"
    return rng.choice(["the end of the month", "next Friday", "Monday"])


class MiningGen:
    def __init__(self, n: int, seed: int, start: dt.date = dt.date(2024, 1, 8), bank: str = "tuning"):
        self.b = bank_named(bank)
        # the tuning bank keeps its stream (and so its output); the held-out bank has its own
        stream = f"mining:{seed}" if bank == "tuning" else f"mining-{bank}:{seed}"
        self.n, self.rng, self.start = n, random.Random(stream), start
        self.prefix = "mining" if bank == "tuning" else f"mining-{bank}"
        self.truth: list[dict[str, Any]] = []

    def _plant(self, rng: random.Random, day: dt.date) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
        """One planted exchange: turns and the truth records for them (index = turn index)."""
        kind = rng.choice(["goal", "goal", "obligation", "obligation", "procedure", "standing", "standing",
                           "directive", "directive", "suggestion", "suggestion", "negative", "negative"])
        if kind == "goal":
            g, key = rng.choice(self.b.goals)
            text = rng.choice(self.b.goal_frames).format(g=g, year=day.year + 1)
            turns = _turns(text)
            return turns, [{"class": "goal", "turn": _last_user(turns), "key": key, "positive": True}]
        if kind == "obligation":
            if rng.random() < 0.65:
                o, key, _ = rng.choice(self.b.obligations)
                frame = rng.choice(self.b.obl_frames)   # frame, then date: the draw order every bank was made with
                date = _date_phrase(rng, day)
                text = frame.format(o=o, date=date, date_cap=date[:1].upper() + date[1:])
            else:
                nname, key = rng.choice(self.b.obl_due)
                text = rng.choice(self.b.obl_due_frames).format(n=nname, date=_date_phrase(rng, day))
            return [("user", text)], [{"class": "obligation", "turn": 0, "key": key, "positive": True}]
        if kind == "procedure":
            p, key, steps = rng.choice(self.b.procs)
            frame = rng.choice(self.b.proc_frames)
            text = frame.format(p=p, numbered="\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)),
                                dashed=", ".join(steps[:-1]) + " and then " + steps[-1], s0=steps[0], s1=steps[1],
                                s2=steps[2], p_cap=p[:1].upper() + p[1:], p_ing=_gerund(p),
                                p_ing_cap=_gerund(p)[:1].upper() + _gerund(p)[1:]) if "dashed" not in frame else frame.format(
                p=p, dashed="first " + ", then ".join(steps))
            turns = _turns(text)
            return turns, [{"class": "procedure", "turn": _last_user(turns), "key": key, "positive": True}]
        if kind == "standing":
            if rng.random() < 0.3:
                text, key = rng.choice(self.b.standing_time)
            else:
                t, key, a = rng.choice(self.b.standing)
                t_if = t.replace("arrives", "comes in").replace("lands in", "arrives in").replace(
                    "texts me", "texts me").replace("gets cancelled", "gets cancelled").replace(
                    "fails", "fails").replace("is delivered", "shows up")
                frame = rng.choice(self.b.standing_frames)
                if frame.startswith("If") and not any(w in t_if for w in ("comes in", "arrives", "texts me",
                                                                          "gets ", "fails", "shows up")):
                    frame = self.b.standing_frames[0]
                text = frame.format(t=t, t_if=t_if, a=a)
            return [("user", text)], [{"class": "standing_procedure", "turn": 0, "key": key, "positive": True}]
        if kind == "directive":
            text, key = rng.choice(self.b.directives)
            return [("user", text)], [{"class": "memory_directive", "turn": 0, "key": key, "positive": True}]
        if kind == "suggestion":
            skind, key, sugg = rng.choice(self.b.suggestions)
            lead = rng.choice(["Any advice?", "What should I do?", "Can you help me with this?"])
            how = rng.choice(["accept", "accept", "reject", "contest", "move_on"])
            reply = rng.choice({"accept": self.b.accept, "reject": self.b.reject, "contest": self.b.contest,
                                "move_on": self.b.move_on}[how])
            turns = [("user", lead), ("assistant", sugg), ("user", reply)]
            cls = {"accept": "acceptance", "reject": "rejection", "contest": "contested", "move_on": "uncontested"}[how]
            return turns, [{"class": cls, "turn": 2, "key": key, "node_kind": skind, "positive": True,
                            "suggestion_turn": 1}]
        pick = rng.randrange(6 if self.b.assistant_neg else 5)   # the tuning bank keeps its five kinds
        if pick == 5:
            said, reply, cls = rng.choice(self.b.assistant_neg)
            return [("user", rng.choice(self.b.filler_user)), ("assistant", said), ("user", reply)], [
                {"class": cls, "turn": 1, "key": "", "positive": False},
                {"class": cls, "turn": 2, "key": "", "positive": False}]
        if pick == 0:
            g, key = rng.choice(self.b.goals)
            text, cls = rng.choice(self.b.goal_neg).format(g=g, year=day.year + 1), "goal"
        elif pick == 1:
            o, key, _ = rng.choice(self.b.obligations)
            text, cls = rng.choice(self.b.obl_neg).format(o=o, date=_date_phrase(rng, day)), "obligation"
        elif pick == 2:
            p, key, steps = rng.choice(self.b.procs)
            frame = rng.choice(self.b.proc_neg)
            # round 4's look-alikes quote steps; the earlier ones take the task alone (their draws stay as they were)
            text = frame.format(p=p, s0=steps[0], s1=steps[1], s2=steps[2], p_ing=_gerund(p)) if "{s0}" in frame \
                else frame.format(p=p, p_ing=_gerund(p))
            cls = "procedure"
        elif pick == 3:
            text, cls, key = rng.choice(self.b.standing_neg), "standing_procedure", ""
        else:
            text, cls, key = rng.choice(self.b.directive_neg), "memory_directive", ""
        turns = _turns(text)
        return turns, [{"class": cls, "turn": _last_user(turns), "key": key, "positive": False}]

    def iterate(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        for ci in range(self.n):
            conv_id = f"{self.prefix}-{ci:05d}"
            day = self.start + dt.timedelta(days=ci)
            turns: list[tuple[str, str]] = []
            planted: list[tuple[int, dict[str, Any]]] = []
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.5:
                    turns += [("user", rng.choice(self.b.filler_user)),
                              ("assistant", rng.choice(self.b.filler_assistant))]
                exch, truth = self._plant(rng, day)
                base = len(turns)
                turns += exch
                for t in truth:
                    planted.append((base, t))
                if turns[-1][0] == "user":
                    turns.append(("assistant", rng.choice(self.b.filler_assistant)))
            t0 = dt.datetime(day.year, day.month, day.day, 9, tzinfo=dt.timezone.utc).timestamp()
            mapping: dict[str, Any] = {f"{conv_id}-root": {"id": f"{conv_id}-root", "message": None, "parent": None,
                                                           "children": []}}
            parent = f"{conv_id}-root"
            ids = []
            for i, (role, text) in enumerate(turns):
                nid = f"{conv_id}-m{i:03d}"
                ids.append(nid)
                mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
                    "id": nid, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t0 + 60 * i,
                    "update_time": None, "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully", "end_turn": True, "weight": 1.0, "metadata": {},
                    "recipient": "all"}}
                mapping[parent]["children"].append(nid)
                parent = nid
            for base, t in planted:
                rec = {k: v for k, v in t.items() if k not in ("turn", "suggestion_turn")}
                rec.update(conversation_id=conv_id, message_id=ids[base + t["turn"]],
                           text=turns[base + t["turn"]][1])
                if "suggestion_turn" in t:
                    rec["suggestion_message_id"] = ids[base + t["suggestion_turn"]]
                self.truth.append(rec)
            yield {"title": f"Mining chat {ci}", "create_time": t0, "update_time": t0 + 60 * len(turns),
                   "mapping": mapping, "current_node": parent, "conversation_id": conv_id, "id": conv_id}

    def manifest(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for t in self.truth:
            k = f"{t['class']}{'' if t['positive'] else '_negative'}"
            counts[k] = counts.get(k, 0) + 1
        out = {"conversations": self.n, "planted": self.truth, "counts": dict(sorted(counts.items()))}
        if self.b.name != "tuning":
            out["bank"] = self.b.name   # the tuning bank's manifest stays as it was
        return out
