"""Named-entity recognition behind one small protocol (seed 001 §2A.5.4, docs/decisions.md E6–E8, E12).

A backend has a ``name``, a ``version``, a ``config()`` snapshot and ``detect(text) -> list[NerSpan]``
with code-point offsets into ``text``. Stage 2A chunks long texts (``ner_max_chars``/``ner_stride``),
shifts offsets back, verifies every span against ``text_raw``, maps labels (GPE/LOC/FAC → LOCATION…),
filters them by ``ner_label_allowlist`` and logs the run's raw I/O in ``ner_model_runs`` /
``ner_model_run_io``.

Backends:
- :class:`RulesNerBackend` — deterministic and dependency-free: capitalized spans, person titles,
  relationship and verb cues, organisation suffixes, a pinned location gazetteer, quoted terms; with the
  noise rules the seed asks for (sentence-initial capitals, stop words, months and weekdays).
- :class:`SpacyNerBackend` — any spaCy ``Language`` (a user's installed model, or a blank pipeline with
  an EntityRuler). spaCy offsets are Python string indices, i.e. code points, as Kenning needs.
- :class:`ReplayNerBackend` — answers from a stored run's raw outputs (no model needed).
- :class:`kenning.detect.llm_ner.LlmNerBackend` — names from the configured model through the model layer
  (``--llm live|replay``, E27–E29): batched requests logged in ``llm_extraction_calls``, offsets found by
  Kenning in the exact text. Stage 2A builds it (it needs the stage's LLM run), beside the backend
  ``make_backend`` returns, or alone with ``backend: llm``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

from kenning.detect.textfold import fold


@dataclass(frozen=True)
class NerSpan:
    start: int | None
    end: int | None
    label: str
    text: str
    confidence: float
    extra: dict = field(default_factory=dict)

    def as_raw(self) -> list:
        return [self.start, self.end, self.label, self.confidence, self.text]


class NerBackend(Protocol):
    name: str
    version: str

    def config(self) -> dict[str, Any]: ...

    def detect(self, text: str) -> list[NerSpan]: ...


class NerUnavailable(RuntimeError):
    """The configured NER backend cannot run here (a user-fixable configuration problem)."""


# ---------------------------------------------------------------------------------------------------------
# chunking (§2A.5.4: chunk by ner_max_chars with ner_stride overlap, shift offsets back)

def chunk_bounds(length: int, max_chars: int, stride: int) -> list[tuple[int, int]]:
    """[(offset, size)] covering the text; consecutive chunks overlap by ``stride`` characters."""
    if length <= max_chars:
        return [(0, length)]
    step = max(1, max_chars - max(0, min(stride, max_chars - 1)))
    out, off = [], 0
    while True:
        size = min(max_chars, length - off)
        out.append((off, size))
        if off + size >= length:
            return out
        off += step


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class NerResult:
    chunks: list[dict]          # raw I/O per chunk: offset, length, input_sha256, spans (chunk-relative)
    spans: list[NerSpan]        # offsets relative to the whole text
    dropped: int = 0            # spans the backend found but did not return: their label cannot pass (N11)

    @property
    def failed(self) -> bool:
        """A chunk got no answer (an LLM request failed): the message should be tried again next run."""
        return any("error" in c.get("llm", ()) for c in self.chunks)


def replayed_by_rerun(backend: NerBackend) -> bool:
    """A backend whose output is a pure function of (name, version, config, text): deterministic code, not a model.
    Its run is replayed by running it again, so stage 2A logs no raw output per message for it (N10)."""
    return getattr(backend, "replay_by_rerun", False) is True


def run_chunked(backend: NerBackend, text: str, max_chars: int, stride: int,
                keep: frozenset[str] | None = None, log: bool = True) -> NerResult:
    """The backend over ``text`` in chunks. ``keep``: the backend's labels that can pass the stage's label map and
    allowlist; a backend replayed by rerun then skips building the others (counted in ``dropped``). ``log=False``:
    the chunks hold their offsets and lengths only, not the input hash and raw spans (N10–N11)."""
    chunks, spans = [], []
    info = getattr(backend, "chunk_info", None)  # LLM NER: the calls behind a chunk, or its error (E28)
    kept = getattr(backend, "detect_kept", None) if keep is not None and replayed_by_rerun(backend) else None
    dropped = 0
    for off, size in chunk_bounds(len(text), max_chars, stride):
        piece = text[off:off + size]
        if kept is not None:
            found, n = kept(piece, keep)
            dropped += n
        else:
            found = backend.detect(piece)
        if not log:
            chunk: dict = {"offset": off, "length": size}
        else:
            chunk = {"offset": off, "length": size, "input_sha256": sha256_text(piece),
                     "spans": [s.as_raw() for s in found]}
        extra = info(piece) if info is not None else None
        if extra:
            chunk["llm"] = extra
        chunks.append(chunk)
        for s in found:
            if s.start is None or s.end is None or not off:  # spans are frozen: the first chunk's are reused
                spans.append(s)
            else:
                spans.append(NerSpan(s.start + off, s.end + off, s.label, s.text, s.confidence,
                                     {**s.extra, "chunk_offset": off}))
    return NerResult(chunks, spans, dropped)


# ---------------------------------------------------------------------------------------------------------
# the deterministic rules backend

_UP = "A-ZÀ-ÖØ-Þ"
_LO = "a-zß-öø-ÿ"
_WORD = (rf"(?:[{_UP}][{_LO}]+(?:[-'’][{_UP}]?[{_LO}]+)*|Mc[{_UP}][{_LO}]+|[{_UP}][{_LO}]+[{_UP}][{_LO}]+"
         rf"|[{_UP}]{{2,}}(?![{_LO}]))")
_CONNECT = r"(?:[ \t]+(?:of|de|da|do|dos|van|von|der|den|del|la|le|du|di|&)[ \t]+|[ \t]+)"
_CAPS_SPAN = re.compile(rf"(?<![\w@#./\\-]){_WORD}(?:{_CONNECT}{_WORD})*(?:(?<=Inc|Ltd)\.|(?<=Jr|Sr|Co)\.|(?<=Corp)\.)?"
                        rf"(?![\w@-])")
# Every _CAPS_SPAN match begins with a capital ("Mc…" too): the only places finditer_at tries it.
_CAPS_START = re.compile(rf"[{_UP}]")
# _CAPS_SPAN with its first capital consumed before the lookbehind: a pattern that opens with a character class
# lets re's own search skip to the next capital in C (a lookbehind first makes it try every position). The
# lookbehind then looks at the character before that capital (the class's "[{_UP}]" is the capital itself, so
# only the character before decides; at the text's start there is none, as before), and each _WORD alternative
# continues after its first character in the same order, so every match, and every backtracking choice, is
# _CAPS_SPAN's. tests/test_prefilters.py compares the two.
_WORD_AFTER_FIRST = (rf"(?:[{_LO}]+(?:[-'’][{_UP}]?[{_LO}]+)*|(?<=M)c[{_UP}][{_LO}]+|[{_LO}]+[{_UP}][{_LO}]+"
                     rf"|[{_UP}]+(?![{_LO}]))")
_CAPS_SPAN_FAST = re.compile(rf"[{_UP}](?<![\w@#./\\-][{_UP}]){_WORD_AFTER_FIRST}(?:{_CONNECT}{_WORD})*"
                             rf"(?:(?<=Inc|Ltd)\.|(?<=Jr|Sr|Co)\.|(?<=Corp)\.)?(?![\w@-])")
_TITLE_BEFORE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof|Professor|Sir|Madam|Aunt|Uncle|Grandma|Grandpa|Coach)"
                           r"\.?[ \t]+$")
_QUOTED = re.compile(r"[\"“]([A-Z][^\"”\n]{2,50})[\"”]")

_MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
           "dec"}
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_TIME_WORDS = _MONTHS | _WEEKDAYS | {"christmas", "easter", "halloween", "thanksgiving", "today", "tomorrow",
                                     "yesterday", "tonight"}
# Sentence starters and function words that are capitalized only because of where they stand.
_STOP = set("""
a an the this that these those it its i i'm i've i'd i'll me my mine we our us you your yours he him his she her
they them their there here what when where why how who whom which whose if then else and or but nor so yet for of
in on at to from by with without about above after again against all am any are as be because been before being
below between both can could did do does doing down during each few further had has have having into is just more
most no not now off once only other ought out over own same should some such than too under until up very was were
will would also however therefore thus hence still maybe perhaps yes no ok okay sure thanks thank please hi hello
hey dear great good nice well oh wow let lets let's note see also first second third finally next last new old
one two three four five six seven eight nine ten step option section part chapter figure table example summary
conclusion introduction overview background context update edit answer question problem solution result results
tip tips warning important key main quick short long best better bad worse many much every another something
nothing everything anything someone everyone anyone today tomorrow yesterday tonight morning evening night
actually basically honestly anyway regarding overall instead otherwise meanwhile additionally furthermore
moreover although though while since unless whether whatever whenever wherever like just really probably
definitely absolutely certainly recently currently lately sometimes often usually always never again already
could should would might must shall may can will yeah nope hmm sorry welcome congratulations cheers bye goodbye
here's there's that's what's it's let's don't doesn't didn't can't won't isn't aren't wasn't weren't i'll you're
we're they're he's she's use using used make made try create add remove run install check consider keep avoid
start stop go get give take find look think know want need feel seem become help show tell ask work call write
read open close set put bring move change turn follow include continue provide allow support explain describe
below above based following according given step steps list lists item items name names user users assistant
system tool code data file files text value values type types default true false null none
""".split())
_TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "aunt", "uncle", "grandma",
           "grandpa", "coach", "judge", "captain", "president", "senator"}
_RELATION = re.compile(r"(?:\b(?:my|our|his|her|their|your)\s+)?(?:little\s+|older\s+|younger\s+|best\s+|big\s+|"
                       r"ex-?)?\b(?:sister|brother|mother|father|mom|mum|dad|wife|husband|partner|boyfriend|"
                       r"girlfriend|son|daughter|kid|child|friend|colleague|coworker|co-worker|boss|manager|cousin|"
                       r"aunt|uncle|niece|nephew|grandmother|grandfather|grandma|grandpa|mentor|teammate|neighbor|"
                       r"neighbour|roommate|therapist|doctor|teacher|fiancée?|spouse)s?,?\s+$", re.IGNORECASE)
# The cue regexes above and below end in "\s+$" or "\s*$", and a search over the 40-character window before a
# span costs ~20 µs (re tries every start position). Every match ends with one of these words (plus an optional
# plural "s" and comma for relations) before the trailing whitespace, so _ends_with() rules most windows out
# for a fraction of that; when it passes, the regex still decides. Checked by tests/test_prefilters.py.
_RELATION_ENDS = ("sister", "brother", "mother", "father", "mom", "mum", "dad", "wife", "husband", "partner",
                  "boyfriend", "girlfriend", "son", "daughter", "kid", "child", "friend", "colleague", "coworker",
                  "co-worker", "boss", "manager", "cousin", "aunt", "uncle", "niece", "nephew", "grandmother",
                  "grandfather", "grandma", "grandpa", "mentor", "teammate", "neighbor", "neighbour", "roommate",
                  "therapist", "doctor", "teacher", "fiancé", "fiancée", "spouse")
_ORG_CUE_ENDS = ("at", "for", "with", "joined", "joining", "join", "left", "leaving", "leave", "quit", "quitting")
_LOC_CUE_ENDS = ("live", "lives", "living", "lived", "moved", "move", "moving", "based", "born", "raised", "up",
                 "flew", "fly", "flying", "trip", "travel", "travelling", "traveling", "traveled", "travelled",
                 "visit", "visiting", "visited", "relocate", "relocating", "relocated", "stay", "staying", "stayed",
                 "vacation", "holiday", "holidays", "in", "to", "from", "near", "around")
_TITLE_ENDS = ("Mr", "Mrs", "Ms", "Miss", "Dr", "Prof", "Professor", "Sir", "Madam", "Aunt", "Uncle", "Grandma",
               "Grandpa", "Coach")


def _tail(before: str) -> str:
    """``before`` folded as re's IGNORECASE compares letters, without trailing whitespace (what \\s matches)."""
    return fold(before).rstrip()


