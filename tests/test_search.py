"""Search lanes on small fixtures: FTS5, vectors, speaker grounding, time-aware queries, adjacency, index sync."""

from __future__ import annotations

import json

import pytest

from kenning.api import Vault
from kenning.retrieve.search import Searcher, fts_match
from kenning.store import search as search_sql
from kenning.store.connection import rows, scalar
from tests.conftest import HASH, run_kenning, transcript_doc

NOW = "2023-10-01"


@pytest.fixture
def indexed(vault, transcript_file):
    vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return vault


def _refs(result) -> list[tuple[str, str]]:
    return [(h["date"][:10], h["turn_ref"]) for h in result.hits]


def test_index_stage_is_incremental_and_idempotent(indexed, transcript_file):
    assert search_sql.doc_count(indexed.conn, "message") == 7
    docs = search_sql.doc_count(indexed.conn)
    # one vector per document, in the model layer's vector index (space "search", R15)
    assert scalar(indexed.conn, "SELECT COUNT(*) FROM vector_items WHERE space='search'") == docs
    again = indexed.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    idx = next(r for r in again if r.stage == "index").counts
    assert idx.get("docs_new", 0) == 0 and idx.get("docs_changed", 0) == 0 and idx.get("vectors_written", 0) == 0
    # an edited turn is re-indexed alone; the old words are gone from the index
    doc = transcript_doc()
    doc["sessions"][1]["turns"][0]["text"] = "We went kayaking by the lake last weekend."
    transcript_file.write_text(json.dumps(doc))
    r = indexed.ingest([transcript_file], as_of="2024-01-02T00:00:00Z", self_name="Ana")
    idx = next(x for x in r if x.stage == "index").counts
    # the edited turn, and the next one (whose context field holds the edited text)
    assert idx["docs_changed"] == 2 and idx["vectors_written"] == 1  # the next turn's embedded text is unchanged
    s = Searcher(indexed.conn, indexed.config)
    assert s.search("kayaking", now=NOW, lanes=["fts"]).hits[0]["text"].startswith("We went kayaking")
    assert not s.search("camping", now=NOW, lanes=["fts"]).hits
    # reindex --full rebuilds the same index
    before = rows(indexed.conn, "SELECT doc_id, content_sha256 FROM search_docs ORDER BY doc_id")
    indexed.reindex(full=True, as_of="2024-01-03T00:00:00Z")
    assert rows(indexed.conn, "SELECT doc_id, content_sha256 FROM search_docs ORDER BY doc_id") == before


def test_fts_lane_bm25_and_captions(indexed):
    s = Searcher(indexed.conn, indexed.config)
    r = s.search("pottery bowl", now=NOW, lanes=["fts"])
    assert r.hits[0]["turn_ref"] == "t1" and r.hits[0]["lanes"]["fts"]["rank"] == 1
    # porter stemming: "adopting" finds "adopted"; an image caption is searchable
    assert s.search("adopting a turtle", now=NOW, lanes=["fts"]).hits[0]["text"].startswith("Nice! I adopted")
    cap = s.search("ceramic", now=NOW, lanes=["fts"]).hits
    assert len(cap) == 1 and cap[0]["text"] == "Look at this."
    assert fts_match(['a"b', "c"]) == '"c"'  # only alphanumeric tokens reach FTS5
    assert fts_match(["x"], ["speaker", "body"]) == '{speaker body} : ("x")'
    s.search('"; DROP TABLE messages; -- NEAR( *', now=NOW)
    assert scalar(indexed.conn, "SELECT COUNT(*) FROM messages") == 7


def test_vector_lane_finds_without_shared_words(tmp_path, transcript_file):
    """Hash vectors share character trigrams: 'turtles' reaches 'turtle' with no exact token in common."""
    with Vault.open(tmp_path / "v.db", overrides=HASH) as v:
        v.ingest([transcript_file], as_of="2024-01-01T00:00:00Z")
        r = Searcher(v.conn, v.config).search("turtles", now=NOW, lanes=["vector"])
        assert r.hits[0]["text"].startswith("Nice! I adopted a turtle") and "vector" in r.hits[0]["lanes"]
        assert set(r.hits[0]["lanes"]) == {"vector"}


