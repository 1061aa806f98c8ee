"""Embedders for the vector lane: the real all-MiniLM-L6-v2 (offline) and the deterministic hash fallback."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.config import load_config
from kenning.retrieve.embed import HashEmbedder, make_embedder, space_name


def test_hash_embedder_is_deterministic_and_normalised():
    e = HashEmbedder(384)
    a, b = e.embed(["I adopted a turtle", "I adopted a turtle"]), e.embed(["I adopted a turtle"])
    assert a.shape == (2, 384) and a.dtype == np.float32
    assert np.allclose(a[0], b[0]) and np.isclose(np.linalg.norm(a[0]), 1.0)
    sims = e.embed(["turtles"]) @ e.embed(["my turtle Shelly", "a car accident"]).T
    assert sims[0, 0] > sims[0, 1]
    assert space_name(e) == "hash_384"


def test_none_backend_means_no_vector_lane():
    cfg = load_config(overrides={"retrieval": {"vector": {"backend": "none"}}}).retrieval.vector
    assert make_embedder(cfg) is None


@pytest.mark.model
def test_minilm_loads_offline_from_the_package():
    cfg = load_config().retrieval.vector
    e = make_embedder(cfg)
    assert e is not None and e.backend == "minilm" and space_name(e) == "minilm_384"
    v = e.embed(["When did Caroline go to the support group?", "I went to a LGBTQ support group yesterday",
                 "My car broke down on the highway"])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
