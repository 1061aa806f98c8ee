"""Run stages: one transaction each, a run row each, events logged, all-or-nothing."""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import apsw

from kenning import __version__
from kenning.config import Config, config_hash
from kenning.pipeline.clock import Clock
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize
from kenning.store import runs as runs_sql
from kenning.store.connection import transaction

ProgressFn = Callable[..., None]


def _no_progress(**_: Any) -> None:
    return None


@dataclass
class StageContext:
    conn: apsw.Connection
    config: Config
    clock: Clock
    ids: IdFactory
    run_id: str
    stage: str
    started_at_utc: str
    inputs: dict[str, Any] = field(default_factory=dict)
    progress: ProgressFn = _no_progress
    # none | live | replay, already resolved (kenning.llm.client.resolve_mode); open a model with
    # kenning.llm.open_llm_run(ctx, name), which logs every call in this stage's transaction.
    llm_mode: str = "none"
    _events: list[tuple] = field(default_factory=list)

    def event(self, level: str, code: str, message: str, **context: Any) -> None:
        self._events.append((self.run_id, len(self._events) + 1, level, code, message,
                             canonicalize(context) if context else None))

    def warn(self, code: str, message: str, **context: Any) -> None:
        self.event("WARN", code, message, **context)

    @property
    def events(self) -> list[tuple]:
        return self._events


class Stage(Protocol):
    name: str
    title: str

    def run(self, ctx: StageContext) -> dict[str, Any]: ...


def stage_llm_mode(stage: Any, config: Config, llm_mode: str, explicit: bool) -> str:
    """The one rule for whether a stage may ask the model (decision M30). ``llm_mode`` is the run's resolved
    mode (none | live | replay); ``explicit`` says the user asked for it for this run (``--llm``,
    ``KENNING_LLM_MODE`` or ``llm.mode`` set in a config) rather than ``llm.mode: auto`` finding an endpoint.
    A stage that can call a model says whether it wants one with ``model_wanted(config, explicit)``; the
    stage then sees ``ctx.llm_mode`` = the run's mode, or ``none`` — so its extractor version, fingerprint
    and model-layer run all agree with what it actually did. Stages without the hook get the run's mode
    (their model use is the command itself: a judge, an analysis the user asked for)."""
    if llm_mode == "none":
        return "none"
    wanted = getattr(stage, "model_wanted", None)
    if wanted is None or wanted(config, explicit):
        return llm_mode
    return "none"


class StageFailed(RuntimeError):
    def __init__(self, stage: str, run_id: str, cause: BaseException):
        super().__init__(f"stage {stage} failed and was rolled back: {cause}")
        self.stage, self.run_id, self.cause = stage, run_id, cause


@dataclass
class RunResult:
    stage: str
    run_id: str
    counts: dict[str, Any]
    events: list[tuple]


def run_stage(
    conn: apsw.Connection,
    stage: Stage,
    config: Config,
    clock: Clock,
    *,
    inputs: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
    llm_mode: str = "none",
    llm_explicit: bool = False,
) -> RunResult:
    cfg_hash = config_hash(config)
    ids = IdFactory(config.ids.id_namespace)
    seq = runs_sql.next_seq(conn, stage.name)
    started = clock.now()
    run_id = ids.run(stage.name, started, cfg_hash, seq)
    run_row = {
        "run_id": run_id, "stage": stage.name, "seq": seq, "started_at_utc": started, "finished_at_utc": None,
        "status": "running", "counts_json": None, "config_hash": cfg_hash, "clock_mode": clock.mode,
        "args_json": canonicalize(args or {}), "error": None, "kenning_version": __version__,
    }
    ctx = StageContext(conn, config, clock, ids, run_id, stage.name, started, inputs or {}, progress or _no_progress,
                       stage_llm_mode(stage, config, llm_mode, llm_explicit))
    try:
        with transaction(conn):
            runs_sql.insert_run(conn, run_row)
            counts = stage.run(ctx)
            runs_sql.insert_events(conn, ctx.events)
            runs_sql.finish_run(conn, run_id, "ok", clock.now(), canonicalize(counts))
    except BaseException as e:
        # The stage's work is rolled back; the failure itself is recorded in a transaction of its own.
        # A stage may say why it failed in detail (e.g. a verifier's reasons): ``failure_events`` are
        # (level, code, message, context) tuples, ``failure_counts`` a dict; both land on the failed run.
        extra = [(run_id, i + 2, lvl, code, msg, canonicalize(c) if c else None)
                 for i, (lvl, code, msg, c) in enumerate(getattr(e, "failure_events", None) or [])]
        fcounts = getattr(e, "failure_counts", None)
        try:
            with transaction(conn):
                runs_sql.insert_run(conn, {**run_row, "status": "failed", "finished_at_utc": clock.now(),
                                           "counts_json": canonicalize(fcounts) if fcounts else None,
                                           "error": f"{type(e).__name__}: {e}"[:4000]})
                runs_sql.insert_events(conn, [(run_id, 1, "ERROR", "STAGE_FAILED", f"{type(e).__name__}: {e}"[:4000],
                                               canonicalize({"traceback": traceback.format_exc()[-8000:]}))] + extra)
        except Exception:  # pragma: no cover - never mask the original failure
            pass
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise StageFailed(stage.name, run_id, e) from e
    _export_knowledge_log(conn, config)
    return RunResult(stage.name, run_id, counts, ctx.events)


def _export_knowledge_log(conn: apsw.Connection, config: Config) -> None:
    """After a stage commits, append its knowledge commits to graph_events.jsonl (DOC72 §3.1: exported after the
    commit; a failure leaves them for the next export and never fails the stage)."""
    from kenning.knowledge.eventlog import export_pending

    try:
        export_pending(conn, config)
    except Exception:  # pragma: no cover - the log is an export; SQLite stays authoritative
        pass
