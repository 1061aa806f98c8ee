"""Seed 000 §4 rules, one test (or more) per rule, with the seed's own examples where it gives them."""

from __future__ import annotations

import hashlib
import math
import unicodedata

import pytest

from kenning.config import load_config
from kenning.selfbelief.analyze import Analyzer
from kenning.selfbelief.atomizer import classify_belief_type
from kenning.selfbelief.canonicalizer import BeliefCanonicalizer, canonical_hash, canonical_text
from kenning.selfbelief.deduper import BeliefAtomDeduper
from kenning.selfbelief.epistemics import EpistemicsRulesEngine
from kenning.selfbelief.links import link_confidence, ordered, sigmoid
from kenning.selfbelief.scoring import activation, core_parts, status_for
from kenning.selfbelief.segmenter import BeliefSegmenter
from kenning.selfbelief.source_context import SourceContextClassifier
from kenning.selfbelief.streams import StreamClassifier
from kenning.selfbelief.text import expand_contractions
from kenning.selfbelief.types import CanonicalAtom, RawAtom
from kenning.selfbelief.validator import BeliefAtomValidator

CFG = load_config(overrides={"embeddings": {"backend": "hash"}})
SB = CFG.self_beliefs


@pytest.fixture(scope="module")
def analyzer():
    return Analyzer(CFG)


def atoms(analyzer, text, **kw):
    return [(a.atom.canonical_text, a.polarity, a.epistemics.frame.temporal_scope)
            for a in analyzer.analyze(text, **kw).atoms]


# ---- the seed's motivating example (issue 7) ------------------------------------------------------------------
def test_two_beliefs_with_different_time_scopes(analyzer):
    res = analyzer.analyze("I'm usually patient with my kids, but lately I've been snapping at them.")
    got = {a.atom.canonical_text: a for a in res.atoms}
    assert set(got) == {"i am patient with my kids", "i snap at my kids"}   # "them" resolved (S29)
    assert got["i am patient with my kids"].epistemics.frame.temporal_scope == "habitual"
    assert got["i snap at my kids"].epistemics.frame.temporal_scope == "transitional"
    assert got["i am patient with my kids"].atom.belief_type == "RELATIONAL"
    assert all(a.polarity == "affirm" for a in res.atoms)
    text = "I'm usually patient with my kids, but lately I've been snapping at them."
    for c in res.candidates:
        assert text[c.span[0]:c.span[1]] == c.text


# ---- §4.1 source context ----------------------------------------------------------------------------------------
def test_source_context_mode_weights_from_metadata():
    clf = SourceContextClassifier(SB.source_context)
    for mode, weight in {"journaling": 1.0, "introspection": 0.95, "normal_chat": 0.8, "roleplay": 0.4,
                         "heated": 0.5, "unknown": 0.7}.items():
        sc = clf.classify("I am calm.", conversation_id="c1", metadata={"mode": mode})
        assert (sc.mode, sc.source_weight, sc.context_id) == (mode, weight, f"c1:{mode}")


def test_source_context_penalties():
    clf = SourceContextClassifier(SB.source_context)
    meta = {"mode": "journaling"}
    caps = clf.classify("I AM SO DONE WITH ALL OF THIS", conversation_id="c", metadata=meta)
    assert caps.source_weight == pytest.approx(1.0 - 0.10) and "caps" in caps.signals["penalties"]
    prof = clf.classify("I am so damn tired of waiting", conversation_id="c", metadata=meta)
    assert prof.source_weight == pytest.approx(1.0 - 0.15) and "profanity" in prof.signals["penalties"]
    excl = clf.classify("I am great! Really! Yes!", conversation_id="c", metadata=meta)
    assert excl.source_weight == pytest.approx(1.0 - 0.05) and "exclaim" in excl.signals["penalties"]
    calm = clf.classify("I am a calm person.", conversation_id="c", metadata=meta)
    assert calm.source_weight == 1.0 and calm.signals["penalties"] == {}
    # a lone capital I is not shouting, and short texts are never penalised for capitals
    assert not clf.classify("I AM OK", conversation_id="c").signals["caps"]


