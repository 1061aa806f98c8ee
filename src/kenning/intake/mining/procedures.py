"""Procedures (§4A.1.3): steps the user wrote (or accepted from the assistant) become semantic intents; literals
(emails, addresses, paths, quoted strings, numbers) are scrubbed to placeholders unless the user confirms them.
Lifecycle: captured → validated after two reported successes ("followed my backup routine again, worked")."""

from __future__ import annotations

import re
from typing import Any

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining import steps as st
from kenning.intake.mining.base import USER_UNITS, run_class
from kenning.intake.mining.common import Mined, Span, clean_clause, nodes_of_kind, provenance, sentences, write
from kenning.intake.mining.match import best_match
from kenning.knowledge.contracts import placeholder_for
from kenning.knowledge.lifecycle import procedure_transition
from kenning.knowledge.ops import Evidence, UpdateNode
from kenning.store import knowledge as ksql

_HEADER = re.compile(
    r"(?:here'?s\s+how\s+(?:i|you|to)\s+|this\s+is\s+how\s+(?:i|to)\s+|how\s+i\s+(?:always\s+|usually\s+)?|"
    r"my\s+(?:usual\s+|standard\s+)?(?:process|routine|procedure|steps|recipe|workflow|method|checklist)\s+(?:for|to|when)\s+|"
    r"(?:the\s+)?steps\s+(?:to|for)\s+|when\s+i\s+(?P<w>[^,:]{3,60}),\s*i\s+(?=first\b|start\s+by\b|always\s+start)|"
    r"to\s+(?P<t2>[^,:]{3,60}),\s*(?:i|you)\s+(?=first\b|start\s+by\b)|"
    # tuning bank, issue 18 (d): "Notes on how to …:", "Procedure for when I …:", "To … I usually a, b and
    # lastly c", and an assistant's "A quick way to …:"
    r"(?:notes\s+on\s+|guide\s+to\s+)?how\s+to\s+(?=[^:\n]{3,80}:)|"
    r"here'?s\s+what\s+i\s+do\s+(?:to|when\s+i|for)\s+(?=[^:\n]{3,80}:)|"
    r"\bi\s+(?:always\s+|usually\s+|normally\s+)?(?=[^:\n]{3,80}?\s+(?:like\s+this|in\s+(?:two|three|four|five|six|"
    r"\d+|a\s+few)\s+(?:easy\s+|simple\s+)?steps)\s*:)|"
    r"(?:the\s+)?(?:procedure|process|routine|workflow|checklist)\s+(?:for|to)\s+(?:when\s+i\s+)?(?=[^:\n]{3,80}:)|"
    r"a\s+(?:quick|simple|good|easy|better|reliable)\s+way\s+to\s+(?=[^:\n]{3,80}:)|"
    r"^(?:to|before(?!\s+(?:i|we)\s))\s+(?P<t3>[^,:]{3,60}?),?\s+i\s+(?=usually\b|always\b|normally\b|typically\b)|"   # "before" I144
    # round 3 (I112), structural: "(ok so) to <task>: <steps>", "steps I follow to …:", "whenever I <task> I do it
    # the same way:", and "how to <task>" followed by a numbered or bulleted list on the next lines
    r"(?:^|\b(?:ok(?:ay)?|so|right)\s+(?:so\s+)?)to\s+(?=[^:\n.]{3,80}:)|"
    r"(?:the\s+)?steps\s+i\s+(?:follow|use|take|go\s+through)\s+(?:to|for|when\s+i)\s+(?=[^:\n]{3,80}:)|"
    r"when(?:ever)?\s+i\s+(?P<w2>[^,:\n]{3,60}?),?\s+i\s+(?:always\s+)?do\s+it\s+(?:the\s+same\s+way|like\s+this)"
    r"\s*:|"
    r"\bhow\s+to\s+(?=[^:\n]{3,80}\n\s*(?:\d+[.)]|[-*•])\s)|"
    # "… how to <task>. First …", "the way I <task>:", "I <task> as follows:", a routine of mine, named
    r"\bhow\s+to\s+(?=[^:\n.]{3,80}[.:!]?\s+(?:first(?:ly)?|step\s+(?:1|one)|to\s+start|start\s+by)\b)|"
    r"(?:the\s+)?way\s+i\s+(?:usually\s+|always\s+|normally\s+)?(?=[^:\n]{3,80}?(?:\s+is)?\s*:)|"
    r"\bi\s+(?:always\s+|usually\s+|normally\s+)?(?=[^:\n]{3,80}?\s+(?:as\s+follows|like\s+so)\s*:)|"
    r"(?:here'?s\s+|this\s+is\s+)my\s+(?=[\w\s-]{3,40}?\s+(?:routine|process|procedure|workflow|method|system|recipe|"
    r"checklist|ritual)\b)|"
    r"\bmy\s+(?=[\w\s'-]{3,40}?\s+(?:routine|process|procedure|workflow|method|system|checklist|ritual)\s*(?:is|goes|"
    r"looks)?(?:\s+like\s+this|\s+as\s+follows)?\s*:)|"
    r"(?:^|\bhere'?s\s+|\bhere\s+is\s+)what\s+i\s+do\s+(?:to|when\s+i|for|before|after)\s+|"
    r"(?:the\s+)?(?:best|easiest|quickest|simplest|only)\s+way\s+(?:i'?ve\s+found\s+)?to\s+"
    r"(?=[^?\n]{3,80}?\s+is\s+to\s)|"
    # round 5 (I144): the assistant's "you could try this when <task>:" and "one approach that works for <task>:"
    r"(?:you\s+(?:could|might|can|may\s+want\s+to)\s+)?try\s+this\s+(?:routine\s+|process\s+|approach\s+)?"
    r"(?:when\s+|for\s+|to\s+)(?=[^:\n]{3,80}:)|"
    r"(?:here'?s\s+)?(?:a|my)\s+(?:good\s+|simple\s+|quick\s+)?(?:routine|process|system|suggestion|checklist|"
    r"workflow)\s+(?:you\s+(?:could|can|might)\s+(?:use|follow|try)\s+)?(?:for|to|before|after|when)\s+(?:your\s+)?"
    r"(?=[^:\n]{3,80}:)|"
    r"\b(?:one|an?|another)\s+(?:approach|way|method|idea|trick|routine|system)\s+(?:that\s+works\s+(?:well\s+|"
    r"nicely\s+)?)?(?:for|to)\s+(?=[^:\n]{3,80}:)|"
    r"^for\s+(?P<t5>[^,:]{3,60}),\s*i\s+(?=first\b|start\s+by\b|always\b|usually\b|normally\b))"
    r"(?P<task>[^:\n.—–,]{3,80})?", re.I)
