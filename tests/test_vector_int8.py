"""The vector lane's storage (issue 24 §2, decisions X1–X5): int8 vectors, each vector once, text derived — and an
old-format vault upgraded to it without re-encoding."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.config import load_config
from kenning.llm import index as ix
from kenning.llm.embed import HashEmbedder
from kenning.llm.index import VectorIndex, dequantize_int8, drop_mirrors, quantize_int8
from kenning.sources.jcs import sha256_hex
from kenning.store import migrate as mig
from kenning.store import vectors as vsql
from kenning.store.connection import open_store, scalar

WORDS = ["calm", "honest", "tired", "curious", "brave", "quiet", "loud", "kind", "late", "early", "river", "garden",
         "violin", "mountain", "coffee", "bicycle", "winter", "letters", "harbour", "lantern"]


def _cfg(storage: str = "int8", dim: int = 64):
    return load_config(overrides={"embeddings": {"backend": "hash", "dimension": dim,
                                                 "vector_index": {"storage": storage}}})


def _items(n: int, seed: int = 3) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    return [(f"i{j}", " ".join(rng.choice(WORDS, size=4)) + f" note {j}", f"k{j % 2}") for j in range(n)]


def test_quantize_round_trip():
    m = HashEmbedder(384).embed([" ".join(t.split()[:4]) for _, t, _ in _items(200)])
    q = quantize_int8(m)
    assert q.dtype == np.int8 and q.shape == m.shape
    assert (np.abs(q).max(axis=1) == 127).all()  # each row uses the whole range (scale 127 / its largest value)
    back = dequantize_int8(q)
    assert np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-6)
    assert (np.einsum("ij,ij->i", back, m) >= 0.999).all()
    assert np.array_equal(quantize_int8(back), q)  # a dequantized vector stores as the same int8 vector
    # one row alone or in a block: the same floats (the mirror's bulk load equals its row-by-row build)
    assert all(np.array_equal(dequantize_int8(q[i]), back[i:i + 1]) for i in range(0, 200, 17))
    assert not dequantize_int8(np.zeros((1, 8), np.int8)).any()


@pytest.mark.parametrize("engine", ["numpy", "sqlite"])
def test_int8_search_ranks_like_float32(tmp_path, engine):
    drop_mirrors()
    items = _items(150)
    found = {}
    for storage in ("float32", "int8"):
        conn = open_store(tmp_path / f"{storage}.db")
        idx = VectorIndex(conn, _cfg(storage), engine=engine)
        idx.upsert("s", items)
        t = idx.active()
        assert t["element"] == storage
        assert scalar(conn, f"SELECT length(embedding) FROM {t['table_name']} LIMIT 1") == (64 if storage == "int8"
                                                                                         else 256)
        found[storage] = {q: idx.search(q, k=10, space="s") for q in ("calm river", "violin winter letters",
                                                                      "brave harbour lantern", "coffee note 7")}
        conn.close()
    for q, exact in found["float32"].items():
        approx = found["int8"][q]
        assert approx[0].item_id == exact[0].item_id
        assert len({h.item_id for h in approx} & {h.item_id for h in exact}) >= 8
        assert all(abs(a.score - e.score) < 0.02 for a, e in zip(approx, exact) if a.item_id == e.item_id)


def test_int8_mirror_bulk_load_equals_row_by_row(tmp_path):
    drop_mirrors()
    conn = open_store(tmp_path / "v.db")
    idx = VectorIndex(conn, _cfg(), engine="numpy")
    idx.upsert("s", _items(1500)[:700])
    idx.search("calm river", k=3)  # the mirror is loaded now; the writes below keep it current
    idx.upsert("s", _items(1500)[700:])
    idx.delete("s", [f"i{j}" for j in range(0, 1500, 7)])
    table = idx.active()
    kept = idx._mirror(table)  # the mirror the writes advanced (not a fresh load)
    live = {int(v): kept.matrix[p] for v, p in kept.pos_of.items()}
    vids, matrix = ix._read_vectors(conn, table)
    bulk = ix._Mirror.filled(64, table["version"], vids, matrix, ix._item_columns(conn))
    ref = ix._rowwise_mirror(conn, table)
    assert bulk.n == ref.n and np.array_equal(bulk.matrix[:bulk.n], ref.matrix[:ref.n])
    assert np.array_equal(bulk.vids[:bulk.n], ref.vids[:ref.n])
    # the mirror kept current by the writes holds exactly what a fresh load reads back (dequantized rows, X3)
    assert sorted(live) == sorted(vids.tolist())
    assert all(np.array_equal(live[int(v)], matrix[i]) for i, v in enumerate(vids))


def _old_format_vault(path, cfg):
    """A vault as the code before migrations 0110/0111 made it: float32 vec0 rows, every vector a second time in the
    embedding cache, the search items' text stored."""
    real = mig.available_migrations
    mig.available_migrations = lambda: [m for m in real() if m[0] < 110]
    mig.latest_version.cache_clear()
    try:
        conn = open_store(path)
    finally:
        mig.available_migrations = real
        mig.latest_version.cache_clear()
    assert "text_sha256" not in [r[1] for r in conn.execute("PRAGMA index_list(vector_items)")]
    emb = HashEmbedder(64)
    items = _items(120)
    vecs = emb.embed([t for _, t, _ in items])
    conn.execute("CREATE VIRTUAL TABLE vec_items_g1 USING vec0(space TEXT PARTITION KEY, kind TEXT, "
                 "embedding float[64] distance_metric=cosine)")
    conn.execute("INSERT INTO vector_tables(table_name, generation, model_id, dimension, status, created_at_utc, "
                 "activated_at_utc, built_through_rev, version) VALUES ('vec_items_g1', 1, 'hash:kenning-hash-v1', "
                 "64, 'active', 'T', 'T', 0, 'v1')")
    for n, ((item_id, text, kind), v) in enumerate(zip(items, vecs)):
        space = "search" if n % 3 else "nodes"
        conn.execute("INSERT INTO vector_items(space, item_id, kind, text, text_sha256, rev, updated_at_utc) "
                     "VALUES (?,?,?,?,?,?, 'T')", (space, item_id, kind, text, sha256_hex(text), n + 1))
        conn.execute("INSERT INTO vec_items_g1(rowid, space, kind, embedding) VALUES (?,?,?,?)",
                     (n + 1, space, kind, v.astype("<f4").tobytes()))
        conn.execute("INSERT INTO embedding_cache VALUES ('hash:kenning-hash-v1', 64, ?, ?, 'T')",
                     (sha256_hex(text), v.astype("<f4").tobytes()))
    conn.execute("INSERT INTO embedding_cache VALUES ('hash:kenning-hash-v1', 64, ?, ?, 'T')",
                 (sha256_hex("a query"), emb.embed(["a query"])[0].astype("<f4").tobytes()))
    conn.execute("UPDATE vector_state SET last_rev = ?", (len(items),))
    conn.execute("DELETE FROM vector_items WHERE vid = ?", (len(items),))  # the last vid was used, then removed
    conn.execute("DELETE FROM vec_items_g1 WHERE rowid = ?", (len(items),))
    conn.close()
    return items


