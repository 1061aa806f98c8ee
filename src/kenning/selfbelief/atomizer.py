"""Phase 3 — BeliefAtomizer (seed 000 §4.3): claim candidates → raw atoms.

Two atomizers with one output:

* :class:`LLMAtomizer` — the seed's: one structured call per experience (``atomizer`` prompt, JSON repair by the
  model layer), schema ``{"atoms": [{atom_text, belief_type, polarity, confidence, source_idx, quote}]}``
  (``quote`` is Kenning's: the words of the candidate that state the atom, so its span is exact; S8).
* :class:`RuleAtomizer` — deterministic, no model (issue 7): strips discourse markers, hedging frames
  ("I think I'm …"), reported frames ("Sam says I'm …") and epistemic qualifiers (those live in the frame), turns
  aspect forms into a present-tense belief ("used to be shy" → "i am shy", "have been sleeping badly" →
  "i sleep badly", "tend to overthink" → "i overthink"), splits adjective lists ("excited and nervous"),
  rewrites value frames ("honesty matters to me" → "i value honesty") and guesses the belief type.

Atom text keeps its negation ("i am not a morning person"); the canonicalizer removes it and the epistemics rules
decide the polarity (S1, S9). Candidates that state no first-person belief still yield a raw atom, so the
validator can say why it was rejected (`kenning self analyze` shows it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from kenning.selfbelief.clauses import fronted_main_start, fronted_phrase
from kenning.selfbelief.text import (collapse, expand_contractions, is_past_form, lemma_ing, lemma_past,
                                    normalize_apostrophes)
from kenning.selfbelief.types import ClaimCandidate, RawAtom

BeliefTypeLit = Literal["TRAIT", "PREFERENCE", "VALUE", "CAPABILITY_LIMIT", "FEELING_STATE", "META_BELIEF",
                        "RELATIONAL", "BELIEF_ABOUT_SELF"]


@dataclass
class AtomizerResult:
    atoms: list[RawAtom]
    errors: list[dict[str, Any]] = field(default_factory=list)


# -- the rules ------------------------------------------------------------------------------------------------
_DISCOURSE = (r"(?:honestly|also|plus|well|anyway|anyways|actually|ok|okay|oh|yeah|yes|frankly|to be honest|tbh|"
              r"in fact|basically|look|listen|however|though|so|and|but|then|besides|again|still|now|lately|"
              r"recently|maybe|perhaps|probably|apparently|obviously|clearly|definitely|certainly|admittedly|"
              r"sometimes|usually|generally|often|today|currently|nowadays|other times|at times|these days|"
              r"right now|at the moment|deep down|most days|finally|if i am honest|if i am being honest|"
              r"to be fair|if you ask me|funnily enough|weirdly|truthfully|seriously|sadly|luckily|fortunately|"
              r"unfortunately|in truth|quick update|for the record|for what it is worth|fyi|btw|by the way|"
              r"in case it matters|for context|some context|background|one more thing about me|quick note about me|"
              r"about me|journal|note)")
_LEAD_DISCOURSE = re.compile(r"^" + _DISCOURSE + r"\b[,:;.!]*\s+")
_LEAD_DATE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4})\b[\s.…:,-]*")
_LEAD_LABEL = re.compile(r"^[^:.!?]{1,48}:\s+(?=\S)")
_LEAD_SUBORD = re.compile(r"^(when|whenever|if|unless|every time|each time|after|before|because|since|although|"
                          r"though|while|as|once)\b([^,]+),\s*(?=i\b)")
_LEAD_SUBORD_WORD = re.compile(r"^(when|whenever|if|unless|every time|each time|after|before|because|since|although|"
                               r"though|while|as soon as|as(?! (?:a|an|the) )|once|until)\b")
_LEAD_AS_A = re.compile(r"^as (?:a|an|the) [^,]{1,40},\s*(?=i\b)")
_REPORTED = re.compile(r"^(?!i\b)(?:[a-z]+(?: [a-z]+)?) (?:says|said|say|thinks|think|thought|tells me|told me|"
                       r"tell me|calls me|call me|believe|believes|keep telling me|keeps telling me)(?: that)? (?=i\b)")
_MODAL_FRAME = re.compile(r"^i (?:do not |did not )?(?:think|guess|suspect|believe|feel like|feel that|feel|know|"
                          r"suppose|admit|would say|reckon|bet|am (?:pretty |fairly |quite |really |very |totally |absolutely |not )?"
                          r"(?:sure|certain|positive|convinced)|"
                          r"used to think|used to believe|used to feel|always thought|have always thought|"
                          r"have come to realize|have realized|realized|realised|wonder if|am afraid)"
                          r"(?: that| whether| if)? (?=i\b)")
_VALUE_FRAME = re.compile(r"^(?!i\b)(.{2,60}?) (?:matters|means (?:a lot|everything|the world|so much)|"
                          r"is (?:really |very |so |super |incredibly )?(?:the most |most |more |very )?important"
                          r"(?: thing)?|is (?:a |my )?(?:top )?priority) ?((?:a lot |so much |more |most )?)to me(.*)$")
_REMOVE_WORDS = re.compile(
    r"\b(?:really|very|quite|extremely|incredibly|deeply|totally|completely|absolutely|truly|super|actually|"
    r"honestly|weirdly|finally|also|even|simply|definitely|certainly|probably|maybe|perhaps|almost|basically|"
    r"usually|generally|often|sometimes|rarely|seldom|typically|normally|constantly|always|lately|recently|"
    r"currently|nowadays|(?<!sit )(?<!stand )(?<!hold )(?<!keep )still|today|tonight|formerly|previously|just|"
    r"kind of|sort of|by nature|more and more|fairly|rather|somewhat|slightly|mostly|"
    r"at the moment|right now|these days|most of the time|every time|each time|pretty|so|now|"
    r"a little bit|a little|a bit)\b(?! than)")
_A_BIT_OF = re.compile(r"\b(?:a bit of|much of|a total|a complete|an absolute|a real) (?=an? )|"
                       r"(?<=\ba )(?:total|complete|real|bit of a) |(?<=\ban )(?:absolute|utter) |"
                       r"\bway (?=too\b|more\b|less\b|[a-z]+er\b)|\ba lot (?=(?:about|for|with|to|when|if)\b)|"
                       r"(?<=\ba )(?:huge|big|massive|giant) (?=fan of\b|[a-z]{3,}er\b)")
_MORE_LESS = re.compile(r"\b(am|be|become|feel|get) (?:more|less|much more|a lot more) (?!(?:[a-z-]+ ){0,3}than\b)"
                        r"(?!of\b)")
_COMPARATIVE_AMOUNT = re.compile(r"\b(?:a lot|much|way|far|so much) (?=[a-z]+er\b)")
_TAIL_TAGS = re.compile(r"(?<!\bwhat)(?<!\bhow)(?<!\bwhere)(?<!\bwho)(?<!\bwhy)(?:,? (?:i admit|i think|i guess|i suppose|i know|i believe|honestly|actually|weirdly|"
                        r"though|too|i swear|for sure|if i am honest|lol|haha|again|either|as well|a lot|"
                        r"i am afraid|now|these days|right now|at the moment|today|lately|recently|anyway))+$")
_CAUSE_TAIL = re.compile(r"(?: because | since |, which | so that |, so | but not |, but not | though |,? though,? |,? (?:living|based|"
                         r"working|staying) (?:in|at|near|on|for|from) ).*$")
_ADJ_LIST = re.compile(r"^i (am|feel) ((?:(?:a|an) )?[a-z-]+(?:, (?:(?:a|an) )?[a-z-]+)*,? and (?:(?:a|an) )?[a-z-]+)$")

_ASPECT = [
    # "i never used to enjoy running" → "i never enjoy running" (the frame says past; S47)
    (re.compile(r"^i (never |not |no longer )?used to be "), lambda m: f"i am {m.group(1) or ''}"),
    (re.compile(r"^i (never |not )?used to (?=\w)"), lambda m: f"i {m.group(1) or ''}"),
    (re.compile(r"^i did not use to be "), "i am not "),
    (re.compile(r"^i did not use to (?=\w)"), "i do not "),
    (re.compile(r"^i (?:have|had) (never |not )?been (\w+ing)\b"), lambda m: f"i {m.group(1) or ''}{lemma_ing(m.group(2))}"),
    (re.compile(r"^i (?:have|had) (never |not )?been "), lambda m: f"i am {m.group(1) or ''}"),
    (re.compile(r"^i was (not |never )?(\w+ing)\b(?! to)"), lambda m: f"i {m.group(1) or ''}{lemma_ing(m.group(2))}"),
    (re.compile(r"^i (?:was|were) "), "i am "),
    (re.compile(r"^i (?:have|had) (never |not )?(loved|liked|hated|enjoyed|disliked|valued|believed|cared|"
                r"wanted|feared|struggled|preferred|admired|despised|trusted|doubted|felt|known|found)\b"),
     lambda m: f"i {m.group(1) or ''}{lemma_past(m.group(2)) if m.group(2) != 'known' else 'know'}"),
    (re.compile(r"^i am (?:becoming|turning into|getting to be|growing into) "), "i am "),
    (re.compile(r"^i am (?:getting|growing) (?:better|worse|more|less)? ?(?=\w)"),
     lambda m: "i am better " if "better" in m.group(0) else ("i am worse " if "worse" in m.group(0) else "i am ")),
    (re.compile(r"^i (?:have become|became|have grown|grew) (?:more |less )?"), "i am "),
    (re.compile(r"^i am (?:learning|starting|beginning|trying|continuing) to be "), "i am "),
    (re.compile(r"^i am (?:learning|starting|beginning|continuing) to (?=\w)"), "i "),
    (re.compile(r"^i (?:started|start|began|begin|continue|continued|tend|tended) to be "), "i am "),
    (re.compile(r"^i (?:started|start|began|begin|continue|continued|tend|tended) to (?=\w)"), "i "),
    (re.compile(r"^i am (?:inclined|prone|apt) to (?=\w)"), "i "),
    (re.compile(r"^i (?:remain|remained|stay|stayed) "), "i am "),
    (re.compile(r"^i (?:keep|kept) ([\w-]+ing)\b"), lambda m: f"i {lemma_ing(m.group(1))}"),
    (re.compile(r"^i (?:might|may|could|must|would) (not )?be "), lambda m: f"i am {m.group(1) or ''}"),
    (re.compile(r"^i (?:consider|considered) myself (?:to be |as )?"), "i am "),
    (re.compile(r"^i (?:do not|did not) consider myself (?:to be |as )?"), "i am not "),
    (re.compile(r"^i (?:see|think of|view) myself as "), "i am "),
    (re.compile(r"^i would (?:describe myself as|call myself) "), "i am "),
]

FEELING_ADJ = {"anxious", "happy", "happier", "sad", "tired", "exhausted", "stressed", "overwhelmed", "worried",
               "scared", "afraid", "frightened", "terrified", "excited", "nervous", "proud", "lonely", "angry", "mad",
               "frustrated", "settled", "relieved", "guilty", "ashamed", "grateful", "thankful", "hopeful",
               "depressed", "burnt", "burned", "irritable", "upset", "content", "miserable", "awful", "restless",
               "drained", "energized", "motivated", "unmotivated", "insecure", "jealous", "hurt", "heartbroken",
               "confused", "lost", "stuck", "lucky", "blessed", "glad", "fulfilled", "connected", "rested", "sleepy",
               "behind", "homesick", "joyful", "down", "low", "numb", "panicked", "uneasy", "peaceful", "relaxed",
               "annoyed", "embarrassed", "empty", "inspired", "thrilled", "nervy", "tense", "safe", "loved",
               "unhappy", "cheerful", "disappointed", "discouraged", "helpless", "hopeless", "overjoyed", "tearful"}
RELATIONS = (r"kids|kid|children|child|son|sons|daughter|daughters|partner|wife|husband|boyfriend|girlfriend|spouse|"
             r"mom|mum|mother|dad|father|parents|parent|brother|brothers|sister|sisters|siblings|sibling|family|"
             r"friend|friends|colleagues|coworkers|co-workers|boss|team|grandmother|grandfather|grandparents|"
             r"grandma|grandpa|aunt|uncle|cousin|cousins|neighbours|neighbors|students|patients|clients")
_RELATIONAL = re.compile(r"\b(?:my|our) (?:own )?(?:" + RELATIONS + r")\b|\bpeople[- ]pleaser\b|\ban? (?:good|bad|great|"
                         r"terrible|better|worse|decent|loyal|supportive|present|absent|strict|loving|caring)? ?"
                         r"(?:friend|father|mother|parent|partner|husband|wife|son|daughter|brother|sister|mom|dad)\b")
_META = re.compile(r"\bmyself\b|\bwho i am\b|\bmy (?:own )?(?:instincts|judgment|judgement|mind|thoughts|feelings|"
                   r"beliefs|intuition|gut)\b|\bsecond-guess|\bi doubt\b|\bmy own worst\b")
_VALUE = re.compile(r"^i (?:value|believe in|believe (?!i\b)|care (?:about|for|deeply|a lot|what)|care\b|"
                    r"prioriti[sz]e|stand for|respect|cherish|am passionate about|am committed to|realize|realise)\b")
_PREFERENCE = re.compile(r"^i (?:love|like|enjoy|prefer|hate|dislike|adore|detest|loathe|despise|cannot stand|"
                         r"can not stand|am (?:not )?(?:a (?:big |huge )?fan of|into|a sucker for|a (?:cat|dog) person|"
                         r"obsessed with|crazy about))\b")
_CAPABILITY = re.compile(r"\b(?:good|bad|great|terrible|awful|better|worse|decent|hopeless|useless|skilled|talented|"
                         r"excellent|competent|incompetent|brilliant|poor|strong|weak)\s+(?:at|with)\b|"
                         r"^i (?:can|cannot|could|could not|am able|am not able|am unable|struggle|am capable|"
                         r"am incapable|am (?:not )?cut out|am an? (?:good|bad|great|terrible|decent|better|worse|"
                         r"natural|expert|excellent|competent|poor) [a-z]+)\b|\bexpert\b")
_IDENTITY = re.compile(r"^i am (?:not )?(?:an? |the )?(?:[a-z]+ )?(?:runner|vegetarian|vegan|smoker|engineer|developer|"
                       r"designer|teacher|nurse|doctor|writer|artist|musician|student|adult|leader|programmer|"
                       r"scientist|lawyer|athlete|chef|gamer|christian|muslim|jew|buddhist|atheist|"
                       r"cyclist|swimmer|climber|hiker|photographer|manager|founder|researcher|dancer|singer)s?\b|"
                       r"^i (?:play|am a member of)\b")


_FEEL_START = re.compile(r"^i (?:feel|felt|sleep|slept)\b")
_IN_A_PLACE = re.compile(r"\bin an? (?:bad|good|dark|better|great|happy|tough|rough|weird) place\b")
_I_AM_ADJ = re.compile(r"^i am (?:not |never )?(?:so |really |very |quite )?([a-z-]+)")
_LEAD_ELLIPSIS = re.compile(r"^(?:\.\.\.|…)\s*")
_I_START = re.compile(r"^i\b")
_A_AN = re.compile(r"\ba (?=[aeiou])")
_AN_A = re.compile(r"\ban (?=[^aeiou\s])(?!hour|honest)")
_LIST_SPLIT = re.compile(r",? and |, ")


# Frame words (seed 000 §4.7: negation, temporal, modality and degree cues) between the subject and the predicate.
# The type is a property of the belief, not of its frame, so it is read with them out (S28): "i am no longer afraid
# of flying" is typed like "i am afraid of flying", "i have been stressed lately" like "i am stressed".
_FRAME_ADVERBS = (r"(?:not|never|no longer|already|still|more|less|even|also|just|usually|generally|typically|normally|"
                  r"often|sometimes|rarely|seldom|always|constantly|lately|recently|now|finally|currently|really|very|"
                  r"so|quite|extremely|incredibly|deeply|totally|completely|absolutely|truly|super|a bit|a little|"
                  r"slightly|somewhat|kind of|kinda|sort of|fairly|rather|pretty|too|increasingly|actually|honestly|"
                  r"genuinely|probably|maybe|definitely|much)")
_TYPE_ADVERBS = re.compile(r"^(i (?:am |do |does |did |have |had )?)(?:" + _FRAME_ADVERBS + r" )+")
_TYPE_COPULA = re.compile(r"^i (?:have been|had been|was|were|get|got|become|became|grow|grew|feel like i am|"
                          r"am getting|am becoming|am growing|have become|have grown|have gotten) (?=[a-z])")
_TYPE_DO = re.compile(r"^i (?:do|does|did) (?=[a-z])")


def type_text(atom: str) -> str:
    """The atom as the belief-type rules read it: frame adverbs out, "have been / get / became ADJ" as "am ADJ"."""
    a = _TYPE_ADVERBS.sub(r"\1", atom)
    a = _TYPE_COPULA.sub("i am ", a)
    a = _TYPE_ADVERBS.sub(r"\1", a)
    return _TYPE_DO.sub("i ", a)


def classify_belief_type(atom: str) -> str:
    """The belief type of a normalized atom ("i am patient with my kids" → RELATIONAL)."""
    a = type_text(atom)
    if _FEEL_START.match(a) or _IN_A_PLACE.search(a):
        return "FEELING_STATE"
    m = _I_AM_ADJ.match(a)
    if m and m.group(1) in FEELING_ADJ:
        return "FEELING_STATE"
    if _META.search(a):
        return "META_BELIEF"
    if _RELATIONAL.search(a):
        return "RELATIONAL"
    if _PREFERENCE.match(a):
        return "PREFERENCE"
    if _VALUE.match(a):
        return "VALUE"
    if _CAPABILITY.search(a):
        return "CAPABILITY_LIMIT"
    if _IDENTITY.match(a):
        return "BELIEF_ABOUT_SELF"
    return "TRAIT"


@dataclass(frozen=True)
class RuleLexicon:
    """The configured word lists the rule atomizer reads (cue lists are config, seed §4.7; issue 22)."""

    fronting_words: frozenset[str]
    intensifiers: re.Pattern | None        # degree cues and atomizer.intensifiers: the frame's, not the belief's
    temporal_phrases: frozenset[str]      # cue phrases of the temporal lists ("as a kid", "most mornings")
    frequency_negation: tuple[str, ...]   # longest first
    reported: re.Pattern
    reported_opener: re.Pattern
    quote_tag: re.Pattern
    endorsement: re.Pattern | None
    trailing_phrase: re.Pattern | None = None   # a temporal cue phrase at the end of the atom
    freq_in_group: re.Pattern | None = None     # a frequency word in the verb group

    @classmethod
    def from_config(cls, sb) -> "RuleLexicon":
        c = sb.epistemics.cues
        temporal = {normalize_apostrophes(w.lower()) for name in ("past", "transitional", "habitual_strong",
                                                                 "habitual_soft", "ongoing", "state")
                    for w in getattr(c, name)}
        temporal = {expand_contractions(w) for w in temporal if " " in w and "*" not in w}
        freq = tuple(sorted({normalize_apostrophes(w.lower()) for w in c.frequency_negation}, key=len, reverse=True))
        rs = sb.validator.reported_speech
        verbs = "|".join(re.escape(expand_contractions(normalize_apostrophes(v.lower())))
                         for v in sorted(rs.verbs, key=len, reverse=True))
        openers = "|".join(re.escape(expand_contractions(normalize_apostrophes(o.lower())))
                           for o in sorted(rs.openers, key=len, reverse=True))
        words = sorted({normalize_apostrophes(w.lower()) for w in [*sb.atomizer.intensifiers, *c.degree_strong,
                                                                    *c.degree_weak]}, key=len, reverse=True)
        words = [w for w in words if w not in ("so", "pretty", "rather", "a lot", "almost", "not very")]
        inten = re.compile(r"(?<=\s)(?:" + "|".join(re.escape(w) for w in words) + r")(?=\s|$)(?! than\b)") \
            if words else None
        return cls(frozenset(w.lower() for w in sb.atomizer.fronting_words), inten, frozenset(temporal), freq,
                   re.compile(r"^(?!i\b)(?:[a-z'-]+ ){0,2}[a-z'-]+ (?:" + verbs + r")(?: that)?,? (?=i\b)"),
                   re.compile(r"^(?:" + openers + r")\b(?: [a-z'-]+){0,3}?,?(?: that)? ?(?=i\b)"),
                   re.compile(r"[\"”’],? (?:[a-z'-]+ ){0,2}(?:" + verbs + r"|asks|asked|replied|yelled|wrote)\b"),
                   re.compile(r"\b(?:" + "|".join(re.escape(expand_contractions(normalize_apostrophes(e.lower())))
                                                  for e in rs.endorsements) + r")\b") if rs.endorsements else None,
                   re.compile(r" (?:" + "|".join(re.escape(p) for p in sorted(temporal, key=len, reverse=True))
                              + r")$") if temporal else None,
                   re.compile(r"^(i(?: " + _VG_WORDS + r")*) (" + "|".join(re.escape(p) for p in freq) + r") ")
                   if freq else None)


_DEFAULT_LEX: list[RuleLexicon] = []


def default_lexicon() -> RuleLexicon:
    if not _DEFAULT_LEX:
        from kenning.config import load_config

        _DEFAULT_LEX.append(RuleLexicon.from_config(load_config().self_beliefs))
    return _DEFAULT_LEX[0]


_VG_WORDS = (r"(?:am|is|are|was|were|be|been|have|has|had|do|does|did|will|would|can|could|should|must|might|may|"
             r"not|never|no longer|cannot|really|very|so|just|also|actually|even|still|always|usually|often|"
             r"sometimes|generally|typically|normally|honestly|truly|pretty|quite)")


def _drop_in_verb_group(x: str, rx: re.Pattern | None) -> tuple[str, str | None]:
    """``x`` without a frequency word standing in its verb group ("i rarely speak up" → "i speak up"), and the
    word dropped."""
    m = rx.match(x) if rx is not None else None
    if not m:
        return x, None
    return m.group(1) + " " + x[m.end():], m.group(2)


_CONJ = re.compile(r"(?:,? (and not|but not|and never|but never|and|or|nor|but)|, (not|never|just|only|but)|(,)) ")
_COPULA_HEAD = re.compile(r"^(i (?:am|feel|get|was|have been|seem|" + r"(?:do not|did not|never) (?:feel|get|seem)))"
                          r"((?: (?:not|never|no longer|" + r"really|very|so|just|also|always|usually|often|sometimes|"
                          r"generally|still|kind of|sort of|pretty|quite|a bit|a little))*) ")
_NEG_HEAD = re.compile(r"^(i (?:do not|did not|never|cannot|can not|will not|would not)) ")
_PREP = re.compile(r"^(?:with|at|in|around|about|for|to|on|toward|towards|among|near)\b")
_ENDORSE_ADVERBS = re.compile(r"\b(?:totally|absolutely|completely|definitely|probably|so|100%|kind of|honestly|"
                              r"really|actually|100 percent|dead)\b")
_HABITUAL_PROGRESSIVE = re.compile(r"^i am ((?:always|constantly|forever|continually|perpetually) )([a-z]+ing)\b")
_LAST_PREP = re.compile(r"^(.* (?:of|with|about|at|for|in|on|to)) [a-z-]+(?: [a-z-]+)?$")
_BUT_NOT = re.compile(r"^i ([a-z]+) ([a-z][a-z ]{1,30}?),? but not ([a-z][a-z ]*)$")
_NOT_VERBS = {"am", "was", "have", "had", "do", "did", "can", "will", "would", "could", "should", "must", "might",
              "may", "feel", "get", "seem", "not", "never", "no", "really", "just", "always", "usually", "also"}
_NOT_A_CONJUNCT = re.compile(r"\b(?:one|ones|me|him|them|us|it|is|are|was|were|has|have|do|does|did)$|"
                             r"\b(?:me|him|them|us|it|is|are|was|were|has|have|do|does|did|will|would|can)\b")
_RELATIVE = re.compile(r"\b(?:who|that|which|whose|where)\b")
_DET = re.compile(r"^(?:my|his|her|our|their|the|that|this|these|those|to|of|what|who|which|because|when|if)\b")


def split_conjuncts(x: str) -> list[str] | None:
    """A clause whose predicate is a short coordination → one clause per conjunct, the negation where it belongs
    (S41): "i am not patient and not kind" → [i am not patient, i am not kind]; "i am not lazy, just tired" →
    [i am not lazy, i am tired]; "i am not a morning person or a night owl" → both denied; "i am patient with
    kids but not with adults" → [i am patient with kids, i am not patient with adults]; "i do not smoke or
    drink" → both denied. None when ``x`` is not such a clause."""
    b = _BUT_NOT.match(x)
    if b and b.group(1) not in _NOT_VERBS and len(b.group(3).split()) <= 3 and not _NOT_A_CONJUNCT.search(b.group(3)):
        # "i eat meat but not pork" → [i eat meat, i do not eat pork]
        return [f"i {b.group(1)} {b.group(2)}", f"i do not {b.group(1)} {b.group(3)}"]
    m = _COPULA_HEAD.match(x)
    verb_head = None
    if m:
        head, adv = m.group(1), m.group(2)
        negated = bool(re.search(r"\b(?:not|never|no longer)\b", head + adv))
        base = re.sub(r" (?:not|never|no longer)\b", "", head + adv)
        base = re.sub(r"^i (?:do|did) (feel|get|seem)", r"i \1", base)
    else:
        verb_head = _NEG_HEAD.match(x)
        if not verb_head:
            return None
        head, adv, negated = verb_head.group(1), "", True
        base = "i"
    pred = x[m.end() if m else verb_head.end():]
    parts, conj = [], []
    pos = 0
    neither = pred.startswith("neither ")
    if neither:                      # "i am neither a morning person nor a night person": both denied
        pred, negated = pred[len("neither "):], True
        head = head + " not"
    for c in _CONJ.finditer(pred):
        parts.append(pred[pos:c.start()])
        conj.append((c.group(1) or c.group(2) or c.group(3)).strip())
        pos = c.end()
    parts.append(pred[pos:])
    if "," in conj:                  # "a, b or c": a list takes the conjunction that closes it
        closing = next((c for c in reversed(conj) if c != ","), None)
        if closing is None or closing not in ("and", "or", "nor"):
            return None
        conj = [closing if c == "," else c for c in conj]
    if len(parts) < 2 or len(parts) > 5 or any(not p.strip() for p in parts):
        return None
    if verb_head is not None and any(c not in ("or", "nor") for c in conj):
        return None   # "i do not like salt and pepper": one object, not two beliefs
    out = [f"{head}{adv} {parts[0]}"]
    first_words = parts[0].split()
    for c, p in zip(conj, parts[1:]):
        own_neg = re.match(r"^(?:not|never) ", p) is not None or c in ("and not", "but not", "and never", "but never",
                                                                     "not", "never")
        body = re.sub(r"^(?:not|never) ", "", p)
        if len(body.split()) > 4 or (_DET.match(body) and not _PREP.match(body)) or _NOT_A_CONJUNCT.search(body) \
                or _RELATIVE.search(parts[0]):
            return None   # "patient with my kids and my partner", "a runner, but not a fast one", "…, and crowds drain me"
        shared = _LAST_PREP.match(parts[0])
        if shared and not _PREP.match(body) and len(body.split()) <= 2 and len(first_words) > 2:
            body = shared.group(1) + " " + body   # "a fan of surprises or parties" → "a fan of parties"
        elif _PREP.match(body):
            lead = []
            for w in first_words:
                if _PREP.match(w):
                    break
                lead.append(w)
            if not lead or len(lead) == len(first_words):
                return None
            body = " ".join(lead) + " " + body
        if verb_head is not None:
            # "i do not like crowds or loud bars": objects share the verb; "i do not smoke or drink": verbs
            verb = first_words[0] + " " if len(first_words) > 1 and len(body.split()) >= 1 and \
                not (len(body.split()) == 1 and len(first_words) == 1) else ""
            out.append(f"{head} {verb}{body}")
        elif own_neg:
            out.append(f"{base} not {body}")
        elif c in ("just", "only", "but") and negated:
            out.append(f"{base} {body}")           # "not lazy, just tired": the contrast is affirmed
        elif c in ("or", "nor") and negated:
            out.append(f"{head}{adv} {body}")      # "not X or Y": the negation covers both
        elif c == "and" and negated:
            out.append(f"{head}{adv} {body}")
        elif c in ("not", "never"):
            out.append(f"{base} not {body}")
        else:
            out.append(f"{base} {body}")
    if verb_head is None and not all(len(p.split()) <= 6 for p in parts):
        return None
    return out


