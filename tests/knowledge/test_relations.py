"""DOC72's governed relation vocabulary (§7, §7.0A, §4.4, §42A.2.2) and undirected edge ordering."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.knowledge.relations import (
    RELATION_TYPES, SECTION_42A_2_CORE, UNDIRECTED, RelationError, check_relation, is_undirected, normalize_edge,
)

# §7.0A CoreRelationType, as the seed lists it.
SECTION_7_0A = """related_to part_of specializes contradicts supersedes version_of cites references applies_to
produced_by has_tool executes_via alternative_to learned_from applies_to_concept applies_to_actor applies_to_procedure
about_case addresses_concept created_by_procedure serves_goal constrained_by preferred_in_context validated_by_trace
uses_procedure depends_on_procedure composes_into parent_concept related_concept tension_with limits distinguishes
overrules narrows expands""".split()

# The 13 names of §7 and §4.4 that §7.0A leaves out (digest §7: use the union).
UNION_13 = """part_of_application sub_goal_of competes_with stakeholder_of informed_by_decision tracked_by_deadline
uses_style has_archetype obligated_to fulfills_obligation triggers_procedure promoted_to_task reviewed_by""".split()


@pytest.mark.parametrize("name", SECTION_7_0A)
def test_every_section_7_0a_name_is_accepted(name):
    assert check_relation(name) == name


@pytest.mark.parametrize("name", UNION_13)
def test_the_13_union_names_are_accepted(name):
    assert name not in SECTION_7_0A
    assert check_relation(name) == name


def test_the_vocabulary_is_exactly_the_union():
    assert len(SECTION_7_0A) == 35 and len(UNION_13) == 13
    assert RELATION_TYPES == set(SECTION_7_0A) | set(UNION_13) | SECTION_42A_2_CORE
    assert len(RELATION_TYPES) == 57
    assert {"linked_to_context", "affiliated_with", "semantically_related", "depends_on"} <= RELATION_TYPES
    assert not {"adjudicated_by", "party_to"} & RELATION_TYPES  # legal profile: a domain_ extension (K37)


@pytest.mark.parametrize("name", ["domain_adjudicated_by", "domain_x", "learned_mentor_of", "learned_a1_b2"])
def test_domain_and_learned_extensions_are_accepted(name):
    assert check_relation(name) == name


@pytest.mark.parametrize("bad", ["domain_", "learned_", "domain_Bad", "DOMAIN_x", "domain_a-b", "custom_thing",
                                 "learned_" + "x" * 80, "", "related to", "relatd_to"])
def test_names_outside_the_vocabulary_are_rejected(bad):
    with pytest.raises(RelationError) as info:
        check_relation(bad)
    assert repr(bad) in str(info.value) and "domain_<name> or learned_<name>" in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad, best", [("relatd_to", "related_to"), ("serves goal", "serves_goal"),
                                       ("Part_Of", "part_of"), ("DOMAIN_x", "domain_x"),
                                       ("sub_goal", "sub_goal_of")])
def test_a_rejected_name_comes_with_the_closest_canonical_names(bad, best):
    with pytest.raises(RelationError) as info:
        check_relation(bad)
    assert info.value.suggestions[0] == best
    assert f"closest: {best}" in str(info.value)


def test_undirected_relations():
    assert UNDIRECTED <= RELATION_TYPES
    assert {"related_to", "related_concept", "competes_with", "tension_with", "contradicts", "alternative_to",
            "affiliated_with", "collaborated_with", "semantically_related"} == UNDIRECTED
    assert is_undirected("competes_with") and not is_undirected("serves_goal")
    assert not is_undirected("domain_sibling_of")


def test_normalize_edge_puts_the_smaller_id_first_only_for_undirected_relations():
    assert normalize_edge("n-b", "related_to", "n-a") == ("n-a", "related_to", "n-b")
    assert normalize_edge("n-a", "related_to", "n-b") == ("n-a", "related_to", "n-b")
    assert normalize_edge("n-b", "serves_goal", "n-a") == ("n-b", "serves_goal", "n-a")
    assert normalize_edge("n-b", "learned_sibling_of", "n-a") == ("n-b", "learned_sibling_of", "n-a")
    with pytest.raises(RelationError):
        normalize_edge("n-a", "likes", "n-b")


@given(a=st.text(max_size=8), b=st.text(max_size=8), rel=st.sampled_from(sorted(RELATION_TYPES)))
def test_normalize_edge_is_idempotent_and_order_free_when_undirected(a, b, rel):
    once = normalize_edge(a, rel, b)
    assert normalize_edge(*once) == once
    if rel in UNDIRECTED:
        assert normalize_edge(b, rel, a) == once
