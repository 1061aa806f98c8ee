"""§42A.2.3–§42A.2.4, §42A.2.12A as pure functions: the seed's five score vectors, shouldPromoteEdge in order,
the 25/3 per-source budgets, pair normalization, ids, visibility and nested spans counted once."""

from __future__ import annotations

import hashlib

import pytest

from kenning.config import load_config
from kenning.upkeep import bundles as B
from kenning.upkeep.mentions import Span, _mark_nesting, compile_patterns, detect, normalize_for_lookup

CFG = load_config(None).backlinks
POLICY, BUDGET = CFG.promotion, CFG.budget


def bundle(sup, obs, surf, ctx, contra, rel="affiliated_with", **kw) -> B.Bundle:
    b = B.Bundle(evidence_bundle_id=kw.pop("bid", f"b{sup}{obs}{surf}{ctx}{contra}{rel}"),
                 source_node_id=kw.pop("src", "s"), target_node_id=kw.pop("tgt", "t"), relation_type=rel,
                 support_count=sup, distinct_observation_count=obs, distinct_surface_count=surf,
                 distinct_work_context_count=ctx, contradiction_count=contra, **kw)
    return B.score(b, degree=0)


@pytest.mark.parametrize("vec, sal, score", [
    ((2, 2, 1, 1, 0), 0.70, 0.382),
    ((4, 4, 2, 1, 0), 0.85, 0.654),
    ((3, 3, 2, 2, 0), 1.00, 0.568),
    ((6, 6, 3, 3, 0), 1.00, 0.890),
    ((4, 4, 2, 1, 1), 0.75, 0.5715),
])
def test_the_seeds_five_vectors(vec, sal, score):
    b = bundle(*vec)
    assert b.hub_penalty == 0
    assert b.salience_score == pytest.approx(sal)
    assert b.evidence_score == pytest.approx(score, abs=5e-4)


def test_hub_penalty_and_salience_terms():
    assert B.hub_penalty(150) == 0 and B.hub_penalty(151) == pytest.approx(1 / 300)
    assert B.hub_penalty(300) == pytest.approx(0.5) and B.hub_penalty(10_000) == 0.8
    b = B.score(bundle(6, 6, 3, 3, 0), degree=450)  # penalty .8 → −.12
    assert b.evidence_score == pytest.approx(0.890 - 0.12, abs=5e-4)
    assert bundle(2, 2, 1, 1, 0, rel="semantically_related").salience_score == pytest.approx(0.60)


def test_should_promote_follows_the_seeds_order():
    strong = bundle(6, 6, 3, 3, 0)
    assert B.should_promote(strong, POLICY, None)[0]
    # visibility blocked beats an approval; the hard block beats an approval; rejected beats everything else
    assert not B.should_promote(bundle(6, 6, 3, 3, 0, visibility_class="blocked", user_verdict="approved"),
                                POLICY, None)[0]
    assert not B.should_promote(bundle(6, 6, 3, 3, 0, rel="semantically_related", user_verdict="approved"),
                                POLICY, None)[0]
    assert not B.should_promote(bundle(6, 6, 3, 3, 0, user_verdict="rejected"), POLICY, None)[0]
    assert B.should_promote(bundle(1, 1, 1, 1, 0, user_verdict="approved"), POLICY, None)[0]
    # a single mention only with exact alias and graph context ≥ .7
    one = bundle(1, 1, 1, 1, 0)
    assert B.should_promote(one, POLICY, {"resolution_method": "alias_exact", "graph_context_score": 0.7})[0]
    assert not B.should_promote(one, POLICY, {"resolution_method": "alias_exact", "graph_context_score": 0.69})[0]
    assert not B.should_promote(one, POLICY, {"resolution_method": "fts5_bm25", "graph_context_score": 0.9})[0]
    assert not B.should_promote(one, POLICY, None)[0]
    # otherwise support ≥ 2, observations ≥ 2 and evidence ≥ .58 (spec defect 2: the "salience" gate is the score)
    assert not B.should_promote(bundle(2, 2, 1, 1, 0), POLICY, None)[0]           # .382
    assert not B.should_promote(bundle(4, 1, 2, 2, 0), POLICY, None)[0]           # one observation
    assert B.should_promote(bundle(4, 4, 2, 1, 0), POLICY, None)[0]               # .654


