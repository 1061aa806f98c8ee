"""One rule for whether a pipeline stage asks the model (decision M30): the runner gives each stage either the
run's mode or ``none`` through the stage's ``model_wanted`` hook, so every stage's extractor version and
model-layer runs agree with what it did. Real ingests against the scripted OpenAI-compatible server."""

from __future__ import annotations

import pytest

from exportkit import conversation, query, write_export
from kenning.api import Vault
from kenning.config import load_config
from kenning.llm.client import mode_is_explicit
from kenning.pipeline.runner import stage_llm_mode
from kenning.pipeline.stages import SIDE_STAGES, STAGES

AS_OF = "2024-12-31T00:00:00Z"
from conftest import TEST_KEY as KEY
MESSAGES = [("user", "I moved to Lisbon with my sister Anna last spring."),
            ("assistant", "Lisbon is lovely."),
            ("user", "I work at Acme Robotics now.")]


def answer(body: dict) -> dict:
    # NER asks for names, stage 4 for assertions: an empty answer of either shape is valid for both.
    return {"entities": [], "assertions": []}


@pytest.fixture
def server(llm_server):
    llm_server.default_chat = answer
    return llm_server


def ingest(tmp_path, server, mode: str | None, **extra) -> list[str]:
    """Ingest through stage 4 and return the names of the model-layer runs the stages opened."""
    export = write_export(tmp_path / "conversations.json", [conversation("c-gate", MESSAGES)])
    over = {"llm": {"base_url": server.base_url, "model": "scripted", "api_key": KEY, "timeout_s": 5,
                    "backoff_initial_s": 0.001, "backoff_max_s": 0.01},
            "embeddings": {"backend": "hash"}, **extra}
    db = tmp_path / f"{mode}.db"
    with Vault.open(db, overrides=over) as v:
        v.ingest([export], as_of=AS_OF, stages="0,1,2A,2B,3,4", llm=mode)
    return sorted({r["name"] for r in query(db, "SELECT name FROM llm_extraction_runs")})


def test_auto_with_an_endpoint_uses_the_stages_whose_switch_is_on(tmp_path, server):
    # entities.ner.llm.enabled is on by default; stage 4's seed switch is off: only NER asks
    assert ingest(tmp_path, server, None) == ["ner"]


def test_explicit_live_switches_on_stage_4_too(tmp_path, server):
    assert ingest(tmp_path, server, "live") == ["assertion_extract", "ner"]


def test_none_asks_nothing_whatever_the_switches(tmp_path, server):
    on = {"pipeline": {"assertion_extraction": {"enable_llm_assertion_extraction": True}}}
    assert ingest(tmp_path, server, "none", **on) == []
    assert server.chat_requests == []


def test_a_stage_switch_off_keeps_the_model_out_even_when_asked(tmp_path, server):
    off = {"entities": {"ner": {"llm": {"enabled": False}}}}
    assert ingest(tmp_path, server, "live", **off) == ["assertion_extract"]


def test_the_rule_in_one_place():
    cfg = load_config()
    assert mode_is_explicit(cfg, None) is False and mode_is_explicit(cfg, "live") is True
    assert stage_llm_mode(STAGES["4"], cfg, "live", explicit=False) == "none"
    assert stage_llm_mode(STAGES["4"], cfg, "replay", explicit=True) == "replay"
    assert stage_llm_mode(STAGES["2A"], cfg, "live", explicit=False) == "live"
    assert stage_llm_mode(STAGES["2A"], cfg, "none", explicit=True) == "none"
    assert stage_llm_mode(STAGES["6"], cfg, "live", explicit=False) == "none"     # profile LLM tier (T34)
    assert stage_llm_mode(STAGES["6"], cfg, "live", explicit=True) == "live"
    # stages without the hook (the self stage, a judge the user asked for) take the run's mode
    assert stage_llm_mode(STAGES["self"], cfg, "live", explicit=False) == "live"
    assert stage_llm_mode(SIDE_STAGES["beliefs-m1"], cfg, "replay", explicit=False) == "replay"