def _ends_with(tail: str, words: tuple[str, ...], *, plural_comma: bool = False) -> bool:
    r"""Could a case-insensitive cue regex ending in ``word s? ,? \s*$`` match the text whose :func:`_tail` this
    is? False means it cannot."""
    if plural_comma:
        if tail.endswith(","):
            tail = tail[:-1]
        if tail.endswith("s") and tail[:-1].endswith(words):
            return True
    return tail.endswith(words)


def _may_follow_title(text: str, start: int) -> bool:
    r"""Could _TITLE_BEFORE (``Title\.?[ \t]+$``, case-sensitive) match the 16 characters before ``start``?"""
    tail = text[max(0, start - 16):start].rstrip(" \t\n")  # "$" may also match before a final newline
    if tail.endswith("."):
        tail = tail[:-1]
    return tail.endswith(_TITLE_ENDS)


_PERSON_VERB = re.compile(r"^(?:'s\s+)?\s*(?:said|says|told|tells|asked|asks|thinks|thought|wants|wanted|suggested|"
                          r"mentioned|texted|called|emailed|replied|wrote|agreed|argued|believes|loves|likes|hates)\b")
_ORG_CUE = re.compile(r"\b(?:work|works|working|worked|job|role|position|interview|interviewing|internship|"
                      r"intern|employed|hired)\s+(?:at|for|with)\s+$|\b(?:joined|joining|join|left|leaving|leave|"
                      r"quit|quitting)\s+$", re.IGNORECASE)
