"""Corrections (§10.5): "actually …", "no, I meant …", "correction: …" go on the critical lane. The node the user
corrects — mined from the turns just before — gets contradicting evidence (β) with the correction reason; when
the correction restates the same item, its payload is corrected and the corrected content gains α."""

from __future__ import annotations

from typing import Any

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining import attribution as attr
from kenning.intake.mining.base import write_item
from kenning.intake.mining import directives, goals, obligations, procedures, standing
from kenning.intake.mining.match import best_match
from kenning.intake.mining.common import Span, node_id, provenance, write
from kenning.knowledge.ops import Evidence, Feedback
from kenning.store import knowledge as ksql

_PARSERS = {"obligation": obligations.parse, "goal": goals.parse, "memory_directive": directives.parse,
            "standing_procedure": standing.parse, "procedure": procedures.parse}


is_correction = attr.is_correction
_NAME_FIELDS = frozenset({"annotations", "canonical_name", "obligation_description", "goal_description", "narrative",
                          "summary", "description"})


def _corrected(ctx: ExtractionContext, obs: Observation, kinds: set[str]) -> dict[str, Any] | None:
    ids = [t.get("message_id") for t in obs.context if t.get("message_id")]
    near = [ksql.get_node(ctx.conn, n) for n in ksql.node_ids_with_message(ctx.conn, ids)]
    near = [n for n in near if n and n["is_active"]]
    if kinds and any(n["node_kind"] in kinds for n in near):
        near = [n for n in near if n["node_kind"] in kinds]
    hit = best_match(obs.text, near, threshold=40)
    if hit is not None:
        return hit
    if len(near) == 1:
        return near[0]
    # said longer ago than the context turns: the best match among the active nodes of the restated kinds
    far = [n for k in sorted(kinds) for n in ksql.list_nodes(ctx.conn, kind=k, active=True, limit=100000)]
    return best_match(obs.text, far, threshold=60)


@register("corrections")
def mine_corrections(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    result = ExtractionResult(extractor="corrections")
    if obs.role != "user" or not (obs.critical and is_correction(obs.text)):
        result.skipped_reason = "not a correction"
        return result
    if obs.persistence_mode in ("accessible_only", "episodic_recall"):
        result.skipped_reason = f"persistence mode {obs.persistence_mode}: never auto-promoted"
        return result
    restated: list[Any] = []
    for kind, parse in _PARSERS.items():
        restated += [m for m in parse(obs.text, ctx, obs, "user")]
    kinds = {m.kind for m in restated}
    target = _corrected(ctx, obs, kinds)
    if target is None:
        for m in restated:  # nothing earlier to correct: the restated items are the user's word like any other
            write_item(ctx, obs, result, m, how="directive")
        if not result.items:
            result.skipped_reason = "correction: no earlier item to correct"
        return result
    reason = obs.text.strip()[:500]
    span = Span(0, min(len(obs.text), 500), obs.text[:500])
    ops: list[Any] = [Evidence(id=target["id"], event_type="confirmed_by_user", contradicts=True,
                               provenance=provenance(obs, span, entry_type="user_correction", event=None,
                                                     description="the user corrected it", reason=reason))]
    # the same item restated with new details (an obligation's new date) corrects it in place; a directive, goal or
    # rule restated differently is a new item, and the old one keeps the contradicting evidence
    same = [m for m in restated if m.kind == target["node_kind"]
            and (m.kind == "obligation" or node_id(ctx, m.kind, m.name) == target["id"])]
    if same:
        fields = {k: v for k, v in same[0].payload.items()
                  if k not in _NAME_FIELDS and (target["payload"] or {}).get(k) != v}
        if fields:
            ops.append(Feedback(id=target["id"], action="correct", reason=reason, payload_set=fields))
    write(ctx, result, source_event="mining:correction", summary=f"correction of “{target['canonical_name'][:80]}”",
          ops=ops, key=f"mining:correction:{obs.message_id}:{target['id']}")
    for m in restated:
        if not any(m is x for x in same):
            write_item(ctx, obs, result, m, how="directive")
    return result
