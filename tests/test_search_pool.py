"""The shared FTS candidate pool (R40) and its top-k pruning (R41) on a small fixture.

The fixture is far below ``fts.rank_all_below``, so these tests force the pool with ``rank_all_below: 1``:
- with no common word (``common_term_cap`` above every document frequency) the pool holds every match, and every
  lane — plain BM25, speaker, time, entity — returns exactly what the unpruned search returns;
- with common words pruned, the result is deterministic and the pool's BM25 is FTS5's bm25() for the same documents.
"""

from __future__ import annotations

import datetime as dt

import apsw
import numpy as np
import pytest

from kenning.config import load_config
from kenning.retrieve.search import Searcher
from kenning.store import search as search_sql
from tests.conftest import HASH
from tests.fts_tables import full_table

NOW = "2023-10-01"

QUERIES = [  # (query, search kwargs, lane that must fire)
    ("pottery bowl", {}, "fts"),
    ("What did Ben say about the lake?", {}, "speaker"),
    ("What did Ana say about the lake?", {}, "speaker"),
    ("what did Annie say about her sister", {}, "speaker"),
    ("what happened at the lake in July 2023", {}, "time"),
    ("lake trip last summer", {}, "time"),
    ("what instrument did Ben pick up in August 2023", {}, "time"),
    ("trip to Lisbon", {}, "entity"),
    ("where does my sister live?", {"kinds": ["message"]}, "fts"),
    ("violin", {"as_of": "2023-08-01"}, None),
    ("violin lake camping turtle", {}, "fts"),
]


@pytest.fixture
def indexed(vault, transcript_file):
    vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return vault


def _searcher(vault, embedder=True, **fts) -> Searcher:
    fts.setdefault("pool_min_ratio", 0)  # pool whatever its size (the fixture is tiny)
    return Searcher(vault.conn, load_config(overrides={**HASH, "retrieval": {"fts": fts}}), embedder=embedder)


def _shape(result) -> list[tuple]:
    """Hits with every lane's rank and (rounded) score: what fusion was fed and what it made of it."""
    return [(h.get("message_id") or h.get("entity_id") or h.get("belief_id"),
             tuple(sorted((lane, v["rank"], round(v["score"], 5)) for lane, v in h["lanes"].items())))
            for h in result.hits]


def test_pool_without_common_words_gives_the_unpruned_results(indexed):
    exact = _searcher(indexed, rank_all_below=0)
    pooled = _searcher(indexed, rank_all_below=1, common_term_cap=10**9)
    for q, kw, lane in QUERIES:
        terms = pooled.parse(q, dt.date(2023, 10, 1), None).terms
        pool = pooled.fts_pool(terms)
        assert pool is not None and len(pool) > 0, q  # the pool really is used
        a = exact.search(q, now=NOW, k=20, **kw)
        b = pooled.search(q, now=NOW, k=20, **kw)
        assert _shape(a) == _shape(b), q
        assert a.lanes == b.lanes, q
        if lane:
            assert any(lane in h["lanes"] for h in b.hits), (q, lane)


def test_each_restricted_lane_alone_is_unchanged(indexed):
    """Speaker grounding, time-aware queries and the entity lane, lane by lane (R40 keeps their outputs)."""
    exact = _searcher(indexed, rank_all_below=0)
    pooled = _searcher(indexed, rank_all_below=1, common_term_cap=10**9)
    for q, lane in [("What did Ben say about the lake?", "speaker"), ("lake trip last summer", "time"),
                    ("what instrument did Ben pick up in August 2023", "time"), ("trip to Lisbon", "entity")]:
        a = exact.search(q, now=NOW, lanes=[lane])
        b = pooled.search(q, now=NOW, lanes=[lane])
        assert a.hits and _shape(a) == _shape(b), (q, lane)
    ben = pooled.search("What did Ben say about the lake?", now=NOW)
    assert ben.hits[0]["speaker"] == "Ben" and "speaker" in ben.hits[0]["lanes"]
    july = pooled.search("what happened at the lake in July 2023", now=NOW)
    assert july.hits[0]["date"].startswith("2023-07-14") and "time" in july.hits[0]["lanes"]


def test_pool_bm25_is_fts5_bm25(indexed):
    pooled = _searcher(indexed, rank_all_below=1, common_term_cap=10**9)
    terms = ["lake", "camping", "violin", "sister", "ben"]
    pool = pooled.fts_pool(terms)
    ours = dict(pool.rank(terms, 100))
    sub = dict(pool.rank(["lake"], 100))
    w = pooled._weights()
    with full_table(indexed):  # FTS5's own bm25() needs positions
        theirs = {r: -s for r, s in search_sql.fts_search(indexed.conn, '"lake" OR "camping" OR "violin" OR "sister" '
                                                          'OR "ben"', w, 100)}
        theirs_sub = {r: -s for r, s in search_sql.fts_search(indexed.conn, '"lake"', w, 100)}
    assert set(ours) == set(theirs) and len(ours) >= 3
    for r in ours:
        assert ours[r] == pytest.approx(theirs[r], rel=1e-12)
    # a subset of the words (a restricted lane): same as FTS5 over those words only
    assert sub == pytest.approx(theirs_sub, rel=1e-12)


