"""Obligations (§4A.1.7): "I have to … by …", "… is due on …", "renew … before …" — a deadline WITH a timezone
(the user's configured zone, end of the named day), a type, a status; overdue is computed when read, never
stored by a clock that moves. "I renewed/paid/submitted …" completes a pending one."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining.base import run_class
from kenning.intake.mining.common import (Mined, Span, clean_clause, deadline_iso, find_date, nodes_of_kind, ref_day,
                                          sentences)
from kenning.intake.mining.match import best_match
from kenning.knowledge.ops import UpdateNode

_BY = r"(?:by|before|no\s+later\s+than|until|on|prior\s+to|ahead\s+of)"
_PATTERNS = [
    re.compile(rf"\b(?:i|we)\s+(?:really\s+)?(?:have|need|must|'ve\s+got|got|am\s+supposed|'m\s+supposed)\s+(?:to\s+)?"
               rf"(?P<o>.+?)\s+{_BY}\s", re.I),
    re.compile(rf"\b(?:i|we)\s+must\s+(?P<o>.+?)\s+{_BY}\s", re.I),
    re.compile(rf"\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:supposed|required|expected|due)\s+to\s+(?P<o>.+?)\s+{_BY}\s", re.I),
    re.compile(r"\b(?:the|my|our)\s+(?P<o>[\w\s'-]+?)\s+(?:is|are)\s+due\b", re.I),
    re.compile(rf"\b(?P<obj>(?:the|my|our)\s+[\w\s'-]+?)\s+(?:has|have|needs?|must)\s+(?:to\s+)?be\s+(?P<v>\w+)\s+{_BY}\s",
               re.I),
    re.compile(r"\b(?P<o>(?:renew|submit|file|pay|return|send|finish|deliver|hand\s+in|register|apply\s+for|"
               r"book|cancel|complete)\s+.+?)\s+(?:before|by|no\s+later\s+than)\s", re.I),
    re.compile(r"\b(?:the\s+)?deadline\s+(?:for|to|on)\s+(?P<o>.+?)\s+is\s", re.I),
    re.compile(r"\b(?:my|the|our)\s+(?P<o>[\w\s'-]+?)\s+deadline\s+is\s", re.I),
    re.compile(r"\bi\s+promised\s+(?P<who>\w+(?:\s+\w+)?)\s+(?:i'?d|i\s+would|to)\s+(?P<o>.+?)\s+(?:by|before|on)\s",
               re.I),
    re.compile(r"\b(?:my|the|our)\s+(?P<x>[\w\s'-]+?)\s+(?:expires|runs\s+out|lapses)\s+(?:on|in|at\s+the\s+end\s+of)?",
               re.I),
    # tuning bank, issue 18 (d): the date first ("By August 4, I need to renew my passport", "Monday is the deadline
    # to …"), a labelled deadline ("Deadline to …: May 1"), "I'll need to … before …"
    re.compile(r"^(?P<d>.{3,40}?)\s+is\s+the\s+(?:last\s+day|deadline)\s+(?:to|for)\s+(?P<o>.+?)[.!]?$", re.I),
    re.compile(r"\bdeadline\s+(?:for|to)\s+(?P<o>[^:]+?)\s*:\s*", re.I),
    re.compile(rf"\b(?:i|we)(?:'ll|\s+will)\s+(?:really\s+)?(?:need|have)\s+to\s+(?P<o>.+?)\s+{_BY}\s", re.I),
    re.compile(r"^(?:by|before|no\s+later\s+than)\s+[^,]{3,40},\s*(?:i|we)\s+(?:really\s+)?(?:have|need|must|'ve\s+got|"
               r"got)\s+(?:to\s+)?(?P<o>.+?)[.!]?$", re.I),
]
_DONE = re.compile(r"\b(?:i|we)\s+(?:just\s+|finally\s+|already\s+)?(?:renewed|paid|submitted|filed|sent|finished|"
                   r"delivered|returned|handed\s+in|registered|completed|booked|cancell?ed)\s+(?P<o>.+)", re.I)
_TYPES = [
    ("court_ordered", re.compile(r"\b(?:court|judge|hearing|subpoena|jury)\b", re.I)),
    ("statutory", re.compile(r"\b(?:tax|taxes|passport|visa|licen[cs]e|registration|permit|irs|hmrc|census|"
                             r"vehicle\s+registration|mot|id\s+card)\b", re.I)),
    ("contractual", re.compile(r"\b(?:invoice|contract|lease|rent|landlord|client|payment|bill|subscription|"
                               r"loan|mortgage|deliverable|milestone|insurance|premium)\b", re.I)),
    ("courtesy", re.compile(r"\b(?:promised|birthday|thank[- ]you|rsvp|card|gift|favou?r)\b", re.I)),
]
_LEAD = re.compile(r"^(?:(?:really|definitely|absolutely|still|also|first|somehow|finally)\s+)+", re.I)


_IRREGULAR = {"paid": "pay", "sent": "send", "done": "do", "written": "write", "made": "make", "given": "give",
              "taken": "take", "finished": "finish", "handed": "hand"}


def base_verb(participle: str) -> str:
    """renewed → renew, submitted → submit, filed → file (enough for obligation names)."""
    p = participle.lower()
    if p in _IRREGULAR:
        return _IRREGULAR[p]
    if p.endswith("tted") or p.endswith("pped"):
        return p[:-3]
    if p.endswith("ied"):
        return p[:-3] + "y"
    if p.endswith(("led", "ted", "ved", "sed", "ced", "zed", "ged")) and not p.endswith(("ssed", "lled")):
        return p[:-1]
    return p[:-2] if p.endswith("ed") else p


def obligation_type(text: str) -> str:
    for name, rx in _TYPES:
        if rx.search(text):
            return name
    return "internal"


def _name(o: str) -> str:
    o = _LEAD.sub("", clean_clause(o))
    o = re.sub(r"^(?:to|the|my|our)\s+", "", o, flags=re.I)
    return o[:1].lower() + o[1:]


def _clauses(whole: Span) -> list[Span]:
    cuts = [0] + [m.end() for m in re.finditer(r",\s+(?:and|but|plus|also)\s+", whole.text)]
    ends = [m.start() for m in re.finditer(r",\s+(?:and|but|plus|also)\s+", whole.text)] + [len(whole.text)]
    return [Span(whole.start + a, whole.start + b, whole.text[a:b]) for a, b in zip(cuts, ends)]


def parse(text: str, ctx: ExtractionContext, obs: Observation, voice: str) -> list[Mined]:
    if voice != "user":
        return []  # the user's own obligations only
    out: list[Mined] = []
    ref = ref_day(obs, ctx)
    for whole in sentences(text):
        # "I have to renew my passport by May 1, and the tax return is due on July 31": one item per clause
        for s in _clauses(whole):
            sent = s.text
            if (d := _DONE.search(sent)) and not find_date(sent[d.end():], ref):
                pending = [n for n in nodes_of_kind(ctx, "obligation")
                           if (n["payload"] or {}).get("status") in ("pending", "in_progress", "overdue", "extended")]
                target = best_match(d.group("o"), pending, threshold=55)
                if target is not None:
                    m = Mined("obligation", target["canonical_name"], dict(target["payload"] or {}), s)
                    done_at = obs.created_at or ctx.now
                    m.extra_ops.append(UpdateNode(id=target["id"], payload_set={"status": "completed",
                                                                                "completed_at": done_at}))
                    out.append(m)
                continue
            for rx in _PATTERNS:
                m = rx.search(sent)
                if not m:
                    continue
                found = find_date(sent[m.start():], ref)
                if found is None:
                    continue
                day, _ = found
                if m.groupdict().get("v"):
                    what = f"{base_verb(m.group('v'))} {m.group('obj')}"
                elif m.groupdict().get("x"):
                    what = "renew " + re.sub(r"^(?:my|the|our)\s+", "", clean_clause(m.group("x")), flags=re.I)
                else:
                    what = m.group("o")
                name = _name(what)
                if not 1 <= len(name.split()) <= 14 or re.search(r"\b(?:if|whenever)\b", name, re.I):
                    break
                payload: dict[str, Any] = {
                    "obligation_description": name[:500],
                    "deadline": {"date": deadline_iso(day, ctx.config), "type": obligation_type(sent),
                                 "consequence_of_missing": "not stated", "extendable": False},
                    "status": "pending", "source": "conversation_mined", "deadline_source": "conversation",
                    "obligor_hint": "the user"}
                if m.groupdict().get("who"):
                    payload["description"] = f"promised to {m.group('who')}"
                out.append(Mined("obligation", name, payload, s))
                break
    return out


def is_overdue(payload: dict[str, Any], now: str) -> bool:
    """Past its deadline and not done (computed at read time against the caller's clock)."""
    if payload.get("status") in ("completed", "waived"):
        return False
    deadline = dt.datetime.fromisoformat(payload["deadline"]["date"].replace("Z", "+00:00"))
    return deadline < dt.datetime.fromisoformat(now.replace("Z", "+00:00"))


# ---- candidates from others' mail and from calendar events (issue 18 (b); I94) ------------------------------

_SENDER = [
    re.compile(r"\b(?:your|the|this|our)\s+(?P<o>[\w\s#'./-]+?)\s+(?:is|are|falls?|becomes?)\s+(?:now\s+)?due\b", re.I),
    re.compile(rf"\b(?P<obj>(?:your|the|this)\s+[\w\s#'./-]+?)\s+(?:must|needs?\s+to|has\s+to|should)\s+be\s+"
               rf"(?P<v>\w+)\s+{_BY}\s", re.I),
    re.compile(r"\b(?:please|kindly)\s+(?:make\s+sure\s+(?:to|you)\s+|remember\s+to\s+)?(?P<o>[a-z]+\s.+?)\s+"
               r"(?:by|before|no\s+later\s+than)\s", re.I),
    re.compile(r"\b(?:the\s+)?deadline\s+(?:for|to)\s+(?P<o>.+?)\s+is\s", re.I),
    re.compile(r"\b(?:your|the)\s+(?P<x>[\w\s'-]+?)\s+(?:expires|will\s+expire|lapses)\s+on\b", re.I),
]


def parse_sender(text: str, ctx: ExtractionContext, obs: Observation) -> list[Mined]:
    """A deadline someone else's mail puts on the user ("Your invoice is due on March 20", "please return the
    form by Friday"): the user's obligation only once they confirm it, so a candidate."""
    out: list[Mined] = []
    ref = ref_day(obs, ctx)
    for s in sentences(text):
        for rx in _SENDER:
            m = rx.search(s.text)
            if not m or (found := find_date(s.text[m.start():], ref)) is None:
                continue
            if m.groupdict().get("v"):
                obj = re.sub(r"^(?:your|the|this)\s+", "", m.group("obj"), flags=re.I)
                what = f"{base_verb(m.group('v'))} {obj}"
            elif m.groupdict().get("x"):
                what = "renew " + re.sub(r"^(?:your|the)\s+", "", clean_clause(m.group("x")), flags=re.I)
            else:
                what = m.group("o")
            name = _name(re.sub(r"^(?:your|this)\s+", "", what.strip(), flags=re.I))
            if not 1 <= len(name.split()) <= 14:
                break
            payload: dict[str, Any] = {
                "obligation_description": name[:500],
                "deadline": {"date": deadline_iso(found[0], ctx.config), "type": obligation_type(s.text),
                             "consequence_of_missing": "not stated", "extendable": False},
                "status": "pending", "source": "email_extracted", "deadline_source": "email",
                "obligor_hint": "the user"}
            out.append(Mined("obligation", name, payload, s, "suggested", "candidate"))
            break
    return out


def calendar_candidate(ctx: ExtractionContext, obs: Observation) -> Mined | None:
    """A single calendar event is an obligation candidate due at its start, in the event's own zone; a recurring
    one is routine, not an obligation (§20B.15)."""
    meta = obs.meta or {}
    start = meta.get("start")
    if not start or meta.get("rrule"):
        return None
    first = obs.text.split("\n", 1)[0]
    name = clean_clause(first)
    if not name or name == "(no title)":
        return None
    if meta.get("all_day"):
        deadline = deadline_iso(dt.date.fromisoformat(start[:10]), ctx.config)
    else:
        deadline = start
    payload: dict[str, Any] = {
        "obligation_description": name[:500],
        "deadline": {"date": deadline, "type": obligation_type(obs.text), "consequence_of_missing": "not stated",
                     "extendable": False},
        "status": "pending", "deadline_source": "calendar", "obligor_hint": "the user"}
    return Mined("obligation", name, payload, Span(0, len(first), first), "suggested", "candidate")


def mine_candidates(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    from kenning.intake.mining.common import create_op, provenance, write

    result = ExtractionResult(extractor="obligations")
    if obs.persistence_mode in ("accessible_only", "episodic_recall"):
        result.skipped_reason = f"persistence mode {obs.persistence_mode}: never auto-promoted"
        return result
    if obs.unit_kind == "calendar_event":
        found = [m for m in [calendar_candidate(ctx, obs)] if m is not None]
        entry, event, said, voice = ("learned_from_calendar", "inferred_by_system", "a calendar event",
                                     "self" if obs.role == "user" else "external_party")
    else:
        found = parse_sender(obs.text, ctx, obs)
        entry, event, said, voice = "learned_from_email", "learned_from_email", "a mail from someone else", \
            "external_party"
    for m in found:
        prov = [provenance(obs, m.span, entry_type=entry, event=None, description=f"{said} names it", voice=voice)]
        write(ctx, result, source_event="mining:obligation", summary=f"obligation candidate “{m.name[:80]}” from "
              f"{said}", ops=[create_op(ctx, m, prov, (event,))])
    if not result.items and result.skipped_reason is None:
        result.skipped_reason = "no dated obligation" if obs.unit_kind == "mail" else "recurring or untimed event"
    return result


@register("obligations")
def mine_obligations(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    if obs.unit_kind == "calendar_event" or (obs.unit_kind == "mail" and obs.role != "user"):
        return mine_candidates(ctx, obs)
    return run_class(ctx, obs, "obligations", parse)


from kenning.intake.extractors import register_cue  # noqa: E402

register_cue("obligations", lambda text: bool(_DONE.search(text)) or any(p.search(text) for p in _PATTERNS))
