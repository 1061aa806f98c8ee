"""The personal lexicon (seed 001 §2B.4–2B.6): candidate generators, aggregation, selection, LexiconMatch.

Choices where the seed is silent (docs/decisions.md E19–E22): occurrences inside code (fences and inline
code spans) are counted only for ``code_likeness_ratio``; blockquotes and citation markers are skipped;
one candidate per term key (an occurrence found by two generators counts once, for the first generator
in the fixed order); HASHTAG/HANDLE keep their sigil; context diversity = distinct (previous word, next
word) pairs / prose occurrences; matching is case-sensitive on the observed surfaces with word boundaries.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from kenning.detect.keys import collapse
from kenning.detect.scan import finditer_at
from kenning.detect.spans import Exclusions, FENCE, BLOCKQUOTE, CITATION

GENERATOR_ORDER = ("TITLE_CASE", "ALLCAPS", "CAMEL_CASE", "HASHTAG", "HANDLE", "QUOTED", "NOUN_CHUNK")
GENERATORS_VERSION = "2"   # 2: a sentence-initial verb/adjective leaves a TITLE_CASE run (T48)
# §2B.4.1 patterns; TITLE_CASE joins words with spaces/tabs only (a title-case run never spans lines, E19).
_GEN = (
    ("TITLE_CASE", re.compile(r"\b([A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)+)\b"), 1),
    ("ALLCAPS", re.compile(r"\b([A-Z]{2,6})\b"), 1),
    ("CAMEL_CASE", re.compile(r"\b([a-z]+[A-Z][a-zA-Z]*|[A-Z][a-z]+[A-Z][a-zA-Z]*)\b"), 1),
    ("HASHTAG", re.compile(r"(?<![\w#&/])#([a-zA-Z][a-zA-Z0-9_]{2,})\b"), 0),
    ("HANDLE", re.compile(r"(?<![\w@./+-])@([a-zA-Z][a-zA-Z0-9_]{2,})\b"), 0),
    ("QUOTED", re.compile(r"\"([A-Z][^\"]{3,50})\""), 1),
)
# The generators begin with \b or a lookbehind, so re would try them at every position. Each has a literal-led
# regex matching wherever one of its matches begins: the generator is tried only there (scan.finditer_at).
# CAMEL_CASE matches can begin at any small letter, so its regex (a capital right after a small letter, in every
# match) only decides whether the text is scanned at all. tests/test_prefilters.py checks all of them.
_GEN_STARTS = {
    "TITLE_CASE": re.compile(r"[A-Z][a-z]+[ \t]+[A-Z][a-z]"),
    "ALLCAPS": re.compile(r"[A-Z][A-Z]"),
    "HASHTAG": re.compile(r"#[a-zA-Z][a-zA-Z0-9_]{2}"),
    "HANDLE": re.compile(r"@[a-zA-Z][a-zA-Z0-9_]{2}"),
    "QUOTED": re.compile(r"\"[A-Z]"),
}
_CAMEL_SHAPE = re.compile(r"[A-Z](?<=[a-z][A-Z])")
_WORD_RUN = re.compile(r"\w+")


def _camel_case_matches(rx: re.Pattern, text: str) -> Iterator[re.Match]:
    r"""``rx.finditer(text)`` for the CAMEL_CASE pattern, tried only at the words holding a hump.

    A CAMEL_CASE match is bounded by ``\b`` and made of ASCII letters, so it is a whole run of word characters
    (``\w``: ``str.isalnum()`` or "_"), and every one holds a small letter followed by a capital (the hump,
    _CAMEL_SHAPE, which re jumps to by its capital). Each run is tried once, at its start, in text order: the
    matches finditer yields, without trying the pattern at every position of the text.
    """
    search, match = _CAMEL_SHAPE.search, rx.match
    pos = 0
    while True:
        h = search(text, pos)
        if h is None:
            return
        start = h.start()
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        end = _WORD_RUN.match(text, h.start()).end()
        m = match(text, start)
        if m is not None:
            yield m
        pos = end


_INLINE_CODE = re.compile(r"`[^`\n]+`")
# E19: a TITLE_CASE run loses a leading function word ("The Acme Corp" → "Acme Corp"); one word left → dropped.
_TITLE_LEADING = frozenset("The A An My Our Your His Her Their Its This That These Those In On At For And But Or So "
                           "If When While With From To Of Dear Hi Hello Hey Thanks Thank Also Then As By".split())
_WORD = re.compile(r"\w+")
# T48: what may stand before a sentence's first word: spaces, list bullets, numbering, quotes, markdown marks
_SENTENCE_LEAD = re.compile(r"(?:^|[.!?:;\n])[ \t>*_#\-\d.)(\"'`“‘]*$")
_QUOTED_MAX_WORDS = 5
# Inducer's per-text memory (as stage 2A's scan cache): texts up to this long, this many of them.
_FOUND_CACHE_TEXT_MAX = 2000
_FOUND_CACHE_SIZE = 4096


@dataclass
class Occurrence:
    message_id: str
    conversation_id: str
    role: str
    start: int
    end: int
    surface: str
    generator: str
    in_code: bool
    context: tuple[str, str]


@dataclass
class TermCandidate:
    term_key: str
    generator: str
    canonical_surface: str
    aliases: list[str]
    total_count: int
    user_weighted_count: float
    conversation_count: int
    code_likeness_ratio: float
    context_diversity: float
    generators: dict[str, int]
    evidence: list[list]
    score: float | None = None
    is_selected: bool = False
    rejection_reason: str | None = None
    entity_type_hint: str = "CUSTOM_TERM"
    candidate_id: str = ""


def _context(text: str, start: int, end: int) -> tuple[str, str]:
    before = _WORD.findall(text[max(0, start - 40):start])
    after = _WORD.search(text, end, min(len(text), end + 40))
    return (before[-1].lower() if before else "", after.group().lower() if after else "")


class Inducer:
    """Collects occurrences message by message, then aggregates them into candidates."""

    def __init__(self, *, allcaps_stoplist: Iterable[str], role_weights: dict[str, float],
                 sentence_initial_words: Iterable[str] = ()):
        self.stop = frozenset(allcaps_stoplist)
        self.initial = frozenset(w.lower() for w in sentence_initial_words)
        self.role_weights = role_weights
        self.occ: dict[str, list[Occurrence]] = defaultdict(list)
        self.by_generator: Counter = Counter()
        self._found: dict[tuple[str, Exclusions], list[tuple]] = {}

    def add_message(self, message_id: str, conversation_id: str, role: str, text: str, excl: Exclusions) -> None:
        # What the generators find depends on the text and its exclusions alone: exports repeat short texts word
        # for word (user turns above all), so their occurrences are remembered, like stage 2A's scans.
        key = (text, excl)
        found = self._found.get(key)
        if found is None:
            found = self._occurrences(text, excl)
            if len(text) <= _FOUND_CACHE_TEXT_MAX:
                if len(self._found) >= _FOUND_CACHE_SIZE:
                    del self._found[next(iter(self._found))]  # the oldest entry (dicts keep insertion order)
                self._found[key] = found
        occ, by_generator = self.occ, self.by_generator
        for term_key, s, e, surface, gen, in_code, context in found:
            occ[term_key].append(Occurrence(message_id, conversation_id, role, s, e, surface, gen, in_code, context))
            by_generator[gen] += 1

    def _occurrences(self, text: str, excl: Exclusions) -> list[tuple]:
        """(term key, start, end, surface, generator, in_code, context) of every occurrence in one text."""
        out: list[tuple] = []
        seen: set[tuple[int, int]] = set()
        fence_ranges = excl.kind_ranges(FENCE)
        inline = [(m.start(), m.end()) for m in _INLINE_CODE.finditer(text)] if "`" in text else []
        for gen, rx, group in _GEN:
            if gen in _GEN_STARTS:
                found = finditer_at(rx, text, _GEN_STARTS[gen])
            else:
                found = _camel_case_matches(rx, text)
            for m in found:
                s, e = m.span(group)
                surface = text[s:e]
                if gen == "TITLE_CASE":
                    first, _, rest = surface.partition(" ")
                    if first in _TITLE_LEADING:
                        rest = rest.lstrip(" \t")
                        if " " not in rest.strip() and "\t" not in rest.strip():
                            continue
                        s = e - len(rest)
                        surface = text[s:e]
                    elif self._initial_word(text, s, first):
                        # T48: "Is Marseille worth it?", "Quick Python question": the capital is the sentence's,
                        # not the name's; what is left is a term only if still two words or more
                        rest = rest.lstrip(" \t")
                        if " " not in rest.strip() and "\t" not in rest.strip():
                            continue
                        s = e - len(rest)
                        surface = text[s:e]
                if gen == "ALLCAPS" and surface in self.stop:
                    continue
                if gen == "QUOTED" and len(surface.split()) > _QUOTED_MAX_WORDS:
                    continue
                if (s, e) in seen:
                    continue
                seen.add((s, e))
                kind = excl.hit(s, e) if excl else None
                if kind in (BLOCKQUOTE, CITATION):
                    continue
                in_code = kind == FENCE or any(a < e and s < b for a, b in inline) or \
                    any(a < e and s < b for a, b in fence_ranges)
                out.append((collapse(surface), s, e, surface, gen, in_code, _context(text, s, e)))
        return out

    def _initial_word(self, text: str, start: int, word: str) -> bool:
        """A capitalised word that only opens a sentence: a listed verb, auxiliary, question word or adjective at the
        start of the text, a line or a sentence."""
        if word.lower() not in self.initial:
            return False
        return _SENTENCE_LEAD.search(text, max(0, start - 12), start) is not None

    def aggregate(self, evidence_max: int) -> list[TermCandidate]:
        out = []
        gen_rank = {g: i for i, g in enumerate(GENERATOR_ORDER)}
        for key in sorted(self.occ):
            occs = self.occ[key]
            prose = [o for o in occs if not o.in_code]
            code_n = len(occs) - len(prose)
            weights = [self.role_weights.get(o.role, 0.0) for o in prose]
            surf_count = Counter(o.surface for o in occs)
            surf_user: dict[str, float] = defaultdict(float)
            for o, w in zip(prose, weights):
                surf_user[o.surface] += w
            canonical = sorted(surf_count, key=lambda s: (-surf_count[s], -surf_user.get(s, 0.0), s))[0]
            gens = Counter(o.generator for o in occs)
            out.append(TermCandidate(
                term_key=key,
                generator=min(gens, key=lambda g: gen_rank[g]),
                canonical_surface=canonical,
                aliases=sorted(surf_count),
                total_count=len(occs),
                user_weighted_count=round(sum(weights), 6),
                conversation_count=len({o.conversation_id for o in prose}),
                code_likeness_ratio=round(code_n / len(occs), 6) if occs else 0.0,
                context_diversity=round(len({o.context for o in prose}) / len(prose), 6) if prose else 0.0,
                generators=dict(sorted(gens.items())),
                evidence=[[o.message_id, o.start, o.end, o.role, o.in_code] for o in occs[:evidence_max]],
            ))
        return out


def select(cands: list[TermCandidate], cfg: Any, denylist: frozenset[str]) -> None:
    """§2B.5: the five thresholds in order, the score, then the top-K cap. Sets is_selected / rejection_reason."""
    passing = []
    for c in cands:
        if c.term_key in denylist:
            c.rejection_reason = "DENYLIST"
        elif c.user_weighted_count < cfg.lexicon_min_user_mentions:
            c.rejection_reason = "BELOW_MIN_COUNT"
        elif c.conversation_count < cfg.lexicon_min_conversations:
            c.rejection_reason = "BELOW_MIN_CONV"
        elif c.code_likeness_ratio > cfg.lexicon_max_code_ratio:
            c.rejection_reason = "CODE_HEAVY"
        elif c.context_diversity < cfg.lexicon_min_diversity:
            c.rejection_reason = "LOW_DIVERSITY"
        else:
            c.score = score(c, cfg)
            passing.append(c)
    passing.sort(key=lambda c: (-c.score, c.term_key))
    for i, c in enumerate(passing):
        if i < cfg.lexicon_max_terms:
            c.is_selected = True
        else:
            c.rejection_reason = "CAP_EXCEEDED"


def score(c: TermCandidate, cfg: Any) -> float:
    return round(c.user_weighted_count * cfg.lexicon_weight_mentions
                 + c.conversation_count * cfg.lexicon_weight_conversations
                 + c.context_diversity * cfg.lexicon_weight_diversity
                 - c.code_likeness_ratio * cfg.lexicon_penalty_code, 9)


def infer_type(surface: str, org_suffixes: Iterable[str]) -> str:
    """§2B.5.4 optional type inference: "… Inc./Corp./LLC" → ORG, "@…" → PERSON, else CUSTOM_TERM."""
    if surface.startswith("@"):
        return "PERSON"
    words = surface.split()
    if len(words) > 1 and words[-1] in set(org_suffixes):
        return "ORG"
    return "CUSTOM_TERM"


# ---------------------------------------------------------------------------------------------------------
# LexiconMatch

@dataclass
class LexTerm:
    term_id: str
    term_key: str
    canonical_surface: str
    surfaces: list[str]
    entity_type_hint: str
    score: float


@dataclass
class LexHit:
    start: int
    end: int
    surface: str
    term: LexTerm = field(repr=False)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class LexiconMatcher:
    """Aho-Corasick over every canonical surface and alias (pyahocorasick), word boundaries enforced."""

    def __init__(self, terms: list[LexTerm]):
        import ahocorasick

        self.automaton = ahocorasick.Automaton()
        owners: dict[str, LexTerm] = {}
        for t in sorted(terms, key=lambda t: (-t.score, t.term_key)):
            for s in [t.canonical_surface, *t.surfaces]:
                if s and s not in owners:  # a surface shared by two terms belongs to the higher-scoring one
                    owners[s] = t
        for s, t in owners.items():
            self.automaton.add_word(s, (s, t))
        self.empty = not owners
        self._hits: dict[str, list[LexHit]] = {}
        if not self.empty:
            self.automaton.make_automaton()

    def find(self, text: str) -> list[LexHit]:
        """The hits in ``text`` (a list the caller must not change: repeated texts share it)."""
        if self.empty:
            return []
        found = self._hits.get(text)
        if found is None:
            found = self._find(text)
            if len(text) <= _FOUND_CACHE_TEXT_MAX:
                if len(self._hits) >= _FOUND_CACHE_SIZE:
                    del self._hits[next(iter(self._hits))]
                self._hits[text] = found
        return found

    def _find(self, text: str) -> list[LexHit]:
        out = []
        n = len(text)
        for end_idx, (surface, term) in self.automaton.iter(text):
            end = end_idx + 1
            start = end - len(surface)
            if start > 0 and _is_word(surface[0]) and _is_word(text[start - 1]):
                continue
            if end < n and _is_word(surface[-1]) and _is_word(text[end]):
                continue
            if text[start:end] != surface:  # offset verification (§2B.6.2)
                continue
            out.append(LexHit(start, end, surface, term))
        out.sort(key=lambda h: (h.start, -h.end))
        return out
