"""Seed 001 invariants 1, 2, 10–16 (digest §A) on the synthetic generator's corpus (kenning.bench.synth, n=12,
seed 7), located through its manifest: astral emoji and combining marks before an entity, entities inside code
fences, overlapping candidates, relative times in messages with imputed timestamps, and the lexicon traps.
Stage 3 is run separately so that invariant 16 can compare the entities before and after it."""

from __future__ import annotations

import orjson
import pytest

from exportkit import ingest, query
from kenning.detect.candidates import Candidate
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize

synth = pytest.importorskip("kenning.bench.synth")
IDS = IdFactory()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth-inv")
    synth.write_export(d / "export.json", 12, 7)
    manifest = synth.build_manifest(12, 7)
    db = d / "k.db"
    results = {r.stage: r for r in ingest(db, d / "export.json", stages="0-2B")}
    before3 = {r["entity_id"]: r for r in query(db, "SELECT entity_id, entity_type, entity_key, aliases_json, "
                                                    "canonical_name, raw_stats_json FROM entities")}
    results.update({r.stage: r for r in ingest(db, d / "export.json", stages="3")})
    msgs = {r["message_id"]: r for r in query(db, "SELECT * FROM messages")}
    by_export = {r["export_message_id"]: r["message_id"] for r in msgs.values()}
    return db, manifest, results, before3, msgs, by_export


def _case(corpus, name: str) -> list[str]:
    _, manifest, _, _, _, by_export = corpus
    return [by_export[c["message_id"]] for c in manifest["cases"][name]]


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_invariant1_spans_exact_even_after_astral_emoji_and_combining_marks(corpus):
    db, _, _, _, msgs, _ = corpus
    n = 0
    for table in ("entity_mention_candidates", "entity_mentions", "time_mentions"):
        for r in query(db, f"SELECT message_id, char_start, char_end, surface_text FROM {table} "
                           "WHERE char_start IS NOT NULL"):
            text = msgs[r["message_id"]]["text_raw"]
            assert 0 <= r["char_start"] < r["char_end"] <= len(text)
            assert text[r["char_start"]:r["char_end"]] == r["surface_text"], (table, r)
            n += 1
    assert n > 200
    [mid] = _case(corpus, "emoji_and_combining_before_entity")
    text = msgs[mid]["text_raw"]
    after = [r for r in query(db, "SELECT char_start, char_end, surface_text FROM entity_mentions WHERE message_id=?",
                              (mid,))
             if any(ord(ch) > 0xFFFF for ch in text[:r["char_start"]])
             and any(0x300 <= ord(ch) <= 0x36F for ch in text[:r["char_start"]])]
    assert after, "an entity follows the astral emoji and the combining mark"
    for r in after:  # code points, not UTF-16 units: the prefix is shorter in code points
        prefix = text[:r["char_start"]]
        assert len(prefix.encode("utf-16-le")) // 2 > len(prefix)
        assert text[r["char_start"]:r["char_end"]] == r["surface_text"]


def test_invariant2_regex_candidates_have_spans_and_null_offsets_are_ineligible_and_logged(corpus):
    db, _, results, _, _, _ = corpus
    assert query(db, "SELECT COUNT(*) n FROM entity_mention_candidates WHERE char_start IS NULL "
                     "AND detector NOT LIKE 'NER:%'")[0]["n"] == 0
    spanless = query(db, "SELECT * FROM entity_mention_candidates WHERE char_start IS NULL OR char_end IS NULL")
    assert all(r["is_eligible"] == 0 and r["char_start"] is None and r["char_end"] is None for r in spanless)
    warned = query(db, "SELECT COUNT(*) n FROM run_events WHERE run_id=? AND code='OFFSET_UNRELIABLE'",
                   (results["2A"].run_id,))[0]["n"]
    assert warned >= len(spanless)


