"""Phase 2 — BeliefSegmenter (seed 000 §4.2): text → claim candidates with spans.

1. Split on sentence-ending punctuation (``. ! ?``) — and, Kenning additions (S7), on line breaks, ellipses, and
   on a colon or dash that is followed by an independent clause.
2. Split on semicolons.
3. Split on the coordinating conjunctions of ``segmenter.split_conjunctions`` (and, but, however, although,
   though, yet, so, while, whereas) **only** when they join independent clauses: the words after the
   conjunction open a clause with its own subject ("…, but lately I've been snapping at them"). A comma
   followed by a new first-person clause splits too ("I stopped running, I no longer eat meat") unless the
   sentence opens with a subordinating word.
4. Never split on the subordinating conjunctions (because, since, unless, until, when, if, after, before, as,
   that, which, who): a dependent clause stays with its main clause.

Each candidate keeps its ``(start, end)`` in the input (code points) for provenance.
"""

from __future__ import annotations

import re
from typing import Iterable

from kenning.selfbelief.types import ClaimCandidate

_TITLES = {"dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "mt"}
_ABBREV = {"e.g", "i.e", "etc", "vs", "approx", "no", "fig", "corp", "inc", "ltd", "co", "jan", "feb", "mar", "apr",
           "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "a.m", "p.m", "eg", "ie"}
_SENT_END = re.compile(r"(\.\.\.|…|[.!?]+)(?=[\s\"')\]]|$)|;|\n")
_LEAD_ADVERBS = (r"(?:(?:lately|recently|now|then|also|still|honestly|actually|sometimes|usually|really|just|maybe|"
                 r"perhaps|probably|today|other times|at times|at the moment|right now|these days|in fact|of course|"
                 r"at least|deep down|most days|nowadays)[,\s]+)*")
_SUBJECT = (r"(?:i|i'm|i've|i'd|i'll|im|me and \w+|we|we're|we've|you|you're|you've|he|he's|she|she's|they|they're|"
            r"it|it's|that's|there's|there|this|that|my\s+\w+|his\s+\w+|her\s+\w+|our\s+\w+|their\s+\w+|"
            r"(?:can|could|would|will)\s+you|please|tell\s+me|let's|let\s+me|skip|give\s+me|help\s+me|make\s+it|"
            r"the\s+\w+(?:\s+\w+)?\s+(?:is|are|was|were|should|will|can|has|have|does|doesn't|did|didn't|"
            r"won't|isn't|makes|feels|seems)|"
            r"some\s+of\s+that|[A-Z][a-z]+\s+(?:is|was|has|says|said|thinks|and\s+i)|"
            r"(?:[a-z-]+\s+){1,3}(?:is|are|was|were|will|would|can|should|has|have|had|does|do|doesn't|don't|"
            r"isn't|aren't|won't)(?=\s))\b")
_TAG = re.compile(r"\s*i\s+(?:admit|think|guess|know|suppose|swear|mean|believe|reckon|promise|hope)\b\W*$", re.I)
_CLAUSE_START = re.compile(r"\s*" + _LEAD_ADVERBS + _SUBJECT, re.I)
_FIRST_PERSON_START = re.compile(r"\s*" + _LEAD_ADVERBS + r"(?:i|i'm|i've|i'd|i'll)\b", re.I)
_SUBORDINATE_OPEN = re.compile(r"\s*(?:when|whenever|if|unless|because|since|until|after|before|as|every time|"
                               r"each time|although|though|while|whereas|once)\b", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d+[.)])\s+")


_LAST_WORD = re.compile(r"([A-Za-z.]+)\.$")
_SPACE_CAP = re.compile(r"\s+[A-Z]")
_PUNCT_BREAK = re.compile(r"(,|:|\s[-–—]|—)\s+")
_SUBORD_END = re.compile(r"\b(?:if|when|whenever|unless|because|since|until|after|before|as|that|which|who)\s*$",
                         re.I)
_LETTER = re.compile(r"[A-Za-z\u00C0-\u024F]")
_LEAD_PUNCT = re.compile(r"^[\s,;:()\[\]\"'“”‘’—–-]+")


class BeliefSegmenter:
    def __init__(self, split_conjunctions: Iterable[str], keep_conjunctions: Iterable[str] = ()):
        conj = sorted({c.lower() for c in split_conjunctions}, key=len, reverse=True)
        self.keep = {c.lower() for c in keep_conjunctions}
        alt = "|".join(re.escape(c) for c in conj)
        # ", but " / " and " / "; however, " — the conjunction with its surrounding commas and spaces
        self._conj = re.compile(r"(,?\s+|^)(" + alt + r")\b,?(?=\s)", re.I)
        self._lead_conj = re.compile(r"^\s*(?:" + alt + r")\b,?\s*", re.I)
        self._initial = re.compile(r"^\s*(although|though|while|whereas)\b", re.I)

    @classmethod
    def from_config(cls, cfg) -> "BeliefSegmenter":
        return cls(cfg.split_conjunctions, cfg.keep_conjunctions)

    # -- 1 + 2: sentences ----------------------------------------------------------------------------------
    def sentences(self, text: str) -> list[tuple[int, int]]:
        out = []
        start = 0
        for m in _SENT_END.finditer(text):
            end = m.end()
            if m.group(0) == ".":
                word = _LAST_WORD.search(text, start, m.end())
                abbrev = word.group(1).lower().rstrip(".") if word else ""
                if abbrev in _TITLES:
                    continue  # "Dr. Smith"
                if abbrev in _ABBREV and not _SPACE_CAP.match(text, m.end(), m.end() + 3):
                    continue  # "Acme Corp. and I'm …", "e.g. this"
            if m.group(0) in (";", "\n"):
                end = m.start()
            out.append((start, end))
            start = m.end()
        out.append((start, len(text)))
        return [(s, e) for s, e in out if text[s:e].strip()]

    # -- 3: coordinating conjunctions between independent clauses ------------------------------------------
    def _clause_cuts(self, text: str, s: int, e: int) -> list[tuple[int, int]]:
        """(cut_start, cut_end) pairs inside text[s:e]: the text between them is dropped (conjunction, commas)."""
        seg = text[s:e]
        cuts: list[tuple[int, int]] = []
        initial = self._initial.match(seg)
        for m in self._conj.finditer(seg):
            if not seg[:m.start(2)].strip():
                continue  # sentence-initial conjunction: not a split point (handled below for although & co.)
            after = seg[m.end():]
            if not after.strip() or not _CLAUSE_START.match(after):
                continue
            cuts.append((s + m.start(), s + m.end()))
        # Kenning (S7): ", I …" comma splice, a colon or a dash before an independent clause
        for m in _PUNCT_BREAK.finditer(seg):
            after = seg[m.end():]
            left = seg[:m.start()]
            if not left.strip() or not after.strip():
                continue
            if m.group(1) == ",":
                if not _FIRST_PERSON_START.match(after) or _TAG.match(after):
                    continue  # ", I admit." is a tag on the clause before it
                if _SUBORDINATE_OPEN.match(left) and not initial:
                    continue  # "Whenever I'm stressed, I clean": the dependent clause stays attached
                if _SUBORD_END.search(left):
                    continue
            elif not _CLAUSE_START.match(after):
                continue
            if any(a <= s + m.start() < b for a, b in cuts):
                continue
            cuts.append((s + m.start(), s + m.end()))
        if initial:  # "Although I'm tired, I'm happy": the main clause after the comma stands alone
            comma = seg.find(",")
            if comma > 0 and _CLAUSE_START.match(seg[comma + 1:]) and not any(a <= s + comma < b for a, b in cuts):
                cuts.append((s + comma, s + comma + 1))
        return sorted(set(cuts))

    def segment(self, text: str) -> list[ClaimCandidate]:
        pieces: list[tuple[int, int]] = []
        for s, e in self.sentences(text):
            pos = s
            for a, b in self._clause_cuts(text, s, e):
                if a > pos:
                    pieces.append((pos, a))
                pos = max(pos, b)
            pieces.append((pos, e))
        out: list[ClaimCandidate] = []
        for s, e in pieces:
            s, e = self._trim(text, s, e)
            if e > s and _LETTER.search(text, s, e):
                out.append(ClaimCandidate(text[s:e], (s, e), len(out)))
        return out

    def _trim(self, text: str, s: int, e: int) -> tuple[int, int]:
        while True:
            seg = text[s:e]
            m = _BULLET.match(seg) or self._lead_conj.match(seg) or _LEAD_PUNCT.match(seg)
            if not m or m.end() == 0:
                break
            s += m.end()
        while e > s and text[e - 1] in " \t\r\n,;:-—–(\"'“‘":
            e -= 1
        if e > s and text[e - 1] == ")" and text.count("(", s, e) < text.count(")", s, e):
            e -= 1
        return s, e
