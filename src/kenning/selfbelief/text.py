"""Small text helpers shared by the phases: apostrophes, contractions, words, masking, verb forms."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Sequence

APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u0060": "'", "\u00b4": "'"})

# seed 000 §4.5 step 2 "Expand contractions: i'm → i am, don't → do not, etc." (lowercase input)
CONTRACTIONS: dict[str, str] = {
    "i'm": "i am", "im": "i am", "i've": "i have", "i'd": "i would", "i'll": "i will",
    "can't": "cannot", "won't": "will not", "shan't": "shall not", "ain't": "am not",
    "don't": "do not", "doesn't": "does not", "didn't": "did not", "isn't": "is not", "aren't": "are not",
    "wasn't": "was not", "weren't": "were not", "haven't": "have not", "hasn't": "has not", "hadn't": "had not",
    "wouldn't": "would not", "shouldn't": "should not", "couldn't": "could not", "mustn't": "must not",
    "mightn't": "might not", "needn't": "need not", "let's": "let us", "it's": "it is", "that's": "that is",
    "there's": "there is", "here's": "here is", "what's": "what is", "who's": "who is", "he's": "he is",
    "she's": "she is", "you're": "you are", "we're": "we are", "they're": "they are", "you've": "you have",
    "we've": "we have", "they've": "they have", "you'll": "you will", "we'll": "we will", "they'll": "they will",
    "you'd": "you would", "we'd": "we would", "they'd": "they would", "gonna": "going to", "wanna": "want to",
    "kinda": "kind of", "sorta": "sort of", "gotta": "got to",
}
_CONTRACTION_RE = re.compile(r"(?<![\w'])(" + "|".join(sorted((re.escape(k) for k in CONTRACTIONS), key=len,
                                                              reverse=True)) + r")(?![\w'])")
_GENERIC_NT = re.compile(r"(\w+)n't\b")
_GENERIC_SUFFIX = re.compile(r"(\w)'(re|ve|ll|d)\b")
_SUFFIX = {"re": "are", "ve": "have", "ll": "will", "d": "would"}


def normalize_apostrophes(text: str) -> str:
    return text.translate(APOSTROPHES)


def expand_contractions(text: str) -> str:
    """Lowercase text with its contractions written out ("i'm" → "i am", "can't" → "cannot")."""
    text = normalize_apostrophes(text)
    text = _CONTRACTION_RE.sub(lambda m: CONTRACTIONS[m.group(1)], text)
    text = _GENERIC_NT.sub(lambda m: m.group(1) + " not", text)
    return _GENERIC_SUFFIX.sub(lambda m: m.group(1) + " " + _SUFFIX[m.group(2)], text)


WORD = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['\u2019\-][A-Za-z0-9\u00C0-\u024F]+)*")


def words(text: str) -> list[str]:
    return WORD.findall(text)


def word_spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in WORD.finditer(text)]


def mask(text: str, ranges: Iterable[Sequence[int]]) -> str:
    """``text`` with each [start, end) range replaced by spaces (offsets are kept)."""
    chars = list(text)
    for start, end in ranges:
        for i in range(max(0, start), min(len(chars), end)):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def collapse(text: str) -> str:
    return " ".join(text.split())


# -- verb forms (a small, closed lexicon: enough to turn "have always loved" into "love") ----------------
_IRREGULAR_PAST = {
    "was": "am", "were": "are", "had": "have", "did": "do", "felt": "feel", "thought": "think", "knew": "know",
    "got": "get", "went": "go", "ran": "run", "made": "make", "took": "take", "kept": "keep", "found": "find",
    "gave": "give", "told": "tell", "wrote": "write", "left": "leave", "came": "come", "saw": "see", "met": "meet",
    "spent": "spend", "bought": "buy", "lost": "lose", "became": "become", "began": "begin", "slept": "sleep",
    "understood": "understand", "hid": "hide", "fought": "fight", "grew": "grow", "held": "hold", "sat": "sit",
    "stood": "stand", "meant": "mean", "taught": "teach", "caught": "catch", "brought": "bring", "said": "say", "paid": "pay",
}
_E_VERBS = {"love", "hate", "like", "live", "move", "care", "use", "believe", "value", "dislike", "prefer",
            "admire", "despise", "loathe", "adore", "cherish", "realize", "realise", "hope", "change", "lose",
            "make", "take", "give", "become", "have", "leave", "write", "come", "procrastinate", "overthink",
            "hide", "handle", "struggle", "freeze", "settle", "organize", "organise", "second-guess", "practice",
            "practise", "dance", "smoke", "improve", "argue", "judge", "manage", "share", "compare", "close",
            "excite", "bore", "scare", "tire", "isolate", "criticize", "criticise", "agree", "serve", "save",
            "apologize", "apologise", "smile", "joke", "whine", "bake", "hike", "ride", "drive", "type", "tease",
            "rationalize", "rationalise", "catastrophize", "catastrophise", "compromise", "sacrifice", "ruminate",
            "overcompensate", "escape", "please", "dine", "overshare", "commute", "exercise", "analyze", "analyse",
            "overanalyze", "overanalyse", "shine", "dance", "skate", "care", "rescue", "snooze"}


def lemma_ing(word: str) -> str:
    """'snapping' → 'snap', 'feeling' → 'feel', 'making' → 'make' (small lexicon for the e-drop)."""
    if not word.endswith("ing") or len(word) <= 5:
        return word
    stem = word[:-3]
    if stem.endswith("ck") and stem[:-1].endswith("ic"):
        return stem[:-1]            # "panicking" → "panic"
    if stem + "e" in _E_VERBS:
        return stem + "e"
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsfz" and stem[-1] not in "aeiou":
        return stem[:-1]
    return stem


def lemma_past(word: str) -> str:
    """'loved' → 'love', 'hated' → 'hate', 'stopped' → 'stop', 'felt' → 'feel'."""
    if word in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[word]
    if word.endswith("ied") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ed") and len(word) > 3:
        stem = word[:-2]
        if word[:-1] in _E_VERBS:
            return word[:-1]
        if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsfz":
            return stem[:-1]
        return stem
    return word


_ED_STEMS = {"need", "needs", "feed", "bleed", "breed", "speed", "succeed", "proceed", "exceed", "heed", "seed",
             "shed", "embed", "overfeed", "indeed"}   # "-ed" that is the verb itself: "I need …" is no past


def is_past_form(word: str) -> bool:
    return word in _IRREGULAR_PAST or (word.endswith("ed") and len(word) > 3 and word not in _ED_STEMS)