def test_source_context_heuristic_modes():
    clf = SourceContextClassifier(SB.source_context)
    assert clf.classify("Let's pretend you are a pirate and I am brave", conversation_id="c").mode == "roleplay"
    assert clf.classify("Dear diary, I am tired", conversation_id="c").mode == "journaling"
    assert clf.classify("I am tired", conversation_id="c", source="chatgpt").mode == "normal_chat"
    assert clf.classify("I am tired", conversation_id="c", source="note").mode == "journaling"
    assert clf.classify("I am tired", conversation_id="c").mode == "unknown"
    heated = clf.classify("I HATE THIS DAMN THING SO MUCH!!!", conversation_id="c")
    assert heated.mode == "heated" and heated.source_weight == 0.2   # 0.5 − caps 0.10 − profanity 0.15 − exclaim 0.05


def test_vad_arousal_penalty_only_with_a_lexicon(tmp_path):
    clf = SourceContextClassifier(SB.source_context)
    assert "vad_arousal" not in clf.classify("I am furious", conversation_id="c", metadata={"mode": "journaling"}
                                             ).signals["penalties"]
    lex = tmp_path / "vad.tsv"
    lex.write_text("word\tvalence\tarousal\tdominance\nfurious\t0.1\t0.9\t0.5\ncalm\t0.8\t0.1\t0.5\n")
    cfg = load_config(overrides={"self_beliefs": {"source_context": {"vad": {"lexicon_path": str(lex)}}}})
    clf2 = SourceContextClassifier(cfg.self_beliefs.source_context)
    sc = clf2.classify("I am furious", conversation_id="c", metadata={"mode": "journaling"})
    assert sc.source_weight == pytest.approx(1.0 - 0.9 * 0.2)


# ---- §4.2 segmenter -------------------------------------------------------------------------------------------
SEG = BeliefSegmenter.from_config(SB.segmenter)


@pytest.mark.parametrize("text, parts", [
    ("I am calm. I am kind! Am I happy?", ["I am calm.", "I am kind!", "Am I happy?"]),
    ("I'm tired; I'm hopeful", ["I'm tired", "I'm hopeful"]),
    ("I love running and I hate swimming.", ["I love running", "I hate swimming."]),
    ("I'm patient but I'm tired.", ["I'm patient", "I'm tired."]),
    ("I like tea, however I drink coffee.", ["I like tea", "I drink coffee."]),
    ("Although I'm tired, I'm happy.", ["I'm tired", "I'm happy."]),
    ("I'm shy, though I love parties.", ["I'm shy", "I love parties."]),
    ("I'm tired, yet I keep going.", ["I'm tired", "I keep going."]),
    ("I work hard, so I sleep well.", ["I work hard", "I sleep well."]),
    ("I read while I eat.", ["I read", "I eat."]),
    ("I'm loud whereas my sister is quiet.", ["I'm loud", "my sister is quiet."]),
])
def test_segmenter_splits(text, parts):
    got = SEG.segment(text)
    assert [c.text for c in got] == parts
    assert all(text[c.span[0]:c.span[1]] == c.text for c in got)


@pytest.mark.parametrize("text", [
    "I'm calm because I meditate.", "I am happy since I moved.", "I won't relax unless I finish.",
    "I worry until I know.", "I am anxious when I fly.", "I am calm if I sleep.", "I stretch after I run.",
    "I pray before I eat.", "I am as tall as my dad.", "I believe that I am kind.", "I am someone which cares.",
    "I am a person who cares.",
    "I love salt and pepper.",            # "and" between noun phrases, not independent clauses
])
def test_segmenter_does_not_split_dependent_clauses(text):
    assert [c.text for c in SEG.segment(text)] == [text]


# ---- §4.4 validator -------------------------------------------------------------------------------------------
VAL = BeliefAtomValidator(SB.validator)


def raw(text: str) -> RawAtom:
    return RawAtom(text, "TRAIT", "affirm", 0.9, 0, [(0, len(text))], text, "rules")


