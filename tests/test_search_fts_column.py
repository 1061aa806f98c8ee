"""Issue 24 §2, decisions C1–C4: the search FTS table keeps no positions (detail=column, migration 0120); every
BM25 hit count is the forward index's. Search gives what it gave with the table of before (detail=full, FTS5's
bm25() and kenning_hits): the same documents in the same order with the same scores."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from kenning.api import Vault
from kenning.config import load_config
from kenning.retrieve.search import Searcher
from kenning.store import search as search_sql
from tests.conftest import HASH
from tests.fts_tables import full_table
from tests.old_vaults import migration_sql, vault_upto

NOW = "2023-10-01"
QUERIES = ["pottery bowl", "What did Ben say about the lake?", "what did Annie say about her sister",
           "what happened at the lake in July 2023", "trip to Lisbon", "blue ceramic bowl photo",
           "violin lake camping turtle", "where does my sister live?", "kids weekend camping", "car broke down"]
FILTERS = [{}, {"kinds": ["message"]}, {"kinds": ["entity"]}, {"as_of": "2023-08-01T00:00:00Z"},
           {"speakers": ["Ben"]}, {"start": "2023-07-01", "end": "2023-08-01"}]
SETTINGS = [{}, {"column_weights": {"speaker": 0.0, "body": 1.0, "extra": 0.5, "context": 0.3}},
            {"memory_index_docs": 0},
            {"memory_index_docs": 0, "column_weights": {"speaker": 0.0, "body": 1.0, "extra": 0.5, "context": 0.3}},
            {"rank_all_below": 1, "pool_min_ratio": 0},
            {"rank_all_below": 1, "pool_min_ratio": 0, "common_term_cap": 1, "pool_cap": 1, "pool_and_cap": 1,
             "pool_speaker_cap": 2}]


@pytest.fixture
def indexed(vault, transcript_file):
    vault.ingest([transcript_file], as_of="2024-01-01T00:00:00Z", self_name="Ana")
    return vault


def _s(v, **fts) -> Searcher:
    return Searcher(v.conn, load_config(overrides={**HASH, "retrieval": {"fts": fts}}))


def _rankings(v, **fts) -> list:
    """Every FTS lane ranking (doc rowid, score) of the queries under each filter, and the whole searches."""
    s = _s(v, **fts)
    s.search(QUERIES[0], now=NOW)  # a searcher's second search on builds the in-memory index (C6)
    s.search(QUERIES[0], now=NOW)
    memory = s._memory_index()
    assert (memory is not None) == (fts.get("memory_index_docs", 1) > 0 and not fts.get("forward_index") is False
                                    and search_sql.fts_detail(v.conn) == "column")
    return lane_rankings(s)


def lane_rankings(s: Searcher) -> list:
    """Each query's FTS lane ranking (key, score) under every filter, then its whole search's hits."""
    out = []
    for q in QUERIES:
        pq = s.parse(q, dt.date(2023, 10, 1), None)
        for f in FILTERS:
            s._pool, s._pool_terms = None, list(pq.terms)
            s._pool_speakers = [(sp, pq.terms) for sp in pq.speakers]
            out.append((q, json.dumps(f), [(c.key, c.score) for c in s.fts_lane("fts", pq.terms, 1.0, 50, **f).items]))
        out.append((q, "search", [(h.get("message_id") or h.get("entity_id"), h["score"])
                                  for h in s.search(q, now=NOW, k=20).hits]))
    return out


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for (q, f, ra), (q2, f2, rb) in zip(a, b):
        assert (q, f) == (q2, f2)
        assert [k for k, _ in ra] == [k for k, _ in rb], (q, f)
        assert [s for _, s in ra] == pytest.approx([s for _, s in rb], rel=1e-9), (q, f)


def test_fresh_vault_has_the_table_without_positions(indexed):
    assert search_sql.fts_detail(indexed.conn) == "column"
    assert "detail=column" in migration_sql(120)


@pytest.mark.parametrize("fts", SETTINGS, ids=["small", "small-no-speaker-column", "small-no-memory", "small-no-memory-no-speaker-column", "pool", "pruned"])
def test_results_are_those_of_the_table_with_positions(indexed, fts):
    """C2, C6: every lane's ranking and the whole search, every match ranked (small vault: FTS5's bm25() before; now
    from the forward index in memory, or read per query) and through the shared pool (pruned or not), equal those of
    the table with positions, score for score."""
    ours = _rankings(indexed, **fts)
    assert sum(len(r) for _q, _f, r in ours) > 100 and any(r for _q, f, r in ours if "entity" in f)
    with full_table(indexed):
        assert search_sql.fts_detail(indexed.conn) == "full"
        theirs = _rankings(indexed, forward_index=False, **fts)
    _same(ours, theirs)


def test_the_refill_is_the_index_stages_table(indexed):
    """Migration 0120 makes the table again from the vault (DOC_COLUMNS_SQL, copied into the migration): the same
    tokens in the same columns and the same column sizes as the index stage wrote — turns with captions and the
    turn before, entities with aliases and the owner's names."""
    conn = indexed.conn
    assert search_sql.DOC_COLUMNS_SQL.format(where="").strip() in migration_sql(120)

    def table() -> tuple:
        conn.execute("CREATE VIRTUAL TABLE temp.v_col USING fts5vocab(main, search_fts, col)")
        try:
            return (conn.execute("SELECT term, col, doc FROM temp.v_col ORDER BY 1, 2").fetchall(),
                    conn.execute("SELECT id, sz FROM search_fts_docsize ORDER BY id").fetchall())
        finally:
            conn.execute("DROP TABLE temp.v_col")

    built = table()
    cols = {c for _t, c, _d in built[0]}
    assert cols == {"speaker", "body", "extra", "context"} and len(built[1]) > 10
    with conn:
        search_sql.fts_rebuild(conn, "column")
    assert table() == built
    # an entity document's other names: its alias and the owner's name
    extra = {r[0]: r[3] for r in search_sql.doc_columns(conn)}
    assert any("Annie" in e for e in extra.values())


