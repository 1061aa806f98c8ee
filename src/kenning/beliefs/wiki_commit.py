"""`kenning wiki commit RUN` (seed 002 "At commit time") and the three write-path entry points.

A run commits only with a `commit` verdict whose content hash still matches the run and the live wiki (W70).
The importer then runs over the wiki as the run leaves it — same checks, the verifier's votes replayed, never a
second model opinion — and writes documents, footnotes, quote anchors and ``wiki_beliefs`` in the stage's one
transaction (``wiki_beliefs_fts`` follows by trigger); the staged files are copied into ``wiki/`` (and a carried
source into ``raw/``) as the last step inside that transaction, restored from a backup if a copy fails (W72).
Anything else — unverified, rejected, revise, changed since verify — is refused before a single byte is written.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import apsw

from kenning.beliefs.wiki_run import COMMITTED_FILE, RunFolder, RunFolderError, write_json
from kenning.beliefs.wiki_verify_run import COMMIT, OverlayRun, RecordedJudge
from kenning.config import Config
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import RunResult, StageContext, run_stage


class CommitRefused(RunFolderError):
    """The run may not commit; nothing was changed. ``kind``: unverified | reject | revise | stale."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def commit_blocker(run: RunFolder) -> CommitRefused | None:
    v = run.verdict()
    where = run.dir
    if v is None:
        return CommitRefused("unverified", f"{run.run_id} has not been verified; run `kenning wiki verify {where}` "
                                           "first (nothing was changed)")
    if v.get("verdict") != COMMIT:
        return CommitRefused(v.get("verdict") or "reject",
                             f"{run.run_id} has verdict {v.get('verdict')} ({', '.join(v.get('reasons') or [])}); "
                             "nothing was changed — see `kenning wiki verify " f"{where}`")
    if v.get("content_hash") != run.content_hash():
        return CommitRefused("stale", f"{run.run_id} or the wiki changed after it was verified; run `kenning wiki "
                                      f"verify {where}` again (nothing was changed)")
    return None


def copy_into_workspace(run: RunFolder) -> list[str]:
    """The run's changed files into the workspace, each replaced atomically; all restored if one fails."""
    changed = run.changed_files()
    backup = run.dir / "backup"
    done: list[tuple[str, bool]] = []
    try:
        for rel, src in sorted(changed.items()):
            dst = run.root / rel
            existed = dst.is_file()
            if existed:
                (backup / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(dst, backup / rel)
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(dst.name + ".kenning-tmp")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
            done.append((rel, existed))
    except BaseException:
        for rel, existed in reversed(done):
            dst = run.root / rel
            if existed:
                os.replace(backup / rel, dst)
            else:
                dst.unlink(missing_ok=True)
        raise
    return sorted(changed)


class WikiCommit:
    """Side stage ``wiki-commit``: a verified run into ``wiki/`` and the ledger, in one transaction."""

    name = "wiki-commit"
    title = "commit a verified wiki run"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        run: RunFolder = ctx.inputs["run"]
        v = run.verdict() or {}
        blocked = commit_blocker(run)
        if blocked is not None:
            raise blocked
        counts = OverlayRun(ctx, run, v["workspace"], RecordedJudge(v["judge"], v.get("votes") or {})).run()
        files = copy_into_workspace(run)
        write_json(run.dir / COMMITTED_FILE, {"run_id": run.run_id, "committed_at": ctx.started_at_utc,
                                              "vault_run_id": ctx.run_id, "files": files})
        return {"wiki_run": run.run_id, "workspace": v["workspace"], "files_written": len(files), **counts}


# ---- entry points (the CLI calls these) ---------------------------------------------------------------------
def stage(conn: apsw.Connection, config: Config, workspace_root: str | Path, source: str | Path, *,
          workspace: str | None = None, manual: bool = False, pages: list[str] | None = None,
          llm_mode: str = "none", as_of: str | None = None) -> RunResult:
    from kenning.beliefs.wiki_stage import StageError, WikiStage
    from kenning.sources.wiki import find_root

    root = find_root(workspace_root, config.beliefs.wiki.wiki_dir)
    if root is None:
        raise StageError(f"{workspace_root} is not a wiki workspace (no {config.beliefs.wiki.wiki_dir}/ folder)")
    ws = workspace or config.beliefs.default_workspace
    return run_stage(conn, WikiStage(), config, Clock.from_option(as_of),
                     inputs={"root": root.resolve(), "source": str(source), "workspace": ws, "manual": manual,
                             "pages": pages or []},
                     args={"root": str(root.resolve()), "source": str(source), "workspace": ws, "manual": manual,
                           "pages": pages or [], "as_of": as_of, "llm": llm_mode},
                     llm_mode="none" if manual else llm_mode)


def verify(conn: apsw.Connection, config: Config, run_path: str | Path, *, llm_mode: str = "none",
           as_of: str | None = None) -> dict[str, Any]:
    from kenning.beliefs.wiki_verify_run import WikiVerify

    run = RunFolder.open(run_path, config)
    if run.committed() is not None:   # refused before a run row is written
        raise RunFolderError(f"{run.run_id} is already committed; stage a new run for further edits")
    inputs: dict[str, Any] = {"run": run, "workspace": run.manifest.get("workspace") or
                              config.beliefs.default_workspace}
    run_stage(conn, WikiVerify(), config, Clock.from_option(as_of), inputs=inputs,
              args={"run": str(run.dir), "wiki_run": run.run_id, "llm": llm_mode, "as_of": as_of},
              llm_mode=llm_mode)
    return inputs["result"]


def commit(conn: apsw.Connection, config: Config, run_path: str | Path, *,
           as_of: str | None = None) -> dict[str, Any]:
    """Commit a run; an already-committed run is a no-op (idempotent); a refused one raises `CommitRefused`
    before anything — vault or files — is touched."""
    run = RunFolder.open(run_path, config)
    done = run.committed()
    if done is not None:
        return {**done, "already_committed": True}
    blocked = commit_blocker(run)
    if blocked is not None:
        raise blocked
    r = run_stage(conn, WikiCommit(), config, Clock.from_option(as_of), inputs={"run": run},
                  args={"run": str(run.dir), "wiki_run": run.run_id, "as_of": as_of})
    return {**(run.committed() or {}), "already_committed": False, "counts": r.counts}
