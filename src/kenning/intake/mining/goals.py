"""Goals (§29): created top-down only, from the user's explicit statements of aim; sub-goals link to their
parent (``parent_goal_id`` and a ``sub_goal_of`` edge); evolution makes a new node with ``evolved_from_goal_id``
and marks the old one ``evolved`` (kept); achieved / abandoned when the user says so."""

from __future__ import annotations

import re
from typing import Any

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining import aims
from kenning.intake.mining.base import run_class
from kenning.intake.mining.common import Mined, clean_clause, node_id, nodes_of_kind, sentences
from kenning.intake.mining.match import best_match
from kenning.knowledge.ops import CreateEdge, UpdateNode

_HORIZON = re.compile(r"\s+(?P<h>(?:by|before|within|in)\s+(?:the\s+end\s+of\s+)?(?:\d{4}|next\s+\w+|this\s+\w+|"
                      r"i\s+(?:turn|hit|reach|retire)\b|the\s+time\s+i\b|the\s+\w+|\w+\s+\d{4}|(?:january|february|march|april|may|june|july|august|september|october|november|"
                      r"december)|[a-z]+\s+(?:months?|years?|weeks?)|my\s+\w+\s*\w*)|this\s+(?:year|summer|"
                      r"spring|autumn|fall|winter|month)|next\s+(?:year|summer|spring|month)|eventually|someday|"
                      r"one\s+day|in\s+the\s+long\s+run|this\s+decade)\b.*$", re.I)
_TAIL = re.compile(r"\s*(?:,|\s)\s*(?:so\s+that|because|since|which|and\s+then|but)\b.*$", re.I)

