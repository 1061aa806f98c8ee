"""Aims read from sentence structure (issue 18 (d) round 4, decisions I131–I133): a first-person subject, an aim
or commitment predicate, and the object it governs — not a list of phrases. Used by the goal miner after its
older frame rules found nothing in a sentence.

Three shapes:
- ``subject + predicate + to + object``: the subject is I / we (contracted or not, apostrophe optional); between
  them only auxiliaries and adverbs ("really", "now", "been") — a past or negated auxiliary ("was", "not",
  "used") breaks the chain, so past and abandoned aims stay out. Commitment predicates (determined, committed,
  aiming, striving, resolved, set on, working towards, made it my mission, giving myself until …) stand alone;
  plain wanting / planning / "going to" / "will" count only with a long horizon (a year, a season, "before I turn
  40", "within 18 months") — "I want to know …" is no aim. A typo one letter off a commitment word still counts.
- an aim noun owned by the user: "my/our/the <any modifiers> goal|aim|priority|… is (to) X", a label
  ("Priority number one for me: X", "Bucket list: a, b, c" — a list label gives one goal per item), "what I want
  more than anything is to X".
- the answer to the assistant's question about the user's aims ("What are you working towards?" → "to X by
  2027", "X, ideally before summer"): the question supplies the aim predicate."""

from __future__ import annotations

import re

from kenning.intake.mining.common import DATE_RE

# auxiliaries and adverbs that may stand between the subject and its aim predicate (present / perfect only)
_BETWEEN = frozenset("""am are 'm m 're re 've ve have has 'd d would 'll ll will really truly just still finally now
also honestly actually seriously definitely totally fully absolutely firmly quietly secretly currently genuinely
so very been officially properly""".split())
# commitment predicates: an aim without a horizon
_STRONG = ("determined", "committed", "committing", "commit", "resolved", "resolving", "aiming", "aim", "striving",
           "strive", "intend", "intending", "vowed", "vow", "pledged", "pledging", "dedicated", "bent")
# wanting / planning: an aim only with a long horizon or when answering a question about aims
_WEAK = ("want", "wanna", "hope", "hoping", "plan", "planning", "like", "love", "going", "gonna", "trying", "tryna",
         "try", "will", "mean", "decided", "looking", "keen", "eager")
_NO_TO = frozenset({"wanna", "gonna", "tryna", "will"})   # the object follows directly
# words that make a clause past, negated or someone else's between subject and predicate
_BREAK = frozenset("was were used had did not never n't no didn't don't won't wasn't cannot can't couldn't".split())
# objects that are no aims: knowing, asking, being somewhere, a place one goes to
_NOT_AIM_OBJECT = re.compile(r"^(?:know|ask|see\s+(?:if|whether|how|what)|check|find\s+out|understand|have\s+to|"
                             r"need|your|his|her|their|this|that|it|bed|sleep|think|say|mention|add|start\s+by|"
                             r"probably|maybe)\b", re.I)
# "going to / will / gonna" + a place or a state is where one will be, not an aim ("going to the gym", "I'll be 40")
_NOT_AIM_AFTER_WILL = re.compile(r"^(?:to\s+)?(?:the|a|an|my|our|be|bed|work|school|see|need|have|get\s+back)\b",
                                 re.I)
# a decision made earlier in the sentence makes the following "I'm going to …" an aim without a horizon
_DECIDED = re.compile(r"\b(?:decided|made\s+up\s+(?:my|our)\s+minds?|resolved|promised\s+(?:myself|ourselves))\b",
                      re.I)
LONG_HORIZON = re.compile(
    r"\b(?:by|before|within|in|until|till|over)\s+(?:the\s+end\s+of\s+(?:the\s+|this\s+|next\s+)?(?:year|decade|"
    r"summer|\d{4})|\d{4}(?![-/.]\d)|next\s+(?:year|summer|"
    r"spring|autumn|fall|winter|decade)|(?:this\s+)?(?:spring|summer|autumn|fall|winter|christmas|new\s+year)|"
    r"i\s+(?:turn|hit|reach|retire|die|graduate)|my\s+\w+\s+birthday|(?:the\s+)?(?:next|coming)\s+(?:few\s+|"
    r"couple\s+(?:of\s+)?|\w+\s+)?(?:months|years)|(?:\d+|a|one|two|three|four|five|six|eight|ten|twelve|eighteen|"
    r"a\s+few|several)\s+(?:months?|years?))\b"
    r"|\b(?:this|next)\s+(?:year|summer|spring|autumn|fall|winter|decade)\b|\b(?:eventually|someday|some\s+day|"
    r"one\s+day|long[- ]term|at\s+some\s+point)\b", re.I)
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|'[a-z]+|[^\sa-z0-9]", re.I)


