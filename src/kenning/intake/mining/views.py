"""What the mining commands and the demo show: each class's items with their evidence (the quoted message span),
obligations with overdue computed against the caller's clock, and the iCalendar export of obligations."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import apsw

from kenning.intake.mining.obligations import is_overdue
from kenning.knowledge import said
from kenning.store import knowledge as ksql

CLASSES = {"goals": "goal", "obligations": "obligation", "procedures": "procedure",
           "standing": "standing_procedure", "directives": "memory_directive"}


def _evidence(conn: apsw.Connection, node_id: str) -> list[dict[str, Any]]:
    return [{"entry_type": p["entry_type"], "message_id": p.get("message_id"), "quote": p.get("verbatim_excerpt"),
             "char_start": p.get("char_start"), "char_end": p.get("char_end"), "at": p.get("created_at"),
             **({"correction_reason": p["correction_reason"]} if p.get("correction_reason") else {})}
            for p in ksql.get_provenance(conn, node_id)]


def _summary(kind: str, n: dict[str, Any], now: str) -> dict[str, Any]:
    p = n["payload"] or {}
    if kind == "goal":
        return {"status": p.get("goal_status"), "time_horizon": p.get("time_horizon"),
                "parent_goal_id": p.get("parent_goal_id"), "evolved_from_goal_id": p.get("evolved_from_goal_id")}
    if kind == "obligation":
        status = "overdue" if is_overdue(p, now) else p.get("status")
        return {"status": status, "deadline": p["deadline"]["date"], "type": p["deadline"]["type"]}
    if kind == "procedure":
        return {"steps": [s["intent"] for s in p.get("steps", [])]}
    if kind == "standing_procedure":
        return {"trigger": p.get("trigger_summary"), "action": p.get("action_summary"),
                "exclusions": p.get("trigger_exclusions", []), "safety_class": p.get("safety_class")}
    return {"memory_type": p.get("memory_type"), "applies_when": p.get("applies_when"),
            "does_not_apply_when": p.get("does_not_apply_when")}


# Goal statuses `kenning goals` lists without --all (H3): what the person still pursues, however long ago they said it.
LIVE_GOAL = frozenset({"active", "on_hold"})


def items(conn: apsw.Connection, cls: str, now: str, *, include_inactive: bool = False,
          config: Any = None) -> list[dict[str, Any]]:
    """The class's nodes (``cls`` one of CLASSES) with state, details and evidence. ``confidence`` is §5's value at
    ``now`` (decayed); beside it ``beta_mean`` (the evidence alone) and ``last_said`` / ``days_since_said`` (H3).
    Goals: live ones (active, on hold) unless ``include_inactive``, most recently said first (§29.8); obligations by
    deadline; the rest most confident first."""
    from kenning.config import load_config

    config = config or load_config()
    kind = CLASSES[cls]
    rows = ksql.list_nodes(conn, kind=kind, active=None if include_inactive else True, limit=100000)
    out = []
    for n in rows:
        summary = _summary(kind, n, now)
        if kind == "goal" and not include_inactive and summary["status"] not in LIVE_GOAL:
            continue
        evidence = _evidence(conn, n["id"])
        r = said.reading(conn, config, n, now, ksql.get_provenance(conn, n["id"]))
        out.append({"id": n["id"], "name": n["canonical_name"], "kind": kind, "lifecycle_state": n["lifecycle_state"],
                    "lifecycle_substate": n.get("lifecycle_substate"), **r, "alpha": n["alpha"], "beta": n["beta"],
                    **summary, "evidence": evidence})
    if kind == "obligation":
        out.sort(key=lambda o: (o["deadline"], o["name"]))
    elif kind == "goal":
        out.sort(key=lambda o: (-(o["days_since_said"] is not None), o["days_since_said"] or 0, -o["beta_mean"],
                                o["name"], o["id"]))
    else:
        out.sort(key=lambda o: (-o["confidence"], -o["beta_mean"], o["name"], o["id"]))
    return out


def obligations_ics(obligations: list[dict[str, Any]], now: str) -> bytes:
    """An iCalendar (RFC 5545) file with one all-day-less VEVENT per obligation at its deadline (with its zone's
    offset as UTC), a stable UID per node so re-exports update rather than duplicate in a calendar app."""
    from icalendar import Calendar, Event

    cal = Calendar()
    cal.add("prodid", "-//Kenning//obligations//EN")
    cal.add("version", "2.0")
    stamp = dt.datetime.fromisoformat(now.replace("Z", "+00:00"))
    for o in obligations:
        at = dt.datetime.fromisoformat(o["deadline"].replace("Z", "+00:00"))
        ev = Event()
        ev.add("uid", f"{hashlib.sha256(o['id'].encode()).hexdigest()[:24]}@kenning")
        ev.add("dtstamp", stamp)
        ev.add("dtstart", at)
        ev.add("dtend", at + dt.timedelta(minutes=1))
        ev.add("summary", f"Due: {o['name']}")
        quote = next((e["quote"] for e in o["evidence"] if e.get("quote")), None)
        ev.add("description", f"{o['type']} obligation, status {o['status']}" + (f"\n“{quote}”" if quote else ""))
        # a candidate (a deadline from someone else's mail or a calendar invite) is not yet the user's: TENTATIVE (I174)
        ev.add("status", "CANCELLED" if o["status"] == "waived" else
               "TENTATIVE" if o.get("lifecycle_substate") == "candidate" else "CONFIRMED")
        cal.add_component(ev)
    return cal.to_ical()
