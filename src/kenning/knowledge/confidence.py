"""DOC72 §5 confidence: a Beta(α, β) mean, lazily decayed by the node kind's half-life, then the policy caps.

Pure functions over numbers and config; no SQL. Docs/decisions.md K40–K44 record how the seed is read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Literal

from kenning.config.loader import defaults_dict
from kenning.config.models import KnowledgeConfidenceConfig
from kenning.sources.timestamps import parse_utc

ConflictFlag = Literal["distinguish", "caution"]

# §5.1/§5.4 caps in the order the seed applies them (after decay); a later cap sees the earlier one's result.
CAP_ORDER = ("domain_principle_no_authority", "staleness_expired", "staleness_invalidated", "superseded_authority")
# Flags a caller may set itself; the two staleness caps follow from staleness_state (they may also be passed).
POLICY_FLAGS = frozenset(CAP_ORDER)
_STALENESS_CAP = {"expired": "staleness_expired", "invalidated": "staleness_invalidated"}

_DAY_S = 86400.0


@functools.cache
def packaged_defaults() -> KnowledgeConfidenceConfig:
    """``knowledge.confidence`` from defaults.yaml, for callers that pass no config (the seed's numbers)."""
    return KnowledgeConfidenceConfig.model_validate(defaults_dict()["knowledge"]["confidence"])


def cap_evidence(alpha: float, beta: float, cap: float = 200.0) -> tuple[float, float]:
    """§5.1: when α+β exceeds the cap, scale both by cap/(α+β), keeping their ratio."""
    total = alpha + beta
    if total > cap:
        scale = cap / total
        return alpha * scale, beta * scale
    return alpha, beta


def decay_factor(age_days: float, half_life_days: float | None) -> float:
    """exp(−ln2 · age / half-life); no half-life (K41) means no decay."""
    if half_life_days is None:
        return 1.0
    return math.exp(-math.log(2) * age_days / half_life_days)


def compute_confidence(alpha: float, beta: float, age_days: float, half_life_days: float | None, *,
                       domain_principle_no_authority: bool = False, staleness_expired: bool = False,
                       staleness_invalidated: bool = False, superseded_authority: bool = False,
                       cfg: KnowledgeConfidenceConfig | None = None) -> float:
    """§5.1 computeConfidence exactly: cap the evidence, Beta mean × decay, the caps in the seed's order, clamp.

    Without ``cfg`` the packaged defaults (the seed's cap, 200, and caps) apply.
    """
    cfg = cfg or packaged_defaults()
    caps = cfg.caps
    a, b = cap_evidence(alpha, beta, cfg.evidence_cap)
    confidence = a / (a + b) * decay_factor(age_days, half_life_days)
    if domain_principle_no_authority:
        confidence = min(confidence, caps.domain_principle_no_authority)
    if staleness_expired:
        confidence *= caps.staleness_expired_factor
    if staleness_invalidated:
        confidence = caps.staleness_invalidated
    if superseded_authority:
        confidence = min(confidence, caps.superseded_authority)
    return max(0.0, min(1.0, confidence))


def half_life_for(node_kind: str, cfg: KnowledgeConfidenceConfig, *, demonstrated_skill: bool = False) -> float | None:
    """§5.3 by kind; §6.8 demonstrated skills (procedures learned by example) use the longer half-life."""
    if node_kind not in cfg.half_life_days:
        raise ValueError(f"unknown node kind {node_kind!r}; known: {', '.join(sorted(cfg.half_life_days))}")
    if demonstrated_skill and node_kind == "procedure":
        return cfg.demonstrated_skill_half_life_days
    return cfg.half_life_days[node_kind]


def age_days(reference: str, now: str) -> float:
    """Days from ``reference`` (last_verified_at, else created_at) to ``now``; a reference after now is age 0."""
    return max(0.0, (parse_utc(now) - parse_utc(reference)).total_seconds() / _DAY_S)


def _flag_set(flags: Mapping[str, bool] | Iterable[str] | None) -> set[str]:
    if flags is None:
        return set()
    names = {k for k, v in flags.items() if v} if isinstance(flags, Mapping) else set(flags)
    unknown = names - POLICY_FLAGS
    if unknown:
        raise ValueError(f"unknown confidence policy flag(s) {sorted(unknown)}; known: {', '.join(CAP_ORDER)}")
    return names


def confidence_breakdown(alpha: float, beta: float, *, last_verified_at: str, now: str, node_kind: str,
                         staleness_state: str, flags: Mapping[str, bool] | Iterable[str] | None,
                         cfg: KnowledgeConfidenceConfig, demonstrated_skill: bool = False) -> dict:
    """Every term of §5.1 for one node, for `kenning node show` and for the stored ``confidence``.

    ``last_verified_at`` is the age reference: the caller passes created_at when the node was never verified.
    """
    active = _flag_set(flags)
    if staleness_state in _STALENESS_CAP:
        active.add(_STALENESS_CAP[staleness_state])
    a, b = cap_evidence(alpha, beta, cfg.evidence_cap)
    half_life = half_life_for(node_kind, cfg, demonstrated_skill=demonstrated_skill)
    age = age_days(last_verified_at, now)
    decay = decay_factor(age, half_life)
    confidence = compute_confidence(a, b, age, half_life, cfg=cfg, **{name: True for name in active})
    score = conflict_score(alpha, beta, cfg)
    return {"alpha": a, "beta": b, "beta_mean": a / (a + b), "age_days": age, "half_life_days": half_life,
            "decay": decay, "caps_applied": [name for name in CAP_ORDER if name in active],
            "confidence": confidence, "conflict_score": score, "flag": conflict_flag(score, cfg)}


def event_weight(event_type: str, cfg: KnowledgeConfidenceConfig) -> float:
    """§5.2 weight of an evidence event; an unknown name is an error that lists the known ones."""
    try:
        return cfg.event_weights[event_type]
    except KeyError:
        raise ValueError(f"unknown evidence event {event_type!r}; known: {', '.join(sorted(cfg.event_weights))}") \
            from None


def apply_evidence(alpha: float, beta: float, event_type: str, *, contradicts: bool = False,
                   cfg: KnowledgeConfidenceConfig) -> tuple[float, float]:
    """Support adds the event's weight to α; a contradiction adds it to β ("contradictions go into β directly").

    The result is capped (K42): scaling only inside computeConfidence would leave the mean unchanged, so the
    seed's "allowing new evidence to have meaningful impact" needs the stored counts capped.
    """
    w = event_weight(event_type, cfg)
    if contradicts:
        beta += w
    else:
        alpha += w
    return cap_evidence(alpha, beta, cfg.evidence_cap)


def conflict_score(alpha: float, beta: float, cfg: KnowledgeConfidenceConfig | None = None) -> float:
    """§5.6: balance × mass; balance = 1 − |α−β|/(α+β), mass = min((α+β)/50, 1); 0 with no evidence."""
    total = alpha + beta
    if total <= 0:
        return 0.0
    mass_total = (cfg or packaged_defaults()).conflict.mass_total
    return (1 - abs(alpha - beta) / total) * min(total / mass_total, 1.0)


def conflict_flag(score: float, cfg: KnowledgeConfidenceConfig | None = None) -> ConflictFlag | None:
    """§5.6 delivery tag: strictly above 0.7 → "distinguish", strictly above 0.5 → "caution"."""
    conflict = (cfg or packaged_defaults()).conflict
    if score > conflict.distinguish_above:
        return "distinguish"
    if score > conflict.caution_above:
        return "caution"
    return None
