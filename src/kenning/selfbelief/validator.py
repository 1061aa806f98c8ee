"""Phase 4 — BeliefAtomValidator (seed 000 §4.4): drop what is not a first-person belief, saying why.

The seed's criteria, checked in this order:

=================  ==========================  ==================================================
reason             example                     rule
=================  ==========================  ==================================================
template_junk      "I am {name}"               placeholders: {x}, {{x}}, [NAME], <name>, ${x}, %s
question           "Am I happy?"               ends with "?" or opens with an inverted auxiliary
imperative         "Always be honest"          opens with a command verb (after always/never/please)
generic            "People are kind"           a generic subject (people, everyone, men, life …)
not_first_person   "You are kind"              does not start with "I"
too_short          "I am"                      under ``min_chars`` or no content word after "i"/auxiliaries
=================  ==========================  ==================================================

and one of Kenning's (S16): ``not_self_definitional`` — first person but not a belief about the self: a request
or plan ("I need help…", "I'm going to…"), a fact for seed 001's assertions ("I live in…", "I work at…",
"I have two kids", "I'm in Paris"), a one-off event ("I signed up…", "I went…") or a report of actions in the
perfect ("I have kept notes of everything I shipped", S27), an activity in progress
("I'm reading…"), or a remark addressed to the other person ("I'm so happy for you").

Two more of Kenning's (issue 22): ``reported`` — someone else's opinion or words about the user ("My boss thinks
I'm lazy", "People say I'm …", "I've been told I'm …", a quote with its speech tag; the atomizer marks them, S43),
and ``sarcasm`` — a statement carrying a sarcasm marker ("/s", "yeah right", …; ``validator.sarcasm_markers``,
S44), checked on the evidence and on what directly follows it in the message.
"""

from __future__ import annotations

import re

from kenning.selfbelief.canonicalizer import canonical_text
from kenning.selfbelief.text import is_past_form, normalize_apostrophes
from kenning.selfbelief.types import InvalidAtom, RawAtom, ValidationResult

_TEMPLATE = re.compile(r"\{[^{}]*\}|\[[A-Z][A-Z _-]*\]|<[A-Za-z_]+>|\$\{|%s|\{\{|lorem ipsum|\bxxx\b|\bTODO\b")
_FUNCTION = {"i", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does",
             "did", "will", "would", "can", "could", "shall", "should", "may", "might", "must", "a", "an", "the",
             "not", "never", "so", "that", "it", "this", "there", "just", "really"}
_REQUEST = re.compile(
    r"^i (?:do not |did not )?(?:need|want) (?:to|you|help|some|a |an |the |more |your|someone|advice|tips)|"
    r"^i (?:would like|would love|wish|hope|plan|intend|am planning|am going to|am gonna|will|shall|am about to|"
    r"am off|have to|has to|must|should|ought to|am trying to (?:find|get|figure|decide|work)|am looking (?:for|at|"
    r"into|forward)|was wondering|wonder|am wondering|am thinking (?:about|of)|am considering|would|could|"
    r"do not mind(?! (?:being|[a-z]+ing)\b)|mind(?! (?:being|[a-z]+ing)\b))\b")
_FACT = re.compile(
    r"^i (?:do not |did not |never |no longer )?(?:live|lived|am living|work (?:at|for|as|in|on|with|remotely|from)|worked|am working|was born|grew up|"
    r"moved|am moving|studied|study|graduated|commute|am based|am staying|am visiting|am heading)\b|"
    r"^i (?:have|had) (?:lived|worked|moved|studied|been living|been working|been based|stayed)\b|"
    r"^i (?:have|had|got|own|owned) (?:a|an|two|three|four|five|six|\d+|no|some|my|the|many|lots|plenty|one)\b|"
    r"^i am (?:in|at|on|from|near|back|here|there|home|out|away|off)\b(?! (?:a|an) (?:\w+ )?place\b)(?! love\b)|"
    r"^i am \d+|^i am (?:married|single|divorced|engaged|pregnant|retired|unemployed)\b")
_PROGRESSIVE = re.compile(r"^i am (\w+ing)\b")
_PROGRESSIVE_OK = {"feeling", "becoming", "getting", "turning", "learning", "starting", "beginning", "struggling",
                   "loving", "enjoying", "hating", "growing", "changing", "failing", "improving", "healing",
                   "recovering", "drowning", "thriving", "coping", "suffering", "burning", "losing", "trying",
                   "going through", "freaking", "panicking", "overthinking", "doubting", "grieving", "mourning",
                   "hurting", "spiraling", "spiralling", "processing", "floundering", "flourishing", "blossoming",
                   # adjectives in -ing, not activities
                   "easygoing", "easy-going", "outgoing", "caring", "loving", "boring", "interesting", "amazing",
                   "demanding", "understanding", "forgiving", "unforgiving", "exhausting", "annoying", "charming",
                   "daring", "willing", "unwilling", "giving", "trusting", "accommodating", "calculating", "engaging",
                   "hardworking", "hard-working", "fun-loving", "nurturing", "uncompromising", "unassuming",
                   "welcoming", "intimidating", "inspiring", "promising", "outstanding", "self-loathing",
                   "approaching", "entertaining", "exacting", "forthcoming", "obliging", "unrelenting"}