def test_pruned_pool_is_deterministic_and_sound(indexed):
    """Every word common (common_term_cap 1) and one document per pruning step (pool_cap 1): fewer candidates,
    each a real match with its exact BM25, and the same answer every time."""
    q = "What did Ben say about the lake and the violin?"
    a = _searcher(indexed, rank_all_below=1, common_term_cap=1, pool_cap=1)
    b = _searcher(indexed, rank_all_below=1, common_term_cap=1, pool_cap=1)
    ra, rb = a.search(q, now=NOW, k=20), b.search(q, now=NOW, k=20)
    assert _shape(ra) == _shape(rb) and ra.hits
    assert _shape(a.search(q, now=NOW, k=20)) == _shape(ra)
    terms = a.parse(q, dt.date(2023, 10, 1), None).terms
    pool = a.fts_pool(terms)
    full = _searcher(indexed, rank_all_below=1, common_term_cap=10**9).fts_pool(terms)
    assert 0 < len(pool) < len(full)
    exact = dict(full.rank(terms, 1000))
    for r, s in pool.rank(terms, 1000):
        assert exact[r] == pytest.approx(s, rel=1e-12)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """800 turns of the search benchmark's hard vocabulary (every topic word in ~4% of the turns), FTS only."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import run as bench

    v, _ = bench.build_vault(tmp_path_factory.mktemp("syn") / "v.db", 800, "none")
    yield v
    v.close()


def _fts(v, **fts) -> Searcher:
    fts.setdefault("pool_min_ratio", 0)
    return Searcher(v.conn, load_config(overrides={"retrieval": {"vector": {"enabled": False}, "fts": fts}}))


SYN_QUERIES = ["what did Sam say about the garden?", "Ana concert in May 2023", "the lake last summer",
               "violin and turtle", "anything about coffee"]


def test_synthetic_no_common_word_is_exact(synthetic):
    exact = _fts(synthetic, rank_all_below=0)
    pooled = _fts(synthetic, rank_all_below=1, common_term_cap=10**9)
    for q in SYN_QUERIES:
        assert pooled.fts_pool(pooled.parse(q, dt.date(2023, 12, 31), None).terms) is not None
        a, b = exact.search(q, now="2023-12-31", k=50), pooled.search(q, now="2023-12-31", k=50)
        assert a.hits and _shape(a) == _shape(b), q


def test_speaker_step_holds_the_speaker_lane(synthetic):
    """Every word common and the word-driven steps cut to 5 documents: the speaker step (that speaker's documents
    holding the lane's words, through the FTS speaker column) still gives the speaker lane in full; without it
    the lane loses documents."""
    exact = _fts(synthetic, rank_all_below=0)
    pruned = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=5, pool_and_cap=5, pool_speaker_cap=10**6)
    without = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=5, pool_and_cap=5, pool_speaker_cap=0)
    q = "what did Sam say about the garden and the lake?"
    lane = lambda s: [(h["message_id"], h["lanes"]["speaker"]["rank"])  # noqa: E731
                      for h in s.search(q, now="2023-12-31", k=50, lanes=["speaker"]).hits]
    a = lane(exact)
    assert len(a) >= 5 and lane(pruned) == a
    assert len(lane(without)) < len(a)
    hits = pruned.search(q, now="2023-12-31", k=50, lanes=["speaker"]).hits
    assert all(h["speaker"] == "Sam" for h in hits)


def test_pool_only_when_it_pays_off(synthetic):
    """pool_min_ratio: the matches must outnumber the pool's largest possible size; else FTS5 ranks them all."""
    terms = ["garden", "lake"]
    assert _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=5, pool_and_cap=5).fts_pool(terms)
    assert _fts(synthetic, rank_all_below=1, pool_min_ratio=4).fts_pool(terms) is None


def test_synthetic_pruned_is_deterministic(synthetic):
    a = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=5, pool_and_cap=5)
    b = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=5, pool_and_cap=5)
    for q in SYN_QUERIES:
        assert _shape(a.search(q, now="2023-12-31", k=20)) == _shape(b.search(q, now="2023-12-31", k=20)), q