_LOC_CUE = re.compile(r"\b(?:live|lives|living|lived|moved|move|moving|based|born|raised|grew\s+up|flew|fly|flying|"
                      r"trip|travel|travelling|traveling|traveled|travelled|visit|visiting|visited|relocate|"
                      r"relocating|relocated|stay|staying|stayed|vacation|holiday|holidays)\s+(?:in|to|from|near|"
                      r"around|back\s+to)?\s*$", re.IGNORECASE)
_ORG_SUFFIXES = {"inc", "inc.", "corp", "corp.", "corporation", "llc", "ltd", "ltd.", "gmbh", "ag", "sa", "plc",
                 "co.", "company", "group", "labs", "lab", "technologies", "systems", "bank", "university", "college",
                 "institute", "foundation", "agency", "ministry", "association", "society", "hospital", "school",
                 "studio", "studios", "partners", "ventures", "capital", "consulting", "media", "software"}
_ORG_PREFIXES = {"university", "bank", "institute", "ministry", "department", "college"}
_SENTENCE_END = set(".!?:;\n")
_LEADING_SKIP = set(" \t\"'“‘(*_#>-•[`")


@lru_cache(maxsize=1)
def location_gazetteer() -> frozenset[str]:
    text = resources.files("kenning.detect").joinpath("data/locations.txt").read_text("utf-8")
    return frozenset(ln.strip().lower() for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))


