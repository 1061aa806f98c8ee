"""Phase 5b — BeliefAtomDeduper (seed 000 §4.6): one atom per ``(canonical_hash, polarity, belief_type)`` within
an extraction; the most confident one is kept and the spans of all duplicates are merged into it."""

from __future__ import annotations

from kenning.selfbelief.types import CanonicalAtom, DedupResult


class BeliefAtomDeduper:
    def dedup(self, atoms: list[CanonicalAtom], polarity_of=None) -> DedupResult:
        """``polarity_of(atom)`` gives the polarity used in the key (default: the atom's own)."""
        kept: dict[tuple[str, str, str], CanonicalAtom] = {}
        removed = 0
        for a in atoms:
            pol = polarity_of(a) if polarity_of else a.polarity
            key = (a.canonical_hash, pol, a.belief_type)
            have = kept.get(key)
            if have is None:
                kept[key] = a
                continue
            removed += 1
            spans = sorted(set(have.spans) | set(a.spans))
            if a.confidence > have.confidence:
                a.spans = spans
                kept[key] = a
            else:
                have.spans = spans
        return DedupResult(list(kept.values()), removed)