# every shape above needs one of these words (a cheap first look for the funnel's cue; a misspelt commitment word
# keeps its first four letters)
VOCABULARY = re.compile(r"\b(?:dete|comm|reso|aim|stri|inte|vow|pled|dedi|bent|want|wanna|hop|plan|like|love|going|"
                        r"gonna|try|tryi|tryna|will|\w+'ll|deci|look|keen|eage|work|set|made|mak|giv|goal|targ|dream|"
                        r"ambi|mission|prio|focus|bucket|obje|thing)", re.I)


def _near(word: str, targets: tuple[str, ...]) -> str | None:
    """The target ``word`` is, or is one typing slip from (a letter dropped, added, changed or two swapped) when it
    is long enough that a slip cannot make another word ("determind", "comitted")."""
    if word in targets:
        return word
    if len(word) < 7:
        return None
    for t in targets:
        if len(t) >= 7 and abs(len(t) - len(word)) <= 1 and _one_edit(word, t):
            return t
    return None


def _one_edit(a: str, b: str) -> bool:
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


def _words(text: str) -> list[re.Match]:
    return list(_TOKEN.finditer(text))


def _subject(tok: str) -> tuple[bool, str]:
    """Whether a token is the user's first-person subject, and the contraction it carries ("im" → "m")."""
    t = tok.lower().replace("’", "'")
    if t in ("i", "we"):
        return True, ""
    m = re.fullmatch(r"(i|we)'?(m|re|ve|d|ll)", t)
    if m and t not in ("id", "were", "ill", "wed", "well"):   # "id", "were", "ill", "well" are words of their own
        return True, m.group(2)
    return False, ""


def subject_aim(sent: str, *, aim_context: bool = False) -> tuple[str, str] | None:
    """(object clause, predicate) for "I/we <aux/adverbs> <aim predicate> (to) <object>" in one sentence, or None.
    ``aim_context``: the sentence answers a question about the user's aims, so wanting counts without a horizon."""
    words = _words(sent)
    low = [w.group(0).lower().replace("’", "'") for w in words]
    for i, w in enumerate(low):
        is_subj, contraction = _subject(w)
        # subjectless at the start of the turn: "tryna …", "determined to …", "hoping to finally …"
        if not is_subj and i != 0:
            continue
        if is_subj and any(x in ("if", "when", "whether", "unless", "wish", "wished", "suppose", "imagine")
                           for x in low[max(0, i - 3):i]):
            continue   # a condition or a wish, not an aim
        j = i + 1 if is_subj else i
        future = contraction == "ll"
        # auxiliaries and adverbs ("really", "basically", a misspelt "absolutly": any -ly word) are skipped
        while j < len(low) and (low[j] in _BETWEEN or low[j] in ("'", ",") or (len(low[j]) > 4 and low[j].endswith("ly")
                                                                               and low[j] not in _STRONG)):
            future = future or low[j] in ("will", "'ll", "ll")
            j += 1
        if j >= len(low) or low[j] in _BREAK:
            continue
        pred = _near(low[j], _STRONG) or (low[j] if low[j] in _WEAK else None)
        start = _after_predicate(low, j, pred) if pred else None
        if start is None:
            start, pred = _phrase_predicate(low, j)
        if start is None and future and is_subj and re.fullmatch(r"[a-z]+", low[j]):
            start, pred = j, "will"   # "I will learn to code by 2027": the verb after "will" is the aim
        if start is None or start >= len(words):
            continue
        obj = sent[words[start].start():]
        if _NOT_AIM_OBJECT.match(obj):
            continue
        if pred in ("going", "gonna", "will") and _NOT_AIM_AFTER_WILL.match(obj):
            continue
        if day_deadline(obj) and not LONG_HORIZON.search(obj):
            continue   # "I committed to renew my passport by June 19": a dated duty is an obligation, not an aim
        strong = pred in _STRONG or pred in ("mission", "until", "towards", "plan-to") or (
            is_subj and bool(_DECIDED.search(sent[:words[i].start()])))
        if not strong and not aim_context and not LONG_HORIZON.search(sent[words[i].start():]) \
                and not LONG_HORIZON.search(sent[:words[i].start()]):
            continue
        return obj, pred
    return None


def day_deadline(text: str) -> bool:
    """A calendar day or week is named ("by June 19", "before Friday", "by the end of the month")."""
    for m in DATE_RE.finditer(text):
        if m.group("eo") and re.search(r"\byear\b", m.group(0), re.I):
            continue
        if m.group("in") and not re.match(r"days?|weeks?", m.group("in_u"), re.I):
            continue
        return True
    return False