_AIM = [
    # round 3 (I111): "get to the point where I can …" names the aim after "can" (first: "by ear" is no horizon)
    re.compile(r"\bi(?:\s+(?:really\s+)?(?:want|would\s+like|hope)|'d\s+(?:really\s+)?(?:like|love))\s+to\s+"
               r"(?:get|reach)\s+(?:to\s+)?(?:the|a)\s+(?:point|stage|place)\s+where\s+i\s+"
               r"(?:can|could|am\s+able\s+to)\s+"
               r"(?P<g>.+)", re.I),
    re.compile(r"\bthe\s+(?:big\s+)?thing\s+i\s+want\s+to\s+(?:achieve|accomplish|do)\s+(?:this\s+year\s+)?is\s+"
               r"(?:to\s+)?(?P<g>.+)", re.I),
    re.compile(r"\b(?:this|next)\s+(?:year|summer|month|spring|autumn|fall|winter),?\s+i'?m\s+(?:going\s+to|gonna|"
               r"finally\s+going\s+to)\s+(?P<g>.+)", re.I),
    re.compile(r"\bi'?d\s+(?:really\s+)?love\s+to\s+(?P<g>.+?\s+(?:by|before|within)\s+.+|.+?\s+(?:this|next)\s+(?:year|"
               r"summer|spring|autumn|fall|winter)\b.*|.+?\s+(?:eventually|someday|one\s+day)\b.*)", re.I),
    re.compile(r"\bsomething\s+i'?m\s+working\s+towards?\s+is\s+(?P<g>.+)", re.I),
    re.compile(r"\b(?:my|our)\s+(?:main\s+|big\s+|biggest\s+|long[- ]term\s+|ultimate\s+|real\s+|new\s+|top\s+)?"
               r"(?:goal|aim|objective|ambition|target|dream|resolution)\s+(?:for\s+[\w\s]+?\s+|this\s+year\s+|"
               r"right\s+now\s+)?(?:is|'s)\s+(?:to\s+|that\s+i\s+)?(?P<g>.+)", re.I),
    re.compile(r"\bi(?:'?m|\s+am)\s+(?:really\s+|seriously\s+)?(?:trying|tryin'?|aiming|working|determined|striving|"
               r"setting\s+out)\s+(?:hard\s+)?(?:to|towards?|toward)\s+(?P<g>.+)", re.I),
    re.compile(r"\bi'?ve\s+(?:set|given)\s+(?:myself\s+)?(?:a|the)\s+(?:goal|target|challenge)\s+(?:of|to)\s+(?P<g>.+)",
               re.I),
    re.compile(r"\bi(?:\s+(?:really\s+)?(?:want|intend|plan|hope|aim|mean)|'?m\s+(?:really\s+)?(?:hoping|planning|"
               r"intending)|'d\s+(?:really\s+)?like)\s+to\s+(?P<g>.+?\s+(?:by|before|within)\s+"
               r"(?:\d{4}|the\s+end\s+of|next|this|my|[A-Z][a-z]+).*|.+?\s+(?:this|next)\s+(?:year|summer|spring|autumn|"
               r"fall|winter|decade)\b.*|.+?\s+(?:eventually|someday|one\s+day)\b.*)", re.I),
    # tuning bank, issue 18 (d): a labelled aim ("Goal for 2025: …", "New year's resolution: …"), a plan or the
    # top of one's list, a decision of one's own ("I've made up my mind to …"), "what I'm going for is …"
    re.compile(r"^(?![^:]*\b(?:his|her|their|(?!year)[a-z]+'s)\s)[\w\s'-]{0,30}?\b(?:goal|aim|objective|ambition|"
               r"target|resolution|priority|plan)s?(?:\s+(?:for|this)\s+[\w\s]{1,20}?)?\s*:\s*(?P<g>.+)", re.I),
    re.compile(r"^(?:(?:over|in|within)\s+the\s+next\s+[\w\s]{1,20}?|by\s+(?:\d{4}|the\s+end\s+of\s+[\w\s]{1,20}?)|"
               r"eventually|someday|one\s+day|in\s+the\s+long\s+run),?\s+i(?:'d\s+(?:really\s+)?(?:like|love)|\s+"
               r"(?:really\s+)?(?:want|plan|hope|intend|aim))\s+to\s+(?P<g>.+)", re.I),
    re.compile(r"\bit'?s\s+(?:my|our)\s+(?:(?:big|main|biggest|long[- ]term|real|ultimate|top)\s+)?(?:goal|aim|"
               r"ambition|dream|plan|mission)\s+to\s+(?P<g>.+)", re.I),
    re.compile(r"\bmy\s+(?:\w+\s+)?plan\s+(?:(?:for|this|next)\s+[\w\s]{1,30}?\s+)?is\s+to\s+(?P<g>.+)", re.I),
    # round 3 (I111), structural: an aim noun owned by the user or stated as "the" aim in the user's own turn
    # ("anyway, the goal is to …", "one of my goals for 2025 is to …"); an aim verb with no subject at the start
    # of a turn, kept only with a horizon or "finally" ("hoping to finally …", "really want to … this year");
    # "on a mission to …"; "get to the point where I can …"
    re.compile(r"(?:^|[,.;:]\s*|\b(?:anyway|so|basically|ok(?:ay)?)\s+)the\s+(?:main\s+|big\s+|real\s+|overall\s+|"
               r"ultimate\s+)?(?:goal|aim|objective|target|plan|idea)\s+(?:for\s+[\w\s]{1,20}?\s+|this\s+year\s+)?is\s+"
               r"to\s+(?P<g>.+)", re.I),
    re.compile(r"\bone\s+of\s+(?:my|our)\s+(?:\w+\s+)?(?:goals|aims|objectives|resolutions|ambitions|priorities)\s+"
               r"(?:(?:for|this|next)\s+[\w\s]{1,20}?\s+)?is\s+(?:to\s+)?(?P<g>.+)", re.I),
    re.compile(r"^(?:i\s+)?(?:(?:really|still|just)\s+)?(?:want|wanna|hoping|hope|trying|tryin'?|planning|aiming)\s+"
               r"(?:to\s+)?(?P<g>(?:finally\s+).+|.+?\s+(?:by|before|within)\s+(?:\d{4}|the\s+end|next|this|my)\b.*|"
               r".+?\s+(?:this|next)\s+(?:year|summer|spring|autumn|fall|winter|decade)\b.*)", re.I),
    re.compile(r"\bi(?:'?m|\s+am)\s+on\s+a\s+(?:mission|quest)\s+to\s+(?P<g>.+)", re.I),
    # an aim verb of the user's with a horizon the first rules did not know ("before I turn 40", "at some point",
    # "in the next few years", "finally"); "I would", "wanna", "gonna", "I've always wanted to", "this is the year
    # I …"
    re.compile(r"\bi(?:\s+(?:really\s+|still\s+|just\s+)?(?:want|wanna|intend|plan|hope|aim|would\s+"
               r"(?:really\s+)?(?:like|love))|'?m\s+(?:really\s+)?(?:hoping|planning|intending|going|gonna|looking|"
               r"keen|eager)|'?d\s+(?:really\s+)?(?:like|love)|'?ve\s+always\s+wanted)\s+(?:to\s+)?"
               r"(?P<g>(?:finally\s+).+|.+?\s+(?:before\s+i\s+(?:turn|hit|reach|retire|die)|by\s+the\s+time\s+i|"
               r"at\s+some\s+point|in\s+the\s+(?:next|coming)\s+\w+|over\s+the\s+next|in\s+(?:\d{4}|a\s+few\s+years|"
               r"(?:a|one|two|three|five|ten)\s+years?))\b.*)", re.I),
    re.compile(r"\bi'?ve\s+(?:always\s+wanted|long\s+wanted|dreamed\s+of\s+being\s+able)\s+to\s+(?P<g>.+)", re.I),
    re.compile(r"\bthis\s+is\s+(?:the|my)\s+year\s+(?:that\s+)?i\s+(?:finally\s+)?(?P<g>.+)", re.I),
    re.compile(r"\bi(?:'?m|\s+am)\s+(?:currently\s+|seriously\s+)?(?:looking|keen|eager|set|committed)\s+to\s+"
               r"(?P<g>.+)", re.I),
    re.compile(r"^(?:(?:really|totally|fully)\s+)?(?:determined|committed|resolved|set\s+on\s+trying)\s+to\s+(?P<g>.+)",
               re.I),

    re.compile(r"\bthe\s+(?:big|main|biggest|one|first|top)\s+(?:thing|item)\s+on\s+my\s+(?:list|bucket\s+list)\s+"
               r"is\s+(?:to\s+)?(?P<g>.+)", re.I),
    re.compile(r"\bi'?ve\s+(?:made\s+up\s+my\s+mind|resolved|committed\s+myself)\s+to\s+(?P<g>.+)", re.I),
    # lead, on the bundled sample (I121): saving up for something is an aim however plainly it is wanted — "we want
    # to save for a new car", "I'm saving up for a bike"; the household "we" counts (the user is in it)
    re.compile(r"\b(?:i|we)(?:\s+(?:really\s+|still\s+)?(?:want|need|plan|hope|intend)|'?d\s+(?:really\s+)?like|"
               r"'?(?:m|re)\s+(?:trying|hoping|planning)|\s+(?:am|are)\s+(?:trying|hoping|planning))\s+to\s+"
               r"(?P<g>save\s+(?:up\s+)?(?:for|towards?)\s+.+)", re.I),
    re.compile(r"\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:currently\s+|slowly\s+)?(?P<g>saving\s+(?:up\s+)?"
               r"(?:for|towards?)\s+.+)", re.I),
    re.compile(r"\bwhat\s+i(?:'m|\s+am)\s+(?:really\s+)?(?:going\s+for|aiming\s+for|working\s+towards?)\s+is\s+"
               r"(?:to\s+)?(?P<g>.+)", re.I),
]
_SUB = re.compile(r"\b(?:as\s+(?:a\s+)?(?:part|step|first\s+step)\s+(?:of|towards?)|to\s+get\s+there|on\s+the\s+way"
                  r"\s+to|as\s+a\s+step\s+towards?|for\s+that\s+goal|towards?\s+that(?:\s+goal)?)\s*(?P<p>[^,]*),\s*"
                  r"i\s+(?:need|want|plan|have|intend|'?m\s+going)\s+to\s+(?P<g>.+)", re.I)