def _sentence_initial(text: str, pos: int) -> bool:
    """True when only markup, quotes or list markers stand between ``pos`` and a sentence end or line start."""
    i = pos - 1
    while i >= 0 and text[i] in _LEADING_SKIP:
        i -= 1
    return i < 0 or text[i] in _SENTENCE_END


_TOKEN = re.compile(r"\S+")

# One-word spans, the common case: most are stop or time words ("The", "I", "March"), which the stripping in
# detect() would drop, or a bare title ("Dr"), which it skips; they are dropped without tokenizing or looking
# back. The answer depends on the span alone, so it is remembered per span: True (drop), False (one word to
# keep: nothing to strip); spans of several words are not kept (None). A few thousand distinct capitalized words
# in practice; cleared if it ever grows large.
_SINGLE_SKIP: dict[str, bool] = {}
_SINGLE_SKIP_MAX = 200_000


def _single_skip(span: str) -> bool | None:
    """True: a one-word span detect() drops; False: a one-word span it keeps as it is; None: several words."""
    if " " in span or "\t" in span:  # words join only with spaces or tabs (_CONNECT)
        return None
    low = span.lower()
    skip = low.rstrip(".") in _STOP or low in _TIME_WORDS or low in _STOP or low.rstrip(".") in _TITLES
    if len(_SINGLE_SKIP) >= _SINGLE_SKIP_MAX:
        _SINGLE_SKIP.clear()
    _SINGLE_SKIP[span] = skip
    return skip


