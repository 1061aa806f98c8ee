"""``.ics`` calendars (issue 18 part 7; ``icalendar``): each VEVENT is one conversation-like unit with one message.

- Streaming: the file is read line by line; VTIMEZONE blocks are collected and each VEVENT is parsed on its own
  (wrapped with the zones seen so far), so one broken event is rejected alone (file, event number, reason) while the
  rest imports. The event's text as it stood in the file is its raw record.
- Identity: UID (+ RECURRENCE-ID for a changed occurrence); an event without a UID gets one from its content hash.
- Text: summary, when (start–end with the zone), where, who (organizer, attendees), then the description. The
  message time is the start in UTC; the part metadata keeps start/end with their offset, the TZID, all-day and the
  recurrence rule. Floating times use ``corpus.calendar.default_timezone`` (I64).
- The organizer is the speaker; an event you organise (``corpus.mail.self_addresses``, ``--self``) or one without an
  organizer (your own entry) gets role ``user``."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any, Iterator
from zoneinfo import ZoneInfo

from kenning.sources.timestamps import format_utc
from kenning.sources.transcript import Problem
from kenning.sources.units import Unit, UnitTurn


def _lines(reader: Any) -> Iterator[bytes]:
    pending = b""
    while True:
        data = reader.read(1 << 20)
        if not data:
            break
        pending += data
        *lines, pending = pending.split(b"\n")
        yield from (line + b"\n" for line in lines)
    if pending:
        yield pending


def _blocks(reader: Any) -> Iterator[tuple[str, str | None, int | None]]:
    """("header"|"tz"|"event", text, event number) in file order."""
    current: list[bytes] | None = None
    kind = ""
    n = 0
    header: list[bytes] = []
    for raw in _lines(reader):
        line = raw.strip(b"\r\n").upper()
        if current is None and line in (b"BEGIN:VEVENT", b"BEGIN:VTIMEZONE"):
            kind = "event" if line == b"BEGIN:VEVENT" else "tz"
            current = [raw]
            continue
        if current is not None:
            current.append(raw)
            if line == (b"END:VEVENT" if kind == "event" else b"END:VTIMEZONE"):
                yield kind, b"".join(current).decode("utf-8", errors="replace"), n if kind == "event" else None
                if kind == "event":
                    n += 1
                current = None
            continue
        header.append(raw)
    if current is not None:
        yield "broken", b"".join(current).decode("utf-8", errors="replace"), n if kind == "event" else None
    yield "header", b"".join(header).decode("utf-8", errors="replace"), None


def _when(v: Any, tz: str) -> tuple[str | None, str | None, bool]:
    """(UTC time, local ISO with offset, all-day) of a DTSTART/DTEND value."""
    if v is None:
        return None, None, False
    d = v.dt
    if isinstance(d, dt.datetime):
        if d.tzinfo is None:
            d = d.replace(tzinfo=ZoneInfo(tz))
        return format_utc(d), d.isoformat(), False
    if isinstance(d, dt.date):
        local = dt.datetime(d.year, d.month, d.day, tzinfo=ZoneInfo(tz))
        return format_utc(local), d.isoformat(), True
    return None, None, False


def _tzid(v: Any) -> str | None:
    if v is None:
        return None
    tz = v.params.get("TZID") if hasattr(v, "params") else None
    if tz:
        return str(tz)
    d = getattr(v, "dt", None)
    return str(d.tzinfo) if isinstance(d, dt.datetime) and d.tzinfo else None


def _person(v: Any) -> tuple[str, str]:
    addr = str(v).split(":", 1)[-1].strip().lower() if v is not None else ""
    name = str(v.params.get("CN")) if v is not None and hasattr(v, "params") and v.params.get("CN") else addr
    return name, addr


def event_unit(index: int, text: str, zones: list[str], default_tz: str, selves: set[str],
               self_name: str | None) -> Unit | Problem:
    from icalendar import Calendar

    doc = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//kenning//import//EN\r\n" + "".join(zones) + text
    if not doc.endswith("\n"):
        doc += "\r\n"
    doc += "END:VCALENDAR\r\n"
    try:
        cal = Calendar.from_ical(doc)
        events = [c for c in cal.walk("VEVENT")]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return Problem(index, None, "skipped", "UNREADABLE_EVENT", f"the event cannot be parsed ({e})", text)
    if len(events) != 1:
        return Problem(index, None, "skipped", "UNREADABLE_EVENT", "the event cannot be parsed", text)
    ev = events[0]
    try:
        start_v = ev.get("DTSTART")
        start_utc, start_local, all_day = _when(start_v, default_tz)
        end_utc, end_local, _ = _when(ev.get("DTEND"), default_tz)
    except (ValueError, KeyError, TypeError) as e:
        return Problem(index, "/DTSTART", "skipped", "BAD_EVENT_TIME", f"the event's start or end is unreadable ({e})",
                       text)
    if start_utc is None:
        return Problem(index, "/DTSTART", "skipped", "NO_START", "the event has no DTSTART (a start time)", text)
    uid = str(ev.get("UID") or "") or "sha256-" + hashlib.sha256(text.encode()).hexdigest()[:32]
    rid = ev.get("RECURRENCE-ID")
    rid_text = rid.to_ical().decode() if rid is not None else None
    summary = str(ev.get("SUMMARY") or "").strip() or "(no title)"
    location = str(ev.get("LOCATION") or "").strip()
    description = str(ev.get("DESCRIPTION") or "").strip()
    tzid = _tzid(start_v)
    org_name, org_addr = _person(ev.get("ORGANIZER"))
    attendees = ev.get("ATTENDEE")
    attendees = attendees if isinstance(attendees, list) else ([attendees] if attendees is not None else [])
    people = [_person(a) for a in attendees]
    when = f"{start_local}" + (f" – {end_local}" if end_local else "") + (f" ({tzid})" if tzid else "")
    lines = [summary, f"When: {when}"]
    if location:
        lines.append(f"Where: {location}")
    if org_name:
        lines.append(f"Organizer: {org_name}")
    if people:
        lines.append("With: " + ", ".join(n for n, _ in people))
    if description:
        lines += ["", description]
    rrule = ev.get("RRULE")
    meta = {"start": start_local, "end": end_local, "tzid": tzid, "all_day": all_day, "uid": uid,
            "recurrence_id": rid_text, "rrule": rrule.to_ical().decode() if rrule is not None else None,
            "location": location or None, "organizer": org_addr or None,
            "attendees": [a for _, a in people] or None, "status": str(ev.get("STATUS")) if ev.get("STATUS") else None}
    is_self = not org_addr or org_addr.removeprefix("mailto:") in selves or org_addr in selves or (
        self_name is not None and org_name.casefold() == self_name.casefold())
    raw = {"vevent": text}
    export_id = uid + (f"/{rid_text}" if rid_text else "")
    turn = UnitTurn("event", org_name or None, "user" if is_self else "unknown", "\n".join(lines), start_utc, raw,
                    [{"part_type": "other", "text": None, "meta": {k: v for k, v in meta.items() if v is not None},
                      "raw": {"event": meta}}])
    return Unit(index, ("calendar_event", uid, rid_text or ""), export_id, summary, "calendar", raw, [turn],
                created_at=start_utc, updated_at=end_utc or start_utc)


def calendar_units(reader: Any, cfg: Any, self_addresses: list[str], self_name: str | None
                   ) -> Iterator[Unit | Problem]:
    zones: list[str] = []
    selves = {a.lower() for a in self_addresses}
    saw_calendar = False
    for kind, text, n in _blocks(reader):
        if kind == "tz":
            zones.append(text)
        elif kind == "event":
            saw_calendar = True
            yield event_unit(n, text, zones, cfg.default_timezone, selves, self_name)
        elif kind == "broken":
            yield Problem(n, None, "skipped", "TRUNCATED_EVENT", "the event has no END line (the file is cut off)",
                          text)
        elif kind == "header" and not saw_calendar and "BEGIN:VCALENDAR" not in (text or "").upper():
            yield Problem(None, None, "skipped", "NOT_A_CALENDAR", "no BEGIN:VCALENDAR: not an iCalendar file",
                          (text or "")[:2048])


__all__ = ["calendar_units", "event_unit"]
