"""Memory directives (§4A.1.4): preferences, constraints, standing orders and vocabulary rules the user states,
each with applies_when / does_not_apply_when. A "whenever …" rule is a standing procedure, not a directive."""

from __future__ import annotations

import re
from typing import Any

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining import standing
from kenning.intake.mining.base import run_class
from kenning.intake.mining.common import Mined, clean_clause, sentences

_Q = r"[\"“'‘]"
_QE = r"[\"”'’]"
_RULES: list[tuple[str, str, re.Pattern]] = [
    ("vocabulary_mapping", "vocabulary_rule", re.compile(
        rf"\bwhen\s+i\s+(?:say|write|mention)\s+{_Q}?(?P<a>[^\"”',]+?){_QE}?,?\s+i\s+(?:mean|am\s+talking\s+about|"
        rf"refer\s+to)\s+(?P<b>.+)$", re.I)),
    ("vocabulary_mapping", "vocabulary_rule", re.compile(
        rf"\bby\s+{_Q}(?P<a>[^\"”']+){_QE},?\s+i\s+mean\s+(?P<b>.+)$", re.I)),
    ("vocabulary_mapping", "vocabulary_rule", re.compile(
        rf"{_Q}(?P<a>[^\"”']+){_QE}\s+(?:means|stands\s+for|is\s+(?:my|our)\s+(?:name|word|shorthand|nickname)\s+for)\s+"
        rf"(?P<b>.+)$", re.I)),
    ("vocabulary_mapping", "vocabulary_rule", re.compile(
        rf"\b(?:please\s+)?(?:call|refer\s+to)\s+(?P<b>[^\"“]+?)\s+(?:as\s+)?{_Q}(?P<a>[^\"”']+){_QE}", re.I)),
    # "I don't have the time / the money / one" is a reason for turning something down, not a standing constraint (I158)
    ("constraint", "constraint", re.compile(
        r"\b(?P<x>i(?:'m|\s+am)\s+(?:allergic|intolerant)\s+to\s+.+|i\s+(?:can'?t|cannot|don'?t|do\s+not|never)\s+"
        r"(?:eat|drink|have(?!\s+(?:the\s+|enough\s+|much\s+|any\s+)?(?:time|money|budget|energy|space|room|patience|"
        r"bandwidth|cash|one|it|that|this)\b)|fly|drive|work\s+on|take\s+calls\s+on)\b.+|i(?:'m|\s+am)\s+(?:a\s+)?(?:vegetarian|vegan|"
        r"teetotal|sober|diabetic|coeliac|celiac|pescatarian)\b.*)$", re.I)),
    ("constraint", "constraint", re.compile(
        r"^(?:(?:and|also|oh|ok(?:ay)?)[,\s]+)?(?:please\s+)?(?P<x>(?:never|don'?t\s+ever|do\s+not\s+ever|please\s+don'?t|"
        r"please\s+do\s+not|do\s+not|don'?t)\s+(?:schedule|book|send|use|share|suggest|recommend|put|include|mention|"
        r"add|call|email|cc|contact|post|give|make|write|reply|use)\b.+)$", re.I)),
    ("preference", "preference", re.compile(
        r"\b(?P<x>i\s+(?:really\s+|much\s+|generally\s+|strongly\s+|definitely\s+|always\s+)?prefer\s+.+|i'?d\s+"
        r"(?:much\s+)?rather\s+(?!not\b).+|my\s+preference\s+is\s+.+|i\s+(?:like|want)\s+(?:my|your)\s+\w+(?:\s+\w+)?\s+"
        r"(?:to\s+be\s+|kept\s+|in\s+|short|brief|concise|formal|informal|casual|detailed|as\s+).+|i\s+(?:love|like)\s+"
        r"it\s+when\s+you\s+.+)$", re.I)),
    # tuning bank, issue 18 (d): a dislike stated as a preference, a bare "No X, just Y", a fact to keep in mind
    ("preference", "preference", re.compile(
        r"\b(?P<x>i(?:'m|\s+am)\s+not\s+(?:a\s+)?(?:big\s+)?fan\s+of\s+.+|"
        r"i\s+(?:really\s+)?(?:dislike|can'?t\s+stand)\s+.+)$",
        re.I)),
    ("constraint", "constraint", re.compile(
        r"^(?P<x>no\s+[\w\s'-]{2,30}?,\s*(?:just|only)\s+.+|no\s+[\w\s'-]{2,30}?\s+please)$", re.I)),
    ("preference", "preference", re.compile(
        r"^(?:please\s+)?(?:remember|keep\s+in\s+mind|bear\s+in\s+mind|note)\s+(?:that\s+)?"
        r"(?P<x>i(?:'m|\s+am|\s+\w+)\s+.+)$",
        re.I)),
    ("standing_order", "standing_order", re.compile(
        r"^(?P<x>(?:keep|use|write|avoid|stick\s+to|answer|reply|respond|format|include|sign|give|show|address)\s+"
        r"(?:.*?\b(?:with|for|to)\s+me\b.*|.+,\s*please[.!]?|(?:your|all)\s+.+))$", re.I)),
    ("standing_order", "standing_order", re.compile(
        r"\b(?P<x>i'?d\s+(?:really\s+)?appreciate\s+it\s+if\s+you\s+(?:always|never)\s+.+)$", re.I)),
    ("preference", "preference", re.compile(r"\b(?P<x>my\s+preferred\s+\w+(?:\s+\w+)?\s+(?:is|are)\s+.+)$", re.I)),
    ("standing_order", "standing_order", re.compile(
        r"^(?:(?:and|also|oh|ok(?:ay)?)[,\s]+)?(?P<x>(?:please\s+)?always\s+(?!been\b).+|(?:from\s+now\s+on|going\s+forward|"
        r"in\s+(?:the\s+)?future),?\s+(?:please\s+)?(?:always\s+)?.+|you\s+should\s+always\s+.+|make\s+sure\s+(?:you\s+)?"
        r"always\s+.+|please\s+(?:keep|use|write|avoid|stick\s+to|answer|reply|respond|format|include|sign)\s+.+)$", re.I)),
]
_WHEN = re.compile(r"(?:,\s*|\s+)(?:when(?:ever)?|while|if|for|in)\s+(?P<w>(?:i'?m\s+|i\s+am\s+|you'?re\s+|you\s+are\s+|"
                   r"it'?s\s+|we'?re\s+)?(?:writing|emailing|drafting|talking|replying|working|cooking|travel+ing|on\s+"
                   r"\w+|at\s+\w+|in\s+\w+|\w+ing)\b[^,.]*)", re.I)