MAX_TASK_WORDS = 12   # "get the spare room ready when guests come to stay" is one task (I135)
_NUMBERED = st.MARKER   # numbers, bullets, checkboxes, "Step 2:" (round 4, I134)
# ordinals count only at a clause's start ("swap a third of the water" is one step, I135)
_SEQ = re.compile(r"(?:(?:^|[,.;:]\s*|\n\s*|\bi\s+)(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|1st|2nd|3rd|4th)|"
                  r"(?:^|[,.;:]\s*|\s+and\s+|\s+)(?:to\s+start|start\s+by|begin\s+by|then|next|"
                  r"after\s+that|afterwards|finally|lastly|and\s+then|"
                  r"once\s+(?:that'?s|it'?s)\s+(?:done|finished)|last\s+of\s+all|"
                  r"to\s+finish(?:\s+off)?|"
                  # round 4 (I135): "and I finish by / end with …", "and last I …"
                  r"(?:i\s+|we\s+)?(?:finish|end|wrap\s+up)(?:\s+off|\s+up)?\s+(?:by|with)|last(?=,?\s+(?:i|we|you)\b)))"
                  r"\b[,:]?\s*", re.I)
_SUCCESS = re.compile(r"\b(?:followed|used|ran|did|tried|went\s+through)\s+(?:my|the|your|that)\s+(?P<t>.+?)\s+"
                      r"(?:process|routine|procedure|steps|recipe|checklist|workflow|method)\b.*?\b(?:worked|went\s+"
                      r"(?:well|fine|smoothly|perfectly)|succeeded|success|no\s+problems?)"
                      r"|\bthe\s+(?P<t2>.+?)\s+(?:process|routine|procedure|steps|recipe|checklist|workflow)\s+"
                      r"(?:worked|went\s+(?:well|fine|smoothly|perfectly)|succeeded)", re.I)
