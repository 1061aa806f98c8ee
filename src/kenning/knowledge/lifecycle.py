"""DOC72 §5.7 lifecycle and staleness enums, §6 promotion (starting states, hysteresis, quality gates, generic and
procedure promotion, suggested-entity routing), §42.2 candidate expiry and the §2.2 sparsity tiers.

Pure functions over dicts, timestamps and config; no SQL. Docs/decisions.md K45–K52 record how the seed is read.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from kenning.config.loader import defaults_dict
from kenning.config.models import KnowledgeLifecycleConfig
from kenning.sources.timestamps import parse_utc

# §5.7, shared across DOC72, DOC24 and KDA.
StalenessState = Literal["fresh", "stale", "verification_required", "expired", "invalidated"]
CanonicalLifecycleState = Literal["observed", "suggested", "confirmed", "managed", "archived", "merged", "split",
                                  "retracted"]
STALENESS_STATES: tuple[str, ...] = get_args(StalenessState)
LIFECYCLE_STATES: tuple[str, ...] = get_args(CanonicalLifecycleState)
Tier = Literal["A", "B", "C"]
GateAction = Literal["hold_for_review", "demote_confidence", "disable_auto_promotion"]


@dataclass(frozen=True)
class NodeLifecycleMetadata:
    """§5.7 ``NodeLifecycleMetadata``: the coarse shared state and a kind-specific substate (K45)."""

    lifecycle_state: CanonicalLifecycleState
    lifecycle_substate: str | None = None

    def __post_init__(self) -> None:
        check_lifecycle_state(self.lifecycle_state)


def check_lifecycle_state(state: str) -> str:
    """§5.7 normative rules 1–2: ``stale`` is a staleness state and ``tombstoned`` is retention metadata."""
    if state in LIFECYCLE_STATES:
        return state
    if state in STALENESS_STATES:
        raise ValueError(f"lifecycle_state {state!r} is a staleness state, never a lifecycle state; "
                         f"set staleness_state instead (lifecycle states: {', '.join(LIFECYCLE_STATES)})")
    raise ValueError(f"lifecycle_state {state!r} is not one of {', '.join(LIFECYCLE_STATES)}")


def check_staleness_state(state: str) -> str:
    if state not in STALENESS_STATES:
        raise ValueError(f"staleness_state {state!r} is not one of {', '.join(STALENESS_STATES)}")
    return state


@functools.cache
def packaged_defaults() -> KnowledgeLifecycleConfig:
    """``knowledge.lifecycle`` from defaults.yaml, for the functions whose config argument is optional."""
    return KnowledgeLifecycleConfig.model_validate(defaults_dict()["knowledge"]["lifecycle"])


# ---- §6.1 starting states ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartingState:
    lifecycle_state: CanonicalLifecycleState
    lifecycle_substate: str | None
    # The §5.2 evidence event a new node of this kind records on top of the Beta(2,2) prior; None = the prior
    # only, or "varies" (the caller applies its source's event).
    event_type: str | None


# §6.1 "Starting state" and "Starting confidence" per kind, mapped onto the §5.7 canonical enum (K45, K46). The
# event is the §5.2 event whose weight is §6.1's number: application's "+0.95 trace" has none, so the trace
# (0.75) it names is recorded.
STARTING_STATES: dict[str, StartingState] = {
    "application": StartingState("confirmed", "auto_confirmed", "learned_from_trace"),
    "tool_capability": StartingState("confirmed", "auto_confirmed", "learned_from_trace"),
    "procedure": StartingState("observed", "captured", "learned_from_trace"),
    "composite_procedure": StartingState("suggested", "candidate", None),
    "execution_trace": StartingState("confirmed", "evidence", None),
    "goal": StartingState("managed", "active", "taught_by_user"),
    "standing_procedure": StartingState("suggested", "candidate", None),
    "world_entity": StartingState("observed", None, None),
    "domain_concept": StartingState("suggested", None, None),
    "obligation": StartingState("managed", "active", "learned_from_email"),
    "work_product": StartingState("confirmed", None, "learned_from_trace"),
    "memory_directive": StartingState("observed", "observation", None),
}


def starting_state(kind: str, *, composite: bool = False) -> StartingState:
    """§6.1: where a new node of ``kind`` starts; ``composite`` selects the composite-procedure row."""
    if composite:
        if kind != "procedure":
            raise ValueError(f"only procedures can be composite (§4: is_composite), not {kind!r}")
        return STARTING_STATES["composite_procedure"]
    try:
        return STARTING_STATES[kind]
    except KeyError:
        known = sorted(k for k in STARTING_STATES if k != "composite_procedure")
        raise ValueError(f"unknown node kind {kind!r}; known: {', '.join(known)}") from None


# ---- §6.4 hysteresis ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    allowed: bool
    needs_user_confirmation: bool
    reason: str
    consecutive_demotions: int = 0
    cooldown_remaining_ms: int = 0


def repromotion_allowed(demotion_history: Sequence[str], now: str, cfg: KnowledgeLifecycleConfig, *,
                        reset_at: str | None = None, user_confirmed: bool = False) -> Decision:
    """§6.4: may a node that was demoted be promoted again now?

    ``demotion_history`` holds the node's demotion timestamps; demotions at or before ``reset_at`` (the last
    time a person confirmed the node) are not consecutive any more (K47). After a demotion the node waits
    ``cooldown_ms``; after 2+ consecutive demotions only a person's confirmation (``user_confirmed``) promotes it.
    """
    h = cfg.hysteresis
    counted = sorted(t for t in demotion_history if reset_at is None or parse_utc(t) > parse_utc(reset_at))
    n = len(counted)
    if not counted:
        return Decision(True, False, "never demoted")
    if user_confirmed:
        return Decision(True, False, "a person confirmed it", n)
    elapsed_ms = int((parse_utc(now) - parse_utc(counted[-1])).total_seconds() * 1000)
    remaining = max(0, h.cooldown_ms - elapsed_ms)
    needs = n >= h.confirm_after_consecutive_demotions
    if needs:
        return Decision(False, True, f"{n} consecutive demotions: re-promotion needs a person's confirmation", n,
                        remaining)
    if remaining:
        return Decision(False, False, f"cooling down after the demotion at {counted[-1]} "
                                      f"({remaining} ms of {h.cooldown_ms} left)", n, remaining)
    return Decision(True, False, f"cooldown after the demotion at {counted[-1]} has passed", n)


# ---- §6.5 extraction quality gates ---------------------------------------------------------------------


@dataclass(frozen=True)
class GateResult:
    allowed: bool
    precision: float | None
    floor: float | None
    action: GateAction | None
    counted: int = 0


def _in_window(occurred_at: str, now: str, days: float) -> bool:
    age = (parse_utc(now) - parse_utc(occurred_at)).total_seconds()
    return 0 <= age < days * 86400


def _judged(outcomes: Iterable[Mapping[str, Any]], now: str, days: float,
            cfg: KnowledgeLifecycleConfig) -> tuple[int, int]:
    """(correct, incorrect) among the outcomes in the ``days`` before ``now`` (K48)."""
    g = cfg.quality_gates
    good = bad = 0
    for o in outcomes:
        if not _in_window(o["occurred_at"], now, days):
            continue
        good += o["outcome"] in g.correct_outcomes
        bad += o["outcome"] in g.incorrect_outcomes
    return good, bad


def rolling_precision(outcomes: Iterable[Mapping[str, Any]], now: str, days: float = 7, *,
                      cfg: KnowledgeLifecycleConfig | None = None) -> float | None:
    """Precision of the ExtractionOutcomeEvent-like dicts that occurred in the ``days`` before ``now``:
    correct / (correct + incorrect) over the outcomes that say whether an extraction was right (K48); None when
    none did."""
    good, bad = _judged(outcomes, now, days, cfg or packaged_defaults())
    return good / (good + bad) if good + bad else None


def candidate_class_of(outcome: Mapping[str, Any], cfg: KnowledgeLifecycleConfig) -> str | None:
    """The §6.5 class an outcome belongs to: its own ``candidate_class``, else its mapped §34.8 item kind."""
    if outcome.get("candidate_class"):
        return outcome["candidate_class"]
    return cfg.quality_gates.item_kind_class.get(outcome.get("extracted_item_kind") or "")


def auto_promotion_allowed(candidate_class: str, outcomes: Iterable[Mapping[str, Any]], now: str,
                           cfg: KnowledgeLifecycleConfig) -> GateResult:
    """§6.5: auto-promotion of ``candidate_class`` freezes while its rolling precision is below the floor."""
    g = cfg.quality_gates
    if candidate_class not in g.floors:
        raise ValueError(f"unknown candidate class {candidate_class!r}; known: {', '.join(g.floors)}")
    floor = g.floors[candidate_class]
    mine = [o for o in outcomes if candidate_class_of(o, cfg) == candidate_class]
    good, bad = _judged(mine, now, g.window_days, cfg)
    n = good + bad
    precision = good / n if n else None
    if floor is None or precision is None or precision >= floor:
        return GateResult(True, precision, floor, None, n)
    return GateResult(False, precision, floor, g.action_if_below[candidate_class], n)


# ---- §6.6 suggested-entity routing, §6.7 generic promotion ------------------------------------------------


def is_suggested_entity_routable(confidence: float, distinct_source_count: int, explicit_match: bool,
                                 cfg: KnowledgeLifecycleConfig) -> bool:
    """§6.6 isSuggestedEntityRoutable with the configured SuggestedRoutingEligibility."""
    p = cfg.suggested_routing
    if confidence < p.min_confidence:
        return False
    if distinct_source_count < p.min_distinct_sources:
        return False
    return not (p.require_explicit_string_match and not explicit_match)


_MISSING = object()  # JavaScript's undefined: an explicit JSON null is a value, a missing key is not


def get_nested_field(obj: Any, path: str) -> Any:
    """§6.7 getNestedField: ``path.split('.').reduce((o, key) => o?.[key], obj)``; ``_MISSING`` for undefined."""
    cur = obj
    for key in path.split("."):
        if cur is None or cur is _MISSING:
            return _MISSING
        if isinstance(cur, Mapping):
            cur = cur.get(key, _MISSING)
        elif isinstance(cur, list) and key.isdigit() and int(key) < len(cur):
            cur = cur[int(key)]
        else:
            return _MISSING
    return cur


def _js_length(s: str) -> int:
    """JavaScript ``string.length``: UTF-16 code units (K49)."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _requirement_met(doc: Any, req: Mapping[str, Any]) -> bool:
    value = get_nested_field(doc, req["field"])
    op = req.get("operator")
    if op == "exists":
        return value is not _MISSING
    if op == "min_count":
        return isinstance(value, list) and len(value) >= req["value"]
    if op == "confidence_gte":
        return _is_number(value) and value >= req["value"]
    if op == "min_length":
        return isinstance(value, str) and _js_length(value) >= req["value"]
    return True  # the seed's `default: return true`