def test_invariant10_structure_ranges_inside_text_and_unclosed_fence_to_the_end(corpus):
    db, _, _, _, msgs, _ = corpus
    n = 0
    for r in msgs.values():
        if r["text_raw"] is None:
            continue
        for col in ("code_fence_ranges_json", "blockquote_ranges_json"):
            for rng in orjson.loads(r[col] or "[]"):
                assert 0 <= rng["char_start"] < rng["char_end"] <= len(r["text_raw"])
                n += 1
    assert n >= 5
    [mid] = _case(corpus, "unclosed_fence")
    assert orjson.loads(msgs[mid]["code_fence_ranges_json"])[-1]["char_end"] == len(msgs[mid]["text_raw"])
    quoted = _case(corpus, "indented_blockquote_with_person")
    assert all(orjson.loads(msgs[m]["blockquote_ranges_json"] or "[]") for m in quoted)


def _cand(r: dict) -> Candidate:
    c = Candidate(r["message_id"], r["detector"], r["detector_version"], r["detector_order"], r["entity_type_hint"],
                  r["char_start"], r["char_end"], r["surface_text"], r["confidence"])
    c.candidate_id = r["candidate_id"]
    return c


def test_invariant11_winners_disjoint_losers_overlap_a_higher_ranked_winner(corpus):
    db, _, _, _, _, _ = corpus
    ments = query(db, "SELECT message_id, char_start, char_end FROM entity_mentions ORDER BY message_id, char_start")
    for a, b in zip(ments, ments[1:]):
        if a["message_id"] == b["message_id"]:
            assert a["char_end"] <= b["char_start"]
    cands = {r["candidate_id"]: r for r in query(db, "SELECT * FROM entity_mention_candidates")}
    emitted = {r["candidate_id"] for r in query(db, "SELECT candidate_id FROM entity_mentions")}
    losers = [r for r in cands.values() if r["suppression_reason"] == "OVERLAP_HIGHER_SCORE"]
    assert len(losers) >= 5
    kinds = set()
    for lo in losers:
        win = cands[lo["suppressed_by_candidate_id"]]
        assert win["candidate_id"] in emitted and win["message_id"] == lo["message_id"]
        assert _overlaps((lo["char_start"], lo["char_end"]), (win["char_start"], win["char_end"]))
        assert _cand(win).sort_key() < _cand(lo).sort_key()
        kinds.add((win["detector"].split(":")[0], lo["detector"].split(":")[0]))
    # the corpus's overlaps: a UUID inside a path, a lexicon term over a NER name
    assert ("UUID", "FILEPATH") in kinds and ("LEXICON", "NER") in kinds
    for r in cands.values():
        if r["is_eligible"] and r["suppression_reason"] is None:
            assert r["candidate_id"] in emitted


def test_invariant12_nothing_eligible_inside_fences(corpus):
    db, _, _, _, msgs, _ = corpus
    inside = 0
    for r in query(db, "SELECT * FROM entity_mention_candidates WHERE char_start IS NOT NULL"):
        fences = orjson.loads(msgs[r["message_id"]]["code_fence_ranges_json"] or "[]")
        if any(_overlaps((f["char_start"], f["char_end"]), (r["char_start"], r["char_end"])) for f in fences):
            inside += 1
            assert r["is_eligible"] == 0 and r["suppression_reason"] == "INTERSECTS_CODE_FENCE", r
    assert inside >= 3
    for r in query(db, "SELECT message_id, char_start, char_end FROM time_mentions"):
        for f in orjson.loads(msgs[r["message_id"]]["code_fence_ranges_json"] or "[]"):
            assert not _overlaps((f["char_start"], f["char_end"]), (r["char_start"], r["char_end"]))
    # the closed ```python fence holds an e-mail, a URL and a date: candidates, never mentions or times
    [mid] = _case(corpus, "closed_python_fence_with_email_url_date")
    fences = orjson.loads(msgs[mid]["code_fence_ranges_json"])
    fenced = [r for r in query(db, "SELECT * FROM entity_mention_candidates WHERE message_id=?", (mid,))
              if any(_overlaps((f["char_start"], f["char_end"]), (r["char_start"], r["char_end"])) for f in fences)]
    assert {"EMAIL", "URL"} <= {r["detector"] for r in fenced}
    ments = query(db, "SELECT char_start, char_end FROM entity_mentions WHERE message_id=?", (mid,))
    assert not any(_overlaps((f["char_start"], f["char_end"]), (m["char_start"], m["char_end"]))
                   for f in fences for m in ments)