def test_speaker_grounding(indexed):
    s = Searcher(indexed.conn, indexed.config)
    # "lake" is said by Ben (camping) and by Ana (car): naming the speaker puts that speaker's turn first
    ben = s.search("What did Ben say about the lake?", now=NOW)
    assert ben.parsed.speakers == ["Ben"] and ben.hits[0]["speaker"] == "Ben" and "speaker" in ben.hits[0]["lanes"]
    ana = s.search("What did Ana say about the lake?", now=NOW)
    assert ana.hits[0]["speaker"] == "Ana" and ana.hits[0]["text"].startswith("Our car broke down")
    # an alias from the transcript ("Annie") names the same person
    annie = s.search("what did Annie say about her sister", now=NOW)
    assert annie.parsed.speakers == ["Ana"] and annie.hits[0]["text"].startswith("My sister")


def test_speaker_named_by_a_short_form_of_the_name(vault, tmp_path):
    """R38: a capitalised word that begins exactly one participant's name ("Mel") names that participant."""
    doc = transcript_doc()
    doc["participants"] = [{"id": "mel", "name": "Melanie"}, {"id": "jon", "name": "Jonah"},
                           {"id": "joa", "name": "Joanna"}]
    doc["sessions"] = [{"id": "s1", "started_at": "2023-05-08T13:56:00Z", "turns": [
        {"id": "t1", "speaker": "Jonah", "text": "The pottery class was fun, I made a pottery bowl at pottery class."},
        {"id": "t2", "speaker": "Melanie", "text": "I painted a sunset at the class."},
        {"id": "t3", "speaker": "Joanna", "text": "I wrote a screenplay."},
    ]}]
    p = tmp_path / "short.json"
    p.write_text(json.dumps(doc))
    vault.ingest([p], as_of="2024-01-01T00:00:00Z", self_name="Jonah")
    s = Searcher(vault.conn, vault.config)
    r = s.search("What did Mel make at the pottery class?", now=NOW, lanes=["fts", "speaker"])
    assert r.parsed.speakers == ["Melanie"] and r.hits[0]["speaker"] == "Melanie" and "speaker" in r.hits[0]["lanes"]
    # "Jo" begins two names (Jonah, Joanna): nobody; a sentence's first word and stopwords never count
    assert s.search("What did Jo make at the pottery class?", now=NOW).parsed.speakers == []
    assert s.search("Mel made what?", now=NOW).parsed.speakers == []
    from kenning.config import load_config
    off = Searcher(vault.conn, load_config(overrides={**HASH, "retrieval": {"speaker": {"name_prefixes": False}}}))
    assert off.search("What did Mel make at the pottery class?", now=NOW).parsed.speakers == []


def test_time_aware_query(indexed):
    s = Searcher(indexed.conn, indexed.config)
    r = s.search("what happened at the lake in July 2023", now=NOW)
    assert r.parsed.times[0].start.isoformat() == "2023-07-01"
    assert r.hits[0]["date"].startswith("2023-07-14") and "time" in r.hits[0]["lanes"]
    # relative to the question date: "last summer" asked in October 2023 is summer 2023
    r2 = s.search("lake trip last summer", now=NOW)
    assert (r2.parsed.times[0].start.isoformat(), r2.parsed.times[0].end.isoformat()) == ("2023-06-01", "2023-08-31")
    assert r2.hits[0]["date"].startswith("2023-07")
    # a turn said in September about August is found by a query about August (its resolved event time)
    aug = s.search("what instrument did Ben pick up in August 2023", now=NOW)
    violin = next(h for h in aug.hits if "violin" in h["text"])
    assert "time" in violin["lanes"] and violin["date"].startswith("2023-09-02")
    assert violin["event_time"]["start"] == "2023-08-01"
    # the hit carries the time of the event it tells, resolved against the day it was said
    camping = next(h for h in r.hits if h["text"].startswith("We went camping"))
    assert camping["event_time"]["start"] == "2023-07-08" and camping["event_time"]["granularity"] == "weekend"


