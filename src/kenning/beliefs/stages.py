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


class FeedRebuild:
    """`kenning reindex --rebuild-beliefs`, the feeds' half (W33): every belief living on a conversation is
    deleted and published again from what the feeds read — stage 5's claims and the self-belief nodes. Kenning's
    own times come from `belief_sightings` and your decisions from `belief_overrides`, neither of which a rebuild
    touches, so the rows come back identical to what ingest wrote. Beliefs a caller published itself
    (`beliefs-publish` runs) have no feed to come back from and are kept."""

    name = "beliefs-rebuild-feeds"
    title = "rebuild conversation and self beliefs"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.beliefs.question import drop_statements
        from kenning.selfbelief.ledger_feed import publish_nodes
        from kenning.store import beliefs as sql
        from kenning.store import temporal as tsql
        from kenning.temporal.feed import conversation_beliefs

        check_namespace(ctx)
        cfg = ctx.config
        only = ctx.inputs.get("workspace")
        conv_ws = cfg.beliefs.default_workspace
        self_ws = cfg.self_beliefs.ledger.workspace or conv_ws
        wanted = [w for w in dict.fromkeys([conv_ws, self_ws]) if only is None or w == only]
        counts: dict[str, Any] = {"workspaces": wanted, "beliefs_deleted": 0}
        sql.defer_foreign_keys(ctx.conn)
        removed: list[str] = []
        for ws in wanted:
            gone = sql.conversation_belief_ids(ctx.conn, ws, [PublishBeliefs.name])
            sql.detach_supersession_refs(ctx.conn, gone)
            sql.delete_beliefs(ctx.conn, gone)
            removed += gone
            counts["beliefs_deleted"] += len(gone)
        if conv_ws in wanted and cfg.pipeline.temporal_reasoning.publish_beliefs:
            items, fcounts = conversation_beliefs(tsql.feed_rows(ctx.conn), tsql.conflicts(ctx.conn), ctx.ids,
                                                  cfg.beliefs.statement_max_chars)
            res = ledger.publish_beliefs(ctx.conn, conv_ws, items, ctx) if items else None
            counts["conversation_beliefs"] = len(res.inserted) if res else 0
        if self_ws in wanted and cfg.self_beliefs.ledger.enabled:
            node_ids = sql.self_node_ids(ctx.conn)
            out = publish_nodes(ctx.conn, cfg, ctx, node_ids) if node_ids else {}
            counts["self_beliefs"] = out.get("ledger_beliefs_inserted", 0)
        counts["provenance_removed"] = sum(sql.delete_uncited_conversation_provenance(ctx.conn, ws) for ws in wanted)
        left = set(sql.existing_belief_ids(ctx.conn, removed))
        drop_statements(ctx.conn, cfg, sorted(set(removed) - left), ctx.clock)
        return counts


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


class RestoreBelief:
    name = "beliefs-restore"
    title = "restore a belief (undo a supersession or drift mark)"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        o = ledger.restore(ctx.conn, ctx.inputs["belief_id"], ctx.inputs["reason"], ctx)
        return {"restored": o["belief_id"], "undid": o["undid"], "reason": o["reason"], "at": o["at"]}


class UndisputeBelief:
    name = "beliefs-undispute"
    title = "undispute beliefs (they do not conflict)"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        o = ledger.undispute(ctx.conn, ctx.inputs["belief_id"], ctx.inputs.get("other"), ctx.inputs["reason"], ctx)
        return {"undisputed": o["belief_id"], "with": o["other_belief_id"], "reason": o["reason"], "at": o["at"]}


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
