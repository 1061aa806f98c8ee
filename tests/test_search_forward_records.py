"""Y1 (issue 24 §2): the forward index in 4-byte records — token ids from the vocabulary, a count code byte with
escaped counts — gives FTS5's pool float for float, and a vault indexed in the 12-byte format upgrades."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from kenning.config import load_config
from kenning.retrieve.search import Searcher
from kenning.store import search as search_sql
from tests.conftest import HASH
from tests.fts_tables import full_table

NOW = "2023-10-01"
TERMS = ["lake", "violin", "ben", "camping", "zzzunseen"]


@pytest.fixture
def indexed(vault, transcript_file):
    vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return vault


def _s(vault, **fts) -> Searcher:
    fts = {"pool_min_ratio": 0, "rank_all_below": 1, "common_term_cap": 10**9, **fts}
    return Searcher(vault.conn, load_config(overrides={**HASH, "retrieval": {"fts": fts}}))


def _arrays(pool) -> tuple[list, list, list]:
    return pool.rowids.tolist(), pool.hits.tolist(), pool.length.tolist()


def test_count_codes_round_trip_and_escape():
    grid = np.array([(s, b, e, c) for s in range(3) for b in range(10) for e in range(3) for c in range(10)
                     if s + b + e + c], dtype=np.int64)
    code = search_sql.encode_counts(grid)
    fits = (grid[:, 0] <= 1) & (grid[:, 2] <= 1) & (grid[:, 1] <= 7) & (grid[:, 3] <= 7)
    assert ((code == 0) == ~fits).all()  # only a row that does not fit escapes; code 0 is never a real row
    escaped = grid[~fits]
    rank = np.cumsum(code == 0) - 1
    assert (search_sql.decode_counts(code.astype(np.uint8), escaped, rank) == grid).all()


def test_varint_gaps_round_trip_per_document():
    rng = np.random.default_rng(7)
    docs = [np.unique(rng.integers(1, hi, size=n)) for n, hi in [(5, 50), (0, 10), (40, 10**6), (1, 2**30), (7, 300)]]
    blobs = []
    for ids in docs:
        gaps = ids.copy()
        gaps[1:] -= ids[:-1]
        blobs.append(search_sql.encode_varints(gaps)[0].tobytes())
    assert len(blobs[0]) == 5 and blobs[1] == b""  # small gaps: a byte each
    got = search_sql.decode_ids(b"".join(blobs), [len(d) for d in docs])
    assert got.tolist() == np.concatenate(docs).tolist()


def test_records_are_four_bytes_and_escapes_match_fts5(indexed):
    """Counts past a code (8 in the body, 2 speaker words) go in `counts`; the pool still equals FTS5's."""
    conn = indexed.conn
    with conn:
        rowid = search_sql.insert_doc(conn, {
            "doc_kind": "message", "doc_id": "m-rep", "conversation_id": None, "speaker": "Ben Ben", "role": "user",
            "occurred_at_utc": "2023-09-01T00:00:00Z", "position": None, "event_start": None, "event_end": None,
            "content_sha256": "x", "source_changed_run_id": None, "indexed_run_id": "r"})
        search_sql.fts_insert(conn, [(rowid, "Ben Ben", "lake " * 8 + "violin", "camping", "the lake " * 9)])
    n, terms, codes, counts = conn.execute("SELECT length, terms, codes, counts FROM search_doc_terms "
                                           "WHERE doc_rowid=?", (rowid,)).fetchone()
    assert n == 2 + 9 + 1 + 18 and len(codes) == 5 and len(terms) <= 2 * 5  # ben, lake, violin, camping, the
    assert len(counts) == 4 * 3  # ben (speaker 2), lake (body 8), the (context 9) escape; the rest fit a code
    a = _s(indexed).fts_pool(TERMS)
    with full_table(indexed, [(rowid, "Ben Ben", "lake " * 8 + "violin", "camping", "the lake " * 9)]):
        b = _s(indexed, forward_index=False).fts_pool(TERMS)
    assert rowid in a.rowids.tolist() and _arrays(a) == _arrays(b)
    assert search_sql.query_term_ids(conn, [search_sql.term_key("zzzunseen")]) == [-1]  # no id: no hits
    from kenning.retrieve.search import FtsPool

    s = _s(indexed)
    words = ["lake", "zzzunseen"]
    pool = FtsPool.from_doc_terms(s, words, s._term_keys(words), [rowid], [1.0, 1.0, 1.0, 1.0], None, [1, 0], 10, 100)
    assert pool.hits.tolist() == [[8.0 + 9.0, 0.0]]


