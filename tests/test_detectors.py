"""Deterministic detectors, rules NER, time patterns and LexiconMatch on single texts (E4–E8, E15–E22)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.config import load_config
from kenning.detect.candidates import Candidate, select_winners
from kenning.detect.detectors import build_detectors, detector_tier
from kenning.detect.keys import entity_key, entity_type_for
from kenning.detect.lexicon import LexiconMatcher, LexTerm, infer_type
from kenning.detect.mentions import MessageDetector, MessageInput
from kenning.detect.ner import (NerSpan, ReplayNerBackend, RulesNerBackend, chunk_bounds, run_chunked)
from kenning.detect.spans import Exclusions
from kenning.detect.times import TimeDetector
from kenning.sources.ids import IdFactory
from kenning.pipeline.stage3 import choose_name

CFG = load_config()
DETS = build_detectors(optional_enabled=["ARXIV", "CVE", "ORCID", "GIT_SHA", "HANDLE", "HASHTAG"],
                       phone_default_region="US", domain_tld_allowlist_enabled=False)
NO_EXCL = Exclusions.build(None, None, None, include_blockquotes=False)


def hits(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in DETS:
        if d.prefilter(text):
            for h in d.find(text):
                out.setdefault(d.name, []).append(text[h.start:h.end])
    return out


@pytest.mark.parametrize("text, detector, surface", [
    ("mail a.b+c@mail.example.co.uk.", "EMAIL", "a.b+c@mail.example.co.uk"),
    ("see (https://example.com/a_(b)?q=1#frag).", "URL", "https://example.com/a_(b)?q=1#frag"),
    ("[docs](https://docs.example.org/x)", "URL", "https://docs.example.org/x"),
    ("https://doi.org/10.1000/182", "DOI", "https://doi.org/10.1000/182"),
    ("id 123E4567-E89B-12D3-A456-426614174000", "UUID", "123E4567-E89B-12D3-A456-426614174000"),
    ("sha256 " + "a1" * 32, "HASH_HEX", "a1" * 32),
    ("ip 010.001.002.003", "IP_ADDRESS", "010.001.002.003"),
    ("ip fe80::1ff:fe23:4567:890a ok", "IP_ADDRESS", "fe80::1ff:fe23:4567:890a"),
    ("call +1 (415) 555-2671 now", "PHONE", "+1 (415) 555-2671"),
    ("open ~/notes/today.md", "FILEPATH", "~/notes/today.md"),
    ("edit src/kenning/api.py", "FILEPATH", "src/kenning/api.py"),
    ("visit kenning.dev today", "BARE_DOMAIN", "kenning.dev"),
    ("read arXiv:1706.03762", "ARXIV", "arXiv:1706.03762"),
    ("CVE-2014-0160 again", "CVE", "CVE-2014-0160"),
    ("orcid 0000-0002-1694-233X", "ORCID", "0000-0002-1694-233X"),
    ("revert commit 9fceb02 please", "GIT_SHA", "9fceb02"),
    ("thanks @bob_smith!", "HANDLE", "@bob_smith"),
    ("tagged #deepwork.", "HASHTAG", "#deepwork"),
])
def test_detectors_find(text, detector, surface):
    assert surface in hits(text).get(detector, []), hits(text)


@pytest.mark.parametrize("text, detector", [
    ("version 1.2.3 and 2024-03-15", "PHONE"),
    ("and/or 24/7", "FILEPATH"),
    ("orcid 0000-0002-1694-2330", "ORCID"),          # bad checksum
    ("the # heading and #1", "HASHTAG"),
    ("bob@example.com", "HANDLE"),
    ("ftp://example.com/file", "URL"),
    ("12:30:45", "IP_ADDRESS"),
])
def test_detectors_do_not_fire(text, detector):
    assert detector not in hits(text), hits(text)


def test_overlaps_url_over_domain_and_email_over_domain():
    det = MessageDetector(CFG, None)
    text = "see https://www.example.com/x and mail ann@example.org"
    out = det.run(MessageInput("m", "c", "user", "2024-01-01T00:00:00.000Z", "original", text, None, None, None),
                  IdFactory(), __import__("collections").Counter())
    won = {(c.detector, c.surface) for c in out.winners}
    assert ("URL", "https://www.example.com/x") in won and ("EMAIL", "ann@example.org") in won
    assert not any(c.detector == "BARE_DOMAIN" for c in out.winners)


def test_winner_sort_keys_tie_breaks():
    def cand(det, s, e, conf, order):
        c = Candidate("m", det, "1", order, "X", s, e, "x" * (e - s), conf)
        c.candidate_id = f"{det}{s}{e}"
        return c
    a, b, c = cand("URL", 0, 10, 0.9, 20), cand("EMAIL", 5, 12, 0.95, 10), cand("FILEPATH", 0, 10, 0.9, 80)
    winners = select_winners([a, b, c])
    assert winners == [b]  # confidence first
    assert a.reason == c.reason == "OVERLAP_HIGHER_SCORE" and a.suppressed_by == b.candidate_id
    d, e = cand("URL", 0, 10, 0.9, 20), cand("FILEPATH", 0, 10, 0.9, 80)
    assert select_winners([e, d]) == [d]  # equal confidence and length: detector_order
    lex, ner = cand("LEXICON:b", 0, 5, 0.5, 155), cand("NER:x", 0, 10, 0.99, 160)
    assert select_winners([ner, lex]) == [lex]  # class before confidence (E9)


def test_keys_and_tiers():
    assert entity_key("EMAIL", "Ann@Example.COM") == "ann@example.com"
    assert entity_key("URL", "HTTPS://Example.com:443/a/B?z=1&a=2#f") == "https://example.com/a/B"
    assert entity_key("URL", "https://example.com/p?z=1&a=2", url_keep_query=True, url_sort_query=True) == \
        "https://example.com/p?a=2&z=1"
    assert entity_key("DOI", "DOI:10.1000/ABC") == "10.1000/abc"
    assert entity_key("IP_ADDRESS", "2001:0db8:0000:0000:0000:0000:0000:0001") == "2001:db8::1"
    assert entity_key("PHONE", "(415) 555-2671", phone_region="US") == "+14155552671"
    assert entity_key("PERSON", "  Anna\n Berg ") == "anna berg"
    assert entity_key("ARXIV", "arXiv:2101.00001v2") == "2101.00001v2"
    assert entity_type_for("MISC") == "OTHER" and entity_type_for("GIT_SHA") == "GIT_SHA"
    assert [detector_tier(d) for d in ("EMAIL", "HASH_HEX", "HASHTAG", "LEXICON:x", "NER:y", "WHAT")] == [1, 2, 2, 3, 4, 4]


# ---- offsets: a property test over random prefixes with astral emoji and combining marks ------------------------

_PREFIX = st.lists(st.sampled_from(["a", " ", "é", "e\u0301", "🎉", "👩‍👩‍👧", "\u0301", "中", "\n", "𝔘"]),
                   max_size=12).map("".join)
_ENTITY = st.sampled_from(["ann@example.com", "https://example.com/x", "doi:10.1000/xyz", "192.168.0.1",
                           "#deepwork", "@alice", "CVE-2021-44228", "My sister Anna", "2024-03-15", "last Tuesday",
                           "/usr/local/bin/tool", "Acme Corp."])


@settings(max_examples=150, deadline=None)
@given(_PREFIX, _ENTITY, _PREFIX)
def test_offsets_are_code_points(prefix, entity, suffix):
    text = prefix + " " + entity + " " + suffix
    det = MessageDetector(CFG, RulesNerBackend())
    out = det.run(MessageInput("m", "c", "user", "2024-06-12T10:00:00.000Z", "original", text, None, None, None),
                  IdFactory(), __import__("collections").Counter())
    for c in out.candidates:
        if c.start is not None:
            assert 0 <= c.start < c.end <= len(text) and text[c.start:c.end] == c.surface
    for t in out.times:
        assert text[t.start:t.end] == t.surface
    spans = sorted((c.start, c.end) for c in out.winners)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    found = {c.surface for c in out.candidates} | {t.surface for t in out.times}
    assert any(entity.startswith(f) or f in entity for f in found), (text, found)


# ---- NER ---------------------------------------------------------------------------------------------------------

def test_rules_ner_labels_and_noise():
    text = ("Yesterday my sister Anna met Dr. Smith at Globex Corporation. I moved to Paris in March. "
            "The meeting was fine. Honestly nothing else. Sam said hi.")
    got = {(s.text, s.label) for s in RulesNerBackend().detect(text)}
    assert {("Anna", "PERSON"), ("Smith", "PERSON"), ("Globex Corporation", "ORG"), ("Paris", "LOCATION"),
            ("Sam", "PERSON")} <= got
    surfaces = {s for s, _ in got}
    assert not surfaces & {"Yesterday", "March", "The", "I", "Honestly", "Dr"}


def test_ner_chunking_shifts_offsets_back():
    assert chunk_bounds(25, 10, 3) == [(0, 10), (7, 10), (14, 10), (21, 4)]
    text = ("word " * 30) + "Dr. Watson arrived."
    res = run_chunked(RulesNerBackend(), text, 40, 15)
    watson = [s for s in res.spans if s.text == "Watson"]
    assert watson and all(text[s.start:s.end] == "Watson" for s in watson)


class BadOffsets:
    name, version = "bad", "1"

    def config(self):
        return {}

    def detect(self, text):
        return [NerSpan(0, 4, "PERSON", "Zelda", 0.9), NerSpan(None, None, "ORG", "Spanless Inc", 0.9)]


def test_unreliable_ner_offsets_are_nulled_and_logged():
    det = MessageDetector(CFG, BadOffsets())
    out = det.run(MessageInput("m", "c", "user", None, "missing", "Anna went home.", None, None, None),
                  IdFactory(), __import__("collections").Counter())
    ner = [c for c in out.candidates if c.detector == "NER:bad"]
    assert len(ner) == 2
    for c in ner:
        assert c.start is None and c.end is None and not c.eligible and c.reason == "NO_OFFSETS_UNRELIABLE"
    mismatch = [c for c in ner if c.surface == "Zelda"][0]
    assert mismatch.raw["offset_mismatch"]["text_at_span"] == "Anna"
    assert {w[0] for w in out.warnings} == {"OFFSET_UNRELIABLE"} and len(out.warnings) == 2
    assert out.winners == []


def test_replay_backend_reproduces_a_run():
    text = "My partner Sam and I moved to Lisbon."
    live = run_chunked(RulesNerBackend(), text, 10000, 1000)
    outputs = {c["input_sha256"]: c["spans"] for c in live.chunks}
    replay = run_chunked(ReplayNerBackend("kenning-rules", "1", outputs), text, 10000, 1000)
    assert [s.as_raw() for s in replay.spans] == [s.as_raw() for s in live.spans]


def test_spacy_adapter_with_entity_ruler():
    spacy = pytest.importorskip("spacy")
    from kenning.detect.ner import SpacyNerBackend

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PERSON", "pattern": "Anna"}, {"label": "GPE", "pattern": "Lisbon"}])
    backend = SpacyNerBackend(nlp, 0.75, "blank_en_ruler")
    text = "🎉 e\u0301 Anna lives in Lisbon."
    spans = backend.detect(text)
    assert [(text[s.start:s.end], s.label) for s in spans] == [("Anna", "PERSON"), ("Lisbon", "GPE")]
    det = MessageDetector(CFG, backend)
    out = det.run(MessageInput("m", "c", "user", None, "missing", text, None, None, None), IdFactory(),
                  __import__("collections").Counter())
    assert {(c.surface, c.hint, c.detector) for c in out.winners} >= {
        ("Anna", "PERSON", "NER:spacy-blank_en_ruler"), ("Lisbon", "LOCATION", "NER:spacy-blank_en_ruler")}


# ---- times ----------------------------------------------------------------------------------------------------------

TD = TimeDetector(CFG)
ANCHOR = "2024-06-12T10:00:00.000Z"  # a Wednesday


def resolve(text: str, quality: str = "original") -> dict[str, tuple]:
    return {t.surface: (t.pattern_id, t.resolution["resolved_type"], t.resolution.get("valid_from_utc"),
                        t.resolution.get("valid_to_utc"), t.resolution.get("resolution_granularity"))
            for t in TD.detect(text, NO_EXCL, ANCHOR, quality, {})}


@pytest.mark.parametrize("text, surface, frm, to, gran", [
    ("on 2024-03-15.", "2024-03-15", "2024-03-15", "2024-03-16", "day"),
    ("at 2024-03-15T10:30:00+02:00", "2024-03-15T10:30:00+02:00", "2024-03-15T08:30", None, "minute"),
    ("March 15, 2024 was", "March 15, 2024", "2024-03-15", "2024-03-16", "day"),
    ("in March 2024", "March 2024", "2024-03-01", "2024-04-01", "month"),
    ("back in 2021", "2021", "2021-01-01", "2022-01-01", "year"),
    ("summer 2022", "summer 2022", "2022-06-01", "2022-09-01", "month"),
    ("yesterday", "yesterday", "2024-06-11", "2024-06-12", "day"),
    ("last week", "last week", "2024-06-03", "2024-06-10", "week"),
    ("3 days ago", "3 days ago", "2024-06-09", "2024-06-10", "day"),
    ("the sunday before 25 May", "the sunday before 25 May", "2024-05-19", "2024-05-20", "day"),
    ("last Tuesday", "last Tuesday", "2024-06-11", "2024-06-12", "day"),
    ("next month", "next month", "2024-07-01", "2024-08-01", "month"),
    ("last March", "last March", "2024-03-01", "2024-04-01", "month"),
    ("25/12/2024", "25/12/2024", "2024-12-25", "2024-12-26", "day"),
])
def test_time_resolution(text, surface, frm, to, gran):
    pid, rtype, f, t, g = resolve(text)[surface]
    assert f.startswith(frm) and g == gran
    assert (t is None) if to is None else t.startswith(to)
    assert rtype == ("instant" if to is None else "interval")


def test_relative_times_unresolved_without_original_timestamp():
    for q in ("imputed_parent", "imputed_prior", "missing"):
        got = resolve("yesterday, last week, 3 days ago, last Tuesday, on 2024-03-15", q)
        assert got["yesterday"][1] == got["last week"][1] == got["3 days ago"][1] == got["last Tuesday"][1] == \
            "unresolved"
        assert got["2024-03-15"][1] == "interval"


def test_ambiguous_and_vague_times_stay_unresolved():
    got = resolve("12/05/2024 and on Monday and a few days ago and Mondays")
    assert got["12/05/2024"][1] == got["on Monday"][1] == got["a few days ago"][1] == got["Mondays"][1] == \
        "unresolved"
    assert "2048" not in resolve("I have 2048 MB")


def test_anchor_timezone_sets_day_boundaries():
    from kenning.config import load_config as lc

    td = TimeDetector(lc(overrides={"time": {"anchor_timezone": "Europe/Berlin"}}))
    t = td.detect("yesterday", NO_EXCL, "2024-06-11T23:30:00.000Z", "original", {})[0]
    # 23:30Z is already June 12 in Berlin: yesterday = June 11 Berlin = [June 10 22:00Z, June 11 22:00Z)
    assert t.resolution["valid_from_utc"] == "2024-06-10T22:00:00.000Z"
    assert t.resolution["valid_to_utc"] == "2024-06-11T22:00:00.000Z"


# ---- lexicon matching and stage 3 selection -------------------------------------------------------------------------

def test_lexicon_matcher_word_boundaries_and_emoji():
    m = LexiconMatcher([LexTerm("t1", "atlas", "Atlas", ["Atlas"], "CUSTOM_TERM", 9.0),
                        LexTerm("t2", "project phoenix", "Project Phoenix", ["Project Phoenix"], "CUSTOM_TERM", 5.0),
                        LexTerm("t3", "#zk", "#zk", ["#zk"], "CUSTOM_TERM", 1.0)])
    text = "🎉e\u0301 Atlassian is not Atlas; Project Phoenix, #zk but not #zkx."
    got = [(h.surface, text[h.start:h.end]) for h in m.find(text)]
    assert got == [("Atlas", "Atlas"), ("Project Phoenix", "Project Phoenix"), ("#zk", "#zk")]
    assert infer_type("Acme Corp.", ["Corp."]) == "ORG" and infer_type("@alice", []) == "PERSON"


def test_choose_name_lexicon_bonus_changes_outcome():
    cfg, trust = CFG.entities.canonicalization, CFG.pipeline.trust_weights
    ms = [("m1", "Phoenix Project", "NER:x", 0.5, "user", "2024-01-01", "c", 0, "a"),
          ("m2", "Phoenix Project", "NER:x", 0.5, "user", "2024-01-02", "c", 1, "b"),
          ("m3", "phoenix project", "LEXICON:b", 0.85, "assistant", "2024-01-03", "c", 2, "c")]
    plain = choose_name(ms, cfg, trust, None)
    assert plain["winner"] == "Phoenix Project"
    # weights: 2 × (1.0 × 0.6 × 0.75) = 0.9 vs 0.5 × 0.8 × 0.925 = 0.37; bonus 0.2 is not enough
    term = {"term_id": "t", "score": 3.0, "canonical_surface": "phoenix project"}
    assert choose_name(ms, cfg, trust, term)["winner"] == "Phoenix Project"
    ms.append(("m4", "phoenix project", "LEXICON:b", 0.85, "user", "2024-01-04", "c", 3, "d"))
    with_bonus = choose_name(ms, cfg, trust, term)
    assert with_bonus["winner"] == "phoenix project" and with_bonus["audit"]["lexicon"]["bonus_applied"]
    total = 0.9 + 0.37 + 0.74 + 0.2
    assert with_bonus["confidence"] == pytest.approx(min(1, (0.37 + 0.74 + 0.2) / total + 0.05), abs=1e-6)


@pytest.mark.parametrize("text, surface, pattern_id", [
    ("see you previous week", "previous week", "REL_UNIT"),           # no other relative cue word in the text
    ("due in\t3 days", "in\t3 days", "REL_IN"),                       # any whitespace, not just a space
    ("due in\n2 weeks", "in\n2 weeks", "REL_IN"),
])
def test_time_prefilters_do_not_hide_matches(text, surface, pattern_id):
    assert resolve(text)[surface][0] == pattern_id


def test_arxiv_prefix_in_any_case():
    assert hits("see ARxiv:2101.00001 now").get("ARXIV") == ["ARxiv:2101.00001"]


@pytest.mark.parametrize("text, surface, frm, gran", [
    # re's IGNORECASE matches ſ to s and ı/İ to i; resolution must read these words as re matched them
    ("laſt week", "laſt week", "2024-06-03", "week"),
    ("THİS MONTH", "THİS MONTH", "2024-06-01", "month"),
    ("TONİGHT", "TONİGHT", "2024-06-12", "day"),
    ("fıve days ago", "fıve days ago", "2024-06-07", "day"),
    ("10 mınutes ago", "10 mınutes ago", "2024-06-12T09:50", "minute"),
    ("laſt Frıday", "laſt Frıday", "2024-06-07", "day"),
    ("ſpring 2022", "ſpring 2022", "2022-03-01", "month"),
])
def test_relative_words_folded_like_the_regex_matched_them(text, surface, frm, gran):
    pid, rtype, f, _t, g = resolve(text)[surface]
    assert rtype != "unresolved" and f.startswith(frm) and g == gran
