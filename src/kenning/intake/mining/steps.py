"""Step structure the procedure miner reads beyond its header rules (issue 18 (d) round 4, decisions I134–I136):
list markers of every common kind (numbers, bullets, checkboxes, "Step 2:"), arrows (a -> b -> c), a lead line that
names a routine or "how" with the task after "to / for (when) I / before I / after I / how I", a task line over a
list ("Back up the laptop:" then 1. 2. 3.), the task named after the steps ("… That's the whole process for when I
…"), "I <task> the same way every time: …", and a procedure whose lead-in and steps are two messages of the user.

Guards: a question for steps, someone else's routine, a habit given up ("I used to … like this"), and a to-do or
shopping list (its title names a list, not a task)."""

from __future__ import annotations

import re

# a line that is one step: 1. / 1) / (1) / a) / - / * / • / – / → / [ ] / [x] / "Step 2:" / "step two -" (not ">":
# a quoted line of a mail)
MARKER = re.compile(r"^[ \t:]*(?:[-*•–]\s*)?(?:\[[ xX✓✔]?\]|[1-9]\ufe0f?\u20e3|\(?\d{1,2}[.):]|\d{1,2}\s?-|#\d{1,2}|\(?[a-e][.)]|[-*•–→]|step\s+(?:\d{1,2}|"
                    r"one|two|three|four|five|six|seven|eight|nine|ten)\s*[:.)-]?)\s+(?P<s>\S.*)$", re.I | re.M)
ARROW = re.compile(r"\s*(?:-+>|→|=>|⇒|➜|➔|>>)\s*|\s+>\s+")   # a bare ">" between spaces too (I144)
# words after which the task is named in a lead: "routine to …", "drill for when I …", "checklist before I …"
_TASK_INTRO = re.compile(
    # "to / for <task>" opening a sentence; "when it comes to <task>"; "I <task> like this / the same way"
    r"(?:^|(?<=[:.!,]\s)|(?<=\bso\s)|(?<=\bok\s)|(?<=\bokay\s)|(?<=\bwell\s)|(?<=\banyway\s))(?:to|for)\s+(?=\w)|\bwhen\s+it\s+comes\s+to\s+|\b(?:works|worked\s+out)\s+for\s+me\s+"
    r"(?:to|when\s+(?:i|we))\s+|"
    r"^(?=(?:[a-z]+\s)?[a-z]+ing\s[^:\n]{2,60}?\s(?:goes|works|is\s+done)\s+(?:like\s+this|as\s+follows))|"
    # round 6 (I152): "every time I …", "when it's time to …", "before every run", "I do these things before …"
    r"\b(?:every|each|any)\s*time\s+(?:i|we)\s+|\bwhen\s+it'?s\s+time\s+to\s+|\bwhen\s+(?=[a-z]+ing\s)|"
    r"\bin\s+order\s+to\s+|\bif\s+(?:i|we)\s+(?=(?:need|have|want|got)\s+to\s)|"
    r"(?:^|(?<=[.!]\s))(?=(?:before|after)\s+(?:every|each|any|a|my|the)\s+\w)|"
    r"\bdo\s+(?:these|the\s+following|this|the\s+same)\s+(?:\w+\s+)?(?:things?|steps)?\s*(?=(?:before|after)\s)|"
    # "my fish tank cleaning process", "I clean the fish tank every Sunday:"
    r"\bmy\s+(?=[\w'-]+(?:\s+[\w'-]+){0,4}\s+(?:routine|process|procedure|workflow|method|system|checklist|ritual|"
    r"steps|recipe|drill)\b)|"
    r"\b(?:i|we)\s+(?:always\s+|usually\s+|normally\s+)?(?=[^.:\n]{3,60}?\s+(?:every|each|once\s+a)\s+\w+\s*:)|"
    r"\b(?:i|we)\s+(?:always\s+|usually\s+|normally\s+)?(?=[^.:\n]{3,80}?\s+(?:like\s+this|as\s+follows|"
    r"in\s+this\s+order|the\s+same\s+way)\b)|"
    r"\b(?:for\s+when\s+(?:i|we)|for\s+(?:whenever|every\s+time)\s+(?:i|we)|when(?:ever)?\s+"
    r"(?:i|we)|before\s+(?:i|we)|after\s+(?:i|we)|how\s+(?:i|we)(?:\s+(?:always|usually|"
    r"normally))?|how\s+to|way\s+(?:i|we|to)|steps?\s+(?:to|for)|(?:routine|process|procedure|"
    r"method|workflow|checklist|recipe|drill|system|ritual|playbook|instructions|approach|trick|secret|technique|"
    r"strategy|protocol|sequence|regime|regimen|guide|tutorial|walkthrough|rundown|cheat\s*sheet|(?:best|right|correct|usual|same)\s+order)"
    # "the routine I use to …", "the steps I take to …" (I152)
    r"(?:\s+(?:that\s+)?(?:i|we)\s+(?:use|follow|have|do|take|go\s+through|swear\s+by|stick\s+to))?"
    r"\s+(?:for\s+when\s+(?:i|we)|for\s+(?:whenever|every\s+time)\s+"
    r"(?:i|we)|to|for|on|when\s+(?:i|we)|when))\s+", re.I)
