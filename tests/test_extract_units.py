"""Stage-4 building blocks and the seed gaps decided in docs/decisions.md (A-entries)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from kenning.config import load_config
from kenning.extract.candidates import Candidate, ObjectRef, SubjectRef, validate
from kenning.extract.conversation import ConversationProcessor
from kenning.extract.grounding import (EntityIndex, PredicateTable, Resolver, grounding_confidence, normalize_literal,
                                       object_signature, salience_factor)
from kenning.extract.registry import (RegistryError, extractor_version, load_registry, load_registry_text,
                                      load_vocabulary, normalize_label)
from kenning.extract.retractions import retraction_id
from kenning.extract.rules import MessageContext, RuleExtractor
from kenning.extract.speakers import Speaker
from kenning.extract.text import gerund, mask, sentence_bounds
from kenning.sources.ids import IdFactory
from kenning.store.connection import open_store

IDS = IdFactory()
CFG = load_config()
REG = load_registry(CFG.assertions.pattern_registry)
VOCAB = load_vocabulary(CFG.assertions.predicate_vocabulary)
USER = Speaker("self", IDS.make("entity", "PERSON", "__SELF__"), 1, 1.0, "user")
ASSISTANT = Speaker("assistant", None, None, 0.0, "assistant")


def extract(text: str, speaker: Speaker = USER, times: list[dict] | None = None) -> list[Candidate]:
    mc = MessageContext({"message_id": "m"}, text, mask(text, []), speaker, [], times or [])
    return RuleExtractor(REG, CFG.assertions).extract(mc)


def claims(text: str, **kw) -> set[tuple]:
    return {(c.subject.kind, c.predicate_label, c.obj.value if c.obj.value is not None else c.obj.text, c.modality,
             c.polarity) for c in extract(text, **kw)}


# -- the registries (A1) ---------------------------------------------------------------------------------------------

def test_registry_is_versioned_and_each_pattern_hashed():
    text = (REG_TEXT := open(__import__("kenning.extract", fromlist=["x"]).__path__[0] + "/patterns.yaml").read())
    edited = load_registry_text(text.replace("confidence: 0.85\n    handler: relation\n    predicate: is_from",
                                             "confidence: 0.8\n    handler: relation\n    predicate: is_from"))
    assert extractor_version(edited, VOCAB) != extractor_version(REG, VOCAB)
    before = {p.id: p.sha for p in REG.patterns}
    after = {p.id: p.sha for p in edited.patterns}
    assert [k for k in before if before[k] != after[k]] == ["residence.from"]   # only its own assertions change id
    assert REG.version >= 1 and len(REG_TEXT) > 1000


@pytest.mark.parametrize("bad, message", [
    ("version: 1\nmacros: {}\npatterns:\n  - {id: x, handler: relation, confidence: 0.5, regex: 'a', deny: [on]}\n",
     "YAML boolean"),
    ("version: 1\npatterns:\n  - {id: x, handler: relation, confidence: 0.5, regex: '${NOPE}'}\n", "unknown macro"),
    ("version: 1\npatterns:\n  - {id: x, handler: magic, confidence: 0.5, regex: 'a'}\n", "handler must be"),
    ("version: 1\npatterns:\n  - {id: x, handler: relation, confidence: 1.5, regex: 'a'}\n", "confidence"),
    ("version: 1\npatterns:\n  - {id: x, handler: relation, confidence: 0.5, regex: '(a'}\n", "invalid regex"),
])
def test_registry_errors_name_the_entry(bad, message):
    with pytest.raises(RegistryError, match=message):
        load_registry_text(bad, "my-patterns.yaml")


def test_vocabulary_labels_aliases_and_nfkc():
    assert normalize_label("  Lives\u3000 In ") == ("Lives In", "lives in")
    assert normalize_label("ｌｉｖｅｓ＿ｉｎ")[1] == "lives_in"          # full-width → NFKC
    assert VOCAB.lookup("moved_to").label == "lives_in"
    assert VOCAB.lookup("works_for").inverse == "employs"
    assert VOCAB.lookup("no_such_predicate") is None
    table = PredicateTable(VOCAB, IDS, {})
    known = table.get("resides_in", 2)
    new = table.get("Collects  Stamps", 1)
    assert (known.canonical_label, known.predicate_id) == ("lives_in", IDS.make("pred", "lives_in"))
    assert new.canonical_label == "Collects Stamps" and new.label_norm == "collects stamps"
    rows = {r[2]: r for r in table.take_new_rows()}
    assert rows["lives_in"][4] == "residence" and rows["collects stamps"][4] is None
    assert rows["collects stamps"][5] == 1     # arity from the candidate (unary)


# -- text helpers ----------------------------------------------------------------------------------------------------

def test_gerunds():
    d = REG.word_set("double_consonant")
    a = REG.word_set("object_adverbs")
    assert [gerund(x, d, a) for x in ("run", "make pottery", "play guitar", "go swimming", "lie", "keep my promises",
                                      "swimming")] == \
        ["running", "making pottery", "playing guitar", "swimming", "lying", "keeping my promises", "swimming"]


def test_sentences_and_masking():
    text = "I work at Acme Corp. and I love it. Dr. Smith said hi!\nNew line here"
    starts = [text[s:e].strip() for s, e in sentence_bounds(text) if text[s:e].strip()]
    assert starts == ["I work at Acme Corp. and I love it.", "Dr. Smith said hi!", "New line here"]
    code = "See:\n```\nI live in Rome\n```\nok"
    masked = mask(code, [(5, 27)])
    assert len(masked) == len(code) and "Rome" not in masked and masked.count("\n") == code.count("\n")


# -- rules --------------------------------------------------------------------------------------------------------------

def test_role_aware_subjects():
    # the user's "I" is SELF; the assistant's "I" is nobody; the assistant's "you" and "the user" are SELF
    assert ("speaker", "lives_in", "Paris", "state", "positive") in claims("I live in Paris.")
    assert claims("I live in Paris.", speaker=ASSISTANT) == set()
    assert ("self", "lives_in", "Paris", "state", "positive") in claims("You live in Paris.", speaker=ASSISTANT)
    assert ("self", "works_at", "Globex", "state", "positive") in \
        claims("User lives in Paris and works at Globex.", speaker=ASSISTANT)
    assert claims("You live in Paris.") == set()                       # the user's "you" is the assistant
    assert claims("You should move to Paris.", speaker=ASSISTANT) == set()   # advice is no claim


def test_self_pronoun_case_is_ignored():
    """A24: "i" is the first person too (chat text is often lower-case); "I" inside "i.e." is not."""
    assert ("speaker", "lives_in", "Paris", "state", "positive") in claims("i live in Paris")
    assert claims("i.e. live in Paris") == set()


def test_negation_modality_aspect():
    assert ("speaker", "lives_in", "Berlin", "state", "negative") in claims("I don't live in Berlin anymore.")
    assert ("speaker", "lives_in", "Berlin", "intention", "positive") in claims("I plan to move to Berlin.")
    assert ("speaker", "lives_in", "Berlin", "question", "positive") in claims("Should I move to Berlin?")
    c = [x for x in extract("I used to play guitar.") if x.predicate_label == "plays"][0]
    assert c.aspect == "past"
    stop = [x for x in extract("I stopped running.") if x.predicate_label == "habit"][0]
    assert (stop.polarity, stop.retraction) == ("negative", "temporal_bound")


def test_health_words_are_never_recorded():
    assert not [c for c in extract("I'm a diabetic and I'm depressed. I'm an introvert.")
                if c.predicate_label in ("is_a", "has_trait") and c.obj.value != "introvert"]


def test_qualifiers_stay_in_their_clause():
    text = "Anna moved to Porto and she's getting married in June."
    june = {"time_mention_id": "t1", "char_start": text.index("June"), "char_end": text.index("June") + 4,
            "surface_text": "June", "confidence": 0.4, "resolved_type": "unresolved"}
    got = {c.predicate_label: c.qualifier for c in extract(text, times=[june])}
    assert got["lives_in"] is None
    assert got["gets_married"].time_mention_id == "t1" and got["gets_married"].type == "at"
    text2 = "Since April 2023 I don't live in Berlin."
    april = {"time_mention_id": "t2", "char_start": 6, "char_end": 16, "surface_text": "April 2023", "confidence": 0.9}
    (c,) = [c for c in extract(text2, times=[april]) if c.predicate_label == "lives_in"]
    assert (c.qualifier.type, c.qualifier.time_mention_id) == ("since", "t2")


def test_validation_resolves_quotes_and_rejects_bad_candidates():
    text = "We moved to Lyon. We love Lyon."

    def cand(**kw):
        base = dict(message_id="m", method="llm", source_id="llm", subject=SubjectRef("text", "SELF"),
                    predicate_label="lives_in", obj=ObjectRef("entity", "Lyon"), modality="state", polarity="positive",
                    char_start=None, char_end=None, confidence=0.8)
        base.update(kw)
        return Candidate(**base)

    ok, _, w = validate(c := cand(quote="We moved to Lyon"), text)
    assert ok and (c.char_start, c.char_end) == (0, 16) and not w
    ok, _, w = validate(c := cand(quote="Lyon"), text)          # twice in the text: not guessed
    assert ok and c.char_start is None and w[0][0] == "QUOTE_OFFSET_UNRESOLVED"
    ok, _, w = validate(c := cand(char_start=0, char_end=5, quote="We love"), text)
    # a span that does not hold the quote is dropped (§4.5.3), then the quote is placed (§4.5.4)
    assert ok and (c.char_start, c.char_end) == (18, 25) and w[0][0] == "SPAN_QUOTE_MISMATCH"
    assert validate(cand(modality="rumour"), text)[1] == "MODALITY_INVALID:rumour"
    assert validate(cand(obj=ObjectRef("literal", "x", value_type="string", value=None)), text)[1] == \
        "OBJECT_LITERAL_INVALID"


# -- grounding and the seed gaps --------------------------------------------------------------------------------------

def test_literals_and_signatures():
    assert normalize_literal("number", "1,200") == 1200 and normalize_literal("boolean", "yes") is True
    assert normalize_literal("date", "2024-03") == "2024-03"
    assert normalize_literal("json", '{"b":1,"a":2}') == {"a": 2, "b": 1}
    with pytest.raises(ValueError):
        normalize_literal("date", "next summer maybe")
    assert object_signature(None, "string", "x") == object_signature(None, "string", "x")
    assert object_signature(None, "string", "1") != object_signature(None, "number", 1)
    assert object_signature(None, None, None) == "N:__NONE__" and object_signature("e1", None, None) == "E:e1"


def test_salience_factor_never_divides_by_zero():
    """A8: with no salience in the vault (max 0) the factor is 1; otherwise 1 + s/max × bonus."""
    rec = SimpleNamespace(salience_score=2.0)
    assert salience_factor(rec, 0.0, True, 0.1) == 1.0
    assert salience_factor(rec, 4.0, True, 0.1) == pytest.approx(1.05)
    assert salience_factor(rec, 4.0, False, 0.1) == 1.0


def test_grounding_confidence_formula():
    # SELF (tier 1, 1.0) with a literal: clamp((1.15 + 1.0)/2) = 1
    assert grounding_confidence(1.0, 1, False, None, None, 0.05) == 1.0
    # SELF with an NER object (tier 4, 0.8): (1.15 + 0.8)/2
    assert grounding_confidence(1.0, 1, True, 0.8, 4, 0.05) == pytest.approx(0.975)


def test_created_entities_use_the_slot_type_else_other_with_the_generic_key():
    """A16: an unresolvable name becomes OTHER (or the slot's type), key = collapsed lower-case surface."""
    index = EntityIndex([], self_id=IDS.make("entity", "PERSON", "__SELF__"))
    r = Resolver(index, IDS, fuzzy_enabled=True, fuzzy_threshold=0.85, created_confidence=0.5)
    res = r.create("  Blue   Garden ", None)
    assert res.created == ("OTHER", "blue garden", "Blue Garden", "grounding_fallback")
    assert res.entity_id == IDS.make("entity", "OTHER", "blue garden") and (res.tier, res.confidence) == (4, 0.5)
    assert r.create("the Bay Area", "LOCATION").created[:2] == ("LOCATION", "bay area")


def test_fuzzy_and_ambiguous_name_resolution():
    rows = [("e1", "LOCATION", "lisbon", "Lisbon", '["Lisbon"]', 2.0, 3, None, None, "NER:kenning-rules"),
            ("e2", "PERSON", "sam", "Sam", '["Sam"]', 1.0, 2, None, None, "NER:kenning-rules"),
            ("e3", "ORG", "sam", "Sam", '["Sam"]', 3.0, 1, None, None, "LEXICON:x")]
    index = EntityIndex(rows, self_id="self")
    r = Resolver(index, IDS, fuzzy_enabled=True, fuzzy_threshold=0.85, created_confidence=0.5)
    amb = r.lookup("sam", None)
    assert (amb.entity_id, amb.confidence, amb.step) == ("e3", 0.8, "canonical_name_ambiguous")   # tier 3 < tier 4
    assert r.lookup("Sam", "PERSON").entity_id == "e2"       # the slot type breaks the tie
    fz = r.lookup("Lisbonn", "LOCATION")
    assert fz.entity_id == "e1" and fz.step == "fuzzy" and fz.confidence == pytest.approx(0.8 * 0.975, abs=0.01)
    assert r.lookup("Lisbonn", "LOCATION", allow_fuzzy=False) is None


def test_spanless_retractions_do_not_collide():
    """A9: the seed's formula with NULL spans would give two spanless retractions of a message one id."""
    a = retraction_id(IDS, "m1", None, None, "llm", 0)
    b = retraction_id(IDS, "m1", None, None, "llm", 1)
    assert a != b and retraction_id(IDS, "m1", 3, 9, "x") == IDS.make("retraction", "m1", 3, 9)


def test_upsert_policies():
    """§4.7.2 among one run's claims with the same assertion_key (A4)."""

    def g(aid: str, key: str, conf: float):
        return SimpleNamespace(assertion_id=aid, assertion_key=key, confidence_final=conf, superseded_by=None)

    def run(policy: str, items):
        p = ConversationProcessor.__new__(ConversationProcessor)
        p.policy, p.counts = policy, Counter()
        p._compose = lambda x: None
        r = [{"target_assertion_id": "a1", "replacement_assertion_id": None}]
        kept = p._apply_policy(items, r)
        return [x.assertion_id for x in kept], r[0]["target_assertion_id"]

    items = [g("a1", "k", 0.5), g("a2", "k", 0.9), g("a3", "k2", 0.7)]
    assert run("keep_highest_confidence", items) == (["a2", "a3"], "a2")   # links follow the kept row
    assert run("keep_first", items) == (["a1", "a3"], "a1")
    assert run("keep_all", items) == (["a1", "a2", "a3"], "a1")
    close = [g("a1", "k", 0.5), g("a2", "k", 0.5005)]
    assert run("keep_highest_confidence", close)[0] == ["a1"]              # not higher by more than 0.001


def test_keep_all_drops_the_unique_index(tmp_path):
    from kenning.store.assertions import set_assertion_key_unique

    conn = open_store(tmp_path / "k.db")
    try:
        sql = lambda: conn.execute("SELECT sql FROM sqlite_master WHERE name='idx_assertions_key'").fetchone()[0]
        assert "UNIQUE" in sql()
        set_assertion_key_unique(conn, False)
        assert "UNIQUE" not in sql()
        set_assertion_key_unique(conn, True)
        assert "UNIQUE" in sql()
    finally:
        conn.close()