def test_upgrade_from_a_vault_before_0120(indexed, tmp_path):
    """A vault as migrations up to 0119 left it (its FTS table with positions): opening it runs 0120, which makes
    the table without positions from the vault; search gives the same hits and scores before and after. An empty
    vault of 0119 upgrades too."""
    path = indexed.path
    with indexed.conn:  # the vault of before: its table with positions, migration 0120 not applied
        search_sql.fts_rebuild(indexed.conn, "full")
        indexed.conn.execute("DELETE FROM schema_migrations WHERE version = 120")
    want = _rankings(indexed, forward_index=False)
    indexed.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    indexed.close()
    v = Vault.open(path, overrides=HASH)
    try:
        assert search_sql.fts_detail(v.conn) == "column"
        assert v.conn.execute("SELECT COUNT(*) FROM schema_migrations WHERE version = 120").fetchone()[0] == 1
        _same(_rankings(v), want)
    finally:
        v.close()
    empty = vault_upto(119)
    assert "detail=column" not in empty.execute("SELECT sql FROM sqlite_master WHERE name='search_fts'").fetchone()[0]
    with empty:
        empty.execute(migration_sql(120))
    assert search_sql.fts_detail(empty) == "column"
    assert empty.execute("SELECT COUNT(*) FROM search_fts_vocab").fetchone()[0] == 0


def _people_doc() -> dict:
    turns = [("Anna Lee", "We walked around the lake and fed the ducks."),
             ("Lee Anna", "The lake was frozen when I skated there."),
             ("Anna Marie Lee", "I painted the lake at sunset."),
             ("Anna Lee", "Next time we bring a picnic to the lake."),
             ("Lee Anna", "I prefer the lake in spring, honestly."),
             ("Anna Lee", "Ducks at the lake again today.")]
    return {"format": "kenning.transcript/1", "transcript_id": "names", "title": "names",
            "participants": [{"id": n.lower().replace(" ", "-"), "name": n} for n in
                             ("Anna Lee", "Lee Anna", "Anna Marie Lee")],
            "sessions": [{"id": "s1", "started_at": "2023-05-08T13:56:00Z",
                          "turns": [{"id": f"t{i}", "speaker": sp, "text": tx} for i, (sp, tx) in enumerate(turns)]}]}


