"""The nightly upkeep as one resumable DAG (seed 003 §42 "DAG", §42A nightly DAG, §3.6).

Steps run in a fixed order — cleanup → folding (then the merge queue) → motifs → hygiene → compaction → orphan
flags — then the VACUUM policy. Each
step is one pipeline stage (one transaction, the generation's frozen clock) that records itself in
``maintain_steps`` inside that same transaction, so the step's changes and its high-water mark commit together.
A run that dies (killed, a failing step) leaves its generation ``running``/``degraded``: the previous finished
generation's receipt stays what `kenning health` shows, and the next `kenning maintain` resumes the same
generation from the first step that did not finish, with the same ``now`` — so it ends with the same result as a
run that was never interrupted. ``--dry-run`` runs every step inside one transaction that is rolled back."""

from __future__ import annotations

import os
import time
from typing import Any, Callable

import apsw

from kenning.config import Config
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import StageFailed, run_stage
from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import transaction, vacuum
from kenning.upkeep.maintain.cleanup import flag_orphans, run_cleanup
from kenning.upkeep.maintain.compaction import run_compaction
from kenning.upkeep.maintain.context import StepContext
from kenning.upkeep.maintain.folding import run_folding
from kenning.upkeep.maintain.hygiene import run_hygiene
from kenning.upkeep.maintain.motifs import run_motifs

# "tier4": §42A.2.19's resolve_tier4_queue, only when a model is configured (H7). In the seed's DAG it depends on
# the evidence bundles alone and nothing here depends on it, so it runs last: a slow or failing model call never
# holds back the rule steps (a failure degrades the generation after they committed; the next run resumes it).
STEPS: tuple[str, ...] = ("cleanup", "folding", "motifs", "hygiene", "compaction", "orphans", "tier4")
# What the receipt reports, in this order; each is a change this run made (a second run on an unchanged vault
# reports 0 for all of them).
CHANGE_FIELDS: tuple[str, ...] = (
    "archived_node_count", "merge_queue_count", "contradiction_queue_count", "orphan_count",
    "stale_procedure_count", "folded_pair_count", "merged_node_count", "fold_related_count", "fold_conflict_count",
    "pattern_count", "motif_count", "standing_procedure_candidate_count", "procedure_candidate_count",
    "demoted_edge_count", "archived_candidate_node_count", "reviewed_bundle_count", "trace_compacted_count")
HYGIENE_FIELDS = ("demoted_edge_count", "archived_candidate_node_count", "reviewed_bundle_count")
# For tests and demos of the resume: seconds to sleep at the start of every step (inside its transaction).
DELAY_ENV = "KENNING_MAINTAIN_STEP_DELAY"


class MaintainError(RuntimeError):
    """A step failed; its work was rolled back and the generation is marked degraded (rerun to resume)."""


def _step_fn(step: str) -> Callable[..., dict[str, Any]]:
    return {"cleanup": run_cleanup, "folding": run_folding, "motifs": run_motifs, "hygiene": run_hygiene,
            "compaction": run_compaction, "orphans": flag_orphans}[step]


def _run_tier4(sc: StepContext) -> dict[str, Any]:
    """The queued Tier 4 batch (`kenning review tier4`) as a nightly step: skipped, saying why, without a model,
    in a dry run, or when `maintain_tier4.enabled` is off."""
    cfg = sc.config.maintain_tier4
    if not cfg.enabled:
        return {"tier4_skipped": "maintain_tier4.enabled is false"}
    if sc.stage_ctx is None or sc.llm_mode == "none":
        return {"tier4_skipped": "no model configured (llm.base_url / llm.model), or a dry run"}
    from kenning.llm.client import open_llm_run
    from kenning.llm.version import extractor_version
    from kenning.upkeep.resolution import TIER4_PROMPT_NAME, endpoint_is_local, process_tier4

    ctx = sc.stage_ctx
    ev = extractor_version(ctx.config, prompts=[TIER4_PROMPT_NAME], llm_mode=ctx.llm_mode)
    with open_llm_run(ctx, TIER4_PROMPT_NAME, extractor_version=ev) as llm:
        counts = process_tier4(ctx.conn, ctx.config, sc.now, llm, limit=cfg.limit,
                               local=ctx.llm_mode == "replay" or endpoint_is_local(ctx.config))
        return {**counts, "llm_run_id": llm.run.run_id}


def _run_step(sc: StepContext, step: str) -> dict[str, Any]:
    if step == "tier4":
        return _run_tier4(sc)
    if step != "folding" or sc.stage_ctx is None or sc.llm_mode == "none":
        return _step_fn(step)(sc)
    from kenning.llm.client import open_llm_run
    from kenning.llm.version import extractor_version

    ctx = sc.stage_ctx
    ev = extractor_version(ctx.config, prompts=[ctx.config.maintain.folding.prompt], llm_mode=ctx.llm_mode)
    with open_llm_run(ctx, ctx.config.maintain.folding.prompt, extractor_version=ev) as llm:
        return run_folding(sc, llm if llm.enabled else None)


class _StepStage:
    """One DAG step as a pipeline stage (its run row, one transaction)."""

    def __init__(self, step: str, generation: int, now: str):
        self.step, self.generation, self.now = step, generation, now
        self.name = f"maintain_{step}"
        self.title = f"maintain: {step}"

    def run(self, ctx: Any) -> dict[str, Any]:
        delay = os.environ.get(DELAY_ENV)
        if delay:
            time.sleep(float(delay))
        sc = StepContext(ctx.conn, ctx.config, self.now, self.generation, stage_ctx=ctx, run_id=ctx.run_id)
        counts = _run_step(sc, self.step)
        msql.put_step(ctx.conn, self.generation, self.step, "ok", high_water=self.now, counts=counts,
                      finished_at=self.now)
        return counts