TASK_INTRO = _TASK_INTRO
LEAD_NOUN = re.compile(r"\b(?:how|steps?|routine|process|procedure|method|workflow|checklist|recipe|instructions|"
                       r"guide|tutorial|walkthrough|rundown|things|every\s+time|each\s+time|time\s+to|"
                       r"ritual|drill|system|playbook|approach|way|trick|secret|technique|strategy|protocol|sequence|"
                       r"regime|regimen)\b", re.I)
# "handle it when I need to X", "do it whenever I have to X": the task is X
_FILLER_TASK = re.compile(r"^(?:handle|manage|deal\s+with|do|tackle|approach)\s+(?:it|things|this)\s+(?:when(?:ever)?|"
                          r"if)\s+(?:i|we)\s+(?:need|have|want|got)\s+to\s+|^(?:need|have|want|got)\s+to\s+", re.I)
# the lead ends where the task does: a comma aside, "one sec", the verb of "my routine when I X starts with …"
_TASK_END = re.compile(r"\s*(?:,|\sit'?s\b|\s(?:routine|process|procedure|workflow|method|system|checklist|ritual|steps|recipe|drill)\b|\s(?:every|each|once\s+a)\s+\w+\s*:|:|\s=\s|\s(?:i|we|you)\s(?=\w)|\s(?:first|then)\b|\s-\s|\s—\s|\s–\s|\bone\s+sec\b|\b(?:starts?|begins?|goes|looks|is|are|was|were)\b(?:\s+(?:like|"
                       r"with|by|as))?|\b(?:bear\s+with|hang\s+on)\b|\bthe\s+same\s+way\b|\blike\s+this\b|\bas\s+follows\b"
                       r"|\bin\s+(?:\w+\s+)?steps\b).*$", re.I | re.S)
PAST_HABIT = re.compile(r"\b(?:used\s+to|no\s+longer|not\s+any\s?more|gave\s+up|stopped\s+(?:doing|using))\b", re.I)
_OTHERS = re.compile(r"\b(?:his|her|their|(?!(?:here|there|that|it|let|what|he|she|who|where|how|this|today|"
                     r"tonight|everyone|one)'s)[a-z]+'s)\s", re.I)
# titles of lists that are not procedures (to-do, shopping, ideas, agendas …)
_LIST_TITLE = re.compile(r"\b(?:lists?|to-?dos?|todos?|things|stuff|items|errands|tasks|groceries|shopping|ideas|"
                         r"plans|notes|agenda|questions|options|reasons|pros|cons|gifts?|menu|goals|priorities|"
                         r"wishlist|bucket|inventory|contacts|links|resources|topics|ingredients|orders?|supplies|"
                         r"chores|jobs)\b", re.I)