def test_term_hits_skips_documents_already_measured(synthetic):
    """R50: a document an earlier step measured still counts towards the step's limit but is not measured again;
    every other document gets what a fresh walk gives it."""
    s = _fts(synthetic, rank_all_below=1)
    w = s._weights()
    terms = ["garden", "lake", "violin"]
    with full_table(synthetic):  # kenning_hits counts positions: a table before migration 0120
        fresh = search_sql.fts_term_hits(synthetic.conn, '"garden" OR "lake"', terms, w, 12)
        assert len(fresh) == 12
        newest = max(fresh)
        found = {newest: (-1, [-1.0, -1.0, -1.0])}
        out = search_sql.fts_term_hits(synthetic.conn, '"garden" OR "lake"', terms, w, 12, None, found)
    assert out is found and set(found) == set(fresh)  # the same 12 newest documents
    assert found[newest] == (-1, [-1.0, -1.0, -1.0])
    assert all(found[r] == fresh[r] for r in fresh if r != newest)
    assert any(h > 0 for _, hits in fresh.values() for h in hits)


def test_fts_any(synthetic):
    assert search_sql.fts_any(synthetic.conn, '"garden"')
    assert not search_sql.fts_any(synthetic.conn, '"garden" AND "qqqqzz"')


def test_term_hits_state_is_per_statement(synthetic):
    """R50: kenning_hits keeps its state in the statement's aux data; steps with different phrase counts run on the
    same (cached) statement one after another give what each gives alone, in either order."""
    s = _fts(synthetic, rank_all_below=1)
    w, terms = s._weights(), ["garden", "lake", "violin"]
    steps = [('"garden" AND "lake" AND "violin"', 50), ('"lake"', 50), ('"garden" OR "violin"', 50)]
    with full_table(synthetic):
        forward = [search_sql.fts_term_hits(synthetic.conn, r, terms, w, n) for r, n in steps]
        backward = [search_sql.fts_term_hits(synthetic.conn, r, terms, w, n) for r, n in reversed(steps)][::-1]
    assert forward == backward and all(forward[1:])
    assert all(h[1] > 0 for _, h in forward[1].values())  # "lake" is the second word: its hits land in its slot


# -- the forward index (R51) --------------------------------------------------------------------------------------

def _arrays(pool) -> tuple[list, list, list]:
    return pool.rowids.tolist(), pool.hits.tolist(), pool.length.tolist()


FORWARD_SETTINGS = [  # unpruned; pruned to a few documents per step; a column left out of the query (weight 0)
    {"common_term_cap": 10**9},
    {"common_term_cap": 5, "pool_cap": 5, "pool_and_cap": 5, "pool_speaker_cap": 7},
    {"common_term_cap": 5, "pool_cap": 9, "pool_and_cap": 9,
     "column_weights": {"speaker": 0.0, "body": 1.0, "extra": 0.5, "context": 0.3}},
]


def test_forward_index_pool_is_the_fts5_pool(synthetic):
    """R51: the pool whose hits come from search_doc_terms holds the same documents, lengths and column-weighted
    hits (float for float) as the pool measured by FTS5 walks with kenning_hits on the table of before migration
    0120 (detail=full), and the searches agree."""
    got: dict = {}
    for fts in FORWARD_SETTINGS:
        fwd = _fts(synthetic, rank_all_below=1, **fts)
        for q in SYN_QUERIES:
            pq = fwd.parse(q, dt.date(2023, 12, 31), None)
            speakers = [(sp, [t for t in pq.terms if t not in pq.speaker_terms]) for sp in pq.speakers]
            assert fwd._term_keys(pq.terms) is not None
            a = fwd.fts_pool(pq.terms, speakers)
            assert a is not None and len(a) > 0 and (a.hits > 0).any(), (q, fts)
            got[(q, str(fts))] = (_arrays(a), _shape(fwd.search(q, now="2023-12-31", k=30)))
    with full_table(synthetic):
        for fts in FORWARD_SETTINGS:
            old = _fts(synthetic, rank_all_below=1, forward_index=False, **fts)
            for q in SYN_QUERIES:
                pq = old.parse(q, dt.date(2023, 12, 31), None)
                speakers = [(sp, [t for t in pq.terms if t not in pq.speaker_terms]) for sp in pq.speakers]
                assert old._term_keys(pq.terms) is None
                b = old.fts_pool(pq.terms, speakers)
                assert got[(q, str(fts))] == (_arrays(b), _shape(old.search(q, now="2023-12-31", k=30))), (q, fts)


def test_forward_index_rows_match_fts5_on_the_transcript(indexed):
    """Speaker, text, captions and the turn before (all four FTS columns), and the entity documents."""
    terms = ["lake", "camping", "violin", "sister", "ben", "lisbon", "ana", "trip", "bowl", "pottery"]
    a = _searcher(indexed, rank_all_below=1, common_term_cap=10**9).fts_pool(terms)
    with full_table(indexed):
        b = _searcher(indexed, rank_all_below=1, common_term_cap=10**9, forward_index=False).fts_pool(terms)
    assert _arrays(a) == _arrays(b) and len(a) >= 5
    kinds = {k for (k,) in indexed.conn.execute("SELECT doc_kind FROM search_docs WHERE doc_rowid IN (%s)"
                                                % ",".join(map(str, a.rowids.tolist())))}
    assert kinds == {"message", "entity"}
    n_docs, n_rows = indexed.conn.execute("SELECT (SELECT COUNT(*) FROM search_docs), "
                                          "(SELECT COUNT(*) FROM search_doc_terms)").fetchone()
    assert n_docs == n_rows > 0