def test_as_of_hides_later_turns(indexed):
    s = Searcher(indexed.conn, indexed.config)
    assert any(h["text"].startswith("I started learning the violin") for h in s.search("violin", now=NOW).hits)
    early = s.search("violin", as_of="2023-08-01").hits
    assert early and all(h["date"] < "2023-08-02" for h in early)
    assert all("fts" not in h["lanes"] for h in early)  # the only turn with the word is later


def test_adjacency_lane_brings_the_answer(indexed):
    from kenning.config import load_config

    # context weight 0: the next turn must come from the adjacency lane, not from its context field
    cfg = load_config(overrides={**HASH, "retrieval": {"lane_weights": {"adjacency": 1.0},
                                               "fts": {"column_weights": {"context": 0.0}}}})
    s = Searcher(indexed.conn, cfg)
    r = s.search("pottery class", now=NOW, lanes=["fts", "adjacency"])
    first = r.hits[0]
    neighbour = next(h for h in r.hits if "adjacency" in h["lanes"])
    assert first["turn_ref"] == "t1" and neighbour["turn_ref"] == "t2"
    assert {"kind": "adjacent_to", "message_id": first["message_id"]} in neighbour["evidence"]


def test_context_field_finds_the_reply(indexed):
    """The turn after a question is indexed with the question as low-weight context (R6)."""
    s = Searcher(indexed.conn, indexed.config)
    r = s.search("pottery class", now=NOW, lanes=["fts"])
    assert [h["turn_ref"] for h in r.hits[:2]] == ["t1", "t2"] and r.hits[1]["text"].startswith("Nice!")


def test_hit_shape_and_evidence_chain(indexed):
    r = Searcher(indexed.conn, indexed.config).search("turtle", now=NOW)
    h = r.hits[0]
    assert set(h) >= {"text", "speaker", "date", "conversation", "conversation_id", "score", "lanes", "evidence",
                      "turn_ref", "message_id", "event_time"}
    ev = h["evidence"][0]
    assert ev["kind"] == "message" and ev["message_id"] == h["message_id"] and ev["turn_ref"] == "t2"
    for lane in h["lanes"].values():
        assert {"rank", "score", "contribution"} <= set(lane)
    assert h["score"] == 1.0


def test_cli_search_json(tmp_path, transcript_file, hash_config_file):
    db = tmp_path / "c.db"
    assert run_kenning("ingest", str(transcript_file), "--db", str(db), "--config", str(hash_config_file)).returncode == 0
    r = run_kenning("search", "Who adopted a turtle?", "--k", "3", "--now", NOW, "--json", "--db", str(db),
                "--config", str(hash_config_file))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["hits"]) == 3 and out["hits"][0]["text"].startswith("Nice! I adopted a turtle")
    assert {l["lane"] for l in out["lanes"]} >= {"fts", "vector"}
    table = run_kenning("search", "turtle", "--db", str(db), "--config", str(hash_config_file))
    assert table.returncode == 0 and "turtle" in table.stdout
    bad = run_kenning("search", "turtle", "--as-of", "someday", "--db", str(db), "--config", str(hash_config_file))
    assert bad.returncode == 1 and "--as-of" in bad.stderr


