"""One embedding stack (R14): the vector lanes embed with the model layer's configured embedder, through its cache,
into its vector index; `embeddings.backend` is the only place that chooses the model."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.api import Vault
from kenning.llm.embed import CachedEmbedder, HashEmbedder, get_embedder
from kenning.llm.index import VectorIndex
from kenning.retrieve.search import Searcher
from kenning.store.connection import scalar
from tests.conftest import HASH


def test_search_uses_the_model_layer_embedder_and_cache(tmp_path, transcript_file):
    with Vault.open(tmp_path / "v.db", overrides=HASH) as v:
        v.ingest([transcript_file], as_of="2024-01-01T00:00:00Z")
        s = Searcher(v.conn, v.config)
        emb = s.embedder()
        assert isinstance(emb, CachedEmbedder) and isinstance(emb.inner, HashEmbedder)
        assert emb.model_id == "hash:kenning-hash-v1"
        # the vectors the lane searches are the model layer's, in the vector index's active table
        idx = VectorIndex(v.conn, v.config)
        assert idx.active()["model_id"] == "hash:kenning-hash-v1"
        n_docs = scalar(v.conn, "SELECT COUNT(*) FROM search_docs")
        assert scalar(v.conn, "SELECT COUNT(*) FROM vector_items WHERE space='search'") == n_docs
        # an indexed text is not encoded again: the cache reads its vector back from vec0 (X1), kept nowhere else
        from kenning.retrieve.vector_fill import texts_of_items

        text = next(iter(texts_of_items(v.conn, v.config, ["1"]).values()))
        misses = emb.misses
        again = emb.embed([text])[0]
        from kenning.llm.index import dequantize_int8, quantize_int8

        fresh = get_embedder(v.config).embed([text])
        assert emb.misses == misses and np.allclose(again, dequantize_int8(quantize_int8(fresh))[0], atol=1e-6)
        assert scalar(v.conn, "SELECT COUNT(*) FROM embedding_cache WHERE model_id='hash:kenning-hash-v1'") == 0
        q = emb.embed(["turtles"])[0]
        direct = get_embedder(v.config).embed(["turtles"])[0]
        assert np.allclose(q, direct)
        top = idx.search("turtles", 1, space="search")[0]
        assert s.search("turtles", now="2023-10-01", lanes=["vector"]).hits[0]["lanes"]["vector"]["score"] == \
            pytest.approx(top.score, abs=1e-5)


def test_vectors_disabled_means_no_vector_lane(tmp_path, transcript_file):
    over = {**HASH, "retrieval": {"vector": {"enabled": False}}}
    with Vault.open(tmp_path / "v.db", overrides=over) as v:
        v.ingest([transcript_file], as_of="2024-01-01T00:00:00Z")
        assert scalar(v.conn, "SELECT COUNT(*) FROM vector_items") == 0
        r = Searcher(v.conn, v.config).search("turtle", now="2023-10-01")
        assert r.hits and all("vector" not in h["lanes"] for h in r.hits)
        assert "vector" not in {l["lane"] for l in r.lanes}


def test_model_migration_reembeds_search(tmp_path, transcript_file):
    """Changing embeddings.backend needs no search-specific step: `kenning embeddings migrate` moves the search
    space with every other one, and the vector lane follows the active model."""
    with Vault.open(tmp_path / "v.db", overrides=HASH) as v:
        v.ingest([transcript_file], as_of="2024-01-01T00:00:00Z")
        q = "a turtle named Shelly"
        before = Searcher(v.conn, v.config).search(q, now="2023-10-01", lanes=["vector"]).hits[0]["text"]
        # the search items keep no text (X2): the migration derives it from the documents
        assert scalar(v.conn, "SELECT COUNT(*) FROM vector_items WHERE space='search' AND text IS NOT NULL") == 0
        out = VectorIndex(v.conn, v.config).migrate("hash", dimension=128)
        assert out["status"] == "swapped" and out["dimension"] == 128
        # the new vectors are in the new vec0 table only, not a second time in the cache (X1)
        assert scalar(v.conn, "SELECT COUNT(*) FROM embedding_cache WHERE dimension=128") == 0
        from kenning.retrieve.vector_fill import texts_of_items
        from kenning.store import vectors as vsql

        items = {r[1]: r[0] for r in v.conn.execute("SELECT vid, item_id FROM vector_items WHERE space='search'")}
        texts = texts_of_items(v.conn, v.config, list(items))
        from kenning.llm.index import quantize_int8

        got = vsql.get_vectors(v.conn, vsql.active_table(v.conn)["table_name"], list(items.values()))
        want = quantize_int8(HashEmbedder(128).embed([texts[i] for i in items]))  # stored as int8 (X3)
        assert np.array_equal(np.stack([np.frombuffer(got[items[i]], np.int8) for i in items]), want)
        s = Searcher(v.conn, v.config)
        assert s.embedder().dimension == 128
        after = s.search(q, now="2023-10-01", lanes=["vector"]).hits
        assert after[0]["text"] == before and "turtle" in before


@pytest.mark.model
def test_minilm_is_the_default_search_embedder(tmp_path, transcript_file):
    with Vault.open(tmp_path / "v.db") as v:
        assert v.config.embeddings.backend == "minilm" and v.config.embeddings.minilm.torch_threads == 1
        v.ingest([transcript_file], as_of="2024-01-01T00:00:00Z")
        s = Searcher(v.conn, v.config)
        assert s.embedder().model_id == "minilm:all-MiniLM-L6-v2"
        r = s.search("Who has a pet reptile?", now="2023-10-01", lanes=["vector"])
        assert "turtle" in r.hits[0]["text"]
