"""Standing procedures (§4A.1.8): "whenever …, …", "every Monday …", "if X happens, Y" → trigger conditions,
exclusions ("unless …"), action steps, safety ``confirm_first`` unless the user states otherwise; a new one is a
candidate until the user confirms it (§6.1, §18.9)."""

from __future__ import annotations

import re
from typing import Any

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining.base import run_class
from kenning.intake.mining.attribution import option_segments
from kenning.intake.mining.common import Mined, Span, clean_clause, sentences

_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_TRIGGERS = [
    re.compile(r"^(?:(?:and|also|so|ok(?:ay)?|please)[,\s]+)?(?:whenever|every\s+time|each\s+time|any\s*time)\s+"
               r"(?P<t>.+?),\s*(?:please\s+)?(?P<a>.+)$", re.I),
    re.compile(rf"^(?:(?:and|also|please)[,\s]+)?(?P<t>(?:every|each|on)\s+(?:{_DAYS}s?|morning|evening|night|week|"
               rf"month|day|weekday|weekend|first\s+of\s+the\s+month|friday\s+afternoon|{_DAYS}\s+(?:morning|"
               rf"afternoon|evening)))\b[^,]*?,\s*(?:please\s+)?(?P<a>.+)$", re.I),
    re.compile(r"^(?:(?:and|also|please)[,\s]+)?if\s+(?:ever\s+)?(?P<t>.+?\b(?:happens|comes\s+in|arrives|shows\s+up|"
               r"is\s+received|gets\s+\w+|goes\s+\w+|drops|fails|is\s+late|is\s+overdue|changes|emails?\s+me|"
               r"sends?\s+me|texts?\s+me|calls?\s+me)\b[^,]*?),\s*(?:please\s+)?(?:then\s+)?(?P<a>.+)$", re.I),
    re.compile(r"^(?:please\s+)?(?P<a>(?:remind|tell|ping|notify|alert|email|text|warn)\s+(?:me|you)\b.+?)\s+(?:whenever|every\s+"
               r"time|each\s+time|any\s*time)\s+(?P<t>.+)$", re.I),
    re.compile(rf"^(?:please\s+)?(?P<a>(?:remind|tell|ping|notify|alert|email|text|warn)\s+(?:me|you)\b.+?)\s+(?P<t>(?:every|each)"
               rf"\s+(?:{_DAYS}|morning|evening|week|month|day))\b.*$", re.I),
]
# tuning bank, issue 18 (d): "when …" / "if …" / "in the event that …" rules, and an action first ("Please file
# it … every time …"). "when" and "if" start many sentences that are not rules, so these need an action that is
# an instruction to the assistant (an imperative verb of this list, or "always"/"please" before it).
_IMPERATIVE = (r"(?:please\s+|always\s+|(?:i\s+want|i'?d\s+like)\s+you\s+to\s+)*(?:remind|tell|send|file|flag|add|"
               r"block|save|page|notify|ping|e-?mail|text|forward|archive|move|put|create|book|decline|accept|"
               r"look\s+up|"
               r"check|update|log|let\s+me\s+know|draft|reply|mark|label|sort|summari[sz]e|give|share|post|delete|"
               r"cancel|schedule|alert|warn|copy|print|pay|record|note|ask|order)\b")
_TRIGGERS += [
    re.compile(rf"^(?:(?:from\s+now\s+on|going\s+forward|in\s+future|and|also|ok(?:ay)?)[,\s]+)*(?:when|if|in\s+the\s+"
               rf"event\s+that|in\s+case|once)\s+(?P<t>.+?),\s*(?P<a>{_IMPERATIVE}.+)$", re.I),
    re.compile(rf"^(?P<a>{_IMPERATIVE}.+?)\s+(?:whenever|every\s+time|each\s+time|any\s*time)\s+(?P<t>.+)$", re.I),
    re.compile(rf"^(?P<t>on\s+the\s+(?:first|last|\d+\w*)\s+(?:day\s+|working\s+day\s+)?of\s+(?:every|each|the)\s+"
               rf"(?:month|week|year)|(?:every|each)\s+(?:{_DAYS}|morning|evening|night|weekday|week|month)\s+at\s+"
               rf"[\w:]+)\s*,\s*(?:please\s+)?(?P<a>.+)$", re.I),
]
_EXCL = re.compile(r"[,\s]+(?:unless|except\s+(?:when|if|for|on)|but\s+not\s+(?:if|when|for|on))\s+(?P<x>.+)$", re.I)
_AUTO = re.compile(r"\b(?:without\s+asking|automatically|no\s+need\s+to\s+(?:ask|check|confirm)|don'?t\s+(?:ask|"
                   r"check\s+with\s+me))\b", re.I)
_NOTIFY = re.compile(r"\b(?:just|only)\s+(?:let\s+me\s+know|tell\s+me|notify\s+me|flag\s+it)\b", re.I)
# an action is something to do: not a reaction ("no rush") nor the user narrating ("I fail"); "I'll …" is fine
_NOT_ACTION = re.compile(r"^(?:no\s+(?:rush|hurry|worries|problem)|never\s+mind|it'?s\s+|that'?s\s+|i\s+(?!will\b|want\b|"
                         r"need\b|must\b|should\b|always\b|\w+\s+(?:you|it|them)\b)\w+)", re.I)