def test_budgets_25_promoted_and_3_generic_per_source():
    many = [bundle(6, 6, 3, 3, 0, bid=f"x{i:02d}", tgt=f"t{i:02d}") for i in range(30)]
    generic = [bundle(6, 6, 3, 3, 0, rel=f"learned_peer_of", bid=f"g{i}", tgt=f"u{i}") for i in range(5)]
    chosen = B.select_promotions(many + generic, POLICY, BUDGET, {})
    assert len(chosen) == 25
    assert sum(1 for b, _ in chosen if b.relation_type.startswith("learned_")) == 3
    other = [bundle(6, 6, 3, 3, 0, bid=f"y{i}", src="s2", tgt=f"t{i}") for i in range(3)]
    assert len(B.select_promotions(many + other, POLICY, BUDGET, {})) == 28  # budgets are per source
    # approved bundles are considered first: a budget never squeezes out a person's approval
    approved = bundle(1, 1, 1, 1, 0, bid="zz-approved", tgt="tz", user_verdict="approved")
    chosen = B.select_promotions(many + [approved], POLICY, BUDGET, {})
    assert approved in [b for b, _ in chosen]


def test_ids_and_undirected_normalization():
    assert B.bundle_id("b", "a", "affiliated_with") == B.bundle_id("a", "b", "affiliated_with") == \
        hashlib.sha256(b"a|b|affiliated_with").hexdigest()
    assert B.bundle_id("b", "a", "produced_by") == hashlib.sha256(b"b|a|produced_by").hexdigest()
    assert B.bundle_id("s", None, "referenced_in") == hashlib.sha256(b"s|null|referenced_in").hexdigest()
    assert B.mention_id("o", "s", "sam", 3, 6, "canonical_alias") == \
        hashlib.sha256(b"o|s|sam|3|6|canonical_alias").hexdigest()
    assert normalize_for_lookup("  Mutable_Instruments.Plaits ") == "mutable instruments plaits"


def test_can_read_promoted_edge():
    ok = dict(execution_visibility="cloud_allowed", edge_visibility="cloud_allowed",
              source_node_visibility="cloud_allowed", target_node_visibility="cloud_warn")
    assert B.can_read_promoted_edge(**ok)
    assert not B.can_read_promoted_edge(**{**ok, "target_node_visibility": "blocked"})
    assert not B.can_read_promoted_edge(**{**ok, "edge_visibility": "local_only"})
    assert B.can_read_promoted_edge(**{**ok, "edge_visibility": "local_only", "execution_visibility": "local_only"})
    assert not B.can_read_promoted_edge(**ok, source_classification_state="quarantined_review")
    assert B.most_restrictive(["cloud_warn", "local_only", "cloud_allowed"]) == "local_only"


def test_nested_spans_both_emitted_and_grouped():
    text = "I patched the Mutable Instruments Plaits firmware with Dr. Chen."
    spans, degraded = detect("m1", text, [], compile_patterns(CFG), CFG,
                             known=lambda t: t == "mutable instruments")
    assert not degraded
    got = {s.text: s for s in spans}
    wide, narrow = got["Mutable Instruments Plaits"], got["Mutable Instruments"]
    assert narrow.is_nested and narrow.parent_key == wide.key and narrow.group_key == wide.group_key == wide.key
    assert got["Dr. Chen"].span_class == "role_titled_person" and not got["Dr. Chen"].is_nested


def test_regex_timeout_marks_the_observation_degraded():
    """Over the per-observation budget the patterns stop: the spans found so far are kept, the batch degraded."""
    text = "Sarah Chen met Dr. Li at Acme Inc. " * 300  # ~10k characters: more than 1 ms of matching
    wide = CFG.model_copy(update={"max_mentions_per_observation": 100_000, "regex_eval_timeout_ms": 10_000})
    full, ok = detect("m", text, [], compile_patterns(wide), wide)
    cut, degraded = detect("m", text, [], compile_patterns(wide),
                           wide.model_copy(update={"regex_eval_timeout_ms": 1}))
    assert not ok and degraded and len(cut) < len(full)


def test_input_and_span_caps():
    cfg = CFG.model_copy(update={"max_input_text_chars": 20, "max_mentions_per_observation": 2})
    text = "Sarah Chen met Bob Li and Ann Ho and Tim Xu at Acme Inc"
    spans, _ = detect("m", text, [], compile_patterns(cfg), cfg)
    assert len(spans) <= 2 and all(s.end <= 20 for s in spans)


def test_code_fences_are_not_scanned():
    text = "Ask Sarah Chen.\n```\nclass Foo Bar:\n    Big Data = 1\n```"
    start = text.index("```")
    spans, _ = detect("m", text, [], compile_patterns(CFG), CFG, skip=[(start, len(text))])
    assert [s.text for s in spans] == ["Sarah Chen"]