@pytest.mark.parametrize("text, reason", [
    ("You are kind", "not_first_person"),
    ("Always be honest", "imperative"),
    ("I am", "too_short"),
    ("Am I happy?", "question"),
    ("I am {name}", "template_junk"),
    ("People are kind", "generic"),
])
def test_validator_rejections_from_the_seed(text, reason):
    assert VAL.reason(raw(text)) == reason


# S27: a report of actions in the perfect is not self-definitional; a change or lasting experience is.
@pytest.mark.parametrize("text", [
    "I have kept notes of everything I shipped", "I've written three novels", "I have done this a hundred times",
    "I had finished the report", "I've just shipped the release", "I have sent the invoices",
])
def test_validator_rejects_reports_of_actions_in_the_perfect(text):
    assert VAL.reason(raw(expand_contractions(text.lower()))) == "not_self_definitional"


@pytest.mark.parametrize("text", [
    "I have become more patient", "I've stopped caring about what people think", "I have always loved the ocean",
    "I have struggled with anxiety", "I've been a curious person", "I have lost my confidence",
    "I have kept a journal since I was twelve", "I have written every day for years",
])
def test_validator_keeps_changes_and_lasting_experiences_in_the_perfect(text):
    assert VAL.reason(raw(expand_contractions(text.lower()))) is None


def test_validator_accepts_a_belief_and_the_analyzer_reports_rejections(analyzer):
    assert VAL.reason(raw("I am patient")) is None
    res = analyzer.analyze("You are kind. Always be honest. Am I happy? I am {name}. People are kind. I am patient.")
    assert [a.atom.canonical_text for a in res.atoms] == ["i am patient"]
    assert sorted(r.reason for r in res.rejected) == sorted(["not_first_person", "imperative", "question",
                                                              "template_junk", "generic"])


# ---- §4.5 canonicalizer -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("src, want", [
    ("i'm", "i am"), ("don't", "do not"), ("can't", "cannot"), ("won't", "will not"), ("i've", "i have"),
    ("i'd", "i would"), ("isn't", "is not"), ("they're", "they are"), ("I’m", "i am"),
])
def test_contraction_expansion(src, want):
    assert expand_contractions(src.lower()) == want


def test_canonicalization_steps_and_hash():
    c = canonical_text("  I'm   PATIENT!!  ")
    assert c == "i am patient"
    assert canonical_hash(c) == hashlib.sha256(b"i am patient").hexdigest()[:32]
    decomposed = unicodedata.normalize("NFD", "I am naïve.")
    assert canonical_text(decomposed) == unicodedata.normalize("NFC", "i am naïve")
    # Kenning (S1): a denial shares the affirmation's canonical text; polarity is a separate field
    assert canonical_text("I'm not patient") == canonical_text("I am patient")
    assert canonical_text("i am calm if i do not drink coffee") == "i am calm if i do not drink coffee"
    atom = BeliefCanonicalizer().canonicalize(raw("I'm Curious."))
    assert (atom.canonical_text, atom.canonical_hash) == ("i am curious", canonical_hash("i am curious"))


# ---- §4.6 deduper -------------------------------------------------------------------------------------------------
def test_deduper_keeps_the_most_confident_and_merges_spans():
    def ca(text, conf, span, btype="TRAIT", pol="affirm"):
        t = canonical_text(text)
        return CanonicalAtom(text, t, canonical_hash(t), btype, pol, conf, 0, [span], text, "rules")
    res = BeliefAtomDeduper().dedup([ca("I am kind", 0.6, (0, 9)), ca("i'm kind", 0.9, (20, 28)),
                                     ca("I am kind", 0.7, (40, 49), btype="VALUE"),
                                     ca("I am kind", 0.7, (60, 69), pol="deny")])
    assert res.duplicates_removed == 1
    kept = [a for a in res.deduped_atoms if a.belief_type == "TRAIT" and a.polarity == "affirm"]
    assert len(kept) == 1 and kept[0].confidence == 0.9 and kept[0].spans == [(0, 9), (20, 28)]
    assert len(res.deduped_atoms) == 3