def can_promote_generic(doc: Mapping[str, Any], requirements: Sequence[Mapping[str, Any]] | None,
                        confidence: float, *, cfg: KnowledgeLifecycleConfig | None = None) -> bool:
    """§6.7 canPromoteGeneric: no requirements → confidence ≥ 0.6; else every requirement holds on its dotted
    path. An unknown operator passes; an empty list (truthy in the seed's JavaScript) passes every() (K49)."""
    if requirements is None:
        return confidence >= (cfg or packaged_defaults()).generic_promotion_min_confidence
    return all(_requirement_met(doc, req) for req in requirements)


# ---- §6.1 / §6.8 procedure path --------------------------------------------------------------------------

# The §4.3 procedure lifecycle values as substates of the canonical state (K45).
PROCEDURE_SUBSTATES: dict[str, CanonicalLifecycleState] = {
    "captured": "observed", "candidate": "suggested", "validated": "confirmed", "promoted": "confirmed"}


@dataclass(frozen=True)
class Transition:
    lifecycle_state: CanonicalLifecycleState
    lifecycle_substate: str
    changed: bool
    reason: str


def procedure_transition(substate: str, successes: int, *, composite: bool = False, user_taught: bool = False,
                         cross_skill_uses: int = 0, cfg: KnowledgeLifecycleConfig) -> Transition:
    """§6.1: captured (or candidate) → validated after 2+ successes (a composite after 1; a user-taught procedure
    after 1, §6.8), validated → promoted after cross-skill use. Never moves a procedure backwards."""
    if substate not in PROCEDURE_SUBSTATES:
        raise ValueError(f"procedure substate {substate!r} is not one of {', '.join(PROCEDURE_SUBSTATES)}")
    p = cfg.procedure
    new, reason = substate, "no transition"
    if new in ("captured", "candidate"):
        need = (p.composite_validate_after_successes if composite
                else p.taught_validate_after_successes if user_taught else p.validate_after_successes)
        if successes >= need:
            new, reason = "validated", f"{successes} successful run(s) (needs {need})"
    if new == "validated" and cross_skill_uses >= p.promote_after_cross_skill_uses:
        new, reason = "promoted", f"used by {cross_skill_uses} other skill(s)"
    return Transition(PROCEDURE_SUBSTATES[new], new, new != substate, reason)


