"""The belief ledger's stages: each one transaction and one run row, like every stage (pipeline/runner.py)."""

from __future__ import annotations

from typing import Any

from kenning.beliefs import ledger
from kenning.beliefs.verify import verify_quotes
from kenning.beliefs.wiki_import import WikiImport
from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage0 import check_namespace


class WikiRebuild(WikiImport):
    """`kenning reindex --rebuild-beliefs`: the same import, where a missing/unparseable sidecar warns and skips."""

    name = "beliefs-rebuild"
    title = "rebuild beliefs from sidecars"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        ctx.inputs["rebuild"] = True
        return super().run(ctx)


class PublishBeliefs:
    """Publish `BeliefInput`s (``inputs["items"]``) into ``inputs["workspace"]`` — what a feed's stage does inline."""

    name = "beliefs-publish"
    title = "publish beliefs"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        check_namespace(ctx)
        ws = ctx.inputs.get("workspace") or ctx.config.beliefs.default_workspace
        result = ledger.publish_beliefs(ctx.conn, ws, ctx.inputs["items"], ctx)
        return {"workspace": ws, **result.counts()}


class ManualSupersede:
    name = "beliefs-supersede"
    title = "supersede a belief"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        o = ledger.supersede(ctx.conn, ctx.inputs["old"], ctx.inputs["new"], ctx.inputs["reason"], ctx,
                             ctx.inputs.get("note"))
        return {"superseded": o["belief_id"], "superseded_by": o["superseded_by_belief_id"], "reason": o["reason"],
                "superseded_at": o["at"]}


class MarkDrifted:
    """`kenning beliefs verify --mark-drifted`: re-hash every quote, mark beliefs citing drifted ones."""

    name = "beliefs-drift"
    title = "mark drifted beliefs"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        report = verify_quotes(ctx.conn, ctx.inputs.get("workspace"))
        marked = ledger.mark_drifted(ctx.conn, report["beliefs_with_drifted_quotes"], ctx,
                                     "a supporting quote no longer matches its source")
        for o in marked:
            ctx.warn("BELIEF_SOURCE_DRIFTED", f"{o['belief_id']} marked source_drifted", belief_id=o["belief_id"])
        ctx.inputs["report"] = report
        return {"quotes_checked": report["quotes_checked"], "drifted": report["drifted"],
                "source_missing": report["source_missing"], "beliefs_marked_drifted": len(marked)}


class JudgedM1:
    """Side stage ``beliefs-m1``: M1 with a model judge, its calls logged in this run (seed 002 M1)."""

    name = "beliefs-m1"
    title = "M1 citation fidelity (model-judged)"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.beliefs.judge import LLMJudge
        from kenning.beliefs.verify import m1
        from kenning.llm.client import open_llm_run

        i = ctx.inputs
        with open_llm_run(ctx, "m1_judge") as llm:
            report = m1(ctx.conn, ctx.config, LLMJudge(llm), i.get("workspace"), i.get("sample"), i.get("seed"))
        i["report"] = report
        return {k: v for k, v in report.items() if isinstance(v, (int, float, str)) or v is None}