def test_invariant13_time_mentions(corpus):
    db, manifest, _, _, msgs, by_export = corpus
    tms = query(db, "SELECT * FROM time_mentions ORDER BY message_id, char_start")
    assert len(tms) > 20
    for a, b in zip(tms, tms[1:]):
        if a["message_id"] == b["message_id"]:
            assert a["char_end"] <= b["char_start"]
    for t in tms:
        q = msgs[t["message_id"]]["timestamp_quality"]
        raw = orjson.loads(t["raw_parse_json"])
        if t["resolved_type"] == "instant":
            assert t["valid_to_utc"] is None and t["valid_from_utc"]
        elif t["resolved_type"] == "interval":
            assert t["valid_to_utc"] > t["valid_from_utc"]
        else:
            assert t["valid_from_utc"] is None and t["valid_to_utc"] is None
        if raw["relative"] and q != "original":
            assert t["resolved_type"] == "unresolved"
        assert t["anchor_time_utc"] == msgs[t["message_id"]]["created_at_utc"]
        assert t["time_mention_id"] == IDS.make("time", t["message_id"], t["char_start"], t["surface_hash"])
    # the generator's relative expression in a message whose create_time is null: never resolved (§2A.7.2)
    imputed = [e for e in manifest["time_expressions"] if e.get("anchor") == "imputed"]
    assert imputed
    for e in imputed:
        mid = by_export[e["message_id"]]
        assert msgs[mid]["timestamp_quality"] != "original"
        got = [t for t in tms if t["message_id"] == mid and e["text"] in t["surface_text"]]
        assert got and all(t["resolved_type"] == "unresolved" for t in got)
        assert orjson.loads(got[0]["raw_parse_json"])["reason"] in ("ANCHOR_NOT_ORIGINAL", "ANCHOR_MISSING")
    [mid] = _case(corpus, "overlapping_time_expressions")
    assert any(orjson.loads(t["raw_parse_json"]).get("overlapped") for t in tms if t["message_id"] == mid)


def test_invariant14_entities(corpus):
    db, _, _, _, _, _ = corpus
    assert query(db, "SELECT COUNT(*) n FROM entity_mentions WHERE entity_id IS NULL")[0]["n"] == 0
    assert query(db, "SELECT COUNT(*) n FROM entity_mentions em LEFT JOIN entities e USING(entity_id) "
                     "WHERE e.entity_id IS NULL")[0]["n"] == 0
    assert query(db, "SELECT entity_type, entity_key, COUNT(*) n FROM entities WHERE status='active' "
                     "GROUP BY 1, 2 HAVING n > 1") == []
    selfs = query(db, "SELECT * FROM entities WHERE entity_key='__SELF__'")
    assert len(selfs) == 1 and selfs[0]["entity_id"] == IDS.make("entity", "PERSON", "__SELF__")
    rec = {r["entity_id"]: r for r in query(
        db, "SELECT em.entity_id, COUNT(*) n, COUNT(DISTINCT m.conversation_id) c, MIN(m.created_at_utc) f, "
            "MAX(m.created_at_utc) l, SUM(m.role='user') u FROM entity_mentions em JOIN messages m USING(message_id) "
            "GROUP BY 1")}
    for e in query(db, "SELECT * FROM entities"):
        assert e["entity_id"] == IDS.make("entity", e["entity_type"], e["entity_key"])
        r = rec.get(e["entity_id"], {"n": 0, "c": 0, "f": None, "l": None, "u": 0})
        assert (e["mention_count"], e["conversation_count"], e["first_seen_at_utc"], e["last_seen_at_utc"]) == \
            (r["n"], r["c"], r["f"], r["l"])
        assert orjson.loads(e["raw_stats_json"])["user_mentions"] == (r["u"] or 0)
        aliases = orjson.loads(e["aliases_json"])
        assert aliases == sorted(set(aliases)) and e["aliases_json"] == canonicalize(aliases)
        surfaces = {s["surface_text"] for s in query(db, "SELECT DISTINCT surface_text FROM entity_mentions "
                                                         "WHERE entity_id=?", (e["entity_id"],))}
        assert surfaces <= set(aliases)