def _clean(x: str, lex: RuleLexicon, sig: dict[str, Any]) -> str:
    """One clause → its atom text: qualifiers out (they are the frame's), aspect forms to the present."""
    x = _HABITUAL_PROGRESSIVE.sub(lambda m: f"i {m.group(1)}{lemma_ing(m.group(2))}", x)   # "i am always apologizing"
    x, freq = _drop_in_verb_group(x, lex.freq_in_group)
    if freq:
        sig["frequency_negation"] = freq
    x = _A_BIT_OF.sub("", x)
    x = _MORE_LESS.sub(lambda m: m.group(1) + " ", x)
    x = _COMPARATIVE_AMOUNT.sub("", x)
    x = _REMOVE_WORDS.sub(" ", x)
    if lex.intensifiers is not None:
        x = lex.intensifiers.sub(" ", x)
    x = collapse(x).rstrip(" .!?;:,")
    x = _TAIL_TAGS.sub("", x).rstrip(" ,")
    for _ in range(3):
        before = x
        for rx, repl in _ASPECT:
            x = rx.sub(repl, x, count=1) if isinstance(repl, str) else rx.sub(repl, x, count=1)
        x = _MORE_LESS.sub(lambda m: m.group(1) + " ", collapse(x))   # "i am becoming more patient"
        if x == before:
            break
    if "fronted_frame" in sig:       # "growing up i hated vegetables" → "i hate vegetables" (the frame says past)
        w = x.split()
        if len(w) > 1 and is_past_form(w[1]) and w[1] not in ("used", "was", "were"):
            x = " ".join(["i", lemma_past(w[1]), *w[2:]])
    x = _CAUSE_TAIL.sub("", x)
    x = collapse(x).rstrip(" .!?;:,")
    m = lex.trailing_phrase.search(x) if lex.trailing_phrase is not None else None   # "… in high school"
    if m and m.start() > 4:
        x = x[:m.start()].rstrip(" ,")
    x = _A_AN.sub("an ", x)
    return _AN_A.sub("a ", x)


