"""DOC72 node payload contracts: one pydantic model per kind (§4A governs over §4; goal is §4A.1.6 ∪ §29.3), the
validator registry every write goes through (§4A.0.1 NodePayloadValidatorRegistry), and the text a node's search
entry uses. Seed defects settled here are decisions K20–K35 in docs/decisions.md."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, Optional

from pydantic import (BaseModel, ConfigDict, Field, StringConstraints, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from kenning.knowledge.kinds import NODE_KINDS, check_kind, closest


def S(max_length: int) -> Any:
    """A string of at most ``max_length`` characters (the seed's z.string().max(n))."""
    return Annotated[str, StringConstraints(max_length=max_length)]


ID = S(160)  # the seed's id references are z.string().max(160)
NonNeg = Annotated[int, Field(ge=0)]

# §4.1 KnowledgeNodeScope.
SCOPES: tuple[str, ...] = ("firm_shared", "matter_scoped", "personal", "private")
SCOPE_INFERENCE_BASES: tuple[str, ...] = ("matter_linked", "domain_profile", "personal_surface", "user_override",
                                          "default")
Scope = Literal["firm_shared", "matter_scoped", "personal", "private"]
ScopeBasis = Literal["matter_linked", "domain_profile", "personal_surface", "user_override", "default"]
# memory_directive's own `scope` is §4A.1.4's applicability scope, so its §4.1 scope goes under this key (K23).
SCOPE_FIELD: dict[str, str] = {kind: "scope" for kind in NODE_KINDS} | {"memory_directive": "knowledge_scope"}

# world_entity.entity_type: §4.7's system subtypes plus the real-world things §4 and §29.7 name (K33).
SYSTEM_ENTITY_TYPES: tuple[str, ...] = ("task", "room", "panel", "forum", "note", "document_view")
WORLD_ENTITY_TYPES: tuple[str, ...] = (
    "person", "organization", "place", "matter", "work_context", "event", "product", "calendar", "folder",
    "email_account", "account", "web_resource", "publication", "file", "identifier", "term", "other",
) + SYSTEM_ENTITY_TYPES
# Kenning's entity types (detect/keys.py ENTITY_TYPES) → world_entity.entity_type, for the ingest bridge.
KENNING_ENTITY_TYPES: dict[str, str] = {
    "PERSON": "person", "ORG": "organization", "LOCATION": "place", "PRODUCT": "product",
    "CUSTOM_TERM": "term", "HASHTAG": "term", "OTHER": "other", "EMAIL": "email_account", "HANDLE": "account",
    "URL": "web_resource", "BARE_DOMAIN": "web_resource", "DOI": "publication", "ARXIV": "publication",
    "FILEPATH": "file", "PHONE": "identifier", "UUID": "identifier", "HASH_HEX": "identifier",
    "IP_ADDRESS": "identifier", "CVE": "identifier", "ORCID": "identifier", "GIT_SHA": "identifier",
}


def entity_type_for(kenning_type: str) -> str:
    """The world_entity.entity_type for one of Kenning's entity types (unknown ones become ``other``)."""
    return KENNING_ENTITY_TYPES.get(kenning_type.upper(), "other")


class PayloadError(ValueError):
    """A payload that breaks its kind's contract: which field, what value, and why, in plain words."""

    def __init__(self, kind: str, field: str, value: Any, reason: str):
        self.kind, self.field, self.value, self.reason = kind, field, value, reason
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"{self.kind} payload: {where}{self.reason}"


class _FieldIssue(ValueError):
    """Raised inside a model validator to name a field below the model it runs on."""

    def __init__(self, field: str, reason: str, value: Any = None):
        self.field, self.reason, self.value = field, reason, value
        super().__init__(reason)


@dataclass(frozen=True)
class ValidatedPayload:
    payload: dict
    warnings: tuple[str, ...] = ()


# ── shared pieces ──────────────────────────────────────────────────────────────────────────────────────────────


class _Model(BaseModel):
    # strict: a JSON payload is stored as given, never silently coerced ("5" stays an error for an integer).
    model_config = ConfigDict(extra="forbid", strict=True)


class Annotation(_Model):
    """§4A.1.2 KnowledgeAnnotationSchema; annotation_type is an open vocabulary, not an enum."""
    annotation_type: S(60)
    content: S(2000)
    context_scope: Optional[S(200)] = None
    source: Optional[Literal["user_stated", "inferred", "imported", "system"]] = None
    confidence: Optional[Annotated[float, Field(ge=0, le=1)]] = None
    schema_version: Literal[1] = 1


class _Payload(_Model):
    """Fields every kind accepts: the search text, §4.1 scope, annotations and the schema version (K21)."""
    description: Optional[S(2000)] = None
    principal_id: Optional[ID] = None
    scope: Optional[Scope] = None
    scope_inference_basis: Optional[ScopeBasis] = None
    annotations: Optional[list[Annotation]] = None
    schema_version: Literal[1] = 1
    # §34.2 light / minimal experience (Tier B / C) lives in the payload; the writer keeps it (K15).
    usage_count: Optional[Annotated[int, Field(ge=0)]] = None
    last_used_at: Optional[str] = None
    last_outcome: Optional[S(40)] = None


class _Contract(_Payload):
    """A §4A shared contract: annotations default to [] there."""
    annotations: list[Annotation] = Field(default_factory=list)


_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def check_datetime_with_timezone(value: str) -> str:
    """§4A.1.7 deadline.date: z.string().datetime() with a timezone (SR-20); a bare date or local time is refused
    because the same deadline means different instants in different places (K25)."""
    m = _ISO_DATETIME.fullmatch(value)
    if _ISO_DATE.fullmatch(value) or (m and not m.group(1)):
        raise ValueError(f"needs a timezone (got {value!r})")
    try:
        if not m:
            raise ValueError
        datetime.fromisoformat(value.replace("Z", "+00:00").replace(",", "."))
    except ValueError:
        raise ValueError(f"must be an ISO-8601 date-time with a timezone, e.g. 2026-05-01T17:00:00Z "
                         f"(got {value!r})") from None
    return value


# ── world_entity (§4, §4.7) ────────────────────────────────────────────────────────────────────────────────────


class Participant(_Model):
    participant_id: ID
    participant_type: Literal["user", "agent"]
    participant_name: S(200)
    role: Optional[S(80)] = None


class WorldEntityPayload(_Payload):
    """People, organisations, places, matters … and §4.7's system objects. Open to other attributes (K22, K33)."""
    model_config = ConfigDict(extra="allow", strict=True)
    entity_type: Literal[WORLD_ENTITY_TYPES]  # type: ignore[valid-type]
    system_id: Optional[ID] = None
    display_name: Optional[S(200)] = None
    linked_matter_ids: Optional[list[ID]] = None
    status: Optional[Literal["active", "archived", "completed", "closed"]] = None
    participants: Optional[list[Participant]] = None
    created_by: Optional[Literal["user", "agent", "system"]] = None
    content_summary: Optional[S(2000)] = None

    @model_validator(mode="after")
    def _system_entities_are_complete(self):
        if self.entity_type in SYSTEM_ENTITY_TYPES:
            for name in ("system_id", "display_name", "status", "created_by"):
                if getattr(self, name) is None:
                    raise _FieldIssue(name, f"is required for a system entity (entity_type {self.entity_type!r})")
        return self


# ── application (§4.2) ─────────────────────────────────────────────────────────────────────────────────────────


class ApplicationPayload(_Payload):
    canonical_name: S(200)
    aliases: list[S(200)]
    platform: Literal["mac", "windows", "web", "cross_platform", "unknown"]
    app_variant: Optional[S(40)] = None
    version_hint: Optional[S(40)] = None
    source: Literal["system", "trace", "manual"]
    known_capabilities: list[S(200)]


# ── procedure (§4A.1.3 ProcedureKnowledgeContract) ─────────────────────────────────────────────────────────────


class StepParameter(_Model):
    name: S(80)
    value: S(200)
    context: Optional[S(200)] = None
    is_variable: bool = False
    literal_retention_class: Literal["placeholder_only", "retain_if_user_confirmed", "retain_allowed"] = \
        "placeholder_only"


class StepVerification(_Model):
    check: S(500)
    method: Literal["applescript_query", "ax_state_check", "visual_confirmation", "user_confirmation",
                    "mcp_tool_result", "none"]
    query: Optional[S(500)] = None


class SemanticStep(_Model):
    step_index: Annotated[int, Field(ge=1)]
    intent: S(500)
    detailed_instructions: Optional[S(3000)] = None
    parameters: list[StepParameter] = Field(default_factory=list)
    verification: Optional[StepVerification] = None
    conditional: Optional[S(500)] = None
    rationale: Optional[S(500)] = None
    capability_area: Optional[S(80)] = None
    step_nature: Literal["mechanical", "cognitive", "hybrid"] = "mechanical"
    source_event_ids: Optional[list[Annotated[str, StringConstraints(
        pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")]]] = None


class ProcedureConstraint(_Model):
    rule: S(500)
    scope: Literal["this_procedure", "this_app", "global"]
    priority: Literal["absolute", "strong", "default", "suggestion"]
    source: Literal["user_stated", "inferred", "imported", "system"]


class ConstituentOrdering(_Model):
    procedure_id: ID
    order_position: int
    depends_on: list[ID] = Field(default_factory=list)
    dependency_reason: Optional[S(300)] = None


class EnvironmentScope(_Model):
    app_entity_id: ID
    app_name: S(80)
    platform: Literal["mac", "windows", "web", "unknown"]
    app_variant: Optional[S(40)] = None
    app_bundle_id: Optional[S(120)] = None


class ContractQuality(_Model):
    extraction_model_ref: ID
    overall_quality_score: Annotated[float, Field(ge=0, le=1)]
    field_quality: dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(default_factory=dict)
    missing_fields: list[str] = Field(default_factory=list)


class DecisionBranch(_Model):
    when: S(300)
    then_step_indices: Annotated[list[int], Field(min_length=1)]


class DecisionPoint(_Model):
    decision_id: ID
    prompt: S(400)
    branches: Annotated[list[DecisionBranch], Field(min_length=2)]


def placeholder_for(name: str) -> str:
    """The placeholder a scrubbed literal becomes: ``client_name`` → ``[Client Name]`` (§4A.1.3 SR-08 example)."""
    words = [w for w in re.split(r"[\s_\-]+", name) if w]
    return "[" + (" ".join(w[:1].upper() + w[1:] for w in words) or "Value") + "]"


class ProcedurePayload(_Contract):
    canonical_name: S(200)
    description: S(1000)
    use_conditions: Annotated[list[S(300)], Field(min_length=1)]
    non_use_conditions: list[S(300)] = Field(default_factory=list)
    trigger_phrases: list[S(120)] = Field(default_factory=list)
    semantic_lookup_phrases: Annotated[list[S(160)], Field(max_length=8)] = Field(default_factory=list)
    preconditions: list[S(500)] = Field(default_factory=list)
    postconditions: list[S(500)] = Field(default_factory=list)
    steps: Annotated[list[SemanticStep], Field(min_length=1)]
    is_composite: bool = False
    used_procedure_ids: Optional[list[ID]] = None
    constituent_ordering: Optional[list[ConstituentOrdering]] = None
    execution_topology: Literal["linear", "branching"] = "linear"
    decision_points: list[DecisionPoint] = Field(default_factory=list)
    constraints: list[ProcedureConstraint] = Field(default_factory=list)
    artifact_class: Optional[S(120)] = None
    document_region: Optional[S(120)] = None
    derivation_quality: Literal["high", "medium", "low"] = "medium"
    capability_tags: list[S(80)] = Field(default_factory=list)
    environment: EnvironmentScope
    source: Literal["manual_demonstration", "doc3_learned", "trace_captured", "imported", "system", "onboarding"]
    contract_quality: Optional[ContractQuality] = None

    @field_validator("trigger_phrases")
    @classmethod
    def _trigger_phrases_none_or_three_to_eight(cls, v: list[str]) -> list[str]:
        # The seed says min(3).max(8).default([]); its own default fails its minimum (K26).
        if v and not 3 <= len(v) <= 8:
            raise ValueError(f"needs none or 3 to 8 phrases (got {len(v)})")
        return v

    @field_validator("execution_topology")
    @classmethod
    def _linear_in_v1(cls, v: str) -> str:
        if v != "linear":
            raise ValueError(f"v1 procedures are linear (DOC72 §4A.1.3 SR-31; got {v!r})")
        return v

    @field_validator("decision_points")
    @classmethod
    def _no_decision_points_in_v1(cls, v: list) -> list:
        if v:
            raise ValueError(f"must be empty in v1, procedures are linear (DOC72 §4A.1.3 SR-31; got {len(v)})")
        return v

    @field_validator("steps")
    @classmethod
    def _distinct_step_indexes(cls, v: list[SemanticStep]) -> list[SemanticStep]:
        seen: set[int] = set()
        for step in v:
            if step.step_index in seen:
                raise ValueError(f"step_index {step.step_index} appears twice")
            seen.add(step.step_index)
        return v

    @model_validator(mode="after")
    def _scrub_and_derive(self, info: ValidationInfo):
        ctx = info.context if isinstance(info.context, dict) else {}
        scrub_literals(self.steps, confirmed=bool(ctx.get("user_confirmed_literals")),
                       warnings=ctx.setdefault("warnings", []))
        if not self.capability_tags:
            self.capability_tags = derive_capability_tags(self.steps)
        return self


def scrub_literals(steps: list[SemanticStep], *, confirmed: bool, warnings: list[str]) -> None:
    """§4A.1.3 SR-23: literal parameter values become placeholders before a write, unless their class retains them
    (retain_allowed, or retain_if_user_confirmed with the user's confirmation). The warning never repeats the
    literal, which may be private."""
    for i, step in enumerate(steps):
        for j, p in enumerate(step.parameters):
            keep = (p.literal_retention_class == "retain_allowed"
                    or (p.literal_retention_class == "retain_if_user_confirmed" and confirmed)
                    or "[" in p.value)
            if keep:
                continue
            p.value = placeholder_for(p.name)
            warnings.append(f"procedure payload: steps[{i}].parameters[{j}].value: literal for {p.name!r} replaced "
                            f"by {p.value} ({p.literal_retention_class})")


def derive_capability_tags(steps: list[SemanticStep]) -> list[str]:
    """§4A.1.3 SR-07: the distinct non-empty step capability_area values, in step order."""
    tags: list[str] = []
    for step in steps:
        area = (step.capability_area or "").strip()
        if area and area not in tags:
            tags.append(area)
    return tags


# ── execution_trace (§4.7: evidence only) ──────────────────────────────────────────────────────────────────────


class ExecutionTracePayload(_Payload):
    """What happened during one execution; evidence for a procedure's confidence, never promoted (K34)."""
    model_config = ConfigDict(extra="allow", strict=True)
    outcome: Literal["success", "failure", "corrected"]
    procedure_id: Optional[ID] = None
    app_entity_id: Optional[ID] = None
    occurred_at: Optional[S(40)] = None

    @field_validator("occurred_at")
    @classmethod
    def _occurred_at_has_timezone(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else check_datetime_with_timezone(v)


# ── standing_procedure (§4A.1.8) ───────────────────────────────────────────────────────────────────────────────


class TriggerCondition(_Model):
    signal_type: Literal["email_received", "file_added", "calendar_event", "time_based", "document_state_change",
                         "user_request", "system_event"]
    conditions: list[S(300)]


class StandingActionStep(_Model):
    step_index: Annotated[int, Field(ge=1)]
    intent: S(500)
    detailed_instructions: Optional[S(3000)] = None
    requires_user_confirmation: bool


class StandingProcedurePayload(_Contract):
    trigger_summary: S(300)
    trigger_conditions: Annotated[list[TriggerCondition], Field(min_length=1)]
    trigger_exclusions: list[S(300)] = Field(default_factory=list)
    action_summary: S(300)
    action_steps: list[StandingActionStep]
    # §4A.1.8 makes it required; §18.9 says new standing procedures start confirmed-first (K31).
    safety_class: Literal["notify", "confirm_first", "auto_safe"] = "confirm_first"
    false_positive_handling: Optional[S(300)] = None
    failure_handling: Optional[S(300)] = None


# ── goal (§4A.1.6 ∪ §29.3) ─────────────────────────────────────────────────────────────────────────────────────


class GoalPriority(_Model):
    priority: S(200)
    rank: int
    tension_with: Optional[S(200)] = None


class GoalTimePressure(_Model):
    description: Optional[S(300)] = None
    key_date: Optional[S(100)] = None
    urgency: Optional[Literal["low", "moderate", "high", "critical"]] = None


class GoalTension(_Model):
    tension_description: S(500)
    current_priority: Optional[S(200)] = None
    linked_sub_goal_ids: Optional[list[ID]] = None


class GoalStakeholder(_Model):
    stakeholder_entity_id: Optional[ID] = None
    stakeholder_role: S(200)
    interest_description: Optional[S(500)] = None


class GoalPayload(_Contract):
    # §4A.1.6 GoalKnowledgeContract
    goal_description: Optional[S(500)] = None
    success_criteria: list[S(300)] = Field(default_factory=list)
    priorities: list[GoalPriority] = Field(default_factory=list)
    time_pressure: Optional[GoalTimePressure] = None
    stakeholder_considerations: list[S(300)] = Field(default_factory=list)
    # §29.3 GoalPayload
    canonical_name: Optional[S(200)] = None
    narrative: Optional[S(2000)] = None
    parent_goal_id: Optional[ID] = None
    sub_goal_ids: Optional[list[ID]] = None
    linked_entity_ids: Optional[list[ID]] = None
    primary_entity_id: Optional[ID] = None
    tensions: Optional[list[GoalTension]] = None
    stakeholders: Optional[list[GoalStakeholder]] = None
    success_indicators: Optional[list[S(300)]] = None
    time_horizon: Optional[S(100)] = None
    deadline_entity_ref: Optional[ID] = None
    goal_status: Literal["active", "achieved", "abandoned", "evolved", "on_hold"] = "active"
    evolved_from_goal_id: Optional[ID] = None
    evolution_reason: Optional[S(500)] = None
    source: Optional[Literal["user_stated", "onboarding", "conversation_mined", "system_suggested"]] = None
    last_referenced_at: Optional[S(40)] = None

    @model_validator(mode="after")
    def _says_what_the_goal_is(self):
        # §4A requires goal_description, §29 requires narrative: either one states the goal (K30).
        if not (self.goal_description or self.narrative):
            raise _FieldIssue("goal_description", "is required (or give narrative)")
        return self


# ── domain_concept (§4A.1.5) ───────────────────────────────────────────────────────────────────────────────────


class KeyDistinction(_Model):
    this_concept: S(200)
    versus: S(200)
    distinction: S(500)


class ReferenceSource(_Model):
    citation: S(300)
    relevance: S(300)
    still_current: bool


class ContextualVariation(_Model):
    context: S(120)
    variation: S(500)


class DomainConceptPayload(_Contract):
    concept_name: S(200)
    definition: S(2000)
    applies_in: list[S(300)]
    does_not_apply_in: list[S(300)] = Field(default_factory=list)
    pitfalls: list[S(500)] = Field(default_factory=list)
    key_distinctions: list[KeyDistinction] = Field(default_factory=list)
    reference_sources: list[ReferenceSource] = Field(default_factory=list)
    contextual_variations: list[ContextualVariation] = Field(default_factory=list)
    practical_guidance: list[S(500)] = Field(default_factory=list)


# ── obligation (§4A.1.7, with §4.7's non-conflicting fields) ───────────────────────────────────────────────────


class Deadline(_Model):
    date: str
    type: Literal["court_ordered", "statutory", "contractual", "internal", "courtesy"]
    consequence_of_missing: S(300)
    extendable: bool
    extension_mechanism: Optional[S(300)] = None

    @field_validator("date")
    @classmethod
    def _date_has_timezone(cls, v: str) -> str:
        return check_datetime_with_timezone(v)


class ObligationDependency(_Model):
    description: S(300)
    deadline_offset: Optional[S(100)] = None


class PreparationRequirement(_Model):
    task: S(300)
    lead_time_days: int
    assignee_hint: Optional[S(100)] = None


class ObligationPayload(_Contract):
    obligation_description: S(500)
    deadline: Deadline
    dependencies: list[ObligationDependency] = Field(default_factory=list)
    preparation_requirements: list[PreparationRequirement] = Field(default_factory=list)
    status: Literal["pending", "in_progress", "completed", "overdue", "extended", "waived"]
    # §4.7 ObligationPayload fields §4A does not contradict (its deadline and obligation_status are gone: K24)
    obligor_hint: Optional[S(200)] = None
    obligee_entity_ref: Optional[ID] = None
    linked_entity_refs: Optional[list[ID]] = None
    deadline_source: Optional[S(80)] = None
    urgency: Optional[Literal["critical", "high", "normal", "low", "unknown"]] = None
    completed_at: Optional[S(40)] = None
    completed_evidence_ref: Optional[ID] = None
    source: Optional[Literal["conversation_mined", "email_extracted", "user_stated", "onboarding"]] = None
    source_artifact_ref: Optional[ID] = None

    @field_validator("completed_at")
    @classmethod
    def _completed_at_has_timezone(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else check_datetime_with_timezone(v)


# ── work_product (§4.4) ────────────────────────────────────────────────────────────────────────────────────────


class WorkProductPayload(_Payload):
    document_type: S(120)
    archetype_ref: Optional[ID] = None
    matter_entity_id: Optional[ID] = None
    file_ref: Optional[S(1000)] = None
    version: Optional[int] = None
    prior_version_id: Optional[ID] = None
    status: Literal["draft", "review", "filed", "final"]
    addressed_concepts: Optional[list[ID]] = None
    cited_authorities: Optional[list[ID]] = None
    red_team_results: Optional[list[ID]] = None


# ── memory_directive (§4A.1.4 + §3.5 DOC1 fields) ──────────────────────────────────────────────────────────────


class MemoryDirectivePayload(_Contract):
    memory_type: Literal["preference", "constraint", "standing_order", "vocabulary_mapping", "style_profile",
                         "document_archetype", "heuristic", "correction"]
    summary: S(500)
    assertion_class: Literal["durable_fact", "preference", "constraint", "standing_order", "vocabulary_rule",
                             "heuristic"]
    applies_when: Annotated[list[S(300)], Field(min_length=1)]
    does_not_apply_when: list[S(300)] = Field(default_factory=list)
    scope: Literal["global", "app_specific", "project_specific", "document_type_specific",  # type: ignore[assignment]
                   "context_specific"]
    scope_details: Optional[S(500)] = None
    priority_class: Literal["absolute", "strong", "default", "suggestion"] = "default"
    overridden_by: list[S(300)] = Field(default_factory=list)
    source_certainty: Literal["user_explicitly_stated", "inferred_from_actions", "inferred_from_documents",
                              "imported"]
    injection_format: Literal["imperative", "conditional", "contextual", "cautionary"] = "imperative"
    knowledge_scope: Optional[Scope] = None
    # §3.5 DOC1 memory fields (DOC1 itself is not in the corpus: K32)
    maturity_state: Optional[S(40)] = None
    capture_scope: Optional[Literal["durable", "contextual"]] = None
    taint: Optional[Any] = None
    inject_count: Optional[NonNeg] = None
    inject_correct_count: Optional[NonNeg] = None
    inject_proceed_count: Optional[NonNeg] = None
    recency_type: Optional[S(40)] = None
    verification_ttl_days: Optional[NonNeg] = None

    @field_validator("taint")
    @classmethod
    def _taint_is_a_flag_or_a_label(cls, v: Any) -> Any:
        # A union type would put its member names in the error path ("taint.bool"), so it is checked here.
        if v is None or isinstance(v, bool) or (isinstance(v, str) and len(v) <= 200):
            return v
        raise ValueError(f"must be true, false or a label of at most 200 characters (got {v!r})")


# ── tool_capability (§4.6, §4A.1.9) ────────────────────────────────────────────────────────────────────────────


class ToolCapabilityPayload(_Contract):
    tool_id: ID
    tool_source: Literal["mcp", "wrapper", "applescript", "accessibility_bridge"]
    description: Optional[S(1000)] = None
    capabilities_summary: list[S(200)] = Field(default_factory=list)
    runtime_binding_ref: Optional[ID] = None


# ── the registry ───────────────────────────────────────────────────────────────────────────────────────────────

_ERROR_WORDS = {
    "missing": "is required",
    "extra_forbidden": "is not a field of this contract",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _plain(err: dict) -> tuple[str, str]:
    """(field path, reason) for one pydantic error, in words a person can act on."""
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    field = _path(err["loc"])
    if kind == "value_error" and isinstance(ctx.get("error"), _FieldIssue):
        issue = ctx["error"]
        return (f"{field}.{issue.field}" if field else issue.field), issue.reason
    if kind == "value_error":
        return field, str(ctx.get("error") or err["msg"])
    got = f" (got {value!r})" if kind not in ("missing", "extra_forbidden") else ""
    if kind in _ERROR_WORDS:
        return field, _ERROR_WORDS[kind] + (f" (got {type(value).__name__})" if got else "")
    if kind == "literal_error":
        return field, f"must be one of {ctx.get('expected')}{got}"
    if kind == "string_too_long":
        return field, f"is longer than {ctx.get('max_length')} characters (got {len(value)})"
    if kind == "too_short":
        return field, f"needs at least {ctx.get('min_length')} item(s) (got {ctx.get('actual_length')})"
    if kind == "too_long":
        return field, f"allows at most {ctx.get('max_length')} items (got {ctx.get('actual_length')})"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        op = {"greater_than_equal": "≥", "less_than_equal": "≤", "greater_than": ">", "less_than": "<"}[kind]
        bound = next(iter(ctx.values()), "")
        return field, f"must be {op} {bound}{got}"
    if kind == "string_pattern_mismatch":  # the only pattern is SemanticStep.source_event_ids' z.string().uuid()
        return field, f"must be a UUID{got}"
    return field, f"{err['msg'][:1].lower()}{err['msg'][1:]}{got}"


# Fields of §4's sketches that §4A replaced: a writer using the old name is told the governing one.
_REPLACED = {
    ("obligation", "obligation_status"): "status is §4A.1.7's field (pending|in_progress|completed|overdue|"
                                         "extended|waived)",
    ("procedure", "lifecycle_state"): "a procedure's lifecycle is the node's lifecycle_state and substate, not its "
                                      "payload",
    ("procedure", "environment_scope"): "§4A.1.3 calls it environment",
    ("procedure", "parent_app_id"): "§4A.1.3 keeps the app in environment.app_entity_id",
    ("procedure", "aliases"): "aliases live in the aliases table, not the payload",
    ("application", "lifecycle_state"): "lifecycle is the node's lifecycle_state",
    ("standing_procedure", "lifecycle_state"): "lifecycle is the node's lifecycle_state",
}


def _model_at(model: type[BaseModel], loc: tuple) -> Optional[type[BaseModel]]:
    """The nested model that holds the field at ``loc`` (list indices skipped)."""
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        found = _find_model(field.annotation)
        if found is None:
            return None
        model = found
    return model


def _find_model(tp: Any) -> Optional[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in getattr(tp, "__args__", ()) or ():
        found = _find_model(arg)
        if found is not None:
            return found
    return None


def _unknown_field_reason(kind: str, model: type[BaseModel], loc: tuple) -> str:
    name = loc[-1]
    if len(loc) == 1 and (kind, name) in _REPLACED:
        return f"is not a field of the {kind} contract: {_REPLACED[(kind, name)]}"
    holder = _model_at(model, loc)
    near = closest(str(name), sorted(holder.model_fields), limit=1, cutoff=80) if holder else ()
    hint = f"; did you mean {near[0]}?" if near else ""
    return f"is not a field of the {kind} contract{hint}"


def _first_error(errors: list[dict]) -> dict:
    """The error to report: the first, unless it is a missing field that a misspelt extra one stands for
    (``extendible`` for ``extendable``), where naming the misspelling is what helps."""
    first = errors[0]
    if first["type"] == "missing":
        parent, name = first["loc"][:-1], str(first["loc"][-1])
        for err in errors:
            if (err["type"] == "extra_forbidden" and err["loc"][:-1] == parent
                    and closest(str(err["loc"][-1]), [name], cutoff=80)):
                return err
    return first


class NodePayloadValidatorRegistry:
    """§4A.0.1 SR-32: the payload model per node kind; every write validates through it."""

    def __init__(self) -> None:
        self._models: dict[str, type[BaseModel]] = {}

    def register(self, kind: str, model: type[BaseModel]) -> None:
        self._models[check_kind(kind)] = model

    def model(self, kind: str) -> type[BaseModel]:
        try:
            return self._models[check_kind(kind)]
        except KeyError:
            raise LookupError(f"no payload model is registered for node kind {kind!r}") from None

    def validate(self, kind: str, payload: dict, *, user_confirmed_literals: bool = False) -> ValidatedPayload:
        model = self.model(kind)
        if not isinstance(payload, dict):
            raise PayloadError(kind, "", payload, f"must be a JSON object (got {type(payload).__name__})")
        ctx: dict[str, Any] = {"user_confirmed_literals": user_confirmed_literals, "warnings": []}
        try:
            obj = model.model_validate(payload, context=ctx)
        except ValidationError as exc:
            err = _first_error(exc.errors(include_url=False))
            field, reason = _plain(err)
            issue = (err.get("ctx") or {}).get("error")
            value = issue.value if isinstance(issue, _FieldIssue) else err.get("input")
            if err["type"] == "extra_forbidden":
                reason = _unknown_field_reason(kind, model, err["loc"])
            raise PayloadError(kind, field, value, reason) from None
        # None fields are dropped so the stored JSON stays small and one payload has one form (K20).
        out = obj.model_dump(mode="json", exclude_none=True)
        return ValidatedPayload(out, tuple(ctx["warnings"]))


REGISTRY = NodePayloadValidatorRegistry()
for _kind, _model in (
    ("world_entity", WorldEntityPayload), ("application", ApplicationPayload), ("procedure", ProcedurePayload),
    ("execution_trace", ExecutionTracePayload), ("standing_procedure", StandingProcedurePayload),
    ("goal", GoalPayload), ("domain_concept", DomainConceptPayload), ("obligation", ObligationPayload),
    ("work_product", WorkProductPayload), ("memory_directive", MemoryDirectivePayload),
    ("tool_capability", ToolCapabilityPayload),
):
    REGISTRY.register(_kind, _model)


def validate_payload(kind: str, payload: dict, *, user_confirmed_literals: bool = False) -> ValidatedPayload:
    """The normalized payload of a ``kind`` node (defaults the seed gives, derived fields, no None fields) and
    the warnings the write should record; PayloadError naming the first failing field otherwise."""
    return REGISTRY.validate(kind, payload, user_confirmed_literals=user_confirmed_literals)


# ── search text ────────────────────────────────────────────────────────────────────────────────────────────────


def _text(payload: dict, key: str) -> str:
    v = payload.get(key)
    return v.strip() if isinstance(v, str) else ""


def _texts(payload: dict, key: str) -> list[str]:
    v = payload.get(key)
    return [s.strip() for s in v if isinstance(s, str) and s.strip()] if isinstance(v, list) else []


def _first(payload: dict, *keys: str) -> str:
    return next((t for t in (_text(payload, k) for k in keys) if t), "")


def description_of(kind: str, payload: dict) -> str:
    """The text a node's FTS and vector entry use (§3.3, §3.4 `payload.$.description`): the payload's own
    description, else the field that says what this kind of node is about (K21)."""
    check_kind(kind)
    if not isinstance(payload, dict):
        return ""
    own = _text(payload, "description")
    if own:
        return own
    if kind == "world_entity":
        return _first(payload, "content_summary", "display_name")
    if kind == "application":
        return ", ".join(_texts(payload, "known_capabilities"))
    if kind == "procedure":
        steps = payload.get("steps") if isinstance(payload.get("steps"), list) else []
        return "; ".join(s["intent"].strip() for s in steps
                         if isinstance(s, dict) and isinstance(s.get("intent"), str) and s["intent"].strip())
    if kind == "execution_trace":
        return _first(payload, "summary", "outcome")
    if kind == "standing_procedure":
        return " → ".join(t for t in (_text(payload, "trigger_summary"), _text(payload, "action_summary")) if t)
    if kind == "goal":
        return _first(payload, "goal_description", "narrative", "canonical_name")
    if kind == "domain_concept":
        return _first(payload, "definition", "concept_name")
    if kind == "obligation":
        return _first(payload, "obligation_description")
    if kind == "work_product":
        doc, status = _text(payload, "document_type"), _text(payload, "status")
        return f"{doc} ({status})" if doc and status else doc
    if kind == "memory_directive":
        return _first(payload, "summary")
    if kind == "tool_capability":
        return ", ".join(_texts(payload, "capabilities_summary")) or _text(payload, "tool_id")
    return ""


# ── one valid minimal payload per kind (tests and benchmarks reuse these) ──────────────────────────────────────

EXAMPLE_PAYLOADS: dict[str, dict] = {
    "world_entity": {"entity_type": "person", "description": "Maya's sister, a nurse in Leeds"},
    "application": {"canonical_name": "Microsoft Word", "aliases": ["Word"], "platform": "mac", "source": "trace",
                    "known_capabilities": ["table of contents", "track changes"]},
    "procedure": {
        "canonical_name": "Insert Table of Contents", "description": "Add an automatic table of contents",
        "use_conditions": ["the document has headings"],
        "steps": [{"step_index": 1, "intent": "Insert a table of contents from the headings",
                   "capability_area": "references"}],
        "environment": {"app_entity_id": "app-word", "app_name": "Word", "platform": "mac"},
        "source": "manual_demonstration",
    },
    "execution_trace": {"outcome": "success", "procedure_id": "proc-toc"},
    "standing_procedure": {
        "trigger_summary": "A court filing arrives", "action_summary": "Extract its deadlines to the calendar",
        "trigger_conditions": [{"signal_type": "email_received", "conditions": ["sender is the court"]}],
        "action_steps": [{"step_index": 1, "intent": "Extract the deadlines", "requires_user_confirmation": True}],
    },
    "goal": {"goal_description": "Run a sub-4-hour marathon this year"},
    "domain_concept": {"concept_name": "tempo run", "definition": "A sustained run at about half-marathon pace",
                       "applies_in": ["marathon training"]},
    "obligation": {
        "obligation_description": "Send Sam the signed lease",
        "deadline": {"date": "2026-05-01T17:00:00+01:00", "type": "courtesy",
                     "consequence_of_missing": "Sam cannot register the flat", "extendable": True},
        "status": "pending",
    },
    "work_product": {"document_type": "cover_letter", "status": "draft"},
    "memory_directive": {
        "memory_type": "preference", "summary": "Prefers metric units", "assertion_class": "preference",
        "applies_when": ["giving distances or weights"], "scope": "global",
        "source_certainty": "user_explicitly_stated",
    },
    "tool_capability": {"tool_id": "mcp.calendar", "tool_source": "mcp"},
}