_NOT = re.compile(r"(?:,\s*|\s+)(?:unless|except\s+(?:when|for|if|in|on)?|but\s+not\s+(?:when|for|if|in|on))\s+"
                  r"(?P<w>[^,.]+)", re.I)


def parse(text: str, ctx: ExtractionContext, obs: Observation, voice: str) -> list[Mined]:
    out: list[Mined] = []
    for s in sentences(text):
        sent = s.text
        if sent.rstrip().endswith("?") or any(rx.match(sent) for rx in standing._TRIGGERS):
            continue
        if voice == "assistant" and not re.search(r"\b(?:i'?ll|i\s+will|noted|got\s+it|from\s+now\s+on)\b", sent, re.I):
            continue  # an assistant's own advice is not the user's directive unless it restates one to keep
        if voice == "assistant":
            sent = re.sub(r"^(?:noted|got\s+it|sure|ok(?:ay)?|understood)\s*[,.!:—–-]*\s*", "", sent, flags=re.I)
            # the assistant restating a standing order as its own promise ("I'll always use miles for you")
            sent = re.sub(r"^i(?:'ll|\s+will)\s+always\s+", "Always ", sent, flags=re.I)
            # "I'll call you Sam from now on" (an accepted offer, I145) is the standing order "from now on, call …"
            sent = re.sub(r"^i(?:'ll|\s+will)\s+(?P<x>.+?),?\s+(?:from\s+now\s+on|going\s+forward|in\s+future)(?P<e>[.!]?)$",
                          r"From now on, \g<x>\g<e>", sent, flags=re.I)
        for memory_type, assertion, rx in _RULES:
            m = rx.search(sent)
            if not m:
                continue
            if memory_type == "vocabulary_mapping":
                a, b = clean_clause(m.group("a")), clean_clause(m.group("b"))
                if not a or not b or len(b.split()) > 15:
                    break
                summary = f"“{a}” means {b}"
                applies, not_applies = [f"the user says “{a}”"], []
            else:
                x = clean_clause(m.group("x"))
                if voice == "assistant":
                    x = re.sub(r"^(?:noted|got\s+it)[,.!\s—-]*", "", x, flags=re.I)
                not_applies = [clean_clause(n.group("w"))[:300] for n in _NOT.finditer(x)]
                core = _NOT.sub("", x)
                applies = [clean_clause(w.group("w"))[:300] for w in _WHEN.finditer(core)] or ["always"]
                summary = clean_clause(core)
                if not 3 <= len(summary.split()) <= 40:
                    break
            scope = "context_specific" if applies != ["always"] and memory_type != "vocabulary_mapping" else "global"
            payload: dict[str, Any] = {
                "memory_type": memory_type, "summary": summary[:500], "assertion_class": assertion,
                "applies_when": applies, "does_not_apply_when": not_applies, "scope": scope,
                "priority_class": "strong" if memory_type == "constraint" else "default",
                "source_certainty": "user_explicitly_stated" if voice == "user" else "inferred_from_actions",
                "injection_format": "cautionary" if memory_type == "constraint" else "imperative"}
            mm = Mined("memory_directive", summary[:300], payload, s)
            if voice == "user":
                # §20B: the user's own directive is a directive-level write (I22)
                mm.lifecycle_state, mm.lifecycle_substate = "confirmed", "active"
            out.append(mm)
            break
    return out


@register("directives")
def mine_directives(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    return run_class(ctx, obs, "directives", parse)


from kenning.intake.extractors import register_cue  # noqa: E402

register_cue("directives", lambda text: any(p.search(part.strip()) for part in re.split(r"(?<=[.!?])\s+|\n", text)
                                            for _, _, p in _RULES))