def test_forward_index_filled_for_documents_indexed_before_it(indexed):
    """A vault indexed before migration 0063 has no forward rows: the pool measures them from their columns (C2;
    same results), and the next index run fills every row — turns from their fields, entity documents by re-indexing — byte for byte
    what indexing writes."""
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES

    conn = indexed.conn
    before = conn.execute("SELECT doc_rowid, length, terms FROM search_doc_terms ORDER BY doc_rowid").fetchall()
    q = "What did Ben say about the lake and the violin?"
    want = _shape(_searcher(indexed, rank_all_below=1, common_term_cap=2).search(q, now=NOW, k=20))
    conn.execute("DELETE FROM search_doc_terms")
    conn.execute("DELETE FROM search_term_docs")  # as migration 0064 leaves such a vault (R54)
    conn.execute("UPDATE search_state SET term_docs_complete = 0")
    s = _searcher(indexed, rank_all_below=1, common_term_cap=2)
    assert s._term_keys(["lake"]) is not None  # incomplete: the rows there are, the rest from their columns (C2)
    assert _shape(s.search(q, now=NOW, k=20)) == want
    with full_table(indexed):  # before migration 0120: incomplete means FTS5 walks
        s = _searcher(indexed, rank_all_below=1, common_term_cap=2)
        assert s._term_keys(["lake"]) is None
        assert _shape(s.search(q, now=NOW, k=20)) == want
    r = run_stage(conn, STAGES["index"], indexed.config, Clock.from_option("2024-01-02T00:00:00Z"))
    n_msg, n_ent = conn.execute("SELECT SUM(doc_kind='message'), SUM(doc_kind='entity') FROM search_docs").fetchone()
    assert r.counts["doc_terms_filled"] == n_msg and r.counts["doc_terms_entities_reindexed"] == n_ent > 0
    assert conn.execute("SELECT doc_rowid, length, terms FROM search_doc_terms ORDER BY doc_rowid").fetchall() == before
    s = _searcher(indexed, rank_all_below=1, common_term_cap=2)
    assert s._term_keys(["lake"]) is not None
    assert _shape(s.search(q, now=NOW, k=20)) == want
    again = run_stage(conn, STAGES["index"], indexed.config, Clock.from_option("2024-01-03T00:00:00Z"))
    assert "doc_terms_filled" not in again.counts and "doc_terms_entities_reindexed" not in again.counts


def _insert_long_doc(conn) -> int:
    """A bare search document (its FTS text is the caller's), for the over-255-counts cases."""
    return search_sql.insert_doc(conn, {
        "doc_kind": "message", "doc_id": "m-long", "conversation_id": None, "speaker": "Ben", "role": "user",
        "occurred_at_utc": "2023-09-01T00:00:00Z", "position": None, "event_start": None, "event_end": None,
        "content_sha256": "x", "source_changed_run_id": None, "indexed_run_id": "r"})


def test_forward_index_count_past_a_byte_is_measured_by_fts5(indexed):
    """A token more than 255 times in one column has no packed records (NULL): that document's hits come from its
    columns, tokenized (C2; before migration 0120: from FTS5, one rowid lookup), the others' from the forward
    index — the pool is still FTS5's."""
    conn = indexed.conn
    rowid, mid, speaker, prev = conn.execute(
        "SELECT d.doc_rowid, d.doc_id, d.speaker, (SELECT q.text_raw FROM messages q WHERE q.conversation_id = "
        "m.conversation_id AND q.order_index < m.order_index ORDER BY q.order_index DESC LIMIT 1) FROM search_docs d "
        "JOIN messages m ON m.message_id = d.doc_id WHERE d.doc_kind = 'message' AND d.speaker = 'Ben' "
        "AND m.order_index > 0 ORDER BY d.doc_rowid LIMIT 1").fetchone()
    text = "lake " * 300 + "violin"
    nxt = conn.execute("SELECT d.doc_rowid, d.speaker, m.text_raw FROM search_docs d JOIN messages m ON m.message_id "
                       "= d.doc_id WHERE d.conversation_id = (SELECT conversation_id FROM messages WHERE message_id = ?) "
                       "AND d.position > (SELECT order_index FROM messages WHERE message_id = ?) ORDER BY d.position "
                       "LIMIT 1", (mid, mid)).fetchall()
    with conn:  # the turn and the one after it (whose context it is), re-indexed as the index stage would
        conn.execute("UPDATE messages SET text_raw = ? WHERE message_id = ?", (text, mid))
        search_sql.fts_delete(conn, [rowid, *[r for r, _s, _t in nxt]])
        search_sql.fts_insert(conn, [(rowid, speaker, text, "", prev), *[(r, sp, t, "", text) for r, sp, t in nxt]])
    n_prev = len(search_sql.fts_tokenizer(conn)(prev.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None,
                                                include_offsets=False, include_colocated=False))
    assert conn.execute("SELECT length, terms FROM search_doc_terms WHERE doc_rowid=?", (rowid,)).fetchone() \
        == (302 + n_prev, None)
    terms = ["lake", "violin", "ben"]
    a = _searcher(indexed, rank_all_below=1, common_term_cap=10**9).fts_pool(terms)
    with full_table(indexed):
        b = _searcher(indexed, rank_all_below=1, common_term_cap=10**9, forward_index=False).fts_pool(terms)
    assert _arrays(a) == _arrays(b)
    i = a.rowids.tolist().index(rowid)
    assert a.hits[i][0] >= 300 and a.hits[i][1] == 1.0 and a.length[i] == 302 + n_prev
    # every match ranked (a small vault): the forward index in memory, or the matches' rows read (C2, C6)
    for memory in (30000, 0):
        s = _searcher(indexed, memory_index_docs=memory)
        s._searches = 2  # as from a searcher's second search (C6)
        assert (s._memory_index() is not None) == (memory > 0)
        c = s.complete_pool(terms)
        assert _arrays(c) == _arrays(a), memory