def test_speaker_step_keeps_the_phrase(tmp_path):
    """C3: without positions FTS5 has no phrase query; the pool's speaker step takes the documents holding every
    word of the name in the speaker column and keeps those whose speaker has them one after the other — the
    documents the phrase gave, not "Lee Anna"'s or "Anna Marie Lee"'s."""
    f = tmp_path / "names.json"
    f.write_text(json.dumps(_people_doc()), encoding="utf-8")
    v = Vault.open(tmp_path / "n.db", overrides=HASH)
    try:
        v.ingest([f], as_of="2024-01-01T00:00:00Z")
        s = _s(v)
        got = s._speaker_phrase_rowids('({speaker} : ("anna" AND "lee")) AND ("lake")', ["anna", "lee"], 10)
        speakers = search_sql.speaker_fields(v.conn, got)
        assert len(got) == 3 and set(speakers.values()) == {"Anna Lee"} and got == sorted(got, reverse=True)
        assert s._speaker_phrase_rowids('({speaker} : ("anna" AND "lee")) AND ("lake")', ["anna", "lee"], 2) \
            == got[:2]
        fts = {"rank_all_below": 1, "pool_min_ratio": 0, "common_term_cap": 1, "pool_cap": 1, "pool_and_cap": 1,
               "pool_speaker_cap": 2}
        q = "what did Anna Lee say about the lake"
        terms = s.parse(q, dt.date(2023, 10, 1), None).terms
        ours = _s(v, **fts)
        a = ours.fts_pool(terms, [("Anna Lee", ["lake"])])
        hits_a = [(h["message_id"], h["score"]) for h in ours.search(q, now=NOW, k=10).hits]
        with full_table(v):
            old = _s(v, forward_index=False, **fts)
            b = old.fts_pool(terms, [("Anna Lee", ["lake"])])
            hits_b = [(h["message_id"], h["score"]) for h in old.search(q, now=NOW, k=10).hits]
        assert a.rowids.tolist() == b.rowids.tolist() and a.hits.tolist() == b.hits.tolist()
        assert set(got[:2]) <= set(a.rowids.tolist())
        assert hits_a == hits_b and hits_a
    finally:
        v.close()


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """800 turns of the search benchmark's vocabulary (as tests/test_search_pool.py), FTS only."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import run as bench

    v, _ = bench.build_vault(tmp_path_factory.mktemp("syn") / "v.db", 800, "none")
    yield v
    v.close()


def test_results_on_a_larger_vault(synthetic):
    """C2, C6 where a lane's filter sees its candidates in chunks (filtered in SQL, as the FTS5 query joined them):
    800 turns, speaker / time / as-of / kind filters, every match ranked and the pool, against the table with
    positions."""
    queries = ["what did Sam say about the garden?", "Ana concert in May 2023", "the lake last summer",
               "violin and turtle", "anything about coffee", "garden lake violin coffee turtle concert"]
    speakers = [s for s in search_sql.speakers(synthetic.conn) if s][:2]
    filters = [{}, {"as_of": "2023-06-30T23:59:59.999Z"}, {"start": "2023-03-01", "end": "2023-07-01"},
               {"kinds": ["message"]}, *[{"speakers": [s]} for s in speakers]]

    def rankings(**fts) -> list:
        s = Searcher(synthetic.conn, load_config(overrides={"retrieval": {"vector": {"enabled": False}, "fts": fts}}))
        out = []
        for q in queries:
            s.search(q, now="2023-12-31")
            pq = s.parse(q, dt.date(2023, 12, 31), None)
            for f in filters:
                s._pool, s._pool_terms, s._pool_speakers = None, list(pq.terms), []
                out.append((q, json.dumps(f), [(c.key, c.score) for c in s.fts_lane("f", pq.terms, 1.0, 50, **f).items]))
        return out

    settings = [{}, {"memory_index_docs": 0}, {"rank_all_below": 1, "pool_min_ratio": 0}]
    ours = [rankings(**fts) for fts in settings]
    assert sum(len(r) for _q, _f, r in ours[0]) > 500
    with full_table(synthetic):
        theirs = [rankings(forward_index=False, **fts) for fts in settings]
    for a, b in zip(ours, theirs):
        _same(a, b)