_ANAPHORIC = re.compile(r"^i (?:do not |did not |never )?[a-z-]+ (?:it|that|this|those|these)(?: up| out| down| off)?"
                        r"(?: with\b.*)?$")
_NEED = re.compile(r"^i (?:do not )?need\b")
_ANAPHORIC_ING = re.compile(r"^i am [a-z-]+ing (?:it|that|this|those|these)$")   # "i am overthinking this"
_ANAPHORIC_PP = re.compile(r"^i (?:am|feel|was)(?: not| never)? [a-z-]+ (?:of|about|with|for|at|on|by|to) "
                           r"(?:it|that|this|them)$")      # "i am not proud of it": of what the chat says
_CODE = re.compile(r"(?i:^\s*(?:error|warning|exception|traceback|fatal|panic|stderr|stdout)\s*:)|`|\b(?:[A-Z][a-z0-9]+){1,4}(?:Error|Exception)\b|\b\w+\(\)|\b[a-z_]+\.[a-z_]+\(|"
                   r"\b0x[0-9a-fA-F]+\b|"
                   r"\b(?:syntax|type|value|key|runtime|decode|encode|import) error\b|\bstack ?trace\b|\btraceback\b")
_YOU = re.compile(r"\b(?:you|your|yours|yourself|ya)\b")
_OPINION = re.compile(r"^i (?:agree|disagree|think|guess|suspect|bet|reckon|wonder|hope|know|am (?:not )?sure|am (?:not )?certain|am glad|"
                      r"am sorry|am happy that|am excited to|am excited about)\b(?! i\b)(?! myself\b)")


_TOKS = re.compile(r"[a-z0-9'-]+")
_HABIT_WORDS = re.compile(r"\b(always|never|every time|whenever|used to|each time|for years)\b")
# Past participles of the present / past perfect that are not "-ed" forms or simple-past irregulars (S27).
_PARTICIPLES = {"done", "written", "gone", "seen", "taken", "given", "eaten", "shown", "chosen", "driven", "spoken",
                "broken", "forgotten", "sent", "built", "read", "won", "put", "set", "shut", "cut", "run", "drunk",
                "sung", "swum", "flown", "drawn", "thrown", "ridden", "fallen", "begun", "known", "grown", "become",
                "come", "been", "gotten", "sold", "heard", "hit", "let"}
# A perfect with one of these participles reports a change or a lasting experience, which is self-definitional:
# "I have become more patient", "I've stopped caring what people think", "I have struggled with anxiety" (S27).
_PERFECT_OK = {"been", "become", "grown", "gotten", "got", "come", "started", "begun", "stopped", "quit", "given",
               "learned", "learnt", "realized", "realised", "noticed", "found", "discovered", "felt", "struggled",
               "loved", "hated", "liked", "disliked", "enjoyed", "wanted", "needed", "known", "believed", "valued",
               "cared", "feared", "changed", "always", "never", "ever", "long", "often", "rarely", "usually",
               "lost", "gained", "developed", "outgrown", "matured", "softened", "mellowed", "hardened"}
_PERFECT_HABIT = re.compile(r"\b(?:always|never|every time|whenever|used to|each time|for (?:years|months|weeks|ages|a "
                            r"long time|as long as)|since|my (?:whole|entire) life|all my life|ever since|lately|"
                            r"recently|these days|more and more)\b")


