"""Transaction time (docs/decisions.md T3–T4): what Kenning believed about each assertion, and from when.

Transaction time is the conversation's own clock: Kenning "learns" a claim when the message that makes it was
written (``asserted_at_utc``; the ingest time when the message has none) and revises it when a later message
supersedes, retracts or negates it. ``replay_group`` computes that history exactly: for each distinct
transaction time of a (subject, predicate) group it reruns the stage-5 passes over what was known by then and
records each change as a version. ``merge`` writes it without rewriting the past: stored versions stay; a
history that would now differ in the past (an export that brings older messages late, or a recomputed claim)
is recorded from the ingest time as ``LATE_KNOWLEDGE``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kenning.temporal.lifecycle import PRECEDENCE, PassContext, State, initial_state, run_passes
from kenning.temporal.validtime import Base


@dataclass
class Version:
    tx_from: str
    tx_to: str | None
    key: tuple            # State.key(): status, valid time, links, rule
    reason: str
    cause: str | None


def _reason(old: tuple, new: State) -> str:
    if new.status != old[0]:
        return new.reason if PRECEDENCE[new.status] > PRECEDENCE[old[0]] else "REVISED"
    if new.key()[1:5] != old[1:5]:
        return "VALID_TIME_CHANGED"
    return "LINK_CHANGED"


def needs_replay(bases: list[Base], retractions: list[dict], functional: bool) -> bool:
    """Without retractions, negations, corrections or a functional rule nothing ever changes a state."""
    return bool(retractions) or functional or any(b.polarity == "negative" or b.supersession_type == "correction"
                                                  for b in bases)


def replay_group(bases: list[Base], retractions: list[dict], make_pc: Callable[[str], PassContext],
                 functional: bool, tx_of: dict[str, str]) -> dict[str, list[Version]]:
    out: dict[str, list[Version]] = {}
    if not needs_replay(bases, retractions, functional):
        for b in bases:
            out[b.assertion_id] = [Version(b.tx, None, initial_state(b).key(), "FIRST_SEEN", None)]
        return out
    taus = {b.tx for b in bases} | {r["tx"] for r in retractions}
    taus |= {tx_of[b.superseded_by] for b in bases if b.supersession_type == "correction" and b.superseded_by
             in tx_of}
    for tau in sorted(taus):
        sub = [b for b in bases if b.tx <= tau]
        rets = [r for r in retractions if r["tx"] <= tau]
        if not sub:
            continue
        states, _ = run_passes(sub, rets, make_pc(tau))
        arriving = sorted([b.assertion_id for b in sub if b.tx == tau] + [r["retraction_id"] for r in rets
                                                                           if r["tx"] == tau])
        for b in sub:
            s = states[b.assertion_id]
            vs = out.get(b.assertion_id)
            if vs is None:
                first = initial_state(b)
                reason = "FIRST_SEEN" if s.key() == first.key() else _reason(first.key(), s)
                out[b.assertion_id] = [Version(tau, None, s.key(), reason, s.cause if reason != "FIRST_SEEN"
                                               else None)]
                continue
            last = vs[-1]
            if s.key() != last.key:
                reason = _reason(last.key, s)
                cause = s.cause if reason not in ("REVISED", "VALID_TIME_CHANGED", "LINK_CHANGED") else None
                last.tx_to = tau
                vs.append(Version(tau, None, s.key(), reason, cause or (arriving[0] if arriving else None)))
    return out


def merge(computed: list[Version], stored: list[dict], now: str) -> tuple[list[tuple], list[Version], str]:
    """(tx_to updates [(version, tx_to, closed_reason)], versions to insert (numbered after the stored ones),
    how). Stored rows are never changed except to close the open one."""
    if not stored:
        return [], computed, "NEW"
    n = len(stored)

    def same(i: int) -> bool:
        s, c = stored[i], computed[i]
        return (s["tx_from_utc"], s["key"], s["reason"], s["cause_id"]) == (c.tx_from, c.key, c.reason, c.cause)

    prefix = len(computed) >= n and all(same(i) for i in range(n)) \
        and all(stored[i]["tx_to_utc"] == computed[i].tx_to for i in range(n - 1)) \
        and stored[-1]["closed_reason"] is None \
        and (stored[-1]["tx_to_utc"] is None or stored[-1]["tx_to_utc"] == computed[n - 1].tx_to)
    if prefix:
        ups = []
        if stored[-1]["tx_to_utc"] != computed[n - 1].tx_to:
            ups.append((stored[-1]["version"], computed[n - 1].tx_to, None))
        return ups, computed[n:], "APPENDED" if (ups or computed[n:]) else "UNCHANGED"
    final = computed[-1]
    last = stored[-1]
    if last["tx_to_utc"] is None and last["key"] == final.key:
        return [], [], "UNCHANGED"
    at = max(now, last["tx_from_utc"])
    ups = [(last["version"], at, None)] if last["tx_to_utc"] is None else []
    return ups, [Version(at, None, final.key, "LATE_KNOWLEDGE", None)], "LATE_KNOWLEDGE"
