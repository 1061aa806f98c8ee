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


class _Frontier:
    """What the newest known claims look like, to tell when a claim said at τ only extends the current state
    (T49): the latest valid time of any known claim, and whether every eligible positive claim there is one object
    and still active."""

    def __init__(self) -> None:
        self.max_vf: str | None = None
        self.top: list[Base] = []

    def reset(self, known: list[Base]) -> None:
        self.max_vf = max((b.valid_from for b in known if b.valid_from), default=None)
        self.top = [b for b in known if b.valid_from == self.max_vf and self.max_vf is not None]

    def extended_by(self, arriving: list[Base], states: dict[str, State]) -> bool:
        top = [b for b in self.top if b.eligible and b.polarity == "positive"]
        if not top or len(top) != len(self.top) or any(states[b.assertion_id].status != "active" for b in top):
            return False
        sig = top[0].object_signature
        if any(b.object_signature != sig for b in top):
            return False
        for b in arriving:
            if b.polarity != "positive" or b.supersession_type == "correction":
                return False
            if b.eligible and not (b.valid_from > self.max_vf and b.object_signature == sig):
                return False
            if not b.eligible and b.valid_from and b.valid_from > self.max_vf:
                return False
        return True

    def add(self, arriving: list[Base]) -> None:
        new = max((b.valid_from for b in arriving if b.eligible), default=None)
        if new is not None:
            self.max_vf, self.top = new, [b for b in arriving if b.valid_from == new]


def replay_group(bases: list[Base], retractions: list[dict], make_pc: Callable[[str], PassContext],
                 functional: bool, tx_of: dict[str, str], fast: bool = True) -> dict[str, list[Version]]:
    out: dict[str, list[Version]] = {}
    if not needs_replay(bases, retractions, functional):
        for b in bases:
            out[b.assertion_id] = [Version(b.tx, None, initial_state(b).key(), "FIRST_SEEN", None)]
        return out
    taus = {b.tx for b in bases} | {r["tx"] for r in retractions}
    taus |= {tx_of[b.superseded_by] for b in bases if b.supersession_type == "correction" and b.superseded_by
             in tx_of}
    by_tx: dict[str, list[Base]] = {}
    for b in bases:
        by_tx.setdefault(b.tx, []).append(b)
    ret_taus = {r["tx"] for r in retractions}
    # claims whose arrival acts on others: a correction's replacement, a retraction's named target
    corrected_by = {b.superseded_by for b in bases if b.supersession_type == "correction" and b.superseded_by}
    corrected_by |= {r["target_assertion_id"] for r in retractions if r["target_assertion_id"]}
    frontier, states, known = _Frontier(), {}, []
    for tau in sorted(taus):
        arriving = by_tx.get(tau, [])
        if fast and known and tau not in ret_taus and not any(b.assertion_id in corrected_by for b in arriving) \
                and frontier.extended_by(arriving, states):
            # T49: a claim that only continues the newest state changes no other claim and keeps its first state
            for b in arriving:
                states[b.assertion_id] = initial_state(b)
                out[b.assertion_id] = [Version(tau, None, states[b.assertion_id].key(), "FIRST_SEEN", None)]
            known.extend(arriving)
            frontier.add(arriving)
            continue
        known.extend(arriving)
        sub = [b for b in bases if b.tx <= tau]
        rets = [r for r in retractions if r["tx"] <= tau]
        if not sub:
            continue
        states, _ = run_passes(sub, rets, make_pc(tau))
        frontier.reset(sub)
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
