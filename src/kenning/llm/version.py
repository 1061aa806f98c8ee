"""The extractor version (seed 000 §6), computed here and nowhere else.

    from kenning.llm.version import extractor_version
    ev = extractor_version(config, prompts=["atomizer", "verifier"], cue_lists={"negation": NEG_CUES},
                           llm_mode=ctx.llm_mode)
    # "ev1-3f9a…" — store it on every row the extractor makes (BeliefOccurrence.extractor_version, …)

It hashes (JCS, sha256) the *contents* of the pinned prompt files, the cue word lists, the model IDs (LLM and
embedding, with the embedding dimension) and the key thresholds (match / no_match / tension of the embedding
model unless given). Rollback is then ``DELETE … WHERE extractor_version = ?`` and a backfill skips what the
current version already processed (seed 000 §6). Live and replay runs get the same version (same model name);
``--llm none`` gets ``llm_model: none`` because rules-only output differs.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kenning.config import Config
from kenning.llm.embed import model_id_for
from kenning.llm.prompts import prompt_for
from kenning.llm.thresholds import thresholds_for
from kenning.sources.jcs import jcs_hash

FORMAT = "ev1"


def extractor_version_parts(config: Config, *, prompts: Iterable[str] = (),
                            cue_lists: Mapping[str, Iterable[str]] | None = None,
                            thresholds: Mapping[str, float] | None = None, llm_mode: str | None = None,
                            embedding_model_id: str | None = None, extra: Mapping[str, Any] | None = None
                            ) -> dict[str, Any]:
    """What :func:`extractor_version` hashes, as a dict (store it once per run for inspection)."""
    from kenning.llm.client import resolve_mode

    mode = llm_mode if llm_mode is not None else resolve_mode(config, None)
    emb = embedding_model_id or model_id_for(config)
    if thresholds is None:
        t = thresholds_for(config, emb, warn=False)
        thresholds = {"match": t.match, "no_match": t.no_match, "tension": t.tension}
    return {
        "format": FORMAT,
        "prompts": {name: prompt_for(config, name).sha256 for name in sorted(set(prompts))},
        "cue_lists": {name: list(words) for name, words in sorted((cue_lists or {}).items())},
        "llm_model": (config.llm.model or "none") if mode != "none" else "none",
        "embedding_model": f"{emb}/{config.embeddings.dimension}",
        "thresholds": {k: float(v) for k, v in sorted(thresholds.items())},
        "extra": dict(extra or {}),
    }


def extractor_version(config: Config, **kw: Any) -> str:
    """``"ev1-" + 16 hex`` of sha256(JCS(:func:`extractor_version_parts`)). Same inputs ⇒ same version."""
    return f"{FORMAT}-{jcs_hash(extractor_version_parts(config, **kw))[:16]}"
