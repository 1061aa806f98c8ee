"""The bundle math moved to :mod:`kenning.knowledge.bundle_math` (L1): the edge gate every graph reader uses
re-scores bundles with it, and ``knowledge/`` sits below ``upkeep/``. The names stay importable from here."""

from kenning.knowledge.bundle_math import (
    BLOCKED_CLASSIFICATION,
    VISIBILITY,
    Bundle,
    bundle_from_mentions,
    bundle_id,
    can_read_promoted_edge,
    evidence_score,
    hub_penalty,
    is_generic,
    mention_id,
    most_restrictive,
    node_visibility,
    normalize_pair,
    salience,
    score,
    select_promotions,
    should_promote,
    stable_sha256,
    visible_promoted_edges,
)

__all__ = [
    "BLOCKED_CLASSIFICATION", "VISIBILITY", "Bundle", "bundle_from_mentions", "bundle_id", "can_read_promoted_edge",
    "evidence_score", "hub_penalty", "is_generic", "mention_id", "most_restrictive", "node_visibility",
    "normalize_pair", "salience", "score", "select_promotions", "should_promote", "stable_sha256",
    "visible_promoted_edges",
]