_EVOLVE = re.compile(r"(?:\bi'?ve\s+changed\s+my\s+goal|\bmy\s+goal\s+has\s+changed|\bmy\s+goal\s+is\s+now|"
                     r"\binstead\s+of\s+(?P<o1>[^,]+),\s*(?:i\s+now\s+want|my\s+goal\s+is\s+now|i'?m\s+now\s+aiming|"
                     r"i'?m\s+going\s+to\s+aim|i\s+want)|\brather\s+than\s+(?P<o2>[^,]+),\s*(?:i\s+now\s+want|"
                     r"my\s+(?:new\s+)?goal\s+is|i\s+want))\s*(?::|—|-|,)?\s*(?:now\s+)?(?:to\s+|it'?s\s+to\s+)?"
                     r"(?P<g>.+)", re.I)
_TRAILING_OLD = re.compile(r"[,;]?\s+(?:instead\s+of|rather\s+than)\s+(?P<o>[^,.;]{3,120})[.!]?\s*$", re.I)
_ACHIEVED = re.compile(r"\b(?:i\s+(?:finally\s+|actually\s+)?(?:achieved|reached|hit|accomplished|met|completed)\s+"
                       r"my\s+(?:goal|target|aim)(?:\s+(?:of|to)\s+(?P<g>.+))?|(?:goal|target)\s+(?:achieved|"
                       r"accomplished|reached|complete)|i\s+did\s+it\b[^.]*?(?P<g2>\b(?:ran|finished|got|passed|"
                       r"launched|published|reached)\b.+)?)", re.I)