_KNOWING = re.compile(r"^\s*(?:know|ask|understand|find\s+out|figure\s+out\s+(?:why|how|what|if|whether)|"
                      r"see\s+(?:if|whether)|check\s+(?:if|whether))\b", re.I)


def plausible(clause: str) -> bool:
    """Any rule's aim clause is an aim, not a dated duty ("finish this email by 5pm tomorrow" is an obligation's
    business) nor wanting to know something ("trying to understand why …") (I132)."""
    if _KNOWING.match(clause):
        return False
    return not (day_deadline(clause) and not LONG_HORIZON.search(clause))


def _after_predicate(low: list[str], j: int, pred: str) -> int | None:
    """Index of the object's first word after a one-word predicate, or None when the shape is wrong."""
    k = j + 1
    if pred in _NO_TO:
        return k
    if pred == "bent":
        return k + 1 if k < len(low) and low[k] == "on" else None
    if pred in ("like", "love") and not (j > 0 and (low[j - 1].endswith("'d") or low[j - 1] in ("d", "would"))):
        return None   # "I like to cook" is a habit; "I'd like to …" an aim
    if pred in ("looking", "keen", "eager") and (k >= len(low) or low[k] != "to"):
        return None
    if pred == "decided" and k < len(low) and low[k] != "to":
        # "I've decided I'm going to …" / "we've decided: we're going to …": the clause after the decision
        return None
    if pred == "going" and k < len(low) and low[k] == "for":
        return None
    if k < len(low) and low[k] == "to":
        return k + 1
    if pred in ("aiming", "aim", "striving", "strive") and k < len(low) and low[k] in ("for", "at"):
        return k + 1
    return None


def _phrase_predicate(low: list[str], j: int) -> tuple[int | None, str]:
    """Multi-word commitment predicates: "working towards / on a plan to", "set on", "made it my mission to",
    "set myself a target to/of", "giving myself until 2027 to"."""
    rest = " ".join(low[j:j + 8])
    m = re.match(r"working (?:towards?|toward) (?:being able to )?", rest) or re.match(
        r"working on (?:a|my|the) (?:\w+ )?plan to ", rest)
    if m:
        return j + len(m.group(0).split()), "towards" if "toward" in m.group(0) else "plan-to"
    if (m := re.match(r"(?:set|dead set) on ", rest)):
        return j + len(m.group(0).split()), "bent"
    if (m := re.match(r"(?:made|making|make) it (?:my|our) (?:\w+ )?(?:mission|goal|aim|priority|business|focus) to ",
                      rest)):
        return j + len(m.group(0).split()), "mission"
    if (m := re.match(r"(?:set|setting) (?:myself|ourselves) (?:a|the|an) (?:\w+ )?(?:goal|target|challenge|aim) "
                      r"(?:to|of) ", rest)):
        return j + len(m.group(0).split()), "mission"
    if (m := re.match(r"(?:giving|give|given) (?:myself|ourselves) (?:until|till|til|\w+ (?:months?|years?|weeks?)) ",
                      rest)):
        k = j + len(m.group(0).split())
        while k < len(low) and k < j + 12 and low[k] != "to":
            k += 1
        return (k + 1, "until") if k < len(low) and low[k] == "to" else (None, "")
    return None, ""


# an aim noun the user owns, any modifiers before it ("my big thing this year", "the bigger goal")
_OWNED_NOUN = re.compile(
    r"(?:^|(?<=[\s,:;(—-]))(?P<det>my|our|the)\s+(?P<mods>(?:[a-z0-9#-]+\s+){0,3}?)(?:goal|aim|objective|ambition|"
    r"target|dream|resolution|mission|priority|focus|plan|(?<=big\s)thing|(?<=main\s)thing|(?<=biggest\s)thing|"
    r"(?<=one\s)thing)s?\s+(?:(?:for|this|next|in|right|at)\s+[\w\s]{1,20}?\s+)?(?:is|'s)\s+(?:to\s+|that\s+i\s+)?"
    r"(?P<g>.+)", re.I)
# a label: "Priority number one for me: …", "Bucket list, in no particular order: …", "Resolutions for 2027: …"
_LABEL = re.compile(
    r"^(?P<label>(?:(?:my|our|the|a|one|new|big|main|top|\w+'s)\s+)?(?:[\w-]+\s+){0,2}?(?:goals?|aims?|objectives?|"
    r"ambitions?|targets?|dreams?|resolutions?|missions?|priority|priorities|focus|bucket\s+list)"
    r"(?:[\s,]+[\w#-]+){0,5}?)\s*:\s*(?P<g>.+)", re.I)
