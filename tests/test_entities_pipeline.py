"""Stages 2A–3 on a hand-built corpus: seed 001 invariants 1, 2, 10–16 (digest §A)."""

from __future__ import annotations

import orjson
import pytest

from entity_corpus import EMOJI_PREFIX, corpus
from exportkit import ingest, query, write_export
from kenning.detect.candidates import Candidate
from kenning.detect.detectors import detector_order, precedence_class
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize

IDS = IdFactory()


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("entities")
    export = write_export(d / "conversations.json", corpus())
    results = ingest(d / "kenning.db", export)
    return d / "kenning.db", export, {r.stage: r for r in results}


def texts(db) -> dict[str, str]:
    return {r["message_id"]: r["text_raw"] for r in query(db, "SELECT message_id, text_raw FROM messages")}


def test_all_stages_ran(vault):
    db, _, results = vault
    assert {"0", "1", "2A", "2B", "3"} <= set(results)   # stage 4 runs after them by default
    assert results["2A"].counts["mentions_emitted"] > 20
    assert results["2B"].counts["lexicon_terms_selected"] >= 4


def test_invariant1_spans_are_exact_substrings_even_after_emoji(vault):
    db, _, _ = vault
    t = texts(db)
    for table in ("entity_mention_candidates", "entity_mentions", "time_mentions"):
        for r in query(db, f"SELECT message_id, char_start, char_end, surface_text FROM {table} "
                           "WHERE char_start IS NOT NULL"):
            text = t[r["message_id"]]
            assert 0 <= r["char_start"] < r["char_end"] <= len(text)
            assert text[r["char_start"]:r["char_end"]] == r["surface_text"], (table, r)
    # the emoji/combining-mark prefix shifts code-point offsets by exactly its length
    row = query(db, "SELECT em.char_start, m.text_raw FROM entity_mentions em JOIN messages m USING(message_id) "
                    "WHERE em.surface_text='Project Phoenix' AND m.text_raw LIKE ? ORDER BY em.char_start LIMIT 1",
                (EMOJI_PREFIX + "%",))[0]
    assert row["char_start"] == len(EMOJI_PREFIX) == 11
    assert len(EMOJI_PREFIX.encode("utf-16-le")) // 2 != len(EMOJI_PREFIX)  # UTF-16 offsets would be wrong


def test_invariant2_regex_candidates_always_have_spans(vault):
    db, _, _ = vault
    bad = query(db, "SELECT * FROM entity_mention_candidates WHERE char_start IS NULL AND detector NOT LIKE 'NER:%'")
    assert bad == []
    spanless = query(db, "SELECT * FROM entity_mention_candidates WHERE char_start IS NULL")
    assert all(r["is_eligible"] == 0 for r in spanless)


def test_invariant10_structure_ranges_inside_text(vault):
    db, _, _ = vault
    for r in query(db, "SELECT text_raw, code_fence_ranges_json, blockquote_ranges_json FROM messages "
                       "WHERE text_raw IS NOT NULL"):
        for col in ("code_fence_ranges_json", "blockquote_ranges_json"):
            for rng in orjson.loads(r[col] or "[]"):
                assert 0 <= rng["char_start"] < rng["char_end"] <= len(r["text_raw"])
    unclosed = query(db, "SELECT text_raw, code_fence_ranges_json FROM messages WHERE text_raw LIKE 'Unclosed fence%'")[0]
    assert orjson.loads(unclosed["code_fence_ranges_json"])[-1]["char_end"] == len(unclosed["text_raw"])


def _cand(r: dict) -> Candidate:
    c = Candidate(r["message_id"], r["detector"], r["detector_version"], r["detector_order"], r["entity_type_hint"],
                  r["char_start"], r["char_end"], r["surface_text"], r["confidence"])
    c.candidate_id = r["candidate_id"]
    return c


def test_invariant11_winners_never_overlap_and_losers_rank_lower(vault):
    db, _, _ = vault
    ments = query(db, "SELECT message_id, char_start, char_end FROM entity_mentions WHERE char_start IS NOT NULL "
                      "ORDER BY message_id, char_start")
    for a, b in zip(ments, ments[1:]):
        if a["message_id"] == b["message_id"]:
            assert a["char_end"] <= b["char_start"]
    cands = {r["candidate_id"]: r for r in query(db, "SELECT * FROM entity_mention_candidates")}
    losers = [r for r in cands.values() if r["suppression_reason"] == "OVERLAP_HIGHER_SCORE"]
    assert losers, "the corpus has overlapping candidates (UUID inside a path, LEXICON over NER)"
    emitted = {r["candidate_id"] for r in query(db, "SELECT candidate_id FROM entity_mentions")}
    for lo in losers:
        win = cands[lo["suppressed_by_candidate_id"]]
        assert win["candidate_id"] in emitted
        assert win["message_id"] == lo["message_id"]
        assert lo["char_start"] < win["char_end"] and win["char_start"] < lo["char_end"]
        assert _cand(win).sort_key() < _cand(lo).sort_key()
    # every eligible non-loser is emitted
    for r in cands.values():
        if r["is_eligible"] and r["suppression_reason"] is None:
            assert r["candidate_id"] in emitted


