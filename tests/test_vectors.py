"""The sqlite-vec vector index: upsert, delete, exact top-k with filters, both engines, mirror consistency."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.config import load_config
from kenning.llm.errors import VectorIndexError
from kenning.llm.index import VectorIndex, drop_mirrors
from kenning.store import open_store, transaction
from kenning.store import vectors as vsql
from kenning.store.connection import rows, scalar

BELIEFS = [
    ("b1", "i am patient", "TRAIT"), ("b2", "i hate mornings", "PREFERENCE"), ("b3", "i love hiking", "PREFERENCE"),
    ("b4", "i value honesty", "VALUE"), ("b5", "i am a night owl", "TRAIT"), ("b6", "i am afraid of flying", None),
]


@pytest.fixture
def cfg():
    return load_config(overrides={"embeddings": {"backend": "hash", "dimension": 64}})


@pytest.fixture
def idx(tmp_path, cfg):
    drop_mirrors()
    conn = open_store(tmp_path / "v.db")
    yield VectorIndex(conn, cfg)
    conn.close()


def test_table_created_from_the_config_dimension(idx):
    assert idx.active() is None
    t = idx.ensure_active()
    assert t["model_id"] == "hash:kenning-hash-v1" and t["dimension"] == 64 and t["status"] == "active"
    ddl = scalar(idx.conn, "SELECT sql FROM sqlite_master WHERE name=?", (t["table_name"],))
    assert "int8[64]" in ddl and "distance_metric=cosine" in ddl and t["element"] == "int8"  # the default (X3)


@pytest.mark.parametrize("engine", ["numpy", "sqlite"])
def test_upsert_search_filters_delete(idx, engine):
    idx.engine = engine
    assert idx.upsert("beliefs", BELIEFS) == 6
    idx.upsert("notes", [("n1", "i am patient with my kids")])
    hits = idx.search("I'm patient", k=3, space="beliefs")
    assert hits[0].item_id == "b1" and hits[0].space == "beliefs" and hits[0].kind == "TRAIT"
    assert hits[0].score == pytest.approx(float(idx.embedder_for("hash:kenning-hash-v1", 64).embed(
        ["I'm patient"])[0] @ idx.embedder_for("hash:kenning-hash-v1", 64).embed(["i am patient"])[0]), abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True) and len(hits) == 3
    everywhere = idx.search("i am patient", k=10)
    assert {h.space for h in everywhere} == {"beliefs", "notes"} and len(everywhere) == 7
    traits = idx.search("i am patient", k=10, space="beliefs", kinds=["TRAIT"])
    assert {h.item_id for h in traits} == {"b1", "b5"}
    none_kind = idx.search("i am patient", k=10, space="beliefs", kinds=[None])
    assert [h.item_id for h in none_kind] == ["b6"] and none_kind[0].kind is None
    allowed = idx.search("i am patient", k=10, space="beliefs", item_ids=["b2", "b3", "nope"])
    assert {h.item_id for h in allowed} == {"b2", "b3"}
    assert idx.search("i am patient", k=10, space="beliefs", min_score=0.99)[0].item_id == "b1"
    assert idx.search("i am patient", k=10, space="elsewhere") == []
    assert idx.delete("beliefs", ["b1", "missing"]) == 1
    assert "b1" not in {h.item_id for h in idx.search("i am patient", k=10, space="beliefs")}
    assert vsql.count_items(idx.conn) == 6 and vsql.count_vectors(idx.conn, idx.active()["table_name"]) == 6


def test_upsert_skips_unchanged_and_reembeds_changed(idx):
    idx.upsert("beliefs", BELIEFS)
    assert idx.upsert("beliefs", BELIEFS) == 0
    assert idx.upsert("beliefs", [("b2", "i love mornings", "PREFERENCE")]) == 1
    assert idx.search("i love mornings", k=1, space="beliefs")[0].item_id == "b2"
    assert idx.upsert("beliefs", [("b2", "i love mornings", "TRAIT")]) == 1     # a kind change counts too
    assert idx.search("mornings", k=1, kinds=["TRAIT"])[0].item_id == "b2"
    with pytest.raises(VectorIndexError, match="no text"):
        idx.upsert("beliefs", [("b9", "  ")])


def test_upsert_uses_given_vectors_only_from_the_active_model(idx):
    """A caller that embedded the texts already (seed 000's extractor) passes the vectors; they are stored as they
    are when they come from the active model, and re-embedded otherwise."""
    model = idx.ensure_active()["model_id"]
    v = np.zeros(64, dtype=np.float32)
    v[3] = 1.0
    assert idx.upsert("beliefs", [("g1", "i am patient", "TRAIT")], vectors=[v], model_id=model) == 1
    hit = idx.search(v, k=1, space="beliefs")[0]
    assert (hit.item_id, round(hit.score, 6)) == ("g1", 1.0)                # stored as given, not re-embedded
    assert idx.upsert("beliefs", [("g2", "i am calm", "TRAIT")], vectors=[v], model_id="other/model") == 1
    own = idx.search("i am calm", k=1, space="beliefs", item_ids=["g2"])[0]
    assert round(own.score, 5) == 1.0                                         # the active model's own vector
    with pytest.raises(VectorIndexError, match="vectors for"):
        idx.upsert("beliefs", [("g3", "i am kind")], vectors=[v, v], model_id=model)


def test_query_vector_checks(idx):
    idx.upsert("beliefs", BELIEFS)
    v = idx.embedder_for("hash:kenning-hash-v1", 64).embed(["i value honesty"])[0]
    assert idx.search(v, k=1)[0].item_id == "b4"
    assert idx.search(v, k=1, model_id="hash:kenning-hash-v1")[0].item_id == "b4"
    with pytest.raises(VectorIndexError, match="made by minilm"):
        idx.search(v, k=1, model_id="minilm:all-MiniLM-L6-v2")
    with pytest.raises(VectorIndexError, match="32 dimensions; the index has 64"):
        idx.search(np.zeros(32, dtype=np.float32), k=1)
    with pytest.raises(VectorIndexError, match="needs space"):
        idx.search("x", item_ids=["b1"])


def test_thresholds_follow_the_active_model(idx, cfg):
    idx.ensure_active()
    assert idx.thresholds() == cfg.embeddings.thresholds["kenning-hash-v1"]


def test_writes_join_the_callers_transaction(idx):
    idx.upsert("beliefs", BELIEFS[:2])
    with pytest.raises(RuntimeError):
        with transaction(idx.conn):
            idx.upsert("beliefs", BELIEFS[2:])
            assert len(idx.search("i love hiking", k=10)) == 6     # visible inside the transaction
            raise RuntimeError("roll back")
    assert vsql.count_items(idx.conn) == 2
    hits = idx.search("i love hiking", k=10)                         # the mirror noticed the rollback
    assert {h.item_id for h in hits} == {"b1", "b2"}


def test_mirror_sees_writes_from_another_connection(tmp_path, cfg):
    drop_mirrors()
    a = VectorIndex(open_store(tmp_path / "v.db"), cfg, engine="numpy")
    b = VectorIndex(open_store(tmp_path / "v.db"), cfg, engine="numpy")
    a.upsert("beliefs", BELIEFS[:3])
    assert len(b.search("i am patient", k=10)) == 3
    b.upsert("beliefs", BELIEFS[3:])
    a.delete("beliefs", ["b2"])
    for idx in (a, b):
        got = {h.item_id for h in idx.search("i am patient", k=10)}
        assert got == {"b1", "b3", "b4", "b5", "b6"}


def test_reader_in_another_process_view(tmp_path, cfg):
    """A read-only vault can search (numpy mirror and sqlite-vec) but never writes."""
    drop_mirrors()
    w = VectorIndex(open_store(tmp_path / "v.db"), cfg)
    w.upsert("beliefs", BELIEFS)
    ro = open_store(tmp_path / "v.db", readonly=True)
    for engine in ("numpy", "sqlite"):
        r = VectorIndex(ro, cfg, engine=engine)
        assert r.search("i value honesty", k=1)[0].item_id == "b4"
    with pytest.raises(Exception):
        VectorIndex(ro, cfg).upsert("beliefs", [("x", "new text")])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 120), k=st.integers(1, 15), n_kinds=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_numpy_and_sqlite_engines_agree_with_brute_force(tmp_path_factory, n, k, n_kinds, seed):
    drop_mirrors()
    # float32 storage: this checks the engines' exactness; int8 storage: test_int8_storage_round_trip_and_ranking
    cfg = load_config(overrides={"embeddings": {"backend": "hash", "dimension": 16,
                                                "vector_index": {"storage": "float32"}}})
    conn = open_store(tmp_path_factory.mktemp("agree") / "v.db")
    rng = np.random.default_rng(seed)
    words = ["calm", "honest", "tired", "curious", "brave", "quiet", "loud", "kind", "late", "early"]
    items = [(f"i{j}", " ".join(rng.choice(words, size=3)) + f" {j}", f"k{j % n_kinds}") for j in range(n)]
    idx = VectorIndex(conn, cfg)
    idx.upsert("s", items)
    query = " ".join(rng.choice(words, size=2))
    emb = idx.embedder_for("hash:kenning-hash-v1", 16)
    m = emb.embed([t for _, t, _ in items])
    q = emb.embed([query])[0]
    scores = m @ q
    for kinds in (None, ["k0"]):
        sel = [j for j in range(n) if kinds is None or items[j][2] in kinds]
        expect = sorted(sel, key=lambda j: -scores[j])[:k]
        for engine in ("numpy", "sqlite"):
            idx.engine = engine
            got = idx.search(query, k=k, space="s", kinds=kinds)
            assert len(got) == len(expect)
            # exact: the same scores in the same order (ids may swap only on exact ties)
            assert np.allclose([h.score for h in got], [scores[j] for j in expect], atol=1e-5)
    conn.close()


def test_vids_are_never_reused(idx):
    idx.upsert("s", [("a", "alpha"), ("b", "beta")])
    (vb,) = [r["vid"] for r in rows(idx.conn, "SELECT vid FROM vector_items WHERE item_id='b'")]
    idx.delete("s", ["b"])
    idx.upsert("s", [("c", "gamma")])
    (vc,) = [r["vid"] for r in rows(idx.conn, "SELECT vid FROM vector_items WHERE item_id='c'")]
    assert vc > vb


def test_status_counts_skip_vec0_shadow_tables(idx):
    from kenning.store import runs as runs_sql

    idx.upsert("beliefs", BELIEFS)
    counts = runs_sql.table_counts(idx.conn)
    assert counts["vector_items"] == 6 and counts["embedding_cache"] == 0  # vec0 holds them once (X1)
    assert not [k for k in counts if k.startswith("vec_items_g")]


WORDS = "lake car kids sister moving pottery violin turtle camping garden coffee budget rain snow".split()


def _small_index(path, *, quantize_above: int, rerank_min: int):
    """A fresh vault and a numpy VectorIndex of 64-d hash vectors (codes above ``quantize_above``)."""
    drop_mirrors()
    cfg = load_config(overrides={"embeddings": {"backend": "hash", "dimension": 64, "vector_index": {
        "engine": "numpy", "quantize_above": quantize_above, "rerank_factor": 5, "rerank_min": rerank_min}}})
    conn = open_store(path)
    return conn, VectorIndex(conn, cfg)


def test_quantized_search_recall_and_filters(tmp_path):
    """R16: above quantize_above the mirror ranks by Hamming distance over 1-bit codes and re-ranks exactly; recall
    against the exact scan stays high, filters (allow) hold, and new vectors are searchable at once."""
    import random

    conn, idx = _small_index(tmp_path / "q.db", quantize_above=100, rerank_min=100)
    rnd = random.Random(3)
    items = [(f"d{i}", " ".join(rnd.choices(WORDS, k=6)), "even" if i % 2 == 0 else "odd") for i in range(1500)]
    idx.upsert("docs", items)
    recall, queries = [], [" ".join(rnd.choices(WORDS, k=3)) for _ in range(30)]
    for q in queries:
        approx = {h.item_id for h in idx.search(q, k=10, space="docs")}
        exact = {h.item_id for h in idx.search(q, k=10, space="docs", exact=True)}
        recall.append(len(approx & exact) / 10)
    assert sum(recall) / len(recall) >= 0.9
    # a filter applies before the Hamming scan: only allowed vids come back
    allowed = {int(v) for (v,) in conn.execute("SELECT vid FROM vector_items WHERE kind='even'")}
    hits = idx.search(queries[0], k=10, space="docs", allow=lambda vids: np.isin(vids, list(allowed)))
    assert len(hits) == 10 and all(h.kind == "even" for h in hits)
    # a vector added after the codes were built is found (its code is written with it)
    idx.upsert("docs", [("new", "zebra quokka axolotl", "odd")])
    assert idx.search("zebra quokka axolotl", k=1, space="docs")[0].item_id == "new"
    conn.close()


def test_narrow_filter_scans_only_its_rows_with_the_same_result(tmp_path):
    """R56: a filter keeping at most an eighth of the rows computes Hamming distances for those rows only; the
    candidates (and so the hits) are exactly those of the full scan with the other rows pushed to the end."""
    import random

    from kenning.llm import index as index_mod

    conn, idx = _small_index(tmp_path / "q.db", quantize_above=100, rerank_min=20)
    rnd = random.Random(5)
    idx.upsert("docs", [(f"d{i}", " ".join(rnd.choices(WORDS, k=6)), "rare" if i % 10 == 0 else "common")
                        for i in range(2000)])
    rare = {int(v) for (v,) in conn.execute("SELECT vid FROM vector_items WHERE kind='rare'")}
    allow = lambda vids: np.isin(vids, list(rare))  # noqa: E731
    queries = [" ".join(rnd.choices(WORDS, k=3)) for _ in range(10)]
    for q in queries:
        hits = idx.search(q, k=10, space="docs", allow=allow)
        assert len(hits) == 10 and all(h.kind == "rare" for h in hits)
    (mirror,) = index_mod._MIRRORS.values()
    emb = idx.embedder_for(idx.active()["model_id"], 64)
    n = mirror.n
    mask = np.asarray(allow(mirror.vids[:n]), dtype=bool)
    assert 0 < mask.sum() <= n // 8
    for q in queries:
        qv = np.asarray(emb.embed([q])[0], dtype=np.float32)
        mirror._last_dist = None
        sub = mirror._hamming_candidates(qv, n, mask, 20)
        full = mirror._hamming_candidates(qv, n, mask, 20, subset=False)
        assert len(sub) >= 20 and sub.tolist() == full.tolist()
    conn.close()


@pytest.mark.parametrize("quantize_above", [100, 0])
def test_filter_naming_its_rows_gives_the_same_hits(tmp_path, quantize_above):
    """R57: a filter that names its rows (``allow.rows``: a superset of the vids it keeps, cached under
    ``allow.rows_key``) is tested on those rows only, and the Hamming scan covers them only; the hits are those of
    the same filter over every vid — quantized or exact, with kinds and item ids on top, and after writes (the cached
    row positions and codes are dropped by an upsert or a delete)."""
    import random

    conn, idx = _small_index(tmp_path / "r.db", quantize_above=quantize_above, rerank_min=20)
    rnd = random.Random(11)
    idx.upsert("docs", [(f"d{i}", " ".join(rnd.choices(WORDS, k=6)), "a" if i % 3 else "b") for i in range(1500)])
    idx.upsert("other", [(f"o{i}", " ".join(rnd.choices(WORDS, k=6)), "a") for i in range(200)])

    def filters():
        vid_of = {r[1]: int(r[0]) for r in conn.execute("SELECT vid, item_id FROM vector_items")}
        speaker = {vid_of.get(f"d{i}", -1) for i in range(0, 1500, 7)} | {vid_of["o3"], vid_of.get("late", -1)}
        keep = np.asarray(sorted(speaker), dtype=np.int64)
        plain = lambda vids: np.isin(vids, keep)  # noqa: E731
        named = lambda vids: np.isin(vids, keep)  # noqa: E731
        named.rows = np.asarray(sorted(speaker | {10**9}), dtype=np.int64)  # a superset; unknown vids are ignored
        named.rows_key = ("speaker", "t")
        return plain, named

    def same(queries):
        plain, named = filters()
        for q in queries:
            for extra in ({}, {"kinds": ["a"]}, {"item_ids": [f"d{i}" for i in range(0, 700, 7)]}):
                want = idx.search(q, k=10, space="docs", allow=plain, **extra)
                got = idx.search(q, k=10, space="docs", allow=named, **extra)
                assert got == want and len(got) == 10
        return named

    queries = [" ".join(rnd.choices(WORDS, k=3)) for _ in range(8)]
    named = same(queries)
    from kenning.llm import index as index_mod

    (mirror,) = index_mod._MIRRORS.values()
    assert ("speaker", "t") in mirror.row_sets  # cached for the next question
    idx.upsert("docs", [("late", "zebra quokka axolotl", "a")])
    assert not mirror.row_sets
    _, named = filters()
    assert idx.search("zebra quokka axolotl", k=1, space="docs", allow=named)[0].item_id == "late"
    same(queries)
    idx.delete("docs", ["late", "d7", "d14"])
    hits = idx.search("zebra quokka axolotl", k=50, space="docs", allow=filters()[1])
    assert hits and not {h.item_id for h in hits} & {"late", "d7", "d14"}
    same(queries)
    nobody = lambda vids: np.zeros(len(vids), dtype=bool)  # noqa: E731
    nobody.rows, nobody.rows_key = np.zeros(0, dtype=np.int64), ("nobody",)
    assert idx.search(queries[0], k=10, space="docs", allow=nobody) == []
    conn.close()


def test_rows_path_reuses_the_last_full_scan_and_keeps_recent_row_sets(tmp_path, monkeypatch):
    """R59: a filter naming its rows, asked with the query vector of the last full scan (the time lane after the plain
    lane), takes those rows' distances from that scan instead of gathering their codes — the same hits as computing
    them. The mirror's cached row sets are dropped least recently used first, within a byte budget."""
    import random

    from kenning.llm import index as index_mod

    conn, idx = _small_index(tmp_path / "z.db", quantize_above=100, rerank_min=20)
    rnd = random.Random(17)
    idx.upsert("docs", [(f"d{i}", " ".join(rnd.choices(WORDS, k=6)), "a") for i in range(1500)])
    vids = np.asarray(sorted(int(v) for (v,) in conn.execute("SELECT vid FROM vector_items")), dtype=np.int64)

    def named(step: int, key):
        keep = vids[::step]
        f = lambda v: np.isin(v, keep)  # noqa: E731
        f.rows, f.rows_key = keep, key
        return f

    (q1, q2) = [" ".join(rnd.choices(WORDS, k=3)) for _ in range(2)]
    idx.search(q1, k=10, space="docs")  # a full scan of q1
    (mirror,) = index_mod._MIRRORS.values()
    reused = idx.search(q1, k=10, space="docs", allow=named(5, ("t", 5)))
    assert mirror.row_sets[("t", 5)][1][0] is None  # no codes gathered: the distances came from the scan
    idx.search(q2, k=10, space="docs")  # the last scan is now q2's
    computed = idx.search(q1, k=10, space="docs", allow=named(5, ("t", 5)))
    assert mirror.row_sets[("t", 5)][1][0] is not None
    plain = lambda v: np.isin(v, vids[::5])  # noqa: E731  (no rows: the mask over every vid)
    assert reused == computed == idx.search(q1, k=10, space="docs", allow=plain) and len(reused) == 10
    # least recently used out: a budget for two sets of this size
    per_row = 8 + 8
    monkeypatch.setattr(index_mod, "ROW_SETS_MAX_BYTES", 2 * len(vids[::5]) * per_row)
    mirror.row_sets.clear()
    for key in (("s", 1), ("s", 2), ("s", 1), ("s", 3)):
        idx.search(q2, k=10, space="docs", allow=named(5, key))
    assert list(mirror.row_sets) == [("s", 1), ("s", 3)]
    conn.close()


def test_mirror_item_ids_are_not_walked_by_the_garbage_collector(tmp_path):
    """R59: the mirror keeps its item ids in a numpy string array (numpy >= 2), not a list of Python strings that
    every full garbage collection walks (~50 ms at 1M vectors); ids stay right through growth, deletes and
    compaction."""
    import gc

    from kenning.llm import index as index_mod

    conn, idx = _small_index(tmp_path / "g.db", quantize_above=0, rerank_min=20)
    idx.upsert("docs", [(f"d{i}", f"w{i} zebra", "a") for i in range(100)])
    idx.search("zebra", k=1, space="docs")  # the mirror is made by the first search
    idx.upsert("docs", [(f"d{i}", f"w{i} zebra", "a") for i in range(100, 3000)])  # it grows 1024 → 4096
    (mirror,) = index_mod._MIRRORS.values()
    assert mirror.n == 3000 and len(mirror.item_ids) >= 3000
    if index_mod._ID_DTYPE is not None:
        assert isinstance(mirror.item_ids, np.ndarray) and not gc.is_tracked(mirror.item_ids)
    idx.delete("docs", [f"d{i}" for i in range(0, 3000, 2)])  # 1,500 deletes: compacted
    assert mirror.n == 1500 and not mirror.deleted
    assert {h.item_id for h in idx.search("w7 zebra", k=3, space="docs")} >= {"d7"}
    assert sorted(x for x in mirror.item_ids[:mirror.n]) == sorted(f"d{i}" for i in range(1, 3000, 2))
    conn.close()
