"""Rule-based assertion extraction (seed 001 §4.4.3): the pinned registry run over the masked text of one message.

Every pattern runs in priority order over the (length-preserving) masked text; a handler turns a match into
candidates with exact spans into ``text_raw``. The words between the subject and the verb (``pre``) carry
negation ("don't", "no longer"), modality ("plan to", "want to"), aspect ("used to", "started") and the copula;
the sentence carries questions ("?") and the words before the subject carry hedges and conditions (registry
``modifiers``). After a match, the same verb phrases are tried after "and"/"but" with the subject carried over
("User lives in Paris and works at Globex"). Overlaps between patterns of one ``exclusive`` group are settled by
priority; ``fallback`` patterns yield to any overlapping candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kenning.extract.candidates import Candidate, ObjectRef, Qualifier, SubjectRef
from kenning.extract.grounding import Mention
from kenning.extract.registry import Pattern, Registry, RetractionPattern
from kenning.extract.speakers import Speaker
from kenning.extract.text import gerund, sentence_bounds, sentence_of, split_list, strip_determiners, trim_phrase, words

_APOS = str.maketrans({"’": "'"})
_NEG = re.compile(r"\b(?:not|never|no longer)\b|n't\b|\bcannot\b")
_COPULA = re.compile(r"(?:^|\s)(?:'m|'re|'s|am|are|is|was|were|be|been|being)(?=\s|$)")
_INTENT = re.compile(r"\b(?:can'?t wait to|cannot wait to|plan(?:s|ned|ning)? (?:to|on)|wan(?:t|ts|ted) to|wanna|hop(?:e|es|ed|ing) to|going to|gonna|"
                     r"intend(?:s|ed|ing)? to|(?:would|'d) (?:like|love) to|decided to|aim(?:s|ing)? to|about to|off to|"
                     r"thinking (?:about|of)|considering|should|ought)\b|(?:^|\s)'d like|(?:^|\s)'d love")
_FUTURE = re.compile(r"(?:^|\s)(?:will|'ll|shall|gonna|going to)\b")
_MODAL_2ND = re.compile(r"(?:^|\s)(?:will|'ll|would|'d|should|could|might|may|must|can|shall|gonna|going to|"
                        r"ought|need to|have to|want to|wanna|like to|love to)\b")
_BE_AUX = re.compile(r"(?:^|\s)(?:'m|'re|'s|am|are|is|be|was|were)\b")
_PAST = re.compile(r"\bused to\b")
_INCEPTIVE = re.compile(r"\b(?:start|started|starting|starts|began|begin|begun|beginning)\b")
_ANYMORE = re.compile(r"\b(?:anymore|any more|no more|these days)\b")
_QUAL_CUE = re.compile(r"\b(since|from|as of|starting|beginning|until|till|through|by|during|throughout|over|in|on|at|"
                       r"for)\s*$")
_QUAL_BREAK = re.compile(r"[;—–]|,\s*(?:and|but|so|then|which|while|because)\b|\b(?:but|because|whereas|although|"
                         r"though)\b|\band\s+(?:I|you|he|she|we|they|my|his|her|our|their)\b", re.IGNORECASE)
_CUE_TYPE = {"since": "since", "from": "since", "as of": "since", "starting": "since", "beginning": "since",
             "until": "until", "till": "until", "through": "until", "by": "until", "during": "during",
             "throughout": "during", "over": "during"}
_INVERTED = re.compile(r"(?:^|[\s(\"'])(?:should|could|can|do|does|did|am|is|are|was|were|will|would|shall|have|has|"
                       r"had|may|might|must)\s+$")
_SUBORDINATE = re.compile(r"\b(?:since|after|before|because|until|while|as|that|when|whenever)\s+$")
_CLAUSE_BREAK = re.compile(r"[,;:—–]|\s-\s|\b(?:so|but|and|because|which|though|although|or)\b")
_SUBJ_PRONOUN = {"i": "speaker", "we": "we", "you": "self2", "he": "pronoun", "she": "pronoun", "they": "they",
                 "user": "self_user", "the user": "self_user"}
_POSS_KIN = None  # compiled lazily from the registry macros


_STARTS = re.compile(r"(?<![\w'’.])(?:I\b|i(?=[ \t'’])|[Ww]e\b|[Yy]ou\b|[Hh]e\b|[Ss]he\b|[Tt]hey\b|[Tt]he[ \t]+[Uu]ser\b|[Uu]ser\b|"
                     r"(?:[Mm]y|[Oo]ur|[Yy]our)[ \t]|[A-Z])")
_HEALTH_WORDS = re.compile(r"[a-z]+")
_NEXT_WORD = re.compile(r"[ \t]+([\w'’]+)")
_BLANK = re.compile(r"[ \t]+")
_PAST_COPULA = re.compile(r"(?:^|\s)(?:was|were)(?:\s|$)")
_CLAUSE_VERB = re.compile(r"[ \t]+(?:is|are|was|were|has|have|had|look|looks|seem|seems|get|gets)\b")
_OPEN_ADJECTIVES = frozenset("amazing great awesome good wonderful emotional incredible fantastic nice fun big small new "
                             "old little huge beautiful lovely special wild crazy real tough hard best first last "
                             "whole long short cool".split())
_ADVERBS = frozenset("totally definitely truly always just really so very also still even".split())
_DET_WORDS = frozenset("a an the my our your his her their this that these those some several".split())
_FINAL_COPULA = re.compile(r"(?:^|\s)(?:be|been|being|am|is|are|was|were|'m|'re|'s)$")
_CANT_WAIT_PRE = re.compile(r"\b(?:can'?t|cannot) wait to\b")
_CANT_WAIT = re.compile(r"(?i:can['’]?t)[ \t]+wait[ \t]+to[ \t]+")
_VERB_WORD = re.compile(r"[A-Za-z]+[ \t]+")
_PREV_WORD = re.compile(r"(?<![\w'’])([A-Za-z][\w'’]*)[ \t]+$")
_FIRST_WORD = re.compile(r"[\s\"'“‘(*_>\-•]*([A-Za-z][\w'’]*)")


class ClauseMatch:
    """A match-like view of subject + pre-verb words + verb phrase (the handlers read groups from it the same way
    they read a plain ``re.Match``)."""

    __slots__ = ("text", "subj", "pre", "vp")

    def __init__(self, text: str, subj: tuple[int, int] | None, pre: tuple[int, int], vp: re.Match):
        self.text, self.subj, self.pre, self.vp = text, subj, pre, vp

    def groupdict(self) -> dict[str, str | None]:
        d = dict(self.vp.groupdict())
        d["pre"] = self.text[self.pre[0]:self.pre[1]]
        d["subj"] = self.text[self.subj[0]:self.subj[1]] if self.subj else None
        return d

    def group(self, name: str | int = 0) -> str | None:
        if name == 0:
            return self.text[self.start():self.end()]
        if name == "subj":
            return self.text[self.subj[0]:self.subj[1]] if self.subj else None
        if name == "pre":
            return self.text[self.pre[0]:self.pre[1]]
        return self.vp.group(name)

    def span(self, name: str | int = 0) -> tuple[int, int]:
        if name == 0:
            return self.start(), self.end()
        if name == "subj":
            return self.subj if self.subj else (-1, -1)
        if name == "pre":
            return self.pre
        return self.vp.span(name)

    def start(self, name: str | int = 0) -> int:
        if name == 0:
            return self.subj[0] if self.subj else self.pre[0]
        return self.span(name)[0]

    def end(self, name: str | int = 0) -> int:
        if name == 0:
            return self.vp.end()
        return self.span(name)[1]


class _Renamed:
    """A match whose groups answer to other names (one pattern with two alternatives)."""

    def __init__(self, m: re.Match, names: dict[str, str]):
        self.m, self.names = m, names

    def _n(self, name):
        return self.names.get(name, name) if isinstance(name, str) else name

    def group(self, name=0):
        return self.m.group(self._n(name))

    def span(self, name=0):
        return self.m.span(self._n(name))

    def start(self, name=0):
        return self.m.start(self._n(name))

    def end(self, name=0):
        return self.m.end(self._n(name))

    def groupdict(self):
        d = dict(self.m.groupdict())
        for new, old in self.names.items():
            d[new] = d.get(old)
        return d


def _g(m: Any, name: str) -> str | None:
    return m.groupdict().get(name)


@dataclass
class MessageContext:
    message: dict
    text: str                      # text_raw
    masked: str                    # length-preserving mask of the excluded ranges
    speaker: Speaker
    mentions: list[Mention]
    times: list[dict]
    is_transcript: bool = False
    words: set[str] = field(default_factory=set)
    name_words: frozenset[str] | None = None   # first words of known entity names (None: any capitalized word)
    _sentences: list[tuple[int, int]] | None = None

    def __post_init__(self) -> None:
        if not self.words:
            self.words = words(self.masked)

    @property
    def sentences(self) -> list[tuple[int, int]]:
        if self._sentences is None:
            self._sentences = sentence_bounds(self.masked)
        return self._sentences


@dataclass
class RetractionHit:
    pattern: RetractionPattern
    start: int
    end: int
    groups: dict[str, tuple[str, int, int]]   # name → (text, start, end)


class RuleExtractor:
    def __init__(self, registry: Registry, cfg: Any):
        self.reg = registry
        self.cfg = cfg
        self.stop = registry.word_set("stop_words") | _DEFAULT_STOP
        self.trailing = registry.word_set("trailing_words")
        self.pronouns = registry.word_set("pronoun_objects")
        self.health = registry.word_set("health_words")
        self.not_names = registry.word_set("not_names")
        self.double = registry.word_set("double_consonant")
        self.adverbs = registry.word_set("object_adverbs")
        self.kin_pred = {str(k).lower(): v for k, v in (registry.lists.get("kin_predicates") or {}).items()}
        self.numbers = {str(k).lower(): int(v) for k, v in (registry.lists.get("numbers") or {}).items()}
        self.elided_starters = registry.word_set("elided_starters")
        self.elided_adverbs = registry.word_set("elided_adverbs")
        self.activity_skip = registry.word_set("activity_skip_verbs")
        self.subject_may_follow = registry.word_set("subject_may_follow")
        self.time_units = registry.word_set("time_unit_objects")
        from kenning.extract.registry import _expand
        self.emotions = frozenset(w for w in re.findall(r"[a-z]+", _expand("${EMOTION}", registry.macros, "patterns",
                                                                             "EMOTION")) if len(w) > 3) \
            if "EMOTION" in registry.macros else frozenset()
        self.hedge_factor = cfg.hedge_factor
        self.max_gap = cfg.qualifier_max_gap_chars
        self.clause_patterns = [p for p in registry.patterns if p.is_clause]
        self._plain_human = [p for p in registry.patterns if p.regex is not None]
        self._plain_other = [p for p in self._plain_human if p.flag("speakers") != "human"]
        self._pre_word_res: dict[str, re.Pattern] = {}
        self._pchecks: dict[str, tuple] = {}
        self._carry_modality: str | None = None
        macros = registry.macros
        from kenning.extract.registry import _expand
        kin = _expand("${KIN}", macros, "patterns", "KIN")
        name = _expand("${NAME}", macros, "patterns", "NAME")
        self._poss_kin = re.compile(rf"^(?P<poss>[Mm]y|[Oo]ur|[Yy]our)[ \t]+(?P<kin>{kin})(?:[ \t]*,?[ \t]+(?P<name>{name}))?$")
        self._name_split = re.compile(r"[ \t]*,[ \t]*(?:and[ \t]+|&[ \t]+)?|[ \t]*,?[ \t]+(?:and|&)[ \t]+")

    # -- entry points ----------------------------------------------------------------------------------------------
    def extract(self, mc: MessageContext) -> list[Candidate]:
        found: list[Candidate] = []
        text = mc.masked
        clause = [p for p in self.clause_patterns if not p.triggers or (p.triggers & mc.words)]
        if clause and self.reg.subj_regex is not None:
            mention_starts = {x.start for x in mc.mentions if x.start is not None}
            covered_until = -1
            for sm in _STARTS.finditer(text):
                pos = sm.start()
                if pos < covered_until:
                    continue
                subj = self.reg.subj_regex.match(text, pos)
                if subj is None:
                    continue
                if not self._plausible_subject(subj.group("subj"), pos, mc, mention_starts):
                    continue
                got = self._clause_at(clause, mc, (subj.start("subj"), subj.end("subj")), subj.end("subj"), None)
                if got:
                    found.extend(got)
                    covered_until = subj.end("subj")
        if clause and mc.speaker.human:
            found.extend(self._elided(clause, mc))
        for p in (self._plain_human if mc.speaker.human else self._plain_other):
            if p.triggers and not (p.triggers & mc.words):
                continue
            pos = 0
            while True:
                m = p.regex.search(text, pos)
                if m is None:
                    break
                cands = self._handle(p, m, mc, None)
                if cands:
                    found.extend(cands)
                    ends = [c.char_end for c in cands if not c.extra and c.char_end is not None]
                    pos = max([m.start() + 1, *ends])
                else:
                    pos = m.start() + 1
        kept = self._resolve_overlaps(found)
        self._assign_qualifiers(kept, mc)
        return kept

    def _elided(self, patterns: list[Pattern], mc: MessageContext) -> list[Candidate]:
        """Sentences with no subject, starting with a verb ("Joined a travel club.", "Gonna continue my studies."):
        in a human speaker's text the subject is the speaker."""
        out: list[Candidate] = []
        text = mc.masked
        for s, e in mc.sentences:
            w = _FIRST_WORD.match(text, s)
            if w is None or w.end() > e:
                continue
            pos = w.start()
            word = w.group(1).lower().translate(_APOS)
            while word in self.elided_adverbs:
                nxt = _NEXT_WORD.match(text, w.end())
                if nxt is None:
                    break
                pos, word = nxt.start(1), nxt.group(1).lower().translate(_APOS)
                w = nxt
            if word not in self.elided_starters or word in self.elided_adverbs:
                continue
            ref = SubjectRef("speaker", "(elided)", pos, pos, elided=True)
            variant = text[:pos] + text[pos].lower() + text[pos + 1:] if text[pos].isupper() else text
            if word in ("can't", "cant"):
                cw = _CANT_WAIT.match(text, pos)
                if cw is None:
                    continue
                out.extend(self._clause_at(patterns, mc, None, pos, ref, text=variant,
                                           options=[(cw.end(), cw.end(), "can't wait to", False, True)]))
                continue
            if word in ("gonna", "gotta", "wanna", "been"):
                after = _BLANK.match(text, pos + len(word))
                if after is None:
                    continue
                options = [(pos + len(word), after.end(), word, word == "been", word in ("gonna", "wanna"))]
            else:
                options = [(pos, pos, "", False, False)]
            out.extend(self._clause_at(patterns, mc, None, pos, ref, options=options, text=variant))
        return out

    def _plausible_subject(self, subj: str, pos: int, mc: MessageContext, mention_starts: set) -> bool:
        low = subj.lower()
        first = low.split()[0]
        # subjects that can never ground for this speaker (the same rules as ``_subject``): skipped before any
        # pattern is tried — assistant text is full of "I" and "we"
        if first in ("i", "we", "my", "our"):
            return mc.speaker.human
        if first in ("you", "your"):
            return mc.speaker.kind == "assistant" and not mc.is_transcript
        if low == "they":
            return False
        if first in ("he", "she", "user", "the"):
            return True
        if not self._is_name(subj):
            return False
        if mc.name_words is None or pos in mention_starts:
            return True
        return first.rstrip("'’s") in mc.name_words

    def _pre_ends(self, text: str, pos: int) -> list[int]:
        """Where the pre-verb words may end, longest first (the regex engine's backtracking, made explicit)."""
        c = self.reg.contraction_regex.match(text, pos)
        if c:
            pos = c.end()
        ends = [pos]
        while True:
            t = self.reg.pre_token_regex.match(text, pos)
            if t is None:
                break
            pos = t.end()
            ends.append(pos)
        return ends[::-1]

    def _pre_options(self, text: str, pre_start: int) -> list[tuple[int, int, str, bool, bool]]:
        """(pre_end, verb_start, normalized pre text, has copula, has intention marker) for each way the pre-verb
        words may end."""
        out = []
        for pe in self._pre_ends(text, pre_start):
            b = _BLANK.match(text, pe)
            if b is not None:
                pre = " ".join(text[pre_start:pe].translate(_APOS).lower().split())
                out.append((pe, b.end(), pre, bool(pre) and _COPULA.search(" " + pre) is not None,
                            bool(pre) and _INTENT.search(pre) is not None))
        return out

    def _checks(self, p: Pattern) -> tuple:
        c = self._pchecks.get(p.id)
        if c is None:
            spec = p.spec
            any_re = None
            if spec.get("require_pre_any"):
                alts = "|".join(re.escape(w.translate(_APOS).lower()) for w in spec["require_pre_any"])
                any_re = re.compile(rf"(?:^|\s)(?:{alts})(?:\s|$)")
            c = self._pchecks[p.id] = (bool(spec.get("require_copula")), bool(spec.get("forbid_copula")), any_re,
                                       bool(spec.get("require_intent")))
        return c

    def _pre_allows(self, p: Pattern, pre: str, copula: bool, intent: bool) -> bool:
        """The cheap checks on the pre-verb words, before the verb phrase is even tried."""
        req_cop, forbid_cop, any_re, req_intent = self._checks(p)
        if req_cop and not copula:
            return False
        if forbid_cop and copula:
            return False
        if req_intent and not intent:
            return False
        if any_re is not None and not any_re.search(pre):
            return False
        return True

    def _clause_at(self, patterns: list[Pattern], mc: MessageContext, subj_span: tuple[int, int] | None,
                   pre_start: int, carried: SubjectRef | None, options: list | None = None,
                   text: str | None = None) -> list[Candidate]:
        text = text if text is not None else mc.masked
        out: list[Candidate] = []
        if options is None:
            options = self._pre_options(text, pre_start)
        checks = self._checks
        for p in patterns:
            req_cop, forbid_cop, any_re, req_intent = checks(p)
            vp_match = p.vp_regex.match
            for pe, vs, pre, cop, intent in options:
                if (req_cop and not cop) or (forbid_cop and cop) or (req_intent and not intent) or \
                        (any_re is not None and not any_re.search(pre)):
                    continue
                vm = vp_match(text, vs)
                if vm is None:
                    continue
                cands = self._handle(p, ClauseMatch(text, subj_span, (pre_start, pe), vm), mc, carried)
                if cands:
                    out.extend(cands)
                    for c in [c for c in cands if not c.extra]:
                        out.extend(self._continue(c, mc, depth=0))
                    break
        return out

    def scan_retractions(self, mc: MessageContext) -> list[RetractionHit]:
        hits: list[RetractionHit] = []
        taken: list[tuple[int, int]] = []
        for rp in self.reg.retractions:
            if rp.triggers and not (rp.triggers & mc.words):
                continue
            for m in rp.regex.finditer(mc.masked):
                if any(m.start() < e and s < m.end() for s, e in taken):
                    continue
                groups = {k: (v, m.start(k), m.end(k)) for k, v in m.groupdict().items() if v is not None}
                hits.append(RetractionHit(rp, m.start(), m.end(), groups))
                taken.append((m.start(), m.end()))
        hits.sort(key=lambda h: (h.start, h.end, h.pattern.id))
        return hits

    # -- continuation ("... and works at Globex") --------------------------------------------------------------------
    def _continue(self, c: Candidate, mc: MessageContext, depth: int) -> list[Candidate]:
        if depth >= 4 or c.char_end is None or self.reg.cont_regex is None:
            return []
        cm = self.reg.cont_regex.match(mc.masked, c.char_end)
        if cm is None:
            return []
        patterns = [p for p in self.clause_patterns if not p.triggers or (p.triggers & mc.words)]
        text = mc.masked
        for pe, vs, pre, cop, intent in self._pre_options(text, cm.end()):
            head = _VERB_WORD.match(text, vs)
            if not pre and head and head.group(0).strip().lower().endswith("ing"):
                return []   # "… your help with making content and managing my social media": not a new clause
            for p in patterns:
                if not self._pre_allows(p, pre, cop, intent):
                    continue
                vm = p.vp_regex.match(text, vs)
                if vm is None:
                    continue
                self._carry_modality = c.modality
                try:
                    cands = self._handle(p, ClauseMatch(text, None, (cm.end(), pe), vm), mc, c.subject)
                finally:
                    self._carry_modality = None
                if cands:
                    out = list(cands)
                    for nc in cands:
                        if not nc.extra:
                            out.extend(self._continue(nc, mc, depth + 1))
                    return out
        return []

    # -- handlers --------------------------------------------------------------------------------------------------
    def _handle(self, p: Pattern, m: re.Match, mc: MessageContext, carried: SubjectRef | None) -> list[Candidate]:
        h = p.handler
        if h == "relation":
            return self._relation(p, m, mc, carried)
        if h == "kin":
            return self._kin(p, m, mc)
        if h == "children":
            return self._children(p, m, mc)
        if h == "favorite":
            return self._favorite(p, m, mc)
        return []

    def _subject(self, p: Pattern, m: re.Match, mc: MessageContext) -> SubjectRef | None:
        raw = _g(m, "subj")
        if raw is None:
            return None
        s, e = m.span("subj")
        low = " ".join(raw.lower().split())
        sp = mc.speaker
        allowed = set(p.flag("subjects") or ("first", "second", "third"))
        kind = _SUBJ_PRONOUN.get(low)
        if kind == "speaker" or kind == "we":
            if not sp.human or "first" not in allowed:
                return None
            return SubjectRef("speaker", raw, s, e, plural=kind == "we")
        if kind in ("self2", "self_user"):
            if sp.kind != "assistant" or mc.is_transcript or "second" not in allowed:
                return None
            return SubjectRef("self", raw, s, e)
        if kind == "they":
            return None
        if kind == "pronoun":
            return SubjectRef("pronoun", raw, s, e) if "third" in allowed else None
        pk = self._poss_kin.match(raw)
        if pk:
            poss = pk.group("poss").lower()
            if poss in ("my", "our"):
                if not sp.human or "first" not in allowed:
                    return None
                owner = "speaker"
            else:
                if sp.kind != "assistant" or mc.is_transcript or "second" not in allowed:
                    return None
                owner = "self"
            kin = self._kin_word(pk.group("kin"))
            if pk.group("name") and self._is_name(pk.group("name")):
                ns, ne = s + pk.start("name"), s + pk.end("name")
                return SubjectRef("named", pk.group("name"), s, e, kin=kin, owner=owner, name_start=ns, name_end=ne)
            return SubjectRef("kin", raw, s, e, kin=kin, owner=owner)
        if "third" not in allowed or not self._is_name(raw):
            return None
        return SubjectRef("named", raw, s, e, name_start=s, name_end=e)

    def _is_name(self, text: str) -> bool:
        first = text.split()[0].lower().rstrip("'’s")
        return bool(first) and first not in self.not_names and text[:1].isupper()

    def _kin_word(self, raw: str) -> str:
        w = raw.lower().split()[-1]
        w = {"kids": "kid", "children": "child", "sons": "son", "daughters": "daughter", "sisters": "sister",
             "brothers": "brother", "siblings": "sibling", "parents": "parent", "friends": "friend",
             "colleagues": "colleague", "coworkers": "coworker", "co-workers": "co-worker", "cousins": "cousin",
             "neighbors": "neighbor", "neighbours": "neighbour", "dogs": "dog", "cats": "cat", "pets": "pet",
             "grandparents": "grandparent"}.get(w, w)
        return w

    def _pre(self, m: Any) -> str:
        pre = _g(m, "pre")
        return " ".join(pre.translate(_APOS).lower().split()) if pre else ""

    def _pre_has(self, pre: str, word: str) -> bool:
        rx = self._pre_word_res.get(word)
        if rx is None:
            rx = self._pre_word_res[word] = re.compile(rf"(?:^|\s){re.escape(word.translate(_APOS))}(?:\s|$)")
        return rx.search(pre) is not None

    def _relation(self, p: Pattern, m: re.Match, mc: MessageContext, carried: SubjectRef | None) -> list[Candidate]:
        subj = carried if carried is not None else self._subject(p, m, mc)
        if subj is None:
            return []
        pre = self._pre(m)
        spec = p.spec
        if spec.get("require_copula") and not _COPULA.search(" " + pre):
            return []
        if spec.get("forbid_copula") and _COPULA.search(" " + pre):
            return []
        rco = spec.get("require_copula_or")
        if rco:
            after = mc.masked[m.end("pre"):m.end("pre") + 12].lower().lstrip() if _g(m, "pre") is not None else ""
            if not _COPULA.search(" " + pre) and not any(after.startswith(v) for v in rco):
                return []
        if spec.get("require_pre_any") and not any(self._pre_has(pre, w) for w in spec["require_pre_any"]):
            return []
        if spec.get("require_intent") and not _INTENT.search(pre):
            return []
        if spec.get("forbid_intent") and _INTENT.search(pre):
            return []
        if spec.get("forbid_final_copula") and _FINAL_COPULA.search(pre):
            return []   # "I want to be known as …": the verb phrase is a predicate adjective, not an action
        if spec.get("forbid_pre_any") and any(self._pre_has(pre, w) for w in spec["forbid_pre_any"]):
            return []
        if spec.get("skip_if_pre") and any(self._pre_has(pre, w) or pre.startswith(w.translate(_APOS))
                                           for w in spec["skip_if_pre"]):
            return []
        if subj.kind == "self" and _MODAL_2ND.search(" " + pre):
            return []   # advice or prediction addressed to the user ("you should", "you'll love") is no claim
        start = subj.start if carried is None else (m.start("pre") if _g(m, "pre") is not None else m.start())
        if start is None:
            start = m.start()
        if carried is not None:
            while start < len(mc.masked) and mc.masked[start] in " \t":
                start += 1
        sentence = sentence_of(mc.sentences, start)
        prefix = mc.masked[sentence[0]:start].lower().translate(_APOS)
        conf = p.confidence
        notes: dict[str, Any] = {}
        if spec.get("no_relative") and carried is None and self._relative_clause(mc.masked, start, sentence[0]):
            return []
        if spec.get("drop_if_prefix") and re.search(spec["drop_if_prefix"], prefix):
            return []   # "when we're feeling down": a generic condition, not a report
        person = "first" if subj.kind == "speaker" else "second" if subj.kind == "self" else "third"
        for mod in self.reg.modifiers:
            if person in mod.subjects and mod.regex.search(prefix):
                if mod.effect == "drop":
                    return []
                conf *= self.hedge_factor
                notes.setdefault("modifiers", []).append(mod.id)
        # object(s)
        objs = self._objects(p, m, mc)
        if objs is None:
            return []
        polarity = p.polarity
        if _NEG.search(_CANT_WAIT_PRE.sub("", pre)):
            polarity = "negative" if polarity == "positive" else "positive"
        q = _g(m, "q")
        if q and q.lower() in {w.lower() for w in spec.get("negative_words") or []}:
            polarity = "negative" if polarity == "positive" else "positive"
        modality = p.modality
        if modality in ("state", "fact", "preference") and (_INTENT.search(pre) or (
                carried is not None and not pre and self._carry_modality == "intention")):
            modality = "intention"   # "I hope to build my own family and put a roof over kids": both hoped
        if modality in ("state", "fact") and spec.get("future_aux") == "intention" and _FUTURE.search(" " + pre):
            modality = "intention"
        if modality in ("state", "fact") and spec.get("future_progressive") == "intention":
            head = mc.masked[m.end("pre"):m.end("pre") + 24].lower().lstrip() if _g(m, "pre") is not None else ""
            verb = head.split(" ", 1)[0] if head else ""
            if _FUTURE.search(" " + pre) or (verb.endswith("ing") and _BE_AUX.search(" " + pre)):
                modality = "intention"
        if self._is_question(mc, sentence, start, objs[-1][1] if objs and objs[-1][1] is not None else m.end(),
                             prefix):
            modality = "question"
        aspect = spec.get("aspect")
        if _PAST.search(pre) or (aspect is None and _PAST_COPULA.search(pre)):
            aspect = "past"
        elif _INCEPTIVE.search(pre):
            aspect = "transition"
        qual_default = spec.get("qualifier")
        if aspect == "transition" and qual_default == "at":
            qual_default = "since"
        verb = m.groupdict().get("verb") or m.groupdict().get("verb2")
        predicate = p.predicate
        if verb and spec.get("verb_map"):
            predicate = spec["verb_map"].get(verb.lower(), predicate)
        out: list[Candidate] = []
        for o, oend in objs:
            end = oend if oend is not None else m.end()
            after = mc.masked[end:sentence[1]].lower()
            if spec.get("drop_if_after") and polarity == "negative" and re.search(spec["drop_if_after"], after):
                continue   # "I'd never felt so much love before" is not a negation
            asp = aspect
            if polarity == "negative" and _ANYMORE.search(after[:40]) and not asp:
                asp = "transition"
            c = Candidate(
                message_id=mc.message["message_id"], method="rule_based", source_id=p.id, subject=subj,
                predicate_label=predicate, obj=o, modality=modality, polarity=polarity, char_start=start,
                char_end=end, confidence=round(conf, 9), source_sha=p.sha, priority=p.priority,
                exclusive=p.exclusive, fallback=bool(spec.get("fallback")), aspect=asp, notes=dict(notes),
                retraction=spec.get("retraction"))
            if spec.get("object_type_predicate"):
                c.notes["object_type_predicate"] = spec["object_type_predicate"]
            cap = spec.get("capitalized_object_predicate")
            raw_first = ((_g(m, "obj") or "").split() or [""])[0].lower()
            if cap and o.kind == "entity_or_literal" and (o.text or "")[:1].isupper() and \
                    str(o.value or "")[:1].isupper() and raw_first not in _DET_WORDS:
                c.predicate_label = cap     # "I went to Woodhaven": a named place
            c.qualifier_default = qual_default
            c.match_key = (p.id, m.start())
            out.append(c)
        if not out:
            return []
        # "also": a second claim from another group of the same match (study X at Y → studies X)
        for extra in spec.get("also") or []:
            g = extra["group"]
            if m.groupdict().get(g):
                s, e = m.span(g)
                o = self._literal_object(mc, s, e, extra.get("object") or {}, spec)
                if o is not None:
                    out.append(Candidate(
                        message_id=mc.message["message_id"], method="rule_based", source_id=p.id + "#" + g,
                        subject=subj, predicate_label=extra["predicate"], obj=o[0], modality=modality,
                        polarity=polarity, char_start=start, char_end=e, confidence=round(conf, 9),
                        source_sha=p.sha, priority=p.priority, exclusive=extra["predicate"], aspect=aspect,
                        notes=dict(notes), extra=True))
        # "my sister Anna lives in Lisbon" also says: SELF has_sister Anna
        if carried is None and subj.kind == "named" and subj.kin:
            out.append(self._kin_side(p, subj, mc, conf, notes))
        # a pet's name ("a dog named Max")
        if spec.get("name_object") and m.groupdict().get(spec["name_object"]["group"]):
            g = spec["name_object"]["group"]
            s, e = m.span(g)
            o = ObjectRef("entity", m.group(g), s, e, type_hint=spec["name_object"].get("type"))
            out.append(Candidate(
                message_id=mc.message["message_id"], method="rule_based", source_id=p.id + "#name", subject=subj,
                predicate_label=p.predicate, obj=o, modality=modality, polarity=polarity, char_start=start,
                char_end=e, confidence=round(conf, 9), source_sha=p.sha, priority=p.priority, exclusive=p.exclusive,
                aspect=aspect, notes=dict(notes), extra=True))
        return out

    def _is_question(self, mc: MessageContext, sentence: tuple[int, int], start: int, end: int, prefix: str) -> bool:
        """A claim is asked, not stated, when its own clause ends in "?" ("Should I learn Rust?"), or when the
        sentence is an inverted question ("Do I really live in Paris, or not?"). "I love hiking, so any trails?"
        states the first clause."""
        body = mc.masked[sentence[0]:sentence[1]].rstrip(" \t\n\"'”’)")
        if not body.endswith("?"):
            return False
        if _SUBORDINATE.search(prefix):
            return False   # "How've you been since we caught up?": the question is not about this clause
        if _INVERTED.search(prefix):
            return True
        between = mc.masked[end:sentence[1]]
        return not _CLAUSE_BREAK.search(between)

    def _relative_clause(self, text: str, start: int, sentence_start: int) -> bool:
        """"the stuff I baked at the shelter": a subject right after a noun (or "that"/"which") opens a relative
        clause whose object stands before it; the words after the verb are not its object."""
        w = _PREV_WORD.search(text, max(sentence_start, start - 40), start)
        if w is None:
            return False
        word = w.group(1).lower().translate(_APOS)
        if word in ("that", "which", "whom", "what", "why", "how", "where", "who", "whatever", "wherever"):
            return True
        return word not in self.subject_may_follow and not word.isdigit()

    def _kin_side(self, p: Pattern, subj: SubjectRef, mc: MessageContext, conf: float, notes: dict) -> Candidate:
        owner = SubjectRef("speaker" if subj.owner == "speaker" else "self", "my" if subj.owner == "speaker" else "your",
                           subj.start, subj.name_start)
        pred = self.kin_pred.get(subj.kin or "", "has_relative")
        hint = "OTHER" if pred == "has_pet" else "PERSON"
        o = ObjectRef("entity", subj.text, subj.name_start, subj.name_end, type_hint=hint)
        return Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=p.id + "#kin",
                         subject=owner, predicate_label=pred, obj=o, modality="state", polarity="positive",
                         char_start=subj.start, char_end=subj.end, confidence=round(min(conf, 0.9), 9),
                         source_sha=p.sha, priority=p.priority, exclusive="kin:" + pred, notes=dict(notes), extra=True)

    def _objects(self, p: Pattern, m: re.Match, mc: MessageContext) -> list[tuple[ObjectRef, int | None]] | None:
        spec = p.spec
        ospec = spec.get("object") or {"kind": "none"}
        kind = ospec.get("kind", "none")
        if kind == "none":
            return [(ObjectRef("none"), None)]
        if _g(m, "obj") is None:
            return None
        s, e = m.span("obj")
        if kind == "entity":
            text = m.group("obj")
            low = text.lower().strip()
            if low in {w.lower() for w in ospec.get("pro_forms") or []}:
                return [(ObjectRef("entity", text, s, e, type_hint=ospec.get("type"), pro_form=True), e)]
            t = text[4:] if low.startswith("the ") else text
            if not self._is_name(t) or low in {d.lower() for d in spec.get("deny") or []}:
                return None
            # the name ends where a time mention begins ("Paris March 2023" cannot happen, but "Berlin Monday" can)
            for tm in mc.times:
                if s < tm["char_start"] < e:
                    e = tm["char_start"]
                    while e > s and mc.masked[e - 1] in " \t":
                        e -= 1
            return [(ObjectRef("entity", mc.masked[s:e], s, e, type_hint=ospec.get("type")), e)]
        objs = self._literal_object(mc, s, e, ospec, spec, gerund_it=bool(spec.get("gerund")) or bool(
            spec.get("gerund_after_to") and m.groupdict().get("to")), split=bool(spec.get("split")))
        return objs

    def _literal_object(self, mc: MessageContext, s: int, e: int, ospec: dict, spec: dict, *, gerund_it: bool = False,
                        split: bool = False) -> list[tuple[ObjectRef, int]] | None:
        cut = None
        for tm in mc.times:
            if s <= tm["char_start"] < e:
                cut = tm["char_start"]
                break
        stop = (self.stop | {w.lower() for w in spec.get("stop_extra") or []}) - \
            {w.lower() for w in spec.get("stop_except") or []}
        if spec.get("activity"):
            # the verb leads the phrase and is kept whatever it is; the words after it are trimmed as usual
            vw = _VERB_WORD.match(mc.masked, s)
            if vw is None:
                return None
            rest = trim_phrase(mc.masked, vw.end(), e, stop=stop, trailing=self.trailing, cut_at=cut)
            if rest is None:
                return None
            span = (s, rest[1])
        else:
            span = trim_phrase(mc.masked, s, e, stop=stop, trailing=self.trailing, cut_at=cut, allow_list=split)
        if span is None:
            return None
        s, e = span
        if gerund_it:
            nxt = _NEXT_WORD.match(mc.masked, e)
            if nxt and nxt.group(1).lower() in self.pronouns | {"it", "them", "that", "this", "him", "her", "up"}:
                return None   # "I always mix that up" is not the habit "mixing"
        text = mc.masked[s:e]
        items = split_list(text) if split else [text]
        if split and len(items) > 1 and _CLAUSE_VERB.match(mc.masked, e) and \
                re.search(r",\s*(?:the\s+|my\s+|their\s+|his\s+|her\s+)?[\w'’-]+(?:\s+[\w'’-]+)?$", text):
            items = items[:-1]   # "I love sci-fi movies, the effects are so cool": the last item starts a clause
        if split and len(items) > 1 and any(it.lower().startswith(("their ", "his ", "her ", "its ")) for it in items[1:]):
            return None          # "veterans and their rights": one thing, not a list
        if split and len(items) == 2 and " and " in text and "," not in text and len(items[0].split()) == 2 and \
                items[0].split()[0].lower() in ("the", "this", "that") and len(items[1].split()) == 2:
            items = [text]       # "the self-acceptance and love theme": two modifiers of one noun
        out: list[tuple[ObjectRef, int]] = []
        deny = {d.lower() for d in spec.get("deny") or []}
        deny_first = {d.lower() for d in spec.get("deny_first") or []}
        if spec.get("deny_first_from"):
            deny_first |= self.reg.word_set(spec["deny_first_from"])
        deny_head = self.reg.word_set(spec["deny_head_from"]) if spec.get("deny_head_from") else frozenset()
        activity = bool(spec.get("activity"))
        strip_words = {w.lower() for w in ospec.get("strip") or []}
        value_map = {str(k).lower(): v for k, v in (ospec.get("value_map") or {}).items()}
        if split and len(items) > 1 and any(it.split()[0].lower() in deny_first for it in items if it.split()):
            return None   # "how these poses challenge my body and mind": one clause, not a list
        if spec.get("pronoun_after"):
            nxt = _NEXT_WORD.match(mc.masked, e)
            if nxt and nxt.group(1).lower() in ("it", "them", "that", "this", "him", "her", "those", "what", "how", "if",
                                                 "whether", "why", "where", "who") and \
                    len(mc.masked[s:e].split()) <= 2:
                return None   # "planning on watching it": the thing is a pronoun
        if spec.get("deny_raw_first"):
            first = mc.masked[s:e].split()[0].lower() if mc.masked[s:e].split() else ""
            if first in {w.lower() for w in spec["deny_raw_first"]}:
                return None
        cursor = s
        for item in items:
            i = mc.masked.find(item, cursor, e + 1)
            if i < 0:
                i = s
            cursor = i + len(item)
            value = strip_determiners(item.replace('"', "").replace("“", "").replace("”", ""))
            toks = value.split()
            if spec.get("stop_gerunds") and len(toks) > 1:
                for k, t in enumerate(toks[1:], 1):
                    if t.lower().endswith("ing"):
                        toks = toks[:k]
                        break
                value = " ".join(toks)
            while toks and toks[0].lower() in strip_words:
                toks = toks[1:]
            value = " ".join(toks)
            if not value:
                continue
            low = value.lower().translate(_APOS)
            if low in deny or low in self.pronouns or toks[0].lower() in ("it", "them", "you", "him", "her"):
                continue
            if len(toks) <= 2 and toks[-1].lower() in self.time_units:
                continue
            if deny_head and toks[-1].lower().strip(".,!?'’") in deny_head:
                continue
            if any(w in self.health for w in _HEALTH_WORDS.findall(low)):
                continue
            if toks[0].lower() in deny_first or (spec.get("deny_gerund") and toks[0].lower().endswith("ing")):
                continue
            if len(toks) == 1 and toks[0].lower() in {d.lower() for d in spec.get("deny_alone") or []}:
                continue
            if (activity or split) and toks[-1].lower().strip(".,!?") in _OPEN_ADJECTIVES | {"safe", "warm", "open"}:
                continue   # "had an amazing (and emotional wedding ceremony)": the noun was cut off
            if activity:
                rest = [t.lower().strip(".,!?'’") for t in toks[1:]]
                if toks[0].lower() in self.activity_skip or toks[0].lower() in self.emotions or not rest or \
                        rest[0] in ("it", "them", "him", "her", "you", "me", "us", "that", "this", "myself", "to", "there",
                                    "how", "what", "why", "where", "whether", "if", "who",
                                    "yourself", "something", "anything", "nothing", "everything", "one", "so"):
                    continue
            if value_map:
                value = value_map.get(low, value)
            if gerund_it:
                value = gerund(value, self.double, self.adverbs)
                if value.lower() in deny:
                    continue
            j = item.find(value)         # the claim's span ends where the kept words end
            vs, ve = (i + j, i + j + len(value)) if j >= 0 and not gerund_it and not value_map else (i, i + len(item))
            o = ObjectRef(ospec.get("kind", "literal"), mc.masked[vs:ve], vs, ve, type_hint=ospec.get("type"),
                          value_type="string", value=value)
            out.append((o, ve))
        return out or None

    def _kin(self, p: Pattern, m: re.Match, mc: MessageContext) -> list[Candidate]:
        sp = mc.speaker
        gd = m.groupdict()
        if gd.get("poss"):
            poss = gd["poss"].lower()
            if poss in ("my", "our"):
                if not sp.human:
                    return []
                owner = SubjectRef("speaker", gd["poss"], m.start("poss"), m.end("poss"))
            else:
                if sp.kind != "assistant" or mc.is_transcript:
                    return []
                owner = SubjectRef("self", gd["poss"], m.start("poss"), m.end("poss"))
        else:
            owner = self._subject(p, m, mc)
            if owner is None or owner.kind not in ("speaker", "self"):
                return []
        kin = self._kin_word(gd["kin"])
        pred = self.kin_pred.get(kin)
        if not pred:
            return []
        hint = "OTHER" if pred == "has_pet" else "PERSON"
        out = []
        for name, s, e in self._names(m, "obj"):
            out.append(Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=p.id,
                                 subject=owner, predicate_label=pred, obj=ObjectRef("entity", name, s, e, type_hint=hint),
                                 modality="state", polarity="positive", char_start=m.start(),
                                 char_end=max(m.end("obj"), m.end()),
                                 confidence=p.confidence, source_sha=p.sha, priority=p.priority,
                                 exclusive="kin:" + pred))
        return out

    def _names(self, m: re.Match, group: str) -> list[tuple[str, int, int]]:
        if m.groupdict().get(group) is None:
            return []
        s0 = m.start(group)
        text = m.group(group)
        out, pos = [], 0
        for sep in list(self._name_split.finditer(text)) + [None]:
            end = sep.start() if sep else len(text)
            name = text[pos:end].strip()
            if name and self._is_name(name):
                off = text.index(name, pos)
                out.append((name, s0 + off, s0 + off + len(name)))
            if sep:
                pos = sep.end()
        return out

    def _children(self, p: Pattern, m: re.Match, mc: MessageContext) -> list[Candidate]:
        owner = self._subject(p, m, mc)
        if owner is None or owner.kind not in ("speaker", "self"):
            return []
        pre = self._pre(m)
        polarity = "negative" if _NEG.search(pre) else "positive"
        out = []
        num = m.group("num").lower()
        n = self.numbers.get(num) if not num.isdigit() else int(num)
        end = m.end("obj") if m.groupdict().get("obj") else m.end()
        if n is not None and n >= 2 and polarity == "positive":
            s, e = m.span("num")
            out.append(Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=p.id,
                                 subject=owner, predicate_label="number_of_children",
                                 obj=ObjectRef("literal", m.group("num"), s, e, value_type="number", value=n),
                                 modality="state", polarity=polarity, char_start=owner.start, char_end=m.end(),
                                 confidence=p.confidence, source_sha=p.sha, priority=p.priority,
                                 exclusive="number_of_children"))
        for name, s, e in self._names(m, "obj"):
            out.append(Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=p.id + "#name",
                                 subject=owner, predicate_label="has_child",
                                 obj=ObjectRef("entity", name, s, e, type_hint="PERSON"), modality="state",
                                 polarity=polarity, char_start=owner.start, char_end=end, confidence=p.confidence,
                                 source_sha=p.sha, priority=p.priority, exclusive="kin:has_child:" + name))
        return out

    def _favorite(self, p: Pattern, m: re.Match, mc: MessageContext) -> list[Candidate]:
        sp = mc.speaker
        gd = m.groupdict()
        if gd.get("poss") is None and gd.get("poss2") is not None:     # the second alternative of a pattern
            m = _Renamed(m, {"poss": "poss2", "obj": "obj2"})
        poss = m.group("poss").lower()
        if poss in ("my", "our", "me", "us", "thanks", "thank you") and sp.human:
            owner = SubjectRef("speaker", m.group("poss"), m.start("poss"), m.end("poss"), plural=poss in ("our", "us"))
        elif poss == "your" and sp.kind == "assistant" and not mc.is_transcript:
            owner = SubjectRef("self", m.group("poss"), m.start("poss"), m.end("poss"))
        else:
            return []
        s, e = m.span("obj")
        raw = m.group("obj")
        if raw[:1] in "\"“":
            value = raw[1:-1].strip()
        elif m.groupdict().get("kind") is None:
            value = raw.strip()
        else:
            span = trim_phrase(mc.masked, s, e, stop=self.stop, trailing=self.trailing)
            if span is None:
                return []
            s, e = span
            value = strip_determiners(mc.masked[s:e])
        if not value or value.lower() in self.pronouns:
            return []
        if m.groupdict().get("kind") is None:      # "Painting landscapes is my favorite!"
            value = re.sub(r"^(?:and|but|so|also|plus|honestly|well|oh|yeah|yes|now)\s+", "", value, flags=re.I)
            while value and value.split()[-1].lower() in _ADVERBS:
                value = value.rsplit(None, 1)[0] if " " in value else ""
            if re.search(r"\b(?:is|are|was|were|what|which)\b", value, re.I):
                return []   # "… attitude is what inspired me": not a thing valued
            deny_first = {d.lower() for d in p.spec.get("deny_first") or []}
            if not value or value.lower() in self.pronouns or value.split()[0].lower() in ("it", "this", "that") or \
                    value.split()[0].lower() in deny_first:
                return []
            o = ObjectRef("literal", value, s, e, value_type="string", value=value)
            return [Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=p.id, subject=owner,
                              predicate_label=p.predicate or "likes", obj=o, modality=p.modality,
                              polarity="positive", char_start=min(s, m.start("poss")), char_end=max(e, m.end()),
                              confidence=p.confidence,
                              source_sha=p.sha, priority=p.priority, exclusive="likes")]
        kind = " ".join(m.group("kind").lower().split())
        o = ObjectRef("literal", raw, s, e, value_type="json", value={"kind": kind, "value": value})
        sentence = sentence_of(mc.sentences, m.start())
        modality = "question" if mc.masked[sentence[0]:sentence[1]].rstrip().endswith("?") else p.modality
        return [Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=p.id, subject=owner,
                          predicate_label=p.predicate or "has_favorite", obj=o, modality=modality, polarity="positive",
                          char_start=m.start(), char_end=e, confidence=p.confidence, source_sha=p.sha,
                          priority=p.priority, exclusive="favorite:" + kind)]

    # -- qualifiers ------------------------------------------------------------------------------------------------
    def _assign_qualifiers(self, cands: list[Candidate], mc: MessageContext) -> None:
        """§4.6.5 (rules): a candidate takes the nearest time mention of its sentence within
        ``qualifier_max_gap_chars``, unless a clause break or another claim stands between them; the cue word
        before the time sets the type (since/until/during, else ``at``, or ``since`` for a change of state)."""
        if not mc.times:
            return
        starts = sorted({c.char_start for c in cands if c.char_start is not None and not c.extra})
        for c in cands:
            if not c.qualifier_default or c.char_start is None or c.qualifier is not None:
                continue
            start, end = c.char_start, c.char_end
            sentence = sentence_of(mc.sentences, start)
            best = None
            for t in mc.times:
                ts, te = t["char_start"], t["char_end"]
                if ts < sentence[0] or te > sentence[1]:
                    continue
                if ts < end and start < te:
                    gap, between, lo, hi = 0, "", ts, te
                elif ts >= end:
                    gap, between, lo, hi = ts - end, mc.masked[end:ts], end, ts
                else:
                    gap, between, lo, hi = start - te, mc.masked[te:start], te, start
                if gap > self.max_gap or _QUAL_BREAK.search(between):
                    continue
                if any(lo < s2 < hi for s2 in starts if s2 != start):
                    continue   # another claim stands between: the time is its own
                key = (gap, -(t["confidence"] or 0), ts, t["time_mention_id"])
                if best is None or key < best[0]:
                    best = (key, t)
            if best is None:
                continue
            t = best[1]
            before = mc.masked[max(sentence[0], t["char_start"] - 16):t["char_start"]].lower()
            surface_low = (t["surface_text"] or "").lower()
            cue = _QUAL_CUE.search(before)
            word = cue.group(1) if cue else (surface_low.split(" ", 1)[0] if " " in surface_low else "")
            qtype = _CUE_TYPE.get(word, "at")
            if qtype == "at" and c.qualifier_default == "since":
                qtype = "since"
            c.qualifier = Qualifier(qtype, t["time_mention_id"], t["surface_text"], None, t["char_start"],
                                    t["char_end"])

    # -- overlaps ----------------------------------------------------------------------------------------------------
    def _resolve_overlaps(self, cands: list[Candidate]) -> list[Candidate]:
        cands = sorted(cands, key=lambda c: (c.fallback, c.priority, c.char_start or 0, -(c.char_end or 0), c.source_id))
        kept: list[Candidate] = []
        seen: set[tuple] = set()
        for c in cands:
            subj_text = c.subject.text.lower() if c.subject.kind in ("named", "pronoun", "kin") else ""
            sig = (c.subject.kind, subj_text, c.predicate_label, str(c.obj.value).lower(), (c.obj.text or "").lower(),
                   c.modality, c.polarity)
            if c.extra and sig in seen:
                continue
            clash = False
            for k in kept:
                if k.char_start is None or c.char_start is None:
                    continue
                if not (c.char_start < k.char_end and k.char_start < c.char_end):
                    continue
                if c.match_key is not None and c.match_key == k.match_key:
                    continue
                if c.fallback and not k.extra:
                    clash = True
                    break
                if not c.extra and not k.extra and k.exclusive == c.exclusive:
                    clash = True
                    break
            if clash:
                continue
            if sig in seen and any(_same_claim(k, c) and k.char_start is not None and c.char_start is not None
                                   and c.char_start < k.char_end and k.char_start < c.char_end for k in kept):
                continue   # the same claim from two overlapping patterns: keep the first
            seen.add(sig)
            kept.append(c)
        return kept


def _same_claim(a: Candidate, b: Candidate) -> bool:
    def key(c: Candidate) -> tuple:
        st = c.subject.text.lower() if c.subject.kind in ("named", "pronoun", "kin") else ""
        return (c.subject.kind, st, c.predicate_label, (c.obj.text or "").lower(), str(c.obj.value).lower(),
                c.modality, c.polarity)
    return key(a) == key(b)


_DEFAULT_STOP = frozenset("""and but or nor because cause so which who whom whose when while since until till if though
although where whereas then after before for with without at in on from by to as than that like about during into
onto over under around through via per every each unless whether yet is are was were am be been it its i i'm i've
you he she we they them him us me this these those there here now too also again yesterday today tomorrow tonight
lately recently anymore honestly actually really very soon already still just even either anyway last next ago lol
haha because- - — – ... but, which, so, and, can will would could should might must have has had do does did what how
why where who whose whom whatever""".split())
