"""Which cue words occur in a folded text: one Aho–Corasick pass shared by the time patterns and the detectors.

Stage 2A's prefilters ask of every text whether it holds some word ("yesterday", "before", "commit"…) in its
:func:`kenning.detect.textfold.fold`-ed form. One substring scan per word cost more than the patterns they
guard (about forty words, each absent one scanning the whole text); an automaton over all of them reports
every occurrence of every word — exactly the words ``w in folded`` is true for — in one pass. The answer for
the last text is kept (by identity), so the detectors and the time patterns share it.
"""

from __future__ import annotations

from functools import lru_cache

_last: list = [None, frozenset(), {}]  # the last folded text (by identity), its words, and where each ends


@lru_cache(maxsize=1)
def _automaton():
    import ahocorasick

    from kenning.detect.detectors import _GIT_SHA_CUES
    from kenning.detect.times import build_patterns

    words = set(_GIT_SHA_CUES)
    for p in build_patterns(1.0):  # the cues do not depend on bare_year_confidence
        for group in p.cues.folded:
            words.update(group)
    a = ahocorasick.Automaton()
    for w in sorted(words):
        a.add_word(w, w)
    a.make_automaton()
    return a


def vocabulary() -> frozenset[str]:
    return frozenset(_automaton().keys())


def _scan(folded: str) -> None:
    if _last[0] is folded:
        return
    ends: dict[str, list[int]] = {}
    if folded:
        get = ends.get
        for end, w in _automaton().iter(folded):
            found = get(w)
            if found is None:
                ends[w] = [end]
            else:
                found.append(end)
    _last[0], _last[1], _last[2] = folded, frozenset(ends), ends


def cue_words(folded: str) -> frozenset[str]:
    """The cue words (time-pattern cues and GIT_SHA cues) that are substrings of ``folded``."""
    _scan(folded)
    return _last[1]


def cue_ends(folded: str) -> dict[str, list[int]]:
    """Each cue word in ``folded`` → the index of the last character of each of its occurrences, in text order
    (found in the same pass as :func:`cue_words`; do not change the lists)."""
    _scan(folded)
    return _last[2]


def starts_of(folded: str, words: frozenset[str]) -> list[int]:
    """Where in ``folded`` each occurrence of one of ``words`` begins (overlapping ones too), in text order."""
    ends = cue_ends(folded)
    out = []
    for w in words & _last[1]:
        n = len(w) - 1
        out.extend(e - n for e in ends[w])
    return sorted(out)