def test_forward_index_follows_deletes_and_clears(synthetic, tmp_path):
    import shutil

    from kenning.api import Vault

    path = tmp_path / "copy.db"
    synthetic.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(synthetic.path if hasattr(synthetic, "path") else synthetic.conn.filename, path)
    v = Vault.open(path, overrides={"retrieval": {"vector": {"enabled": False}}})
    try:
        ids = [r for (r,) in v.conn.execute("SELECT doc_rowid FROM search_docs ORDER BY doc_rowid LIMIT 3")]
        with v.conn:
            search_sql.delete_docs(v.conn, ids)
        left = v.conn.execute("SELECT COUNT(*) FROM search_doc_terms WHERE doc_rowid IN (?,?,?)", ids).fetchone()[0]
        assert left == 0 and search_sql.doc_terms_complete(v.conn)
        with v.conn:
            search_sql.clear_index(v.conn)
        assert v.conn.execute("SELECT COUNT(*) FROM search_doc_terms").fetchone()[0] == 0
    finally:
        v.close()


def _index_stage_fails_at(vault, monkeypatch, method: str) -> None:
    """Run the index stage with ``SearchIndex.<method>`` raising: the stage must fail (and roll back)."""
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import StageFailed, run_stage
    from kenning.pipeline.stage_index import SearchIndex
    from kenning.pipeline.stages import STAGES

    def boom(*a, **k):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(SearchIndex, method, boom)
    with pytest.raises(StageFailed, match="injected failure"):
        run_stage(vault.conn, STAGES["index"], vault.config, Clock.from_option("2024-01-02T00:00:00Z"))


def test_forward_index_fill_rolls_back_with_the_stage(indexed, monkeypatch):
    """The fill is part of the index stage's one transaction: a failure after it leaves no forward row and no
    cleared entity hash behind."""
    conn = indexed.conn
    conn.execute("DELETE FROM search_doc_terms")
    hashes = conn.execute("SELECT doc_rowid, content_sha256 FROM search_docs ORDER BY doc_rowid").fetchall()
    _index_stage_fails_at(indexed, monkeypatch, "index_entities")
    assert conn.execute("SELECT COUNT(*) FROM search_doc_terms").fetchone()[0] == 0
    assert conn.execute("SELECT doc_rowid, content_sha256 FROM search_docs ORDER BY doc_rowid").fetchall() == hashes


def test_pool_without_the_forward_table_walks_fts5(indexed):
    """A vault from before migration 0063 opened read-only (no migration runs) has no search_doc_terms: the pool
    measures with FTS5 walks and gives the same results."""
    q = "What did Ben say about the lake and the violin?"
    want = _shape(_searcher(indexed, rank_all_below=1, common_term_cap=2).search(q, now=NOW, k=20))
    with indexed.conn:
        search_sql.fts_rebuild(indexed.conn, "full")  # such a vault's table: before migration 0120
    indexed.conn.execute("DROP TABLE search_doc_terms")
    s = _searcher(indexed, rank_all_below=1, common_term_cap=2)
    assert s._term_keys(["lake"]) is None
    assert _shape(s.search(q, now=NOW, k=20)) == want


