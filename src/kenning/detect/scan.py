"""``finditer`` that tries a pattern only where a cheap "starts" regex says a match can begin.

Python's ``re`` tries a pattern at every position of the text unless the pattern begins with a literal or
a character class; the detectors' patterns begin with ``\\b`` or a lookbehind, so on long texts most of
their cost is failing at positions where no match could begin. :func:`finditer_at` searches a second,
literal-led regex for the possible start positions and runs the real pattern only there, with
``Pattern.match(text, pos)``, which sees the characters before ``pos`` (lookbehinds and ``\\b`` behave
as in a full scan). It yields exactly what ``rx.finditer(text)`` yields provided ``starts`` matches, in
``haystack``, at every position where a match of ``rx`` can begin, and ``rx`` never matches the empty
string. ``tests/test_prefilters.py`` compares the two on generated texts for every pair used.
"""

from __future__ import annotations

import re
from typing import Iterator


def finditer_at(rx: re.Pattern, text: str, starts: re.Pattern, haystack: str | None = None) -> Iterator[re.Match]:
    """The matches of ``rx.finditer(text)``, trying ``rx`` only where ``starts`` matches ``haystack``.

    ``haystack`` defaults to ``text``; it may be a same-length copy, such as the folded text
    (:func:`kenning.detect.textfold.fold`), when the start words are case-insensitive.
    """
    hay = text if haystack is None else haystack
    search, match = starts.search, rx.match
    pos = 0
    while True:
        s = search(hay, pos)
        if s is None:
            return
        m = match(text, s.start())
        if m is None:
            pos = s.start() + 1  # start candidates may overlap: look again from the next character
        else:
            yield m
            pos = m.end()  # like finditer: the next match begins at or after this one's end


def finditer_from(rx: re.Pattern, text: str, positions: list[int]) -> Iterator[re.Match]:
    """The matches of ``rx.finditer(text)``, trying ``rx`` only at ``positions`` (ascending; duplicates allowed),
    which must include every position where a match of ``rx`` can begin; as :func:`finditer_at` otherwise."""
    match = rx.match
    pos = 0
    for s in positions:
        if s < pos:
            continue
        m = match(text, s)
        if m is not None:
            yield m
            pos = m.end()
