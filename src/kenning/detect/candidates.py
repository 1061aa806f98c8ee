"""Entity mention candidates: eligibility, noise, and greedy non-overlapping winner selection (seed 001 §2A.5–2A.6).

The same functions serve stage 2A (structured detectors + NER) and stage 2B (re-resolving a message once
LEXICON candidates join it), so a message's winners are always one function of its candidate set.
"""

from __future__ import annotations

from typing import Any

from kenning.detect.detectors import precedence_class
from kenning.detect.noise import NoiseRules
from kenning.detect.spans import REASON_BY_KIND, Exclusions, Occupancy, surface_hash
from kenning.sources.jcs import canonicalize

CANDIDATE_COLUMNS = (
    "candidate_id", "message_id", "detector", "detector_version", "detector_order", "entity_type_hint",
    "char_start", "char_end", "surface_text", "surface_hash", "confidence", "is_eligible",
    "suppressed_by_candidate_id", "suppression_reason", "raw_candidate_json",
)
MENTION_COLUMNS = (
    "mention_id", "message_id", "entity_id", "candidate_id", "detector", "detector_version", "entity_type_hint",
    "char_start", "char_end", "surface_text", "surface_hash", "confidence", "raw_mention_json",
)


class Candidate:
    __slots__ = ("candidate_id", "message_id", "detector", "version", "order", "hint", "start", "end", "surface",
                 "shash", "confidence", "eligible", "suppressed_by", "reason", "raw", "klass")

    def __init__(self, message_id: str, detector: str, version: str, order: int, hint: str, start: int | None,
                 end: int | None, surface: str | None, confidence: float, raw: dict[str, Any] | None = None):
        self.message_id = message_id
        self.detector, self.version, self.order, self.hint = detector, version, order, hint
        self.start, self.end, self.surface = start, end, surface
        self.shash = surface_hash(surface)
        self.confidence = confidence
        self.eligible = True
        self.suppressed_by: str | None = None
        self.reason: str | None = None
        self.raw: dict[str, Any] = raw if raw is not None else {}
        self.klass = precedence_class(detector)
        self.candidate_id = ""

    def assign_id(self, ids) -> str:
        self.candidate_id = ids.make("candidate", self.message_id, self.detector, self.start, self.end, self.hint,
                                     self.shash)
        return self.candidate_id

    def sort_key(self) -> tuple:
        """E9: precedence class (structured > LEXICON > NER), then the seed's six keys (§2A.6.2)."""
        return (self.klass, -self.confidence, -(self.end - self.start), self.order, self.start, -self.end, self.shash)

    def suppress(self, reason: str, by: str | None = None) -> None:
        self.eligible = False
        self.reason = reason
        self.suppressed_by = by

    def row(self) -> tuple:
        return (self.candidate_id, self.message_id, self.detector, self.version, self.order, self.hint, self.start,
                self.end, self.surface, self.shash, self.confidence, 1 if self.eligible else 0, self.suppressed_by,
                self.reason, canonicalize(self.raw) if self.raw else "{}")

    def mention_row(self, ids, entity_id: str | None = None, extra: dict | None = None) -> tuple:
        raw = {"details": self.raw["details"]} if self.raw.get("details") else {}
        if extra:
            raw.update(extra)
        return (ids.make("mention", self.message_id, self.candidate_id), self.message_id, entity_id,
                self.candidate_id, self.detector, self.version, self.hint, self.start, self.end, self.surface,
                self.shash, self.confidence, canonicalize(raw) if raw else "{}")


def check_offsets(c: Candidate, text: str) -> bool:
    """§2A.5.2 offset verification; a mismatch nulls the span and records what the detector said."""
    if c.start is None or c.end is None:
        c.start = c.end = None
        c.suppress("NO_OFFSETS_UNRELIABLE")
        return False
    if not (0 <= c.start < c.end <= len(text)) or text[c.start:c.end] != c.surface:
        c.raw["offset_mismatch"] = {"claimed_start": c.start, "claimed_end": c.end, "claimed_surface": c.surface,
                                    "text_at_span": text[c.start:c.end] if 0 <= c.start < c.end <= len(text) else None}
        c.start = c.end = None
        c.suppress("NO_OFFSETS_UNRELIABLE")
        return False
    return True


def apply_eligibility(cands: list[Candidate], text: str, exclusions: Exclusions, noise: NoiseRules) -> None:
    """Offsets, exclusion ranges, then noise (E11: one reason per candidate, in that order)."""
    for c in cands:
        if c.reason is not None:
            continue
        if c.start is None:
            if not c.raw.get("spanless_emitted"):
                c.suppress("NO_OFFSETS_UNRELIABLE")
            continue
        if exclusions:
            kind = exclusions.hit(c.start, c.end)
            if kind is not None:
                c.raw["exclusion"] = kind
                c.suppress(REASON_BY_KIND[kind])
                continue
        rule = noise.check(c.detector, c.surface, text, c.start, c.end)
        if rule is not None:
            c.raw["noise_rule"] = rule
            c.suppress("CODE_LIKE_TOKEN")


def select_winners(cands: list[Candidate]) -> list[Candidate]:
    """Greedy non-overlapping selection over the eligible candidates; losers get OVERLAP_HIGHER_SCORE."""
    spanless = [c for c in cands if c.eligible and c.reason is None and c.start is None]
    eligible = [c for c in cands if c.eligible and c.reason is None and c.start is not None]
    eligible.sort(key=Candidate.sort_key)
    taken = Occupancy()
    winners = list(spanless)  # only with emit_spanless_ner: they take part in no overlap
    for c in eligible:
        owner = taken.find(c.start, c.end)
        if owner is not None:
            c.suppressed_by = owner.candidate_id  # type: ignore[attr-defined]
            c.reason = "OVERLAP_HIGHER_SCORE"
            continue
        taken.add(c.start, c.end, c)
        winners.append(c)
    winners.sort(key=lambda c: (c.start is None, c.start or 0, c.end or 0, c.shash))
    return winners