# ---- §42.2 candidate decay and suggestion expiry -----------------------------------------------------------


def cleanup_archive_due(lifecycle_state: str, entered_at: str, now: str, cfg: KnowledgeLifecycleConfig) -> str | None:
    """§42.2: an entity ``observed`` for 14 days without reaching ``suggested``, or ``suggested`` for 30 without
    reaching ``confirmed``, is archived. Returns why, or None. ``entered_at``: when it entered that state."""
    c = cfg.cleanup
    limit = {"observed": c.candidate_decay_days, "suggested": c.suggestion_expiry_days}.get(lifecycle_state)
    if limit is None:
        return None
    days = (parse_utc(now) - parse_utc(entered_at)).total_seconds() / 86400
    if days >= limit:
        return f"{lifecycle_state} for {days:.1f} days (limit {limit:g}): archive"
    return None


# ---- §2.2 sparsity tiers -----------------------------------------------------------------------------------


def sparsity_tier(kind: str, *, entity_type: str | None = None, lifecycle_state: str | None = None,
                  important: bool = False, cfg: KnowledgeLifecycleConfig | None = None) -> Tier:
    """§2.2: the configured kind → tier map; candidate/suggested entities are C, matters A, important entities B.

    The order (K51): a candidate (its kind in candidate_kinds at a candidate state) is C whatever its type; then
    an entity_type with its own tier (matter → A); then ``important`` world entities (B); then the kind's tier.
    """
    t = (cfg or packaged_defaults()).tiers
    if kind not in t.kinds:
        raise ValueError(f"unknown node kind {kind!r}; known: {', '.join(sorted(t.kinds))}")
    if kind in t.candidate_kinds and lifecycle_state in t.candidate_states:
        return "C"
    if kind == "world_entity":
        if entity_type in t.entity_types:
            return t.entity_types[entity_type]
        if important:
            return t.important_world_entity
    return t.kinds[kind]