# ---- §4.7 epistemics --------------------------------------------------------------------------------------------
EPI = EpistemicsRulesEngine(SB.epistemics)


def test_negation_sets_deny():
    r = EPI.analyze("I am not a morning person.")
    assert r.detected_polarity == "deny"
    assert EPI.analyze("I don't eat meat").detected_polarity == "deny"
    assert EPI.analyze("I am a morning person").detected_polarity == "affirm"
    # a negation inside a condition does not deny the belief
    assert EPI.analyze("I am grumpy if I don't sleep").detected_polarity == "affirm"


def test_never_is_both_negation_and_habitual():
    r = EPI.analyze("I never procrastinate on important work.")
    assert (r.detected_polarity, r.frame.temporal_scope) == ("deny", "habitual")


def test_modality_and_its_cap(analyzer):
    assert EPI.analyze("I might be lazy").frame.modality == "possible"
    assert EPI.analyze("I think I'm bad at saying no").frame.modality == "likely"
    assert EPI.analyze("I'm not sure I'm smart").frame.modality == "unsure"
    assert EPI.analyze("I'm not sure I'm smart").detected_polarity == "affirm"   # "not sure" does not negate
    assert EPI.analyze("I am kind").frame.modality == "certain"
    [a] = analyzer.analyze("I think I'm bad at saying no.").atoms
    assert a.confidence == pytest.approx(min(0.85, SB.epistemics.modality_caps["likely"]))


@pytest.mark.parametrize("text, scope", [
    ("I used to be shy.", "past"), ("Lately I've been tired.", "transitional"), ("I always overthink.", "habitual"),
    ("I usually cook.", "habitual"), ("I'm still angry.", "ongoing"), ("Right now I'm tired.", "state"),
])
def test_temporal_cues(text, scope):
    assert EPI.analyze(text).frame.temporal_scope == scope


def test_specificity_then_rightmost():
    # past (6) beats transitional (5), wherever it stands
    r = EPI.analyze("I used to be shy but lately I am becoming confident")
    assert r.frame.temporal_scope == "past" and r.signals["scope_rule"] == "specificity_then_rightmost"
    assert EPI.analyze("Lately I am confident, but I used to be shy").frame.temporal_scope == "past"
    # equal specificity: the rightmost cue wins
    cfg = load_config(overrides={"self_beliefs": {"epistemics": {"temporal_specificity": {"transitional": 6}}}})
    eq = EpistemicsRulesEngine(cfg.self_beliefs.epistemics)
    assert eq.analyze("I used to be shy but lately I am confident").frame.temporal_scope == "transitional"
    assert eq.analyze("Lately I am confident, but I used to be shy").frame.temporal_scope == "past"


def test_degree_and_conditional():
    assert EPI.analyze("I am very patient").frame.degree == SB.epistemics.degree.strong
    assert EPI.analyze("I am a bit lazy").frame.degree == SB.epistemics.degree.weak
    assert EPI.analyze("I am patient").frame.degree == SB.epistemics.degree.default
    assert EPI.analyze("I am easily distracted when I work from home").frame.conditional == "when i work from home"


def test_llm_fallback_flag_below_threshold():
    r = EPI.analyze("Blue sky over the hills")
    assert r.confidence < 0.6 and r.needs_llm_fallback
    r2 = EPI.analyze("I am tired right now")
    assert r2.confidence >= 0.6 and not r2.needs_llm_fallback


# ---- §4.13 stream mapping ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("btype, scope, primary, secondary", [
    ("FEELING_STATE", "state", "state", "identity"),
    ("FEELING_STATE", "habitual", "identity", "state"),
    ("FEELING_STATE", "ongoing", "identity", "state"),
    ("TRAIT", "state", "identity", None), ("TRAIT", "habitual", "identity", None),
    ("VALUE", "unknown", "identity", None),
    ("META_BELIEF", "habitual", "meta", "identity"),
    ("RELATIONAL", "state", "relational", "identity"),
])
def test_stream_mapping_table(btype, scope, primary, secondary):
    c = StreamClassifier(SB.streams).classify(btype, scope)
    assert (c.primary_stream, c.secondary_stream) == (primary, secondary)