def test_old_format_vault_upgrades_and_finds_the_same_hits(tmp_path, monkeypatch):
    drop_mirrors()
    cfg = _cfg()
    db = tmp_path / "old.db"
    items = _old_format_vault(db, cfg)
    queries = ["calm river", "violin winter letters", "brave harbour lantern"]
    conn = open_store(db)  # migrations 0110 and 0111
    assert scalar(conn, "SELECT element FROM vector_tables WHERE status='active'") == "float32"
    # X1: the cache keeps only what no vec0 row holds (the query, the removed item's text); X2: the search items
    # lost their text
    assert {r[0] for r in conn.execute("SELECT text_sha256 FROM embedding_cache")} == {
        vsql.text_key(sha256_hex("a query")), vsql.text_key(sha256_hex(items[-1][1]))}   # 16 bytes each (Z3)
    before = {q: [h.item_id for h in VectorIndex(conn, cfg, engine="numpy").search(q, k=5)] for q in queries}
    assert scalar(conn, "SELECT COUNT(*) FROM vector_items WHERE space='search' AND text IS NOT NULL") == 0
    assert scalar(conn, "SELECT COUNT(*) FROM vector_items WHERE space='nodes' AND text IS NULL") == 0
    assert scalar(conn, "SELECT seq FROM sqlite_sequence WHERE name='vector_items'") == len(items)
    # X4: the next write converts the table to int8 from the stored floats — nothing is encoded
    calls: list[int] = []
    orig = HashEmbedder._embed_batch
    monkeypatch.setattr(HashEmbedder, "_embed_batch", lambda self, t: (calls.append(len(t)), orig(self, t))[1])
    idx = VectorIndex(conn, cfg, engine="numpy")
    t = idx.ensure_active()
    assert t["element"] == "int8" and t["table_name"] == "vec_items_g2" and calls == []
    assert scalar(conn, "SELECT COUNT(*) FROM sqlite_master WHERE name='vec_items_g1'") == 0
    assert vsql.count_vectors(conn, t["table_name"]) == vsql.count_items(conn) == len(items) - 1
    for engine in ("numpy", "sqlite"):
        drop_mirrors()
        after = {q: [h.item_id for h in VectorIndex(conn, cfg, engine=engine).search(q, k=5)] for q in queries}
        for q in queries:
            assert after[q][0] == before[q][0] and len(set(after[q]) & set(before[q])) >= 4
    # an identical text is still found, not encoded (X1 through the int8 table), and a new vid is never an old one
    VectorIndex(conn, cfg).upsert("other", [("x", items[5][1])])
    assert calls == []
    assert scalar(conn, "SELECT vid FROM vector_items WHERE space='other'") == len(items) + 1
    # and back to float32 on request (dequantized vectors; the same hits)
    f32 = VectorIndex(conn, _cfg("float32"), engine="numpy")
    assert f32.ensure_active()["element"] == "float32" and calls == []
    assert [h.item_id for h in f32.search(queries[0], k=5)][0] == before[queries[0]][0]
    conn.close()