_ABANDON = re.compile(r"\b(?:i'?(?:m|ve|\s+am|\s+have)\s+(?:giving|given)\s+up\s+on|i'?ve\s+(?:abandoned|dropped|"
                      r"shelved)|i'?m\s+(?:abandoning|dropping|shelving)|i\s+no\s+longer\s+want\s+to|i'?m\s+not\s+"
                      r"(?:going\s+to|gonna)\s+(?:pursue|chase)|forget\s+about)\s+(?:the\s+goal\s+(?:of|to)\s+|"
                      r"my\s+goal\s+(?:of|to)\s+|the\s+idea\s+of\s+|on\s+)?(?P<g>.+)", re.I)


def goal_name(clause: str) -> tuple[str, str | None]:
    """(canonical name, time horizon) from an aim clause: "run a marathon by next spring" → ("run a marathon",
    "by next spring")."""
    c = _TAIL.sub("", clean_clause(clause))
    horizon = None
    h = _HORIZON.search(c)
    if h and h.start() > 3:
        horizon = clean_clause(h.group("h"))
        c = c[:h.start()]
    c = clean_clause(c)
    c = re.sub(r"^(?:finally|being\s+able\s+to)\s+", "", c, flags=re.I)
    c = re.sub(r"^(?:i\s+(?:now\s+)?want\s+to|i'?m\s+now\s+aiming\s+to|i'?m\s+going\s+to|my\s+new\s+goal\s+is(?:\s+to)?|"
               r"it'?s\s+to|is|to|that)\s+", "", c, flags=re.I)
    c = re.sub(r"^saving\s+(?=(?:up\s+)?(?:for|towards?)\s)", "save ", c, flags=re.I)  # "I'm saving up for …" (I121)
    return c[:1].lower() + c[1:], horizon


def _payload(name: str, sentence: str, horizon: str | None, **extra: Any) -> dict[str, Any]:
    p: dict[str, Any] = {"goal_description": name[:500], "canonical_name": name[:200], "narrative": sentence[:2000],
                         "goal_status": "active", "source": "user_stated"}
    if horizon:
        p["time_horizon"] = horizon[:100]
    p.update(extra)
    return p


def _ok(name: str) -> bool:
    return 2 <= len(name.split()) <= 16


