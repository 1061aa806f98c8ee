"""The public face of Kenning: open a vault, ingest, ask."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import apsw

from kenning.config import Config, load_config
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import ProgressFn, RunResult, run_stage
from kenning.sources.inputs import CHATGPT_EXPORT, WIKI_WORKSPACE, classify_input
from kenning.store import raw as raw_sql
from kenning.store import runs as runs_sql
from kenning.store.connection import open_store, transaction

if TYPE_CHECKING:
    from kenning.retrieve.search import SearchResult


class _FromStages:
    """A name of kenning.pipeline.stages, imported on first use: that module imports every stage (and through
    them the extraction rules, the knowledge contracts, the wiki verifier), which a search, `status` or any read
    never runs — a one-shot `kenning search` was paying ~0.5 s for it (issue 24 §4; decisions F6)."""

    def __init__(self, name: str):
        self.name = name

    def _target(self) -> Any:
        from kenning.pipeline import stages

        return getattr(stages, self.name)

    def __getitem__(self, key: str) -> Any:
        return self._target()[key]

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self._target()(*args, **kw)


STAGES, SIDE_STAGES, parse_stage_list = _FromStages("STAGES"), _FromStages("SIDE_STAGES"), _FromStages("parse_stage_list")


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
               progress: ProgressFn | None = None, workspace: str | None = None,
               judge: Any = None, self_name: str | None = None, llm: str | None = None,
               incognito: bool = False, follow_symlinks: bool = False, defer_vectors: bool = False
               ) -> list[RunResult]:
        """Import, one import at a time per vault (a second one waits; issue 23 part 5). See ``_ingest``.
        ``defer_vectors`` (`kenning ingest`): more than ``vector_fill.inline_max`` turns to embed are left to
        :meth:`fill_vectors` (issue 24 §1, Q1); without it the index stage embeds everything, as before."""
        from kenning.store.import_lock import import_lock

        with import_lock(self.path, self.config.concurrency.import_wait_s):
            return self._ingest(paths, as_of=as_of, stages=stages, progress=progress, workspace=workspace,
                                judge=judge, self_name=self_name, llm=llm, incognito=incognito,
                                follow_symlinks=follow_symlinks, defer_vectors=defer_vectors)

    def _ingest(self, paths: Sequence[str | Path], *, as_of: str | None = None, stages: str | None = None,
                progress: ProgressFn | None = None, workspace: str | None = None,
                judge: Any = None, self_name: str | None = None, llm: str | None = None,
                incognito: bool = False, follow_symlinks: bool = False, defer_vectors: bool = False
                ) -> list[RunResult]:
        """Import each path with the importer its structure calls for: ChatGPT exports and transcripts through
        the conversation stages (``self_name`` names the vault owner among transcript participants), wiki
        workspaces through the `wiki` stage (one verified run per workspace). ``llm`` is the --llm value
        (none | live | replay; None = from config), stored in the run args and handed to the stages as
        ``ctx.llm_mode``. ``incognito`` marks these files do-not-learn (§13.4) before anything is derived."""
        from kenning.llm.client import mode_is_explicit, resolve_mode

        clock = Clock.from_option(as_of)
        llm_mode = resolve_mode(self.config, llm)
        names = parse_stage_list(stages, self.config.ingest.default_stages)
        wcfg = self.config.beliefs.wiki
        kinds = {str(p): classify_input(p, wcfg.wiki_dir, wcfg.sidecar_suffix) for p in paths}
        exports = [p for p, k in kinds.items() if k == CHATGPT_EXPORT]
        wikis = [p for p, k in kinds.items() if k == WIKI_WORKSPACE]
        results = []
        if incognito and exports:
            from kenning.intake.stages import source_rules

            rules = source_rules(exports)
            results.append(run_stage(self.conn, SIDE_STAGES["intake-mode"], self.config, clock,
                                     inputs={"set": rules, "purge": False},
                                     args={"set": rules, "as_of": as_of}))
        if exports or not wikis:
            args: dict[str, Any] = {"paths": exports, "stages": names, "as_of": as_of, "llm": llm_mode}
            if self_name:
                args["self"] = self_name
            for name in names:
                results.append(run_stage(
                    self.conn, STAGES[name], self.config, clock,
                    inputs={"paths": exports, "self_name": self_name, "defer_vectors": defer_vectors},
                    args=args, progress=progress, llm_mode=llm_mode,
                    llm_explicit=mode_is_explicit(self.config, llm),
                ))
        for root in wikis:
            results.append(self.ingest_wiki(root, as_of=as_of, workspace=workspace, judge=judge, clock=clock,
                                            follow_symlinks=follow_symlinks))
        return results

    def ingest_wiki(self, root: str | Path, *, as_of: str | None = None, workspace: str | None = None,
                    judge: Any = None, clock: Clock | None = None, rebuild: bool = False,
                    follow_symlinks: bool = False) -> RunResult:
        from kenning.beliefs.judge import NoJudge
        from kenning.sources.wiki import find_root

        found = find_root(root, self.config.beliefs.wiki.wiki_dir)
        wiki_root = str((found or Path(root)).expanduser().resolve())
        ws = workspace or self.config.beliefs.default_workspace
        judge = judge or NoJudge()
        stage = SIDE_STAGES["beliefs-rebuild" if rebuild else "wiki"]
        return run_stage(self.conn, stage, self.config, clock or Clock.from_option(as_of),
                         inputs={"wiki_root": wiki_root, "workspace": ws, "judge": judge,
                                 "follow_symlinks": follow_symlinks},  # issue 23 §2: links out of raw/ refused
                         args={"wiki_root": wiki_root, "workspace": ws, "judge": judge.name, "as_of": as_of},
                         llm_mode=getattr(judge, "mode", "none"))

    # ---- the belief ledger (seed 002) ----------------------------------------------------------------
    def why(self, query: str, *, workspace: str | None = None, since: str | None = None, until: str | None = None,
            include_history: bool | None = None, predicate: str | None = None,
            told_by: str | None = None) -> dict[str, Any]:
        from kenning.beliefs.why import why

        return why(self.conn, self.config, query, workspace=workspace, since=since, until=until,
                   include_history=include_history, predicate=predicate, told_by=told_by)

    def restore_belief(self, belief_id: str, reason: str, *, as_of: str | None = None) -> RunResult:
        return run_stage(self.conn, SIDE_STAGES["beliefs-restore"], self.config, Clock.from_option(as_of),
                         inputs={"belief_id": belief_id, "reason": reason},
                         args={"belief_id": belief_id, "reason": reason, "as_of": as_of})

    def undispute_belief(self, belief_id: str, reason: str, *, other: str | None = None,
                         as_of: str | None = None) -> RunResult:
        return run_stage(self.conn, SIDE_STAGES["beliefs-undispute"], self.config, Clock.from_option(as_of),
                         inputs={"belief_id": belief_id, "other": other, "reason": reason},
                         args={"belief_id": belief_id, "other": other, "reason": reason, "as_of": as_of})

    def belief_history(self, belief_id: str) -> dict[str, Any] | None:
        from kenning.beliefs.why import belief_history

        return belief_history(self.conn, self.config, belief_id)

    def beliefs(self, *, workspace: str | None = None, topic: str | None = None, current_only: bool = False,
                limit: int = 100, offset: int = 0) -> tuple[list[dict], int]:
        from kenning.beliefs.why import list_entries

        return list_entries(self.conn, workspace, topic, current_only, limit, offset)

    def supersede(self, old: str, new: str, reason: str, *, as_of: str | None = None,
                  note: str | None = None) -> RunResult:
        return run_stage(self.conn, SIDE_STAGES["beliefs-supersede"], self.config, Clock.from_option(as_of),
                         inputs={"old": old, "new": new, "reason": reason, "note": note},
                         args={"old": old, "new": new, "reason": reason, "as_of": as_of})

    def verify_beliefs(self, *, workspace: str | None = None, mark_drifted: bool = False,
                       as_of: str | None = None) -> dict[str, Any]:
        from kenning.beliefs.verify import verify_quotes

        if not mark_drifted:
            return verify_quotes(self.conn, workspace)
        inputs: dict[str, Any] = {"workspace": workspace}
        result = run_stage(self.conn, SIDE_STAGES["beliefs-drift"], self.config, Clock.from_option(as_of),
                           inputs=inputs, args={"workspace": workspace, "mark_drifted": True, "as_of": as_of})
        return {**inputs["report"], "run_id": result.run_id,
                "beliefs_marked_drifted": result.counts["beliefs_marked_drifted"]}

    def rebuild_beliefs(self, *, workspace: str | None = None, as_of: str | None = None) -> list[RunResult]:
        """`kenning reindex --rebuild-beliefs`: every wiki workspace's beliefs again from its sidecars, then the
        conversation and self beliefs again from stage 5's claims and the self-belief nodes (W33)."""
        from kenning.store import beliefs as beliefs_sql

        roots = beliefs_sql.workspace_roots(self.conn)
        clock = Clock.from_option(as_of)
        results = []
        for slug, root in sorted(roots.items()):
            if root is None or (workspace and slug != workspace):
                continue
            results.append(self.ingest_wiki(root, workspace=slug, clock=clock, rebuild=True, as_of=as_of))
        results.append(run_stage(self.conn, SIDE_STAGES["beliefs-rebuild-feeds"], self.config, clock,
                                 inputs={"workspace": workspace}, args={"workspace": workspace, "as_of": as_of}))
        with transaction(self.conn):
            beliefs_sql.fts_rebuild(self.conn)
        return results

    def publish_beliefs(self, items: Sequence[Any], *, workspace: str | None = None,
                        as_of: str | None = None) -> RunResult:
        return run_stage(self.conn, SIDE_STAGES["beliefs-publish"], self.config, Clock.from_option(as_of),
                         inputs={"items": list(items), "workspace": workspace},
                         args={"workspace": workspace, "items": len(items), "as_of": as_of})

    def m1(self, judge: Any = None, *, workspace: str | None = None, sample: int | None = None,
           seed: int | None = None) -> dict[str, Any]:
        from kenning.beliefs.judge import ModelJudgeRequest, NoJudge
        from kenning.beliefs.verify import m1

        if isinstance(judge, ModelJudgeRequest):  # model calls are logged, so M1 runs as a (side) stage
            inputs: dict[str, Any] = {"workspace": workspace, "sample": sample, "seed": seed}
            run_stage(self.conn, SIDE_STAGES["beliefs-m1"], self.config, Clock.from_option(None), inputs=inputs,
                      args={"workspace": workspace, "sample": sample, "seed": seed, "llm": judge.mode},
                      llm_mode=judge.mode)
            return inputs["report"]
        return m1(self.conn, self.config, judge or NoJudge(), workspace, sample, seed)

    def reindex(self, *, full: bool = True, as_of: str | None = None, progress: ProgressFn | None = None,
                defer_vectors: bool = False) -> RunResult:
        """Rebuild the search index from the raw layer (``full``) or bring it up to date (``defer_vectors``: as
        :meth:`ingest`)."""
        return run_stage(self.conn, STAGES["index"], self.config, Clock.from_option(as_of),
                         inputs={"full": full, "defer_vectors": defer_vectors}, args={"full": full, "as_of": as_of},
                         progress=progress)

    def fill_vectors(self, *, as_of: str | None = None, progress: ProgressFn | None = None,
                     max_batches: int | None = None) -> dict[str, int]:
        """Make the search vectors an import left to do (`kenning reindex --vectors`; issue 24 §1): batch by batch,
        resumable, one fill per vault. Raises ``vector_fill.FillBusy`` when another fill runs."""
        from kenning.retrieve import vector_fill

        return vector_fill.fill(self.conn, self.config, self.path, clock=Clock.from_option(as_of), progress=progress,
                                max_batches=max_batches)

    def vector_lane(self) -> dict[str, Any]:
        """How complete the search vector lane is (embedded of total, a fill running)."""
        from kenning.retrieve import vector_fill

        return vector_fill.lane_state(self.conn, self.config, self.path)

    def search(self, query: str, *, k: int | None = None, as_of: str | None = None, now: str | None = None,
               lanes: Sequence[str] | None = None, kinds: Sequence[str] | None = None) -> "SearchResult":
        """Hybrid search over the vault (see :mod:`kenning.retrieve.search`)."""
        from kenning.retrieve import vector_fill
        from kenning.retrieve.search import Searcher

        result = Searcher(self.conn, self.config).search(query, k=k, as_of=as_of, now=now, lanes=lanes, kinds=kinds)
        if self.config.retrieval.vector.enabled:  # say when the vector lane is still being filled (issue 24 §1)
            result.vector_lane = state = vector_fill.lane_state(self.conn, self.config, self.path)
            note = vector_fill.lane_note(state)
            if note:
                result.notes = [n for n in result.notes if not n.startswith("no vectors in the search index")]
                result.notes.append(note)
        return result

    def context(self, request: str, *, entity: str | None = None, budget: int | None = None,
                session: str | None = None, now: str | None = None, record: bool = True,
                given: set[str] | None = None) -> Any:
        """The novelty-gated context packet for ``request`` (see :mod:`kenning.retrieve.context`)."""
        from kenning.retrieve.context import build_context

        return build_context(self.conn, self.config, request, now=now or Clock(None).now(), entity=entity,
                             budget=budget, session=session, record=record, given=given)

    def brief(self, node: str, *, now: str | None = None) -> Any:
        """The 200–300 token knowledge brief for an entity (see :mod:`kenning.retrieve.brief`)."""
        from kenning.retrieve.brief import knowledge_brief

        return knowledge_brief(self.conn, self.config, node, now=now or Clock(None).now())

    def query(self, kind: str, *, now: str | None = None, **args: Any) -> Any:
        """One §43 graph query (see :mod:`kenning.retrieve.graph_query`)."""
        from kenning.retrieve.graph_query import run_query

        return run_query(self.conn, self.config, kind, now=now or Clock(None).now(), **args)

    def inspect(self, query_type: str, *, node: str | None = None, query: str | None = None,
                limit: int | None = None, now: str | None = None) -> dict[str, Any]:
        """§41.2 inspect_knowledge (see :mod:`kenning.retrieve.inspect`); reads only."""
        from kenning.retrieve.inspect import inspect_knowledge

        return inspect_knowledge(self.conn, self.config, query_type, now=now or Clock(None).now(), node=node,
                                 query=query, limit=limit)

    def sql(self, sql: str, *, max_rows: int | None = None, timeout_ms: int | None = None) -> dict[str, Any]:
        """§41.6 one read-only statement (see :mod:`kenning.store.readonly_sql`); raises SqlRefused."""
        from kenning.store.readonly_sql import limits_of, run_readonly_sql

        return run_readonly_sql(self.conn, sql, limits_of(self.config), max_rows=max_rows,
                                timeout_ms=timeout_ms).as_dict()

    def digest(self, *, since: str | None = None, now: str | None = None) -> dict[str, Any]:
        """§42A.4.6 the weekly digest (see :mod:`kenning.knowledge.digest`)."""
        from kenning.knowledge.digest import weekly_digest

        return weekly_digest(self.conn, self.config, now=now or Clock(None).now(), since=since)

    def health(self, *, now: str | None = None) -> dict[str, Any]:
        """Graph health (seed 003 §41, §42A.6): knowledge_debt_score, graph_density, review queues and the last
        maintain run's hygiene receipt. Read-only."""
        from kenning.pipeline.clock import Clock
        from kenning.upkeep.maintain.health import health

        return health(self.conn, self.config, now=Clock.from_option(now).now())

    def maintain(self, *, now: str | None = None, dry_run: bool = False, llm_mode: str = "none") -> dict[str, Any]:
        """Run the nightly upkeep (seed 003 §42) once; resumes an interrupted run. Returns the receipt."""
        from kenning.pipeline.clock import Clock
        from kenning.upkeep.maintain.dag import maintain

        return maintain(self.conn, self.config, now=Clock.from_option(now).now(), dry_run=dry_run,
                        llm_mode=llm_mode, llm_explicit=llm_mode != "none")
    # ---- issue 20: back-links and their review queue (§42A.2) ----------------------------------------------

    def backlinks(self, *, as_of: str | None = None, sweep: bool = False,
                  progress: ProgressFn | None = None) -> RunResult:
        """Run the `backlinks` stage on what the vault holds (new messages scanned, bundles aggregated/promoted);
        ``sweep`` = the historical sweep: every message again (mentions already recorded add nothing)."""
        return run_stage(self.conn, STAGES["backlinks"], self.config, Clock.from_option(as_of),
                         inputs={"sweep": sweep}, args={"as_of": as_of, "sweep": sweep}, progress=progress)

    def review_queue(self, *, page: int = 1, page_size: int | None = None, item_kind: str | None = None,
                     status: str = "pending") -> dict[str, Any]:
        """§42A.2.17 one page of the review queue (impact × uncertainty × recency order)."""
        from kenning.upkeep.review import queue_page

        return queue_page(self.conn, self.config, page=page, page_size=page_size, item_kind=item_kind,
                          status=status)

    def review_bundle(self, bundle_id: str) -> dict[str, Any] | None:
        """One evidence bundle with its mentions (what a review item's primary_ref names)."""
        from kenning.upkeep.review import bundle_detail

        return bundle_detail(self.conn, bundle_id)

    def merge_candidates(self, *, page: int = 1, page_size: int = 25, status: str = "pending") -> dict[str, Any]:
        """One page of the merge queue (near-duplicates `kenning maintain` found), strongest evidence first."""
        from kenning.upkeep.maintain.merge_review import merge_candidates

        return merge_candidates(self.conn, page=page, page_size=page_size, status=status)

    def resolve_merge(self, ref: str, action: str, *, as_of: str | None = None) -> dict[str, Any]:
        """``merge`` (one commit through the single writer; undo with ``kenning rollback``) or ``keep_apart`` one
        merge candidate."""
        from kenning.upkeep.maintain.merge_review import resolve_merge

        return resolve_merge(self.conn, self.config, ref, action, now=Clock.from_option(as_of).now())

    def review(self, action: str, ref: str, *, as_of: str | None = None, **args: Any) -> dict[str, Any]:
        """A verdict: ``approve`` / ``reject`` (reason=) / ``correct`` (to_relation=) a bundle, ``retarget`` a
        mention (new_target=, reason=), ``suppress`` a mention pattern (ref = the mention text; span_class=,
        scope=, reason=), or resolve an ``entity`` candidate (resolution= create_new | link_existing | dismiss,
        canonical_name=, existing_node_id=, reason=). Each is one knowledge commit (undo with ``kenning rollback``); returns its receipt."""
        from kenning.upkeep.review import Reviewer

        r = Reviewer(self.conn, self.config, clock=Clock.from_option(as_of))
        handlers = {"approve": r.approve, "reject": r.reject, "correct": r.correct, "retarget": r.retarget,
                    "suppress": r.suppress, "entity": r.resolve_candidate}
        if action not in handlers:
            raise ValueError(f"unknown review action {action!r}: one of {', '.join(handlers)}")
        res = handlers[action](ref, **args).as_dict()
        # §42A.2.17 POST receipt: success, or unchanged when the verdict was already so
        return {**res, "status": "success" if res["created"] else "unchanged"}

    def status(self) -> dict[str, Any]:
        return {
            "db": str(self.path),
            "tables": runs_sql.table_counts(self.conn),
            "last_runs": runs_sql.latest_run_per_stage(self.conn),
            "vector_lane": self.vector_lane(),
        }

    def forget(self, selector: str, value: Any, *, apply: bool = False, as_of: str | None = None,
               vacuum: bool | None = None) -> Any:
        """Issue 23 §1: preview (default) or apply the removal of the conversations ``selector`` (conversation |
        source | between | matching) names, with everything derived from them. Returns a ``ForgetReport``."""
        from kenning.forget import forget

        now = Clock.from_option(as_of).now() if as_of else None
        return forget(self.conn, self.config, selector, value, apply=apply, now=now, vacuum=vacuum)

    def rejects(self, limit: int = 100) -> list[dict]:
        return raw_sql.list_rejects(self.conn, limit)
