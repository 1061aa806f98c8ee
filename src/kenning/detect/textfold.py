"""Case folding that agrees with Python's ``re`` under IGNORECASE, for cheap substring tests and lookups.

``re`` compares letters case-insensitively by their lowercase forms and also treats "İ" (U+0130) and "ı"
(U+0131) as "i" and "ſ" (U+017F) as "s", which ``str.lower()`` leaves alone ("İ" even lowers to two code
points); the Kelvin sign already lowers to "k". After :func:`fold`, a case-insensitive match of an ASCII
word is a plain substring of the folded text, so a prefilter can test ``word in fold(text)`` and never
skip a text the regex would match. ``tests/test_textfold.py`` checks this against every code point.
"""

from __future__ import annotations

import re

_RE_CASE_EXTRAS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def fold(s: str) -> str:
    # str.translate walks the text in Python-level steps; three substring tests are far cheaper, and rarely true
    if "\u0130" in s or "\u0131" in s or "\u017f" in s:
        return s.translate(_RE_CASE_EXTRAS).lower()
    return s.lower()


_last: list = [None, ""]


def fold_once(s: str) -> str:
    """:func:`fold`, remembered for the last text (by identity): stage 2A's detectors and time patterns fold the
    same text one after the other."""
    if _last[0] is s:
        return _last[1]
    f = fold(s)
    _last[0], _last[1] = s, f
    return f


_DIGIT = re.compile(r"\d")
_last_digit: list = [None, -1]


def first_digit(s: str) -> int:
    r"""Where the first decimal digit (re's ``\d``) of ``s`` is, or -1: remembered for the last text (by identity),
    as :func:`fold_once`; stage 2A's detectors and time patterns ask it of the same text one after the other, and a
    digit-led shape need not be searched for before it (N15)."""
    if _last_digit[0] is s:
        return _last_digit[1]
    m = _DIGIT.search(s)
    at = -1 if m is None else m.start()
    _last_digit[0], _last_digit[1] = s, at
    return at
