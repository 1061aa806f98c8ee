"""Phase 6 — EpistemicsRulesEngine (seed 000 §4.7) and EpistemicsLLMFallback (§4.8).

The rules read the atom's evidence text (its clause as written) and produce an EpistemicFrame
``{temporal_scope, modality, degree, conditional}`` (+ Kenning's ``holds_now``), a confidence, and the polarity:

1. **Negation** → ``polarity = deny``, by scope (issue 22, S41): only negation in the verb group of the main
   clause's "I" counts ("i am not", "i do not", "i can barely"), plus a negated frame verb over it ("I don't think
   I'm creative"); negation inside an object ("pasta and not much else"), a condition ("if I don't exercise") or a
   reason ("because I didn't …") does not. When the atomizer split one clause into several atoms it hands each
   atom its own clause ("I'm not patient and not kind" → "i am not patient", "i am not kind"). Aversion verbs
   (hate, dislike, can't stand …) also deny (S10). "never" is **both** negation and ``habitual``, and so are the
   frequency words that invert a belief (``frequency_negation``: rarely, seldom, hardly ever … S42).
2. **Modality** → certain (default), likely, possible, unsure (the least certain cue wins); it caps the atom's
   confidence (``modality_caps``).
3. **Temporal scope** → every cue category that matched; when several scopes match, ``specificity_then_rightmost``:
   the higher ``temporal_specificity`` wins (past 6 > transitional 5 > habitual 4 > ongoing 3 > state 2 >
   unknown 1), and between equals the rightmost cue. With no cue: a present-tense condition ("when I work from
   home") or a recurring phrase ("before big presentations") → habitual (S12), else ``unknown`` (S45).
   ``holds_now`` is False when the scope is past and no past cue says the change holds now ("used to" vs
   "no longer", ``past_change``; S46).
4. **Degree** → intensity from degree cues (default 0.5).

Cues are matched case-insensitively on word boundaries, longest first, each word read once ("right now" is a
state cue, not "now"); a cue may carry several categories ("no longer" = negation + past). ``confidence`` is
below ``llm_fallback_threshold`` (0.6) when no cue settled the scope; then, with an LLM, the fallback asks the model
for the frame (the polarity stays the rules', S9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from kenning.selfbelief.clauses import fronted_main_start, verb_group_end
from kenning.selfbelief.text import collapse, expand_contractions, normalize_apostrophes
from kenning.selfbelief.types import EpistemicFrame, EpistemicsResult

TEMPORAL_CATEGORIES = {"past": "past", "transitional": "transitional", "habitual_strong": "habitual",
                       "habitual_soft": "habitual", "ongoing": "ongoing", "state": "state"}
MODALITY_ORDER = ("unsure", "possible", "likely", "certain")   # least certain first
_NEG_WORD = re.compile(r"\b(not|never|cannot|no longer|nobody|nothing|neither|nor)\b|n't\b")
_COND = re.compile(r"\b(if|unless|when|whenever|every time|each time)\b")
_CAUSE = re.compile(r"\b(because|since|so that|as if|as though|which|as(?! (?:a|an|the)\b)|but not|than)\b")
_FRAME_VERBS = {"think", "suspect", "guess", "believe", "feel", "know", "suppose", "admit", "say", "bet", "reckon",
                "realize", "realise", "wonder", "would", "said", "says", "thinks", "tell", "told", "sure"}
_RECURRING_PP = re.compile(r"\b(?:(?:before|after|during) (?:(?:big|long|busy|most|all|the|my|our|some|important|a few|"
                           r"a couple of|several|too many|two|three) )*[a-z-]{4,}s|on (?:mondays|tuesdays|wednesdays|"
                           r"thursdays|fridays|saturdays|sundays|weekends|weekdays)|in the (?:mornings|evenings)|"
                           r"at night|on (?:[a-z-]+ ){1,2}(?:days|nights|mornings|evenings|weekends))\b")
_FRONTED_TIME = re.compile(r"\s*(?:before|after|during)\b")   # "Before a big exam I can't eat": a recurring time
_WH_BEFORE = re.compile(r"\b(?:what|how|where|who|why|whatever|whether|which)\s+$")
_COPULA = {"am", "is", "are", "'m"}
_SKIP = {"really", "very", "so", "just", "also", "always", "never", "usually", "often", "generally", "still",
         "not", "actually", "honestly", "definitely", "probably", "maybe", "perhaps", "truly", "totally", "kind",
         "of", "sort", "pretty", "quite", "almost", "rarely", "sometimes", "seldom", "typically", "normally",
         "constantly", "deeply", "do", "does", "lately", "recently", "finally", "now", "currently", "even", "too"}


_TOKEN = re.compile(r"[a-z0-9]+(?=n't\b)|n't\b|'[a-z]+\b|[a-z0-9]+(?:-[a-z0-9]+)*|\*ing")
_ING = re.compile(r"[\w-]+ing")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Words of lowercase text with their offsets; clitics are their own tokens ("don't" → do, n't)."""
    return [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


class CueMatcher:
    """Every cue list matched in one left-to-right pass over the words: at each word the longest cue starting
    there wins (cues are whole words; "n't" and "'ve" are words of their own; "*ing" is any -ing word), and the
    scan resumes after it — so each word is read once ("right now" is a state cue, not "now")."""

    def __init__(self, cues: dict[str, set[str]]):
        self.cues = {normalize_apostrophes(c.lower()): cats for c, cats in cues.items()}
        self._by_first: dict[str, list[tuple[tuple[str, ...], tuple[bool, ...], str]]] = {}
        self._wild_first: list[tuple[tuple[str, ...], tuple[bool, ...], str]] = []
        for cue in self.cues:
            toks = _tokens(cue)
            if not toks:
                continue
            words = tuple(t for t, _, _ in toks)
            joined = tuple(toks[i][1] == toks[i - 1][2] for i in range(1, len(toks)))   # True: no space between
            entry = (words, joined, cue)
            if words[0] == "*ing":
                self._wild_first.append(entry)
            else:
                self._by_first.setdefault(words[0], []).append(entry)
        for lst in self._by_first.values():
            lst.sort(key=lambda e: (-len(e[0]), -len(e[2]), e[2]))
        self._memo: dict[str, list[tuple[str, set[str], int, int]]] = {}

    @staticmethod
    def _match(entry, toks, i: int, text: str) -> bool:
        words, joined, _ = entry
        if i + len(words) > len(toks):
            return False
        for j in range(1, len(words)):
            w, s, _ = toks[i + j]
            prev_end = toks[i + j - 1][2]
            if joined[j - 1]:
                if s != prev_end:
                    return False
            elif s == prev_end or not text[prev_end:s].isspace():
                return False
            want = words[j]
            if want == "*ing":
                if not _ING.fullmatch(w):
                    return False
            elif w != want:
                return False
        return True

    def find(self, text: str) -> list[tuple[str, set[str], int, int]]:
        """The cues of ``text`` (memoized: the phases read the same clause several times; callers don't mutate)."""
        hit = self._memo.get(text)
        if hit is None:
            if len(self._memo) > 4096:
                self._memo.clear()
            hit = self._memo[text] = self._find(text)
        return hit

    def _find(self, text: str) -> list[tuple[str, set[str], int, int]]:
        toks = _tokens(text)
        out = []
        i, n = 0, len(toks)
        while i < n:
            cands = self._by_first.get(toks[i][0])
            hit = None
            if cands:
                for e in cands:
                    if self._match(e, toks, i, text):
                        hit = e
                        break
            if hit is None:
                i += 1
                continue
            k = len(hit[0])
            out.append((hit[2], self.cues[hit[2]], toks[i][1], toks[i + k - 1][2]))
            i += k
        return out


def build_cue_table(cfg) -> dict[str, set[str]]:
    """cue → categories, from ``self_beliefs.epistemics.cues`` (a cue in several lists has every category; a cue
    that contains a negation word negates unless it is a listed exception)."""
    c = cfg.cues
    table: dict[str, set[str]] = {}

    def add(words, cat):
        for w in words:
            table.setdefault(normalize_apostrophes(w.lower()), set()).add(cat)

    add(c.discourse, "discourse")
    add(c.negation, "negation")
    add(c.negation_exceptions, "negation_exception")
    add(c.aversion, "aversion")
    add(c.frequency_negation, "negation")
    add(c.frequency_negation, "habitual_soft")
    for name in ("possible", "likely", "unsure"):
        add(getattr(c.modality, name), "modality:" + name)
    for name in TEMPORAL_CATEGORIES:
        add(getattr(c, name), name)
    add(c.degree_strong, "degree:strong")
    add(c.degree_weak, "degree:weak")
    for cue, cats in table.items():
        if "negation_exception" in cats or "discourse" in cats:
            cats.discard("negation")
        elif "negation" not in cats and _NEG_WORD.search(cue):
            cats.add("negation")
    return table


def cue_lists(cfg) -> dict[str, list[str]]:
    """The cue word lists as the extractor version hashes them (seed §6 "Cue word lists")."""
    c = cfg.cues
    out = {k: list(getattr(c, k)) for k in ("discourse", "negation", "negation_exceptions", "aversion", "past", "transitional",
                                            "habitual_strong", "habitual_soft", "ongoing", "state", "degree_strong",
                                            "degree_weak", "frequency_negation", "past_change")}
    for name in ("possible", "likely", "unsure"):
        out["modality_" + name] = list(getattr(c.modality, name))
    out["stative_verbs"] = list(cfg.stative_verbs)
    return out


_WORDS = re.compile(r"[a-z'-]+")


def _regions(rx: re.Pattern, text: str, to_comma: bool = True, include_keyword: bool = False,
             inside_cues: list[tuple[int, int]] = ()) -> list[tuple[int, int, str]]:
    out = []
    lead = len(text) - len(text.lstrip())
    for m in rx.finditer(text):
        if any(a <= m.start() < b and (a, b) != (m.start(), m.end()) for a, b in inside_cues):
            continue   # "rarely if ever": part of a cue, not a condition
        end = len(text)
        if to_comma:
            comma = text.find(",", m.end())
            if comma != -1:
                end = comma
        if m.start() == lead:   # fronted without a comma: "when i am tired i snap" (S40)
            main = fronted_main_start(text[lead:])
            if main is not None:
                end = min(end, lead + main)
        out.append((m.start() if include_keyword else m.end(), end, m.group(1)))
    return out


def scope_of_condition(cond: list[tuple[int, int, str]]) -> bool:
    """A present-tense condition introduced by when / whenever / if / every time describes a recurring situation."""
    return any(kw in ("when", "whenever", "if", "every time", "each time") for _, _, kw in cond)


def _inside(pos: int, regions: list[tuple[int, int, str]]) -> bool:
    return any(a <= pos < b for a, b, _ in regions)


class EpistemicsRulesEngine:
    def __init__(self, cfg):
        self.cfg = cfg
        self.matcher = CueMatcher(build_cue_table(cfg))
        self.specificity = dict(cfg.temporal_specificity)
        self.stative = {w.lower() for w in cfg.stative_verbs}
        self.past_change = {normalize_apostrophes(w.lower()) for w in cfg.cues.past_change}

    def analyze(self, text: str, atom_text: str | None = None, clause: str | None = None) -> EpistemicsResult:
        """The frame of ``text`` (the evidence). ``clause``: the atom's own clause when the atomizer wrote one
        (its polarity and condition are read there; S41)."""
        cfg = self.cfg
        low = self._blank_discourse(normalize_apostrophes(text.lower()))
        matches = self.matcher.find(low)
        spans = [(a, b) for _, _, a, b in matches]
        cond = _regions(_COND, low, inside_cues=spans)
        cause = _regions(_CAUSE, low, include_keyword=True, inside_cues=spans)
        neg, aversion, modal, temporal, degree = [], [], [], [], []
        for cue, cats, start, _ in matches:
            if _inside(start, cause):
                continue
            if _WH_BEFORE.search(low, 0, start) and cue.startswith("i "):
                cats = {c for c in cats if not c.startswith("modality:")}   # "say what i think": no hedge
            if "negation" in cats and not _inside(start, cond):
                neg.append(cue)
            if "aversion" in cats and not _inside(start, cond):
                aversion.append(cue)
            for cat in cats:
                if cat.startswith("modality:"):
                    modal.append((cat.split(":", 1)[1], cue))
                elif cat in TEMPORAL_CATEGORIES:
                    temporal.append((TEMPORAL_CATEGORIES[cat], cue, start))
                elif cat.startswith("degree:"):
                    degree.append((cat.split(":", 1)[1], cue, start))
        # 1. negation (and aversion) by scope → polarity; parity over the main clause only when no "I" is found
        scoped = self.scoped_negation(self._blank_discourse(normalize_apostrophes(clause.lower())) if clause else low)
        if scoped is not None:
            neg, aversion = scoped
            rule_neg = "verb_group"
        else:
            rule_neg = "parity"
        polarity = "deny" if (len(neg) + len(aversion)) % 2 == 1 else "affirm"
        # 2. modality
        modality = "certain"
        for m in MODALITY_ORDER:
            if any(k == m for k, _ in modal):
                modality = m
                break
        # 3. temporal scope: specificity_then_rightmost
        conf_cfg = cfg.confidence
        scopes = {s for s, _, _ in temporal}
        if temporal:
            best = max(temporal, key=lambda t: (self.specificity.get(t[0], 0), t[2]))
            scope = best[0]
            rule = "explicit_cue" if len(scopes) == 1 else "specificity_then_rightmost"
            confidence = conf_cfg.explicit_cue if len(scopes) == 1 else conf_cfg.competing_cues
        elif (cond and scope_of_condition(cond)) or _RECURRING_PP.search(low) or _FRONTED_TIME.match(low):
            scope, rule = "habitual", "recurring_condition"   # "… when I work from home" (S12)
            confidence = conf_cfg.predicate_form
        else:
            scope, rule = "unknown", "no_cue"                 # seed §4.7: nothing matched (S45)
            confidence = conf_cfg.no_cue
        holds_now = not (scope == "past" and not any(c in self.past_change for s, c, _ in temporal if s == "past"))
        # 4. degree (the rightmost cue)
        deg = cfg.degree.default
        if degree:
            kind = max(degree, key=lambda d: d[2])[0]
            deg = cfg.degree.strong if kind == "strong" else cfg.degree.weak
        conditional = self.conditional(clause) if clause else ""
        if not conditional and cond:
            a, b, kw = cond[0]
            conditional = collapse(expand_contractions(low[a - len(kw):b]).strip(" ,.;:!?"))
        frame = EpistemicFrame(scope, modality, float(deg), conditional, holds_now)
        signals: dict[str, Any] = {"negation": neg, "aversion": aversion, "modality": [c for _, c in modal],
                                   "temporal": [[s, c] for s, c, _ in temporal], "degree": [c for _, c, _ in degree],
                                   "scope_rule": rule, "negation_rule": rule_neg}
        return EpistemicsResult(frame, float(confidence), signals, confidence < cfg.llm_fallback_threshold,
                                polarity, "rules")

    def _blank_discourse(self, low: str) -> str:
        for cue, cats, start, end in self.matcher.find(low):
            if "discourse" in cats:  # "if I'm honest, …" is no condition: blank it out
                low = low[:start] + " " * (end - start) + low[end:]
        return low

    def conditional(self, clause: str) -> str:
        low = self._blank_discourse(normalize_apostrophes(clause.lower()))
        spans = [(a, b) for _, _, a, b in self.matcher.find(low)]
        cond = _regions(_COND, low, inside_cues=spans)
        if not cond:
            return ""
        a, b, kw = cond[0]
        return collapse(expand_contractions(low[a - len(kw):b]).strip(" ,.;:!?"))

    def scoped_negation(self, low: str) -> tuple[list[str], list[str]] | None:
        """(negation cues, aversion cues) that govern the main clause of ``low``: those in the verb group of its
        "I", and of each frame it sits under ("i do not think i am …"); None when no "I" outside a condition or a
        reason is found."""
        matches = self.matcher.find(low)
        spans = [(a, b) for _, _, a, b in matches]
        masked = _regions(_COND, low, include_keyword=True, inside_cues=spans) + \
            _regions(_CAUSE, low, include_keyword=True, inside_cues=spans)
        toks = _tokens(low)
        at: dict[int, tuple[str, set[str], int, int]] = {}
        covered: dict[int, set[str]] = {}
        for cue, cats, a, b in matches:
            for k, (_, s, e) in enumerate(toks):
                if s >= a and e <= b:
                    covered[k] = cats
                    at.setdefault(k, (cue, cats, a, b))
        subj = next((k for k, (w, s, _) in enumerate(toks) if w == "i" and not _inside(s, masked)), None)
        if subj is None:
            return None
        neg: list[str] = []
        aversion: list[str] = []
        seen: set[int] = set()
        while True:
            end = verb_group_end(toks, subj + 1, covered)
            for k in range(subj, end + 1 if end < len(toks) else end):
                hit = at.get(k)
                if hit is None or hit[2] in seen:
                    continue
                cue, cats, a, _ = hit
                if k == end and "aversion" not in cats:
                    continue
                seen.add(a)
                if "negation" in cats:
                    neg.append(cue)
                if "aversion" in cats:
                    aversion.append(cue)
            nxt = self._frame_complement(toks, subj, end, covered)
            if nxt is None:
                return neg, aversion
            aversion = []          # a frame verb is no aversion of the belief under it
            subj = nxt

    @staticmethod
    def _frame_complement(toks, subj: int, end: int, covered) -> int | None:
        """The "I" of the clause under a frame ("i (do not) think (that) i …"), or None."""
        k = end
        framed = any(any(c.startswith("modality:") for c in covered.get(j, ())) for j in range(subj, end))
        if k < len(toks) and toks[k][0] in _FRAME_VERBS and k not in covered:
            k += 1
            framed = True
        if k < len(toks) and toks[k][0] in ("that", "like", "if", "whether"):
            k += 1
        if framed and k < len(toks) and toks[k][0] == "i":
            return k
        return None

    def predicate_form(self, low: str) -> tuple[str, str]:
        """Scope from the verb after "i" when no cue matched: copula/stative → state, other present → habitual."""
        toks = _WORDS.findall(expand_contractions(low))
        for i, t in enumerate(toks):
            if t != "i":
                continue
            rest = toks[i + 1:i + 8]
            words = [w for w in rest if w not in _SKIP]
            if words and words[0] in _FRAME_VERBS and "i" in rest:
                continue  # "I suspect I'm …", "I'd say I'm …": the verb after the next "i" decides
            for w in words[:5]:
                if w in _COPULA or w in self.stative or w.rstrip("s") in self.stative:
                    return "state", "predicate_form:stative"
                if w in ("was", "were", "had", "used") or w.endswith("ed"):
                    return "unknown", "predicate_form:past_tense"
                if w in ("can", "cannot"):
                    return "state", "predicate_form:modal"
                if w in ("will", "would", "should", "could", "might", "may", "must", "have"):
                    return "unknown", "none"
                return "habitual", "predicate_form:present"
            break
        return "unknown", "none"

    def cap(self, confidence: float, modality: str) -> float:
        return min(confidence, self.cfg.modality_caps.get(modality, 1.0))


# -- §4.8 the LLM fallback ----------------------------------------------------------------------------------
class EpistemicsAnswer(BaseModel):
    """What the epistemics_fallback prompt asks for."""

    temporal_scope: Literal["state", "ongoing", "habitual", "transitional", "past", "unknown"]
    modality: Literal["certain", "likely", "possible", "unsure"]
    degree: float = Field(ge=0, le=1)
    conditional: str
    confidence: float = Field(ge=0, le=1)


@dataclass
class EpistemicsLLMFallback:
    """Asks the model for the frame when the rules are unsure (confidence < ``llm_fallback_threshold``)."""

    llm: Any                       # kenning.llm.LLMClient (enabled)
    model: str | None = None       # self_beliefs.models.epistemics_model (None = llm.model)

    def analyze(self, text: str, rules: EpistemicsResult, *, message_id: str | None = None,
                item_key: str | None = None) -> EpistemicsResult:
        res = self.llm.structured("epistemics_fallback", {"text": text}, EpistemicsAnswer, message_id=message_id,
                                  item_key=item_key, options={"model": self.model} if self.model else None)
        if not res.ok:
            return rules
        v: EpistemicsAnswer = res.value
        # the model runs only when no cue settled the scope, so a "past" from it has no "no longer" cue either (S46)
        holds_now = rules.frame.holds_now if v.temporal_scope != "past" or rules.frame.temporal_scope == "past" \
            else False
        frame = EpistemicFrame(v.temporal_scope, v.modality, float(v.degree), collapse(v.conditional.lower()),
                               holds_now)
        signals = {**rules.signals, "llm_fallback": True, "rules_frame": rules.frame.as_dict(),
                   "llm_call_ids": list(res.call_ids)}
        return EpistemicsResult(frame, float(v.confidence), signals, False, rules.detected_polarity, "llm")
