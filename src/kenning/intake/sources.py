"""Notes, mail and calendar through the same funnel as chat (issue 18 (b); decisions I90–I95).

Each source hands the funnel its own units with the seed's dedup key — a note *version*, a *mail*, a calendar
*event* — and, where the seed gives the source its own significance rule, that rule as the unit's ``rule``
(decision, reason code), taken at the policy's step 6 in place of the score (incognito, the critical lane, the
budget and Focus keep their places in the strict order):

- a note version: the §20B.2 session-close decision stage 1 took on it (``skip_placeholder``, ``skip_micro_edit``,
  ``skip_double_extract``, ``deep_first_write``, ``deep_user_flagged``, ``deep``/``shallow``) — the reason code of
  the funnel's decision, so a skipped version is an audited skip like any other (I90);
- a calendar event: §20B.15's defaults with §20B.12's passive-signal bypass — externally binding (hearing,
  deadline, filing, appointment…) → deep, any other event → shallow (I91);
- a mail: the user's own mail is scored like a chat turn; someone else's mail naming a deadline ("due on …",
  "please … by …") → shallow (an obligation candidate), else the score (I92).
Pure functions over rows; the SQL is in ``store/``."""

from __future__ import annotations

import re
from typing import Any

from kenning.intake.envelope import IntakeUnit, chat_units, content_version

NOTE_SURFACE, MAIL_SURFACE, CALENDAR_SURFACE = "note", "email", "calendar"

# stage 1's session-close decision → the funnel's step-6 decision (its name becomes the reason code)
NOTE_RULES = {"skip_placeholder": "skip", "skip_micro_edit": "skip", "skip_double_extract": "skip",
              "defer": "skip", "deep_first_write": "deep", "deep_user_flagged": "deep", "deep": "deep",
              "shallow": "shallow"}

_BINDING = re.compile(r"\b(?:hearing|trial|court|deposition|filing|deadline|due|exam|interview|appointment|"
                      r"renewal|expir\w*|closing|signing|surgery|consultation|check-?up|tax|visa|passport)\b", re.I)
MAIL_DEADLINE = re.compile(
    r"\b(?:(?:is|are|falls?|becomes?)\s+due|due\s+(?:on|by|date)|deadline|no\s+later\s+than|expires?\s+on|"
    r"(?:please|kindly)\s+\w+(?:\s+\S+){0,8}?\s+(?:by|before)\s)", re.I)


def note_unit(conversation: dict[str, Any], message: dict[str, Any] | None, version: dict[str, Any]) -> IntakeUnit:
    """One note version: its id is the version id, its text the version's content (the quote of its provenance)."""
    decision = version["decision"]
    return IntakeUnit(
        surface=NOTE_SURFACE, source_ref=f"note:{version['note_id']}", source_version_id=version["version_id"],
        actor="user", unit_kind="note_version", text=version["content"],
        created_at=(message or {}).get("created_at_utc") or version["observed_at"],
        conversation_id=conversation["conversation_id"], message_id=(message or {}).get("message_id"), role="user",
        focus=decision == "deep_user_flagged", title=conversation.get("title"),
        rule=(NOTE_RULES.get(decision, "skip"), "baseline_in_flight" if decision == "defer" else decision))


def calendar_rule(text: str, meta: dict[str, Any]) -> tuple[str, str]:
    """§20B.15 with §20B.12: a calendar event is a passive signal that bypasses the engagement gate to shallow;
    an externally binding one is deep; a recurring routine one stays shallow (the seed's "shallow or skip": the
    bypass decides) and the obligation miner makes nothing of it."""
    if meta.get("rrule"):
        return "shallow", "calendar_recurring_routine"
    if _BINDING.search(text):
        return "deep", "calendar_binding_event"
    return "shallow", "calendar_passive_signal"


def calendar_units(conversation: dict[str, Any], messages: list[dict[str, Any]],
                   metas: dict[str, dict[str, Any]]) -> list[IntakeUnit]:
    out = []
    for m in messages:
        text = m["text_raw"] or ""
        meta = metas.get(m["message_id"], {})
        out.append(IntakeUnit(
            surface=CALENDAR_SURFACE, source_ref=f"event:{m['message_id']}", source_version_id=content_version(text),
            actor="user" if m["role"] == "user" else "agent", unit_kind="calendar_event", text=text,
            created_at=m["created_at_utc"], conversation_id=m["conversation_id"], message_id=m["message_id"],
            role=m["role"], title=conversation.get("title"), rule=calendar_rule(text, meta)))
    return out


def mail_units(conversation: dict[str, Any], messages: list[dict[str, Any]], config: Any) -> list[IntakeUnit]:
    units = chat_units(conversation, messages, config, surface=MAIL_SURFACE, unit_kind="mail", ref="mail")
    out = []
    for u in units:
        if u.unit_kind == "mail" and u.actor != "user" and MAIL_DEADLINE.search(u.text):
            u = IntakeUnit(**{**u.__dict__, "rule": ("shallow", "mail_deadline_from_sender")})
        out.append(u)
    return out


__all__ = ["CALENDAR_SURFACE", "MAIL_DEADLINE", "MAIL_SURFACE", "NOTE_RULES", "NOTE_SURFACE", "calendar_rule",
           "calendar_units", "mail_units", "note_unit"]
