"""Stage `backlinks` — DOC72 §42A.2 after the node store is published (issue 20; decisions G1–G29), one transaction.

New messages are scanned for mentions (Stage 1), resolved against the node store (Stage 2, Tier 3.5), recorded as
mention observations, aggregated into evidence bundles and promoted into edges through the single writer; the
Tier 5 candidates and the review queue are refreshed. The aggregation watermark moves last in the transaction."""

from __future__ import annotations

from typing import Any

from kenning.pipeline.runner import StageContext
from kenning.upkeep.promotion import BacklinkRun


def node_vectors(ctx: StageContext) -> Any:
    """The vector index for Pass C / Tier 3.5, or None when vectors are off or no node has a vector yet (the
    index stage embeds nodes after this stage: a first import resolves by alias and FTS only; G8)."""
    from kenning.store import knowledge as ksql

    if not ctx.config.retrieval.vector.enabled or ksql.state_get(ctx.conn, "nodes_embedded_through") is None:
        return None
    from kenning.llm.index import VectorIndex

    return VectorIndex(ctx.conn, ctx.config, clock=ctx.clock)


class Backlinks:
    name = "backlinks"
    title = "back-links (mentions → evidence → edges)"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.pipeline.incognito import incognito_skip

        # §13.4: incognito conversations are filtered out of the scan's selection and never marked scanned, so
        # clearing the mode re-learns them (I70; this replaces G64's "incognito:" marks)
        run = {"run_id": ctx.run_id, "vectors": node_vectors(ctx), "progress": ctx.progress,
               "sweep": bool(ctx.inputs.get("sweep")), "incognito_json": incognito_skip(ctx).json}
        cfg = ctx.config.backlinks
        inline = (cfg.llm_resolution_enabled and cfg.llm_resolution_mode in ("synchronous", "both")
                  and getattr(ctx, "llm_mode", "none") != "none")
        if not inline:
            return BacklinkRun(ctx.conn, ctx.config, ctx.clock, **run).run()
        # §42A.2.11 synchronous / both: Tier 4 asked inline, through the model layer (G65)
        from kenning.llm.client import open_llm_run
        from kenning.llm.version import extractor_version
        from kenning.upkeep.resolution import TIER4_PROMPT_NAME, endpoint_is_local

        ev = extractor_version(ctx.config, prompts=[TIER4_PROMPT_NAME], llm_mode=ctx.llm_mode)
        with open_llm_run(ctx, TIER4_PROMPT_NAME, extractor_version=ev) as llm:
            return BacklinkRun(ctx.conn, ctx.config, ctx.clock, **run, llm=llm if llm.enabled else None,
                               llm_local=ctx.llm_mode == "replay" or endpoint_is_local(ctx.config)).run()
