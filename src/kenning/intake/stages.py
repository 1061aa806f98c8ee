"""The funnel's pipeline stages (issue 18 parts 1–3): ``intake`` (incognito purge, envelopes, scoring, policy,
enqueue) and ``extract`` (drain the queue through the registered extractors), both after ``knowledge``; and the
side stage ``intake-mode`` behind ``kenning mode`` and ``kenning ingest --incognito``. One transaction each."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from kenning.intake.drain import Drain
from kenning.intake.funnel import assess_all, make_funnel
from kenning.intake.modes import incognito_conversations, purge_incognito
from kenning.pipeline.runner import StageContext
from kenning.store import intake as isql


def _model_configured(ctx: StageContext) -> bool:
    return ctx.llm_mode != "none"


class IntakeStage:
    name = "intake"
    title = "intake funnel"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        now = ctx.clock.now()
        counts: dict[str, Any] = {}
        # Incognito first: what a mode turned on since the last run forbids is removed before anything is assessed.
        purged = purge_incognito(ctx)
        funnel = make_funnel(ctx.conn, ctx.config, now, ctx.run_id, _model_configured(ctx))
        assess_all(funnel, ctx.progress)
        counts.update({k: v for k, v in purged.items() if v})
        counts.update(sorted(funnel.counts.items()))
        ctx.progress(records=funnel.counts.get("conversations_assessed", 0), file="intake funnel")
        return dict(sorted(counts.items()))


class ExtractStage:
    name = "extract"
    title = "extraction queue"

    def model_wanted(self, config: Any, explicit: bool) -> bool:
        return True  # deep extraction uses the run's model when there is one (rules otherwise, audited)

    def run(self, ctx: StageContext) -> dict[str, Any]:
        limit = ctx.inputs.get("limit")
        with ExitStack() as stack:
            llm = None
            if _model_configured(ctx):
                from kenning.llm import open_llm_run

                llm = stack.enter_context(open_llm_run(ctx, "intake_extract"))
            drain = Drain(ctx.conn, ctx.config, ctx.clock.now(), llm, ctx.inputs.get("extractors"))
            counts = drain.run(limit=limit, progress=ctx.progress)
        ctx.progress(records=counts.get("extractions", 0), file="extraction queue")
        return dict(sorted(counts.items()))


class IntakeModeStage:
    """Set or clear a memory-mode rule, then remove what incognito content had already produced (§13.4)."""
    name = "intake-mode"
    title = "memory mode"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        now = ctx.clock.now()
        counts: dict[str, Any] = {"rules_set": 0, "rules_cleared": 0}
        for scope, value in ctx.inputs.get("set", []):
            counts["rules_set"] += isql.set_mode_rule(ctx.conn, scope, value, "incognito", now, "user")
        cleared = []
        for scope, value in ctx.inputs.get("clear", []):
            if isql.clear_mode_rule(ctx.conn, scope, value):
                counts["rules_cleared"] += 1
                if scope == "conversation":
                    cleared.append(value)
        still = incognito_conversations(ctx.conn, ctx.config)
        # A conversation no rule covers any more is observed afresh by the next intake run (I10).
        free = [c for c in cleared if c not in still]
        if free:
            counts["observations_reopened"] = isql.forget_incognito_skips(ctx.conn, free)
        if ctx.inputs.get("purge", True):
            counts.update(purge_incognito(ctx))
        return counts


def source_rules(paths: list[str]) -> list[tuple[str, str]]:
    return [("source", str(Path(p).expanduser().resolve())) for p in paths]
