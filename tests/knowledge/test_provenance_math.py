"""DOC72 §33 provenance, pure part: excerpt clipping and hashing, the enums, still_current, depth by tier."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.config import load_config
from kenning.knowledge.provenance import (ASSERTION_TYPES, AUTHORIAL_VOICES, AUTHORITY_TYPES, EXCERPT_MAX,
                                          STILL_CURRENT_DEFAULT, STILL_CURRENT_VALUES, clip_excerpt, excerpt_hash,
                                          provenance_view, snapshot, still_current_on_contradiction)

CFG = load_config().knowledge.provenance


def test_enums_and_default():
    assert AUTHORITY_TYPES == ("binding", "persuasive", "informational", "personal")
    assert STILL_CURRENT_VALUES == ("yes", "uncertain", "overruled", "outdated", "not_checked")
    assert STILL_CURRENT_DEFAULT == "not_checked"
    assert AUTHORIAL_VOICES[:5] == ("self", "colleague", "external_party", "authority_source", "system")
    assert len(AUTHORIAL_VOICES) == 10
    assert ASSERTION_TYPES == ("direct_quote", "synthesized_rule", "applied_argument", "factual_claim",
                               "procedural_rule")


def test_excerpt_hash_is_sha256_of_utf8():
    assert excerpt_hash("café") == hashlib.sha256("café".encode()).hexdigest()
    assert len(excerpt_hash("")) == 64


def test_clip_keeps_a_verbatim_prefix_of_at_most_500():
    assert EXCERPT_MAX == 500 == CFG.excerpt_max_chars
    assert clip_excerpt("short  text ") == "short  text "
    long = "a" * 499 + "bcd"
    assert clip_excerpt(long) == "a" * 499 + "b"
    assert clip_excerpt("x" * 500) == "x" * 500


def test_clip_never_splits_a_character_sequence():
    assert clip_excerpt("a" * 499 + "e\u0301xyz") == "a" * 499  # e + combining acute stays whole
    assert clip_excerpt("a" * 499 + "👍🏽") == "a" * 499  # the skin-tone modifier joins the thumb
    assert clip_excerpt("a" * 498 + "👍🏽" + "z") == "a" * 498 + "👍🏽"
    family = "👩\u200d👧"
    assert clip_excerpt("a" * 498 + family) == "a" * 498  # 👩 ZWJ | 👧: not cut after the joiner
    assert clip_excerpt("a" * 499 + "\ud83d\ude00") == "a" * 499  # a surrogate pair held as two code points
    assert clip_excerpt("a" * 499 + "😀") == "a" * 499 + "😀"  # one code point: fits


@given(st.text(max_size=700))
def test_clip_is_a_prefix_within_the_limit(text):
    c = clip_excerpt(text)
    assert text.startswith(c) and len(c) <= EXCERPT_MAX
    assert c == text or len(c) > 0 or text[0] in "\u200d"  # backs off, never to nothing for normal text


def test_snapshot():
    s = snapshot("I moved to Lisbon.", "2026-04-01T10:00:00.000Z", {"filename": "chat.json", "url": None})
    assert s == {"excerpt_hash": excerpt_hash("I moved to Lisbon."), "capture_timestamp": "2026-04-01T10:00:00.000Z",
                 "source_metadata": {"filename": "chat.json"}}


def test_contradicted_authority_is_uncertain_before_overruled():
    assert still_current_on_contradiction("yes", 1) == "uncertain"
    assert still_current_on_contradiction("not_checked", 1) == "uncertain"
    assert still_current_on_contradiction("uncertain", 2) == "overruled"
    assert still_current_on_contradiction("yes", 0) == "yes"
    assert still_current_on_contradiction("outdated", 3) == "outdated"


def _entries(n: int) -> list[dict]:
    # created out of order, two with the same time (id breaks the tie)
    out = [{"id": f"p{i:02d}", "node_id": "n1", "entry_type": "learned_from_chat" if i % 2 else "confirmed_by_user",
            "source_ref": f"msg:{i}", "created_at": f"2026-03-{10 + i // 2:02d}T00:00:00.000Z",
            "confidence_contribution": 0.5, "correction_reason": "wrong date" if i == 1 else None,
            "supersedes_entry_id": "p00" if i == 1 else None} for i in range(n)]
    return list(reversed(out))


def test_tier_a_shows_the_full_chain_in_order():
    v = provenance_view(_entries(6), "A", CFG)
    assert v["depth"] == "full" and v["total"] == 6 and v["earlier"] is None
    assert [e["id"] for e in v["entries"]] == ["p00", "p01", "p02", "p03", "p04", "p05"]


def test_tier_b_shows_the_latest_three_and_summarizes_the_rest():
    v = provenance_view(_entries(6), "B", CFG)
    assert v["depth"] == "compact" and v["total"] == 6
    assert [e["id"] for e in v["entries"]] == ["p03", "p04", "p05"]
    assert v["earlier"] == {"count": 3, "date_range": {"from": "2026-03-10T00:00:00.000Z",
                                                      "to": "2026-03-11T00:00:00.000Z"},
                            "entry_types": {"confirmed_by_user": 2, "learned_from_chat": 1}, "corrections": 1,
                            "supersessions": 1, "confidence_contribution": 1.5}
    small = provenance_view(_entries(2), "B", CFG)
    assert len(small["entries"]) == 2 and small["earlier"] is None


def test_tier_c_keeps_a_single_source_ref():
    v = provenance_view(_entries(4), "C", CFG)
    assert v["depth"] == "minimal" and v["total"] == 4 and v["source_ref"] == "msg:0"
    assert [e["id"] for e in v["entries"]] == ["p00"]
    empty = provenance_view([], "C", CFG)
    assert empty["entries"] == [] and empty["source_ref"] is None
    with pytest.raises(ValueError, match="unknown sparsity tier"):
        provenance_view([], "D", CFG)
