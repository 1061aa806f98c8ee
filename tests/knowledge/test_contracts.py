"""DOC72 payload contracts (§4, §4A, §29), the validator registry, description_of and §4.1 scope inference."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from kenning.knowledge.contracts import (
    EXAMPLE_PAYLOADS, REGISTRY, NodePayloadValidatorRegistry, PayloadError, ValidatedPayload, description_of,
    entity_type_for, placeholder_for, validate_payload,
)
from kenning.knowledge.kinds import NODE_KINDS, UnknownKind, check_kind
from kenning.knowledge.scope import ScopeError, infer_scope, scope_field, with_scope


def example(kind: str) -> dict:
    return copy.deepcopy(EXAMPLE_PAYLOADS[kind])


def rejected(kind: str, payload, **kw) -> PayloadError:
    with pytest.raises(PayloadError) as info:
        validate_payload(kind, payload, **kw)
    assert info.value.kind == kind
    assert str(info.value).startswith(f"{kind} payload: ")
    return info.value


# ── kinds ──────────────────────────────────────────────────────────────────────────────────────────────────────


def test_the_eleven_kinds_in_seed_order():
    assert NODE_KINDS == ("world_entity", "application", "procedure", "execution_trace", "standing_procedure",
                          "goal", "domain_concept", "obligation", "work_product", "memory_directive",
                          "tool_capability")
    assert check_kind("goal") == "goal"


@pytest.mark.parametrize("bad, hint", [("goals", "goal"), ("obligaton", "obligation"), ("person", "world_entity"),
                                       ("preference", "memory_directive")])
def test_an_unknown_kind_names_the_kinds_and_the_closest(bad, hint):
    with pytest.raises(UnknownKind) as info:
        check_kind(bad)
    msg = str(info.value)
    assert repr(bad) in msg and f"did you mean {hint}?" in msg and "tool_capability" in msg
    assert isinstance(info.value, ValueError)


def test_the_registry_refuses_an_unknown_kind():
    with pytest.raises(UnknownKind):
        validate_payload("person", {"entity_type": "person"})
    registry = NodePayloadValidatorRegistry()
    with pytest.raises(UnknownKind):
        registry.register("people", BaseModel)
    with pytest.raises(LookupError, match="no payload model is registered for node kind 'goal'"):
        registry.validate("goal", {})


# ── every kind: a valid minimal example, and a rejected one naming the field ──────────────────────────────────


@pytest.mark.parametrize("kind", NODE_KINDS)
def test_every_kind_accepts_its_minimal_example(kind):
    assert set(EXAMPLE_PAYLOADS) == set(NODE_KINDS)
    out = validate_payload(kind, example(kind))
    assert isinstance(out, ValidatedPayload) and out.warnings == ()
    assert out.payload["schema_version"] == 1
    assert None not in json.loads(json.dumps(out.payload)).values()
    for key, value in EXAMPLE_PAYLOADS[kind].items():
        if key != "steps":
            assert out.payload[key] == value


REJECTED = [
    ("world_entity", lambda p: p.pop("entity_type"), "entity_type", "is required"),
    ("world_entity", lambda p: p.update(entity_type="human"), "entity_type", "must be one of"),
    ("world_entity", lambda p: p.update(entity_type="note"), "system_id", "is required for a system entity"),
    ("application", lambda p: p.update(platform="linux"), "platform", "must be one of"),
    ("application", lambda p: p.pop("known_capabilities"), "known_capabilities", "is required"),
    ("procedure", lambda p: p.update(steps=[]), "steps", "needs at least 1"),
    ("procedure", lambda p: p["steps"][0].update(step_index=0), "steps[0].step_index", "must be ≥ 1"),
    ("procedure", lambda p: p["steps"][0].update(intent="x" * 501), "steps[0].intent",
     "longer than 500 characters"),
    ("procedure", lambda p: p.update(use_conditions=[]), "use_conditions", "needs at least 1"),
    ("procedure", lambda p: p.update(execution_topology="branching"), "execution_topology", "linear"),
    ("procedure", lambda p: p.update(decision_points=[{"decision_id": "d", "prompt": "?", "branches": [
        {"when": "a", "then_step_indices": [1]}, {"when": "b", "then_step_indices": [1]}]}]),
     "decision_points", "must be empty in v1"),
    ("procedure", lambda p: p["steps"].append(dict(p["steps"][0])), "steps", "step_index 1 appears twice"),
    ("procedure", lambda p: p["steps"][0].update(source_event_ids=["nope"]), "steps[0].source_event_ids[0]",
     "must be a UUID"),
    ("procedure", lambda p: p.update(lifecycle_state="captured"), "lifecycle_state", "node's lifecycle_state"),
    ("execution_trace", lambda p: p.update(outcome="promoted"), "outcome", "must be one of"),
    ("standing_procedure", lambda p: p.update(trigger_conditions=[]), "trigger_conditions", "needs at least 1"),
    ("standing_procedure", lambda p: p.update(safety_class="destructive_send"), "safety_class", "must be one of"),
    ("standing_procedure", lambda p: p["action_steps"][0].pop("requires_user_confirmation"),
     "action_steps[0].requires_user_confirmation", "is required"),
    ("goal", lambda p: p.pop("goal_description"), "goal_description", "is required (or give narrative)"),
    ("goal", lambda p: p.update(goal_status="done"), "goal_status", "must be one of"),
    ("domain_concept", lambda p: p.pop("definition"), "definition", "is required"),
    ("domain_concept", lambda p: p.update(reference_sources=[{"citation": "c", "relevance": "r"}]),
     "reference_sources[0].still_current", "is required"),
    ("obligation", lambda p: p.pop("deadline"), "deadline", "is required"),
    ("obligation", lambda p: p.update(status="active"), "status", "must be one of"),
    ("obligation", lambda p: p.update(obligation_status="active"), "obligation_status", "status is §4A.1.7"),
    ("work_product", lambda p: p.update(status="published"), "status", "must be one of"),
    ("work_product", lambda p: p.update(version="2"), "version", "must be an integer"),
    ("memory_directive", lambda p: p.update(applies_when=[]), "applies_when", "needs at least 1"),
    ("memory_directive", lambda p: p.update(scope="personal"), "scope", "must be one of"),
    ("memory_directive", lambda p: p.update(capture_scope="session"), "capture_scope", "must be one of"),
    ("memory_directive", lambda p: p.update(inject_count=-1), "inject_count", "must be ≥ 0"),
    ("memory_directive", lambda p: p.update(taint=5), "taint", "must be true, false or a label"),
    ("memory_directive", lambda p: p.update(annotations=[{"annotation_type": "x", "content": "y",
                                                          "confidence": 2}]),
     "annotations[0].confidence", "must be ≤ 1"),
    ("memory_directive", lambda p: p.update(annotations=[{"annotation_type": "x" * 61, "content": "y"}]),
     "annotations[0].annotation_type", "longer than 60 characters"),
    ("tool_capability", lambda p: p.update(tool_source="rest"), "tool_source", "must be one of"),
    ("tool_capability", lambda p: p.update(capabilities_summary="calendar"), "capabilities_summary",
     "must be a list"),
]


@pytest.mark.parametrize("kind, change, field, reason", REJECTED, ids=[f"{r[0]}:{r[2]}" for r in REJECTED])
def test_a_broken_payload_is_rejected_naming_the_field(kind, change, field, reason):
    payload = example(kind)
    change(payload)
    err = rejected(kind, payload)
    assert err.field == field
    assert reason in err.reason
    assert str(err) == f"{kind} payload: {field}: {err.reason}"


def test_every_kind_has_a_rejected_example():
    assert {r[0] for r in REJECTED} == set(NODE_KINDS)


def test_a_payload_that_is_not_an_object_is_rejected():
    err = rejected("goal", ["plan"])
    assert err.field == "" and str(err) == "goal payload: must be a JSON object (got list)"


def test_an_unknown_field_is_named_with_the_closest_real_one():
    payload = example("obligation")
    payload["deadline"]["extendible"] = payload["deadline"].pop("extendable")
    err = rejected("obligation", payload)
    assert err.field == "deadline.extendible"
    assert err.reason == "is not a field of the obligation contract; did you mean extendable?"


def test_open_kinds_keep_extra_attributes_and_closed_ones_refuse_them():
    out = validate_payload("world_entity", {"entity_type": "person", "birthday": "03-14", "nickname": None})
    assert out.payload == {"entity_type": "person", "birthday": "03-14", "schema_version": 1}
    assert validate_payload("execution_trace", {"outcome": "failure", "error": "timeout"}).payload["error"] \
        == "timeout"
    assert rejected("goal", {"goal_description": "x", "mood": "keen"}).field == "mood"


def test_the_input_is_not_changed():
    payload = _procedure_with([{"name": "client_name", "value": "Henderson"}])
    before = copy.deepcopy(payload)
    validate_payload("procedure", payload)
    assert payload == before


def test_values_are_not_coerced():
    assert rejected("procedure", {**example("procedure"), "is_composite": 1}).reason == \
        "must be true or false (got int)"


def test_system_entities_need_their_system_fields():
    note = {"entity_type": "note", "system_id": "n-1", "display_name": "Henderson research notes",
            "status": "active", "created_by": "user",
            "participants": [{"participant_id": "user", "participant_type": "user", "participant_name": "Will"}]}
    assert validate_payload("world_entity", note).payload["participants"][0]["participant_name"] == "Will"


def test_kenning_entity_types_map_onto_world_entity_types():
    assert [entity_type_for(t) for t in ("PERSON", "ORG", "LOCATION", "EMAIL", "URL", "SOMETHING")] == \
        ["person", "organization", "place", "email_account", "web_resource", "other"]
    for t in ("PERSON", "ORG", "DOI", "GIT_SHA", "CUSTOM_TERM"):
        validate_payload("world_entity", {"entity_type": entity_type_for(t)})


# ── obligation: the timezone rule (§4A.1.7 SR-20, K25) ─────────────────────────────────────────────────────────


@pytest.mark.parametrize("date", ["2026-05-01T17:00:00Z", "2026-05-01T17:00:00+01:00", "2026-05-01T17:00Z",
                                  "2026-05-01T17:00:00.250-05:00"])
def test_a_deadline_with_a_timezone_is_kept_as_written(date):
    payload = example("obligation")
    payload["deadline"]["date"] = date
    assert validate_payload("obligation", payload).payload["deadline"]["date"] == date


@pytest.mark.parametrize("date, reason", [
    ("2026-05-01", "needs a timezone (got '2026-05-01')"),
    ("2026-05-01T17:00:00", "needs a timezone (got '2026-05-01T17:00:00')"),
    ("next friday", "must be an ISO-8601 date-time with a timezone"),
    ("2026-13-01T17:00:00Z", "must be an ISO-8601 date-time with a timezone"),
])
def test_a_deadline_without_a_timezone_is_rejected(date, reason):
    payload = example("obligation")
    payload["deadline"]["date"] = date
    err = rejected("obligation", payload)
    assert err.field == "deadline.date" and err.value == date and err.reason.startswith(reason)
    if date == "2026-05-01":
        assert str(err) == "obligation payload: deadline.date: needs a timezone (got '2026-05-01')"


def test_obligation_keeps_the_section_4_7_fields_that_do_not_conflict():
    payload = {**example("obligation"), "urgency": "high", "obligee_entity_ref": "person-sam",
               "source": "conversation_mined", "completed_at": "2026-04-30T09:00:00Z"}
    out = validate_payload("obligation", payload).payload
    assert out["urgency"] == "high" and out["source"] == "conversation_mined"
    assert rejected("obligation", {**payload, "completed_at": "2026-04-30"}).field == "completed_at"


# ── procedure: scrubbing and capability tags (§4A.1.3 SR-07, SR-23, K29) ──────────────────────────────────────


def _procedure_with(params: list[dict], **extra) -> dict:
    payload = example("procedure")
    payload["steps"][0]["parameters"] = params
    payload.update(extra)
    return payload


def test_placeholder_only_literals_are_scrubbed_with_a_warning_that_hides_the_value():
    out = validate_payload("procedure", _procedure_with([{"name": "client_name", "value": "Henderson"}]))
    param = out.payload["steps"][0]["parameters"][0]
    assert param == {"name": "client_name", "value": "[Client Name]", "is_variable": False,
                     "literal_retention_class": "placeholder_only"}
    assert len(out.warnings) == 1
    assert "steps[0].parameters[0].value" in out.warnings[0] and "[Client Name]" in out.warnings[0]
    assert "Henderson" not in out.warnings[0]


def test_placeholders_and_retained_classes_are_kept():
    params = [{"name": "client", "value": "[Client]"},
              {"name": "font", "value": "Times New Roman", "literal_retention_class": "retain_allowed"},
              {"name": "court", "value": "SDNY", "literal_retention_class": "retain_if_user_confirmed"}]
    unconfirmed = validate_payload("procedure", _procedure_with(copy.deepcopy(params)))
    values = [p["value"] for p in unconfirmed.payload["steps"][0]["parameters"]]
    assert values == ["[Client]", "Times New Roman", "[Court]"] and len(unconfirmed.warnings) == 1
    confirmed = validate_payload("procedure", _procedure_with(copy.deepcopy(params)), user_confirmed_literals=True)
    assert [p["value"] for p in confirmed.payload["steps"][0]["parameters"]] == \
        ["[Client]", "Times New Roman", "SDNY"]
    assert confirmed.warnings == ()


def test_placeholder_text():
    assert placeholder_for("client_name") == "[Client Name]"
    assert placeholder_for("opposing-counsel email") == "[Opposing Counsel Email]"
    assert placeholder_for("") == "[Value]"


def test_capability_tags_come_from_the_steps_unless_given():
    payload = example("procedure")
    payload["steps"] = [{"step_index": 1, "intent": "a", "capability_area": "styles"},
                        {"step_index": 2, "intent": "b", "capability_area": " "},
                        {"step_index": 3, "intent": "c"},
                        {"step_index": 4, "intent": "d", "capability_area": "references"},
                        {"step_index": 5, "intent": "e", "capability_area": "styles"}]
    assert validate_payload("procedure", payload).payload["capability_tags"] == ["styles", "references"]
    payload["capability_tags"] = ["formatting"]
    assert validate_payload("procedure", payload).payload["capability_tags"] == ["formatting"]


def test_procedure_defaults_are_the_seeds():
    out = validate_payload("procedure", example("procedure")).payload
    assert (out["execution_topology"], out["decision_points"], out["derivation_quality"], out["is_composite"],
            out["trigger_phrases"]) == ("linear", [], "medium", False, [])
    assert out["steps"][0]["step_nature"] == "mechanical"


# ── trigger_phrases: min 3 max 8 default [] (K26) ─────────────────────────────────────────────────────────────


@pytest.mark.parametrize("n, ok", [(0, True), (1, False), (2, False), (3, True), (8, True), (9, False)])
def test_trigger_phrases_are_none_or_three_to_eight(n, ok):
    payload = _procedure_with([], trigger_phrases=[f"phrase {i}" for i in range(n)])
    if ok:
        assert len(validate_payload("procedure", payload).payload["trigger_phrases"]) == n
    else:
        err = rejected("procedure", payload)
        assert err.field == "trigger_phrases" and err.reason == f"needs none or 3 to 8 phrases (got {n})"


# ── other kinds' seed defaults ─────────────────────────────────────────────────────────────────────────────────


def test_standing_procedures_default_to_confirm_first():
    assert validate_payload("standing_procedure", example("standing_procedure")).payload["safety_class"] == \
        "confirm_first"


def test_goal_is_the_union_of_section_4a_and_section_29():
    out = validate_payload("goal", {"canonical_name": "Resolve Henderson favorably",
                                    "narrative": "Settle above the floor before trial",
                                    "tensions": [{"tension_description": "speed vs. price"}],
                                    "stakeholders": [{"stakeholder_role": "client"}],
                                    "time_pressure": {"urgency": "high"}, "source": "user_stated"}).payload
    assert out["goal_status"] == "active" and out["success_criteria"] == []
    assert description_of("goal", out) == "Settle above the floor before trial"


def test_memory_directive_defaults_and_doc1_fields():
    payload = {**example("memory_directive"), "maturity_state": "observation", "capture_scope": "durable",
               "inject_count": 3, "taint": False, "knowledge_scope": "personal"}
    out = validate_payload("memory_directive", payload).payload
    assert (out["priority_class"], out["injection_format"], out["scope"], out["knowledge_scope"]) == \
        ("default", "imperative", "global", "personal")
    assert out["maturity_state"] == "observation" and out["taint"] is False


def test_every_kind_accepts_description_scope_and_annotations():
    extra = {"description": "why it matters", "principal_id": "user", "scope_inference_basis": "default",
             "annotations": [{"annotation_type": "gear_setting", "content": "gain at 3", "source": "user_stated"}]}
    for kind in NODE_KINDS:
        payload = {**example(kind), **extra, scope_field(kind): "personal"}
        out = validate_payload(kind, payload).payload
        assert out["description"] == "why it matters" and out[scope_field(kind)] == "personal"
        assert out["annotations"][0]["schema_version"] == 1
        assert description_of(kind, out) == "why it matters"


# ── description_of ─────────────────────────────────────────────────────────────────────────────────────────────


def test_description_of_falls_back_to_what_the_kind_is_about():
    texts = {kind: description_of(kind, validate_payload(kind, example(kind)).payload) for kind in NODE_KINDS}
    assert texts["goal"] == "Run a sub-4-hour marathon this year"
    assert texts["memory_directive"] == "Prefers metric units"
    assert texts["domain_concept"] == "A sustained run at about half-marathon pace"
    assert texts["obligation"] == "Send Sam the signed lease"
    assert texts["standing_procedure"] == "A court filing arrives → Extract its deadlines to the calendar"
    assert texts["application"] == "table of contents, track changes"
    assert texts["work_product"] == "cover_letter (draft)"
    assert texts["tool_capability"] == "mcp.calendar"
    assert texts["world_entity"] == "Maya's sister, a nurse in Leeds"
    assert all(texts.values())
    assert description_of("goal", {"narrative": "n"}) == "n"
    assert description_of("world_entity", {"entity_type": "person"}) == ""


# ── idempotence (hypothesis) ───────────────────────────────────────────────────────────────────────────────────

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_params = st.lists(st.fixed_dictionaries(
    {"name": st.text(st.characters(blacklist_categories=("Cs",)), max_size=20), "value": _text},
    optional={"literal_retention_class": st.sampled_from(["placeholder_only", "retain_if_user_confirmed",
                                                          "retain_allowed"]),
              "is_variable": st.booleans(), "context": st.none() | _text}), max_size=4)
_extras = st.fixed_dictionaries({}, optional={
    "description": _text, "principal_id": st.none() | _text,
    "scope_inference_basis": st.sampled_from(["matter_linked", "domain_profile", "personal_surface", "default"]),
    "annotations": st.lists(st.fixed_dictionaries({"annotation_type": st.text(max_size=10), "content": _text},
                                                  optional={"confidence": st.floats(0, 1)}), max_size=2)})


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(NODE_KINDS), extras=_extras, params=_params,
       areas=st.lists(st.none() | st.sampled_from(["styles", "references", " ", ""]), min_size=1, max_size=3),
       confirmed=st.booleans())
def test_validate_payload_is_idempotent(kind, extras, params, areas, confirmed):
    payload = {**example(kind), **extras}
    if kind == "procedure":
        payload["steps"] = [{"step_index": i + 1, "intent": f"step {i}", "capability_area": a,
                             "parameters": params if i == 0 else []} for i, a in enumerate(areas)]
    first = validate_payload(kind, payload, user_confirmed_literals=confirmed)
    again = validate_payload(kind, first.payload, user_confirmed_literals=confirmed)
    assert again.payload == first.payload
    assert again.warnings == ()
    assert json.loads(json.dumps(first.payload)) == first.payload


def test_the_registry_holds_all_eleven_kinds():
    for kind in NODE_KINDS:
        assert issubclass(REGISTRY.model(kind), BaseModel)


# ── §4.1 scope inference (K36) ─────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("signals, scope, basis", [
    ({}, "personal", "default"),
    ({"matter_linked": True}, "firm_shared", "matter_linked"),
    ({"professional_profile": True}, "firm_shared", "domain_profile"),
    ({"matter_linked": True, "professional_profile": True}, "firm_shared", "matter_linked"),
    ({"personal_surface": True}, "personal", "personal_surface"),
    ({"user_marked_private": True}, "private", "user_override"),
    ({"user_marked_private": True, "matter_linked": True}, "private", "user_override"),
    ({"matter_linked": True, "personal_surface": True}, "firm_shared", "matter_linked"),
    ({"user_override": "matter_scoped", "user_marked_private": True}, "matter_scoped", "user_override"),
    ({"user_override": "personal", "matter_linked": True}, "personal", "user_override"),
])
def test_scope_inference_table(signals, scope, basis):
    assert infer_scope(**signals) == {"scope": scope, "scope_inference_basis": basis}


def test_an_invalid_scope_override_is_refused():
    with pytest.raises(ScopeError) as info:
        infer_scope(user_override="public")
    assert isinstance(info.value, ValueError) and isinstance(info.value, PayloadError)
    assert str(info.value) == "scope override: must be one of firm_shared, matter_scoped, personal, private " \
                              "(got 'public')"


def test_with_scope_fills_the_kinds_scope_field_unless_given():
    goal = with_scope("goal", example("goal"), matter_linked=True)
    assert (goal["scope"], goal["scope_inference_basis"]) == ("firm_shared", "matter_linked")
    directive = with_scope("memory_directive", example("memory_directive"), personal_surface=True)
    assert (directive["scope"], directive["knowledge_scope"]) == ("global", "personal")
    validate_payload("memory_directive", directive)
    stated = {**example("goal"), "scope": "private"}
    assert with_scope("goal", stated, matter_linked=True) == stated