def normalize_clause(text: str, lex: RuleLexicon | None = None) -> tuple[list[str], dict[str, Any]]:
    """A candidate's text → the atom texts it states (lowercase, contractions expanded) and what was done.
    ``sig["clauses"]`` holds each atom's own clause (frame words kept) for the epistemics rules (S41)."""
    lex = lex or default_lexicon()
    sig: dict[str, Any] = {}
    if lex.quote_tag.search(normalize_apostrophes(text).lower()):
        sig["reported"] = "quote"          # '"I'm never going to be good enough," my dad used to say'
    x = collapse(expand_contractions(normalize_apostrophes(text).lower()))
    x = x.strip(" \"'“”‘’()[]{}*_`~>#-–—")
    cond = ""
    tail = ""
    for _ in range(8):  # leading material, in any order
        before = x
        x = _LEAD_DATE.sub("", x)
        x = _LEAD_ELLIPSIS.sub("", x)
        x = _LEAD_DISCOURSE.sub("", x)
        m = _LEAD_SUBORD_WORD.match(x)
        main = fronted_main_start(x) if m else None
        if m and main is not None:
            lead = x[:main].strip(" ,")
            if lead in lex.temporal_phrases:
                sig["fronted_frame"] = lead        # "when i was a kid i was shy": the frame's
            elif m.group(1) in ("when", "whenever", "if", "unless", "every time", "each time", "before", "after",
                                "until", "as soon as"):
                cond = lead
            sig["leading_clause"] = lead
            x = x[main:]
        x = _LEAD_AS_A.sub("", x)
        fp = fronted_phrase(x, lex.fronting_words) if not x.startswith("i ") else None
        if fp is not None and not _LEAD_SUBORD_WORD.match(x):
            phrase, at = fp
            if phrase in lex.temporal_phrases or phrase.removeprefix("back ") in lex.temporal_phrases or \
                    phrase.startswith(("as a ", "as an ", "as the ")):
                sig["fronted_frame"] = phrase      # "as a kid i was shy": the frame's, read from the evidence
            else:
                tail = f"{phrase} {tail}".strip()  # "at work i am confident" → "i am confident at work"
                sig["fronted"] = phrase
            x = x[at:]
        if not x.startswith("i ") and _LEAD_LABEL.match(x) and len(x[:x.find(":")].split()) <= 7:
            rest = x[x.find(":") + 1:].strip()
            if rest:
                x = rest
        x = x.strip(" \"'“”‘’()[]")
        if x == before:
            break
    m = lex.reported.match(x) or lex.reported_opener.match(x) or _REPORTED.match(x)
    if m:
        sig["reported"] = m.group(0).strip()
        x = x[m.end():]
    frame = ""
    for _ in range(2):
        m = _MODAL_FRAME.match(x)
        if m:
            sig.setdefault("frame", []).append(m.group(0).strip())
            frame += m.group(0)
            x = x[m.end():]
    m = _VALUE_FRAME.match(x)
    if m:
        obj, extra, rest = m.group(1).strip(), m.group(2).strip(), m.group(3)
        rest = rest.strip()
        if extra == "more" and rest.startswith("than"):
            rest = "more " + rest
        x = collapse(f"i value {obj} {rest}")
        sig["value_frame"] = True
    if not _I_START.match(x):
        x = x.rstrip(" .!?;:,")
        sig["clauses"] = [frame + x]
        return [x], sig
    body = collapse(_TAIL_TAGS.sub("", collapse(x).rstrip(" .!?;:,")).rstrip(" ,"))
    if lex.intensifiers is not None:   # before the split: "an introvert through and through" is one conjunct
        body = collapse(lex.intensifiers.sub(" ", body))
    clauses = split_conjuncts(body) if not cond and not tail else None
    if clauses:
        sig["split_list"] = len(clauses)
    clauses = clauses or [body]
    texts, own = [], []
    for cl in clauses:
        a = _clean(cl, lex, sig)
        if tail:
            a = f"{a} {tail}"
        if cond:
            a = f"{a} {cond}"
            cl = f"{cl} {cond}"
            sig["condition"] = cond
        texts.append(a)
        own.append(collapse(frame + cl))
    if len(texts) == 1 and not cond:
        m = _ADJ_LIST.match(texts[0])
        if m:
            parts = [p.strip() for p in _LIST_SPLIT.split(m.group(2)) if p.strip()]
            if 1 < len(parts) <= 5 and all(len(p.split()) <= 2 for p in parts):
                sig["split_list"] = len(parts)
                texts = [f"i {m.group(1)} {p}" for p in parts]
                own = [collapse(frame + t) for t in texts]
    sig["clauses"] = own
    return texts, sig


