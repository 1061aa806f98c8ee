"""The query encoder loaded beside a one-shot search's start-up (decisions F11)."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.config import load_config
from kenning.llm.prewarm import start_query_encoder


@pytest.mark.parametrize("overrides", [
    {"embeddings": {"backend": "hash"}},
    {"retrieval": {"vector": {"enabled": False}}},
    {"embeddings": {"minilm": {"runtime": "torch"}}},
])
def test_nothing_is_loaded_ahead_when_the_search_would_not_use_onnx(overrides):
    assert start_query_encoder(load_config(overrides=overrides)) is None


@pytest.mark.model
def test_the_warmed_session_is_the_one_the_search_uses():
    from kenning.llm import onnx_minilm
    from kenning.llm.embed import get_embedder

    onnx_minilm.clear_sessions()
    cfg = load_config()
    t = start_query_encoder(cfg)
    assert t is not None
    t.join(timeout=600)
    assert not t.is_alive() and len(onnx_minilm._SESSIONS) == 1
    session = next(iter(onnx_minilm._SESSIONS.values()))
    e = get_embedder(cfg)
    v = e.embed(["who moved to Lisbon last summer?"])
    assert e._onnx is session and len(onnx_minilm._SESSIONS) == 1  # reused, not loaded again
    onnx_minilm.clear_sessions()
    cold = get_embedder(cfg).embed(["who moved to Lisbon last summer?"])
    assert np.array_equal(v, cold)  # the same vector as without the warm-up