def test_restricted_vector_lanes_filter_inside_the_search(indexed):
    """R15: the speaker lane's vector half only ever returns that speaker's turns, exactly as a brute-force scan
    of the same vectors restricted to them ranks them."""
    import numpy as np

    s = Searcher(indexed.conn, indexed.config)
    r = s.search("lake", now=NOW, lanes=["speaker"])
    assert r.parsed.speakers == [] and r.hits == []  # no name in the query: the lane does not fire
    qvec = s.embedder().embed(["Ben lake"])[0]
    got = s.vectors.knn(qvec, 50, speakers=["ben"])  # speaker names match case-insensitively
    ben = [rid for (rid,) in indexed.conn.execute("SELECT doc_rowid FROM search_docs WHERE speaker='Ben'")]
    assert got and {r for r, _ in got} == set(ben)
    texts = {h["message_id"]: h for h in s.search("Ben lake", now=NOW, lanes=["speaker"], k=50).hits}
    assert texts and {h["speaker"] for h in texts.values()} == {"Ben"}
    vecs = {int(i): v for i, v in zip(*_search_vectors(indexed))}
    brute = sorted(ben, key=lambda r: -float(vecs[r] @ qvec))
    assert [r for r, _ in got] == brute
    # time: said in July 2023, or telling of it
    july = s.vectors.knn(qvec, 50, start="2023-07-01", end="2023-08-01")
    said = {r for (r,) in indexed.conn.execute("SELECT doc_rowid FROM search_docs WHERE occurred_at_utc LIKE '2023-07%'")}
    assert {r for r, _ in july} == said and np.all(np.diff([x for _, x in july]) <= 1e-6)



def test_speaker_filter_names_its_rows(indexed):
    """R57: a speaker filter carries that speaker's vids (``rows``, kept per speaker for the next question) so the
    vector index tests those rows only; they are exactly the vids the filter keeps, and the lane's hits are unchanged
    (test_restricted_vector_lanes_filter_inside_the_search checks them against brute force)."""
    import numpy as np

    s = Searcher(indexed.conn, indexed.config)
    meta = s.vectors.meta()
    fn = meta.mask_fn(speakers=["Ben"], as_of="2099-01-01")
    every = np.arange(len(meta.rowid), dtype=np.int64)
    assert fn.rows.tolist() == np.nonzero(fn(every))[0].tolist() and len(fn.rows) > 0
    ben = {r for (r,) in indexed.conn.execute("SELECT doc_rowid FROM search_docs WHERE speaker='Ben'")}
    assert set(meta.rowid[fn.rows].tolist()) == ben
    again = meta.mask_fn(speakers=["ben"])
    assert again.rows is fn.rows and again.rows_key == fn.rows_key  # the same speaker: the kept list
    assert len(meta.mask_fn(speakers=["Nobody"]).rows) == 0
    # a time range names a superset of its rows (said then, or holding an event time) when that is narrow; the
    # lane's hits are those of the same filter over every vid
    from kenning.retrieve import vectors as vectors_mod

    said = sorted({r[0][:10] for r in indexed.conn.execute(
        "SELECT occurred_at_utc FROM search_docs WHERE occurred_at_utc IS NOT NULL")})
    qvec = s.embedder().embed(["lake trip"])[0]
    rng = {"start": said[0], "end": said[0] + "T23:59:59Z"}
    vectors_mod.TIME_ROWS_MAX_SHARE = 0.0
    try:
        assert not hasattr(meta.mask_fn(**rng), "rows")
        want = s.vectors.knn(qvec, 50, **rng)
        vectors_mod.TIME_ROWS_MAX_SHARE = 1.0
        day = meta.mask_fn(**rng)
        kept = np.nonzero(day(every))[0]
        assert day.rows_key is None and len(kept) > 0 and set(kept.tolist()) <= set(day.rows.tolist())
        assert s.vectors.knn(qvec, 50, **rng) == want and want
    finally:
        vectors_mod.TIME_ROWS_MAX_SHARE = 0.25
    assert not hasattr(meta.mask_fn(start="2000-01-01", end="2099-01-01"), "rows")  # everything: no gain


def _search_vectors(vault):
    import numpy as np

    from kenning.store.connection import rows as _rows

    from kenning.llm.index import _decode

    table = _rows(vault.conn, "SELECT * FROM vector_tables WHERE status='active'")[0]
    got = list(vault.conn.execute(f"SELECT i.item_id, v.embedding FROM {table['table_name']} v JOIN vector_items i "
                                  "ON i.vid=v.rowid WHERE i.space='search'"))
    return [g[0] for g in got], [_decode(table, g[1]) for g in got]  # float32, or int8 dequantized (X3)