def _receipt(generation: int, now: str, steps: dict[str, dict[str, Any]], *, status: str, dry_run: bool,
             resumed: bool) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for counts in steps.values():
        for k, v in (counts or {}).items():
            flat[k] = flat.get(k, 0) + v if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    out = {"generation": generation, "now": now, "status": status, "dry_run": dry_run, "resumed": resumed}
    for f in CHANGE_FIELDS:
        out[f] = int(flat.get(f, 0))
    out["changes"] = sum(out[f] for f in CHANGE_FIELDS)
    out["hygiene_receipt"] = {f: out[f] for f in HYGIENE_FIELDS}
    out["info"] = {k: v for k, v in sorted(flat.items()) if k not in CHANGE_FIELDS}
    out["steps"] = {s: steps.get(s) for s in STEPS}
    return out


def vacuum_due(conn: apsw.Connection, config: Config, now: str, archived_now: int) -> tuple[bool, str]:
    """§3.6: nightly when more than ``archived_threshold`` nodes were archived or deleted that day, else weekly."""
    v = config.maintain.vacuum
    today = msql.archived_between(conn, day_start(now), now) + archived_now
    if today > v.archived_threshold:
        return True, f"{today} nodes archived today (> {v.archived_threshold})"
    last = msql.state_get(conn, "last_vacuum_at")
    if last is None:
        return True, "never vacuumed"
    days = (parse_utc(now) - parse_utc(last)).total_seconds() / 86400
    if days >= v.weekly_days:
        return True, f"weekly ({days:.1f} days since the last VACUUM)"
    return False, f"{today} archived today, last VACUUM {days:.1f} days ago"


def maintain(conn: apsw.Connection, config: Config, *, now: str | None = None, dry_run: bool = False,
             llm_mode: str = "none", llm_explicit: bool = False,
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    now = now or Clock(None).now()
    if dry_run:
        return _dry_run(conn, config, now, progress)
    latest = msql.latest_generation(conn)
    resumed = latest is not None and latest["status"] != "ok"
    if resumed:
        generation, now = latest["generation"], latest["now"]
    else:
        with transaction(conn):
            generation = msql.insert_generation(conn, now, now)
    done = msql.steps_of(conn, generation)
    steps: dict[str, dict[str, Any]] = {s: r["counts"] for s, r in done.items() if r["status"] == "ok"}
    clock = Clock(now)
    for step in STEPS:
        if step in steps:
            continue
        if progress:
            progress(step)
        try:
            res = run_stage(conn, _StepStage(step, generation, now), config, clock,
                            args={"generation": generation, "step": step}, llm_mode=llm_mode,
                            llm_explicit=llm_explicit)
        except StageFailed as e:
            with transaction(conn):
                msql.put_step(conn, generation, step, "failed", high_water=None, counts=None, finished_at=now,
                              error=str(e.cause)[:2000])
                msql.set_generation_status(conn, generation, "degraded")
            receipt = _receipt(generation, now, steps, status="degraded", dry_run=False, resumed=resumed)
            receipt["error"] = f"step {step} failed and was rolled back: {e.cause}"
            raise MaintainError(receipt["error"]) from e
        steps[step] = res.counts
    receipt = _receipt(generation, now, steps, status="ok", dry_run=False, resumed=resumed)
    due, why = vacuum_due(conn, config, now, receipt["archived_node_count"] + receipt["merged_node_count"]
                          + receipt["archived_candidate_node_count"] + receipt["trace_compacted_count"])
    receipt["vacuum"] = {"ran": due, "reason": why}
    with transaction(conn):
        msql.set_generation_status(conn, generation, "ok", finished_at=now, receipt=receipt)
        if due:
            msql.state_set(conn, "last_vacuum_at", now)
    if due:
        vacuum(conn)  # §3.6: after compaction, decay, expiry and archive; never inside a transaction
    return receipt


class _Rollback(Exception):
    pass


def _dry_run(conn: apsw.Connection, config: Config, now: str,
             progress: Callable[[str], None] | None) -> dict[str, Any]:
    """Every step inside one transaction that is rolled back: what a run would change, changing nothing.
    The model is never asked in a dry run (rule folds only)."""
    latest = msql.latest_generation(conn)
    generation = (latest["generation"] + (1 if latest["status"] == "ok" else 0)) if latest else 1
    steps: dict[str, dict[str, Any]] = {}
    receipt: dict[str, Any] = {}
    try:
        with transaction(conn):
            for step in STEPS:
                if progress:
                    progress(step)
                sc = StepContext(conn, config, now, generation, dry_run=True)
                steps[step] = _run_step(sc, step)
            receipt = _receipt(generation, now, steps, status="dry_run", dry_run=True, resumed=False)
            due, why = vacuum_due(conn, config, now, receipt["archived_node_count"] + receipt["merged_node_count"]
                                  + receipt["archived_candidate_node_count"] + receipt["trace_compacted_count"])
            receipt["vacuum"] = {"ran": False, "would_run": due, "reason": why}
            raise _Rollback
    except _Rollback:
        pass
    return receipt


def last_receipt(conn: apsw.Connection) -> dict[str, Any] | None:
    r = msql.last_finished_generation(conn)
    return r["receipt"] if r else None


def day_start(now: str) -> str:
    return format_utc(parse_utc(now).replace(hour=0, minute=0, second=0, microsecond=0))
