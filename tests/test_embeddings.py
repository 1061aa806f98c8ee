"""Embedders (hash, OpenAI-compatible via the test server, MiniLM) and the SQLite embedding cache."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import SRC, TEST_KEY

from kenning.config import load_config
from kenning.llm.embed import (CachedEmbedder, HashEmbedder, MiniLMEmbedder, OpenAIEmbedder, get_embedder,
                               model_id_for, parse_spec)
from kenning.llm.errors import EmbeddingError, LLMEndpointError
from kenning.llm.testserver import Answer
from kenning.store import open_store
from kenning.store.connection import rows

TEXTS = ["I am patient", "i am a patient person", "I hate mornings", "I'm a night owl", "", "Ünïcode café ☕"]


def test_hash_is_deterministic_normalized_and_batch_independent():
    e = HashEmbedder(384)
    v = e.embed(TEXTS)
    assert v.shape == (6, 384) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    assert np.allclose(norms[[0, 1, 2, 3, 5]], 1.0, atol=1e-6) and norms[4] == 0   # an empty text has no features
    one_by_one = np.vstack([HashEmbedder(384).embed([t]) for t in TEXTS])
    assert np.array_equal(v, one_by_one)
    small_batches = HashEmbedder(384, batch_size=2).embed(TEXTS)
    assert np.array_equal(v, small_batches)


def test_hash_is_identical_in_another_process():
    code = ("import json,sys; from kenning.llm.embed import HashEmbedder; "
            f"print(json.dumps(HashEmbedder(64).embed({TEXTS!r}).tolist()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(SRC), "PYTHONHASHSEED": "12345"})
    assert np.array_equal(np.array(json.loads(out.stdout), dtype=np.float32), HashEmbedder(64).embed(TEXTS))


def test_hash_similarity_is_lexical_and_sensible():
    e = HashEmbedder(384)
    a, b, c, d = e.embed(["i am patient", "I'm a patient person", "i love hiking", "I can't stand crowds"])
    assert float(a @ b) > 0.5 > float(a @ c)           # shared content words, contractions expanded
    x, y = e.embed(["I can't stand crowds", "I can not stand crowds"])
    assert float(x @ y) == pytest.approx(1.0, abs=1e-6)


def test_dimension_comes_from_config():
    cfg = load_config(overrides={"embeddings": {"backend": "hash", "dimension": 96}})
    e = get_embedder(cfg)
    assert e.dimension == 96 and e.embed(["x y z"]).shape == (1, 96)
    assert model_id_for(cfg) == "hash:kenning-hash-v1"
    with pytest.raises(EmbeddingError, match="embeddings.dimension: 384"):
        get_embedder(load_config(overrides={"embeddings": {"dimension": 256}}), "minilm")
    with pytest.raises(EmbeddingError, match="unknown embedding backend"):
        parse_spec("word2vec")


def test_cache_hits_and_keys(tmp_path, hash_config):
    conn = open_store(tmp_path / "v.db")
    inner = HashEmbedder(384)
    calls: list[int] = []
    orig = inner._embed_batch
    inner._embed_batch = lambda texts: (calls.append(len(texts)), orig(texts))[1]  # type: ignore[method-assign]
    cached = CachedEmbedder(inner, conn)
    first = cached.embed(["a b", "c d", "a b"])
    assert calls == [2] and cached.misses == 2          # duplicates embedded once
    second = cached.embed(["c d", "a b", "e f"])
    assert calls == [2, 1] and cached.hits == 2 and cached.misses == 3
    assert np.array_equal(first[0], second[1]) and np.array_equal(first[1], second[0])
    assert np.array_equal(second, inner.embed(["c d", "a b", "e f"]))
    cache = rows(conn, "SELECT model_id, dimension, length(vector) AS n FROM embedding_cache")
    assert len(cache) == 3 and {(r["model_id"], r["dimension"], r["n"]) for r in cache} == {
        ("hash:kenning-hash-v1", 384, 384 * 4)}
    # the same text under another dimension is another key
    CachedEmbedder(HashEmbedder(64), conn).embed(["a b"])
    assert len(rows(conn, "SELECT * FROM embedding_cache")) == 4
    conn.close()
    ro = open_store(tmp_path / "v.db", readonly=True)
    got = CachedEmbedder(HashEmbedder(384), ro).embed(["a b", "zz top"])      # read-only: reads, never writes
    assert np.array_equal(got[0], first[0])
    assert len(rows(ro, "SELECT * FROM embedding_cache")) == 4


def test_get_embedder_with_conn_caches(tmp_path, hash_config):
    conn = open_store(tmp_path / "v.db")
    e = get_embedder(hash_config, conn=conn)
    assert isinstance(e, CachedEmbedder) and e.model_id == "hash:kenning-hash-v1"
    e.embed(["one", "two"])
    assert len(rows(conn, "SELECT * FROM embedding_cache")) == 2
    off = load_config(overrides={"embeddings": {"backend": "hash", "cache": False}})
    assert isinstance(get_embedder(off, conn=conn), HashEmbedder)


def test_openai_backend_through_the_test_server(llm_server, llm_config):
    cfg = llm_config(llm_server, extra={"embeddings": {"backend": "openai", "dimension": 128, "batch_size": 2}})
    e = get_embedder(cfg)
    assert e.model_id == "openai:text-embedding-3-small" and e.dimension == 128
    v = e.embed(["i am patient", "i am a patient person", "i hate mornings"])
    assert v.shape == (3, 128) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    reqs = llm_server.embedding_requests
    assert len(reqs) == 2                                   # batch_size 2 → two requests
    assert reqs[0]["body"]["dimensions"] == 128 and reqs[0]["body"]["model"] == "text-embedding-3-small"
    assert reqs[0]["headers"]["authorization"] == f"Bearer {TEST_KEY}"
    # the server makes hash vectors, so the result must equal the hash embedder's
    assert np.allclose(v, HashEmbedder(128).embed(["i am patient", "i am a patient person", "i hate mornings"]),
                       atol=1e-6)


def test_openai_backend_retries_and_checks_dimension(llm_server):
    slept: list[float] = []
    e = OpenAIEmbedder(base_url=llm_server.base_url, model="nomic-embed-text", dimension=32, api_key=TEST_KEY,
                       send_dimensions=False, max_retries=2, sleep=slept.append)
    llm_server.script_embeddings(Answer.status(429, retry_after=0), Answer.status(502))
    llm_server.embedding_dim = 32
    assert e.embed(["x"]).shape == (1, 32) and len(slept) == 2
    assert "dimensions" not in llm_server.embedding_requests[0]["body"]
    llm_server.embedding_dim = 48
    with pytest.raises(EmbeddingError, match="makes 48-d vectors but embeddings.dimension is 32"):
        e.embed(["y"])
    bad = OpenAIEmbedder(base_url=llm_server.base_url, model="m", dimension=32, api_key="sk-nope-00000000000")
    with pytest.raises(LLMEndpointError, match="HTTP 401") as err:
        bad.embed(["z"])
    assert "sk-nope-00000000000" not in str(err.value)


def test_openai_backend_needs_an_endpoint():
    cfg = load_config(overrides={"embeddings": {"backend": "openai"}})
    with pytest.raises(EmbeddingError, match="KENNING_EMBEDDINGS_BASE_URL"):
        get_embedder(cfg)


def test_embed_cli_hash(kenning_cli):
    r = kenning_cli("embed", "i am patient", "i am a patient person", "i love hiking", "I'm patient!", "--backend", "hash",
                "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["model_id"] == "hash:kenning-hash-v1" and data["dimension"] == 384
    assert len(data["texts"]) == 4 and len(data["texts"][0]["vector"]) == 384
    sims = {(p["a"], p["b"]): p for p in data["similarities"]}
    assert sims[(0, 1)]["similarity"] > sims[(0, 2)]["similarity"]
    assert sims[(0, 3)]["verdict"] == "match" and sims[(0, 2)]["verdict"] == "uncertain"   # hash: 0.999 / 0.011
    assert data["thresholds"] == load_config().embeddings.thresholds["kenning-hash-v1"].model_dump()
    table = kenning_cli("embed", "i am patient", "i am a patient person", "--backend", "hash")
    assert table.returncode == 0 and "0–1" in table.stdout and "hash:kenning-hash-v1" in table.stdout


@pytest.mark.model
def test_minilm_offline(minilm_embedder):
    e = minilm_embedder
    assert e.model_id == "minilm:all-MiniLM-L6-v2" and e.dimension == 384
    v = e.embed(["i am patient", "i am a patient person", "i love hiking in the mountains", "the stock market fell"])
    assert v.shape == (4, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert float(v[0] @ v[1]) == pytest.approx(0.77, abs=0.02)   # the example
    assert float(v[0] @ v[1]) > 0.6 > 0.3 > max(float(v[0] @ v[2]), float(v[0] @ v[3]))
    assert np.allclose(MiniLMEmbedder(batch_size=1).embed(["i am patient"])[0], v[0], atol=1e-5)


@pytest.mark.model
def test_embed_cli_minilm(kenning_cli):
    r = kenning_cli("embed", "i am patient", "i am a patient person", "--json", env={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["model_id"] == "minilm:all-MiniLM-L6-v2"
    assert data["similarities"][0]["similarity"] == pytest.approx(0.77, abs=0.02)


def test_minilm_token_window_is_part_of_the_model_id():
    # decisions M31: the trained window (128) is the plain id; another window gets its own id, cache and tables
    cfg = load_config()
    assert cfg.embeddings.minilm.max_seq_length == 128
    assert model_id_for(cfg, "minilm") == "minilm:all-MiniLM-L6-v2"
    assert model_id_for(cfg, "minilm:all-MiniLM-L6-v2@256") == "minilm:all-MiniLM-L6-v2@256"
    wide = load_config(overrides={"embeddings": {"minilm": {"max_seq_length": 256}}})
    assert model_id_for(wide, "minilm") == "minilm:all-MiniLM-L6-v2@256"
    assert MiniLMEmbedder(max_seq_length=256).model_id == "minilm:all-MiniLM-L6-v2@256"   # nothing loaded yet
    assert get_embedder(cfg, "minilm:all-MiniLM-L6-v2@256").model_id == "minilm:all-MiniLM-L6-v2@256"
    from kenning.llm.thresholds import thresholds_for
    assert thresholds_for(cfg, "minilm:all-MiniLM-L6-v2@256", warn=False) == cfg.embeddings.thresholds["all-MiniLM-L6-v2"]
    with pytest.raises(EmbeddingError, match="token window"):
        get_embedder(cfg, "minilm:all-MiniLM-L6-v2@wide")


@pytest.mark.model
def test_minilm_window_truncates_long_texts_only(minilm_embedder):
    short = "My sister moved to Lisbon in 2019 and I visit her every summer."
    long = short + " " + " ".join(f"Then on day {i} we walked to a different museum and argued about lunch." for i in range(20))
    narrow, wide = minilm_embedder.embed([short, long]), MiniLMEmbedder(max_seq_length=256).embed([short, long])
    assert float(narrow[0] @ wide[0]) > 0.99999                     # under 128 tokens: the same vector
    assert float(narrow[1] @ wide[1]) < 0.99999                     # over 128: the window decides what is read
