"""The llm / embeddings / calibration config sections: env overrides, secrets, thresholds per model."""

from __future__ import annotations

import warnings

import pytest

from kenning.config import config_hash, load_config
from kenning.config.loader import ConfigError
from kenning.llm.thresholds import thresholds_for


def test_env_overrides_llm_settings(monkeypatch):
    monkeypatch.setenv("KENNING_LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("KENNING_LLM_MODEL", "llama3.1:8b")
    monkeypatch.setenv("KENNING_LLM_API_KEY", "sk-env-secret-000000")
    monkeypatch.setenv("KENNING_EMBEDDINGS_BASE_URL", "http://localhost:11434/v1")
    cfg = load_config()
    assert cfg.llm.base_url == "http://localhost:11434/v1" and cfg.llm.model == "llama3.1:8b"
    assert cfg.llm.api_key.get_secret_value() == "sk-env-secret-000000"
    assert cfg.embeddings.openai.base_url == "http://localhost:11434/v1"
    # explicit overrides still win over the environment
    assert load_config(overrides={"llm": {"model": "other"}}).llm.model == "other"


def test_api_key_is_secret_and_outside_the_config_hash(monkeypatch):
    monkeypatch.setenv("KENNING_LLM_API_KEY", "sk-first-key-111111")
    a = load_config()
    monkeypatch.setenv("KENNING_LLM_API_KEY", "sk-second-key-222222")
    b = load_config()
    assert config_hash(a) == config_hash(b)                      # rotating a key does not change run ids
    assert "sk-first" not in a.model_dump_json() and "sk-first" not in repr(a)
    assert a.model_dump(mode="json")["llm"]["api_key"] == "**********"


def test_defaults_present_and_validated():
    cfg = load_config()
    assert cfg.llm.mode == "auto" and cfg.llm.temperature == 0 and cfg.llm.max_json_repair_attempts == 1
    assert cfg.llm.max_retries == 3                              # seed 001 §4.4.4
    assert cfg.embeddings.dimension == 384 and cfg.embeddings.backend == "minilm"
    seed = cfg.embeddings.thresholds["text-embedding-3-small"]
    assert (seed.match, seed.no_match, seed.tension) == (0.90, 0.75, 0.88)   # seed 000 §5.3
    with pytest.raises(ConfigError):
        load_config(overrides={"embeddings": {"thresholds": {"x": {"match": 0.5, "no_match": 0.7, "tension": 0.8}}}})
    with pytest.raises(ConfigError):
        load_config(overrides={"llm": {"mode": "sometimes"}})
    with pytest.raises(ConfigError):
        load_config(overrides={"embeddings": {"backend": "word2vec"}})


def test_thresholds_per_model():
    cfg = load_config()
    assert thresholds_for(cfg, "minilm:all-MiniLM-L6-v2") == cfg.embeddings.thresholds["all-MiniLM-L6-v2"]
    assert thresholds_for(cfg, "hash:kenning-hash-v1") == cfg.embeddings.thresholds["kenning-hash-v1"]
    assert thresholds_for(cfg, "openai:text-embedding-3-small").match == 0.90
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = thresholds_for(cfg, "openai:nomic-embed-text")
    assert t == cfg.embeddings.default_thresholds and "kenning calibrate" in str(w[0].message)
