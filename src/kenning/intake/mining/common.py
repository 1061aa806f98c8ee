"""Shared pieces of the rule miners: sentence spans, dates with a timezone, the write of one mined item through
the single writer (provenance to the message and the verbatim quote span), and the mining config."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation
from kenning.knowledge.contracts import PayloadError
from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.ops import CreateNode, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.store import knowledge as ksql



@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


def sentences(text: str) -> list[Span]:
    """Sentence-ish spans (split on . ! ? ; and newlines), stripped, with their character offsets in ``text``.
    A period inside a number or an abbreviation like "e.g." may split a sentence; the miners match within
    clauses, so that costs little."""
    out: list[Span] = []
    for line_m in re.finditer(r"[^\n]+", text):
        line, base = line_m.group(0), line_m.start()
        for m in re.finditer(r"(?:[^.!?;]|\.(?=\d)|\.(?=[a-z]\.)|(?<=\b[a-z])\.(?=\s*[a-z]))+[.!?;]*", line):
            s = m.group(0)
            lead = len(s) - len(s.lstrip())
            s2 = s.strip()
            if s2:
                out.append(Span(base + m.start() + lead, base + m.start() + lead + len(s2), s2))
    return out


def clean_clause(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip(" ,;:-—–\"'*_`")   # markdown emphasis ("**How I …**") is no part of it
    return re.sub(r"[.!?]+$", "", s).strip()


@dataclass
class Mined:
    """One item a rule or a model found: the node to create and the quote it came from."""
    kind: str
    name: str
    payload: dict[str, Any]
    span: Span
    lifecycle_state: str | None = None
    lifecycle_substate: str | None = None
    extra_ops: list[Any] = field(default_factory=list)   # ops to run after the create (edges, status changes)
    user_confirmed_literals: bool = False


def mining_cfg(config: Any) -> Any:
    return getattr(config, "mining", None)


def timezone_of(config: Any) -> ZoneInfo:
    cfg = mining_cfg(config)
    name = getattr(cfg, "timezone", None) or "UTC"
    return ZoneInfo(name)


def writer_for(ctx: ExtractionContext) -> KnowledgeWriter:
    return KnowledgeWriter(ctx.conn, ctx.config, clock=Clock(ctx.now), export_log=False)


def provenance(obs: Observation, span: Span | None, *, entry_type: str, event: str | None,
               description: str, contradicts: bool = False, reason: str | None = None,
               message_id: str | None = None, created_at: str | None = None, voice: str = "self") -> ProvenanceIn:
    mid = message_id or obs.message_id
    return ProvenanceIn(
        entry_type=entry_type, source_description=description[:300], source_ref=f"message:{mid}",
        authority_type="personal", authorial_voice=voice, assertion_type="direct_quote",
        verbatim_excerpt=span.text if span else None, message_id=mid,
        char_start=span.start if span else None, char_end=span.end if span else None,
        created_at=created_at or obs.created_at, evidence_event=event, contradicts=contradicts,
        correction_reason=reason, still_current="yes")


def write(ctx: ExtractionContext, result: ExtractionResult, *, source_event: str, summary: str,
          ops: list[Any], key: str | None = None) -> str | None:
    """One KnowledgeCommit for one mined item (atomic: its create, edges and status changes together). A commit
    that changes nothing is no commit — re-running the miners on the same messages adds nothing."""
    try:
        res = writer_for(ctx).write(KnowledgeWrite(source_event=source_event, change_summary=summary[:2000],
                                                   ops=ops, idempotency_key=key))
    except (KnowledgeError, PayloadError, ValueError) as e:
        result.skipped_reason = f"refused: {str(e).splitlines()[0][:200]}"
        return None
    if res.created and res.commit_id:
        result.commit_ids.append(res.commit_id)
        result.items += 1
    return res.commit_id


def create_op(ctx: ExtractionContext, m: Mined, prov: list[ProvenanceIn], evidence: tuple[str, ...]) -> CreateNode:
    return CreateNode(node_kind=m.kind, canonical_name=m.name[:500], payload=m.payload, provenance=tuple(prov),
                      evidence=evidence, lifecycle_state=m.lifecycle_state, lifecycle_substate=m.lifecycle_substate,
                      if_exists="merge", user_confirmed_literals=m.user_confirmed_literals,
                      last_verified_at=None)


def node_id(ctx: ExtractionContext, kind: str, name: str) -> str:
    return writer_for(ctx).node_id(kind, name[:500])


def get_node(ctx: ExtractionContext, nid: str) -> dict[str, Any] | None:
    return ksql.get_node(ctx.conn, nid)


def nodes_of_kind(ctx: ExtractionContext, kind: str, *, active: bool | None = True) -> list[dict[str, Any]]:
    return ksql.list_nodes(ctx.conn, kind=kind, active=active, limit=100000)


# ---- dates -------------------------------------------------------------------------------------------------

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_DAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_MON = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
DATE_RE = re.compile(
    r"(?P<iso>\b\d{4}-\d{2}-\d{2}\b)"
    rf"|(?P<md>\b{_MON}\.?\s+(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<md_y>\d{{4}}))?\b)"
    rf"|(?P<dm>\b(?:the\s+)?(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}\b\.?(?:,?\s+(?P<dm_y>\d{{4}}))?)"
    r"|(?P<rel>\b(?:tomorrow|today|tonight)\b)"
    rf"|(?P<wd>\b(?:(?:next|this|on)\s+)?{_DAY}\b)"
    r"|(?P<eo>\b(?:the\s+)?end\s+of\s+(?:the\s+)?(?:this\s+|next\s+)?(?:month|week|year)\b)"
    r"|(?P<in>\bin\s+(?P<in_n>\d+|a|one|two|three|four|five|six|ten)\s+(?P<in_u>days?|weeks?|months?)\b)",
    re.I)
_NUM = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}


def _month_in(s: str) -> int:
    for word in re.findall(r"[a-z]+", s.lower()):
        if word in _MONTHS:
            return _MONTHS[word]
    raise ValueError(s)


def _next_on_or_after(ref: dt.date, month: int, day: int, year: int | None) -> dt.date:
    if year:
        return dt.date(year, month, day)
    d = dt.date(ref.year, month, day)
    return d if d >= ref else dt.date(ref.year + 1, month, day)


def find_date(text: str, ref: dt.date) -> tuple[dt.date, re.Match] | None:
    """The first date named in ``text`` resolved against ``ref`` (the message's day): explicit dates, weekdays,
    relative days, end of month/week/year. None when there is none (or it is not a real day)."""
    for m in DATE_RE.finditer(text):
        try:
            s = m.group(0).lower()
            if m.group("iso"):
                return dt.date.fromisoformat(m.group("iso")), m
            if m.group("md"):
                y = m.group("md_y")
                return _next_on_or_after(ref, _month_in(s), int(m.group("md_d")), int(y) if y else None), m
            if m.group("dm"):
                y = m.group("dm_y")
                return _next_on_or_after(ref, _month_in(s), int(m.group("dm_d")), int(y) if y else None), m
            if m.group("rel"):
                return (ref if "to" in s[:2] and "tomorrow" not in s else ref + dt.timedelta(days=1)), m
            if m.group("wd"):
                wd = _DAYS[re.findall(_DAY, s, re.I)[0].lower()]
                # the coming such day ("Friday" said on a Friday is next week's)
                return ref + dt.timedelta(days=(wd - ref.weekday()) % 7 or 7), m
            if m.group("eo"):
                nxt = "next" in s
                if "month" in s:
                    y, mo = (ref.year + (ref.month == 12), ref.month % 12 + 1) if nxt else (ref.year, ref.month)
                    return dt.date(y, mo, calendar.monthrange(y, mo)[1]), m
                if "week" in s:
                    return ref + dt.timedelta(days=(6 - ref.weekday()) % 7 + (7 if nxt else 0)), m
                return dt.date(ref.year + nxt, 12, 31), m
            if m.group("in"):
                n = m.group("in_n").lower()
                k = int(n) if n.isdigit() else _NUM[n]
                unit = m.group("in_u").lower()
                days = k * (7 if unit.startswith("week") else 30 if unit.startswith("month") else 1)
                return ref + dt.timedelta(days=days), m
        except (ValueError, KeyError, IndexError):
            continue
    return None


def deadline_iso(day: dt.date, config: Any) -> str:
    """The end of ``day`` (the configured deadline time) in the user's timezone, as ISO-8601 with its offset."""
    cfg = mining_cfg(config)
    hh, mm = (getattr(cfg, "deadline_time", None) or "23:59").split(":")
    local = dt.datetime(day.year, day.month, day.day, int(hh), int(mm), tzinfo=timezone_of(config))
    return local.isoformat()


def ref_day(obs: Observation, ctx: ExtractionContext) -> dt.date:
    stamp = obs.created_at or ctx.now
    t = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.astimezone(timezone_of(ctx.config)).date()