def test_invariant15_lexicon_thresholds_and_the_generators_traps(corpus):
    db, manifest, _, _, _, _ = corpus
    [build] = query(db, "SELECT * FROM lexicon_builds")
    cands = {r["term_key"]: r for r in query(db, "SELECT * FROM lexicon_term_candidates")}
    selected = [r for r in cands.values() if r["is_selected"]]
    assert build["terms_selected"] == len(selected) <= 1000 and build["candidates_total"] == len(cands)
    deny = {"march"}
    for r in cands.values():
        assert (r["is_selected"] == 1) == (r["rejection_reason"] is None)
        # the one reason is the first failing rule, in the seed's order (§2B.5.1)
        fails = [reason for reason, bad in (
            ("DENYLIST", r["term_key"] in deny), ("BELOW_MIN_COUNT", r["user_weighted_count"] < 3),
            ("BELOW_MIN_CONV", r["conversation_count"] < 2), ("CODE_HEAVY", r["code_likeness_ratio"] > 0.5),
            ("LOW_DIVERSITY", r["context_diversity"] < 0.1)) if bad]
        if r["rejection_reason"] not in (None, "DENYLIST", "CAP_EXCEEDED"):
            assert fails and fails[0] == r["rejection_reason"], r
        if r["is_selected"]:
            assert not fails
            assert r["score"] == pytest.approx(r["user_weighted_count"] + 2 * r["conversation_count"]
                                               + 0.5 * r["context_diversity"] - r["code_likeness_ratio"], abs=1e-9)
    # the generator's planted terms (manifest "lexicon")
    for key in ("project phoenix", "blue garden", "acme corp"):
        assert cands[key]["is_selected"] == 1, key
    assert cands["quantum ledger"]["rejection_reason"] == "BELOW_MIN_COUNT"      # assistant only: 3 × 0.5
    assert cands["streammerger"]["is_selected"] == 0                             # mostly inside code
    assert cands["streammerger"]["code_likeness_ratio"] > 0.5
    for key in ("usa", "march", "nightjar"):   # stoplisted, a month, one conversation: never selected
        assert key not in cands or cands[key]["is_selected"] == 0
    expected = {e["term"] for e in manifest["lexicon"]["expected_rejected"]}
    assert {"Quantum Ledger", "StreamMerger", "USA", "March", "Nightjar"} <= expected
    terms = query(db, "SELECT * FROM lexicon_terms")
    assert {t["term_key"] for t in terms} == {r["term_key"] for r in selected}
    assert {t["term_key"]: t["entity_type_hint"] for t in terms}["acme corp"] == "ORG"


def test_invariant16_stage3_changes_only_names_with_history(corpus):
    db, _, results, before3, _, _ = corpus
    after = {r["entity_id"]: r for r in query(db, "SELECT entity_id, entity_type, entity_key, aliases_json, "
                                                  "canonical_name FROM entities")}
    assert set(after) == set(before3)
    for eid, e in after.items():
        b = before3[eid]
        assert (e["entity_type"], e["entity_key"], e["aliases_json"]) == \
            (b["entity_type"], b["entity_key"], b["aliases_json"])
    [run] = query(db, "SELECT * FROM entity_canonicalization_runs")
    hist = {h["entity_id"]: h for h in query(db, "SELECT * FROM entity_canonical_name_history")}
    assert run["names_changed"] == len(hist) == results["3"].counts["names_changed"]
    for eid, e in after.items():
        changed = e["canonical_name"] != before3[eid]["canonical_name"]
        assert changed == (eid in hist), eid
        if changed:
            h = hist[eid]
            assert (h["previous_name"], h["canonical_name"]) == (before3[eid]["canonical_name"], e["canonical_name"])
            assert h["history_id"] == IDS.make("canon_hist", eid, run["run_id"]) and 0 <= h["confidence"] <= 1