# ---- §4.16, §4.17, §3.3 formulas with worked numbers --------------------------------------------------------------
def test_activation_worked_numbers():
    now = "2024-03-01T00:00:00.000Z"
    occ = [{"t": now, "source_weight": 1.0}, {"t": "2023-12-31T00:00:00.000Z", "source_weight": 0.8}]  # 61 days
    assert activation(occ, 60, now) == pytest.approx(1.0 + 0.8 * math.exp(-math.log(2) * 61 / 60))
    assert activation([{"t": "2024-02-23T00:00:00.000Z", "source_weight": 1.0}], 7, now) == pytest.approx(0.5)
    # 2024-01-01 → 2024-03-01 is 60 days (a leap-year February): one identity half-life, one half
    assert activation([{"t": "2024-01-01T00:00:00.000Z", "source_weight": 1.0}], 60, now) == pytest.approx(0.5)


def _occ(n, days_spread, contexts, sw=1.0, ac=1.0):
    from kenning.sources.timestamps import format_utc, parse_utc
    import datetime as dt

    t0 = parse_utc("2024-01-01T00:00:00.000Z")
    return [{"t": format_utc(t0 + dt.timedelta(days=days_spread * i / max(1, n - 1))), "source_weight": sw,
             "atom_confidence": ac, "context_id": f"c{i % contexts}"} for i in range(n)]


def test_core_score_worked_numbers():
    cs = SB.core_score
    # 10 occurrences (n_weighted 10), spread 14 days (the midpoint), 5 contexts (the midpoint), one conflict
    p = core_parts(_occ(10, 14, 5), 1, cs)
    assert p["support"] == pytest.approx(1 - math.exp(-1))          # 0.632121
    assert p["spread"] == pytest.approx(0.5) and p["diversity"] == pytest.approx(0.5)
    assert p["base"] == pytest.approx(0.158030, abs=1e-6)
    assert p["conflict_penalty"] == pytest.approx(0.35 * 1 / 10)
    assert p["core_score"] == pytest.approx(0.123030, abs=1e-6)
    # 20 occurrences over 30 days in 8 contexts: support 0.864665 × spread 0.982014 × diversity 0.880797
    q = core_parts(_occ(20, 30, 8), 0, cs)
    assert q["spread"] == pytest.approx(1 / (1 + math.exp(-4)))
    assert q["diversity"] == pytest.approx(1 / (1 + math.exp(-2)))
    assert q["core_score"] == pytest.approx(0.747896, abs=1e-6)
    assert status_for(q["core_score"], cs.status_thresholds) == "core"
    # the penalty never drives the score below zero
    assert core_parts(_occ(2, 0, 1), 5, cs)["core_score"] == 0.0


@pytest.mark.parametrize("score, status", [(0.0, "surface"), (0.299, "surface"), (0.3, "developing"),
                                           (0.599, "developing"), (0.6, "core"), (1.0, "core")])
def test_status_thresholds(score, status):
    assert status_for(score, SB.core_score.status_thresholds) == status


def test_tentative_link_confidence_worked_numbers():
    c = SB.resolution.tentative_link
    assert (c.a, c.b, c.c) == (1.2, 0.9, 0.06)
    assert link_confidence(1, 0, 0, c.a, c.b, c.c) == pytest.approx(0.768525, abs=1e-6)
    assert link_confidence(2, 0, 0, c.a, c.b, c.c) == pytest.approx(0.916827, abs=1e-6)    # > 0.85: auto-accept
    assert link_confidence(1, 3, 0, c.a, c.b, c.c) == pytest.approx(sigmoid(-1.5))          # 0.182426
    assert link_confidence(1, 3, 10, c.a, c.b, c.c) == pytest.approx(0.109097, abs=1e-6)    # < 0.15: auto-reject
    assert ordered("b", "a") == ("a", "b") and ordered("a", "b") == ("a", "b")


