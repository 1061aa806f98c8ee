"""What `kenning history` shows by default: each (subject, predicate)'s succession of states, not every mention
(docs/decisions.md T46).

A state is a run of consecutive mentions of the same object and polarity, in valid-time order, for a functional
predicate (Acme → Globex; Berlin → Paris), and all mentions of one object for any other predicate (likes hiking,
said twelve times, is one state). Claims stage 5 does not reason with (`ineligible`), retracted claims (they were
never true) and mentions a later statement overrode (T45) never split a run: the first two are grouped by object
after the succession, the last are counted on the state that overrode them.
"""

from __future__ import annotations

from typing import Any

APART = ("ineligible", "retracted")   # never a state of the succession: listed after it, by object


def _order(i: dict) -> tuple:
    return (i["valid_from_utc"] or i["said_at"] or "", i["said_at"] or "", i["assertion_id"])


def _state(members: list[dict], overridden: int = 0) -> dict[str, Any]:
    members = sorted(members, key=_order)
    reasoned = [m for m in members if m["status"] != "ineligible"]
    last = (reasoned or members)[-1]
    said = sorted(m["said_at"] for m in members if m["said_at"])
    froms = [m["valid_from_utc"] for m in members if m["valid_from_utc"]]
    statuses: dict[str, int] = {}
    for m in members:
        statuses[m["status"]] = statuses.get(m["status"], 0) + 1
    return {"subject": last["subject"], "predicate": last["predicate"], "object": last["object"],
            "polarity": last["polarity"], "statement": last["statement"], "status": last["status"],
            "why": last["why"], "valid_from_utc": min(froms) if froms else None, "valid_to_utc": last["valid_to_utc"],
            "valid_until_hint_utc": last["valid_until_hint_utc"], "mentions": len(members),
            "overridden_mentions": overridden, "first_said": said[0] if said else None,
            "last_said": said[-1] if said else None, "quote": members[0]["quote"], "statuses": statuses,
            "superseded_by": last["superseded_by"], "assertion_ids": [m["assertion_id"] for m in members]}


def succession(items: list[dict], functional: set[str]) -> list[dict]:
    """``items``: `history`'s per-assertion rows (with ``overridden``); ``functional``: predicate labels whose rule
    closes the previous state. Returns the states, grouped by (subject, predicate) in the order first seen."""
    groups: dict[tuple, list[dict]] = {}
    for i in items:
        groups.setdefault((i["subject"], i["predicate"]), []).append(i)
    out: list[dict] = []
    for (_s, pred), members in groups.items():
        members = sorted(members, key=_order)
        reasoned = [m for m in members if m["status"] not in APART and not m.get("overridden")]
        overridden: dict[str, int] = {}
        for m in members:
            if m.get("overridden") and m["superseded_by"]:
                overridden[m["superseded_by"]] = overridden.get(m["superseded_by"], 0) + 1
        runs: list[list[dict]] = []
        if pred in functional:
            for m in reasoned:
                if runs and (runs[-1][-1]["object"], runs[-1][-1]["polarity"]) == (m["object"], m["polarity"]):
                    runs[-1].append(m)
                else:
                    runs.append([m])
        else:
            by_obj: dict[tuple, list[dict]] = {}
            for m in reasoned:
                by_obj.setdefault((str(m["object"]), m["polarity"]), []).append(m)
            runs = sorted(by_obj.values(), key=lambda r: _order(r[0]))
        for r in runs:
            ids = {m["assertion_id"] for m in r}
            out.append(_state(r, sum(n for by, n in overridden.items() if by in ids)))
        rest: dict[tuple, list[dict]] = {}
        for m in members:
            if m["status"] in APART or (m.get("overridden") and not any(
                    m["superseded_by"] in s["assertion_ids"] for s in out)):
                rest.setdefault((str(m["object"]), m["polarity"], m["status"]), []).append(m)
        out.extend(_state(r) for r in sorted(rest.values(), key=lambda r: _order(r[0])))
    return out
