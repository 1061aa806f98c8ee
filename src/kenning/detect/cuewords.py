"""Which cue words occur in a folded text: one Aho–Corasick pass shared by the time patterns and the detectors.

Stage 2A's prefilters ask of every text whether it holds some word ("yesterday", "before", "commit"…) in its
:func:`kenning.detect.textfold.fold`-ed form. One substring scan per word cost more than the patterns they
guard (about forty words, each absent one scanning the whole text); an automaton over all of them reports
every occurrence of every word — exactly the words ``w in folded`` is true for — in one pass. The answer for
the last text is kept (by identity), so the detectors and the time patterns share it.
"""

from __future__ import annotations

from functools import lru_cache

_last: list = [None, frozenset()]


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


def cue_words(folded: str) -> frozenset[str]:
    """The cue words (time-pattern cues and GIT_SHA cues) that are substrings of ``folded``."""
    if _last[0] is folded:
        return _last[1]
    found = frozenset(w for _, w in _automaton().iter(folded)) if folded else frozenset()
    _last[0], _last[1] = folded, found
    return found


def starts_of(folded: str, words: frozenset[str]) -> list[int]:
    """Where in ``folded`` each occurrence of one of ``words`` begins (overlapping ones too), in text order."""
    out = []
    for w in words & cue_words(folded):  # only the words present; each found by str.find, a few times at most
        i = folded.find(w)
        while i >= 0:
            out.append(i)
            i = folded.find(w, i + 1)
    return sorted(out)