_NOT_A_TASK_START = re.compile(r"^(?:my|our|your|his|her|their|the|a|an|this|that|these|those|today|tomorrow|tonight|"
                               r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|morning|evening|"
                               r"january|february|march|april|may|june|july|august|september|october|november|"
                               r"december|some|all|random|misc|re|fwd|note|notes|ps|p\.s|update|summary|i|we|you|in|on|"
                               r"at|for|by|with|about|just|so|ok|okay|well|also|and|but|quick|reminder|fyi|btw|if|"
                               r"unless|because|since|as)\b", re.I)
SEQ_START = re.compile(r"^\s*(?:(?:and|ok(?:ay)?|so|oh)\s*,?\s+)?(?:then|next|after\s+that|afterwards|and\s+then|"
                       r"second(?:ly)?|finally|lastly|once\s+that'?s\s+done)\b", re.I)
_FIRST_STEP = re.compile(r"\b(?:starts?|begins?)\s+(?:with|by)\s+(?P<s>[^.!?\n]{3,120})|\bfirst(?:ly)?,?\s+(?:i\s+)?"
                         r"(?P<s2>[^.!?\n,]{3,120})", re.I)


def marker_steps(text: str) -> list[str]:
    """Two or more marked step lines, or none."""
    got = [s for s in (m.group("s").strip() for m in MARKER.finditer(text)) if len(s.split()) >= 2]
    return got if len(got) >= 2 else []


def arrow_steps(text: str) -> list[str]:
    line = re.split(r"[.!?](?:\s|$)|\n", text.strip(), maxsplit=1)[0]
    if len(ARROW.findall(line)) < 1:
        return []
    parts = [p.strip(" ,;:.") for p in ARROW.split(line)]
    return [p for p in parts if len(p.split()) >= 2] if sum(1 for p in parts if len(p.split()) >= 2) >= 2 else []


TASK_END = _TASK_END


def clean_task(task: str) -> str:
    task = task.strip(" .:;!—–-")
    task = _FILLER_TASK.sub("", task).strip()
    task = re.sub(r"\s+would\s+be$", "", task, flags=re.I)   # "a good process for onboarding would be:" (I144)
    task = re.sub(r"\s+(?:i|we)$", "", task, flags=re.I)   # "when I restring my guitar I | begin with …"
    return re.sub(r"^(?:to|when\s+i|i)\s+", "", task, flags=re.I)


def task_of_lead(lead: str) -> str | None:
    """The task a lead names: the words after its first task introducer, up to where the lead turns aside."""
    for m in _TASK_INTRO.finditer(lead):
        task = clean_task(_TASK_END.sub("", lead[m.end():]))
        if is_task(task):
            return task
    return None


def is_task(task: str) -> bool:
    return 1 <= len(task.split()) <= 12 and not _NOT_A_TASK.match(task)


# what follows "for" that is no task: "for future me", "for reference", "for the record"
_NOT_A_TASK = re.compile(r"^(?:do\s+(?:it|this|that|things)|it|this|that|(?:future\s+)?(?:me|myself|us)|reference|the\s+record|later|now|today|context|example|"
                         r"(?:usual|normal|standard|own|daily|weekly|regular|typical|go-to|favourite|favorite|whole|"
                         r"full|simple|basic|quick)|"
                         r"instance|what\s+it'?s\s+worth|the\s+(?:most|first)\s+part)$", re.I)


def lead_ok(lead: str) -> bool:
    """A lead the user (or assistant) states as a routine: not a question, not someone else's, not given up."""
    return not (lead.rstrip().endswith("?") or _OTHERS.search(lead + " ") or PAST_HABIT.search(lead))


