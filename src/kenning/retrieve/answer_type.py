"""The answer type a question asks for, and whether a turn carries something of that type (decision R33).

A question word says what kind of thing the answer is: *where* → a place, *who* → a person, *how many / how long*
→ a number or a duration, *what book / which movie* → a title. The ``answer_type`` search lane prefers first-pass
candidate turns that carry such a thing, as the ``temporal_cue`` lane does for *when* questions (a time
expression). Rules only, on the turn's text: a number (digits or a number word); a proper name (a run of
capitalised words that does not open a sentence and is not a speaker's name, a month or a day); a quoted title;
a place (a proper name after a locative preposition or verb: "in Florida", "to the Smoky Mountains").

A question about what someone *would* do, is *likely* to be or *likes* ("Would Caroline want to move back to her
home country?", "Does John live close to a beach or the mountains?", "What job might Maria pursue?", "What does
Nate love about turtles?") is answered by that person's own statements of what they like, value, want or usually
do: the ``disposition`` lane (R34) prefers candidate turns in which the person speaks in the first person about a
preference, a value, a goal or a habit.
"""

from __future__ import annotations

import re
from typing import Iterable

PLACE, PERSON, NUMBER, TITLE = "place", "person", "number", "title"

_PLACE_NOUNS = (r"(?:country|countries|city|cities|state|states|town|towns|place|places|location|locations|"
                r"geographical|destination|destinations|venue|park|parks)")
_PERSON_NOUNS = r"(?:people|person|persons|friends?)"
_TITLE_NOUNS = (r"(?:book|books|novel|novels|movie|movies|film|films|show|shows|series|song|songs|game|games|"
                r"album|albums|band|bands|author|authors|tournament|tournaments|console|consoles)")
_NUM_WORDS = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
              r"fifty|hundred|thousand|couple|few|several|dozen|half)")

_Q_PLACE = re.compile(rf"^\s*where\b|\b(?:what|which)\s+(?:\w+\s+)?{_PLACE_NOUNS}\b", re.I)
_Q_NUMBER = re.compile(r"\bhow\s+(?:long|many|much|old|often|far)\b", re.I)
_Q_PERSON = re.compile(rf"^\s*whom?\b|\b(?:what|which)\s+(?:\w+\s+)?{_PERSON_NOUNS}\b", re.I)
_Q_TITLE = re.compile(rf"\b(?:(?:what|which)\s+(?:\w+\s+)?|favou?rite\s+(?:\w+\s+)?){_TITLE_NOUNS}\b", re.I)

_NUMBER = re.compile(rf"\b(?:\d+|{_NUM_WORDS})\b", re.I)
_QUOTED = re.compile(r"[\"“][^\"”]{2,}[\"”]")
_CAP_RUN = re.compile(r"\b[A-Z][\w'’]*(?:\s+[A-Z][\w'’]*)*")
_LOCATIVE = re.compile(r"\b(?:in|at|to|from|near|around|across|visit|visited|visiting)\s+(?:the\s+)?$")
_NOT_NAMES = {"i", "i'm", "i've", "i'll", "i'd", "i’m", "i’ve", "i’ll", "i’d", "ok", "oh", "hey", "hi", "wow",
              "thanks", "yes", "no", "yeah", "mom", "dad",
              "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}


# a hypothetical or yes/no question about someone (R34): "Would X …", "Does X …", "Is it likely …", "… might X …"
_Q_DISPOSITION = re.compile(r"^\s*(?:would|could|might|does|do|is|are)\b|\b(?:likely|might|would|could)\b", re.I)
# a stance: what the speaker likes, values, wants or usually does
_STANCE = re.compile(r"\b(?:love[sd]?|like[sd]?|enjoy(?:s|ed|ing)?|prefer(?:s|red)?|hate|into|fan|passion(?:ate)?|"
                     r"always|never|dreams?|dreaming|goals?|wants?|wanted|plan(?:s|ned|ning)?|hope|favou?rite|"
                     r"values?|believe|important to me|interested|drawn to|obsessed|can't wait|would love)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|i've|i’ve|i'd|i’d|my|me)\b", re.I)


# … or what someone likes: "What does Nate love most about …?", "What is Gina's favorite style of dance?"
_Q_LIKING = re.compile(r"\b(?:like|likes|love|loves|enjoy|enjoys|prefer|prefers|hate|hates|favou?rite)\b", re.I)


def disposition_question(question: str) -> bool:
    """Whether the question asks what someone would do, is likely to be, does, or likes (a yes/no or hypothetical
    question: "Would Caroline …?", "Does John …?", "What job might Maria pursue?"; a question about a liking:
    "What does Nate love about turtles?", "What is Nate's favorite game?")."""
    return bool(_Q_DISPOSITION.search(question) or _Q_LIKING.search(question))


def states_disposition(text: str) -> bool:
    """Whether a turn states its speaker's preference, value, goal or habit in the first person ("I love
    camping", "My goal is …", "I've always wanted …")."""
    return bool(text) and bool(_FIRST_PERSON.search(text)) and bool(_STANCE.search(text))


def answer_type(question: str) -> str | None:
    """The kind of thing the question asks for, or None (a *when* question is the temporal-cue lane's)."""
    if _Q_PLACE.search(question):
        return PLACE
    if _Q_NUMBER.search(question):
        return NUMBER
    if _Q_PERSON.search(question):
        return PERSON
    if _Q_TITLE.search(question):
        return TITLE
    return None


def proper_names(text: str, skip: Iterable[str] = ()) -> list[tuple[str, int]]:
    """Runs of capitalised words that do not open a sentence, with their offsets; words in ``skip`` (speakers'
    names, lower-cased), "I", months and days do not count."""
    skip_l = {s.lower() for s in skip} | _NOT_NAMES
    out = []
    for m in _CAP_RUN.finditer(text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in ".!?:\"“(":
            continue
        words = m.group(0).split()
        if all(w.lower().rstrip("'’s") in skip_l or w.lower() in skip_l for w in words):
            continue
        out.append((m.group(0), m.start()))
    return out


def carries(kind: str, text: str, skip: Iterable[str] = ()) -> bool:
    """Whether ``text`` holds a thing of the answer type ``kind``."""
    if not text:
        return False
    if kind == NUMBER:
        return bool(_NUMBER.search(text))
    if kind == TITLE:
        return bool(_QUOTED.search(text)) or bool(proper_names(text, skip))
    if kind == PERSON:
        return bool(proper_names(text, skip))
    if kind == PLACE:
        return any(_LOCATIVE.search(text[max(0, at - 20): at]) for _, at in proper_names(text, skip))
    return False