def test_term_ids_are_assigned_once_in_key_order(indexed):
    conn = indexed.conn
    ids = dict(conn.execute("SELECT key, id FROM search_term_docs"))
    assert sorted(ids.values()) == list(range(1, len(ids) + 1))
    keys = np.asarray(sorted({np.int64(k).view(np.uint64) for k in ids}), dtype=np.uint64)
    assert (search_sql.term_ids(conn, keys, assign=False) > 0).all()
    new = np.asarray([1, 2, 3], dtype=np.uint64)
    assert search_sql.term_ids(conn, new, assign=False).tolist() == [-1, -1, -1]
    got = search_sql.term_ids(conn, new)
    assert got.tolist() == [len(ids) + 1, len(ids) + 2, len(ids) + 3]
    assert search_sql.term_ids(conn, new).tolist() == got.tolist()


def _to_twelve_bytes(conn) -> None:
    """Rewrite the vault's forward index in the layout of migrations 0063/0064 (12-byte records, keys, no ids)."""
    key_of = {i: np.int64(k).view(np.uint64) for k, i in conn.execute("SELECT key, id FROM search_term_docs")}
    old_dtype = np.dtype([("key", "<u8"), ("n", "u1", (4,))])
    rows = []
    for r, n, terms, codes, counts in conn.execute("SELECT doc_rowid, length, terms, codes, counts "
                                                   "FROM search_doc_terms").fetchall():
        if terms is None:
            rows.append((r, n, None))
            continue
        code = np.frombuffer(codes, dtype=np.uint8)
        esc = np.frombuffer(counts or b"", dtype=np.uint8).reshape(-1, 4).astype(np.int64)
        cnt = search_sql.decode_counts(code, esc, np.cumsum(code == 0) - 1)
        old = np.empty(len(code), dtype=old_dtype)
        old["key"] = [key_of[int(i)] for i in search_sql.decode_ids(terms, [len(code)])]
        old["n"] = cnt
        rows.append((r, n, np.sort(old, order="key").tobytes()))
    keys = [(r, np.asarray([key_of[int(i)] for i in np.frombuffer(k, dtype="<u4")], dtype="<u8").tobytes())
            for r, k in conn.execute("SELECT doc_rowid, keys FROM search_doc_keys").fetchall()]
    docs = conn.execute("SELECT key, docs FROM search_term_docs").fetchall()
    for t in ("search_doc_terms", "search_term_docs"):
        conn.execute(f"DROP TABLE {t}")
    conn.execute("CREATE TABLE search_doc_terms (doc_rowid INTEGER PRIMARY KEY, length INTEGER NOT NULL, terms BLOB)")
    conn.execute("CREATE TABLE search_term_docs (key INTEGER PRIMARY KEY, docs INTEGER NOT NULL)")
    conn.executemany("INSERT INTO search_doc_terms VALUES (?,?,?)", rows)
    conn.executemany("UPDATE search_doc_keys SET keys=? WHERE doc_rowid=?", [(k, r) for r, k in keys])
    conn.executemany("INSERT INTO search_term_docs VALUES (?,?)", docs)


def _migrate_0112(conn) -> None:
    from kenning.store import search_recode

    search_recode.register(conn)
    sql = (resources.files("kenning.store.migrations") / "0112_search_term_ids.sql").read_text()
    with conn:
        conn.execute(sql)


def _ids(result) -> list:
    return [h.get("message_id") or h.get("entity_id") for h in result.hits]


@pytest.mark.parametrize("counted", [True, False])
def test_upgrade_from_the_twelve_byte_rows_keeps_search(indexed, counted):
    """Migration 0112 on a vault indexed in the 12-byte layout: with complete counts it recodes every row (the pool
    still FTS5's, the counts fts5vocab's, no index run needed); else it empties them, search reads FTS5 until the
    next index run refills the rows and recounts. Search gives the same hits before, between and after."""
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES

    conn = indexed.conn
    q = "What did Ben say about the lake and the violin?"
    with conn:  # a document with a count past a byte: a NULL row whose keys are kept
        rowid = search_sql.insert_doc(conn, {
            "doc_kind": "message", "doc_id": "m-long", "conversation_id": None, "speaker": "Ben", "role": "user",
            "occurred_at_utc": "2023-09-01T00:00:00Z", "position": None, "event_start": None, "event_end": None,
            "content_sha256": "x", "source_changed_run_id": None, "indexed_run_id": "r"})
        search_sql.fts_insert(conn, [(rowid, "Ben", "lake " * 300 + "violin", "", "the lake " * 9)])
    long_doc = [(rowid, "Ben", "lake " * 300 + "violin", "", "the lake " * 9)]
    with full_table(indexed, long_doc):  # C1: the table of before migration 0120, whose FTS5 counts the hits
        want = _ids(indexed.search(q, now=NOW, k=20))
    vocab = dict(conn.execute("SELECT term, doc FROM search_fts_vocab"))
    with conn:
        _to_twelve_bytes(conn)
        if not counted:
            conn.execute("UPDATE search_state SET term_docs_complete = 0")
    _migrate_0112(conn)
    n_rows = conn.execute("SELECT COUNT(*) FROM search_doc_terms").fetchone()[0]
    assert search_sql.doc_terms_complete(conn) is counted and search_sql.term_docs_complete(conn) is counted
    assert (n_rows > 0) is counted
    with full_table(indexed, long_doc):  # a vault of migration 0112's time has the table with positions
        assert _ids(indexed.search(q, now=NOW, k=20)) == want
        if counted:  # recoded: ids are ranks in key order; the NULL row's keys became ids
            assert conn.execute("SELECT terms FROM search_doc_terms WHERE doc_rowid=?", (rowid,)).fetchone()[0] is None
            assert len(conn.execute("SELECT keys FROM search_doc_keys WHERE doc_rowid=?",
                                    (rowid,)).fetchone()[0]) == 4 * 4
            a, b = _s(indexed).fts_pool(TERMS), _s(indexed, forward_index=False).fts_pool(TERMS)
            assert _arrays(a) == _arrays(b) and len(a) > 0
    r = run_stage(conn, STAGES["index"], indexed.config, Clock.from_option("2024-01-02T00:00:00Z"))
    assert ("doc_terms_filled" in r.counts) is not counted
    # the long document has no message behind it: the run deletes it, its counts taken back through its ids
    assert r.counts["docs_removed"] == 1
    assert search_sql.doc_terms_complete(conn) and search_sql.term_docs_complete(conn)
    vocab = dict(conn.execute("SELECT term, doc FROM search_fts_vocab"))
    assert search_sql.term_doc_counts(conn, list(vocab)) == vocab
    ours, a = _ids(_s(indexed).search(q, now=NOW, k=20)), _s(indexed).fts_pool(TERMS)
    with full_table(indexed):
        assert ours == _ids(_s(indexed, forward_index=False).search(q, now=NOW, k=20))
        b = _s(indexed, forward_index=False).fts_pool(TERMS)
    assert _arrays(a) == _arrays(b) and len(a) > 0