def test_entity_lane_names_aliases_and_owner(indexed):
    """R18: a query naming an entity (canonical name, alias, the owner's kin as "my …") reaches it; the entity is
    a hit of its own and its names are indexed for lookups."""
    s = Searcher(indexed.conn, indexed.config)
    names = {n for (n,) in indexed.conn.execute("SELECT name_norm FROM search_entity_names")}
    # the vault owner (--self Ana, alias Annie) and the owner's kin
    assert {"lisbon", "ana", "annie", "my sister", "ana's sister"} <= names
    r = s.search("trip to Lisbon", now=NOW)
    assert [e["name"] for e in r.parsed.as_dict()["entities"]] == ["Lisbon"]
    lis = next(h for h in r.hits if h["kind"] == "message" and "Lisbon" in h["text"])
    assert "entity" in lis["lanes"]
    step = next(e for e in lis["evidence"] if e["kind"] == "mentions_entity")
    assert step["name"] == "Lisbon" and lis["text"][step["char_start"]:step["char_end"]] == "Lisbon"
    ent = s.search("Lisbon", now=NOW, kinds=["entity"]).hits
    assert ent and ent[0]["kind"] == "entity" and ent[0]["text"] == "Lisbon" and ent[0]["entity_type"] == "LOCATION"
    # a name that is only a stopword never matches an entity
    assert s.parse("the", dt_date(), None).entities == []


def test_assertion_lane_brings_the_source_turn(indexed):
    """R21: an assertion about the entity the query names ("my sister" = the owner's kin) whose object matches
    brings its source turn, with the assertion in the evidence chain."""
    s = Searcher(indexed.conn, indexed.config)
    r = s.search("where does my sister live?", now=NOW, kinds=["message"])
    top = r.hits[0]
    assert top["text"].startswith("My sister is moving to Lisbon") and "assertion" in top["lanes"]
    a = next(e for e in top["evidence"] if e["kind"] == "assertion")
    assert (a["subject"], a["predicate"], a["object"]) == ("SELF's sister", "lives_in", "Lisbon")
    assert top["text"][a["char_start"]:a["char_end"]] == a["surface"]
    # only the assertion lane: the turn about Ben's pet, not the other Ben turns
    only = s.search("What pet does Ben have?", now=NOW, lanes=["assertion"]).hits
    assert only and all("turtle" in h["text"] for h in only)
    # --as-of before the turn was said: no assertion evidence from the future
    assert not s.search("What pet does Ben have?", as_of="2023-05-01", lanes=["assertion"]).hits


def test_turn_time_prefers_stage_2a_mentions(indexed):
    """R17: a turn's event time is the time mention stage 2A resolved when there is one; relative words on a
    transcript turn (2A leaves them unresolved, seed 001 §2A.7.2) are read by the retrieval rules."""
    from kenning.retrieve.when import event_time, from_mention

    m = {"valid_from_utc": "2023-08-01T00:00:00.000Z", "valid_to_utc": "2023-09-01T00:00:00.000Z",
         "resolution_granularity": "month", "surface_text": "August 2023"}
    iv = from_mention(m)
    assert (iv.start.isoformat(), iv.end.isoformat(), iv.granularity) == ("2023-08-01", "2023-08-31", "month")
    assert event_time("see you yesterday", dt_date(), [m]) == iv
    assert event_time("yesterday", dt_date(), []).start.isoformat() == "2023-09-30"
    # "in August" on a transcript turn: 2A leaves it unresolved (imputed timestamp), the retrieval rules read it
    row = indexed.conn.execute("SELECT d.event_start, d.event_end FROM search_docs d JOIN messages m ON "
                               "m.message_id=d.doc_id WHERE m.text_raw LIKE 'I started learning%'").fetchone()
    assert row == ("2023-08-01", "2023-08-31")


