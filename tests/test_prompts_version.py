"""Versioned prompt files and the one extractor-version hash (seed 000 §6)."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.llm.errors import PromptError
from kenning.llm.prompts import available, load_prompt, parse_prompt, prompt_for
from kenning.llm.version import extractor_version, extractor_version_parts


def test_every_shipped_prompt_parses_and_is_pinned():
    cfg = load_config()
    shipped = available()
    assert {"ping", "repair_json", "atomizer"} <= set(shipped)
    for name, version in cfg.llm.prompt_versions.items():
        p = prompt_for(cfg, name)
        assert p.version == version and p.user and p.ref == f"{name}@v{version}#{p.sha256[:12]}"
    assert prompt_for(cfg, "repair_json").variables() == {"schema", "error", "output"}
    assert prompt_for(cfg, "atomizer").variables() == {"candidates"}


def test_render_fills_variables_and_json_values():
    p = parse_prompt("t", 1, "# doc\n[system]\nSys ${a}.\n[user]\nUser $$5 ${b} {\"json\": true}\n")
    msgs = p.render({"a": "x", "b": [{"k": 1}]})
    assert msgs[0] == {"role": "system", "content": "Sys x."}
    assert msgs[1]["content"].startswith("User $5 [\n  {\n    \"k\": 1\n  }\n] {\"json\": true}")
    with pytest.raises(PromptError, match="needs variable"):
        p.render({"a": "x"})


def test_malformed_and_unpinned_prompts_are_clear_errors():
    with pytest.raises(PromptError, match="no \\[user\\] section"):
        parse_prompt("t", 1, "[system]\nonly system\n")
    with pytest.raises(PromptError, match="two \\[user\\]"):
        parse_prompt("t", 1, "[user]\na\n[user]\nb\n")
    with pytest.raises(PromptError, match="before the first"):
        parse_prompt("t", 1, "stray text\n[user]\nx\n")
    with pytest.raises(PromptError, match="not pinned"):
        prompt_for(load_config(), "wiki_judge_unpinned")
    with pytest.raises(PromptError, match="shipped versions: \\[1, 2\\]"):
        load_prompt("atomizer", 9)


def test_extractor_version_is_stable_and_sensitive():
    cfg = load_config(overrides={"llm": {"model": "gpt-x", "base_url": "http://127.0.0.1:1/v1"}})
    base = dict(prompts=["atomizer"], cue_lists={"negation": ["not", "never"]}, llm_mode="live")
    v = extractor_version(cfg, **base)
    assert v.startswith("ev1-") and len(v) == 20
    assert extractor_version(cfg, **base) == v
    assert extractor_version(cfg, **{**base, "llm_mode": "replay"}) == v          # replay == live
    assert extractor_version(cfg, **{**base, "llm_mode": "none"}) != v            # rules only differs
    assert extractor_version(cfg, **{**base, "cue_lists": {"negation": ["not"]}}) != v
    assert extractor_version(cfg, **{**base, "prompts": ["atomizer", "repair_json"]}) != v
    assert extractor_version(cfg, **{**base, "thresholds": {"match": 0.5, "no_match": 0.2}}) != v
    other_model = load_config(overrides={"llm": {"model": "gpt-y", "base_url": "http://127.0.0.1:1/v1"}})
    assert extractor_version(other_model, **base) != v
    other_emb = load_config(overrides={"llm": {"model": "gpt-x", "base_url": "http://127.0.0.1:1/v1"},
                                       "embeddings": {"backend": "hash"}})
    assert extractor_version(other_emb, **base) != v
    other_thr = load_config(overrides={"llm": {"model": "gpt-x", "base_url": "http://127.0.0.1:1/v1"},
                                       "embeddings": {"thresholds": {"all-MiniLM-L6-v2": {
                                           "match": 0.8, "no_match": 0.5, "tension": 0.7}}}})
    assert extractor_version(other_thr, **base) != v
    parts = extractor_version_parts(cfg, **base)
    assert parts["llm_model"] == "gpt-x" and parts["embedding_model"] == "minilm:all-MiniLM-L6-v2/384"
    assert parts["prompts"]["atomizer"] == prompt_for(cfg, "atomizer").sha256
    # unrelated config (e.g. the vault path) does not change it
    moved = load_config(overrides={"llm": {"model": "gpt-x", "base_url": "http://127.0.0.1:1/v1"},
                                   "vault": {"db_path": "/elsewhere.db"}})
    assert extractor_version(moved, **base) == v


def test_prompt_content_changes_the_version(monkeypatch):
    import kenning.llm.prompts as prompts

    cfg = load_config()
    v = extractor_version(cfg, prompts=["atomizer"], llm_mode="none")
    real = prompts.load_prompt

    def edited(name, version):
        p = real(name, version)
        return parse_prompt(name, version, "[user]\n" + p.user + "\nBe brief.") if name == "atomizer" else p

    monkeypatch.setattr(prompts, "load_prompt", edited)
    assert extractor_version(cfg, prompts=["atomizer"], llm_mode="none") != v