_QUESTIONISH = re.compile(r"\b(?:what|should|would|could)\b.*\?$", re.I)


def signal_type(trigger: str) -> str:
    t = trigger.lower()
    if re.search(r"\b(?:e-?mail|mail|inbox|message\s+from|newsletter)\b", t):
        return "email_received"
    if re.search(r"\b(?:file|upload|download|document|folder|attachment|pdf|photo)s?\b", t):
        return "file_added"
    if re.search(r"\b(?:meeting|calendar|appointment|event|call\s+with|invite)s?\b", t):
        return "calendar_event"
    if re.search(rf"\b(?:every|each|on)\s+(?:{_DAYS}|morning|evening|night|week|month|day|weekday|weekend|first)", t):
        return "time_based"
    if re.search(r"\b(?:i\s+ask|i\s+say|i\s+tell\s+you|i\s+type)\b", t):
        return "user_request"
    return "system_event"


def parse(text: str, ctx: ExtractionContext, obs: Observation, voice: str) -> list[Mined]:
    out: list[Mined] = []
    spans = sentences(text)
    if voice == "assistant":
        # the assistant's numbered options in one sentence, each a rule of its own (I142)
        spans = [x for s in spans for x in (option_segments(s.text) and [
            Span(s.start + o.start, s.start + o.end, o.text) for o in option_segments(s.text)] or [s])]
    for s in spans:
        sent = s.text
        if sent.rstrip().endswith("?") or _QUESTIONISH.search(sent):
            continue
        # "I suggest a rule: whenever …" — the rule is what follows the colon
        if voice == "assistant":
            # the assistant proposing the rule as its own act (I144): "I could archive … whenever …", "I can set a
            # rule so that if …, …", "How about this: every weekday at 9, …"
            sent = re.sub(r"^(?:(?:i\s+(?:could|can|will|would|might)|i'(?:ll|d))\s+(?:also\s+)?(?:set\s+(?:up\s+)?a\s+rule\s+"
                          r"(?:so\s+that|that|where)\s+)?|suggestion\s*:\s*)", "", sent, flags=re.I)
        # "remind me every Friday to review the budget": the action's object after the time (I144)
        sent = re.sub(r"^((?:please\s+)?(?:remind|tell|ping|notify|alert|text|email|warn)\s+(?:me|you))\s+((?:every|each)\s+"
                      r"[^,]+?)\s+(to\s+.+?)([.!]?)$", r"\1 \3 \2\4", sent, flags=re.I)
        lead = re.match(r"^[^:]{0,60}:\s*", sent)
        for rx in _TRIGGERS:
            m = rx.match(sent) or (rx.match(sent[lead.end():]) if lead else None)
            if not m:
                continue
            trigger, action = clean_clause(m.group("t")), clean_clause(m.group("a"))
            exclusions: list[str] = []
            for part in ("a", "t"):
                src = action if part == "a" else trigger
                x = _EXCL.search(src)
                if x:
                    exclusions.append(clean_clause(x.group("x"))[:300])
                    if part == "a":
                        action = clean_clause(src[:x.start()])
                    else:
                        trigger = clean_clause(src[:x.start()])
            if voice == "assistant":
                # the assistant offering the rule as its own act: "…, I could remind you to …" (I144)
                action = re.sub(r"^i\s+(?:could|can|would|will|might|may)\s+|^i'(?:d|ll)\s+", "", action, flags=re.I)
            if len(action.split()) < 2 or len(trigger.split()) < 1 or len(action.split()) > 40 \
                    or _NOT_ACTION.match(action):
                break
            safety = "auto_safe" if _AUTO.search(sent) else "notify" if _NOTIFY.search(sent) else "confirm_first"
            steps = [clean_clause(p) for p in re.split(r",?\s+(?:and\s+then|then|and\s+also)\s+", action) if p.strip()]
            name = f"{trigger} → {action}"
            payload: dict[str, Any] = {
                "trigger_summary": trigger[:300],
                "trigger_conditions": [{"signal_type": signal_type(trigger), "conditions": [trigger[:300]]}],
                "trigger_exclusions": exclusions, "action_summary": action[:300],
                "action_steps": [{"step_index": i, "intent": st[:500],
                                  "requires_user_confirmation": safety == "confirm_first"}
                                 for i, st in enumerate(steps, 1)],
                "safety_class": safety}
            out.append(Mined("standing_procedure", name[:300], payload, s))
            break
    return out


@register("standing")
def mine_standing(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    return run_class(ctx, obs, "standing", parse)


from kenning.intake.extractors import register_cue  # noqa: E402

# the standing rules anchor at a sentence start: try each line and sentence
# and, as parse does, after a short "lead:" ("Standing instruction: if …, …")
register_cue("standing", lambda text: any(p.search(part.strip()) or p.search(re.sub(r"^[^:]{0,60}:\s*", "", part.strip()))
                                          for part in re.split(r"(?<=[.!?])\s+|\n", text) for p in _TRIGGERS))
