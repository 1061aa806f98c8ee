"""A mined goal or obligation names the people, places and things it is about (§29.3 linked_entity_ids /
primary_entity_id; obligations' linked_entity_refs): the entity nodes the knowledge bridge published for the
mentions inside the item's quote. Readers (constellations, inspect, context) find them through node_payload_refs;
archiving the goal takes it off every reader (H2)."""

from __future__ import annotations

import re
from typing import Any

from kenning.intake.extractors import ExtractionContext, Observation
from kenning.intake.mining.common import Mined, Span, writer_for
from kenning.knowledge.writer import normalize_alias
from kenning.store import mining as msql

# kind → the payload field naming the linked entities (§29.3, §4A.1.7 as extended in contracts.py)
LINK_FIELD = {"goal": "linked_entity_ids", "obligation": "linked_entity_refs"}


# Capitalised word runs ("Berlin", "Acme Corp", "New York City"): the names a quote may carry. Lower-case words are
# not looked up — "run" or "car" must not link a goal to an entity someone once called that.
_NAME_RUN = re.compile(r"\b[A-Z][\w'’&.-]*(?:\s+(?:[A-Z][\w'’&.-]*|of|de|la|van|von))*")
_MAX_WORDS = 4


def _names(text: str) -> list[str]:
    """Every run of up to four words inside the capitalised runs of ``text``, normalised like aliases."""
    out: list[str] = []
    for m in _NAME_RUN.finditer(text):
        words = [w.rstrip(".'’") for w in m.group(0).split()]
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + _MAX_WORDS) + 1):
                part = " ".join(words[i:j])
                if part and part[0].isupper() and part not in ("I", "I'm", "I’m"):
                    out.append(normalize_alias(part))
    return list(dict.fromkeys(out))


def entity_nodes_in(ctx: ExtractionContext, obs: Observation, span: Span) -> list[str]:
    """Entity node ids the quote ``span`` names, in order: the entities stage 2A found inside the span of the
    message, then known entity names (aliases) the quote spells out — the detector can miss a name on a later
    turn, and notes have no mentions at all."""
    wanted: list[str] = []
    if obs.message_id:
        ids = writer_for(ctx).ids
        wanted = [ids.make("doc72_bridge_node", "world_entity", e)
                  for e in msql.entities_in_span(ctx.conn, obs.message_id, span.start, span.end)]
        live = msql.live_entity_nodes(ctx.conn, wanted)
        wanted = [n for n in wanted if n in live]
    names = _names(span.text)
    named = msql.entity_nodes_named(ctx.conn, names)
    for n in names:
        hits = named.get(n, [])
        if len(hits) == 1:   # an alias two entities share says nothing about which one is meant
            wanted.append(hits[0])
    return list(dict.fromkeys(wanted))


def link(ctx: ExtractionContext, obs: Observation, m: Mined) -> list[str]:
    """Put the entities the quote names into ``m``'s payload (first one primary, for goals); returns them."""
    field = LINK_FIELD.get(m.kind)
    if field is None:
        return []
    found = entity_nodes_in(ctx, obs, m.span)
    if found:
        payload = dict(m.payload)
        payload[field] = sorted(set(payload.get(field) or []) | set(found))
        if m.kind == "goal":
            payload.setdefault("primary_entity_id", found[0])
        m.payload = payload
    return found


def extend_payload(existing: dict[str, Any], m: Mined) -> dict[str, Any] | None:
    """The payload fields to add when ``m`` restates an existing node that did not name these entities yet (a merge
    keeps the stored payload), or None when nothing is new — a re-ingest writes nothing."""
    field = LINK_FIELD.get(m.kind)
    new = set((m.payload or {}).get(field) or []) if field else set()
    old = set((existing.get("payload") or {}).get(field) or [])
    if not new or new <= old:
        return None
    out: dict[str, Any] = {field: sorted(old | new)}
    if m.kind == "goal" and not (existing.get("payload") or {}).get("primary_entity_id"):
        out["primary_entity_id"] = m.payload.get("primary_entity_id")
    return out