class RulesNerBackend:
    """Deterministic capitalized-span / title / quoted-term NER (E6). Same text ⇒ same spans."""

    name = "kenning-rules"
    version = "1"
    replay_by_rerun = True  # deterministic code: rerunning this version on the text is its replay (N10)
    labels = ("PERSON", "ORG", "LOCATION", "MISC", "WORK_OF_ART")  # every label detect() gives

    def config(self) -> dict[str, Any]:
        return {"backend": "rules", "name": self.name, "version": self.version,
                "gazetteer_entries": len(location_gazetteer())}

    def detect(self, text: str) -> list[NerSpan]:
        return self._detect(text, None)[0]

    def detect_kept(self, text: str, keep: frozenset[str]) -> tuple[list[NerSpan], int]:
        """``detect(text)`` without the spans whose label is not in ``keep``, and how many those were; the same
        spans in the same order as filtering detect()'s output, without building the others (N11)."""
        return self._detect(text, keep)

    def _detect(self, text: str, keep: frozenset[str] | None) -> tuple[list[NerSpan], int]:
        if not text:
            return [], 0
        gaz = location_gazetteer()
        found: list[tuple] = []  # (start, end, label, surface, confidence, rule)
        labelled: dict[str, tuple[str, str]] = {}
        pending: list[tuple[int, int, str, bool]] = []
        single_skip = _SINGLE_SKIP
        for m in _CAPS_SPAN_FAST.finditer(text):
            span = m.group()
            skip = single_skip.get(span)
            if skip is None:
                skip = _single_skip(span)
            if skip:
                continue
            s, e = m.span()
            if skip is False:  # one word, neither stop, time nor title word: nothing to strip
                if _may_follow_title(text, s) and _TITLE_BEFORE.search(text, max(0, s - 16), s):  # "Dr. Smith"
                    pending.append((s, e, "TITLE", False))
                else:
                    pending.append((s, e, "", _sentence_initial(text, s)))
                continue
            toks = [(t.start() + s, t.end() + s, t.group()) for t in _TOKEN.finditer(span)]
            initial = _sentence_initial(text, s)
            # strip leading stop words / time words, and trailing time words
            while toks and (toks[0][2].lower().rstrip(".") in _STOP or toks[0][2].lower() in _TIME_WORDS):
                toks.pop(0)
                initial = False
            while toks and (toks[-1][2].lower() in _TIME_WORDS or toks[-1][2].lower() in _STOP
                            or toks[-1][2] in ("&",)):
                toks.pop()
            if not toks:
                continue
            s, e = toks[0][0], toks[-1][1]
            surface = text[s:e]
            if len(toks) == 1 and initial and surface.lower() in _STOP:
                continue
            if toks[0][2].lower().rstrip(".") in _TITLES:
                if len(toks) == 1:
                    continue  # a bare title ("Dr", "Professor")
                s = toks[1][0]  # "Dr Smith" → span "Smith", titled
                pending.append((s, e, "TITLE", False))
                continue
            if _may_follow_title(text, s) and _TITLE_BEFORE.search(text, max(0, s - 16), s):  # "Dr. Smith"
                pending.append((s, e, "TITLE", False))
                continue
            pending.append((s, e, "", initial and len(toks) == 1))
        for s, e, cue, weak in pending:
            surface = text[s:e]
            label, conf, why = self._classify(text, s, e, surface, cue, gaz)
            if label == "MISC" and weak:
                conf, why = 0.3, "sentence_initial_single"
            found.append((s, e, label, surface, conf, why))
            if label != "MISC":
                labelled.setdefault(surface, (label, why))
        # propagate a confident label to the same surface elsewhere in this text (prose often has none to give)
        out: list[NerSpan] = []
        dropped = 0
        for s, e, label, surface, conf, why in found:
            if label == "MISC" and surface in labelled:
                label, why = labelled[surface]
                conf, why = 0.55, f"propagated:{why}"
            if keep is not None and label not in keep:
                dropped += 1
                continue
            out.append(NerSpan(s, e, label, surface, conf, {"rule": why}))
        if keep is None or "WORK_OF_ART" in keep:
            for m in _QUOTED.finditer(text):
                inner = m.group(1).strip()
                words = inner.split()
                if 1 <= len(words) <= 5 and inner == m.group(1):
                    out.append(NerSpan(m.start(1), m.end(1), "WORK_OF_ART", inner, 0.5, {"rule": "quoted_term"}))
        else:
            for m in _QUOTED.finditer(text):
                inner = m.group(1).strip()
                if 1 <= len(inner.split()) <= 5 and inner == m.group(1):
                    dropped += 1
        out.sort(key=lambda x: (x.start, -(x.end or 0), x.label))
        return out, dropped

    @staticmethod
    def _classify(text: str, s: int, e: int, surface: str, cue: str, gaz: frozenset[str]) -> tuple[str, float, str]:
        if cue == "TITLE":
            return "PERSON", 0.85, "title"
        low = surface.lower()
        words = low.split()
        if words[-1] in _ORG_SUFFIXES or words[0] in _ORG_PREFIXES and len(words) > 1:
            return "ORG", 0.8, "org_suffix"
        before = text[max(0, s - 40):s]
        # Every relation, work and place cue word ends in a letter (a relation may add a comma): a window ending,
        # before its trailing whitespace, in anything else (a sentence end, a bullet, nothing) rules all three out
        # before any _ends_with. Folding keeps whether a character is a letter, a comma or whitespace (tested over
        # every code point), so the unfolded window answers that and the fold is made only when a cue is possible.
        last = before.rstrip()[-1:]
        cued = last.isalpha() or last == ","
        tail = _tail(before) if cued else ""
        spaced = cued and before[-1:].isspace()  # the relation and work cues end in \s+
        if spaced and _ends_with(tail, _RELATION_ENDS, plural_comma=True) and _RELATION.search(before):
            return "PERSON", 0.8, "relation_cue"
        if low in gaz:
            return "LOCATION", 0.8, "gazetteer"
        if spaced and tail.endswith(_ORG_CUE_ENDS) and _ORG_CUE.search(before):
            return "ORG", 0.65, "work_cue"
        if cued and tail.endswith(_LOC_CUE_ENDS) and _LOC_CUE.search(before):
            return "LOCATION", 0.65, "place_cue"
        if _PERSON_VERB.match(text[e:e + 30]) and len(words) <= 3:  # a slice: the pattern opens with ^
            return "PERSON", 0.6, "speech_verb"
        return "MISC", 0.5 if len(words) > 1 else 0.4, "capitalized"


