"""DOC72 §33 provenance, the pure part: the field enums, the ≤500-character verbatim excerpt and its hash, the
immutable snapshot, the still_current rule of §20B.8 and the tiered depth of §33.2. No SQL.

Docs/decisions.md K52–K53 record how the seed is read.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from kenning.config.loader import defaults_dict
from kenning.config.models import KnowledgeProvenanceConfig

# §33.3 "verbatim_excerpt?: string; // max 500 chars": a schema limit, so a constant; the configured
# knowledge.provenance.excerpt_max_chars may only lower it.
EXCERPT_MAX = 500

AuthorityType = Literal["binding", "persuasive", "informational", "personal"]
StillCurrent = Literal["yes", "uncertain", "overruled", "outdated", "not_checked"]
# §33.4: universal voices, then the legal-profile ones.
AuthorialVoice = Literal["self", "colleague", "external_party", "authority_source", "system", "first_party",
                         "second_party", "opposing_counsel", "adjudicator", "statutory_body"]
AssertionType = Literal["direct_quote", "synthesized_rule", "applied_argument", "factual_claim", "procedural_rule"]
AUTHORITY_TYPES: tuple[str, ...] = get_args(AuthorityType)
STILL_CURRENT_VALUES: tuple[str, ...] = get_args(StillCurrent)
AUTHORIAL_VOICES: tuple[str, ...] = get_args(AuthorialVoice)
ASSERTION_TYPES: tuple[str, ...] = get_args(AssertionType)
# Nothing has checked an entry yet when it is written.
STILL_CURRENT_DEFAULT: StillCurrent = "not_checked"


@functools.cache
def packaged_defaults() -> KnowledgeProvenanceConfig:
    return KnowledgeProvenanceConfig.model_validate(defaults_dict()["knowledge"]["provenance"])


def excerpt_hash(text: str) -> str:
    """§33.3A ``excerpt_hash``: sha256 hex of the excerpt's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _joins_previous(ch: str) -> bool:
    """A character that belongs to the grapheme before it: combining marks, ZWJ, variation selectors, skin tones."""
    cp = ord(ch)
    return (unicodedata.combining(ch) != 0 or unicodedata.category(ch) in ("Mn", "Me") or cp == 0x200D
            or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or 0x1F3FB <= cp <= 0x1F3FF
            or 0xDC00 <= cp <= 0xDFFF)


def clip_excerpt(text: str, max_chars: int = EXCERPT_MAX) -> str:
    """The first ≤ ``max_chars`` code points of ``text``, unchanged otherwise (K53).

    A verbatim prefix (no ellipsis, no trimming) so it still matches the source. The cut backs off rather than
    end inside a character sequence: never between the halves of a surrogate pair, nor before a combining mark,
    a zero-width joiner or what it joins, a variation selector or a skin-tone modifier.
    """
    if len(text) <= max_chars:
        return text
    cut = max_chars
    while cut > 0 and (_joins_previous(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    return text[:cut] if cut > 0 else text[:max_chars]


def snapshot(excerpt: str, capture_timestamp: str, source_metadata: Mapping[str, str] | None = None) -> dict:
    """§33.3A ProvenanceSnapshot: the evidence digest that keeps a node citable when its source disappears."""
    meta = {k: v for k, v in (source_metadata or {}).items() if k in ("filename", "email_subject", "url") and v}
    return {"excerpt_hash": excerpt_hash(excerpt), "capture_timestamp": capture_timestamp, "source_metadata": meta}


def still_current_on_contradiction(current: StillCurrent, distinct_contradicting_sources: int) -> StillCurrent:
    """§20B.8: a contradicted authority becomes "uncertain" (NOT directly "overruled"); a second independent
    signal moves it to "overruled". Overruled and outdated entries stay as they are."""
    if current in ("overruled", "outdated") or distinct_contradicting_sources <= 0:
        return current
    return "overruled" if distinct_contradicting_sources >= 2 else "uncertain"


def _ordered(entries: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(entries, key=lambda e: (e["created_at"], e["id"]))


def _summary(earlier: Sequence[Mapping[str, Any]]) -> dict | None:
    if not earlier:
        return None
    types = Counter(e.get("entry_type") for e in earlier)
    contributions = [e["confidence_contribution"] for e in earlier if e.get("confidence_contribution") is not None]
    return {"count": len(earlier),
            "date_range": {"from": earlier[0]["created_at"], "to": earlier[-1]["created_at"]},
            "entry_types": dict(sorted(types.items(), key=lambda kv: str(kv[0]))),
            "corrections": sum(1 for e in earlier if e.get("correction_reason")),
            "supersessions": sum(1 for e in earlier if e.get("supersedes_entry_id")),
            "confidence_contribution": sum(contributions) if contributions else None}


def provenance_view(entries: Sequence[Mapping[str, Any]], tier: str,
                    cfg: KnowledgeProvenanceConfig | None = None) -> dict:
    """§33.2 depth by tier, entries oldest first (created_at, then id).

    A (full): every entry. B (compact): the latest 3 and a summary of the earlier ones. C (minimal): the single
    source reference the node came from, its first entry (K52). ``total`` always counts every entry.
    """
    cfg = cfg or packaged_defaults()
    if tier not in cfg.tier_depth:
        raise ValueError(f"unknown sparsity tier {tier!r}; known: {', '.join(cfg.tier_depth)}")
    depth = cfg.tier_depth[tier]
    ordered = _ordered(entries)
    view: dict[str, Any] = {"tier": tier, "depth": depth, "total": len(ordered)}
    if depth == "full":
        view.update(entries=list(ordered), earlier=None)
    elif depth == "compact":
        k = cfg.compact_depth
        view.update(entries=ordered[-k:], earlier=_summary(ordered[:-k]))
    else:
        first = ordered[:1]
        view.update(entries=first, earlier=None, source_ref=first[0].get("source_ref") if first else None)
    return view
