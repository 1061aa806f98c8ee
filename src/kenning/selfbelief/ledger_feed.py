"""Self-belief nodes → the belief ledger (issue 8 §3, the self-belief half), so `kenning why "patient"` answers
with the quote and the date.

Each node with evidence is one ledger belief (same id):
* ``statement``: the node's first-person sentence (≤ 280), ``subject``: SELF, ``predicate``: the belief type,
  ``object``: the canonical text, ``topic``: "self: <type>";
* ``sources``: one verbatim quote per evidence span (``messages.text_raw[start:end]``, hash-checked by the ledger);
* ``asserted_at``: when it was first said (the earliest occurrence's message time; the node's ``created_at``
  only when no occurrence is dated) — a person's belief starts when they said it (issue 22 §1, W30);
* said the last time as no longer holding ("I used to be a night owl": the occurrence's epistemic frame has
  ``holds_now`` false, S46), it is no longer held: ``superseded_at`` = ``source_valid_to`` = when that was said,
  with no successor and no reason (W32). "I no longer eat meat" is a denial that holds now, so it stays current;
* ``contradicting_belief_ids``: the other ends of its active conflict edges;
* superseded when a merge folds it into another node (``manual_correction``), when a conflict resolution decides
  against it (``contradicted_by_new_source``, or ``manual_correction`` for a user override), or when a rollback
  leaves it without evidence (``manual_correction``, no successor).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import orjson

from kenning.beliefs.ledger import BeliefInput, BeliefSource, publish_beliefs
from kenning.store import beliefs as ledger_sql
from kenning.store import selfbeliefs as sql


def _sources(occurrences: list[dict], texts: dict[str, dict]) -> list[BeliefSource]:
    out, seen = [], set()
    for o in occurrences:
        msg = texts.get(o["message_id"])
        if msg is None or msg["text_raw"] is None:
            continue
        for span in orjson.loads(o["raw_span"]):
            key = (o["message_id"], span["start"], span["end"])
            if key in seen:
                continue
            seen.add(key)
            quote = msg["text_raw"][span["start"]:span["end"]]
            if quote.strip():
                out.append(BeliefSource(kind="conversation", quote=quote, conversation_id=msg["conversation_id"],
                                        message_id=o["message_id"], char_start=span["start"], char_end=span["end"]))
    return out


def _said(o: dict) -> str:
    return o["occurred_at"] or o["created_at"]


def said_at(occurrences: list[dict], fallback: str) -> str:
    """When a belief was first said: its earliest occurrence's message time (else when it was read)."""
    return min((_said(o) for o in occurrences), default=fallback)


def _no_longer_held(o: dict, polarity: str) -> bool:
    """This occurrence says the belief held before and not now: the frame's ``holds_now`` false (decisions S46);
    for occurrences read before that field existed, a past scope on an affirmation ("I used to be …"; a denial in
    the past scope — "I no longer eat meat" — holds now)."""
    try:
        frame = orjson.loads(o["epistemic_frame"] or "{}")
    except orjson.JSONDecodeError:
        return False
    if not isinstance(frame, dict):
        return False
    if "holds_now" in frame:
        return frame["holds_now"] is False
    return frame.get("temporal_scope") == "past" and polarity != "deny"


def publish_nodes(conn, config, run, belief_ids: Sequence[str]) -> dict[str, Any]:
    """Publish (or republish) the given nodes — plus the nodes they point at — in ``run``'s transaction."""
    cfg = config.self_beliefs.ledger
    ws = cfg.workspace or config.beliefs.default_workspace
    want = set(belief_ids)
    # close over successors and conflict partners, so every reference is in the batch or already published
    frontier = set(want)
    while frontier:
        nodes = sql.nodes_by_ids(conn, sorted(frontier))
        nxt = set()
        for n in nodes.values():
            for ref in (n["merged_into_belief_id"], n["superseded_by_belief_id"]):
                if ref and ref not in want:
                    nxt.add(ref)
        for e in sql.edges_of(conn, sorted(frontier), "active"):
            for ref in (e["node_a_id"], e["node_b_id"]):
                if ref not in want:
                    nxt.add(ref)
        want |= nxt
        frontier = nxt
    ids = sorted(want)
    nodes = sql.nodes_by_ids(conn, ids)
    live = sql.live_occurrences(conn, ids)
    every = sql.all_occurrences(conn, ids)
    texts = sql.message_texts(conn, [o["message_id"] for occ in every.values() for o in occ])
    published = set(ledger_sql.existing_belief_ids(conn, ids))
    edges = sql.edges_of(conn, ids, "active")
    now = run.clock.now()
    first_said = {bid: said_at(live.get(bid) or every.get(bid) or [], nodes[bid]["created_at"]) for bid in ids}
    items: list[BeliefInput] = []
    skipped = 0
    for bid in ids:
        n = nodes[bid]
        occ = live.get(bid) or []
        sources = _sources(occ, texts)
        asserted = first_said[bid]
        superseded_at = by = reason = valid_to = None
        if n["merged_into_belief_id"]:
            by, reason = n["merged_into_belief_id"], "manual_correction"
            superseded_at = first_said.get(by, n["merged_at"])
        elif n["superseded_by_belief_id"]:
            by, reason = n["superseded_by_belief_id"], n["supersession_reason"]
            superseded_at = first_said.get(by, n["superseded_at"])
        elif occ and _no_longer_held(occ[-1], n["polarity"]):
            superseded_at = valid_to = _said(occ[-1])
        elif not sources:   # evidence rolled back: no longer held since the rollback (its data, not the clock)
            gone = [o["deleted_at"] for o in every.get(bid) or [] if o["deleted_at"]]
            superseded_at, reason = (max(gone) if gone else now), "manual_correction"
        if not sources:
            sources = _sources(every.get(bid) or [], texts)       # keep the quotes it was believed on
        if not sources:
            skipped += 1
            continue
        contra = sorted({e["node_b_id"] if e["node_a_id"] == bid else e["node_a_id"] for e in edges
                         if bid in (e["node_a_id"], e["node_b_id"])})
        items.append(BeliefInput(
            belief_id=bid, statement=n["statement"], topic=f"{cfg.topic_prefix}: {n['belief_type'].lower()}",
            sources=tuple(sources), asserted_at=asserted, subject=cfg.subject,
            predicate=n["belief_type"].lower(), object=n["canonical_text"],
            superseded_at=max(superseded_at, asserted) if superseded_at else None,
            superseded_by=by, supersession_reason=reason, source_valid_to=valid_to,
            contradicting_belief_ids=tuple(contra)))
    present = {it.belief_id for it in items}
    fixed = []
    for it in items:  # a reference to a node that could not be published (no quote) is dropped, not fatal
        contra = tuple(c for c in it.contradicting_belief_ids if c in present or c in published)
        by = it.superseded_by if (it.superseded_by is None or it.superseded_by in present
                                  or it.superseded_by in published) else None
        fixed.append(dataclasses.replace(it, contradicting_belief_ids=contra, superseded_by=by))
    result = publish_beliefs(conn, ws, fixed, run) if fixed else None
    counts = result.counts() if result else {"beliefs_inserted": 0, "beliefs_updated": 0, "beliefs_unchanged": 0}
    return {f"ledger_{k}": v for k, v in counts.items()} | {"ledger_skipped": skipped}
