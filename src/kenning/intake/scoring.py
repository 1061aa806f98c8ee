"""§20A.4 importance scoring, seed-exact: ``scoreImportance`` over the eight 0–1 features with a
``SurfaceWeightProfile``, and the shallow/deep thresholds (with the §20A.5 first-30-days calibration, I5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

IntakeSurface = Literal["note", "document", "browser", "chat", "room", "panel", "forum", "candor", "task", "email",
                        "bucket", "calendar"]
# The seed's eleven surfaces, plus 'calendar' (§20B.15 makes calendar events an intake source but the union has no
# member for them; I91).
SURFACES: tuple[str, ...] = ("note", "document", "browser", "chat", "room", "panel", "forum", "candor", "task",
                             "email", "bucket", "calendar")
ScoreDecision = Literal["skip", "shallow", "deep"]


@dataclass(frozen=True)
class IntakeScoreFeatures:
    explicit_user_intent: float = 0.0
    novelty_score: float = 0.0
    domain_impact_score: float = 0.0
    entity_centrality_score: float = 0.0
    action_strength_score: float = 0.0
    matter_link_confidence: float = 0.0
    duplication_risk: float = 0.0     # stored positive, subtracted
    privacy_risk: float = 0.0         # stored positive, subtracted

    def as_dict(self) -> dict[str, float]:
        return {k: round(getattr(self, k), 6) for k in FEATURE_NAMES}


FEATURE_NAMES = ("explicit_user_intent", "novelty_score", "domain_impact_score", "entity_centrality_score",
                 "action_strength_score", "matter_link_confidence", "duplication_risk", "privacy_risk")


@dataclass(frozen=True)
class SurfaceWeightProfile:
    surface: str
    intent: float = 0.22
    novelty: float = 0.18
    domain: float = 0.22
    centrality: float = 0.14
    action: float = 0.12
    matter: float = 0.06
    dup: float = 0.10
    privacy: float = 0.08
    min_score_for_shallow: float = 0.45
    min_score_for_deep: float = 0.75
    schema_version: int = 1

    @classmethod
    def from_config(cls, config: Any, surface: str, *, calibrating: bool = False) -> "SurfaceWeightProfile":
        w = config.intake.weights
        cal = config.intake.calibration
        return cls(surface=surface, intent=w.intent, novelty=w.novelty, domain=w.domain, centrality=w.centrality,
                   action=w.action, matter=w.matter, dup=w.dup, privacy=w.privacy,
                   min_score_for_shallow=cal.min_score_for_shallow if calibrating else w.min_score_for_shallow,
                   min_score_for_deep=cal.min_score_for_deep if calibrating else w.min_score_for_deep)


def score_importance(features: IntakeScoreFeatures, profile: SurfaceWeightProfile) -> float:
    """``scoreImportance(features, surface)`` as the seed writes it (hard overrides first, then the clamped sum)."""
    f, w = features, profile
    if f.explicit_user_intent >= 0.9:
        return 1.0
    if f.privacy_risk >= 0.85 and f.explicit_user_intent < 0.9:
        return 0.0
    raw = (w.intent * f.explicit_user_intent + w.novelty * f.novelty_score + w.domain * f.domain_impact_score
           + w.centrality * f.entity_centrality_score + w.action * f.action_strength_score
           + w.matter * f.matter_link_confidence - w.dup * f.duplication_risk - w.privacy * f.privacy_risk)
    # Rounded so that equal inputs give equal stored bytes on every platform (determinism).
    return round(max(0.0, min(1.0, raw)), 6)


def score_decision(score: float, profile: SurfaceWeightProfile) -> ScoreDecision:
    if score >= profile.min_score_for_deep:
        return "deep"
    if score >= profile.min_score_for_shallow:
        return "shallow"
    return "skip"