def test_cli_converts_and_reports_the_storage(tmp_path):
    """`kenning embeddings migrate` to the active model converts the storage (a real subprocess); status says it."""
    import json

    from conftest import run_kenning

    drop_mirrors()
    db = tmp_path / "old.db"
    _old_format_vault(db, _cfg())
    cfg = tmp_path / "c.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n  dimension: 64\n", encoding="utf-8")
    st = json.loads(run_kenning("embeddings", "status", "--db", str(db), "--config", str(cfg), "--json").stdout)
    assert st["active"]["storage"] == "float32"  # a read does not convert
    r = run_kenning("embeddings", "migrate", "hash", "--db", str(db), "--config", str(cfg), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "converted"
    r = run_kenning("embeddings", "status", "--db", str(db), "--config", str(cfg))
    assert "stored as int8" in r.stdout and "119 vectors" in r.stdout


def test_forget_erases_the_vectors_and_keeps_no_copy(tmp_path):
    """X1 moves the vectors of removed items to the cache; forgetting removes items its own way, so the vectors of
    forgotten turns are gone from vec0 and are nowhere in the cache either."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from exportkit import conversation, write_export
    from kenning.api import Vault
    from kenning.forget import forget

    planted = conversation("conv-forget-1", [("user", "My violin teacher lives by the harbour lantern."),
                                             ("assistant", "That sounds like a lovely walk."),
                                             ("user", "Winter letters from her arrive every week.")],
                           title="violin", start=1_700_000_000.0)
    other = conversation("conv-keep-1", [("user", "I ride my bicycle to the garden every morning."),
                                         ("assistant", "Nice routine.")], title="bike", start=1_700_100_000.0)
    export = write_export(tmp_path / "x.json", [planted, other])
    with Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([export], as_of="2024-12-31T00:00:00Z")
        conn = v.conn
        t = vsql.active_table(conn)
        doomed = [int(r[0]) for r in conn.execute(
            "SELECT v.vid FROM vector_items v JOIN search_docs d ON CAST(d.doc_rowid AS TEXT) = v.item_id "
            "JOIN messages m ON m.message_id = d.doc_id WHERE v.space='search' AND m.conversation_id=?",
            ("conv-forget-1",))]
        assert doomed
        blobs = set(vsql.get_vectors(conn, t["table_name"], doomed).values())
        report = forget(conn, v.config, "conversation", "conv-forget-1", apply=True, vacuum=False)
        assert report.removed.get("vector_items", 0) >= len(doomed)
        t = vsql.active_table(conn)
        assert not vsql.get_vectors(conn, t["table_name"], doomed)
        assert not vsql.items_by_vids(conn, doomed)
        cached = {bytes(b) for (b,) in conn.execute("SELECT vector FROM embedding_cache")}
        assert not {ix.dequantize_int8(np.frombuffer(b, np.int8))[0].astype("<f4").tobytes() for b in blobs} & cached
        assert VectorIndex(conn, v.config).search("bicycle garden", k=3, space="search")  # the rest still found
