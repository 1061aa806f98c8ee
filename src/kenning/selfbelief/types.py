"""The values passed between phases (seed 000 §2 names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BELIEF_TYPES = ("TRAIT", "PREFERENCE", "VALUE", "CAPABILITY_LIMIT", "FEELING_STATE", "META_BELIEF", "RELATIONAL",
                "BELIEF_ABOUT_SELF")
POLARITIES = ("affirm", "deny")
SCOPES = ("state", "ongoing", "habitual", "transitional", "past", "unknown")
MODALITIES = ("certain", "likely", "possible", "unsure")
Span = tuple[int, int]


@dataclass(frozen=True)
class SourceContext:
    """Phase 1: how much a source counts (§4.1). ``signals`` says which penalties applied."""

    mode: str
    source_weight: float
    context_id: str
    signals: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "source_weight": self.source_weight, "context_id": self.context_id}


@dataclass(frozen=True)
class ClaimCandidate:
    """Phase 2: one clause that may state a belief; ``span`` is [start, end) in the experience text."""

    text: str
    span: Span
    idx: int


@dataclass
class RawAtom:
    """Phase 3: one atomic belief as the atomizer wrote it. ``spans`` locate its evidence in the experience text;
    ``evidence`` is that text (what the epistemics rules read)."""

    atom_text: str
    belief_type: str
    polarity: str
    confidence: float
    source_idx: int
    spans: list[Span]
    evidence: str
    origin: str                    # rules | llm
    signals: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class InvalidAtom:
    atom: RawAtom
    reason: str                    # not_first_person | imperative | too_short | question | template_junk | generic | …


@dataclass
class ValidationResult:
    valid: list[RawAtom]
    invalid: list[InvalidAtom]


@dataclass
class CanonicalAtom:
    """Phase 5: an atom with its canonical text and hash (§4.5)."""

    original_text: str
    canonical_text: str
    canonical_hash: str
    belief_type: str
    polarity: str                  # the atomizer's; the epistemics rules decide the one stored (S9)
    confidence: float
    source_idx: int
    spans: list[Span]
    evidence: str
    origin: str
    signals: dict[str, Any] = field(default_factory=dict)


@dataclass
class DedupResult:
    deduped_atoms: list[CanonicalAtom]
    duplicates_removed: int


@dataclass(frozen=True)
class EpistemicFrame:
    temporal_scope: str
    modality: str
    degree: float
    conditional: str
    # Kenning (issue 22, S46): False when the statement says the atom, with its polarity, held before and holds no
    # longer ("I used to be a night owl"); "I'm no longer a night owl" is a denial that holds now (True), though
    # both have temporal_scope "past". Stored in the frame JSON only when False (absent = True).
    holds_now: bool = True

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"temporal_scope": self.temporal_scope, "modality": self.modality, "degree": self.degree,
                             "conditional": self.conditional}
        if not self.holds_now:
            d["holds_now"] = False
        return d


@dataclass
class EpistemicsResult:
    frame: EpistemicFrame
    confidence: float
    signals: dict[str, Any]
    needs_llm_fallback: bool
    detected_polarity: str
    source: str = "rules"          # rules | llm


@dataclass
class AnalyzedAtom:
    """Phases 5–6 together: what `kenning self analyze` prints for one atom."""

    atom: CanonicalAtom
    polarity: str
    confidence: float              # atom confidence after the modality cap
    epistemics: EpistemicsResult

    def as_dict(self) -> dict[str, Any]:
        return {"atom_text": self.atom.original_text, "canonical_text": self.atom.canonical_text,
                "canonical_hash": self.atom.canonical_hash, "belief_type": self.atom.belief_type,
                "polarity": self.polarity, "confidence": round(self.confidence, 4),
                "epistemic_frame": self.epistemics.frame.as_dict()}


@dataclass
class Analysis:
    """Phases 1–6 of one text (`kenning self analyze`)."""

    source_context: SourceContext
    candidates: list[ClaimCandidate]
    atoms: list[AnalyzedAtom]
    rejected: list[InvalidAtom]
    duplicates_removed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "source_context": self.source_context.as_dict(),
            "candidates": [{"text": c.text, "span": list(c.span)} for c in self.candidates],
            "atoms": [a.as_dict() for a in self.atoms],
            "rejected": [{"atom_text": r.atom.atom_text, "reason": r.reason} for r in self.rejected],
        }
