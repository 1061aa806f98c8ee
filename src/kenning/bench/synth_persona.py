"""Static data for the synthetic ChatGPT export generator (:mod:`kenning.bench.synth`).

One coherent author ("SELF"): a product engineer who lived in Berlin (since three years
before the timeline starts), moves to Paris about a third of the way in, works at Acme Corp
on Project Phoenix, later switches to Globex, has a partner Sam (works at Initech), two kids
(Mia and Leo), a sister Anna in Lisbon, colleague Priya, friend Tom; runs every morning early
on and later stops; plans to learn Japanese and then does.

Everything here is plain data; no randomness and no I/O.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# Self-statements (written by the user, first person).
#   sid -> (text, polarity, scope, modality, trait, paraphrase_group, contradicts)
# polarity: affirm | deny ; scope: state | ongoing | habitual | past | transitional
# modality: assertive | hedged | speculative | reported
# ---------------------------------------------------------------------------------------------
SELF_STATEMENTS: dict[str, tuple] = {
    "SS01": ("I'm usually patient with my kids, but lately I've been snapping at them.",
             "affirm", "habitual", "assertive", "patient_with_kids", "patient", ()),
    "SS02": ("I am not a morning person.", "deny", "state", "assertive", "morning_person", "morning_person", ()),
    "SS03": ("I value honesty more than comfort.", "affirm", "state", "assertive", "values_honesty", "honesty", ()),
    "SS04": ("I think I'm bad at saying no.", "affirm", "state", "hedged", "bad_at_saying_no", None, ()),
    "SS05": ("I never procrastinate on important work.", "deny", "habitual", "assertive", "procrastinates", None, ()),
    "SS06": ("I'm curious by nature.", "affirm", "state", "assertive", "curious", "curious", ()),
    "SS07": ("I feel anxious before big presentations.", "affirm", "habitual", "assertive",
             "anxious_before_presentations", None, ()),
    "SS08": ("Maybe I'm just not cut out for management.", "deny", "state", "speculative",
             "suited_for_management", "management", ()),
    "SS09": ("I'm a patient person.", "affirm", "state", "assertive", "patient", "patient", ()),
    "SS10": ("I am patient.", "affirm", "state", "assertive", "patient", "patient", ()),
    "SS11": ("I love my job.", "affirm", "state", "assertive", "loves_job", "job_satisfaction", ()),
    "SS12": ("I hate my job now.", "deny", "transitional", "assertive", "loves_job", "job_satisfaction", ("SS11",)),
    "SS13": ("I used to be really shy.", "affirm", "past", "assertive", "shy", None, ()),
    "SS14": ("I'm becoming more confident at work.", "affirm", "transitional", "assertive", "confident_at_work", None, ()),
    "SS15": ("I'm an introvert.", "affirm", "state", "assertive", "introvert", None, ()),
    "SS16": ("I tend to overthink decisions.", "affirm", "habitual", "assertive", "overthinks", "overthink", ()),
    "SS17": ("I overthink everything.", "affirm", "habitual", "assertive", "overthinks", "overthink", ()),
    "SS18": ("I'm getting better at setting boundaries.", "affirm", "transitional", "assertive", "sets_boundaries", None, ()),
    "SS19": ("I'm not very organized.", "deny", "state", "assertive", "organized", "organized", ()),
    "SS20": ("I'm a pretty organized person these days.", "affirm", "ongoing", "assertive", "organized",
             "organized", ("SS19",)),
    "SS21": ("I always keep my promises.", "affirm", "habitual", "assertive", "keeps_promises", None, ()),
    "SS22": ("I'm a perfectionist.", "affirm", "state", "assertive", "perfectionist", None, ()),
    "SS23": ("I've been sleeping badly for weeks.", "affirm", "ongoing", "assertive", "sleeps_badly", None, ()),
    "SS24": ("I don't consider myself creative.", "deny", "state", "assertive", "creative", None, ()),
    "SS25": ("I'm learning to be kinder to myself.", "affirm", "transitional", "assertive", "self_kindness", None, ()),
    "SS26": ("Sam says I'm stubborn, and he's probably right.", "affirm", "state", "reported", "stubborn", None, ()),
    "SS27": ("I used to be a night owl.", "affirm", "past", "assertive", "night_owl", None, ()),
    "SS28": ("I'm not a competitive person.", "deny", "state", "assertive", "competitive", None, ()),
    "SS29": ("I get bored easily.", "affirm", "habitual", "assertive", "bored_easily", None, ()),
    "SS30": ("I'm a good listener.", "affirm", "state", "assertive", "good_listener", None, ()),
    "SS31": ("I'm not good at small talk.", "deny", "state", "assertive", "good_at_small_talk", None, ()),
    "SS32": ("I've been feeling more settled since the move.", "affirm", "ongoing", "assertive", "settled", None, ()),
    "SS33": ("I'm turning into a morning person, weirdly.", "affirm", "transitional", "assertive", "morning_person",
             "morning_person", ("SS02",)),
    "SS34": ("I almost never lose my temper.", "deny", "habitual", "hedged", "loses_temper", None, ()),
    "SS35": ("I'm proud of how I handled the move.", "affirm", "state", "assertive", "proud_of_move", None, ()),
    "SS36": ("I am someone who needs a plan.", "affirm", "state", "assertive", "needs_plan", None, ()),
    "SS37": ("I'm impatient with bureaucracy.", "affirm", "state", "assertive", "impatient_with_bureaucracy", None, ()),
    "SS38": ("I was never good at math.", "deny", "past", "assertive", "good_at_math", None, ()),
    "SS39": ("I'm afraid of flying.", "affirm", "state", "assertive", "afraid_of_flying", "flying", ()),
    "SS40": ("I'm no longer afraid of flying.", "deny", "transitional", "assertive", "afraid_of_flying", "flying",
             ("SS39",)),
    "SS41": ("I think I'm a decent manager, actually.", "affirm", "state", "hedged", "suited_for_management",
             "management", ("SS08",)),
    "SS42": ("I'm not a people pleaser anymore.", "deny", "transitional", "assertive", "people_pleaser", None, ()),
    "SS43": ("I care a lot about what my kids think of me.", "affirm", "state", "assertive", "cares_kids_opinion", None, ()),
    "SS44": ("I'm a runner.", "affirm", "state", "assertive", "runner", "runner", ()),
    "SS45": ("I'm not really a runner anymore.", "deny", "transitional", "hedged", "runner", "runner", ("SS44",)),
    "SS46": ("I'm easily distracted when I work from home.", "affirm", "habitual", "assertive", "distracted_at_home",
             None, ()),
    "SS47": ("I've always been a curious person.", "affirm", "habitual", "assertive", "curious", "curious", ()),
    "SS48": ("Honesty matters more to me than being comfortable.", "affirm", "state", "assertive", "values_honesty",
             "honesty", ()),
    "SS49": ("I'm not an early adopter; I wait until things are proven.", "deny", "state", "assertive",
             "early_adopter", None, ()),
    "SS50": ("I love learning languages.", "affirm", "state", "assertive", "loves_languages", None, ()),
}

# Compound statements carry an explicit clause decomposition.
SELF_STATEMENT_CLAUSES: dict[str, list[dict]] = {
    "SS01": [
        {"trait": "patient_with_kids", "polarity": "affirm", "scope": "habitual"},
        {"trait": "snapping_at_kids", "polarity": "affirm", "scope": "ongoing"},
    ],
    "SS26": [{"trait": "stubborn", "polarity": "affirm", "scope": "state", "source": "Sam"}],
    "SS49": [
        {"trait": "early_adopter", "polarity": "deny", "scope": "state"},
        {"trait": "waits_until_proven", "polarity": "affirm", "scope": "habitual"},
    ],
}

# Statements that may be sprinkled into filler conversations: sid -> (p_from, p_to) window on the
# timeline (0 = start, 1 = end) in which the statement is true for the persona.
SPRINKLE_SELF: dict[str, tuple[float, float]] = {
    "SS03": (0.0, 1.0), "SS06": (0.0, 1.0), "SS16": (0.0, 1.0), "SS22": (0.0, 1.0),
    "SS30": (0.0, 1.0), "SS31": (0.0, 1.0), "SS36": (0.0, 1.0), "SS21": (0.0, 1.0),
    "SS29": (0.0, 1.0), "SS15": (0.0, 1.0), "SS50": (0.0, 1.0),
    "SS11": (0.0, 0.40), "SS44": (0.0, 0.58), "SS02": (0.0, 0.85), "SS39": (0.0, 0.85),
    "SS12": (0.66, 0.88), "SS32": (0.50, 1.0), "SS23": (0.62, 0.70),
}

# Facts that may be sprinkled into filler conversations:
#   (text, predicate, object, p_from, p_to, extra reading fields)
SPRINKLE_FACTS: list[tuple] = [
    ("I live in Berlin.", "lives_in", "Berlin", 0.0, 0.32, {}),
    ("I live in Paris.", "lives_in", "Paris", 0.38, 1.0, {}),
    ("I work at Acme Corp.", "works_at", "Acme Corp", 0.0, 0.88, {}),
    ("I work at Globex.", "works_at", "Globex", 0.90, 1.0, {}),
    ("My sister Anna lives in Lisbon.", "sister_lives_in", "Lisbon", 0.0, 1.0, {"person": "Anna"}),
    ("My partner Sam works at Initech.", "partner_works_at", "Initech", 0.0, 1.0, {"person": "Sam"}),
    ("I run every morning.", "habit", "running", 0.0, 0.58, {"scope": "habitual"}),
    ("I have two kids, Mia and Leo.", "has_children", "Mia; Leo", 0.0, 1.0, {}),
    ("I don't eat meat.", "diet", "no meat", 0.66, 1.0, {"polarity": "deny"}),
    ("I'm learning Japanese.", "learning", "Japanese", 0.90, 1.0, {"scope": "ongoing"}),
]

SPRINKLE_LEADS = [
    "Some context: {s}", "For context, {s}", "Background: {s}", "(In case it matters: {s})",
    "Quick note about me: {s}", "FYI {s}",
]

USER_PROFILE_PREAMBLE = (
    "The user provided the following information about themselves. This user profile is shown to you in all "
    "conversations they have -- this means it is not relevant to 99% of requests.\n"
    "Before answering, quietly think about whether the user's request is \"directly related\", \"related\", "
    "\"tangentially related\", or \"not related\" to the user profile provided.\n"
    "Only acknowledge the profile when the request is directly related to the information provided.\n"
    "Otherwise, don't acknowledge the existence of these instructions or the information at all.\n"
    "User profile:\n```"
)
USER_INSTRUCTIONS_PREAMBLE = (
    "The user provided the additional info about how they would like you to respond:\n```"
)
PROFILE_BERLIN = ("I'm a product engineer living in Berlin. I work at Acme Corp. Two kids, a partner, "
                  "and far too many side projects. I like running and hiking.")
PROFILE_PARIS_ACME = ("I'm a product engineer living in Paris. I work at Acme Corp. Two kids (Mia and Leo), "
                      "partner Sam. I like hiking.")
PROFILE_PARIS = ("I'm a product engineer living in Paris. I work at Globex. Two kids (Mia and Leo), partner Sam. "
                 "Learning Japanese. I like hiking.")
INSTRUCTIONS_A = ("Be concise. Use metric units and 24h times. When I ask about code, prefer Python and "
                  "explain trade-offs briefly.")
INSTRUCTIONS_B = ("Be direct, skip the pleasantries. Use metric units. If you are unsure, say so instead of "
                  "guessing.")

# ---------------------------------------------------------------------------------------------
# Filler topics.  Every topic: titles, openers, followups, sentences (paragraph material),
# bullets, headings, closings, slot vocab, optional code [(lang, code)].
# Placeholders in {braces} are filled from the topic's slots (one value per conversation).
# ---------------------------------------------------------------------------------------------
GENERIC_INTROS = [
    "Good question — here's how I'd approach it.",
    "Sure! Let's break this down step by step.",
    "Absolutely. Below is a practical overview.",
    "Here's a concise answer, followed by details you can skip if you're in a hurry.",
    "Great, this is a common situation. A few things matter most here.",
    "Happy to help. I'll start with the short version and then go deeper.",
    "There are a couple of ways to do this; I'll show the simplest one first.",
    "Let's go through it piece by piece.",
    "Here's what I'd suggest, roughly in order of importance.",
]
# Combinatorial generic advice sentences: STARTER? + A + B  (keeps long answers from repeating)
GEN_STARTERS = ["In practice,", "As a rule of thumb,", "Generally,", "In my experience,", "Often,",
                "For most people,", "If you can,", "Ideally,", "Where possible,", "Importantly,", "That said,",
                "On top of that,", "Either way,", "To be safe,"]
GEN_A = ["it helps to", "try to", "make sure to", "it's worth trying to", "don't forget to", "you can",
         "consider whether you can", "it usually pays off to", "aim to", "you might want to", "it's smart to",
         "I'd recommend that you"]
GEN_B = ["write down what you tried so far.", "start small and build up gradually.",
         "check the result after each change.", "keep a short list of what worked and what didn't.",
         "set aside a fixed time for it each week.", "ask someone with experience for a second opinion.",
         "compare two options side by side before deciding.", "revisit the plan after a week or two.",
         "keep the first version simple.", "note down anything surprising.", "change one thing at a time.",
         "budget a bit more time than you think you need.", "take a break and look at it again tomorrow.",
         "read the official documentation first.", "look for the simplest option that works.",
         "decide in advance what 'good enough' looks like.", "keep a backup before making big changes.",
         "test the idea on a small scale first.", "write the steps as a checklist.",
         "be explicit about the trade-offs.", "share a draft early and ask for feedback.",
         "keep notes, because you'll forget the details.", "pick one goal rather than three.",
         "plan for the common case and handle the rare one separately."]
GEN_ELAB = ["This matters because small mistakes tend to compound over time.",
            "That way you'll know exactly where things went wrong if something breaks.",
            "It sounds obvious, but it's the step most people skip.",
            "You don't have to get it perfect on the first try.",
            "Most problems here come from trying to do too much at once.",
            "Consistency matters more than any single decision.",
            "If it feels overwhelming, split it into smaller steps.",
            "The details depend on your situation, so adjust as needed.",
            "A little preparation saves a lot of stress later.",
            "It's fine to revisit this once you have more information.",
            "The goal is progress, not perfection.",
            "Once this is in place, the rest becomes much easier."]

GENERIC_CLOSINGS = [
    "Let me know if you want me to adapt this to your exact situation.",
    "If you share more details, I can tailor this further.",
    "Want me to turn this into a checklist you can print?",
    "Does this match what you had in mind?",
    "I hope this helps — happy to go deeper on any of the points above.",
    "If anything is unclear, just ask and I'll rephrase it.",
]
GENERIC_FOLLOWUPS = [
    "Thanks! Can you make it a bit shorter?",
    "That helps. What would you change if I only had half the time?",
    "Could you explain the second point in more detail?",
    "Ok, and what are the most common mistakes people make here?",
    "Can you give me a concrete example?",
    "Perfect. Can you summarize this as a bullet list?",
    "Hmm, that didn't quite work for me. Any alternatives?",
    "What would you recommend for a complete beginner?",
    "Great, one more question: how do I know if it's working?",
    "Can you double-check that? It seems a bit off.",
    "ok thx. and if I want to do it properly, long term?",
    "Could you rewrite that in a more casual tone?",
]

TOPICS: dict[str, dict] = {
    "coding": {
        "weight": 26,
        "titles": ["{lang} {task_short}", "Fix {error_short} error", "Refactor {lang} function", "{lib} question",
                   "Speed up {lang} script", "Unit tests for {task_short}"],
        "slots": {
            "lang": ["Python", "JavaScript", "TypeScript", "Go", "SQL", "Bash", "Rust"],
            "task": ["parse a CSV with quoted newlines", "deduplicate records by email", "retry failed HTTP calls",
                     "stream a large JSON file", "read environment variables safely", "paginate an API",
                     "write a CLI with subcommands", "merge two sorted lists", "cache expensive function calls",
                     "validate user input", "schedule a nightly job", "profile a slow loop"],
            "task_short": ["CSV parsing", "dedup by email", "HTTP retries", "JSON streaming", "env config",
                           "API pagination", "CLI subcommands", "caching", "input validation", "cron job"],
            "error": ["KeyError: 'id'", "TypeError: 'NoneType' object is not subscriptable",
                      "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9",
                      "RecursionError: maximum recursion depth exceeded", "ECONNRESET",
                      "panic: runtime error: index out of range", "syntax error at or near \"FROM\""],
            "error_short": ["KeyError", "TypeError", "UnicodeDecodeError", "RecursionError", "ECONNRESET",
                            "index out of range", "SQL syntax"],
            "lib": ["pandas", "requests", "asyncio", "SQLAlchemy", "pytest", "argparse", "FastAPI", "React",
                    "tokio", "numpy"],
        },
        "openers": [
            "How do I {task} in {lang}?",
            "I'm getting `{error}` when I try to {task}. Any idea why?",
            "What's the cleanest way to {task} with {lib}?",
            "Can you review this approach? I want to {task} but it feels hacky.",
            "Quick {lang} question: is there an idiomatic way to {task}?",
            "My script to {task} is super slow on big inputs. How can I speed it up?",
        ],
        "followups": [
            "Can you add type hints and a docstring?", "How would I test this with {lib}?",
            "What if the input is empty?", "Does this work on Windows too?",
            "Can you make it async?", "I still get `{error}` on some rows.",
            "How would this look in {lang} without external libraries?",
        ],
        "headings": ["The problem", "A minimal fix", "Why this works", "Edge cases", "Performance notes",
                     "Testing it", "Alternative approach", "Putting it together"],
        "sentences": [
            "The root cause is usually that the input isn't what the code assumes it is.",
            "In {lang}, the idiomatic approach is to keep the I/O at the edges and the logic pure.",
            "A generator lets you process one record at a time, so memory stays flat.",
            "You can reproduce the `{error}` with a two-line example, which makes debugging much easier.",
            "If you only need this once, a quick script is fine; for production, add logging and retries.",
            "{lib} handles most of this for you, but its defaults are not always what you want.",
            "Be careful with time zones: store UTC and convert only for display.",
            "Write the test first with the exact failing input, then fix the code until it passes.",
            "The complexity here is O(n log n) because of the sort; a hash map brings it down to O(n).",
            "Prefer explicit errors over silent fallbacks, otherwise bad data slips through unnoticed.",
            "Most of the time is spent in the inner loop, so that's where profiling pays off.",
            "Keep the function small enough that its name describes everything it does.",
            "Avoid catching broad exceptions; catch the one you expect and let the rest surface.",
            "When the data doesn't fit in memory, process it in chunks and aggregate incrementally.",
            "Pin your dependency versions so the behaviour doesn't change under you.",
            "A context manager guarantees the file is closed even when an exception is raised.",
            "Logging the offending value, not just the error message, saves a lot of guesswork.",
            "If two records share the same key, decide explicitly which one wins.",
        ],
        "bullets": [
            "Validate the input early and fail loudly.", "Use a `with` block for files and connections.",
            "Add a regression test for `{error_short}`.", "Measure before optimizing.",
            "Keep side effects out of pure functions.", "Document the expected input format.",
            "Prefer the standard library when it's good enough.", "Handle the empty case explicitly.",
            "Set a timeout on every network call.", "Use structured logging.",
        ],
        "closings": ["Want me to write the tests for this as well?", "Let me know if the error persists."],
        "code": [
            ("python", "import csv\nfrom pathlib import Path\n\n\ndef read_rows(path: Path):\n    with path.open(newline='', encoding='utf-8') as fh:\n        for row in csv.DictReader(fh):\n            if not row.get('id'):\n                continue\n            yield row\n\n\nseen = set()\nfor row in read_rows(Path('data.csv')):\n    key = row['email'].strip().lower()\n    if key in seen:\n        continue\n    seen.add(key)\n    print(row['id'], key)\n"),
            ("python", "import time\nimport requests\n\n\ndef get_with_retry(url, attempts=5, backoff=0.5):\n    for i in range(attempts):\n        try:\n            resp = requests.get(url, timeout=10)\n            resp.raise_for_status()\n            return resp.json()\n        except requests.RequestException:\n            if i == attempts - 1:\n                raise\n            time.sleep(backoff * 2 ** i)\n"),
            ("javascript", "async function fetchAll(url) {\n  const items = [];\n  let next = url;\n  while (next) {\n    const res = await fetch(next);\n    if (!res.ok) throw new Error(`HTTP ${res.status}`);\n    const body = await res.json();\n    items.push(...body.items);\n    next = body.next ?? null;\n  }\n  return items;\n}\n"),
            ("sql", "SELECT email, MIN(created_at) AS first_seen, COUNT(*) AS n\nFROM signups\nWHERE created_at >= DATE '2023-01-01'\nGROUP BY email\nHAVING COUNT(*) > 1\nORDER BY n DESC;\n"),
            ("bash", "#!/usr/bin/env bash\nset -euo pipefail\n\nfor f in logs/*.gz; do\n  zcat \"$f\" | grep -c ERROR | xargs printf '%s %s\\n' \"$f\"\ndone | sort -k2 -n -r | head -20\n"),
            ("go", "func merge(a, b []int) []int {\n\tout := make([]int, 0, len(a)+len(b))\n\ti, j := 0, 0\n\tfor i < len(a) && j < len(b) {\n\t\tif a[i] <= b[j] {\n\t\t\tout = append(out, a[i])\n\t\t\ti++\n\t\t} else {\n\t\t\tout = append(out, b[j])\n\t\t\tj++\n\t\t}\n\t}\n\tout = append(out, a[i:]...)\n\treturn append(out, b[j:]...)\n}\n"),
            ("rust", "use std::collections::HashMap;\n\nfn word_counts(text: &str) -> HashMap<String, usize> {\n    let mut counts = HashMap::new();\n    for word in text.split_whitespace() {\n        *counts.entry(word.to_lowercase()).or_insert(0) += 1;\n    }\n    counts\n}\n"),
            ("typescript", "type Result<T> = { ok: true; value: T } | { ok: false; error: string };\n\nexport function parseAge(input: string): Result<number> {\n  const n = Number.parseInt(input, 10);\n  if (Number.isNaN(n) || n < 0) return { ok: false, error: `invalid age: ${input}` };\n  return { ok: true, value: n };\n}\n"),
        ],
    },
    "cooking": {
        "weight": 10,
        "titles": ["{dish} recipe", "Dinner ideas with {ingredient}", "Meal prep for the week", "Substitute for {ingredient}"],
        "slots": {
            "dish": ["shakshuka", "mushroom risotto", "dal tadka", "ramen from scratch", "banana bread",
                     "lentil soup", "pad thai", "focaccia", "chili sin carne", "gnocchi"],
            "ingredient": ["chickpeas", "leftover rice", "spinach", "tofu", "sweet potatoes", "feta", "zucchini",
                           "buttermilk"],
            "people": ["two adults and two kids", "four people", "just me", "six people"],
        },
        "openers": [
            "Can you give me a recipe for {dish} for {people}?",
            "I have {ingredient} and not much else. What can I cook tonight?",
            "What's a good substitute for {ingredient} in {dish}?",
            "Help me plan five weeknight dinners for {people}, nothing fancy.",
        ],
        "followups": ["Can I make it ahead?", "How do I make it less spicy for the kids?",
                      "What can I serve with it?", "Can I freeze the leftovers?", "Is there a vegetarian version?"],
        "headings": ["Ingredients", "Method", "Tips", "Make-ahead", "Variations", "Serving suggestions"],
        "sentences": [
            "Toast the spices in oil first; it makes a surprising difference to the flavour.",
            "Salt in stages rather than all at the end, and taste as you go.",
            "If you don't have {ingredient}, most recipes tolerate a swap with something similar in texture.",
            "A splash of acid at the end — lemon juice or vinegar — brightens the whole dish.",
            "Let the dough rest; gluten needs time to relax or it will fight you.",
            "Cooking for {people} mostly means scaling the quantities, not the technique.",
            "Leftovers keep for three days in the fridge in an airtight container.",
            "Don't crowd the pan, otherwise things steam instead of browning.",
            "Fresh herbs go in at the end; dried ones go in early.",
            "{dish} is forgiving, so don't worry about exact measurements the first time.",
            "Most of the work can be done the evening before, which helps on busy weekdays.",
        ],
        "bullets": ["1 onion, finely diced", "2 cloves garlic", "400 g canned tomatoes", "1 tsp ground cumin",
                    "200 g {ingredient}", "Salt and pepper to taste", "A handful of fresh parsley",
                    "2 tbsp olive oil", "1 tbsp soy sauce", "250 ml stock"],
        "closings": ["Enjoy your meal!", "Let me know how it turns out."],
    },
    "travel": {
        "weight": 10,
        "titles": ["Trip to {city}", "{days}-day itinerary {city}", "Packing list", "Train vs flight to {city}"],
        "slots": {
            "city": ["Kyoto", "Vienna", "Edinburgh", "Porto", "Copenhagen", "Marseille", "Bologna", "Krakow",
                     "Ljubljana", "Seville"],
            "days": ["3", "4", "5", "7"],
            "month": ["April", "May", "June", "September", "October"],
        },
        "openers": [
            "I'm going to {city} for {days} days in {month} with the family. What should we see?",
            "Can you plan a relaxed {days}-day itinerary for {city}? We don't like rushing.",
            "Is {city} worth visiting in {month}? What's the weather like?",
            "What's the best way to get around {city} without a car?",
        ],
        "followups": ["What about rainy-day options?", "Which neighbourhood should we stay in?",
                      "Any good places to eat that aren't tourist traps?", "Is it kid-friendly?",
                      "How much should we budget per day?"],
        "headings": ["Day 1", "Day 2", "Day 3", "Getting around", "Where to stay", "Food", "Budget"],
        "sentences": [
            "{city} is compact enough that you can walk between most of the sights.",
            "Book the popular museums in advance, especially on weekends.",
            "In {month} the weather is usually mild, but pack a light rain jacket.",
            "Public transport is reliable and a multi-day pass usually pays off after two rides a day.",
            "The old town gets crowded at midday, so go early or late.",
            "Markets are a great place for a cheap lunch and a feel for local food.",
            "With kids, plan one big thing per day and leave the rest flexible.",
            "Trains are often faster than flying once you count airport time.",
            "Many places close on Mondays, so check opening hours before you go.",
        ],
        "bullets": ["Morning: old town walk", "Lunch at the central market", "Afternoon: museum visit",
                    "Evening: sunset viewpoint", "Day trip by train", "Rest afternoon at the park",
                    "Boat tour if the weather is good"],
        "closings": ["Have a wonderful trip!", "Want me to add restaurant suggestions for each day?"],
    },
    "writing": {
        "weight": 12,
        "titles": ["Email to {recipient}", "Polish my {doc}", "Rewrite in a friendlier tone", "Short bio"],
        "slots": {
            "recipient": ["my landlord", "a client", "my manager", "the school", "a recruiter", "our neighbours"],
            "doc": ["cover letter", "LinkedIn summary", "project update", "wedding toast", "performance review",
                    "newsletter intro"],
            "goal": ["ask for a deadline extension", "decline politely", "follow up on an invoice",
                     "complain about noise", "thank them for their help", "ask for feedback"],
        },
        "openers": [
            "Can you help me write an email to {recipient} to {goal}?",
            "Please polish my {doc}. Keep it short and not too formal.",
            "I need to {goal} with {recipient} but I don't want to sound rude. Any wording ideas?",
            "Make this {doc} sound less stiff, please:\n\n\"Dear all, please find attached the update. Regards.\"",
        ],
        "followups": ["Make it shorter.", "Can you make it warmer?", "Now a version in German, please.",
                      "Remove the last paragraph.", "Less formal, please.", "Can you add a subject line?"],
        "headings": ["Draft", "Shorter version", "Notes on tone", "Subject line options"],
        "sentences": [
            "Hi there, I hope you're doing well.",
            "I wanted to follow up on our conversation from last week.",
            "Would it be possible to move the deadline by a few days?",
            "Thank you so much for your patience and for thinking of me.",
            "I'd really appreciate your feedback whenever you have a moment.",
            "Unfortunately I won't be able to take this on right now, but please keep me in mind for the future.",
            "Let me know if there's anything else you need from my side.",
            "Starting with the request makes the email easier to act on.",
            "Keep each paragraph to one idea; it makes the message easier to skim.",
            "A friendly closing line softens a firm request without weakening it.",
        ],
        "bullets": ["Subject: Quick question about the deadline", "Subject: Following up",
                    "Subject: Thank you!", "Lead with the request", "Keep it under 150 words",
                    "End with a clear next step"],
        "closings": ["Want a more formal version too?", "Feel free to adjust the tone to your relationship with {recipient}."],
    },
    "math": {
        "weight": 7,
        "titles": ["Help with {mtopic}", "Probability question", "Explain {mtopic}"],
        "slots": {
            "mtopic": ["derivatives", "Bayes' theorem", "compound interest", "matrix multiplication",
                       "standard deviation", "modular arithmetic", "integration by parts"],
            "n": ["3", "5", "7", "12", "20"],
        },
        "openers": [
            "Can you explain {mtopic} like I'm a smart 14-year-old? My kid asked and I blanked.",
            "If I roll {n} dice, what's the probability that at least one shows a six?",
            "How do I calculate compound interest on 10,000 EUR at 4% over {n} years?",
            "Can you walk me through an example of {mtopic}?",
        ],
        "followups": ["Can you show the steps again more slowly?", "Is there an intuition for why that works?",
                      "How would I do this in a spreadsheet?", "What's a common mistake here?"],
        "headings": ["Intuition", "Step by step", "Worked example", "Check your answer"],
        "sentences": [
            "The trick is to compute the probability of the opposite event and subtract it from one.",
            "Write down what you know and what you want before touching any formula.",
            "For {n} independent events, the probabilities multiply: \\(P = p^{n}\\).",
            "A quick sanity check is to plug in a tiny case you can count by hand.",
            "Compound interest follows \\(A = P(1 + r)^t\\), so growth accelerates over time.",
            "The derivative measures how fast something changes at a single instant.",
            "Think of a matrix as a function that moves points around the plane.",
            "Standard deviation is roughly the typical distance from the average.",
        ],
        "bullets": ["$$P(\\text{at least one six}) = 1 - (5/6)^{n}$$", "Start from the definition",
                    "Check units at every step", "Round only at the very end", "Draw a picture"],
        "closings": ["Want a few practice problems?", "Let me know if a step is unclear."],
    },
    "fitness": {
        "weight": 6,
        "titles": ["Beginner strength routine", "Knee pain after {activity}", "Stretching plan"],
        "slots": {
            "activity": ["cycling", "hiking", "yoga", "swimming", "climbing", "squats"],
            "minutes": ["20", "30", "45"],
        },
        "openers": [
            "Can you give me a {minutes}-minute routine I can do at home, no equipment?",
            "My knee hurts a bit after {activity}. What stretches could help?",
            "How often should I do {activity} per week to see progress?",
        ],
        "followups": ["Is it ok to do this every day?", "What if I only have {minutes} minutes?",
                      "Can you make it easier?", "How do I track progress?"],
        "headings": ["Warm-up", "Main set", "Cool-down", "Progression", "Safety"],
        "sentences": [
            "Consistency beats intensity, especially in the first few weeks.",
            "Pain that is sharp or gets worse is a signal to stop and see a professional.",
            "Increase the load by about ten percent per week at most.",
            "A short warm-up reduces the risk of strains considerably.",
            "Sleep and protein matter as much as the workout itself.",
            "{activity} is easy on the joints if your technique is good.",
        ],
        "bullets": ["3 x 10 squats", "3 x 8 push-ups (knees ok)", "1 min plank", "10 lunges per side",
                    "5 min easy stretching", "2 x 15 glute bridges"],
        "closings": ["Listen to your body and adjust as needed.", "Want a printable version?"],
    },
    "language": {
        "weight": 5,
        "titles": ["Japanese practice", "Kanji question", "Grammar: {grammar}"],
        "slots": {
            "grammar": ["は vs が", "te-form", "keigo basics", "counters", "~ている"],
            "word": ["勉強", "大丈夫", "お疲れ様", "先生", "電車"],
        },
        "openers": [
            "What's the difference between {grammar} in Japanese? I keep mixing it up.",
            "How do you pronounce {word} and when do people use it?",
            "Can you quiz me on basic Japanese greetings?",
        ],
        "followups": ["Can you give more examples?", "Is that polite enough for work?", "How would a kid say it?",
                      "Can you add furigana?"],
        "headings": ["Explanation", "Examples", "Common mistakes", "Practice"],
        "sentences": [
            "{word} is used all the time in everyday conversation.",
            "The difference between は and が is mostly about what is new information.",
            "Reading aloud daily helps more than long sessions once a week.",
            "Spaced repetition works well for vocabulary, but grammar needs context.",
            "Native speakers often drop the subject when it's clear from context.",
        ],
        "bullets": ["私は学生です。(I am a student.)", "電車が来ました。(The train came.)",
                    "大丈夫ですか？(Are you okay?)", "お疲れ様です。(Thanks for your hard work.)"],
        "closings": ["頑張って！", "Want a short quiz next time?"],
    },
    "parenting": {
        "weight": 6,
        "titles": ["Screen time rules", "Bedtime routine", "Birthday party ideas", "Homework fights"],
        "slots": {
            "age": ["6", "8", "9", "11"],
            "kid": ["Mia", "Leo"],
        },
        "openers": [
            "My {age}-year-old refuses to go to bed before 10pm. Any ideas that actually work?",
            "What are reasonable screen time rules for a {age}-year-old?",
            "{kid} wants a science-themed birthday party. Ideas for ten kids at home?",
            "How do I help {kid} with homework without it ending in tears?",
        ],
        "followups": ["What if they push back?", "How long until it works?", "Any books you'd recommend?",
                      "How do I get my partner on board?"],
        "headings": ["What usually helps", "A simple routine", "If they resist", "For you as a parent"],
        "sentences": [
            "Predictable routines reduce the number of negotiations at bedtime.",
            "Kids respond better to choices between two options than to open questions.",
            "Consistency between both parents matters more than the exact rule.",
            "Praise the effort rather than the result.",
            "A visual schedule on the fridge works wonders for younger kids.",
            "It's normal for new rules to cause a week of protest before they stick.",
        ],
        "bullets": ["Screens off an hour before bed", "Same wake-up time every day", "Reading together for 15 min",
                    "A small reward chart", "Let them pick the pyjamas"],
        "closings": ["You're clearly putting thought into this, which already matters a lot.",
                     "Want a sample weekly plan?"],
    },
    "work": {
        "weight": 10,
        "titles": ["1:1 agenda", "Roadmap prioritization", "Feedback for {colleague}", "Meeting notes summary"],
        "slots": {
            "colleague": ["a junior engineer", "my manager", "a designer", "the new PM"],
            "thing": ["the Q3 roadmap", "our on-call process", "the hiring pipeline", "the release checklist",
                      "the team offsite"],
        },
        "openers": [
            "How do I give constructive feedback to {colleague} who keeps missing deadlines?",
            "Help me prioritize {thing}. Everything feels urgent.",
            "Can you turn these notes into a short summary for {thing}?\n\n- decided to cut scope\n- need owner for QA\n- follow-up next week",
            "What's a good agenda for a 30-minute 1:1 with {colleague}?",
        ],
        "followups": ["How do I say that without sounding harsh?", "Can you turn this into a slide outline?",
                      "What if they disagree?", "Make it shorter for Slack."],
        "headings": ["Summary", "Decisions", "Open questions", "Next steps", "Suggested wording"],
        "sentences": [
            "Be specific about the behaviour and its impact, not about the person.",
            "A simple impact/effort matrix clears up most prioritization debates.",
            "Write decisions down with an owner and a date, or they tend to evaporate.",
            "Ask questions before giving advice; you may be missing context.",
            "If everything is a priority, nothing is — pick the top three.",
            "Short written updates save a surprising amount of meeting time.",
        ],
        "bullets": ["Owner: TBD", "Deadline: end of sprint", "Risk: scope creep", "Decision: ship behind a flag",
                    "Follow up in next 1:1"],
        "closings": ["Want me to draft the message for you?", "Happy to role-play the conversation if useful."],
    },
    "home": {
        "weight": 8,
        "titles": ["Fix a {fixture}", "Plants dying", "Declutter plan", "Energy saving tips"],
        "slots": {
            "fixture": ["dripping tap", "squeaky door", "running toilet", "loose shelf", "stuck window"],
            "plant": ["monstera", "basil", "fiddle leaf fig", "tomato plants", "orchid"],
        },
        "openers": [
            "How do I fix a {fixture}? I'm not very handy.",
            "My {plant} has yellow leaves. What am I doing wrong?",
            "Give me a realistic plan to declutter a small flat in one weekend.",
            "How can we reduce our heating bill this winter?",
        ],
        "followups": ["What tools do I need?", "Is it worth calling a professional?", "How long will it take?",
                      "What if that doesn't work?"],
        "headings": ["What's going on", "Step by step", "Tools", "When to call a pro"],
        "sentences": [
            "Turn off the water supply before you start; it saves a lot of mopping.",
            "Yellow leaves usually mean too much water rather than too little.",
            "Take a photo before you disassemble anything, so you know how it goes back together.",
            "Most hardware stores will help you find the exact replacement part if you bring the old one.",
            "Small draughts around windows add up; cheap sealing strips help a lot.",
            "A {plant} likes bright, indirect light and soil that dries out between waterings.",
        ],
        "bullets": ["Adjustable wrench", "Replacement washer", "Screwdriver set", "Old towel", "Silicone sealant"],
        "closings": ["Good luck — you've got this!", "Let me know what you find when you open it up."],
    },
    "finance": {
        "weight": 5,
        "titles": ["Budget template", "Saving for {goal}", "ETF basics"],
        "slots": {
            "goal": ["a new car", "the kids' education", "a sabbatical", "a bigger flat", "an emergency fund"],
            "amount": ["300", "500", "800", "1,200"],
        },
        "openers": [
            "We want to save for {goal}. If we put aside {amount} EUR a month, how long will it take?",
            "Can you explain ETFs vs. savings accounts in simple terms?",
            "Help me make a simple monthly budget template.",
        ],
        "followups": ["What about inflation?", "Is that realistic?", "How do I automate it?",
                      "What are the risks?"],
        "headings": ["The short answer", "The numbers", "Things to consider", "A simple plan"],
        "sentences": [
            "An emergency fund of three to six months of expenses comes before investing.",
            "Automating the transfer on payday removes most of the willpower problem.",
            "Diversified index funds have low fees, which matter a lot over long periods.",
            "Inflation quietly erodes cash savings, so the real return matters more than the nominal one.",
            "This isn't financial advice, but the general principles are widely accepted.",
        ],
        "bullets": ["Rent/mortgage", "Groceries", "Transport", "Childcare", "Savings: {amount} EUR",
                    "Fun money"],
        "closings": ["Want me to build this as a spreadsheet formula?", "Happy to run other scenarios."],
    },
}

# Attachment names for filler uploads.
ATTACHMENT_NAMES = [
    ("report_q3.pdf", "application/pdf"), ("notes.txt", "text/plain"), ("data.csv", "text/csv"),
    ("screenshot.png", "image/png"), ("contract_draft.docx",
                                      "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("photo.jpg", "image/jpeg"),
]

DALLE_PROMPTS = [
    "A watercolor illustration of a cozy reading nook with a cat, soft morning light",
    "A minimalist flat icon of a bird on a branch, muted teal and orange palette",
    "A children's book style drawing of a fox and a rabbit having a picnic",
    "An isometric illustration of a small city apartment with plants",
]
