import pytest
import yaml

from kenning.config import config_hash, load_config
from kenning.config.loader import ConfigError, defaults_dict

SEED_001_SECTION_0_5 = {
    "entity_detection": ["ignore_markdown_blockquotes", "domain_tld_allowlist_enabled", "enable_ner", "ner_max_chars",
                         "ner_stride", "ner_label_allowlist", "emit_spanless_ner", "url_sort_query_params"],
    "assertion_extraction": ["enable_llm_assertion_extraction", "llm_temperature", "llm_top_p", "llm_seed",
                             "max_retries_llm", "llm_multi_run_count", "k_context", "code_fence_masking",
                             "threshold_link_string_sim", "assertion_upsert_policy"],
    "trust_weights": ["trust_weight_user", "trust_weight_assistant_corroborated", "trust_weight_assistant_uncorroborated"],
    "corroboration": ["coref_window_size"],
    "temporal_reasoning": ["time_link_proximity_chars", "time_link_min_alignment", "fallback_valid_from_asserted",
                           "threshold_close"],
}


def test_seed_defaults():
    cfg = load_config()
    assert cfg.ids.id_namespace == "550e8400-e29b-41d4-a716-446655440000"
    assert cfg.time.anchor_timezone == "UTC"
    pipeline = defaults_dict()["pipeline"]
    for section, keys in SEED_001_SECTION_0_5.items():
        assert set(keys) <= set(pipeline[section]), section
    # docs/decisions.md D13: the stage-4 values where §0.5 and §4.11 disagree
    tw = cfg.pipeline.trust_weights
    assert (tw.trust_weight_assistant_corroborated, tw.trust_weight_assistant_uncorroborated) == (0.9, 0.5)
    assert cfg.pipeline.corroboration.coref_window_size == 10
    m = cfg.export_mapping
    assert (m.messages_path, m.messages_is_mapping, m.format_version) == ("/mapping", True, "1.0")
    assert m.role_mapping == {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}
    assert m.pointer_problems() == []


def test_override_file_merges_and_changes_hash(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump({"time": {"anchor_timezone": "Europe/Berlin"}}))
    base, over = load_config(), load_config(f)
    assert over.time.anchor_timezone == "Europe/Berlin"
    assert over.ids == base.ids
    assert config_hash(over) != config_hash(base)


def test_config_beside_the_vault_is_read(tmp_path):
    (tmp_path / "config.yaml").write_text("pipeline:\n  corroboration:\n    coref_window_size: 3\n")
    assert load_config(None, tmp_path / "kenning.db").pipeline.corroboration.coref_window_size == 3


def test_bad_config_names_the_problem(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("time:\n  anchor_timezon: UTC\n")
    with pytest.raises(ConfigError, match="anchor_timezon"):
        load_config(f)
    f.write_text("[unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(f)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")


def test_every_model_field_has_a_yaml_default():
    data = defaults_dict()
    del data["pipeline"]["corroboration"]
    from kenning.config.models import Config

    with pytest.raises(Exception, match="corroboration"):
        Config.model_validate(data)
