"""Deep mining with a model (issue 18): the versioned prompt ``mining`` over one user message, its answer validated
by a schema (``MiningOutput``), every call logged and replayable by the model layer. An item is kept only when its
quote is verbatim in the message (grounding) and it passes the same payload contracts as a rule item; the rules
run beside it and the same item from both is one node (same kind and name → same id)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation, register
from kenning.intake.mining import attribution as attr
from kenning.intake.mining.base import USER_UNITS, write_item
from kenning.intake.mining.common import Mined, Span, deadline_iso, timezone_of
from kenning.intake.mining.obligations import obligation_type


class MinedItem(BaseModel):
    kind: Literal["goal", "obligation", "procedure", "standing_procedure", "memory_directive"]
    name: str = Field(min_length=1, max_length=200)
    quote: str = Field(min_length=1, max_length=1000)
    deadline: Optional[str] = None
    obligation_type: Optional[Literal["court_ordered", "statutory", "contractual", "internal", "courtesy"]] = None
    steps: Optional[list[str]] = None
    trigger: Optional[str] = None
    action: Optional[str] = None
    exclusions: Optional[list[str]] = None
    memory_type: Optional[Literal["preference", "constraint", "standing_order", "vocabulary_mapping"]] = None
    applies_when: Optional[list[str]] = None
    does_not_apply_when: Optional[list[str]] = None
    time_horizon: Optional[str] = None


class MiningOutput(BaseModel):
    items: list[MinedItem]


_ASSERTION = {"preference": "preference", "constraint": "constraint", "standing_order": "standing_order",
              "vocabulary_mapping": "vocabulary_rule"}


def to_mined(item: MinedItem, text: str, ctx: ExtractionContext) -> tuple[Mined | None, str | None]:
    """(the item as a node to write, None) or (None, why it was refused)."""
    at = text.find(item.quote)
    if at < 0:
        return None, "QUOTE_NOT_IN_TEXT"
    span = Span(at, at + len(item.quote), item.quote)
    name = re.sub(r"\s+", " ", item.name).strip()
    if item.kind == "goal":
        p: dict[str, Any] = {"goal_description": name, "canonical_name": name, "narrative": item.quote[:2000],
                             "goal_status": "active", "source": "user_stated"}
        if item.time_horizon:
            p["time_horizon"] = item.time_horizon[:100]
        return Mined("goal", name, p, span), None
    if item.kind == "obligation":
        try:
            day = dt.date.fromisoformat(item.deadline or "")
        except ValueError:
            return None, "DEADLINE_INVALID"
        return Mined("obligation", name, {
            "obligation_description": name,
            "deadline": {"date": deadline_iso(day, ctx.config), "type": item.obligation_type
                         or obligation_type(item.quote), "consequence_of_missing": "not stated", "extendable": False},
            "status": "pending", "source": "conversation_mined", "deadline_source": "conversation",
            "obligor_hint": "the user"}, span), None
    if item.kind == "procedure":
        steps = [s.strip() for s in item.steps or [] if s.strip()]
        if len(steps) < 2:
            return None, "TOO_FEW_STEPS"
        from kenning.intake.mining.procedures import scrub
        st = []
        for i, s in enumerate(steps[:20], 1):
            intent, params = scrub(s[:500])
            st.append({"step_index": i, "intent": intent, "parameters": params})
        return Mined("procedure", name, {
            "canonical_name": name, "description": f"how the user does it: {name}"[:1000],
            "use_conditions": [f"when the user wants to {name}"[:300]], "steps": st,
            "environment": {"app_entity_id": "unspecified", "app_name": "unspecified", "platform": "unknown"},
            "source": "imported"}, span), None
    if item.kind == "standing_procedure":
        if not item.trigger or not item.action:
            return None, "TRIGGER_OR_ACTION_MISSING"
        from kenning.intake.mining.standing import _AUTO, signal_type
        safety = "auto_safe" if _AUTO.search(item.quote) else "confirm_first"
        return Mined("standing_procedure", f"{item.trigger} → {item.action}"[:300], {
            "trigger_summary": item.trigger[:300],
            "trigger_conditions": [{"signal_type": signal_type(item.trigger), "conditions": [item.trigger[:300]]}],
            "trigger_exclusions": [e[:300] for e in item.exclusions or []], "action_summary": item.action[:300],
            "action_steps": [{"step_index": 1, "intent": item.action[:500],
                              "requires_user_confirmation": safety == "confirm_first"}],
            "safety_class": safety}, span), None
    mt = item.memory_type or "preference"
    m = Mined("memory_directive", name, {
        "memory_type": mt, "summary": name[:500], "assertion_class": _ASSERTION[mt],
        "applies_when": [a[:300] for a in item.applies_when or []] or ["always"],
        "does_not_apply_when": [a[:300] for a in item.does_not_apply_when or []],
        "scope": "context_specific" if item.applies_when else "global", "source_certainty": "user_explicitly_stated",
        "priority_class": "strong" if mt == "constraint" else "default"}, span)
    m.lifecycle_state, m.lifecycle_substate = "confirmed", "active"
    return m, None


@register("model")
def mine_with_model(ctx: ExtractionContext, obs: Observation) -> ExtractionResult:
    result = ExtractionResult(extractor="model")
    llm = ctx.llm
    if llm is None or not getattr(llm, "enabled", False) or ctx.depth != "deep":
        result.skipped_reason = "no model (rules only)"
        return result
    if obs.role != "user" or obs.unit_kind not in USER_UNITS \
            or obs.persistence_mode in ("accessible_only", "episodic_recall") \
            or (obs.critical and attr.is_correction(obs.text)):
        result.skipped_reason = "not mined by the model"
        return result
    cfg = ctx.config.mining
    day = (obs.created_at or ctx.now)[:10]
    request = {"message": obs.text[:cfg.max_deep_chars], "message_date": day, "timezone": str(timezone_of(ctx.config)),
               "previous_turns": [{"role": t.get("role"), "text": (t.get("text") or "")[:500]}
                                  for t in obs.context[-2:]]}
    res = llm.structured("mining", {"request": request}, MiningOutput, message_id=obs.message_id,
                         item_key=obs.observation_id)
    if not res.ok:
        result.skipped_reason = f"model answer unusable: {res.error_code}"
        return result
    refused = []
    for item in res.value.items:
        mined, why = to_mined(item, obs.text, ctx)
        if mined is None or attr.user_statement_kind(mined.span.text) != "statement":
            refused.append(why or "NOT_A_STATEMENT")
            continue
        write_item(ctx, obs, result, mined, how="directive")
    if refused and not result.items:
        result.skipped_reason = f"model items refused: {', '.join(sorted(set(refused)))}"
    return result