_OBJ_VERBS = r"(?:love|like|enjoy|hate|dislike|adore|detest|loathe|despise|prefer|cannot stand|value|fear)"
_IT_OBJECT = re.compile(r"^(i (?:do not |did not )?" + _OBJ_VERBS + r") it$")
_VERB_OBJECT = re.compile(r"^(i (?:do not |did not )?" + _OBJ_VERBS + r") ((?!it$)[a-z][a-z -]{1,40})$")


_PLURAL_RELATION = re.compile(r"\b((?:my|our) (?:own )?(?:kids|children|sons|daughters|parents|brothers|sisters|"
                              r"siblings|friends|colleagues|coworkers|co-workers|grandparents|cousins|neighbours|neighbors|"
                              r"students|patients|clients|team|family))\b")
_THEM = re.compile(r"\bthem\b")


class RuleAtomizer:
    """The deterministic atomizer (no model)."""

    origin = "rules"

    def __init__(self, base_confidence: float = 0.85, reported_confidence: float = 0.6,
                 lexicon: RuleLexicon | None = None):
        self.base, self.reported = base_confidence, reported_confidence
        self.lex = lexicon or default_lexicon()

    @classmethod
    def from_config(cls, sb) -> "RuleAtomizer":
        return cls(lexicon=RuleLexicon.from_config(sb))

    def endorsed(self, c: ClaimCandidate, candidates: list[ClaimCandidate]) -> bool:
        """The user agrees with what was reported, in the next clause: "Sam says I'm stubborn, and he's probably
        right" (S43)."""
        nxt = next((d for d in candidates if d.idx == c.idx + 1), None)
        if nxt is None or nxt.span[0] - c.span[1] > 8 or self.lex.endorsement is None:
            return False
        t = collapse(_ENDORSE_ADVERBS.sub(" ", expand_contractions(normalize_apostrophes(nxt.text).lower()))).strip(" .!,")
        return len(t.split()) <= 8 and bool(self.lex.endorsement.search(t))

    def atomize(self, candidates: list[ClaimCandidate]) -> AtomizerResult:
        atoms: list[RawAtom] = []
        last_object: tuple[int, str] | None = None   # (candidate end, object) of the last "i <verb> <object>"
        last_group: tuple[int, str] | None = None    # (candidate end, "my kids") of the last plural relation named
        for c in candidates:
            texts, sig = normalize_clause(c.text, self.lex)
            if "reported" in sig and self.endorsed(c, candidates):
                who = sig.pop("reported")
                sig = {**sig, "endorsed": who}
            conf = self.reported if "reported" in sig or "endorsed" in sig else self.base
            clauses = sig.pop("clauses", [])
            for n, t in enumerate(texts):
                if not t:
                    continue
                sig = {**sig, "clause": clauses[n]} if n < len(clauses) else sig
                m = _IT_OBJECT.match(t)
                if m and last_object is not None and c.span[0] - last_object[0] <= 12:
                    t = f"{m.group(1)} {last_object[1]}"      # "I used to hate running, but now I love it" (S8)
                    sig = {**sig, "it_resolved": last_object[1]}
                if last_group is not None and c.span[0] - last_group[0] <= 12 and _THEM.search(t) \
                        and not _PLURAL_RELATION.search(t):
                    # "I'm patient with my kids, but lately I've been snapping at them" → "i snap at my kids" (S29)
                    t = _THEM.sub(last_group[1], t, count=1)
                    sig = {**sig, "them_resolved": last_group[1]}
                m = _VERB_OBJECT.match(t)
                last_object = (c.span[1], m.group(2)) if m else None
                g = _PLURAL_RELATION.search(t)
                last_group = (c.span[1], g.group(1)) if g else None
                btype = classify_belief_type(t) if t.startswith("i ") else "TRAIT"
                atoms.append(RawAtom(t, btype, "affirm", conf, c.idx, [c.span], c.text, self.origin, dict(sig)))
        return AtomizerResult(atoms)


