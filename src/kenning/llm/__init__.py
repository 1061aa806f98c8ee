"""Kenning's model layer: an OpenAI-compatible LLM client whose every call is logged and replayable,
embeddings (MiniLM, OpenAI-compatible, hashing), a sqlite-vec vector index with model migration, and
per-model similarity thresholds. Kenning works with no model at all; this layer makes it better with one.

API summary (each module's docstring has the details):

LLM — ``kenning.llm.client``
    with open_llm_run(ctx, "atomizer", extractor_version=ev) as llm:  # in a stage; calls join its transaction
        if llm.enabled:                                               # False under --llm none
            res = llm.structured("atomizer", {"candidates": [...]}, MySchema, message_id=mid, item_key="0")
            res.ok, res.value, res.error_code, res.raw_output, res.call_ids
        llm.run.add(messages_processed=1, assertions_extracted=3)
    LLMClient(config, conn=None, run=None, mode=None)   # direct use; .ping() for `kenning llm ping`
    resolve_mode(config, "--llm value") -> "none" | "live" | "replay"
    Errors: LLMUnavailable (endpoint down, names the URL), LLMEndpointError (401/403/404), ReplayMissing,
    LLMConfigError, LLMDisabled — all ModelLayerError (``kenning.llm.errors``).
    Tables: llm_extraction_runs, llm_extraction_calls (seed 001 §4.1); SQL in kenning.store.llm.

Prompts — ``kenning.llm.prompts``: files ``llm/prompts/<name>_v<N>.txt`` with ``[system]``/``[user]`` sections
    and ``${var}`` placeholders; the version used is pinned in ``llm.prompt_versions``.

Extractor version — ``kenning.llm.version.extractor_version(config, prompts=[...], cue_lists={...},
    thresholds=None, llm_mode=ctx.llm_mode)`` → "ev1-…" (seed 000 §6). The only place it is computed.

Embeddings — ``kenning.llm.embed.get_embedder(config, spec=None, conn=None)`` → Embedder with
    ``.embed(texts) -> (n, D) float32`` (L2-normalized), ``.model_id``, ``.model_name``, ``.dimension``.
    Backends minilm | openai[:MODEL] | hash; D = ``embeddings.dimension``; with ``conn`` a SQLite cache.

Vector index — ``kenning.llm.index.VectorIndex(conn, config)``: ``upsert(space, [(id, text[, kind])])``,
    ``delete(space, ids)``, ``search(text_or_vector, k, space=, kinds=, item_ids=, min_score=) -> [Hit]``,
    ``thresholds()``, ``status()``, ``migrate(spec)`` (DOC72 §3.7). SQL in kenning.store.vectors.

Thresholds — ``kenning.llm.thresholds.thresholds_for(config, model)`` → match / no_match / tension;
    ``kenning.llm.calibrate`` fits them (``kenning calibrate``).

Tests — ``kenning.llm.testserver.OpenAITestServer``: a real OpenAI-compatible HTTP server with scripted
    answers and faults (429, 500, malformed JSON, slow); pytest fixture ``llm_server`` in tests/conftest.py.
"""

from kenning.llm.client import LLMClient, LLMRun, Result, open_llm_run, resolve_mode
from kenning.llm.errors import (EmbeddingError, LLMConfigError, LLMDisabled, LLMEndpointError, LLMUnavailable,
                                ModelLayerError, PromptError, ReplayMissing, VectorIndexError)

__all__ = [
    "LLMClient", "LLMRun", "Result", "open_llm_run", "resolve_mode",
    "ModelLayerError", "LLMConfigError", "LLMDisabled", "LLMEndpointError", "LLMUnavailable", "ReplayMissing",
    "PromptError", "EmbeddingError", "VectorIndexError",
]