def test_kinds_filter_and_belief_lane(tmp_path):
    """Beliefs of the ledger are hits of kind belief with their quotes as evidence (R20); --kind limits kinds."""
    from tests.beliefs.beliefs_helpers import minimal_wiki

    wiki = minimal_wiki(tmp_path / "wiki")
    with Vault.open(tmp_path / "b.db", overrides=HASH) as v:
        v.ingest_wiki(wiki, as_of="2026-06-01T00:00:00Z")
        s = Searcher(v.conn, v.config)
        r = s.search("Where does Anna live?", now="2026-06-01", kinds=["belief"])
        assert r.hits and r.hits[0]["kind"] == "belief" and r.hits[0]["text"] == "Anna lives in Nantes."
        assert all(h["kind"] == "belief" for h in r.hits) and "belief" in r.hits[0]["lanes"]
        ev = r.hits[0]["evidence"]
        assert ev[0]["kind"] == "belief" and any(e["kind"] == "quote" and "Nantes" in e["quote"] for e in ev)
        # as of before the move: the superseded belief was the current one
        old = s.search("Where does Anna live?", as_of="2026-03-01", kinds=["belief"]).hits
        assert [h["text"] for h in old] == ["Anna lives in Lyon."]


def dt_date():
    import datetime as dt

    return dt.date(2023, 10, 1)


# -- query analysis of speaker names (R30) -------------------------------------------------------------------------

def test_strip_words_removes_names_and_their_possessive():
    from kenning.retrieve.search import strip_words

    assert strip_words("What did Nate do for Joanna's birthday?", {"nate", "joanna"}) == "What did do for birthday?"
    assert strip_words("How do Jon and Gina both like to destress?", {"jon", "gina"}) == \
        "How do and both like to destress?"
    # a longer word that starts with a name stays; other words' possessives stay
    assert strip_words("Is Jonathan Jon's friend's dog?", {"jon"}) == "Is Jonathan friend's dog?"
    assert strip_words("Ben?", {"ben"}) == ""