class BeliefAtomValidator:
    def __init__(self, cfg):
        self.cfg = cfg
        self.generic = sorted((g.lower() for g in cfg.generic_subjects), key=len, reverse=True)
        self.other = sorted((o.lower() for o in cfg.other_subjects), key=len, reverse=True)
        self.imperative = {v.lower() for v in cfg.imperative_verbs}
        self.question = {q.lower() for q in cfg.question_starts}
        idioms = sorted({normalize_apostrophes(i.lower()) for i in cfg.state_idioms}, key=len, reverse=True)
        self.state_idiom = re.compile(r"^i am (?:" + "|".join(re.escape(i) for i in idioms) + r")\b") if idioms else None
        marks = sorted({m.lower() for m in cfg.sarcasm_markers}, key=len, reverse=True)
        self.sarcasm = re.compile("|".join((r"(?<![\w/])" + re.escape(m) + r"(?!\w)") if m[:1].isalnum() or m[:1] == "/"
                                           else re.escape(m) for m in marks)) if marks else None

    @staticmethod
    def has_code(text: str) -> bool:
        return bool(_CODE.search(text))

    def sarcastic(self, text: str) -> bool:
        return bool(self.sarcasm and self.sarcasm.search(normalize_apostrophes(text).lower()))

    def reason(self, atom: RawAtom) -> str | None:
        """Why ``atom`` is rejected, or None."""
        original = atom.evidence or atom.atom_text      # backticks survive here (normalize_apostrophes maps them)
        raw = normalize_apostrophes(original)
        text = normalize_apostrophes(atom.atom_text).lower().strip()
        toks = _TOKS.findall(text)
        if _TEMPLATE.search(raw) or _TEMPLATE.search(atom.atom_text):
            return "template_junk"
        if raw.rstrip(" )\"'”’").endswith("?") or text.endswith("?") or (
                len(toks) > 1 and toks[0] in self.question and toks[1] in ("i", "you", "we", "he", "she", "they",
                                                                           "it", "there", "this", "that")):
            return "question"
        first = toks[0] if toks else ""
        second = toks[1] if len(toks) > 1 else ""
        if first != "i" and (first in ("please", "let's", "lets") or
                             (first in ("always", "never", "just", "do", "don't", "dont") and second in self.imperative) or
                             (first in self.imperative and first not in ("love", "trust", "believe") and
                              second not in ("is", "are", "was", "am"))):
            return "imperative"
        if atom.signals.get("code_context"):
            return "not_self_definitional"     # a clause of a sentence that holds code or an error (S44)
        if atom.signals.get("reported"):
            return "reported"
        if atom.signals.get("sarcasm") or self.sarcastic(original):
            return "sarcasm"
        if first != "i":
            for g in self.generic:
                if text == g or text.startswith(g + " "):
                    return "generic"
            if text.startswith(("some people", "most people", "many people", "all people", "every ")):
                return "generic"
            return "not_first_person"
        canon = canonical_text(text)
        content = [t for t in _TOKS.findall(canon) if t not in _FUNCTION]
        if len(canon) < self.cfg.min_chars or len(content) < self.cfg.min_content_tokens:
            return "too_short"
        if self.not_self_definitional(text, raw, bool(atom.signals.get("fronted_frame")),
                                      bool(atom.signals.get("condition"))) or _CODE.search(original):
            return "not_self_definitional"
        return None

    def not_self_definitional(self, text: str, raw: str, framed: bool = False, conditioned: bool = False) -> bool:
        """``framed``: a past frame ("back then", "as a kid") was fronted, so a simple past describes that time;
        ``conditioned``: a fronted condition makes "I need …" a recurring need ("After long calls I need an hour
        alone"), not a request."""
        fact = _FACT.match(text) and not (self.state_idiom and self.state_idiom.match(text))
        request = _REQUEST.match(text) and not (conditioned and _NEED.match(text))
        if _YOU.search(text) or request or fact or _OPINION.match(text):
            return True
        if _ANAPHORIC.match(text) or _ANAPHORIC_PP.match(text) or _ANAPHORIC_ING.match(text) or _CODE.search(raw):
            return True  # "I always mix that up": about a thing only the conversation names; code and errors
        m = _PROGRESSIVE.match(text)
        if m and m.group(1) not in _PROGRESSIVE_OK:
            return True
        toks = text.split()
        if len(toks) > 1 and is_past_form(toks[1]) and toks[1] not in ("used", "was", "were") and not framed:
            low = raw.lower()
            if not _HABIT_WORDS.search(low):
                return True  # a one-off event: "I signed up for …", "I ran my first marathon in 2021"
        if self.perfect_report(toks, raw.lower()):
            return True  # a report of what was done: "I have kept notes of everything I shipped" (S27)
        return False

    @staticmethod
    def perfect_report(toks: list[str], low: str) -> bool:
        """``i have|has|had|'ve`` + the participle of an action verb, without a habit or duration cue: an account
        of actions or events ("I've shipped the release", "I have kept notes of everything"), not a belief about
        the self. Changes and lasting experiences ("I've become …", "I have struggled with …") stay (S27)."""
        if len(toks) < 3 or toks[1] not in ("have", "has", "had", "'ve", "'d"):
            return False
        i = 2
        while i < len(toks) - 1 and toks[i] in ("just", "already", "finally", "now", "also", "actually", "recently"):
            i += 1
        part = toks[i]
        if part in _PERFECT_OK or not (part in _PARTICIPLES or is_past_form(part)):
            return False
        return not _PERFECT_HABIT.search(low)

    def validate(self, atoms: list[RawAtom]) -> ValidationResult:
        valid, invalid = [], []
        for a in atoms:
            r = self.reason(a)
            if r is None:
                valid.append(a)
            else:
                invalid.append(InvalidAtom(a, r))
        return ValidationResult(valid, invalid)