_TITLE_OPENER = re.compile(r"^(?:(?:every\s+time|each\s+time|whenever|when|before|after)\s+(?:i|we)\s+|how\s+to\s+|"
                           r"to\s+)", re.I)
_TITLE_ASIDE = re.compile(r"^(?:step\s+by\s+step|in\s+short|quickly|for\s+(?:reference|the\s+record|future\s+me|"
                          r"later|myself)|notes?\s+to\s+(?:self|myself)|reminder|note)$", re.I)


def titled_task(title: str) -> str | None:
    """"Back up my laptop:" over a list — a task line (a verb phrase, or a gerund one after an aside: "Notes to self -
    cleaning the fish tank"), not a list's title ("Shopping list:", "Weekend plans")."""
    title = re.sub(r"^\s*notes?\s+(?:to|for)\s+(?:self|myself|me|future\s+me)\s+(?:on|about|re)\s+", "", title, flags=re.I)
    m = re.fullmatch(r"\s*(?P<t>[A-Za-z][\w' ,/-]{2,90}?)\s*:?\s*", title)
    if not m:
        return None
    parts = [p.strip() for p in re.split(r"\s*,\s*|\s+[-—–]\s+", m.group("t")) if p.strip()]
    parts = [p for p in parts if not _TITLE_ASIDE.match(p)]
    if len(parts) > 1:
        parts = [p for p in parts if re.match(r"[a-z]+ing\b", p, re.I)][:1]
    if len(parts) != 1:
        return None
    t = _TITLE_OPENER.sub("", parts[0])
    t = re.sub(r"\s+(?:goes|looks|works|is\s+done)(?:\s+like\s+this|\s+as\s+follows)?$", "", t, flags=re.I)
    words = t.split()
    if not 2 <= len(words) <= 8 or _LIST_TITLE.search(t) or _NOT_A_TASK_START.match(t) or re.search(r"\d", t):
        return None
    return t


def first_step_of(lead: str) -> str | None:
    """The first step a lead-in already gives: "My routine when I X starts with a." / "first I a"."""
    m = _FIRST_STEP.search(lead)
    if not m:
        return None
    s = (m.group("s") or m.group("s2")).strip(" ,;:")
    return s if len(s.split()) >= 2 else None


# Round 6 (issue 18 (d), decisions I152–I157): steps with no lead-in in their own message, the aim stated in the turn
# before; steps as plain lines or imperative sentences; the assistant's "how do you usually …?" naming the task.
# A step opens with a verb: its first word is no determiner, pronoun, preposition, conjunction, number or greeting.
_NOT_VERB = re.compile(
    r"^(?:a|an|the|my|your|our|his|her|their|its|this|that|these|those|some|any|i|i'm|i've|i'd|i'll|you|we|he|she|it|"
    r"it's|they|there|here|what|which|who|when|where|why|how|is|are|was|were|be|been|am|and|but|or|so|if|because|"
    r"also|just|very|really|not|no|yes|ok|okay|thanks|thank|hi|hello|hey|on|in|at|for|with|about|of|to|from|by|as|"
    r"than|all|both|each|every|one|two|three|lots|most|much|many|more|less|tomorrow|today|tonight|yesterday|monday|"
    r"tuesday|wednesday|thursday|friday|saturday|sunday|weekend|honestly|well|hmm|um|oh|ah|lol|haha|\d+\w*)\b", re.I)
ACK_HEAD = re.compile(r"^\s*(?:(?:good|great|nice|fair)\s+(?:idea|call|point|question)|sure(?:\s+thing)?|ok(?:ay)?|"
                      r"alright|right|yes|yeah|yep|fine|of\s+course|will\s+do|here\s+(?:goes|you\s+go|it\s+is)|"
                      r"so|well|easy|simple)(?:[\s,!:…—–-]+|\.\s+)", re.I)