@pytest.fixture
def greeting_vault(vault, tmp_path):
    doc = transcript_doc()
    doc["sessions"][0]["turns"].append({"id": "t4", "speaker": "Ana", "text": "Bye Ben!"})
    p = tmp_path / "greeting.json"
    p.write_text(json.dumps(doc))
    vault.ingest([p], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return vault


def test_plain_bm25_lane_leaves_out_named_speakers(greeting_vault):
    """The speaker lane carries who: the plain BM25 lane does not rank "Bye Ben!" for a question about Ben."""
    from kenning.config import load_config

    s = Searcher(greeting_vault.conn, greeting_vault.config)
    r = s.search("What did Ben say about the lake?", now=NOW, lanes=["fts", "speaker"])
    assert r.hits[0]["text"].startswith("We went camping by the lake")
    assert "Bye Ben!" not in [h["text"] for h in r.hits]
    # without the speaker lane the name is an ordinary word again
    alone = s.search("What did Ben say about the lake?", now=NOW, lanes=["fts"])
    assert "Bye Ben!" in [h["text"] for h in alone.hits]
    # the old behaviour is a setting
    cfg = load_config(overrides={**HASH, "retrieval": {"fts": {"speaker_names_in_plain_lane": True}}})
    old = Searcher(greeting_vault.conn, cfg).search("What did Ben say about the lake?", now=NOW,
                                                     lanes=["fts", "speaker"])
    bye = next(h for h in old.hits if h["text"] == "Bye Ben!")
    assert "fts" in bye["lanes"]


class _Recording:
    """The vault's real embedder, remembering what it was asked to embed."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def test_speaker_lane_vector_is_the_question_without_the_names(indexed):
    from kenning.config import load_config

    real = Searcher(indexed.conn, indexed.config).embedder()
    rec = _Recording(real)
    s = Searcher(indexed.conn, indexed.config, embedder=rec)
    r = s.search("What did Ben say about the lake?", now=NOW)
    # one embedding call holds both sentences
    assert rec.calls == [["What did Ben say about the lake?", "What did say about the lake?"]]
    assert r.hits[0]["speaker"] == "Ben" and r.hits[0]["text"].startswith("We went camping")
    # the speaker lane's vector half ranks Ben's turns by the stripped question, exactly as a scan does
    svec = real.embed(["What did say about the lake?"])[0]
    lane = s.search("What did Ben say about the lake?", now=NOW, lanes=["speaker"], k=50)
    assert {h["speaker"] for h in lane.hits} == {"Ben"}
    got = s.vectors.knn(svec, 50, speakers=["Ben"])
    assert [r for r, _ in got] == [r for r, _ in sorted(got, key=lambda x: -x[1])]
    # no names in the query: one sentence; the setting off: one sentence
    rec.calls.clear()
    s.search("camping by the lake", now=NOW)
    assert rec.calls == [["camping by the lake"]]
    cfg = load_config(overrides={**HASH, "retrieval": {"speaker": {"vector_without_names": False}}})
    rec2 = _Recording(real)
    Searcher(indexed.conn, cfg, embedder=rec2).search("What did Ben say about the lake?", now=NOW)
    assert rec2.calls == [["What did Ben say about the lake?"]]


def test_answer_type_of_questions_and_turns():
    """R33: the question word names the answer's type; a turn carries a place, a name, a number or a title."""
    from kenning.retrieve.answer_type import answer_type, carries, proper_names

    assert answer_type("Where did Joanna go for a road trip?") == "place"
    assert answer_type("Which country has Tim visited most?") == "place"
    assert answer_type("How long has Nate had his turtles?") == "number"
    assert answer_type("Who performed at the concert?") == "person"
    assert answer_type("What book did Caroline recommend?") == "title"
    assert answer_type("What is Nate's favorite video game?") == "title"
    assert answer_type("When did Maria go to the beach?") is None      # the temporal-cue lane's
    assert answer_type("What did Jon say about the store?") is None
    # a multi-word place after a locative word; a sentence opening, "I", a month and a speaker are not names
    assert proper_names("We hiked in the Smoky Mountains. Then I slept in May.", ["Ben"]) == [("Smoky Mountains", 16)]
    assert carries("place", "Last summer we hiked in the Smoky Mountains with Ben!", ["Ben"])
    assert not carries("place", "Ben, we went to the lake. It was great.", ["Ben"])
    assert not carries("person", "Thanks Ben! I loved it.", ["Ben"])
    assert carries("person", "My cousin Matt Patterson played.", [])
    assert carries("number", "I've had them for three years.") and not carries("number", "A long time.")
    assert carries("title", 'I loved "Becoming Nicole" so much.') and not carries("title", "Great book, really.")


def test_disposition_questions_and_turns():
    """R34: a would / does / is-it-likely / what-does-X-like question asks what someone likes, values or does; a
    turn answers it when its speaker states a preference, value, goal or habit in the first person."""
    from kenning.retrieve.answer_type import disposition_question, states_disposition

    assert disposition_question("Would Caroline want to move back to her home country soon?")
    assert disposition_question("Does John live close to a beach or the mountains?")
    assert disposition_question("Is it likely that Nate has friends besides Joanna?")
    assert disposition_question("What job might Maria pursue in the future?")
    assert disposition_question("What does Nate love most about having turtles?")
    assert disposition_question("What is Gina's favorite style of dance?")
    assert not disposition_question("What did Jon say about the store?")
    assert not disposition_question("When did Maria go to the beach?")
    assert states_disposition("I've always wanted to serve my country.")
    assert states_disposition("My goal is to open a dance studio.")
    assert not states_disposition("We drove past the beach yesterday.")       # no stance
    assert not states_disposition("Everyone loves a quiet beach.")            # not the speaker's own


def _searcher_over(vault, tmp_path, name: str, turns: list[dict]) -> Searcher:
    """A Searcher over the transcript fixture whose second session is ``turns`` (Ana is the vault's owner)."""
    doc = transcript_doc()
    doc["sessions"][1]["turns"] = turns
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    vault.ingest([p], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return Searcher(vault.conn, vault.config)


def test_disposition_lane_prefers_the_persons_own_stance(vault, tmp_path):
    s = _searcher_over(vault, tmp_path, "beach.json", [
        {"id": "t1", "speaker": "Ana", "text": "The beach, the beach! The beach was packed, beach beach."},
        {"id": "t2", "speaker": "Ben", "text": "We drove past a beach on the way home."},
        {"id": "t3", "speaker": "Ben", "text": "I love a quiet beach more than anything."},
        {"id": "t4", "speaker": "Ana", "text": "I love the beach too, honestly."},
    ])
    q = "Would Ben enjoy a beach holiday?"
    plain = s.search(q, now=NOW, lanes=["fts"])
    assert plain.hits[0]["text"].startswith("The beach, the beach!")
    r = s.search(q, now=NOW, lanes=["fts", "disposition"])
    assert r.parsed.disposition and r.parsed.as_dict()["disposition"] is True
    top = r.hits[0]
    assert top["text"].startswith("I love a quiet beach") and top["lanes"]["disposition"]["rank"] == 1
    # only the asked-about person's own statements: Ana's "I love the beach too" is not in the lane
    assert [h["turn_ref"] for h in r.hits if "disposition" in h["lanes"]] == ["t3"]
    # the lane is off at weight 0, and does not fire for other questions
    from kenning.config import load_config
    off = Searcher(vault.conn, load_config(overrides={**HASH, "retrieval": {"lane_weights": {"disposition": 0.0}}}))
    assert off.search(q, now=NOW, lanes=["fts", "disposition"]).hits[0]["text"].startswith("The beach, the beach!")
    assert not any(x["lane"] == "disposition" for x in s.search("Where is the beach?", now=NOW).lanes)


def test_answer_type_lane_prefers_turns_holding_the_answer(vault, tmp_path):
    s = _searcher_over(vault, tmp_path, "lake.json", [
        {"id": "t1", "speaker": "Ben", "text": "The lake, the lake! I love the lake so much."},
        {"id": "t2", "speaker": "Ana", "text": "We camped by a lake in the Smoky Mountains once, a quiet lake."},
    ])
    q = "where is the lake?"
    plain = s.search(q, now=NOW, lanes=["fts"])
    assert plain.hits[0]["text"].startswith("The lake, the lake!")
    typed = s.search(q, now=NOW, lanes=["fts", "answer_type"])
    assert typed.parsed.answer_type == "place" and typed.parsed.as_dict()["answer_type"] == "place"
    top = typed.hits[0]
    assert top["text"].startswith("We camped") and top["lanes"]["answer_type"]["rank"] == 1
    assert top["lanes"]["answer_type"]["detail"] == {"answer_type": "place"}
    assert "answer_type" not in typed.hits[1]["lanes"]
    # the lane is off at weight 0, and never fires for a question without an answer type
    from kenning.config import load_config
    off = Searcher(vault.conn, load_config(overrides={**HASH, "retrieval": {"lane_weights": {"answer_type": 0.0}}}))
    assert off.search(q, now=NOW, lanes=["fts", "answer_type"]).hits[0]["text"].startswith("The lake, the lake!")
    assert not any(x["lane"] == "answer_type" for x in s.search("lake", now=NOW).lanes)


def test_speakers_listed_by_a_loose_index_scan(indexed):
    """R62: the speakers in the index, one index seek each — the same list grouping every document gives, speakers
    differing only in case kept apart."""
    conn = indexed.conn
    conn.execute("UPDATE search_docs SET speaker='ben' WHERE doc_rowid = (SELECT MIN(doc_rowid) FROM search_docs "
                 "WHERE speaker='Ben')")
    grouped = [s for (s,) in conn.execute("SELECT speaker FROM search_docs WHERE speaker IS NOT NULL "
                                          "GROUP BY speaker ORDER BY speaker")]
    assert search_sql.speakers(conn) == grouped and {"Ana", "Ben", "ben"} <= set(grouped)
    plan = " ".join(str(r) for r in conn.execute("EXPLAIN QUERY PLAN SELECT speaker FROM search_docs "
                                                 "WHERE speaker > 'A' ORDER BY speaker LIMIT 1"))
    assert "idx_search_docs_speaker_exact" in plan
    conn.execute("UPDATE search_docs SET speaker=NULL")
    assert search_sql.speakers(conn) == []
