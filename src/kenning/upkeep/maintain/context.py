"""What every maintain step gets: the connection (inside the step's one transaction), the config, the
generation's frozen ``now``, the single writer on that clock, and whether this is a dry run."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable

import apsw

from kenning.config import Config
from kenning.knowledge.ops import KnowledgeWrite
from kenning.knowledge.writer import CommitResult, KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.sources.ids import IdFactory
from kenning.sources.timestamps import format_utc, parse_utc

# Node writes are batched: one commit per this many operations keeps 100k-node runs fast and commits readable.
BATCH = 500


@dataclass
class StepContext:
    conn: apsw.Connection
    config: Config
    now: str
    generation: int
    dry_run: bool = False
    stage_ctx: Any = None  # the pipeline StageContext (model-layer runs need it); None in a dry run
    run_id: str | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ids = IdFactory(self.config.ids.id_namespace)
        self.writer = KnowledgeWriter(self.conn, self.config, clock=Clock(self.now), run_id=self.run_id,
                                      export_log=False)

    @property
    def llm_mode(self) -> str:
        return "none" if self.stage_ctx is None else (getattr(self.stage_ctx, "llm_mode", "none") or "none")

    def days_before(self, days: float) -> str:
        return format_utc(parse_utc(self.now) - dt.timedelta(days=days))

    def age_days(self, ts: str | None) -> float:
        if not ts:
            return 0.0
        return (parse_utc(self.now) - parse_utc(ts)).total_seconds() / 86400

    def write(self, step: str, summary: str, ops: list[Any]) -> CommitResult:
        return self.writer.write(KnowledgeWrite(source_event=f"maintain:{step}", change_summary=summary, ops=ops))

    def write_batches(self, step: str, summary: str, ops: Iterable[Any]) -> int:
        """Write ``ops`` in commits of BATCH operations; returns how many commits were made."""
        batch, commits = [], 0
        for op in ops:
            batch.append(op)
            if len(batch) >= BATCH:
                commits += int(self.write(step, summary, batch).created)
                batch = []
        if batch:
            commits += int(self.write(step, summary, batch).created)
        return commits
