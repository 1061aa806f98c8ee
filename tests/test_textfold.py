"""textfold.fold agrees with re's IGNORECASE on every code point (the time and NER prefilters rely on it)."""

from __future__ import annotations

import re
import string
import sys

from kenning.detect.textfold import fold


def test_fold_maps_every_char_re_matches_to_an_ascii_letter_onto_that_letter():
    any_letter = re.compile("(?i)[a-z]")
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or not any_letter.fullmatch(c):
            continue
        matched = [x for x in string.ascii_lowercase if re.fullmatch("(?i)" + x, c)]
        assert [fold(c)] == matched, (hex(cp), fold(c), matched)


def test_fold_keeps_length_whitespace_and_digits():
    # a match's offsets and its \s / \d characters stay where they were in the folded copy
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        f = fold(c)
        assert len(f) == 1, hex(cp)
        if c.isspace() or re.fullmatch(r"\d", c):
            assert f == c, hex(cp)
        assert c.isspace() == (re.fullmatch(r"\s", c) is not None), hex(cp)  # str.rstrip() strips what \s matches


def test_fold_examples():
    assert fold("LAſT WEEK") == "last week"
    assert fold("TONİGHT") == "tonight"
    assert fold("thıs") == "this"
    assert fold("\u212aelvin") == "kelvin"