def test_doc_term_rows_aggregate_equals_row_by_row(indexed):
    """The one-row aggregate read of the forward index (R51) and its row-by-row fallback agree, NULL records and
    missing documents included."""
    conn = indexed.conn
    ids = [r for (r,) in conn.execute("SELECT doc_rowid FROM search_docs ORDER BY doc_rowid")]
    conn.execute("UPDATE search_doc_terms SET terms = NULL, codes = NULL, counts = NULL WHERE doc_rowid = ?",
                 (ids[1],))
    want = ids[::-1] + [10**9]  # any order in, rowid order out; an unknown rowid is left out
    a = search_sql.doc_term_rows(conn, want)
    b = search_sql.doc_term_rows_plain(conn, want)
    assert a == b and a[0] == ids and a[2][1] is None and len(a[4]) == sum(n for n in a[2] if n)  # a code a token


def test_pool_pair_words_adds_the_pair_steps(synthetic):
    """R53: fts.pool_pair_words sets how many of the rarest common words pair up in conjunctive steps; more pairs,
    a superset of the documents (each step is the same walk)."""
    terms = ["garden", "lake", "violin", "turtle"]
    sizes = []
    prev: set[int] = set()
    for k in (0, 2, 3, 4):
        pool = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=3, pool_and_cap=4,
                    pool_pair_words=k).fts_pool(terms)
        ids = set(pool.rowids.tolist())
        assert prev <= ids
        prev = ids
        sizes.append(len(ids))
    assert sizes[0] < sizes[1] <= sizes[2] <= sizes[3] and sizes[1] < sizes[3]


# -- per-token document counts (R54) -------------------------------------------------------------------------

def _vocab(conn) -> dict[str, int]:
    """Every token's document count as FTS5 itself reports it (fts5vocab: a walk of each doclist)."""
    return {t: int(n) for t, n in conn.execute("SELECT term, doc FROM search_fts_vocab") if n}


def _counted(conn, terms) -> dict[str, int]:
    assert search_sql.term_docs_complete(conn)
    return search_sql.term_doc_counts(conn, list(terms))


def test_term_doc_counts_are_fts5s(indexed, synthetic):
    """The kept counts equal fts5vocab's for every token of both fixtures (turns, captions, the turn before,
    entity documents); a word no document holds is absent, as from fts5vocab."""
    for v in (indexed, synthetic):
        want = _vocab(v.conn)
        assert len(want) > 50
        assert _counted(v.conn, [*want, "zzzunseen"]) == want


def test_term_doc_counts_follow_inserts_deletes_and_clears(synthetic, tmp_path):
    """Deleting documents, a document whose forward row is NULL (a count past a byte), re-indexing it with other
    text, and clearing the index: the counts stay fts5vocab's."""
    import shutil

    from kenning.api import Vault

    path = tmp_path / "copy.db"
    synthetic.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(synthetic.conn.filename, path)
    v = Vault.open(path, overrides={"retrieval": {"vector": {"enabled": False}}})
    try:
        conn = v.conn
        ids = [r for (r,) in conn.execute("SELECT doc_rowid FROM search_docs ORDER BY doc_rowid LIMIT 5")]
        with conn:
            search_sql.delete_docs(conn, ids)
        want = _vocab(conn)
        assert _counted(conn, want) == want
        with conn:
            rowid = search_sql.insert_doc(conn, {
                "doc_kind": "message", "doc_id": "m-long", "conversation_id": None, "speaker": "Ben",
                "role": "user", "occurred_at_utc": "2023-09-01T00:00:00Z", "position": None, "event_start": None,
                "event_end": None, "content_sha256": "x", "source_changed_run_id": None, "indexed_run_id": "r"})
            search_sql.fts_insert(conn, [(rowid, "Ben", "lake " * 300 + "quokka", "", "the lake")])
        assert conn.execute("SELECT terms FROM search_doc_terms WHERE doc_rowid=?", (rowid,)).fetchone()[0] is None
        want = _vocab(conn)
        assert want["quokka"] == 1 and _counted(conn, want) == want
        with conn:  # re-indexed with other text, as the index stage does a changed turn
            search_sql.fts_delete(conn, [rowid])
            search_sql.fts_insert(conn, [(rowid, "Ben", "a wombat", "", "")])
        want = _vocab(conn)
        assert "quokka" not in want and want["wombat"] == 1
        assert _counted(conn, [*want, "quokka"]) == want
        with conn:
            search_sql.clear_index(conn)
        assert conn.execute("SELECT COUNT(*) FROM search_term_docs").fetchone()[0] == 0
        assert _counted(conn, ["lake", "wombat"]) == {}
    finally:
        v.close()