# S28: the belief type is read with the frame words (negation, temporal, modality, degree cues) taken out
@pytest.mark.parametrize("atom, btype", [
    ("i am no longer afraid of flying", "FEELING_STATE"), ("i am already worried about the slides", "FEELING_STATE"),
    ("i have been stressed lately", "FEELING_STATE"), ("i no longer care what others think", "VALUE"),
    ("i do not like crowds", "PREFERENCE"), ("i have become much more patient with my parents", "RELATIONAL"),
    ("i am not a morning person", "TRAIT"), ("i am usually good at maths", "CAPABILITY_LIMIT"),
])
def test_belief_type_ignores_the_frame_words(atom, btype):
    assert classify_belief_type(atom) == btype


# S29: a plural relation named in the previous clause is what "them" refers to; quoted errors are code
def test_them_resolves_to_the_relation_of_the_previous_clause(analyzer):
    res = analyzer.analyze("I'm usually patient with my kids, but lately I've been snapping at them.")
    assert [a.atom.canonical_text for a in res.atoms] == ["i am patient with my kids", "i snap at my kids"]
    assert [a.atom.belief_type for a in res.atoms] == ["RELATIONAL", "RELATIONAL"]
    far = analyzer.analyze("I love my parents. They drive me crazy but I call them every day.")
    assert "i call them" in [a.atom.canonical_text for a in far.atoms]   # not across another clause ("every day": the frame's, S40)


@pytest.mark.parametrize("text", [
    "I'm getting `syntax error at or near \"FROM\"` when I try to retry failed HTTP calls.",
    "I don't get UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 on some rows.",
    "I don't want to sound rude.",
])
def test_chat_noise_is_rejected(analyzer, text):
    res = analyzer.analyze(text)
    assert res.atoms == [] and [r.reason for r in res.rejected] == ["not_self_definitional"]


# ---- issue 22: the rules reader (S40–S49) ------------------------------------------------------------------------
def frames(analyzer, text):
    """(canonical text, polarity, scope, modality, holds_now) of each atom of ``text``."""
    return [(a.atom.canonical_text, a.polarity, a.epistemics.frame.temporal_scope, a.epistemics.frame.modality,
             a.epistemics.frame.holds_now) for a in analyzer.analyze(text).atoms]


# S40: a clause or phrase fronted without a comma keeps the main clause; the fronted part is its condition/context
@pytest.mark.parametrize("text, want", [
    ("When I'm tired I snap at people.", [("i snap at people when i am tired", "affirm", "habitual", "certain", True)]),
    ("If I don't sleep I get cranky", [("i get cranky if i do not sleep", "affirm", "habitual", "certain", True)]),
    ("At work I'm confident.", [("i am confident at work", "affirm", "unknown", "certain", True)]),
    ("With strangers I'm pretty reserved", [("i am reserved with strangers", "affirm", "unknown", "certain", True)]),
    ("Most mornings I go for a run.", [("i go for a run", "affirm", "habitual", "certain", True)]),
    ("As a kid I was really shy.", [("i am shy", "affirm", "past", "certain", False)]),
    ("When people criticize me I shut down.", [("i shut down when people criticize me", "affirm", "habitual",
                                                "certain", True)]),
])
def test_fronted_clause_or_phrase_without_a_comma(analyzer, text, want):
    assert frames(analyzer, text) == want


# S41: negation by scope — each conjunct its own, and only the verb group's
@pytest.mark.parametrize("text, want", [
    ("I'm not patient and not kind.", [("i am patient", "deny"), ("i am kind", "deny")]),
    ("I'm not lazy, just tired.", [("i am lazy", "deny"), ("i am tired", "affirm")]),
    ("I'm not a morning person or a night owl.", [("i am a morning person", "deny"), ("i am a night owl", "deny")]),
    ("I'm neither tidy nor messy.", [("i am tidy", "deny"), ("i am messy", "deny")]),
    ("I'm patient with kids but not with adults.", [("i am patient with kids", "affirm"),
                                                    ("i am patient with adults", "deny")]),
    ("I don't drink, smoke or gamble.", [("i drink", "deny"), ("i smoke", "deny"), ("i gamble", "deny")]),
    ("I love tea but not coffee.", [("i love tea", "affirm"), ("i love coffee", "deny")]),
    ("I have sweet potatoes and not much else.", [("i have sweet potatoes and not much else", "affirm")]),
    ("I'm someone who never gives up.", [("i am someone who never gives up", "affirm")]),
    ("I'm grumpy if I don't sleep.", [("i am grumpy if i do not sleep", "affirm")]),
])
def test_negation_by_scope_and_on_the_right_word(analyzer, text, want):
    assert [f[:2] for f in frames(analyzer, text)] == want