# -- the LLM ------------------------------------------------------------------------------------------------
class LLMAtom(BaseModel):
    atom_text: str
    belief_type: BeliefTypeLit
    polarity: Literal["affirm", "deny"]
    confidence: float = Field(ge=0, le=1)
    source_idx: int
    quote: str | None


class AtomizerOutput(BaseModel):
    """seed 000 §4.3 output schema (+ ``quote``, S8)."""

    atoms: list[LLMAtom]


class LLMAtomizer:
    """Atoms from the configured LLM (``atomizer`` prompt); failed calls fall back to the rules for that chunk."""

    origin = "llm"

    def __init__(self, llm: Any, *, model: str | None = None, max_per_call: int = 24,
                 fallback: RuleAtomizer | None = None):
        self.llm, self.model, self.max_per_call = llm, model, max_per_call
        self.fallback = fallback or RuleAtomizer()

    def atomize(self, candidates: list[ClaimCandidate], *, message_id: str | None = None,
                item_key: str = "") -> AtomizerResult:
        atoms: list[RawAtom] = []
        errors: list[dict[str, Any]] = []
        by_idx = {c.idx: c for c in candidates}
        for n in range(0, len(candidates), self.max_per_call):
            chunk = candidates[n:n + self.max_per_call]
            payload = [{"idx": c.idx, "text": c.text} for c in chunk]
            res = self.llm.structured("atomizer", {"candidates": payload}, AtomizerOutput, message_id=message_id,
                                      item_key=f"{item_key}#{n // self.max_per_call}",
                                      options={"model": self.model} if self.model else None)
            if not res.ok:
                errors.append({"chunk": n // self.max_per_call, "error_code": res.error_code, "error": res.error,
                               "fallback": "rules"})
                atoms.extend(self.fallback.atomize(chunk).atoms)
                continue
            for a in res.value.atoms:
                c = by_idx.get(a.source_idx)
                if c is None or c not in chunk:
                    errors.append({"chunk": n // self.max_per_call, "error_code": "BAD_SOURCE_IDX",
                                   "error": f"atom {a.atom_text!r} names candidate {a.source_idx}, not in the request"})
                    continue
                span = c.span
                if a.quote:
                    pos = c.text.lower().find(a.quote.strip().lower())
                    if pos >= 0:
                        span = (c.span[0] + pos, c.span[0] + pos + len(a.quote.strip()))
                evidence = c.text if span == c.span else c.text[span[0] - c.span[0]:span[1] - c.span[0]]
                atoms.append(RawAtom(collapse(a.atom_text.lower()), a.belief_type, a.polarity, float(a.confidence),
                                     c.idx, [span], evidence, self.origin,
                                     {"llm_call_ids": list(res.call_ids), "quote_found": span != c.span}))
        return AtomizerResult(atoms, errors)
