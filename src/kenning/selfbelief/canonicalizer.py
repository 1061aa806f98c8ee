"""Phase 5a — BeliefCanonicalizer (seed 000 §4.5): atom text → canonical text and hash.

Steps (the seed's, in its order, plus one):
 1. lowercase
 2. expand contractions (``i'm`` → ``i am``, ``don't`` → ``do not``, ``can't`` → ``cannot`` …)
 2b. (Kenning, S1) remove negation from the main clause ("i am not patient" → "i am patient"): polarity is a
     separate field, so a belief and its denial share one canonical text and hash — which is what makes the seed's
     hard contradiction ("same canonical_hash, opposite polarity", §4.15) possible. Negations inside a condition
     ("… if i do not exercise") are kept.
 3. strip trailing punctuation
 4. collapse whitespace
 5. trim
 6. Unicode NFC

Hash: ``SHA256(canonical_text)[:32]`` (hex).
"""

from __future__ import annotations

import hashlib
import re

from kenning.selfbelief.text import collapse, expand_contractions, nfc
from kenning.selfbelief.types import CanonicalAtom, RawAtom

_CLAUSE_BREAK = re.compile(r"\s(?:if|unless|when|whenever|every time|each time|because|until|before|after|once)\s")
_NEG_RULES = [
    (re.compile(r"\b(?:do|does|did) not\s+"), ""),
    (re.compile(r"\bcannot\b"), "can"),
    (re.compile(r"\bcan not\b"), "can"),
    (re.compile(r"\b(am|is|are|was|were|have|has|had|will|would|could|should|can|must|might|need|may) not\b"), r"\1"),
    (re.compile(r"\bno longer\b"), ""),
    (re.compile(r"\bno good\b"), "good"),
    (re.compile(r"\bnever\b"), ""),
    (re.compile(r"\bnot\b"), ""),
]
_TRAILING = re.compile(r"[\s.,!?;:…\"')\]]+$")


_A_AN = re.compile(r"\ba (?=[aeiou])")


_VERB_GROUP = re.compile(r"^i(?: (?:am|is|are|was|were|be|been|have|has|had|do|does|did|will|would|could|should|can|"
                         r"cannot|must|might|may|need|not|never|no longer|no(?= good\b)|really|just|still|always|even|"
                         r"also|ever))*(?= |$)")
_ANYMORE = re.compile(r"\bany ?more\b")


def strip_negation(text: str) -> str:
    """Negation words out of the verb group of an expanded, lowercase text (S1, by scope since S41): "i am not
    patient" → "i am patient", but "i eat pasta and not much else" and "… if i do not exercise" keep theirs."""
    m = _CLAUSE_BREAK.search(text)
    head, tail = (text[:m.start()], text[m.start():]) if m else (text, "")
    g = _VERB_GROUP.match(head)
    if g is None:
        return collapse(head + tail)
    group, rest = head[:g.end()] + " ", head[g.end():]
    if group.endswith(" no ") and rest.startswith(" good"):
        group = group[:-3]                           # "i am no good at …"
    for rx, repl in _NEG_RULES:
        group = rx.sub(repl, group)
    return collapse(group + _ANYMORE.sub("", rest) + tail)


def canonical_text(text: str) -> str:
    s = text.lower()                                # 1
    s = expand_contractions(s)                      # 2
    s = strip_negation(s)                           # 2b (Kenning)
    s = _TRAILING.sub("", s)                        # 3
    s = " ".join(s.split())                         # 4 (and 5)
    s = s.strip()                                   # 5
    s = _A_AN.sub("an ", s)                         # (articles left behind by removed words: "a organized")
    return nfc(s)                                   # 6


def canonical_hash(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


class BeliefCanonicalizer:
    def canonicalize(self, atom: RawAtom) -> CanonicalAtom:
        text = canonical_text(atom.atom_text)
        return CanonicalAtom(atom.atom_text, text, canonical_hash(text), atom.belief_type, atom.polarity,
                             atom.confidence, atom.source_idx, list(atom.spans), atom.evidence, atom.origin,
                             dict(atom.signals))