def test_term_doc_counts_filled_for_documents_indexed_before_them(indexed):
    """A vault indexed before migration 0064 (counts empty, not complete): document frequencies come from
    fts5vocab — same search —, the next index run counts every document from the forward index, once."""
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES

    conn = indexed.conn
    q = "What did Ben say about the lake and the violin?"
    want_search = _shape(_searcher(indexed, rank_all_below=1, common_term_cap=2).search(q, now=NOW, k=20))
    want = _vocab(conn)
    conn.execute("UPDATE search_term_docs SET docs = 0")  # the counts gone; the vocabulary's ids stay (Y1)
    conn.execute("UPDATE search_state SET term_docs_complete = 0")
    assert not search_sql.term_docs_complete(conn)
    assert search_sql.term_doc_counts(conn, list(want)) == want  # fts5vocab
    assert _shape(_searcher(indexed, rank_all_below=1, common_term_cap=2).search(q, now=NOW, k=20)) == want_search
    r = run_stage(conn, STAGES["index"], indexed.config, Clock.from_option("2024-01-02T00:00:00Z"))
    assert r.counts["term_docs_counted"] == len(want)
    assert _counted(conn, want) == want
    assert _shape(_searcher(indexed, rank_all_below=1, common_term_cap=2).search(q, now=NOW, k=20)) == want_search
    again = run_stage(conn, STAGES["index"], indexed.config, Clock.from_option("2024-01-03T00:00:00Z"))
    assert "term_docs_counted" not in again.counts and _counted(conn, want) == want


def test_term_doc_counts_fill_rolls_back_with_the_stage(indexed, monkeypatch):
    conn = indexed.conn
    conn.execute("UPDATE search_term_docs SET docs = 0")  # the ids stay (Y1)
    conn.execute("UPDATE search_state SET term_docs_complete = 0")
    _index_stage_fails_at(indexed, monkeypatch, "embed")
    assert conn.execute("SELECT COUNT(*) FROM search_term_docs WHERE docs != 0").fetchone()[0] == 0
    assert not search_sql.term_docs_complete(conn)


def test_term_doc_counts_without_the_table_use_fts5vocab(indexed):
    """A vault from before migration 0064 opened read-only (no migration runs): fts5vocab, same counts."""
    want = _vocab(indexed.conn)
    indexed.conn.execute("DROP TABLE search_term_docs")
    indexed.conn.execute("ALTER TABLE search_state DROP COLUMN term_docs_complete")
    assert not search_sql.term_docs_complete(indexed.conn)
    assert search_sql.term_doc_counts(indexed.conn, list(want)) == want


def test_term_doc_counts_uncountable_null_row_falls_back(indexed):
    """A NULL forward row without its keys (made before migration 0064) cannot be taken back when deleted: the
    counts are marked uncountable (-1), fts5vocab answers, the index stage does not re-count, a clear counts again."""
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES

    conn = indexed.conn
    with conn:
        rowid = _insert_long_doc(conn)
        search_sql.fts_insert(conn, [(rowid, "Ben", "lake " * 300 + "quokka", "", "")])
    assert conn.execute("SELECT COUNT(*) FROM search_doc_keys").fetchone()[0] == 1
    conn.execute("DELETE FROM search_doc_keys")
    with conn:
        search_sql.fts_delete(conn, [rowid])
    assert search_sql.term_docs_state(conn) == -1 and not search_sql.term_docs_complete(conn)
    want = _vocab(conn)
    assert "quokka" not in want and search_sql.term_doc_counts(conn, [*want, "quokka"]) == want
    r = run_stage(conn, STAGES["index"], indexed.config, Clock.from_option("2024-01-02T00:00:00Z"))
    assert "term_docs_counted" not in r.counts and search_sql.term_docs_state(conn) == -1
    with conn:
        search_sql.clear_index(conn)
    assert search_sql.term_docs_state(conn) == 1


# -- R59: fewer walks and fewer row fetches, the same pool and the same lanes --------------------------------------

def test_every_common_word_step_skipped_when_the_rarest_pair_is_complete(synthetic, monkeypatch):
    """R59: the documents holding every common word are among those holding the two rarest; when that pair's walk
    returned all of them (fewer than pool_and_cap) the conjunction is not walked, and the pool is the one the
    FTS5 walks give (which walk every step). When the pair fills its limit the conjunction is walked."""
    terms = ["garden", "lake", "violin", "turtle"]
    walked: list[str] = []
    real = search_sql.fts_rowids

    def counting(conn, match, limit, newest_first=True):
        walked.append(match)
        return real(conn, match, limit, newest_first)

    monkeypatch.setattr(search_sql, "fts_rowids", counting)
    base = _fts(synthetic, rank_all_below=1, common_term_cap=5)
    df = base.doc_freqs(terms)
    common = sorted(terms, key=lambda t: (df[t], t))
    assert all(df[t] > 5 for t in terms)
    every = " AND ".join(f'"{t}"' for t in common)
    pair_docs = len(real(synthetic.conn, f'"{common[0]}" AND "{common[1]}"', 10**6))
    assert pair_docs >= 2
    for cap, skipped in ((pair_docs + 1, True), (pair_docs, False), (1, False)):
        walked.clear()
        fwd = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=3, pool_and_cap=cap)
        old = _fts(synthetic, rank_all_below=1, common_term_cap=5, pool_cap=3, pool_and_cap=cap, forward_index=False)
        a = fwd.fts_pool(terms)
        assert (every not in walked) is skipped, cap
        assert _arrays(a) == _arrays(old.fts_pool(terms)), cap