_WHAT_I = re.compile(r"^(?:and\s+|but\s+|so\s+)?what\s+(?:i|we)\s+(?:'?m\s+|am\s+|are\s+|really\s+|most\s+|truly\s+)*"
                     r"(?:want|wanna|hope\s+for|wish\s+for|'?m\s+after|am\s+after|aim\s+for|long\s+for)\b[^,.]{0,30}?"
                     r"\s+is\s+(?:to\s+)?(?P<g>.+)", re.I)
_OTHERS_POSSESSIVE = re.compile(r"\b(?:his|her|their|(?!(?:year|today|week|month|it|that|what|here|there|let)'s)"
                                r"[a-z]+'s)\b", re.I)
_LIST_LABEL = re.compile(r"\b(?:goals|aims|resolutions|ambitions|targets|dreams|priorities|bucket\s+list|"
                         r"in\s+no\s+particular\s+order)\b", re.I)


def noun_aims(sent: str) -> list[str]:
    """Object clauses of an aim noun the user owns, a labelled aim (one per item of a list label), or "what I want
    … is to X"."""
    if (m := _WHAT_I.search(sent)):
        return [m.group("g")]
    if (m := _LABEL.match(sent)) and not _OTHERS_POSSESSIVE.search(m.group("label")) \
            and not re.search(r"\b(?:was|were|used|old|former|last\s+year'?s?)\b", m.group("label"), re.I):
        if _LIST_LABEL.search(m.group("label")):
            items = re.split(r",\s*(?:and\s+)?|;\s*|\s+and\s+(?=[a-z]+\s)", m.group("g").rstrip(". "))
            return [x for x in items if x.strip()]
        return [m.group("g")]
    for m in _OWNED_NOUN.finditer(sent):
        if _OTHERS_POSSESSIVE.search(m.group("mods")) or re.search(r"\b(?:old|former|previous|original)\b",
                                                                   m.group("mods"), re.I):
            continue
        if m.group("det").lower() == "the" and not m.group("mods").strip() and "thing" in m.group(0).lower()[:40]:
            continue
        return [m.group("g")]
    return []


# the assistant asking about the user's aims
_AIM_QUESTION = re.compile(r"\b(?:goals?|aims?|working\s+(?:towards?|toward|on)|hoping\s+to|hope\s+to|want\s+to\s+"
                           r"(?:achieve|accomplish|get\s+done|do)|achieve|accomplish|resolutions?|ambitions?|"
                           r"bucket\s+list|dreams?|priorit(?:y|ies)|aiming|striving|plans?\s+(?:for|this|next))\b",
                           re.I)
_NOT_AN_ANSWER = re.compile(r"^(?:not|no|nothing|none|dunno|idk|i\s+don'?t|i'?m\s+not|hmm+|nah|nope|no\s+idea|"
                            r"good\s+question|thanks|thank\s+you|why|what|who|it'?s|that'?s|this|there|well\s+i|"
                            r"yes|yeah|sure|ok(?:ay)?|lol|haha)\b", re.I)
_LEAD_ADVERB = re.compile(r"^(?:(?:honestly|mainly|mostly|primarily|basically|probably|definitely|just|really|"
                          r"right\s+now|at\s+the\s+moment|for\s+now|these\s+days|well|so|um+|uh+|i\s+guess|"
                          r"i\s+think)[,\s]+)+", re.I)


def asked_about_aims(context: tuple) -> bool:
    """The turn before is the assistant asking the user about what they aim at."""
    if not context:
        return False
    prev = context[-1]
    if prev.get("role") != "assistant":
        return False
    asks = [q for q in re.findall(r"[^.!?]*\?", prev.get("text") or "")]
    return any(_AIM_QUESTION.search(q) and re.search(r"\byou(?:r|'re)?\b", q, re.I) for q in asks)


def answered_aim(sentence: str) -> str | None:
    """The aim an answer to "what are you working towards?" names: "to X …", "I want to X", or the bare "X, …"."""
    s = _LEAD_ADVERB.sub("", sentence.strip())
    if not s or _NOT_AN_ANSWER.match(s) or s.endswith("?"):
        return None
    if (got := subject_aim(s, aim_context=True)):
        return got[0]
    if (m := re.match(r"(?:to|probably\s+to|trying\s+to|hoping\s+to)\s+(?P<g>.+)", s, re.I)):
        return m.group("g")
    if re.match(r"(?:i|we|you|he|she|they|it|that|this|there)\b", s, re.I):
        return None   # a clause of its own, not the aim named bare ("a black belt in judo", "my licence")
    # a bare "X, ideally before summer": the aim is the first clause, a long horizon after it is kept
    head, _, rest = s.partition(",")
    h = LONG_HORIZON.search(rest)
    return f"{head} {h.group(0)}" if h else head