def test_uuid_inside_path_and_lexicon_over_ner(vault):
    db, _, _ = vault
    path = query(db, "SELECT * FROM entity_mention_candidates WHERE detector='FILEPATH' AND surface_text LIKE '/srv/%'")[0]
    assert path["suppression_reason"] == "OVERLAP_HIGHER_SCORE"
    winner = query(db, "SELECT detector FROM entity_mention_candidates WHERE candidate_id=?",
                   (path["suppressed_by_candidate_id"],))[0]
    assert winner["detector"] == "UUID"
    # "ACME Corp" (NER ORG) loses to the lexicon term "ACME" inside it: structured > LEXICON > NER (E9)
    ner = query(db, "SELECT suppressed_by_candidate_id FROM entity_mention_candidates WHERE detector LIKE 'NER:%' "
                    "AND surface_text='ACME Corp' AND suppression_reason='OVERLAP_HIGHER_SCORE'")
    assert ner
    assert query(db, "SELECT detector FROM entity_mention_candidates WHERE candidate_id=?",
                 (ner[0]["suppressed_by_candidate_id"],))[0]["detector"].startswith("LEXICON:")
    assert precedence_class("EMAIL") < precedence_class("LEXICON:x") < precedence_class("NER:y")
    assert detector_order("BARE_DOMAIN") < detector_order("LEXICON:x") < detector_order("NER:y")


def test_invariant12_nothing_eligible_inside_fences(vault):
    db, _, _ = vault
    rows = query(db, "SELECT c.char_start, c.char_end, c.is_eligible, c.suppression_reason, m.code_fence_ranges_json "
                     "FROM entity_mention_candidates c JOIN messages m USING(message_id) WHERE c.char_start IS NOT NULL")
    inside = 0
    for r in rows:
        fences = orjson.loads(r["code_fence_ranges_json"] or "[]")
        if any(f["char_start"] < r["char_end"] and r["char_start"] < f["char_end"] for f in fences):
            inside += 1
            assert r["is_eligible"] == 0 and r["suppression_reason"] == "INTERSECTS_CODE_FENCE"
    assert inside >= 3  # the email, Berlin and the URL in the unclosed fence
    for r in query(db, "SELECT t.char_start, t.char_end, m.code_fence_ranges_json FROM time_mentions t "
                       "JOIN messages m USING(message_id)"):
        for f in orjson.loads(r["code_fence_ranges_json"] or "[]"):
            assert not (f["char_start"] < r["char_end"] and r["char_start"] < f["char_end"])
    assert not query(db, "SELECT * FROM entity_mentions WHERE surface_text='bob@code.example.com'")
    # blockquotes are detected by default (ignore_markdown_blockquotes=false)
    assert query(db, "SELECT * FROM entity_mentions WHERE surface_text='quoted@example.com'")


def test_blockquotes_excluded_when_configured(tmp_path):
    export = write_export(tmp_path / "c.json", corpus())
    ingest(tmp_path / "k.db", export, stages="0,1,2A",
           overrides={"pipeline": {"entity_detection": {"ignore_markdown_blockquotes": True}}})
    r = query(tmp_path / "k.db", "SELECT is_eligible, suppression_reason FROM entity_mention_candidates "
                                 "WHERE surface_text='quoted@example.com'")[0]
    assert r == {"is_eligible": 0, "suppression_reason": "INTERSECTS_BLOCKQUOTE"}


