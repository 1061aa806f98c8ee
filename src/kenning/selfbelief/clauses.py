"""Where a statement's main clause is (issue 22): shared by the rule atomizer, which writes the atom, and the
epistemics rules, which read its polarity, so both agree on which words are the belief and which are its frame.

* :func:`fronted_main_start` — a subordinate clause fronted without a comma ("When I'm tired I snap") ends where
  the main clause's "I" begins (S40).
* :func:`fronted_phrase` — a phrase fronted without a clause of its own ("At work I'm confident", "Most mornings
  I run") and where the main clause begins (S40).
* :func:`verb_group_end` — the subject's verb group: auxiliaries, adverbs and negation between "i" and the
  predicate ("i am not", "i do not", "i can barely"). Negation counts only there (S41).

All work on lowercase text, with contractions written out or not ("i'm" and "i am" both read).
"""

from __future__ import annotations

import re

_TOK = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_I_FORMS = {"i", "i'm", "i've", "i'd", "i'll", "im"}
_SUBORDINATOR = re.compile(r"\s*(every time|each time|as soon as|whenever|when|if|unless|after|before|because|since|"
                           r"although|though|while|once|until)\b")
# An "I" right after one of these opens a complement, not the main clause ("when I think I'm failing I panic").
_NOT_MAIN_AFTER = {"think", "thought", "feel", "felt", "know", "knew", "that", "like", "say", "said", "believe",
                   "guess", "if", "whether", "and", "or", "than", "because", "realize", "realise", "hope", "wish",
                   "suppose", "when", "whenever", "unless", "what", "where", "how", "who", "which", "tell", "told",
                   "as"}
# Words that make a fronted phrase a clause of its own (it has a verb): not moved, not dropped.
_CLAUSE_WORDS = {"is", "are", "was", "were", "am", "be", "been", "says", "said", "say", "think", "thinks", "thought",
                 "told", "tells", "tell", "calls", "call", "called", "do", "does", "did", "have", "has", "had", "will",
                 "would", "can", "could", "should", "must", "feel", "feels", "know", "knows", "believe", "believes",
                 "reckon", "reckons", "claims", "insists", "keeps", "see", "sees", "find", "finds"}
AUX = {"am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does", "did", "will",
       "would", "can", "could", "should", "must", "might", "may", "shall", "'m", "'ve", "'d", "'ll", "'s", "ca",
       "wo", "sha", "cannot"}
ADVERBS = {"really", "very", "so", "just", "also", "actually", "honestly", "even", "truly", "totally", "pretty",
           "quite", "probably", "maybe", "definitely", "certainly", "genuinely", "simply", "still", "always",
           "usually", "often", "sometimes", "generally", "typically", "normally", "ever", "almost", "literally",
           "seriously", "basically", "mostly", "kind", "sort", "of", "kinda", "sorta", "now", "already", "increasingly",
           "constantly", "lately", "recently", "finally", "too", "definitely", "not", "never", "no", "longer", "n't"}


def tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _TOK.finditer(text)]


def _is_i(w: str) -> bool:
    return w in _I_FORMS


def fronted_main_start(low: str) -> int | None:
    """Offset of the main clause's "I" when ``low`` opens with a subordinate clause ("when i am tired i snap" →
    the second "i"); None when it does not, or no main clause with "I" follows."""
    m = _SUBORDINATOR.match(low)
    if not m:
        return None
    toks = [t for t in tokens(low) if t[1] >= m.end()]
    for k, (w, s, _) in enumerate(toks):
        if k == 0 or not _is_i(w):
            continue   # the first word is the subordinate clause's own subject
        if toks[k - 1][0] in _NOT_MAIN_AFTER:
            continue
        return s
    return None


def fronted_phrase(low: str, fronting_words) -> tuple[str, int] | None:
    """(phrase, main start) when ``low`` opens with a phrase of at most six words before its first "I" (comma or
    not) that starts with a fronting word ("at work", "with strangers", "most mornings", "as a kid") and has no
    verb of its own; else None."""
    toks = tokens(low)
    if not toks or _is_i(toks[0][0]):
        return None
    first = toks[0][0]
    if first not in fronting_words and first not in ("most", "every", "each", "these", "some", "as", "growing",
                                                     "back", "deep"):
        return None
    for k, (w, s, _) in enumerate(toks[:7]):
        if _is_i(w):
            if k == 0:
                return None
            phrase = low[:s].strip(" ,;:-—")
            if not phrase or any(t[0] in _CLAUSE_WORDS for t in toks[:k]):
                return None
            return phrase, s
    return None


def verb_group_end(toks: list[tuple[str, int, int]], start: int, covered: dict[int, set[str]] | None = None,
                   stop_cats: frozenset = frozenset({"aversion"})) -> int:
    """Index of the first token after the verb group that begins at token ``start`` (the token after "i").
    ``covered`` maps a token index to the categories of the cue covering it: a token inside a frame cue (negation,
    temporal, modality, degree) belongs to the group; an aversion verb ends it."""
    k = start
    covered = covered or {}
    while k < len(toks):
        cats = covered.get(k)
        if cats is not None:
            if cats & stop_cats:
                return k
            if cats - {"discourse"}:
                k += 1
                continue
        if toks[k][0] in AUX or toks[k][0] in ADVERBS:
            k += 1
            continue
        break
    return k
