"""The public face of Kenning: open a vault, ingest, ask."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import apsw

from kenning.config import Config, load_config
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import ProgressFn, RunResult, run_stage
from kenning.pipeline.stages import STAGES, parse_stage_list
from kenning.store import raw as raw_sql
from kenning.store import runs as runs_sql
from kenning.store.connection import open_store


def default_db_path(config: Config | None = None) -> Path:
    env = os.environ.get("KENNING_DB")
    if env:
        return Path(env).expanduser()
    cfg = config or load_config()
    return Path(cfg.vault.db_path).expanduser()


@dataclass
class Vault:
    path: Path
    config: Config
    conn: apsw.Connection

    @classmethod
    def open(cls, db: str | Path | None = None, *, config_path: str | Path | None = None,
             readonly: bool = False, overrides: dict | None = None) -> "Vault":
        path = Path(db).expanduser() if db else default_db_path(load_config(config_path, None, overrides))
        config = load_config(config_path, path, overrides)
        conn = open_store(path, readonly=readonly, busy_timeout_ms=config.vault.busy_timeout_ms)
        return cls(path, config, conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Vault":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def ingest(self, paths: Sequence[str | Path], *, as_of: str | None = None, stages: str | None = None,
               progress: ProgressFn | None = None, llm: str | None = None) -> list[RunResult]:
        """Run the ingest stages. ``llm`` is the --llm value (none | live | replay; None = from config)."""
        from kenning.llm.client import resolve_mode

        clock = Clock.from_option(as_of)
        names = parse_stage_list(stages, self.config.ingest.default_stages)
        llm_mode = resolve_mode(self.config, llm)
        results = []
        for name in names:
            results.append(run_stage(
                self.conn, STAGES[name], self.config, clock,
                inputs={"paths": [str(p) for p in paths]},
                args={"paths": [str(p) for p in paths], "stages": names, "as_of": as_of, "llm": llm_mode},
                progress=progress, llm_mode=llm_mode,
            ))
        return results

    def status(self) -> dict[str, Any]:
        return {
            "db": str(self.path),
            "tables": runs_sql.table_counts(self.conn),
            "last_runs": runs_sql.last_runs(self.conn, 10),
        }

    def rejects(self, limit: int = 100) -> list[dict]:
        return raw_sql.list_rejects(self.conn, limit)