def test_invariant13_time_mentions(vault):
    db, _, _ = vault
    tms = query(db, "SELECT t.*, m.timestamp_quality FROM time_mentions t JOIN messages m USING(message_id) "
                    "ORDER BY message_id, char_start")
    for a, b in zip(tms, tms[1:]):
        if a["message_id"] == b["message_id"]:
            assert a["char_end"] <= b["char_start"]
    for t in tms:
        raw = orjson.loads(t["raw_parse_json"])
        if t["resolved_type"] == "instant":
            assert t["valid_to_utc"] is None and t["valid_from_utc"]
        if t["resolved_type"] == "interval":
            assert t["valid_to_utc"] > t["valid_from_utc"]
        if raw["relative"] and t["timestamp_quality"] != "original":
            assert t["resolved_type"] == "unresolved", t
        assert t["timezone_assumed"] == "UTC"
        assert t["time_mention_id"] == IDS.make("time", t["message_id"], t["char_start"], t["surface_hash"])
    imputed = {t["surface_text"]: t for t in tms if t["timestamp_quality"] != "original"}
    for s in ("Last week", "yesterday", "next month", "3 days ago", "last Tuesday"):
        assert imputed[s]["resolved_type"] == "unresolved"
        assert orjson.loads(imputed[s]["raw_parse_json"])["reason"] in ("ANCHOR_NOT_ORIGINAL", "ANCHOR_MISSING")
    assert imputed["2024-02-01"]["resolved_type"] == "interval"  # absolute dates resolve anyway
    # in an original-time message the same words resolve against the message's own time
    y = [t for t in tms if t["surface_text"] == "Yesterday" and t["timestamp_quality"] == "original"][0]
    assert y["resolved_type"] == "interval" and y["valid_to_utc"][:10] == y["anchor_time_utc"][:10]
    # "March 15, 2024" beats the bare year inside it; the overlapped loser is recorded
    m = [t for t in tms if t["surface_text"] == "March 15, 2024"][0]
    assert ["YEAR_BARE", m["char_start"] + 10, m["char_end"]] in orjson.loads(m["raw_parse_json"])["overlapped"]
    # no year inside the IPv6 address
    assert not [t for t in tms if t["surface_text"] == "2001"]


def test_invariant14_entities(vault):
    db, _, _ = vault
    assert query(db, "SELECT COUNT(*) AS n FROM entity_mentions WHERE entity_id IS NULL")[0]["n"] == 0
    assert query(db, "SELECT COUNT(*) AS n FROM entity_mentions em LEFT JOIN entities e USING(entity_id) "
                     "WHERE e.entity_id IS NULL")[0]["n"] == 0
    dup = query(db, "SELECT entity_type, entity_key, COUNT(*) n FROM entities WHERE status='active' "
                    "GROUP BY 1, 2 HAVING n > 1")
    assert dup == []
    selfs = query(db, "SELECT * FROM entities WHERE entity_key='__SELF__'")
    assert len(selfs) == 1 and selfs[0]["entity_id"] == IDS.make("entity", "PERSON", "__SELF__")
    assert selfs[0]["canonical_name"] == "SELF"
    recomputed = {r["entity_id"]: r for r in query(
        db, "SELECT em.entity_id, COUNT(*) AS n, COUNT(DISTINCT m.conversation_id) AS c, MIN(m.created_at_utc) AS f, "
            "MAX(m.created_at_utc) AS l FROM entity_mentions em JOIN messages m USING(message_id) GROUP BY 1")}
    for e in query(db, "SELECT * FROM entities"):
        assert e["entity_id"] == IDS.make("entity", e["entity_type"], e["entity_key"])
        r = recomputed.get(e["entity_id"], {"n": 0, "c": 0, "f": None, "l": None})
        assert (e["mention_count"], e["conversation_count"]) == (r["n"], r["c"])
        assert (e["first_seen_at_utc"], e["last_seen_at_utc"]) == (r["f"], r["l"])
        aliases = orjson.loads(e["aliases_json"])
        assert aliases == sorted(set(aliases)) and e["aliases_json"] == canonicalize(aliases)
    # keys are type-specific (§2B.7.1)
    keys = {(e["entity_type"], e["canonical_name"]): e["entity_key"] for e in query(db, "SELECT * FROM entities")}
    assert keys[("IP_ADDRESS", "192.168.001.010")] == "192.168.1.10"
    assert keys[("PHONE", "+49 30 1234567")] == "+49301234567"
    assert keys[("DOI", "doi:10.1000/xyz")] == "10.1000/xyz"
    assert keys[("URL", "https://example.com/phoenix?x=0#top")] == "https://example.com/phoenix"
    uuid = [e for e in query(db, "SELECT * FROM entities WHERE entity_type='UUID'")]
    assert len(uuid) == 1 and uuid[0]["entity_key"] == "123e4567-e89b-12d3-a456-426614174000"
    assert uuid[0]["mention_count"] == 2  # upper- and lower-case spellings are one entity


