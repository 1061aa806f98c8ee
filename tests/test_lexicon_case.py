"""Case in the personal lexicon (seed 001 §2B.4.2, §2B.6.2, §2B.7.1; docs/decisions.md E21): term keys and entity
keys fold case (lowercase, whitespace collapsed), so "Project Phoenix" and "Project phoenix" are one term and one
entity; LexiconMatch matches only surfaces the user actually wrote (the seed verifies text_raw[s:e] == surface),
so lowercase "phx" or "project phoenix" in running text is not a lexicon mention."""

from __future__ import annotations

import orjson

from exportkit import conversation, ingest, query, write_export

T0 = 1_710_000_000.0


def test_term_and_entity_keys_fold_case_matching_does_not(tmp_path):
    export = write_export(tmp_path / "c.json", [
        conversation("c1", [
            ("user", "Project Phoenix is big. PHX too."),
            ("user", 'I said "Project phoenix" again; PHX ships.'),
            ("user", "PROJECT PHOENIX? no: phx and project phoenix, all lower case."),
        ], start=T0),
        conversation("c2", [
            ("user", "Project Phoenix and PHX both."),
            ("user", "PHX again with Project Phoenix, and more."),
        ], start=T0 + 86400 * 5),
    ])
    db = tmp_path / "k.db"
    ingest(db, export, stages="0-3")
    cands = {r["term_key"]: r for r in query(db, "SELECT * FROM lexicon_term_candidates")}
    pp = cands["project phoenix"]                       # one candidate for both spellings
    assert pp["is_selected"] == 1 and pp["canonical_surface"] == "Project Phoenix"
    assert orjson.loads(pp["aliases_json"]) == ["Project Phoenix", "Project phoenix"]
    assert pp["total_count"] == 4 and pp["conversation_count"] == 2
    assert orjson.loads(pp["evidence_json"])["generators"] == {"QUOTED": 1, "TITLE_CASE": 3}
    assert cands["phx"]["is_selected"] == 1 and orjson.loads(cands["phx"]["aliases_json"]) == ["PHX"]
    assert all(k == " ".join(k.lower().split()) for k in cands)   # every term key is folded
    lex = query(db, "SELECT surface_text, entity_id FROM entity_mentions WHERE detector LIKE 'LEXICON:%'")
    surfaces = sorted(r["surface_text"] for r in lex)
    assert surfaces == ["PHX"] * 4 + ["Project Phoenix"] * 3 + ["Project phoenix"]
    assert not {"phx", "project phoenix", "PROJECT PHOENIX"} & set(surfaces)   # exact surfaces only (§2B.6.2)
    ents = {(r["entity_type"], r["entity_key"]): r for r in query(db, "SELECT * FROM entities")}
    e = ents[("CUSTOM_TERM", "project phoenix")]
    assert e["canonical_name"] == "Project Phoenix" and e["mention_count"] == 4
    assert orjson.loads(e["aliases_json"]) == ["Project Phoenix", "Project phoenix"]
    assert {r["entity_id"] for r in lex if r["surface_text"].startswith("Project")} == {e["entity_id"]}
    assert ents[("CUSTOM_TERM", "phx")]["mention_count"] == 4


def test_sentence_initial_words_are_not_glued_to_a_name(tmp_path):
    """T48 (issue 22 §5): "Is Marseille worth it?", "Quick Python question" — the capital belongs to the sentence,
    not to the name, so neither becomes a personal term; a real two-word name at a sentence start stays one (and
    "Project Phoenix" mid-sentence and at a line start is untouched), and "is" inside a sentence is not stripped."""
    lines = [
        ("user", "Is Marseille worth visiting in May? Quick Python question: how do I sort a dict?"),
        ("user", "- Is Marseille safe at night?\nQuick Python tip please. Project Phoenix needs it."),
        ("user", "Should Blue Garden open on Sunday? I think Blue Garden Is Open Today is a good sign."),
    ]
    export = write_export(tmp_path / "c.json", [
        conversation("c1", lines, start=T0),
        conversation("c2", lines + [("user", "Is Marseille far? Project Phoenix again.")], start=T0 + 86400 * 3),
    ])
    db = tmp_path / "k.db"
    ingest(db, export, stages="0-3")
    keys = {r["term_key"] for r in query(db, "SELECT term_key FROM lexicon_term_candidates")}
    terms = {r["term_key"] for r in query(db, "SELECT term_key FROM lexicon_terms")}
    assert not {"is marseille", "quick python", "should blue garden"} & keys
    assert "project phoenix" in terms and "blue garden" in keys   # "Should Blue Garden …" → Blue Garden
    assert "blue garden is open today" in keys          # mid-sentence run: a capitalised "Is" is kept there
