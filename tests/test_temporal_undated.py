"""Issue 22 §5 with text: an undated state holds when it was said (T40), repetitions are one state (T42–T43), a
later dated or said change ends it (T44), and `kenning history` shows the succession, not every mention (T46)."""

from __future__ import annotations

import json

import pytest

import temporal_corpus as tc
from conftest import run_cli
from exportkit import ingest, query, write_export

HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    d = tmp_path_factory.mktemp("undated")
    path = d / "k.db"
    ingest(path, write_export(d / "e.json", tc.undated()), as_of="2024-12-31T00:00:00Z", overrides=HASH)
    return path


def rows(db, predicate: str, obj: str, polarity: str = "positive") -> list[dict]:
    out = query(db, "SELECT t.*, a.polarity, e.canonical_name AS object, m.created_at_utc AS message_time "
                    "FROM assertion_temporalized t JOIN assertions a USING(assertion_id) JOIN predicates p "
                    "USING(predicate_id) JOIN messages m USING(message_id) LEFT JOIN entities e ON e.entity_id = "
                    "a.object_entity_id WHERE p.canonical_label_norm = ? AND a.polarity = ? "
                    "ORDER BY m.created_at_utc", (predicate, polarity))
    out = [r for r in out if (r["object"] or json.loads(
        query(db, "SELECT object_value FROM assertions WHERE assertion_id=?", (r["assertion_id"],))[0]["object_value"]
        or "null") or "").lower().startswith(obj.lower())]
    for r in out:
        r["raw"] = json.loads(r["raw_temporalize_json"])
    return out


def test_a_dated_change_ends_every_undated_mention_of_the_old_job(db):
    acme, [globex] = rows(db, "works_at", "Acme"), rows(db, "works_at", "Globex")
    assert len(acme) == 3 and globex["status"] == "active" and globex["valid_from_utc"] == "2024-01-01T00:00:00.000Z"
    for r in acme:
        assert r["raw"]["time_basis"] == "observed" and r["valid_from_utc"] == r["message_time"]
        assert (r["status"], r["temporal_superseded_by_assertion_id"], r["valid_to_utc"]) == (
            "superseded", globex["assertion_id"], "2024-01-01T00:00:00.000Z")
        assert r["superseded_at_utc"] == globex["message_time"]     # Kenning learnt it then (T3)


def test_a_later_said_home_ends_the_earlier_one_where_it_was_said(db):
    berlin, paris = rows(db, "lives_in", "Berlin"), rows(db, "lives_in", "Paris")
    assert len(berlin) == 2 and len(paris) == 2
    assert all(r["status"] == "superseded" and r["valid_to_utc"] == paris[0]["valid_from_utc"] for r in berlin)
    assert all(r["status"] == "active" and r["valid_to_utc"] is None for r in paris)


def test_a_negation_ends_the_liking_said_twice(db):
    likes, [neg] = rows(db, "likes", "jazz"), rows(db, "likes", "jazz", "negative")
    assert len(likes) == 2
    assert all((r["status"], r["negated_by_assertion_id"], r["valid_to_utc"]) == ("negated", neg["assertion_id"],
                                                                                 neg["valid_from_utc"]) for r in likes)
    assert not query(db, "SELECT 1 FROM conflict_groups WHERE conflict_type='NEGATION_AMBIGUOUS'")


def test_history_shows_the_succession_and_all_shows_every_mention(db):
    h = json.loads(run_cli("history", "works_at", "--json", db=db).stdout)
    succ = [(s["object"], s["mentions"], s["status"]) for s in h["succession"] if s["subject"] == "SELF"]
    assert succ == [("Acme Corp", 3, "superseded"), ("Globex", 1, "active")]
    assert len([s for s in h["states"] if s["subject"] == "SELF"]) == 4          # every mention is still there
    acme = h["succession"][0]
    assert acme["valid_to_utc"] == "2024-01-01T00:00:00.000Z" and acme["why"].startswith("superseded by")
    assert acme["first_said"] < acme["last_said"] and len(acme["assertion_ids"]) == 3
    text = run_cli("history", "lives_in", db=db).stdout
    assert "Berlin" in text and "Paris" in text and "2×" in text and "--all lists every mention" in text
    assert text.count("I live in Berlin") == 1                                   # one row for both mentions
    full = run_cli("history", "lives_in", "--all", db=db).stdout
    assert full.count("I live in Berlin") == 2 and "--all lists" not in full
    me = json.loads(run_cli("history", "me", "--json", db=db).stdout)
    jazz = [s for s in me["succession"] if s["predicate"] == "likes"]
    assert [(s["polarity"], s["mentions"], s["status"]) for s in jazz] == [("positive", 2, "negated"),
                                                                           ("negative", 1, "ineligible")]


def _item(aid, obj, said, status="active", pred="lives_in", polarity="positive", **kw):
    return {"assertion_id": aid, "subject": "SELF", "predicate": pred, "object": obj, "polarity": polarity,
            "statement": f"SELF {pred} {obj}", "status": status, "why": "", "valid_from_utc": said,
            "valid_to_utc": None, "valid_until_hint_utc": None, "said_at": said, "quote": obj,
            "superseded_by": kw.get("superseded_by"), "overridden": kw.get("overridden", False)}


def test_succession_folds_runs_and_keeps_unreasoned_claims_apart():
    """T46 on its own: a retracted or ineligible claim between two mentions does not split the state; an
    out-of-date mention is counted on the state that overrode it; a non-functional predicate folds by object."""
    from kenning.temporal.succession import succession

    items = [_item("a", "Berlin", "2022-01", "superseded"), _item("b", "Porto", "2022-02", "retracted"),
             _item("c", "Berlin", "2022-03", "superseded"), _item("d", "Munich", "2022-04", "ineligible"),
             _item("e", "Paris", "2023-03"), _item("f", "Berlin", "2023-03-22", "superseded", superseded_by="e",
                                                   overridden=True),
             _item("g", "Paris", "2023-06"),
             _item("h", "jazz", "2022-01", pred="likes"), _item("i", "tea", "2022-02", pred="likes"),
             _item("j", "jazz", "2022-03", pred="likes")]
    got = [(s["object"], s["mentions"], s["status"], s["overridden_mentions"])
           for s in succession(items, {"lives_in"})]
    assert got == [("Berlin", 2, "superseded", 0), ("Paris", 2, "active", 1), ("Porto", 1, "retracted", 0),
                   ("Munich", 1, "ineligible", 0), ("jazz", 2, "active", 0), ("tea", 1, "active", 0)]


def test_a_window_lists_a_change_once(tmp_path):
    """T50: three mentions of Acme closed by Globex are one change in January's window, not three."""
    path = tmp_path / "k.db"
    ingest(path, write_export(tmp_path / "e.json", tc.undated()), as_of="2024-12-31T00:00:00Z", overrides=HASH,
           stages="0,1,2A,2B,3,4,5,6")
    tl = json.loads(run_cli("timeline", "--json", db=path).stdout)
    jan = next(w for w in tl["windows"] if w["label"] == "2024-01")
    work = [c for c in jan["changes"] if c["predicate"] == "works_at"]
    assert len(work) == 1 and work[0]["mentions"] == 3 and (work[0]["from"], work[0]["to"]) == ("Acme Corp", "Globex")
