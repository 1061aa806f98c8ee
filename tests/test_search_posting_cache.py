"""Issue 24 §2, decision C10: a larger vault's searcher keeps the complete postings of the words of the complete
pools it built (bounded, least recently used out, dropped when the index changes); a complete pool whose every word
is kept is put together from them. Rankings equal those read from the forward rows, score for score."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.retrieve.search import Searcher
from kenning.store import search as search_sql
from tests.conftest import HASH
from tests.test_search_fts_column import NOW, QUERIES, _same, lane_rankings


@pytest.fixture
def indexed(vault, transcript_file):
    vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return vault


def _s(v, **fts) -> Searcher:
    # no in-memory index: every match of a lane is read per query (a vault past fts.memory_index_docs, C7)
    return Searcher(v.conn, load_config(overrides={**HASH, "retrieval": {"fts": {"memory_index_docs": 0, **fts}}}))


def _counting(monkeypatch) -> list:
    calls: list = []
    real = search_sql.doc_term_rows

    def counting(conn, rowids):
        calls.append(None if rowids is None else len(rowids))
        return real(conn, rowids)

    monkeypatch.setattr(search_sql, "doc_term_rows", counting)
    return calls


def test_kept_postings_rank_as_the_forward_rows(indexed, monkeypatch):
    """The same rankings with the cache off, on and cold, and on and warm (every word kept: no forward row read)."""
    off = lane_rankings(_s(indexed, posting_cache_mb=0))
    assert sum(len(r) for _q, _f, r in off) > 100
    s = _s(indexed)
    cold = lane_rankings(s)
    assert s._postings.nbytes > 0 and len(s._postings._lists) >= 10
    calls = _counting(monkeypatch)
    warm = lane_rankings(s)
    assert calls == []  # every complete pool from the kept postings
    _same(off, cold)
    _same(off, warm)
    assert [r for _q, _f, r in warm] == [r for _q, _f, r in cold]  # bit for bit


def test_the_cache_is_bounded_and_dropped_when_the_index_changes(indexed, monkeypatch):
    s = _s(indexed, posting_cache_mb=0.002)  # 2 KiB: a few words
    limit = int(0.002 * 1024 * 1024)
    for q in QUERIES:
        s.search(q, now=NOW)
        assert s._postings.nbytes <= limit
        assert s._postings.nbytes == sum(a.nbytes for item in s._postings._lists.values() for a in item)
    assert s._postings._lists
    big = _s(indexed)
    big.search("pottery bowl", now=NOW)
    kept = dict(big._postings._lists)
    assert kept
    with indexed.conn:
        search_sql.bump_version(indexed.conn)  # what the index stage does when documents change
    calls = _counting(monkeypatch)
    big.search("pottery bowl", now=NOW)
    assert calls  # read again: the kept postings were of the index before
    assert set(big._postings._lists) == set(kept)


def test_some_words_kept_reads_only_the_others_documents(indexed, monkeypatch):
    """C11: with "bowl" kept, a pool over "pottery bowl lake" reads the documents holding "pottery" or "lake" only;
    the documents holding only "bowl" come from its postings. The ranking is the one read whole."""
    s = _s(indexed)
    s.complete_pool(["bowl"])
    assert len(s._postings._lists) == 1
    calls = _counting(monkeypatch)
    words = ["pottery", "bowl", "lake"]
    pool = s.complete_pool(words)
    others = search_sql.fts_rowids(indexed.conn, '"pottery" OR "lake"', -1)
    only_bowl = set(search_sql.fts_rowids(indexed.conn, '"bowl"', -1)) - set(others)
    assert calls == [len(others)] and only_bowl and len(pool) == len(others) + len(only_bowl)
    whole = _s(indexed, posting_cache_mb=0).complete_pool(words)
    assert pool.rowids.tolist() == whole.rowids.tolist()
    assert pool.hits.tolist() == whole.hits.tolist() and pool.length.tolist() == whole.length.tolist()
    for sub in (words, ["bowl"], ["lake", "bowl"]):
        assert pool.rank(sub, 50) == whole.rank(sub, 50)
    assert len(s._postings._lists) == 3


def test_fresh_queries_come_from_other_turns(indexed):
    """C13: `search_same.make_queries(turns=t)` takes words of the turns with doc_rowid % 97 == t only; the default
    (0) is the query set of C2's comparisons."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import search_same

    conn = indexed.conn
    assert search_same.make_queries(conn, 5) == search_same.make_queries(conn, 5, turns=0)
    rows = {r: t for r, t in conn.execute("SELECT d.doc_rowid, m.text_raw FROM search_docs d JOIN messages m "
                                          "ON m.message_id = d.doc_id WHERE d.doc_kind = 'message'")}
    for t in (1, 2):
        words = {w.lower() for r, x in rows.items() if r % 97 == t for w in search_same.WORD.findall(x or "")}
        got = search_same.make_queries(conn, 5, turns=t)
        assert got and all(w in words for q in got for w in q.split() if w not in ("what", "did", "say", "about", "in")
                           and not w.isdigit() and w[0].islower())