def parse(text: str, ctx: ExtractionContext, obs: Observation, voice: str) -> list[Mined]:
    if voice != "user":
        return []  # §29 top-down only: an assistant never creates a goal
    out: list[Mined] = []
    active = None
    answering = aims.asked_about_aims(obs.context)
    for s in sentences(text):
        sent = s.text
        if (m := _EVOLVE.search(sent)):
            # "my goal is now to X instead of Y": the old goal named after the new one (I176)
            new_aim, said_old = m.group("g"), m.group("o1") or m.group("o2")
            if not said_old and (tail := _TRAILING_OLD.search(new_aim)):
                new_aim, said_old = new_aim[:tail.start()], tail.group("o")
            name, horizon = goal_name(new_aim)
            if not _ok(name):
                continue
            active = active if active is not None else nodes_of_kind(ctx, "goal")
            cands = [n for n in active if (n["payload"] or {}).get("goal_status", "active") == "active"]
            old = best_match(said_old, cands, threshold=50) if said_old else _latest_in_conversation(ctx, obs, cands)
            if old is not None and old["canonical_name"].casefold() == name.casefold():
                continue
            if old is None:
                # the aim stands even when the goal it replaces is not found: a stated aim is never dropped (I176)
                out.append(Mined("goal", name, _payload(name, sent, horizon), s))
                continue
            new = Mined("goal", name, _payload(name, sent, horizon, evolved_from_goal_id=old["id"],
                                               evolution_reason=sent[:500]), s)
            new.extra_ops.append(UpdateNode(id=old["id"], payload_set={"goal_status": "evolved"}))
            out.append(new)
            continue
        for rx, status in ((_ABANDON, "abandoned"), (_ACHIEVED, "achieved")):
            if (m := rx.search(sent)):
                active = active if active is not None else nodes_of_kind(ctx, "goal")
                cands = [n for n in active if (n["payload"] or {}).get("goal_status", "active") in ("active", "on_hold")]
                said = next((g for g in m.groupdict().values() if g), None)
                said = re.split(r",|\bbecause\b|\bsince\b|\bas\b", said)[0] if said else None
                target = best_match(said, cands, threshold=55) if said else _latest_in_conversation(ctx, obs, cands)
                if target is not None:
                    mm = Mined("goal", target["canonical_name"], dict(target["payload"] or {}), s)
                    mm.extra_ops.append(UpdateNode(id=target["id"], payload_set={"goal_status": status}))
                    out.append(mm)
                break
        else:
            if (m := _SUB.search(sent)):
                name, horizon = goal_name(m.group("g"))
                if not _ok(name):
                    continue
                active = active if active is not None else nodes_of_kind(ctx, "goal")
                cands = [n for n in active if (n["payload"] or {}).get("goal_status", "active") == "active"]
                parent = best_match(m.group("p"), cands, threshold=55) if m.group("p").strip() else None
                parent = parent or _latest_in_conversation(ctx, obs, cands)
                mm = Mined("goal", name, _payload(name, sent, horizon), s)
                if parent is not None:
                    mm.payload["parent_goal_id"] = parent["id"]
                    child = node_id(ctx, "goal", name)
                    subs = list((parent["payload"] or {}).get("sub_goal_ids") or [])
                    if child not in subs:
                        mm.extra_ops.append(UpdateNode(id=parent["id"], payload_set={"sub_goal_ids": subs + [child]}))
                    mm.extra_ops.append(CreateEdge(source_id=child, relation_type="sub_goal_of", target_id=parent["id"],
                                                   start_date=obs.created_at, confidence=0.9))
                out.append(mm)
                continue
            before = len(out)
            for rx in _AIM:
                if (m := rx.search(sent)):
                    name, horizon = goal_name(m.group("g"))
                    if _ok(name) and aims.plausible(m.group("g")):
                        out.append(Mined("goal", name, _payload(name, sent, horizon), s))
                    break
            else:
                # round 4 (I131–I132): the aim read from sentence structure when no older rule knew the wording
                got = aims.noun_aims(sent) or [g for g in [(aims.subject_aim(sent) or (None,))[0]] if g]
                for g in got:
                    name, horizon = goal_name(g)
                    if _ok(name) and aims.plausible(g):
                        out.append(Mined("goal", name, _payload(name, sent, horizon), s))
            if answering and len(out) == before and not _interjection(sent):
                # the answer to the assistant's "what are you working towards?" (I133)
                answering = False
                if (g := aims.answered_aim(sent)):
                    name, horizon = goal_name(g)
                    if _ok(name) and aims.plausible(g):
                        out.append(Mined("goal", name, _payload(name, sent, horizon), s))
            elif len(out) > before:
                answering = False
    return out


def _interjection(sentence: str) -> bool:
    """"honestly?", "hmm.", "good question!" before the real answer."""
    return len(sentence.split()) <= 2 and not re.search(r"\bto\b", sentence, re.I) and (
        sentence.endswith(("?", "!", ".", "…")) or len(sentence.split()) == 1)


def _latest_in_conversation(ctx: ExtractionContext, obs: Observation, cands: list[dict[str, Any]]):
    """The goal most recently stated in the turns before this one (context), else None."""
    from kenning.store import knowledge as ksql
    ids = [t.get("message_id") for t in obs.context if t.get("message_id")]
    if not ids:
        return None
    near = set(ksql.node_ids_with_message(ctx.conn, ids))
    hits = [n for n in cands if n["id"] in near]
    return max(hits, key=lambda n: (n["updated_at"], n["id"])) if hits else None


@register("goals")
def mine_goals(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    return run_class(ctx, obs, "goals", parse)


from kenning.intake.extractors import register_cue  # noqa: E402

register_cue("goals", lambda text: any(p.search(text) for p in (*_AIM, _EVOLVE, _ACHIEVED, _ABANDON))
             or (aims.VOCABULARY.search(text) is not None
                 and any(aims.noun_aims(s.text) or aims.subject_aim(s.text) for s in sentences(text))))
