"""Issue 22 §6: seed-001 switches the code does not silently ignore, and defaults as the seed gives them."""

from __future__ import annotations

import pytest

from conftest import run_cli
from kenning.config.loader import ConfigError, load_config


def test_noun_chunk_induction_is_refused_with_a_clear_error(tmp_path):
    """§2B.4.1 #7 needs spaCy with a pinned model, which Kenning does not ship (decisions W40)."""
    with pytest.raises(ConfigError, match="NOUN_CHUNK generator needs spaCy"):
        load_config(overrides={"entities": {"lexicon": {"enable_noun_chunk_induction": True}}})
    cfg = tmp_path / "nc.yaml"
    cfg.write_text("entities:\n  lexicon:\n    enable_noun_chunk_induction: true\n")
    proc = run_cli("status", "--config", str(cfg), db=tmp_path / "k.db", check=False)
    assert proc.returncode == 1 and "enable_noun_chunk_induction" in proc.stderr
    assert load_config().entities.lexicon.enable_noun_chunk_induction is False


def test_member_evidence_edges_default_as_the_seed():
    """§6.7 "include_member_evidence_edges (bool, default false)" (decisions W41)."""
    assert load_config().graph.profile.include_member_evidence_edges is False
