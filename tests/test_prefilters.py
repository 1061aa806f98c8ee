"""Every prefilter is a necessary condition: a text it rejects is one its regex cannot match.

The prefilters exist only for speed; if one rejected a text its pattern matches, output would silently
change. Hypothesis generates texts from each pattern's own regex (with random text around the match:
Unicode digits and whitespace, mixed case, the letters re's IGNORECASE folds), plus texts stitched from
the patterns' vocabulary, and the prefilter must admit every one that matches.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.config import load_config
from kenning.detect.times import _SHAPES as _SHAPES_T, Cues as Cues_T, TimeDetector, _TextFacts

TD = TimeDetector(load_config())
TIME_PATTERNS = {p.pattern_id: p for p in TD.patterns}

WORDS = ["in", "In", "IN", "last", "LAST", "laſt", "next", "this", "thıs", "THİS", "previous", "coming", "week",
         "weekend", "month", "year", "day", "days", "ago", "AGO", "a", "an", "a couple of", "a few", "three", "twelve",
         "yesterday", "today", "Tonight", "tomorrow", "morning", "the", "night", "before", "after", "of", "on",
         "Monday", "friday", "SUNDAY", "Mondays", "January", "May", "may", "Sept", "Sep", "Dec", "March", "mar",
         "spring", "Summer", "fall", "early", "mid", "late", "since", "back in", "around", "2024", "1999", "2048",
         "19", "20", "15", "3", "03", "12", "٣", "T", "Z", "st", "th", "-", "/", ".", ":", ",", " ", "  ", "\t", "\n",
         "MB", "%", "$", "#", "@", "'s time", "e\u0301", "🎉"]
VOCABULARY = st.lists(st.sampled_from(WORDS), max_size=12).flatmap(
    lambda ws: st.sampled_from(["", " "]).map(lambda sep: sep.join(ws)))


def _time_cues_admit(pid: str, text: str) -> None:
    p = TIME_PATTERNS[pid]
    if p.regex.search(text) is not None:
        assert _TextFacts(text).admit(p.cues), (pid, text)


@pytest.mark.slow
@pytest.mark.parametrize("pid", sorted(TIME_PATTERNS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_time_pattern_cues_admit_every_match(pid, data):
    _time_cues_admit(pid, data.draw(st.from_regex(TIME_PATTERNS[pid].regex)))


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(VOCABULARY)
def test_time_pattern_cues_admit_vocabulary_texts(text):
    for pid in TIME_PATTERNS:
        _time_cues_admit(pid, text)


# ---- rules NER cue regexes --------------------------------------------------------------------------------------

from kenning.detect import ner  # noqa: E402

NER_CONTEXT = st.text(alphabet=st.sampled_from("aAsSıİſ ,\t\n.-'’éÉ"), max_size=6)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.from_regex(ner._RELATION), NER_CONTEXT)
def test_relation_gate_admits_every_match(before, junk):
    for b in (before, junk + before, before + junk):
        if ner._RELATION.search(b):
            assert b[-1:].isspace() and ner._ends_with(ner._tail(b), ner._RELATION_ENDS, plural_comma=True), b


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.from_regex(ner._ORG_CUE), NER_CONTEXT)
def test_org_cue_gate_admits_every_match(before, junk):
    for b in (before, junk + before, before + junk):
        if ner._ORG_CUE.search(b):
            assert b[-1:].isspace() and ner._ends_with(ner._tail(b), ner._ORG_CUE_ENDS), b


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.from_regex(ner._LOC_CUE), NER_CONTEXT)
def test_loc_cue_gate_admits_every_match(before, junk):
    for b in (before, junk + before, before + junk):
        if ner._LOC_CUE.search(b):
            assert ner._ends_with(ner._tail(b), ner._LOC_CUE_ENDS), b


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.from_regex(ner._TITLE_BEFORE), NER_CONTEXT, st.integers(0, 20))
def test_title_gate_admits_every_match(text, junk, cut):
    for t in (text, junk + text, text + junk, text[:len(text) - cut]):
        start = len(t)
        if ner._TITLE_BEFORE.search(t, max(0, start - 16), start):
            assert ner._may_follow_title(t, start), t
        t2 = t + "Smith"
        if ner._TITLE_BEFORE.search(t2, max(0, start - 16), start):
            assert ner._may_follow_title(t2, start), t2


def test_relation_gate_admits_every_listed_word():
    words = re.search(r"\(\?:(sister\|[^)]*)\)s\?", ner._RELATION.pattern).group(1).split("|")
    forms = [w for w in words if "?" not in w] + [w.replace("e?", "") for w in words if "?" in w] + \
        [w.replace("?", "") for w in words if "?" in w]
    assert "fiancé" in forms and len(forms) > 40
    for w in forms:
        for before in (f"my {w} ", f"Our {w.upper()}s,\t", f"{w}\n"):
            assert ner._RELATION.search(before), before
            tail = ner._tail(before)
            assert before[-1:].isspace() and ner._ends_with(tail, ner._RELATION_ENDS, plural_comma=True), before


# ---- deterministic detectors: each shape is in every match of its detector's regex -----------------------------

from kenning.detect import detectors as D  # noqa: E402
from kenning.detect.textfold import fold  # noqa: E402

SHAPES = {
    "UUID": (D._UUID, lambda t: D._UUID_SHAPE.search(t)),
    # a hash hit also holds a digit (_find_hash); only those must pass the shape
    "HASH_HEX": (D._HASH, lambda t: D._HASH_SHAPE.search(t), lambda m: D._HAS_DIGIT.search(m.group())),
    "IPV4": (D._IPV4, lambda t: D._IPV4_SHAPE.search(t)),
    "PHONE": (D._PHONE, lambda t: D._PHONE_SHAPE.search(t)),
    "UNIX_ABS": (D._UNIX_ABS, lambda t: D._UNIX_ABS_SHAPE.search(t)),
    "UNIX_REL": (D._UNIX_REL, lambda t: D._UNIX_REL_SHAPE.search(t)),
    "BARE_DOMAIN": (D._DOMAIN, lambda t: D._DOMAIN_SHAPE.search(t)),
    "ORCID": (D._ORCID, lambda t: D._ORCID_SHAPE.search(t)),
    "GIT_SHA": (D._GIT_SHA, D._may_hold_git_sha, lambda m: D._HAS_DIGIT.search(m.group(1))),
    "IP": (D._IPV4, D._may_hold_ip),
    "IPV6": (D._IPV6, D._may_hold_ip, lambda m: "::" in m.group() or m.group().count(":") == 7),
    "FILEPATH_ABS": (D._UNIX_ABS, D._may_hold_filepath),
    "FILEPATH_REL": (D._UNIX_REL, D._may_hold_filepath),
    "FILEPATH_WIN": (D._WIN, D._may_hold_filepath),
    "HASHTAG": (D._HASHTAG, lambda t: D._HASHTAG_SHAPE.search(t)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHAPES))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_detector_shapes_admit_every_match(name, data):
    rx, shape, *relevant = SHAPES[name]
    text = data.draw(st.from_regex(rx))
    for m in rx.finditer(text):
        if not relevant or relevant[0](m):
            assert shape(text), (name, text)


def test_hash_shape_on_runs_with_one_digit_anywhere():
    for n in (32, 40, 64):
        for i in range(n):
            run = "a" * i + "7" + "b" * (n - i - 1)
            assert D._HASH_SHAPE.search(f"x {run} y"), (n, i)


# ---- lexicon generators ---------------------------------------------------------------------------------------------

from kenning.detect import lexicon as LX  # noqa: E402


CAMEL_CASE = {g: rx for g, rx, _group in LX._GEN}["CAMEL_CASE"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.from_regex(CAMEL_CASE))
def test_camel_case_shape_admits_every_match(text):
    if CAMEL_CASE.search(text):
        assert LX._CAMEL_SHAPE.search(text), text


# ---- scan.finditer_at: the same matches as finditer, for every (pattern, starts) pair the code uses -----------------

from kenning.detect.scan import finditer_at  # noqa: E402

STARTS = {f"time:{p.pattern_id}": (p.regex, p.starts, True) for p in TD.patterns if p.starts is not None}
STARTS["ner:caps"] = (ner._CAPS_SPAN, ner._CAPS_START, False)
STARTS.update({f"lexicon:{g}": (rx, LX._GEN_STARTS[g], False) for g, rx, _group in LX._GEN if g in LX._GEN_STARTS})
STARTS.update({"detector:IPV4": (D._IPV4, D._IPV4_STARTS, False), "detector:PHONE": (D._PHONE, D._PHONE_STARTS, False),
               "detector:UNIX_ABS": (D._UNIX_ABS, D._UNIX_ABS_STARTS, False)})  # N14
NER_WORDS = ["PHX", "ProjectPhoenix", "#deep_work", "@priya_k", '"Blue Garden"', '"', "Anna", "Mc", "McDonald", "O'Neil", "Jean-Luc", "ACME", "Corp", "Inc", ".", "of", "de", " ", "\t", "\n",
             "the", "The", "Dr", "@", "#", "-", "É", "é", "Ölaf", "IBM", "x", "2024", "🎉", "Bank", "Co", "Jr"]


def _same_matches(rx, starts, on_folded, text):
    hay = fold(text) if on_folded else None
    want = [(m.span(), m.groups()) for m in rx.finditer(text)]
    got = [(m.span(), m.groups()) for m in finditer_at(rx, text, starts, hay)]
    assert got == want, text


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STARTS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_finditer_at_matches_finditer(name, data):
    rx, starts, on_folded = STARTS[name]
    assert rx.match("") is None
    vocabulary = st.lists(st.sampled_from(WORDS + NER_WORDS), max_size=12).map("".join)
    parts = data.draw(st.lists(st.one_of(st.from_regex(rx), vocabulary), min_size=1, max_size=4))
    for sep in ("", " "):
        _same_matches(rx, starts, on_folded, sep.join(parts))


ALL_DETECTORS = D.build_detectors(optional_enabled=list(D.OPTIONAL), phone_default_region="US",
                                  domain_tld_allowlist_enabled=False)
DIGIT_REGEXES = {"HASH_HEX": D._HASH, "PHONE": D._PHONE, "ARXIV": D._ARXIV, "ORCID": D._ORCID, "GIT_SHA": D._GIT_SHA}


def test_needs_digit_is_declared_where_expected():
    assert {d.name for d in ALL_DETECTORS if d.needs_digit} == set(DIGIT_REGEXES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DIGIT_REGEXES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_detectors_that_need_a_digit_only_report_hits_with_one(name, data):
    det = next(d for d in ALL_DETECTORS if d.name == name)
    text = data.draw(st.from_regex(DIGIT_REGEXES[name]))
    for h in det.find(text):
        assert D._HAS_DIGIT.search(text[h.start:h.end]), (name, text)


# ---- issue 24 §3: faster forms that must give exactly the old answers ----------------------------------------------

CAPS_CONTEXT = st.lists(st.sampled_from(NER_WORDS + WORDS + ["O'Brien", "d'Arc", "X-Ray", "ÉCOLE", "McD", "Mc",
                                                             "A.", "Inc.", "Corp.", "Co.", "Jr.", "x@Anna", "/Anna",
                                                             "\\Anna", "-Anna", "_Anna", "9Anna", "Ölaf-Émile"]),
                        max_size=14).map("".join)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.from_regex(ner._CAPS_SPAN), CAPS_CONTEXT), min_size=1, max_size=4),
       st.sampled_from(["", " ", "\n", "."]))
def test_caps_span_fast_finds_what_caps_span_finds(parts, sep):
    text = sep.join(parts)
    want = [(m.span(), m.group()) for m in ner._CAPS_SPAN.finditer(text)]
    assert [(m.span(), m.group()) for m in ner._CAPS_SPAN_FAST.finditer(text)] == want, text


def test_caps_span_fast_on_hand_picked_texts():
    for text in ("Anna met Dr. Smith at Acme Corp. in New York", "McDonald and McD and Mc", "O'Neil, Jean-Luc",
                 "the IBM team", "x@Anna /Anna -Anna Anna", "ÉCOLE Ölaf", "A", "Anna's", "Bank of America Inc.",
                 "Jr. Sr. Co. Ltd.", "HTTPServer", "AbcDef", "ABc"):
        want = [m.span() for m in ner._CAPS_SPAN.finditer(text)]
        assert [m.span() for m in ner._CAPS_SPAN_FAST.finditer(text)] == want, text


def test_single_word_skip_rules():
    assert ner._single_skip("The") is True and ner._single_skip("March") is True and ner._single_skip("Dr") is True
    assert ner._single_skip("Professor") is True and ner._single_skip("Thanks") is True
    assert ner._single_skip("Anna") is False and ner._single_skip("PHX") is False
    assert ner._single_skip("New York") is None and ner._single_skip("Dr\tSmith") is None
    assert ner._SINGLE_SKIP["Anna"] is False and "New York" not in ner._SINGLE_SKIP


def test_rules_ner_gives_the_same_spans_with_a_cold_or_warm_skip_cache():
    text = "The plan: my sister Anna met Dr. Smith in Paris. Anna said Acme Corp. hired Tom. The End. March"
    ner._SINGLE_SKIP.clear()
    cold = [s.as_raw() for s in ner.RulesNerBackend().detect(text)]
    assert ner._SINGLE_SKIP  # filled by the first run
    warm = [s.as_raw() for s in ner.RulesNerBackend().detect(text)]
    assert cold == warm
    assert [s[2] for s in cold if s[4] == "Anna"] == ["PERSON", "PERSON"]


from kenning.detect import cuewords  # noqa: E402

TIME_CUE_WORDS = sorted({w for p in TD.patterns for ws in p.cues.folded for w in ws})


def test_cue_vocabulary_holds_every_time_cue_and_git_sha_cue():
    assert set(TIME_CUE_WORDS) | set(D._GIT_SHA_CUES) == cuewords.vocabulary()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS + ["commit", "SHA", "previous", "Cherry-Pick", "checkout", "revert"]),
                max_size=12).map(" ".join))
def test_cue_word_scan_equals_substring_tests(text):
    folded = fold(text)
    assert cuewords.cue_words(folded) == {w for w in cuewords.vocabulary() if w in folded}, text
    assert _TextFacts(text).words() == {w for w in cuewords.vocabulary() if w in folded}, text


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.from_regex(D._IPV6))
def test_ipv6_shape_is_in_every_ipv6_match(text):
    for m in D._IPV6.finditer(text):
        assert D._IPV6_SHAPE.search(m.group()), text


def test_cue_word_scan_finds_overlapping_and_nested_words():
    facts = _TextFacts("TONIGHT, the afternoon before Thursday-ish; Laſt weekend")
    assert {"tonight", "night", "afternoon", "after", "before", "thursday", "last", "week"} <= facts.words()
    assert _TextFacts("").words() == frozenset()


def _day_month_same(text):
    from kenning.detect import times as T

    assert (T._DayMonthShape.search(text) is not None) == (T._DAY_MONTH_RX.search(text) is not None), text


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(WORDS + ["of", "ofMarch", "5th", "1st", "22nd", "x3rd", "th", "Mar", "Dece", "Jan.",
                                         "\u00a0", "\u2003", "٣", "²", "Marchth"]), max_size=12),
       st.sampled_from(["", " ", "\n", "\u00a0"]))
def test_day_month_shape_answers_as_its_regex(words, sep):
    _day_month_same(sep.join(words))


def test_day_month_shape_on_hand_picked_texts():
    for text in ("5 March", "5th of March", "5th  of\tMarch", "5 of March", "5thof March", "of March", "5March",
                 "March 5", "Mar. 5", "Marchx 5", "٣ Mar", "x ² Mar", "3rd\u00a0Dec", "3 ofDec", "3 of  Dec", "Dec",
                 "1st\n\nof\n\nMay", "th Mar", "4th Mar", "4st Mar"):
        _day_month_same(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["commit", "SHA1", "sha", "rev", "revision", "Revert", "cherry-pick", "checkout",
                                 "share", "previous", "abc1234", "deadbeef", "1234567", ":", "#", " ", "\t", "\n",
                                 "x", "ſha", "0a1b2c3d4e"]), max_size=10).map("".join))
def test_git_sha_prefilter_answers_as_the_shape_search(text):
    folded = fold(text)
    want = any(w in folded for w in D._GIT_SHA_CUES) and D._GIT_SHA_SHAPE.search(folded) is not None
    assert D._may_hold_git_sha(text) == want, text


def test_input_hash_is_the_per_part_digest():
    import hashlib

    from kenning.detect.mentions import MessageDetector, MessageInput

    m = MessageInput("m", "c", "user", None, "original", "héllo \ud800 wörld", "[[0,1]]", None, "[]")
    h = hashlib.sha256()
    for part in ("fp", m.message_id, m.conversation_id, m.role, "", m.timestamp_quality, m.fences_json, "",
                 m.citations_json, m.text):  # the message id too since N12
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    assert MessageDetector.input_hash(m, "fp") == h.digest()[:16]


CAMEL_WORDS = ["fooBar", "FooBar", "getHTTPResponse", "iPhone", "x", "X", "_", "_fooBar", "fooBar_", "foo1Bar",
               "éBar", "fooÉtat", "aB", "Ab", "ABc", "McDonald", "camelCase", " ", "\n", "-", ".", "@", "#", "ǅ", "²"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(CAMEL_WORDS), st.from_regex(CAMEL_CASE)), max_size=10).map("".join))
def test_camel_case_matches_are_finditer(text):
    want = [(m.span(), m.span(1)) for m in CAMEL_CASE.finditer(text)]
    assert [(m.span(), m.span(1)) for m in LX._camel_case_matches(CAMEL_CASE, text)] == want, text


# ---- issue 24 §3: per-text memories in stage 2B and the exclusions -------------------------------------------------

def test_inducer_remembers_a_text_and_gives_each_message_its_own_occurrences():
    from kenning.detect.spans import Exclusions

    text = "Project Phoenix is on. Ask PHX about ProjectPhoenix and #deepwork with @priya_k, \"Blue Garden\"."
    excl = Exclusions.build(None, None, None, include_blockquotes=True)
    fresh, cached = (LX.Inducer(allcaps_stoplist=["OK"], role_weights={"user": 1.0}) for _ in range(2))
    fresh.add_message("m1", "c1", "user", text, excl)
    for mid in ("m1", "m2"):
        cached.add_message(mid, "c" + mid, "user", text, excl)
    assert len(cached._found) == 1
    first = {k: [(o.start, o.end, o.surface, o.generator, o.in_code, o.context) for o in v] for k, v in fresh.occ.items()}
    twice = {k: [(o.start, o.end, o.surface, o.generator, o.in_code, o.context) for o in v] for k, v in cached.occ.items()}
    assert twice == {k: v + v for k, v in first.items()} and first
    assert [o.message_id for o in cached.occ["project phoenix"]] == ["m1", "m2"]
    assert cached.by_generator == fresh.by_generator + fresh.by_generator
    # the same text with other exclusions is its own entry
    fenced = Exclusions.build('[{"char_start": 0, "char_end": 20}]', None, None, include_blockquotes=True)
    cached.add_message("m3", "c3", "user", text, fenced)
    assert len(cached._found) == 2 and cached.occ["project phoenix"][-1].in_code


def test_lexicon_matcher_remembers_hits_per_text():
    term = LX.LexTerm("t1", "project phoenix", "Project Phoenix", ["Project Phoenix", "PHX"], "CUSTOM_TERM", 1.0)
    m = LX.LexiconMatcher([term])
    a = m.find("PHX and Project Phoenix; not PHXY")
    assert [(h.start, h.end, h.surface) for h in a] == [(0, 3, "PHX"), (8, 23, "Project Phoenix")]
    assert m.find("PHX and Project Phoenix; not PHXY") is a


def test_exclusions_are_built_once_per_input():
    from kenning.detect.spans import Exclusions

    a = Exclusions.build('[{"char_start": 1, "char_end": 5}]', None, "[]", include_blockquotes=False)
    b = Exclusions.build('[{"char_start": 1, "char_end": 5}]', None, "[]", include_blockquotes=False)
    assert a is b and a.hit(0, 2) == "fence" and a.hit(5, 9) is None
    assert Exclusions.build(None, None, None, include_blockquotes=True) == Exclusions((), ())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["sha", "shasha", "rev", "revrev", "commit", "checkout", "x", " "]), max_size=10)
       .map("".join))
def test_starts_of_lists_every_occurrence(text):
    words = frozenset(D._GIT_SHA_CUES)
    want = sorted(i for w in words for i in range(len(text)) if text.startswith(w, i))
    assert cuewords.starts_of(text, words) == want, text


@settings(max_examples=500, deadline=None)
@given(VOCABULARY)
def test_shape_implications_hold(text):
    from kenning.detect import times as T

    for name, needs in T._SHAPE_NEEDS.items():
        if T._SHAPES[name].search(text) is not None:
            assert T._SHAPES[needs].search(text) is not None, (name, text)
    facts = _TextFacts(text)
    for p in TD.patterns:  # admitting with the implications = admitting with every shape searched
        naive = (not p.cues.digit or facts.has_digit) and all(T._SHAPES[n].search(text) is not None
                                                               for n in p.cues.shapes) \
            and all(any(w in fold(text) for w in ws) for ws in p.cues.folded)
        assert facts.admit(p.cues) == naive, (p.pattern_id, text)


def test_folding_keeps_letters_commas_and_whitespace():
    """ner._classify decides "could a cue end here" on the unfolded window: fold must not change the answer."""
    for i in range(0x110000):
        if 0xD800 <= i <= 0xDFFF:
            continue
        c = chr(i)
        f = fold(c)
        assert c.isalpha() == f[-1:].isalpha() and (c == ",") == (f[-1:] == ","), hex(i)
        assert c.isspace() == f.isspace(), hex(i)
        assert len(f) == 1 or c.isalpha(), hex(i)


# ---- N13: time patterns tried where the cue-word pass says a match can begin ---------------------------------------

from kenning.detect.scan import finditer_from  # noqa: E402

AT_PATTERNS = {p.pattern_id: p for p in TD.patterns if p.at is not None}


def _same_matches_at(p, text):
    want = [(m.span(), m.groups()) for m in p.regex.finditer(text)]
    got = [(m.span(), m.groups()) for m in finditer_from(p.regex, text, p.at.positions(fold(text)))]
    assert got == want, (p.pattern_id, text)


def test_start_word_patterns_are_the_expected_ones():
    assert set(AT_PATTERNS) == {"WEEKDAY_REL_DATE", "REL_DAY", "REL_UNIT", "REL_WEEKDAY"}
    vocab = cuewords.vocabulary()
    for p in AT_PATTERNS.values():  # positions come from the cue-word pass: every word must be in its vocabulary
        assert set(p.at.words) | set(p.at.anchors) <= vocab, p.pattern_id


@pytest.mark.slow
@pytest.mark.parametrize("pid", sorted(AT_PATTERNS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_start_word_positions_give_finditer_matches(pid, data):
    p = AT_PATTERNS[pid]
    parts = data.draw(st.lists(st.one_of(st.from_regex(p.regex), VOCABULARY), min_size=1, max_size=4))
    for sep in ("", " ", "\n", "  "):
        _same_matches_at(p, sep.join(parts))


def test_start_word_positions_on_hand_picked_texts():
    texts = ["The day before yesterday, the\n\tday after tomorrow", "bathe day; the  day before YESTERDAY",
             "on Monday, last FRIDAY and coming sunday; Mondays; on\u00a0Tuesday",
             "this week, NEXT month, previous year",
             "the Friday before March 3rd, 2024; Thursday after the 2nd of May", "ıt was thıs mornıng, laſt night",
             "summonday", "on  monday", "on\nmonday", "the sunday before 25 May", "last  night and THIS evening"]
    hits = 0
    for p in AT_PATTERNS.values():
        for text in texts:
            _same_matches_at(p, text)
            hits += sum(1 for _ in p.regex.finditer(text))
    assert hits > 15


DOMAIN_WORDS = ["example.com", "a.b.org", "E.G.", "e.g.", "file.py", "x-y.co.uk", "ab", "AB", ".", "..", "-", "@",
                "/", ":", "\\", "_", "é", "1", "42", " ", "\n", "mail@x.io", "www.", ".COM", ".Com", "a.bc", "-a.bc"]


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(DOMAIN_WORDS), st.from_regex(D._DOMAIN)), max_size=10).map("".join))
def test_domain_matches_are_finditer(text):
    want = [(m.span(), m.groups()) for m in D._DOMAIN.finditer(text)]
    assert [(m.span(), m.groups()) for m in D.domain_matches(text)] == want, text


def test_domain_matches_on_hand_picked_texts():
    texts = ["see example.com, a.b.org and e.g. file.py", "x-y.co.uk/path a@b.com .COM..ab", "é.com _a.com -a.bc",
             "foo.bar.Baz", "1.2.3.4 v1.2 abc.DEF.gh", "a.b.c.d.e.f.gh ok.ok.ok ..ab"]
    n = 0
    for text in texts:
        want = [(m.span(), m.groups()) for m in D._DOMAIN.finditer(text)]
        assert [(m.span(), m.groups()) for m in D.domain_matches(text)] == want, text
        n += len(want)
    assert n >= 6


# ---- N15: digit-led shapes searched from the first digit ---------------------------------------------------------

from kenning.detect.textfold import first_digit  # noqa: E402

DIGIT_TEXT = st.text(alphabet=st.sampled_from("0123456789٣abcdefABCDEF .-x\n"), max_size=60)


@settings(max_examples=500, deadline=None)
@given(DIGIT_TEXT)
def test_digit_led_shapes_answer_as_a_full_search(text):
    at = first_digit(text)
    assert at == next((i for i, ch in enumerate(text) if re.match(r"\d", ch)), -1)
    for rx in (D._HASH_SHAPE, D._PHONE_SHAPE, _SHAPES_T["four_digits"]):
        assert (at >= 0 and rx.search(text, at) is not None) == (rx.search(text) is not None), (rx.pattern, text)
    dets = {d.name: d for d in ALL_DETECTORS}
    assert dets["HASH_HEX"].prefilter(text) == (D._HASH_SHAPE.search(text) is not None)
    assert dets["PHONE"].prefilter(text) == (D._PHONE_SHAPE.search(text) is not None)
    facts = _TextFacts(text)
    for name in ("four_digits", "year"):
        assert facts.admit(Cues_T(shapes=(name,))) == (_SHAPES_T[name].search(text) is not None), (name, text)


def test_first_digit_is_remembered_by_identity():
    a = "abc 1"
    b = "".join(["abc", " 1"])
    assert first_digit(a) == first_digit(b) == 4 and first_digit("none") == -1 and first_digit("") == -1