_CONFIRM_LITERALS = re.compile(r"\b(?:keep|use)\s+(?:the\s+)?exact\s+(?:values|names|addresses|paths)\b", re.I)
_LITERALS = [
    ("email_address", re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")),
    ("url", re.compile(r"\bhttps?://\S+")),
    ("file_path", re.compile(r"(?:~|\.{1,2})?/(?:[\w.-]+/)+[\w.-]*|\b[A-Z]:\\\S+")),
    ("quoted_value", re.compile(r"[\"“]([^\"”]{1,80})[\"”]")),
    ("number", re.compile(r"\b\d{2,}(?:[.,]\d+)?\b")),
]


def scrub(intent: str) -> tuple[str, list[dict[str, Any]]]:
    """The intent with literal values replaced by placeholders, and the parameters they were."""
    params: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    out = intent
    for name, rx in _LITERALS:
        def repl(m: re.Match) -> str:
            counts[name] = counts.get(name, 0) + 1
            pname = name if counts[name] == 1 else f"{name}_{counts[name]}"
            params.append({"name": pname, "value": m.group(0)[:200], "literal_retention_class": "placeholder_only"})
            return placeholder_for(pname)
        out = rx.sub(repl, out)
    return out, params


_STEP_N = re.compile(r"(?:^|[;,.]\s*)step\s+(?:\d+|one|two|three|four|five|six)\s*[,:.)-]?\s*", re.I)


def _steps_from(text: str, header_end: int) -> list[str]:
    body = text[header_end:]
    numbered = [m.group("s").strip() for m in _NUMBERED.finditer(body)]
    if len(numbered) >= 2:
        return numbered
    # "1) a 2) b 3) c" on one line (I134): numbers in order
    inline = re.split(r"(?:^|[\s:])\(?[1-9][.)]\s+", body)
    if len(inline) >= 3 and re.search(r"(?:^|[\s:])\(?1[.)]\s", body) and re.search(r"\s\(?2[.)]\s", body):
        got = [clean_clause(p) for p in inline[1:] if len(p.split()) >= 2]
        if len(got) >= 2:
            return got
    # "step 1, a; step 2, b; step 3, c" on one line
    if len(_STEP_N.findall(body)) >= 2:
        inline = [clean_clause(p) for p in _STEP_N.split(body)[1:]]
        inline = [p for p in inline if len(p.split()) >= 2]
        if len(inline) >= 2:
            return inline
    # only text after the first sequence word ("first", "then", …) is a step
    first = _SEQ.search(body)
    steps: list[str] = []
    if first:
        tail = body[first.start():]
        parts = [clean_clause(p) for p in _SEQ.split(tail)]
        steps = [p for p in parts if len(p.split()) >= 2]
        lead = body.lstrip()
        colon = body.rfind(":", 0, first.start())
        if not lead.startswith(":") and colon >= 0 and "\n" not in body[colon:first.start()]:
            lead = body[colon:]   # "In short: a, then b …" — the step after a colon inside the text (I135)
        if lead.startswith(":") and "\n" not in lead[:max(0, lead.find(tail))]:
            # "to <task>: a, then b, finally c" — the first step comes before any sequence word (I112)
            head = clean_clause(lead[1:lead.find(tail) if tail in lead else 0].strip(" ,;"))
            heads = [clean_clause(x) for x in re.split(r"\s*;\s*|" + _LIST_SPLIT.pattern, head, flags=re.I) if x]
            steps = [x for x in heads if len(x.split()) >= 2] + steps
    if len(steps) < 2 and body.lstrip().startswith(":") and len(_AT_TIME.findall(body)) >= 2:
        # steps with times (I157): "…: at 9, a. At 10, b." — one step per time, the time kept in its intent
        timed = [clean_clause(_AT_TIME_COMMA.sub(r"\g<t> ", x)) for x in re.split(r"(?<=[.;!])\s+|\n",
                                                                                   body.lstrip()[1:].strip())]
        timed = [x for x in timed if _AT_TIME.match(x) and len(x.split()) >= 3]
        if len(timed) >= 2:
            return timed
    if len(steps) < 2 and body.lstrip().startswith(":"):
        # steps listed after a colon without sequence words: "…: a, b, then c" / "…: a; b; c"
        line = re.split(r"[.!?](?:\s|$)|\n", body.lstrip()[1:].strip(), maxsplit=1)[0]
        listed = [clean_clause(p) for p in re.split(r"\s*;\s*|" + _LIST_SPLIT.pattern, line, flags=re.I) if p]
        listed = [p for p in listed if len(p.split()) >= 2]
        if len(listed) >= 2:
            return listed
    if len(steps) < 2 and (arrows := st.arrow_steps(body.lstrip(" :\n"))):
        return arrows   # "a -> b -> c" (I134)
    return steps if len(steps) >= 2 else []


_AT_TIME = re.compile(r"(?:^|(?<=[.;!:]\s)|(?<=[.;!:]))\s*(?:at|by|around|from)\s+(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?|noon|"
                      r"midday|midnight)\b", re.I)
_AT_TIME_COMMA = re.compile(r"^(?P<t>\s*(?:at|by|around|from)\s+(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?|noon|midday|midnight))"
                            r"\s*,\s*", re.I)
_LIST_SPLIT = re.compile(r"\s*(?:-+>|→|=>|⇒|➜|➔|>>)\s*|\s+>\s+|"   # arrows: a -> b -> c, a > b (I134, I144)
                         r",\s*(?:and\s+)?(?:then\s+|lastly\s+|finally\s+|next\s+)?|\s+and\s+(?:then\s+|lastly\s+|"
                         r"finally\s+)?|\s+then\s+", re.I)


def _inline_steps(text: str, h: re.Match, voice: str) -> list[Mined]:
    """"To <task> I usually a, b and lastly c": the steps are the comma/and list after the habit word."""
    task = clean_clause(h.group("t3"))
    # the header's trailing task group would swallow the first step ("… I always print the handouts, …", I144)
    end = h.start("task") if h.group("task") else h.end()
    body = re.sub(r"^(?:usually|always|normally|typically)\s+", "", text[end:], flags=re.I)
    body = re.split(r"[.!?](?:\s|$)", body, maxsplit=1)[0]
    steps = [clean_clause(p) for p in _LIST_SPLIT.split(body) if p and len(p.split()) >= 2]
    # three acts at least: "before exams I always get nervous and sleep badly" is no routine (I144)
    if len(steps) < 3 or not 1 <= len(task.split()) <= MAX_TASK_WORDS:
        return []
    return [_mined(text, task, steps, Span(h.start(), end + len(body), text[h.start():end + len(body)][:500]),
                   voice)]


_MODIFIED = re.compile(r"\b(?:my|our|the|a|this)\s+(?P<mod>(?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?P<noun>routine|process|checklist|"
                       r"procedure|workflow|method|system|ritual|drill|approach|recipe|steps)\s+(?P<p>for|to|with|on)\s+"
                       r"(?P<t>[^:\n.!?]{3,80})", re.I)
_FLUFF = re.compile(r"\b(?:usual|normal|standard|go-to|tried\s+and\s+tested|tried-and-tested|favourite|favorite|simple|"
                    r"quick|own|trusty|current|new|old|little|basic|full|whole|typical)\b", re.I)


def _mined(text: str, task: str, steps_text: list[str], span: Span, voice: str) -> Mined:
    task = re.sub(r"\s+would\s+be$", "", task, flags=re.I)   # "a good process for onboarding would be:" (I144)
    task = re.sub(r"\s+(?:i|we|are|is)$", "", task.strip(), flags=re.I)   # "each time I travel abroad I:", "… are:" (I151)
    # named by what it achieves (I151): not by how many steps, nor by the kind of note it is, nor by when
    task = re.sub(r"\s+in\s+(?:\d+|two|three|four|five|six|a\s+few)\s+(?:\w+\s+)?steps$", "", task, flags=re.I)
    task = re.sub(r"^(?:(?:quick|pro|top|my|a)\s+)?(?:tip|hack|trick|secret|note|reminder)s?\s+(?:for|on|to|with)\s+", "", task,
                  flags=re.I)
    task = re.sub(r"^(?:every|each|on)\s+\w+(?:\s+\w+)?\s+(?:i|we)\s+(?=\w+\s+\w)", "", task, flags=re.I)
    task = re.sub(r"^(?:i|we)'?ve\s+been\s+", "", task, flags=re.I)
    task = re.sub(r"\s+(?:that\s+)?(?:i|we)\s+(?:follow|use|do|have|swear\s+by)$", "", task, flags=re.I)
    task = re.sub(r"^(?:here'?s\s+how|this\s+is\s+how|how|when|while)\s+", "", task, flags=re.I)
    task = re.sub(r"^(?:(?:my|our|the)\s+)?(?:way|process|art|business)\s+of\s+(?=\w+ing\b)", "", task, flags=re.I)
    task = re.sub(r"\s*\([^)]*\)\s*$", "", task)   # "(for future me)"
    task = re.sub(r"\s+(?:works|goes)(?:\s+for\s+(?:me|us))?$", "", task, flags=re.I)
    task = re.sub(r"\s+(?:only\s+)?takes\s+(?:me\s+|us\s+)?(?:about\s+|around\s+)?(?:\w+\s+)?(?:minutes?|hours?|mins?|"
                  r"seconds?|a\s+while|ages|no\s+time)$", "", task, flags=re.I)
    if _ROUTINE_WORD.fullmatch(task) and (par := re.search(r"\((?:for|to|when)\s+(?P<t>[^)]{3,80})\)", text)):
        task = par.group("t")   # "Process: a → b → c (for restringing the guitar)"
    # "my cleaning routine for the bathroom": the thing alone ("the bathroom") does not say what is done (I151)
    if re.match(r"(?:the|a|an|my|our|your)\s", task, re.I) and (mod := _MODIFIED.search(text[:400])) \
            and mod.group("t").lower().startswith(task.lower()[:20]):
        kept = _FLUFF.sub("", mod.group("mod")).strip()
        if kept:
            task = f"{kept} {mod.group('noun')} {mod.group('p')} {task}"
    # "it's simple to descale the kettle" → "descale the kettle"
    task = re.sub(r"^(?:it'?s|it\s+is)\s+(?:\w+\s+)?(?:easy|simple|quick|straightforward|not\s+hard)\s+to\s+", "", task,
                  flags=re.I)
    confirmed = voice == "user" and bool(_CONFIRM_LITERALS.search(text))
    steps = []
    for i, step in enumerate(steps_text[:20], 1):
        step = re.sub(r"^(?:i|we|you)\s+(?=[a-z])", "", step, flags=re.I)   # "you unplug the filter" → the act itself
        intent, params = scrub(step[:500])
        if confirmed:
            for p in params:
                p["literal_retention_class"] = "retain_if_user_confirmed"
            intent = step[:500]
        steps.append({"step_index": i, "intent": intent[:500], "parameters": params})
    name = task[:1].lower() + task[1:]
    payload = {"canonical_name": name[:200], "description": f"how the user does it: {name}"[:1000],
               "use_conditions": [f"when the user wants to {name}"[:300]], "steps": steps,
               "environment": {"app_entity_id": "unspecified", "app_name": "unspecified", "platform": "unknown"},
               "source": "imported"}
    return Mined("procedure", name, payload, span, user_confirmed_literals=confirmed)


_TRAILER = re.compile(r"(?:\s*(?:—|–|-|\.|;|,)\s*|\s*\n\s*)(?:and\s+)?(?:that'?s|thats|this\s+is)\s+"
                      r"(?:(?:exactly|basically|pretty\s+much|roughly|just)\s+)?(?:how|the\s+way|what|(?:the\s+|my\s+)?"
                      r"(?:whole\s+|entire\s+|full\s+|usual\s+)?(?:process|routine|procedure|drill|method|system|ritual|"
                      r"workflow|recipe|steps|checklist)(?:\s+(?:for\s+when|for|when(?:ever)?|to|before|after))?)\s+"
                      r"(?:(?:i|we)\s+)?(?:always\s+|usually\s+|normally\s+)?(?:do\s+(?:to|when\s+i|before\s+i|after\s+i)\s+)?"
                      r"(?P<task>[^.\n!?]{3,80})"
                      # "… that's my fish tank routine", "… that's for cleaning the fish tank" (I135)
                      r"|(?:\s*(?:—|–|-|\.|;|,)\s*|\s*\n\s*)(?:and\s+)?(?:that'?s|thats|this\s+is)\s+(?:(?:my|the)\s+"
                      r"(?P<task2>[\w\s'-]{3,40}?)\s+(?:routine|process|procedure|method|system|ritual|recipe|workflow|"
                      r"drill|checklist)|for\s+(?P<task3>[^.\n!?]{3,80}))\s*[.!]?\s*$", re.I)
# a story told in steps ("… That's how I met my wife") is no routine: its task is in the past tense
_PAST_TASK = re.compile(r"^(?:(?!\w*eed\b|shred\b|embed\b)\w+ed|met|got|found|lost|made|became|learnt|went|came|saw|took|ended\s+up|won|began|"
                        r"broke|fell|ran\s+into|wound\s+up|"
                        # round 6 (I152): irregular pasts a story in steps is told with
                        r"had|was|were|did|said|told|bought|brought|thought|felt|kept|sent|spent|slept|ate|drank|sat|"
                        r"stood|wrote|gave|caught|paid|heard|held|knew|threw|drove|rode|flew|forgot|woke|wore|chose|"
                        r"spoke|froze)\b", re.I)


def _trailing_task(text: str, voice: str) -> list[Mined]:
    """Steps first, task last: "First I a, then I b, and finally I c — that's how I <task>." (I112)."""
    m = _TRAILER.search(text)
    before = text[:m.start()] if m else ""
    # the steps before it: sequence words, list markers, arrows, "Step one: …", or a plain list of three clauses
    plain = [clean_clause(p) for p in re.split(r"\s*;\s*|" + _LIST_SPLIT.pattern, before, flags=re.I) if p] \
        if m and "\n" not in before.strip() and not re.search(r"[.!?]\s", before.strip()) else []
    plain = [p for p in plain if len(p.split()) >= 2]
    if not m or not (_SEQ.search(before) or len(st.marker_steps(before)) >= 2 or st.arrow_steps(before)
                     or len(_STEP_N.findall(before)) >= 2 or len(plain) >= 3):
        return []
    task = clean_clause(m.group("task") or m.group("task2") or m.group("task3"))
    if _PAST_TASK.match(task):
        return []
    flat = ":" + before if ":" not in before and "\n" not in before.strip() else before
    steps = [re.sub(r"^i\s+", "", x, flags=re.I) for x in (_steps_from(flat, 0) or plain)]
    if len(steps) < 2 or not 1 <= len(task.split()) <= MAX_TASK_WORDS:
        return []
    return [_mined(text, task, steps, Span(0, m.end(), text[:m.end()][:500]), voice)]


# someone else's ("her routine", "Dad's process") — but not "here's", "that's", "it's", "let's" (contractions)
_OTHERS = re.compile(r"\b(?:his|her|their|(?!(?:here|there|that|it|let|what|he|she|who|where|how|this|today|tonight|"
                     r"tomorrow|yesterday|week|year|month|day|weekend|morning|evening|monday|tuesday|wednesday|"
                     r"thursday|friday|saturday|sunday|everyone|one)'s)[a-z]+'s)\s*$",   # "today's routine" is mine
                     re.I)
_LEAD_NOUN = re.compile(r"\b(?:how|steps?|routine|process|procedure|method|workflow|checklist|recipe|instructions|"
                        r"ritual|drill)\b", re.I)
_LEAD_TASK = re.compile(r".*\b(?:to|for|when\s+i|how\s+i|whenever\s+i)\s+(?P<task>[^:\n.?!]{3,80}?)\s*[:.]?\s*$", re.I)


def _lead_line_list(text: str, voice: str) -> list[Mined]:
    """A lead line naming a routine / steps / how, then two or more numbered or bulleted steps (I112)."""
    lead, _, rest = text.strip().partition("\n")
    if not _LEAD_NOUN.search(lead) or lead.rstrip().endswith("?") or any(
            _OTHERS.search(lead[:m.start() + 1]) for m in re.finditer(r"\s", lead)):
        return []
    steps = [st for st in (m.group("s").strip() for m in _NUMBERED.finditer(rest)) if len(st.split()) >= 2]
    m = _LEAD_TASK.match(lead)
    if len(steps) < 2 or not m:
        return []
    task = clean_clause(m.group("task"))
    if not 1 <= len(task.split()) <= MAX_TASK_WORDS:
        return []
    # the quote ends with the last step: a closing "Any thoughts?" would read the whole as a question (I135)
    return [_mined(text, task, steps, _span_to_last(text, len(text) - len(text.lstrip()), steps), voice)]


def parse(text: str, ctx: ExtractionContext, obs: Observation, voice: str) -> list[Mined]:
    """The header rules first; then step structure they do not know (I134–I135); then a lead-in and its steps in
    two of the user's messages (I136)."""
    return _parse_rules(text, voice) or _structural(text, voice) or _inline_lead(text, voice) or \
        _task_then_steps(text, voice) or _past_occasion(text, voice) or _noun_title(text, voice) or (
        _continued(text, obs, voice) if voice == "user" else [])


def _parse_rules(text: str, voice: str) -> list[Mined]:
    if (trailed := _trailing_task(text, voice)):
        return trailed
    h = _HEADER.search(text)
    if not h:
        return _lead_line_list(text, voice)
    if _OTHERS.search(text[max(0, h.start() - 30):h.start()]):
        return []  # someone else's routine ("her routine for …", "Dad's process for …") is not the user's (I112)
    if st.PAST_HABIT.search(text[max(0, h.start() - 40):h.end()]):
        return []  # a routine given up ("I used to … like this: …") is no longer how the user does it (I135)
    if h.group("t3"):
        return _inline_steps(text, h, voice)
    task = clean_clause(h.group("task") or h.group("w") or h.group("t2") or h.group("w2") or "")
    if h.group("w2"):
        task = clean_clause(h.group("w2"))
    task = re.sub(r"^(?:to|for|when)\s+", "", task, flags=re.I)
    if h.group("w") or h.group("t2") or h.group("t5"):
        task = clean_clause(h.group("w") or h.group("t2") or h.group("t5"))
    task = re.sub(r"\s*(?:is|goes|looks)(?:\s+like)?(?:\s+this)?$", "", task, flags=re.I)
    # "my process for watering the plants is simple: …" — the task ends at its verb (I135)
    task = re.sub(r"\s+(?:is|are|goes|looks)\s+(?!to\b)\w+$", "", task, flags=re.I)
    task = re.sub(r"\s+(?:as\s+follows|like\s+so)$", "", task, flags=re.I)
    task = re.sub(r"\s+(?:like\s+this|in\s+(?:two|three|four|five|six|\d+|a\s+few)\s+(?:easy\s+|simple\s+)?steps)$",
                  "", task, flags=re.I)
    if not 1 <= len(task.split()) <= MAX_TASK_WORDS:
        return []
    task = re.sub(r"\s+is\s+to\b.*$", "", task, flags=re.I)
    steps_text = _steps_from(text, h.end() if not (h.group("w") or h.group("t2") or h.group("t5")) else h.start())
    if len(steps_text) < 2:
        return []
    span_end = min(len(text), text.find(steps_text[-1][:20]) + len(steps_text[-1]) if steps_text[-1][:20] in text
                   else len(text))
    span = Span(h.start(), max(span_end, h.end()), text[h.start():max(span_end, h.end())][:500])
    return [_mined(text, task, steps_text, span, voice)]


_SAME_WAY = re.compile(r"(?:^|[.!\n]\s*)(?:i|we)(?:'ve|\s+have)?\s+(?:been\s+)?(?:always\s+|usually\s+|normally\s+)?(?P<task>[^:\n.?]{3,80}?)\s+"
                       r"(?:the\s+same\s+way|this\s+way|in\s+this\s+order)(?:\s+(?:every|each)\s+time|\s+for\s+(?:years|ages|decades|a\s+long\s+time))?\s*(?=:)", re.I)
_LEAD_END = re.compile(r":|\n|[.!](?=\s|$)")


def _span_to_last(text: str, start: int, steps: list[str]) -> Span:
    """From the lead to the end of the last step: a trailing question ("Any improvements?") is no part of it."""
    last = steps[-1][:20]
    end = text.find(last, start) + len(steps[-1]) if last and text.find(last, start) >= 0 else len(text)
    end = max(end, start + 1)
    return Span(start, end, text[start:end][:500])


def _structural(text: str, voice: str) -> list[Mined]:
    """Step structure beyond the header rules (I134–I135): "I <task> the same way every time: …"; a lead sentence
    or line naming a routine / steps / how and its task, then the steps (list markers, arrows, sequence words,
    a colon list); a task line over a list ("Back up my laptop:" then 1. 2. 3.)."""
    t = text
    if (m := _SAME_WAY.search(t)) and st.lead_ok(t[:m.end()]):
        task = clean_clause(m.group("task"))
        steps = _steps_from(t, m.end())
        if len(steps) >= 2 and 1 <= len(task.split()) <= MAX_TASK_WORDS:
            return [_mined(text, task, steps, _span_to_last(t, m.start(), steps), voice)]
    start = len(t) - len(t.lstrip())
    for k, end in enumerate(_LEAD_END.finditer(t)):
        if k >= 3:
            break
        lead = t[start:end.start()]
        if st.LEAD_NOUN.search(lead) and st.lead_ok(lead) and (task := st.task_of_lead(lead)):
            body = t[end.start():]
            steps = st.marker_steps(body) or _steps_from(body, 0) or (
                _steps_from(":" + body.lstrip(" .:!"), 0) if not body.startswith("\n") else [])
            if len(steps) >= 2 and not any(_PAST_TASK.match(re.sub(r"^(?:i|we|you)\s+", "", x, flags=re.I))
                                           for x in steps):   # a story in steps is no routine (I152)
                task = clean_clause(task)
                return [_mined(text, task, steps, _span_to_last(t, start, steps), voice)]
        start = end.end() + (len(t[end.end():]) - len(t[end.end():].lstrip()))
    first, _, rest = t.strip().partition("\n")
    title, colon, items = first.partition(":")
    if colon and items.strip() and (task := st.titled_task(title + ":")):
        # "Water the plants: fill the can, check the soil, mist the leaves" — three verb clauses on the task's line
        listed = [clean_clause(p) for p in re.split(r"\s*;\s*|" + _LIST_SPLIT.pattern, items, flags=re.I) if p]
        listed = [p for p in listed if len(p.split()) >= 2]
        if len(listed) < 3 and re.search(r"(?:^|\s)\(?1[.)]\s", items):
            listed = _steps_from(":" + items.strip(), 0)   # "Defrosting the freezer, step by step: 1. a 2. b 3. c"
        if len(listed) >= 3 and not any(_DETERMINER.match(p) for p in listed):
            s0 = len(t) - len(t.lstrip())
            return [_mined(text, clean_clause(task), listed, _span_to_last(t, s0, listed), voice)]
    if (task := st.titled_task(first)) and len(steps := st.marker_steps(rest) or st.plain_lines(rest)) >= 2:
        s0 = len(t) - len(t.lstrip())
        return [_mined(text, clean_clause(task), steps, _span_to_last(t, s0, steps), voice)]
    return []


_BODY_LEAD = re.compile(r"^(?:\s|[:\-—–=,]|\b(?:the\s+(?:order|drill|routine|process|steps?|sequence|method)\s+(?:is|are|goes)|it'?s|is|are|goes|looks|like\s+this|as\s+follows|basically|simply|simple|easy|"
                        r"roughly|always|usually|normally|then|in\s+this\s+order|the\s+same\s+way|every\s+time|"
                        r"(?:every|each|once\s+a)\s+\w+|"
                        r"each\s+time|(?:i|we|you)(?:\s+(?:always|usually|normally|just))?(?:\s+(?:do|follow|use|go\s+"
                        r"through|have))?(?:\s+(?:a\s+few|two|three|four|five|\d+)\s+(?:things|steps))?)\b)+", re.I)
_DETERMINER = re.compile(r"^(?:a|an|the|some|my|our|your|his|her|their|i'll|we'll|i'd)\b", re.I)
_GERUNDS = re.compile(r"\bby\s+(?=\w+ing\b)", re.I)


def _inline_lead(text: str, voice: str) -> list[Mined]:
    """One sentence names the task and goes on with its steps (I135): "Before I <task> I always a, b and c",
    "So my routine for <task> is basically a, b and c", "My usual drill when <task> - a, b, c", "In case I forget:
    to <task> you a, b, c", "I <task> by a-ing, b-ing and c-ing". The steps start with a verb (a list of things —
    "a bike, a tent" — is no procedure) and the task is not a past event."""
    seg_start = 0
    for seg in re.split(r"(?<=[.!:])\s+|\n", text)[:3]:
        seg_start = text.find(seg, seg_start)
        m, task, body = None, "", ""
        for m in [*st.TASK_INTRO.finditer(seg), *_GERUND_TASK.finditer(seg)]:
            rest = seg[m.end():]
            if m.re is _GERUND_TASK:
                task, body = m.group("task"), seg[m.end():]
            else:
                cut = st.TASK_END.search(rest)
                task = st.clean_task(rest[:cut.start()] if cut else rest)
                body = rest[cut.start():] if cut else ""
            if st.is_task(task):
                break   # "my usual drill when watering …": "usual" is no task, the next introducer names it
        else:
            continue
        if not st.lead_ok(seg[:m.end()] + task + " ") or re.search(r"'s$", task):
            continue   # someone else's routine, a question, a habit given up
        body = body + text[seg_start + len(seg):]
        if re.match(r"\s*,?\s*(?:i|we)(?:'d|\s+would|'ll|\s+will|\s+might|\s+could)\b", body, re.I):
            continue   # "If I have to X, I'd first …": what the user would do, not what they do (I152)
        body = _BODY_LEAD.sub("", body)
        if not task or not 1 <= len(task.split()) <= MAX_TASK_WORDS or _PAST_TASK.match(task):
            continue
        steps = _steps_from(":" + body, 0) if body else []
        steps = [re.sub(r"^(?:i|we|you)\s+", "", x, flags=re.I) for x in steps]
        if len(steps) < 2 or any(_DETERMINER.match(x) or _PAST_TASK.match(x) for x in steps):
            continue
        if len(steps) < 3 and not (st.LEAD_NOUN.search(seg[:m.end()]) or _HABIT.search(seg)):
            continue   # two bare clauses after "when I …" need a routine word or a habit to be steps
        return [_mined(text, clean_clause(task), steps, _span_to_last(text, seg_start, steps), voice)]
    return []


_GERUND_TASK = re.compile(r"(?:^|[.!]\s+)(?:(?:i|we)\s+(?:always\s+|usually\s+|normally\s+)?|(?=[A-Za-z]+\s+(?:the|a|an|my|your|our|it|them)\s))(?P<task>(?!(?:was|were|had|did|"
                          r"got|went|start|started|begin|began|finish|finished|end|ended|kick\s+off)\b)[^,.:\n]{3,60}?)"
                          r"\s+by\s+(?=\w+ing\b)", re.I)
_HABIT = re.compile(r"\b(?:always|usually|normally|every\s+(?:time|day|week|morning|evening|month)|each\s+time|"
                    r"first\s+thing|like\s+this|in\s+this\s+order|the\s+same\s+way)\b", re.I)


def _continued(text: str, obs: Observation | None, voice: str) -> list[Mined]:
    """The lead-in in one message of the user's, the steps in the next (I136): "I'll write down how I <task>, one
    sec" … "1. a 2. b 3. c"; "My routine when I <task> starts with a." … "Then I b, and finally I c."."""
    if obs is None or not obs.context:
        return []
    t = st.ACK_HEAD.sub("", text.strip(), count=1).strip()   # "good idea. a, b, c" (I154)
    steps = st.marker_steps(t) or st.plain_lines(t) or _step_n(t)
    if len(steps) < 2 and st.SEQ_START.match(t):
        steps = [re.sub(r"^(?:i|we)\s+", "", x, flags=re.I) for x in (clean_clause(p) for p in _SEQ.split(t)) if x]
        steps = [x for x in steps if len(x.split()) >= 2]
    if len(steps) < 2 and "\n" not in t and not t.endswith("?"):
        # the whole message is the steps: "I unplug the filter, then I swap …" / "Unplug the filter, swap …, wipe …"
        listed = [re.sub(r"^(?:i|we|you)\s+", "", x, flags=re.I) for x in _steps_from(":" + t, 0)]
        if len(listed) >= 3 or (len(listed) == 2 and _SEQ.search(t)):
            steps = [] if any(_DETERMINER.match(x) or _PAST_TASK.match(x) for x in listed) else listed
    if not steps:
        return []
    last = obs.context[-1]
    if last.get("role") == "assistant" and (asked := st.asked_task(last.get("text") or "")):
        # the assistant asked how the user does it: the answer's steps are the procedure, named by the question (I153)
        if not any(_DETERMINER.match(x) or _PAST_TASK.match(x) for x in steps):
            return [_mined(text, clean_clause(asked), steps,
                           _span_to_last(text, len(text) - len(text.lstrip()), steps), voice)]
        return []
    turns = list(obs.context)[-2:]
    prior = next((c for c in reversed(turns) if c.get("role") == "user"), None)
    lead = (prior or {}).get("text") or ""
    # "Can I tell you how I …?" offers the steps; it does not ask for them
    lead = re.sub(r"^\s*(?:can|may|could)\s+i\s+(?:tell|show|share\s+with)\s+you\s+(?P<r>.*?)\?\s*$", r"\g<r>.", lead,
                  flags=re.I | re.S)
    first = st.first_step_of(lead)
    # the assistant between asked for the user's way in general ("What do you do now?", "Let's hear it!"): the
    # user's aim before it names the task — "I want to get better at backing up my laptop" (I153)
    generic = last.get("role") == "assistant" and _GENERIC_ASK.search(last.get("text") or "")
    aim = _AIM_GERUND.search(lead) if generic and st.lead_ok(lead) else None
    if not lead or len(st.marker_steps(lead)) >= 2 or not (st.LEAD_NOUN.search(lead) or first or aim) \
            or not st.lead_ok(lead):
        return []
    task = st.task_of_lead(lead) if st.LEAD_NOUN.search(lead) or first else None
    task = task or (clean_clause(aim.group("g") or aim.group("g2")) if aim else None)
    steps = ([first] if first else []) + steps
    if not task or len(steps) < 2 or _parse_rules(lead, voice):
        return []
    return [_mined(text, clean_clause(task), steps, _span_to_last(text, len(text) - len(text.lstrip()), steps), voice)]


_GENERIC_ASK = re.compile(r"\b(?:how\s+(?:does\s+it|do\s+you\s+do\s+it|would\s+you\s+do\s+it)|what\s+do\s+you\s+do(?:\s+now"
                         r"|\s+at\s+the\s+moment|\s+currently)?(?=\s*\?)|let'?s\s+hear\s+it|walk\s+me\s+through\s+it|"
                         r"what\s+are\s+the\s+steps|(?:and\s+)?then\s+what|go\s+(?:on|ahead)|tell\s+me\s+more|"
                         r"write\s+(?:them|it)\s+down)\b", re.I)
_AIM_GERUND = re.compile(r"\b(?:better|faster|quicker|good)\s+at\s+(?P<g>[a-z]+ing\b[^.,;!?]{2,60})|\b(?:struggle|struggling|"
                         r"trouble|help)\s+with\s+(?P<g2>[a-z]+ing\b[^.,;!?]{2,60})", re.I)


def _step_n(text: str) -> list[str]:
    """"Step two, a. Step three, b." — two or more "Step N" parts in one message."""
    if len(_STEP_N.findall(text)) < 2:
        return []
    got = [clean_clause(p) for p in _STEP_N.split(text)[1:]]
    return [p for p in got if len(p.split()) >= 2] if sum(len(p.split()) >= 2 for p in got) >= 2 else []


# Round 6 (I152): the task in a sentence of its own, the steps after it — "I make cold brew every week. First I …",
# "Making cold brew is easy. Grind …. Mix …. Leave …", "It's simple to X: …".
_TASK_SENTENCE = re.compile(
    r"^\s*(?:(?:so|ok(?:ay)?|well|right|anyway)[,\s]+)?(?:(?:i|we)\s+(?:always\s+|usually\s+|normally\s+|typically\s+|"
    r"generally\s+|tend\s+to\s+)?(?!(?:love|like|hate|enjoy|have|has|had|am|feel|think|know|want|wish|hope|guess|mean|"
    r"remember|forget|see|hear|believe|agree|wonder|was|were|did|need|got|get|went|tried|can|could|will|would|should|"
    r"might|may|must|just|really|also|still|never|don'?t|do|didn'?t)\b)(?P<task>[a-z][^.!?:,;]{2,70}?)"
    r"(?:\s+(?:every|each|once\s+a|twice\s+a)\s+\w+(?:\s+\w+)?|\s+(?:regularly|weekly|monthly|daily|often|a\s+lot|"
    r"myself|at\s+home))?|(?P<g>[a-z]+ing\b[^.!?:,;]{2,60}?)\s+(?:is|isn'?t|is\s+not)\s+(?:\w+\s+)?(?:easy|simple|"
    r"quick|straightforward|hard|difficult|a\s+doddle|a\s+breeze)|(?:it'?s|it\s+is)\s+(?:\w+\s+)?(?:easy|simple|quick|"
    r"straightforward|not\s+hard)\s+to\s+(?P<t>[^.!?:,;]{3,60})|"
    # "Need to bleed the radiators? Do this: …", "You want to X? First …" — the task asked, then answered
    r"(?:(?:do\s+)?you\s+want\s+to|(?:you\s+)?need\s+to|want\s+to|have\s+to|got\s+to)\s+(?P<q>[^?.!:]{3,60})\?"
    r"(?:\s*(?:do\s+this|here'?s\s+how|easy|simple|like\s+this)\s*[:.!])?)\s*(?:[.!:]\s+|:\s*|\n|\s[—–-]\s|(?<=[?:!.])\s*)",
    re.I)


def _task_then_steps(text: str, voice: str) -> list[Mined]:
    m = _TASK_SENTENCE.match(text)
    if not m:
        return []
    task = clean_clause(m.group("task") or m.group("g") or m.group("t") or m.group("q") or "")
    rest = text[m.end():]
    if not st.is_task(task) or _PAST_TASK.match(task) or "?" in rest:
        return []
    dashed = re.match(r"\s*[—–-]", text[m.end() - 2:m.end()])   # "I change the sheets on Sundays - a, b, c"
    if m.group("task") and not dashed and not (st.SEQ_START.match(rest) or re.match(r"\s*(?:first(?:ly)?|to\s+start|start\s+by|"
                                                                       r"step\s+(?:1|one))\b", rest, re.I)
                                or st.marker_steps(rest)):
        return []   # "I make cold brew every week." needs steps that begin as steps, not any next sentence
    steps = st.marker_steps(rest) or st.sentence_steps(rest) or _steps_from(rest, 0) or _steps_from(":" + rest, 0)
    steps = [re.sub(r"^(?:i|we|you)\s+", "", x, flags=re.I) for x in steps]
    if len(steps) < 2 or any(_DETERMINER.match(x) or _PAST_TASK.match(x) for x in steps):
        return []
    if m.group("q") and (len(steps) < 3 or any(re.search(r"\b(?:your|me)\b", x, re.I) for x in steps)):
        return []   # "Need to borrow the car? Ask Dad, then …": an errand for someone else, not a routine (I152)
    return [_mined(text, task, steps, _span_to_last(text, len(text) - len(text.lstrip()), steps), voice)]


# Round 6 (I155): one past occasion kept as the way to do it — "What I did last time I had to X was a, then b, then
# c. Worked a treat." A past event with no word that keeps it (worked, again, from now on) is a story, not a routine.
_OCCASION = re.compile(
    r"\b(?:what\s+(?:i|we)\s+did|how\s+(?:i|we)\s+(?:did|handled|managed)\s+it)\s+(?:the\s+)?last\s+time\s+(?:when\s+)?"
    r"(?:i|we)\s+(?:had|needed|wanted)\s+to\s+(?P<task>[^,.;:]{3,60}?)\s*,?\s+was\s+(?:to\s+|(?:i|we)\s+)?"
    r"|\blast\s+time\s+(?:i|we)\s+(?:had\s+to\s+|needed\s+to\s+)?(?P<t2>[^,.;:]{3,60}?)\s*,\s*(?:i|we)\s+", re.I)
_KEPT = re.compile(r"\b(?:worked|did\s+the\s+trick|went\s+(?:well|smoothly|fine|great|perfectly)|(?:i'?ll|we'?ll|i\s+will|"
                   r"gonna|going\s+to)\s+(?:do\s+(?:it|that|the\s+same)|stick\s+with)|from\s+now\s+on|next\s+time\s+too|"
                   r"same\s+again|every\s+time\s+since|that'?s\s+(?:how|the\s+way|my\s+(?:plan|method|way)))\b", re.I)


def _past_occasion(text: str, voice: str) -> list[Mined]:
    m = _OCCASION.search(text)
    if not m or not _KEPT.search(text[m.end():]):
        return []
    task = clean_clause(m.group("task") or m.group("t2"))
    body = re.split(r"(?<=[.!])\s+", text[m.end():], maxsplit=1)[0]
    steps = [re.sub(r"^(?:i|we)\s+", "", x, flags=re.I) for x in _steps_from(":" + body, 0)]
    if len(steps) < 2 or not st.is_task(task) or any(_DETERMINER.match(x) for x in steps):
        return []
    return [_mined(text, task, steps, _span_to_last(text, m.start(), steps), voice)]


# Round 6 (I156): a noun title with its steps on the same line — "Cold brew, my way: a, b, c", "Laptop backups —
# a, b, c", "The trick with cold brew: a, b, c". Three or more clauses that open with a verb; a list of things
# ("coffee beans, filtered water, a jar") or a day's to-do ("Tomorrow — …") is none.
_WHEN_WORD = re.compile(r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|morning|evening|"
                        r"night|daily|weekly|monthly)\b", re.I)
_ROUTINE_WORD = re.compile(r"\b(?:routine|process|procedure|workflow|method|system|ritual|drill)\b", re.I)
_TITLE_SPLIT = re.compile(r"\s*(?::|\s[—–-]\s|\s*(?:=>|->|→)\s*)\s*")
_TITLE_WAY = re.compile(r"(?:,\s*|\s+[—–-]\s+|\s+)(?:my\s+way|the\s+way\s+i\s+do\s+it|how\s+i\s+do\s+it|my\s+version|"
                        r"my\s+method|step\s+by\s+step|in\s+short)$|^(?:the\s+)?(?:trick|secret|key)\s+(?:with|to|for)\s+", re.I)


def _noun_title(text: str, voice: str) -> list[Mined]:
    first = text.strip().split("\n", 1)[0]
    parts = _TITLE_SPLIT.split(first, maxsplit=1)
    if len(parts) != 2:
        return []
    title, items = _TITLE_WAY.sub("", parts[0].strip()), parts[1]
    # "Restring the guitar? Easy: …" — the task asked and answered
    title = re.sub(r"\?\s*(?:easy|simple|here'?s\s+how|like\s+this|it'?s\s+(?:easy|simple))$", "", title, flags=re.I)
    # "Restringing the guitar — my steps: …"
    items = re.sub(r"^\s*(?:my|the|our)\s+(?:\w+\s+)?(?:steps|routine|process|way|method|order|drill)\s*(?:is|are|goes)?\s*:\s*", "",
                   items, flags=re.I)
    while (ack := st.ACK_HEAD.match(title + " ")):
        title = title[ack.end():].strip()   # "ok here goes, car wash: …"; "yep: a, b, c" has no title
    title = re.sub(r"^(?:my|our|the)\s+(?=\w+\s+\w)", "", title, flags=re.I)   # "My Sunday reset: …" (a routine of mine)
    title = re.sub(r"\s+(?:that\s+)?(?:i|we)\s+(?:follow|use|do|have|swear\s+by)$", "", title, flags=re.I)
    # a day or time of day alone is a to-do's title ("Saturday: …"); as a modifier it is part of the task ("Sunday
    # meal prep", "Morning pages")
    timed = _WHEN_WORD.match(title) and len(title.split()) >= 2
    if not re.fullmatch(r"[A-Za-z][\w' -]{2,60}", title) or not 1 <= len(title.split()) <= 6 \
            or (st._LIST_TITLE.search(title) and not _ROUTINE_WORD.search(title)) \
            or (st._NOT_A_TASK_START.match(title) and not timed) \
            or _OTHERS.search(title + " "):
        return []
    listed = [clean_clause(p) for p in re.split(r"\s*;\s*|" + _LIST_SPLIT.pattern, re.split(r"(?<=[.!])\s", items)[0],
                                                flags=re.I) if p]
    listed = [re.sub(r"^(?:i|we|you)\s+", "", p, flags=re.I) for p in listed]
    bare = [_AT_TIME.sub("", p).strip() for p in listed]   # "at 9 strip the beds" opens with its act
    if len(listed) < 3 or not all(st.verb_initial(p) for p in bare) or not st.acts(bare) \
            or any(_PAST_TASK.match(p) for p in listed):
        return []
    s0 = len(text) - len(text.lstrip())
    return [_mined(text, clean_clause(title), listed, _span_to_last(text, s0, listed), voice)]


def record_successes(ctx: ExtractionContext, obs: Observation, result: ExtractionResult) -> None:
    """A reported success adds evidence (once per message) and moves captured → validated at the configured count."""
    for s in sentences(obs.text):
        m = _SUCCESS.search(s.text)
        if not m:
            continue
        target = best_match(m.group("t") or m.group("t2") or "", nodes_of_kind(ctx, "procedure"), threshold=55)
        if target is None:
            continue
        prov = provenance(obs, s, entry_type="reported_success", event=None,
                          description="the user reported the procedure worked")
        ops: list[Any] = [Evidence(id=target["id"], event_type="learned_from_task_execution", provenance=prov)]
        entries = [p for p in ksql.get_provenance(ctx.conn, target["id"]) if p["entry_type"] == "reported_success"]
        seen = {p.get("message_id") for p in entries}
        n = len(seen | {obs.message_id})
        sub = target.get("lifecycle_substate") or "captured"
        if sub in ("captured", "candidate", "validated", "promoted"):
            tr = procedure_transition(sub, n, cfg=ctx.config.knowledge.lifecycle)
            if tr.changed:
                ops.append(UpdateNode(id=target["id"], lifecycle_state=tr.lifecycle_state,
                                      lifecycle_substate=tr.lifecycle_substate, by_user=True))
        write(ctx, result, source_event="mining:procedure_success",
              summary=f"reported success of “{target['canonical_name'][:80]}”", ops=ops)


@register("procedures")
def mine_procedures(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    result = run_class(ctx, obs, "procedures", parse)
    if obs.role == "user" and obs.unit_kind in USER_UNITS \
            and obs.persistence_mode not in ("accessible_only", "episodic_recall"):
        before = result.items
        record_successes(ctx, obs, result)
        if result.items > before:
            result.skipped_reason = None
    return result


from kenning.intake.extractors import register_cue  # noqa: E402

_CUE_WORDS = ("how", "step", "routine", "process", "procedure", "method", "workflow", "checklist", "recipe", "drill",
              "system", "ritual", "way", "trick", "always", "usually", "normally", "every", "each", "first thing",
              "like this", "in this order", "->", "→")


def _structure_cue(text: str) -> bool:
    """Round 4's shapes, cheaply: a routine word or a habit (plain substring tests first), then a task introducer."""
    low = text.lower()
    return any(w in low for w in _CUE_WORDS) and bool(_GERUND_TASK.search(text) or _SAME_WAY.search(text) or (
        (st.LEAD_NOUN.search(text) or _HABIT.search(text)) and st.TASK_INTRO.search(text)) or st.arrow_steps(text))


def _round6_cue(text: str) -> bool:
    """Round 6's shapes (I152–I157), each behind a cheap substring test: a task sentence then "first …", a past
    occasion kept, plain step lines, "Step two, …", a noun title over its steps."""
    low = text.lower()
    return bool(("first" in low and _TASK_SENTENCE.match(text)) or ("last time" in low and _OCCASION.search(text))
                or ("\n" in text and st.plain_lines(text)) or ("step" in low and _step_n(text))
                or ((":" in text or " - " in text or " — " in text or "=>" in text) and _noun_title(text, "user")))


def _text_parse(text: str) -> bool:
    """What ``parse`` finds in the text alone (every rule but the two-message one, which reads the context)."""
    return bool(_parse_rules(text, "user") or _structural(text, "user") or _inline_lead(text, "user")
                or _task_then_steps(text, "user") or _past_occasion(text, "user") or _noun_title(text, "user"))


# the funnel's cue (I33): a procedure header, a numbered list of two or more steps, or a reported success — and,
# when those cheap shapes miss, the miner's own text rules, so the funnel never skips a turn the miner reads (I173)
register_cue("procedures", lambda text: bool(_HEADER.search(text) or _SUCCESS.search(text) or _TRAILER.search(text)
                                              or len(_NUMBERED.findall(text)) >= 2 or _structure_cue(text)
                                              or _round6_cue(text)) or _text_parse(text[:4000]))
