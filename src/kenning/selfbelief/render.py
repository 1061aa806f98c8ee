"""A node's first-person statement, from its canonical text and polarity (what `self list` shows and the belief
ledger publishes): "i am a morning person" + deny → "I am not a morning person."; "i hate my job" + deny (aversion,
S10) → "I hate my job."; "i hate my job" + affirm (a negated aversion) → "I do not hate my job."."""

from __future__ import annotations

import re

_AUX = re.compile(r"^(i) (am|was|have been|have|had|can|could|will|would|should|must|might|may|did|do) ")
_CAN_STAND = re.compile(r"(?<=^i )can stand\b")
_CLAUSE = re.compile(r"\s(?:if|unless|when|whenever|every time|each time|because|until|before|after|once)\s")


def has_aversion(canonical: str, aversion_cues) -> bool:
    head = _CLAUSE.split(canonical, maxsplit=1)[0]
    return any(re.search(r"\b" + re.escape(c.lower().replace("can't", "can")
                                           .replace("cannot", "can").replace("can not", "can")) + r"\b", head)
               for c in aversion_cues)


def negate(canonical: str) -> str:
    m = _AUX.match(canonical)
    if m:
        aux = m.group(2)
        neg = {"can": "cannot", "have": "have not", "have been": "have not been"}.get(aux, f"{aux} not")
        return f"i {neg} " + canonical[m.end():]
    if canonical.startswith("i "):
        return "i do not " + canonical[2:]
    return "not " + canonical


def render_statement(canonical: str, polarity: str, aversion_cues=(), max_chars: int = 280) -> str:
    aversion = has_aversion(canonical, aversion_cues)
    if aversion and _CAN_STAND.search(canonical):
        # "i cannot stand x" is canonical "i can stand x" (S1): the aversion is the denial (S10, S47)
        text = _CAN_STAND.sub("cannot stand", canonical, count=1) if polarity == "deny" else canonical
    else:
        text = negate(canonical) if (polarity == "deny") != aversion else canonical
    text = re.sub(r"\bi\b", "I", text)
    text = re.sub(r"\bi'", "I'", text)
    text = text[:1].upper() + text[1:]
    if not text.endswith((".", "!", "?")):
        text += "."
    if len(text) > max_chars:
        text = text[:max_chars - 1].rstrip() + "…"
    return text
