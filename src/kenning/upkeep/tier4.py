"""§42A.2.11 Tier 4 (G65): the queued mode's batch (``kenning review tier4``) and the synchronous mode's inline
calls, both through the model layer — versioned prompt ``tier4_resolution``, every attempt in ``llm_calls``,
``--llm replay`` answers from them without the network.

Modes (``backlinks.llm_resolution_mode``): ``nightly`` queues every unresolved span with candidates; ``synchronous``
asks inline while the back-link stage runs, only when the message has at most ``llm_max_unresolved_for_sync``
such spans, and queues nothing; ``both`` asks inline for the top N (best candidate score first) and queues the rest
(and any inline failure). Spans whose evidence is local_only are asked inline only of a model on this machine."""

from __future__ import annotations

from typing import Any

from kenning.pipeline.clock import Clock
from kenning.upkeep.resolution import TIER4_PROMPT_NAME, endpoint_is_local, process_tier4


class Tier4Batch:
    """The queued mode's batch as a pipeline stage: its run row, one transaction, the model-layer run under it."""

    name = "backlinks-tier4"
    title = "back-links: Tier 4 model resolution of queued mentions"

    def __init__(self, limit: int):
        self.limit = limit

    def run(self, ctx: Any) -> dict[str, Any]:
        from kenning.llm.client import open_llm_run
        from kenning.llm.version import extractor_version

        ev = extractor_version(ctx.config, prompts=[TIER4_PROMPT_NAME], llm_mode=ctx.llm_mode)
        with open_llm_run(ctx, TIER4_PROMPT_NAME, extractor_version=ev) as llm:
            counts = process_tier4(ctx.conn, ctx.config, ctx.clock.now(), llm, limit=self.limit,
                                   local=ctx.llm_mode == "replay" or endpoint_is_local(ctx.config))
            return {**counts, "llm_run_id": llm.run.run_id}


def run_tier4_queue(conn, config, *, now: str, mode: str, limit: int = 50) -> dict[str, Any]:
    """Resolve up to ``limit`` due queue items (one stage run, one transaction, one model-layer run)."""
    from kenning.pipeline.runner import run_stage

    if mode == "none":
        raise ValueError("Tier 4 needs a model: use --llm live (with llm.base_url and llm.model set) or --llm "
                         "replay")
    return run_stage(conn, Tier4Batch(limit), config, Clock(now), args={"limit": limit}, llm_mode=mode,
                     llm_explicit=True).counts


def sync_allowed(mode: str, unresolved: int, max_sync: int) -> tuple[int, bool]:
    """How many of an observation's ``unresolved`` spans are asked inline, and whether the rest are queued."""
    if mode == "nightly":
        return 0, True
    if mode == "synchronous":
        return (unresolved if unresolved <= max_sync else 0), False
    return min(unresolved, max_sync), True  # both