def test_pool_filters_pretested_on_vector_metadata_keep_the_same_documents(indexed):
    """R59: with a vector index, a restricted lane's speaker / time filter over the pool is first tested on the
    vector lanes' per-document metadata, and only the documents that may pass are fetched from search_docs; what
    passes is what the row-by-row test without that metadata passes."""
    with_meta = _searcher(indexed, rank_all_below=1, common_term_cap=10**9)
    without = _searcher(indexed, embedder=False, rank_all_below=1, common_term_cap=10**9)
    dm = with_meta._doc_meta()
    assert dm is not None and without._doc_meta() is None
    terms = ["lake", "camping", "violin", "sister", "ben", "trip", "the", "i"]
    pa, pb = with_meta.fts_pool(terms), without.fts_pool(terms)
    assert _arrays(pa) == _arrays(pb) and len(pa) >= 5
    pos = np.arange(len(pa))
    ruled_out, passed = 0, 0
    for filters in ({"speakers": ["Ben"]}, {"speakers": ["ana", "Nobody"]}, {"start": "2023-07-01", "end": "2023-08-01"},
                    {"start": "2023-07-10", "end": "2023-07-20", "speakers": ["Ben"]}, {"start": "2031-01-01",
                                                                                         "end": "2031-02-01"}):
        a, b = with_meta._pool_keep(pa, filters)(pos), without._pool_keep(pb, filters)(pos)
        assert a.tolist() == b.tolist(), filters
        may = dm.may_pass(pa.rowids, speakers=filters.get("speakers"), start=filters.get("start"),
                          end=filters.get("end"))
        assert not (a & ~may).any()  # a superset of what passes
        ruled_out += int((~may).sum())
        passed += int(a.sum())
    assert ruled_out > 0 and passed > 0
    # a document without a vector is never ruled out by the metadata
    assert dm.may_pass(np.asarray([10**9], dtype=np.int64), speakers=["Ben"]).tolist() == [True]


def test_vector_scans_overlap_the_fts_lanes_with_the_same_results(indexed, monkeypatch):
    """R44: above quantize_above, the plain, speaker and time lanes' vector scans run in the worker thread while the
    FTS lanes run; every search gives what it gives with retrieval.vector.overlap off, byte for byte."""
    import json
    import threading

    from kenning.llm import index as index_mod

    threads: list[str] = []
    real = index_mod._Mirror.search

    def recording(self, *a, **k):
        threads.append(threading.current_thread().name)
        return real(self, *a, **k)

    monkeypatch.setattr(index_mod._Mirror, "search", recording)

    def searcher(overlap: bool) -> Searcher:
        return Searcher(indexed.conn, load_config(overrides={
            **HASH, "embeddings": {**HASH["embeddings"], "vector_index": {"quantize_above": 10, "rerank_min": 5}},
            "retrieval": {"vector": {"overlap": overlap}, "fts": {"rank_all_below": 1, "pool_min_ratio": 0}}}))

    on, off = searcher(True), searcher(False)
    assert on.vectors is not None and on.vectors.quantized()
    for q, kw, _lane in QUERIES:
        threads.clear()
        a = json.dumps(on.search(q, now=NOW, k=20, **kw).as_dict(), sort_keys=True, default=str)
        worker, scans = [t for t in threads if t.startswith("kenning-vectors")], len(threads)
        threads.clear()
        b = json.dumps(off.search(q, now=NOW, k=20, **kw).as_dict(), sort_keys=True, default=str)
        assert a == b, q
        assert worker and not any(t.startswith("kenning-vectors") for t in threads), q
        assert scans == len(threads), q  # each scan once: the lanes took the started ones
        assert not on._vec_jobs
    small = Searcher(indexed.conn, load_config(overrides=HASH))  # below quantize_above: no worker
    assert small.vectors is not None and not small.vectors.quantized()


def test_speaker_vids_from_one_sort_are_the_scanned_ones(indexed):
    """R59: a speaker's vids (the speaker filter's rows, R57) come from one stable sort of every vid by speaker:
    the same ascending vids as a pass over every vid, for one speaker, several, and none."""
    dm = _searcher(indexed)._doc_meta()
    codes = sorted(dm.speakers.values())
    assert len(codes) >= 2
    keys = [(c,) for c in codes] + [tuple(codes[:2]), tuple(codes), ()]
    for key in keys:
        want = np.nonzero(np.isin(dm.speaker, key))[0].astype(np.int64)
        got = dm.speaker_vids(list(key))
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), key
    assert sum(len(dm.speaker_vids([c])) for c in codes) == int((dm.speaker >= 0).sum()) > 0