def test_canonical_text_drops_only_the_verb_groups_negation():
    assert canonical_text("i have sweet potatoes and not much else") == "i have sweet potatoes and not much else"
    assert canonical_text("i am not patient") == canonical_text("i never am patient") == "i am patient"
    assert canonical_text("i do not drink coffee anymore") == "i drink coffee"
    assert canonical_text("i am no good at lying") == "i am good at lying"


# S42: frequency words that invert the belief deny it, habitually — never dropped
@pytest.mark.parametrize("text, atom", [
    ("I rarely speak up in meetings.", "i speak up in meetings"), ("I seldom finish what I start.", "i finish what i start"),
    ("I hardly ever cook.", "i cook"), ("I almost never lose my temper.", "i lose my temper"),
    ("I can barely focus after lunch.", "i can focus after lunch"), ("I rarely if ever get sick.", "i get sick"),
])
def test_frequency_words_that_invert_meaning_deny(analyzer, text, atom):
    assert frames(analyzer, text) == [(atom, "deny", "habitual", "certain", True)]


# S43, S44: someone else's opinion or words, sarcasm and code are not self-definitions
@pytest.mark.parametrize("text, reason", [
    ("My boss thinks I'm lazy.", "reported"), ("She said I'm too sensitive.", "reported"),
    ("People say I'm intimidating.", "reported"), ("I've been told I come across as cold.", "reported"),
    ("According to my therapist I'm a perfectionist.", "reported"),
    ('"I\'m never going to be good enough," my dad used to say.', "reported"),
    ("Oh sure, I'm a total genius /s", "sarcasm"), ("Yeah right, I'm so relaxed.", "sarcasm"),
    ("I'm SO thrilled to be working on a Saturday. /s", "sarcasm"),
    ("I ran `whoami` and it printed root, so I am root lol", "not_self_definitional"),
    ("Error: I am not a valid identifier", "not_self_definitional"),
])
def test_reported_speech_sarcasm_and_code_are_not_self_beliefs(analyzer, text, reason):
    res = analyzer.analyze(text)
    assert res.atoms == [] and reason in [r.reason for r in res.rejected]


def test_an_endorsed_report_is_the_users_belief(analyzer):
    assert [f[:2] for f in frames(analyzer, "Sam says I'm stubborn, and he's probably right.")] == \
        [("i am stubborn", "affirm")]


# S45 and the modality cues: hedges, neg-raising, and unknown scope when no cue matches
@pytest.mark.parametrize("text, want", [
    ("I believe I'm a good listener.", ("i am a good listener", "affirm", "unknown", "likely", True)),
    ("I don't think I'm creative.", ("i am creative", "deny", "unknown", "likely", True)),
    ("I don't feel like I belong here.", ("i belong here", "deny", "unknown", "likely", True)),
    ("I think I might be an introvert.", ("i am an introvert", "affirm", "unknown", "possible", True)),
    ("I'm not sure I'm cut out for this job.", ("i am cut out for this job", "affirm", "unknown", "unsure", True)),
    ("I'm fairly sure I'm an INFJ.", ("i am an infj", "affirm", "unknown", "likely", True)),
    ("I'm a vegetarian.", ("i am a vegetarian", "affirm", "unknown", "certain", True)),
    ("I say what I think.", ("i say what i think", "affirm", "unknown", "certain", True)),
])
def test_modality_and_unknown_scope_without_a_cue(analyzer, text, want):
    assert frames(analyzer, text) == [want]