def test_salience_formula(vault):
    db, _, _ = vault
    ref = query(db, "SELECT MAX(created_at_utc) AS t FROM messages")[0]["t"]
    from kenning.detect.entities import recency_factor

    for e in query(db, "SELECT * FROM entities WHERE mention_count > 0"):
        stats = orjson.loads(e["raw_stats_json"])
        ratio = stats["user_mentions"] / e["mention_count"]
        rec = recency_factor(e["last_seen_at_utc"], ref, 90)
        expected = e["mention_count"] * 0.3 + e["conversation_count"] * 0.4 + ratio * 0.2 + rec * 0.1
        assert e["salience_score"] == pytest.approx(expected, abs=1e-6)
        assert stats["recency_reference_utc"] == ref


def test_invariant15_lexicon_thresholds(vault):
    db, _, _ = vault
    build = query(db, "SELECT * FROM lexicon_builds")[0]
    cands = {r["term_key"]: r for r in query(db, "SELECT * FROM lexicon_term_candidates")}
    reasons = {k: r["rejection_reason"] for k, r in cands.items()}
    assert reasons["zorb"] == "BELOW_MIN_COUNT"        # assistant-only: 5 × 0.5 < 3
    assert reasons["quux"] == "BELOW_MIN_CONV"         # one conversation
    assert reasons["frobtool"] == "CODE_HEAVY"         # mostly inside fences
    assert reasons["march"] == "DENYLIST"              # a month
    assert reasons["glim"] == "LOW_DIVERSITY"          # one repeated context
    for k in ("phx", "project phoenix", "blue garden", "acme corp"):
        assert cands[k]["is_selected"] == 1, k
    selected = [r for r in cands.values() if r["is_selected"]]
    assert build["terms_selected"] == len(selected) <= 1000
    assert build["candidates_total"] == len(cands)
    for r in cands.values():
        assert (r["is_selected"] == 1) == (r["rejection_reason"] is None)
        assert r["candidate_id"] == IDS.make("lex_cand", build["build_id"], r["generator"], r["term_key"])
    for r in selected:
        assert r["user_weighted_count"] >= 3 and r["conversation_count"] >= 2
        assert r["code_likeness_ratio"] <= 0.5 and r["context_diversity"] >= 0.1
        expected = r["user_weighted_count"] + 2 * r["conversation_count"] + 0.5 * r["context_diversity"] \
            - r["code_likeness_ratio"]
        assert r["score"] == pytest.approx(expected, abs=1e-9)
    terms = query(db, "SELECT * FROM lexicon_terms")
    assert len(terms) == len(selected)
    by_key = {t["term_key"]: t for t in terms}
    assert by_key["acme corp"]["entity_type_hint"] == "ORG"        # "… Corp" → ORG (§2B.5.4)
    assert by_key["phx"]["entity_type_hint"] == "CUSTOM_TERM"
    for t in terms:
        assert t["term_id"] == IDS.make("lex_term", build["build_id"], t["term_key"])
    # LexiconMatch mentions point at their term
    lex = query(db, "SELECT raw_mention_json FROM entity_mentions WHERE detector LIKE 'LEXICON:%'")
    assert lex and all(orjson.loads(r["raw_mention_json"])["details"]["term_id"] in
                       {t["term_id"] for t in terms} for r in lex)


def test_invariant16_canonicalization(vault):
    db, _, results = vault
    runs = query(db, "SELECT * FROM entity_canonicalization_runs")
    assert len(runs) == 1
    hist = query(db, "SELECT * FROM entity_canonical_name_history")
    assert runs[0]["names_changed"] == len(hist) == results["3"].counts["names_changed"]
    mia = [h for h in hist if h["canonical_name"] == "Mia"]
    assert len(mia) == 1 and mia[0]["previous_name"] == "MIA"  # 2B: most frequent; 3: the user's spelling wins
    raw = orjson.loads(mia[0]["raw_selection_json"])
    assert [s["surface"] for s in raw["surfaces"]] == ["Mia", "MIA"]
    assert 0 <= mia[0]["confidence"] <= 1
    assert mia[0]["history_id"] == IDS.make("canon_hist", mia[0]["entity_id"], runs[0]["run_id"])
    changed = {h["entity_id"] for h in hist}
    for e in query(db, "SELECT entity_id, canonical_name, raw_stats_json FROM entities"):
        name_2b = (orjson.loads(e["raw_stats_json"] or "{}")).get("name_2b")
        if e["entity_id"] not in changed and name_2b is not None:
            assert e["canonical_name"] == name_2b  # no history row ⇔ name unchanged