# the assistant asking how the user does something: "How do you usually X?", "What's your process for X?", "Walk me
# through how you X", "What do you do when you X?" — the task is X, "your" read as "my"
_ASKED = re.compile(
    r"\b(?:how\s+do\s+you\s+(?:\w+ly\s+)?(?:go\s+about\s+)?|walk\s+me\s+through\s+how\s+you\s+(?:\w+ly\s+)?|"
    r"what\s+do\s+you\s+(?:\w+ly\s+)?do\s+(?:to|when\s+you|before\s+you|after\s+you)\s+|"
    r"what(?:'s|\s+is|\s+are)\s+your\s+(?:usual\s+|normal\s+|typical\s+|current\s+)?(?:process|routine|steps|method|"
    r"system|approach|way|workflow|procedure|checklist|recipe)\s+(?:for\s+(?:when\s+you\s+)?|to\s+|when\s+you\s+)|"
    r"how\s+does\s+your\s+(?=[\w\s'-]{3,40}?\s+(?:routine|process)\s+go)|"
    r"do\s+you\s+have\s+(?:a|any)\s+(?:\w+\s+)?(?:system|routine|process|method|way|approach|trick|steps)\s+(?:for|to|"
    r"when\s+you)\s+|what'?s\s+the\s+first\s+thing\s+you\s+do\s+(?:when|after|before)\s+you\s+)(?P<task>[^?.!\n]{3,80})(?:\?|(?<=\S)"
    r"(?=[.!]?\s*$))", re.I)


_OBJECT = re.compile(r"^\S+\s+(?:\S+\s+\S+|(?:the|a|an|it|them|my|your|our|this|that|these|those|up|out|off|in|on|"
                     r"down|over|into|with|to|for|some|all|every|each|everything|everyone|one|two|three)\b)", re.I)


def acts(steps: list[str]) -> bool:
    """Two or more steps read as an act with an object ("roast the vegetables", "use cold water"), not a thing
    ("flat white", "oat latte")."""
    return sum(bool(_OBJECT.match(x.strip())) for x in steps) >= 2


def verb_initial(step: str) -> bool:
    w = step.split()
    return len(w) >= 2 and not _NOT_VERB.match(step.strip()) and not step.rstrip().endswith("?")


def plain_lines(text: str) -> list[str]:
    """Three or more unmarked lines, each a short clause that opens with a verb ("descale it\\nflush it\\n…")."""
    lines = [ln.strip(" \t-*•.;,") for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) < 3 or not all(2 <= len(ln.split()) <= 16 and verb_initial(ln) for ln in lines) or not acts(lines):
        return []
    return lines


def sentence_steps(text: str) -> list[str]:
    """Three or more short imperative sentences ("Grind the coffee. Mix it with water. Leave it overnight.")."""
    parts = [p.strip(" ,;") for p in re.split(r"(?<=[.!])\s+|\n+", text.strip()) if p.strip(" ,;")]
    parts = [re.sub(r"[.!]+$", "", p) for p in parts]
    if len(parts) < 3 or not all(2 <= len(p.split()) <= 16 and verb_initial(p) for p in parts) or not acts(parts):
        return []
    return parts


def asked_task(assistant_text: str) -> str | None:
    """The task the assistant asks the user's way of doing ("How do you usually back up your laptop?" → "back up
    my laptop"), or None."""
    m = _ASKED.search(assistant_text or "")
    if not m:
        return None
    task = m.group("task").strip(" ,")
    task = re.sub(r"\s+(?:these\s+days|at\s+the\s+moment|now(?:adays)?|usually|normally|exactly)$", "", task, flags=re.I)
    task = re.sub(r"\byourself\b", "myself", re.sub(r"\byour\b", "my", task, flags=re.I), flags=re.I)
    task = re.sub(r"\s+(?:routine|process)\s+go$", "", task, flags=re.I)
    return task if is_task(task) and not re.match(r"(?:do|think|feel|know|mean|like)\b", task, re.I) else None