def test_no_cue_is_unknown_and_asks_the_model():
    r = EPI.analyze("I am a morning person")
    assert r.frame.temporal_scope == "unknown" and r.needs_llm_fallback and r.signals["scope_rule"] == "no_cue"


# S46: the frame says whether the belief still holds
@pytest.mark.parametrize("text, want", [
    ("I used to be a night owl.", ("i am a night owl", "affirm", "past", "certain", False)),
    ("I never used to enjoy running.", ("i enjoy running", "deny", "past", "certain", False)),
    ("I didn't use to like olives.", ("i like olives", "deny", "past", "certain", False)),
    ("I'm no longer scared of the dark.", ("i am scared of the dark", "deny", "past", "certain", True)),
    ("I don't drink coffee anymore.", ("i drink coffee", "deny", "past", "certain", True)),
    ("I'm not as shy as I used to be.", ("i am as shy as i used to be", "deny", "unknown", "certain", True)),
])
def test_past_and_no_longer_in_the_frame(analyzer, text, want):
    assert frames(analyzer, text) == [want]


def test_holds_now_is_stored_only_when_false(analyzer):
    [a] = analyzer.analyze("I used to be a night owl.").atoms
    assert a.as_dict()["epistemic_frame"]["holds_now"] is False
    [b] = analyzer.analyze("I am a night owl.").atoms
    assert "holds_now" not in b.as_dict()["epistemic_frame"]


# S47: the statement keeps its grammar
@pytest.mark.parametrize("text, statement", [
    ("I'm more of a cat person.", "I am more of a cat person."),
    ("I never used to enjoy running.", "I do not enjoy running."),
    ("I have sweet potatoes and not much else.", "I have sweet potatoes and not much else."),
    ("I'm not much of a talker.", "I am not a talker."),
    ("I guess I'm more introverted than I thought.", "I am more introverted than I thought."),
    ("I can't stand small talk.", "I cannot stand small talk."),
])
def test_rendering_keeps_grammar(analyzer, text, statement):
    from kenning.selfbelief.render import render_statement

    [a] = analyzer.analyze(text).atoms
    assert render_statement(a.atom.canonical_text, a.polarity, SB.epistemics.cues.aversion) == statement


def test_fully_right_needs_every_field_and_nothing_extra():
    from kenning.selfbelief.annotate import evaluate

    gold = [{"id": "a", "text": "x", "atoms": [{"atom_text": "i am shy", "belief_type": "TRAIT", "polarity": "affirm",
                                               "temporal_scope": "past", "modality": "certain", "holds_now": False}]},
            {"id": "b", "text": "y", "atoms": []}]
    right = {"a": [{"atom_text": "i am shy", "belief_type": "VALUE", "polarity": "affirm", "temporal_scope": "past",
                    "modality": "certain", "holds_now": False}], "b": []}
    assert evaluate(gold, lambda it: right[it["id"]], 0.5)["all"]["fully_right"] == 1.0   # the type is not in it
    wrong = {"a": [{**right["a"][0], "holds_now": True}], "b": [right["a"][0]]}
    r = evaluate(gold, lambda it: wrong[it["id"]], 0.5)["all"]
    assert r["fully_right"] == 0.0 and r["holds_now"]["accuracy"] == 0.0


def test_reader_held_out_set_is_fully_right_at_least_95_percent(analyzer):
    """The issue-22 goal on the held-out half of benchmarks/data/self_beliefs_reader.jsonl (rules only)."""
    from pathlib import Path

    from kenning.selfbelief.annotate import evaluate, load_gold, predicted_atoms

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "self_beliefs_reader.jsonl"
    items = [it for it in load_gold(path) if it.get("split") == "heldout"]
    assert len(items) >= 60
    r = evaluate(items, lambda it: predicted_atoms(analyzer.analyze(it["text"])), SB.annotate.match_min_f1)
    assert r["all"]["fully_right"] >= 0.95
    assert r["all"]["polarity"]["accuracy"] >= 0.98 and r["all"]["temporal_scope"]["accuracy"] >= 0.95