def test_a_document_without_tokens_between_others(indexed):
    """A document whose columns hold no token (punctuation only) keeps empty blobs, and the documents around it
    decode to their own ids."""
    conn = indexed.conn
    with conn:
        made = search_sql.doc_terms_many(conn, [("Ben", "lake lake violin", "", ""), ("", "!!! ...", "", ""),
                                                ("", "violin", "", "lake")])
    assert made[1] == (0, b"", b"", None)
    ids = search_sql.decode_ids(b"".join(m[1] for m in made), [len(m[2]) for m in made])
    want = search_sql.term_ids(conn, np.unique(np.asarray(
        [search_sql.term_key(t) for t in ("ben", "lake", "violin")], dtype=np.uint64)), assign=False)
    by_key = dict(zip(sorted(np.asarray([search_sql.term_key(t) for t in ("ben", "lake", "violin")],
                                        dtype=np.uint64).tolist()), want.tolist()))
    ben, lake, violin = (by_key[search_sql.term_key(t)] for t in ("ben", "lake", "violin"))
    assert ids.tolist() == sorted([ben, lake, violin]) + sorted([lake, violin])


def test_decode_ids_one_running_sum_matches_per_document_decoding():
    """C8: the documents' gap streams decoded by one running sum (each document's first gap lowered by the previous
    document's last id), in int32 for the search, equal each document decoded alone — empty documents between,
    multi-byte gaps at document starts and ends."""
    rng = np.random.default_rng(8)
    docs = [np.unique(rng.integers(1, hi, size=n)) for n, hi in
            [(0, 5), (3, 200), (0, 5), (0, 5), (60, 2**21), (1, 2**30), (9, 20), (0, 5), (200, 5000), (2, 2**28)]]
    blobs = []
    for ids in docs:
        gaps = ids.copy()
        gaps[1:] -= ids[:-1]
        blobs.append(search_sql.encode_varints(gaps)[0].tobytes())
    buf, per = b"".join(blobs), [len(d) for d in docs]
    want = np.concatenate(docs).tolist()
    alone = [search_sql.decode_ids(b, [len(d)]).tolist() for b, d in zip(blobs, docs)]
    assert sum(alone, []) == want
    got64, got32 = search_sql.decode_ids(buf, per), search_sql.decode_ids(buf, per, np.int32)
    assert got64.dtype == np.int64 and got32.dtype == np.int32
    assert got64.tolist() == want and got32.tolist() == want
    assert search_sql.decode_ids(b"", [0, 0], np.int32).tolist() == []


def test_fts_rowids_aggregate_equals_row_by_row(indexed):
    """C9: the matches' rowids in one aggregate row are the rows the plain statement gives, in its order, limit
    kept, oldest or newest first."""
    conn = indexed.conn
    n = 0
    for match in ('"the"', '"i" OR "you"', '"zzzznotaword"', '{body} : ("a" OR "to")'):
        for newest in (True, False):
            for limit in (-1, 1, 3):
                plain = [int(r) for (r,) in conn.execute(
                    f"SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid "
                    f"{'DESC' if newest else 'ASC'} LIMIT ?", (match, limit))]
                got = search_sql.fts_rowids(conn, match, limit, newest_first=newest)
                assert got == plain
                n += len(got)
    assert n > 0