class SpacyNerBackend:
    """Any spaCy pipeline with an ``ents``-producing component (a model, or a blank one with an EntityRuler)."""

    def __init__(self, nlp: Any, confidence: float, model_name: str | None = None):
        import spacy

        self.nlp = nlp
        self.confidence = confidence
        meta = getattr(nlp, "meta", {}) or {}
        self.name = "spacy-" + (model_name or f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}")
        self.version = f"{meta.get('version', '0')}+spacy{spacy.__version__}"

    def config(self) -> dict[str, Any]:
        return {"backend": "spacy", "name": self.name, "version": self.version, "pipes": list(self.nlp.pipe_names),
                "confidence": self.confidence}

    def detect(self, text: str) -> list[NerSpan]:
        doc = self.nlp(text)
        return [NerSpan(ent.start_char, ent.end_char, ent.label_, ent.text, self.confidence) for ent in doc.ents]


class ReplayNerBackend:
    """Answers from stored raw outputs keyed by the chunk's sha256: replays a logged run with no model."""

    def __init__(self, name: str, version: str, outputs: dict[str, list[list]]):
        self.name, self.version, self.outputs = name, version, outputs
        self.misses = 0

    def config(self) -> dict[str, Any]:
        return {"backend": "replay", "name": self.name, "version": self.version}

    def detect(self, text: str) -> list[NerSpan]:
        raw = self.outputs.get(sha256_text(text))
        if raw is None:
            self.misses += 1
            return []
        return [NerSpan(s, e, label, surface, conf) for s, e, label, conf, surface in raw]


def make_backend(ner_cfg: Any) -> NerBackend | None:
    """The backend ``entities.ner`` asks for, or None when NER is off."""
    if ner_cfg.backend == "none":
        return None
    if ner_cfg.backend == "rules":
        return RulesNerBackend()
    if ner_cfg.backend == "spacy":
        if not ner_cfg.spacy_model:
            raise NerUnavailable("entities.ner.backend is 'spacy' but entities.ner.spacy_model is not set")
        try:
            import spacy

            nlp = spacy.load(ner_cfg.spacy_model)
        except ImportError as e:
            raise NerUnavailable("entities.ner.backend is 'spacy' but spaCy is not installed (pip install spacy)") from e
        except OSError as e:
            raise NerUnavailable(f"cannot load the spaCy model {ner_cfg.spacy_model!r}: {e}") from e
        # A package name names the detector (NER:spacy-en_core_web_sm); a pipeline saved to a directory is named
        # by its meta (NER:spacy-<lang>_<name>), so the vault does not depend on where it lives.
        is_path = os.sep in ner_cfg.spacy_model or os.path.isdir(ner_cfg.spacy_model)
        return SpacyNerBackend(nlp, ner_cfg.spacy_confidence, None if is_path else ner_cfg.spacy_model)
    if ner_cfg.backend == "llm":
        return None  # the model alone: stage 2A adds the LLM backend (it needs --llm live|replay)
    raise NerUnavailable(f"unknown entities.ner.backend {ner_cfg.backend!r}; use rules, spacy, llm or none")
