"""How well stage 5 follows the synthetic persona's true home and employer (issue 22 §5; docs/decisions.md T47).

``evaluate(conn, timeline)`` reads stage 5's rows for the vault owner's claims about each predicate of the
manifest's ``persona.timeline`` (``kenning bench synth``) and scores them against the truth. Every user-grounded,
positive mention counts — one stage 5 left ``ineligible`` too: it is never closed, so it stays current; a mention is
of the true state whose object it names.

- **closed correctly**: a mention of a state that truly ended is closed (superseded or negated); when superseded,
  its successor names the true next object; its valid_to lies within ``tolerance_days`` of the true change (or is
  untouched because a later statement overrode a stale mention, T45). Reported per mention and per change (a change
  counts when every mention of the ended state is closed correctly).
- **wrongly current**: a mention of a state that truly ended that stage 5 still holds at the end of the timeline
  (not closed, valid_to open or later) — the answer `facts` would give about now.
- **current kept**: mentions of the true current state still held at the end.
Mentions of objects the timeline does not hold (a one-day address in a tax form) are counted apart; those still
held at the end count as wrongly current too.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from kenning.store.connection import rows

CLOSED = ("superseded", "negated")


def _norm(name: str | None) -> str:
    return re.sub(r"[^a-z0-9]+", " ", (name or "").lower()).strip()


def _day(ts: str | None) -> dt.date | None:
    return dt.date.fromisoformat(ts[:10]) if ts else None


def _mentions(conn, subject_id: str, predicate: str) -> list[dict]:
    return rows(conn, "SELECT a.assertion_id, a.polarity, a.asserted_role, a.has_user_corroboration, "
                      "e.canonical_name AS object, t.status, t.valid_from_utc, t.valid_to_utc, "
                      "t.temporal_superseded_by_assertion_id AS superseded_by, t.raw_temporalize_json "
                      "FROM assertions a JOIN predicates p ON p.predicate_id = a.predicate_id "
                      "JOIN assertion_temporalized t ON t.assertion_id = a.assertion_id "
                      "LEFT JOIN entities e ON e.entity_id = a.object_entity_id "
                      "WHERE a.subject_entity_id = ? AND p.canonical_label_norm = ? ORDER BY a.assertion_id",
                (subject_id, predicate))


def _object_of(conn, assertion_id: str) -> str | None:
    r = rows(conn, "SELECT e.canonical_name AS n FROM assertions a LEFT JOIN entities e ON e.entity_id = "
                   "a.object_entity_id WHERE a.assertion_id = ?", (assertion_id,))
    return r[0]["n"] if r else None


def _which(obj: str | None, states: list[dict]) -> int | None:
    n = _norm(obj)
    for i, s in enumerate(states):
        t = _norm(s["object"])
        if n and (n == t or n.startswith(t + " ") or t.startswith(n + " ")):
            return i
    return None


def evaluate(conn, timeline: dict[str, list[dict]], subject_id: str, end: str,
             tolerance_days: int = 31) -> dict[str, Any]:
    """``end``: the timeline's end (manifest ``timeline.to``) — "now" for the wrongly-current test."""
    end_day = _day(end)
    out: dict[str, Any] = {"predicates": {}}
    tot = {"ended_mentions": 0, "closed_correctly": 0, "wrongly_current": 0, "current_mentions": 0,
           "current_kept": 0, "changes": 0, "changes_closed": 0, "other_mentions": 0, "other_current": 0,
           "ineligible": 0}
    for pred, states in sorted(timeline.items()):
        p = {k: 0 for k in tot}
        misses: list[dict] = []
        per_state: dict[int, list[bool]] = {}
        for m in _mentions(conn, subject_id, pred):
            if m["polarity"] != "positive" or not (m["asserted_role"] == "user" or m["has_user_corroboration"]):
                continue
            p["ineligible"] += m["status"] == "ineligible"
            held = m["status"] not in CLOSED and m["status"] != "retracted" and (
                m["valid_to_utc"] is None or _day(m["valid_to_utc"]) > end_day)
            i = _which(m["object"], states)
            if i is None:
                p["other_mentions"] += 1
                p["other_current"] += held
                continue
            s = states[i]
            if s["to"] is None:
                p["current_mentions"] += 1
                p["current_kept"] += held
                continue
            p["ended_mentions"] += 1
            p["wrongly_current"] += held
            ok = m["status"] in CLOSED
            if ok and m["superseded_by"] and i + 1 < len(states):
                ok = _which(_object_of(conn, m["superseded_by"]), states) == i + 1
            if ok and m["valid_to_utc"] is not None:
                ok = abs((_day(m["valid_to_utc"]) - dt.date.fromisoformat(s["to"])).days) <= tolerance_days
            elif ok:
                ok = "OVERRIDDEN_BY_LATER_STATEMENT" in (m["raw_temporalize_json"] or "")
            p["closed_correctly"] += ok
            per_state.setdefault(i, []).append(ok)
            if not ok and len(misses) < 5:
                misses.append({"object": m["object"], "status": m["status"], "valid_from": m["valid_from_utc"],
                               "valid_to": m["valid_to_utc"]})
        for i, s in enumerate(states):
            if s["to"] is not None:
                p["changes"] += 1
                p["changes_closed"] += bool(per_state.get(i)) and all(per_state[i])
        p["misses"] = misses
        out["predicates"][pred] = p
        for k in tot:
            tot[k] += p[k]
    out.update(tot)
    out["closed_correctly_ratio"] = round(tot["closed_correctly"] / tot["ended_mentions"], 4) \
        if tot["ended_mentions"] else None
    out["wrongly_current_ratio"] = round((tot["wrongly_current"] + tot["other_current"])
                                         / (tot["ended_mentions"] + tot["other_mentions"]), 4) \
        if tot["ended_mentions"] + tot["other_mentions"] else None
    out["changes_closed_ratio"] = round(tot["changes_closed"] / tot["changes"], 4) if tot["changes"] else None
    out["current_kept_ratio"] = round(tot["current_kept"] / tot["current_mentions"], 4) \
        if tot["current_mentions"] else None
    return out
