"""The self-belief stages (each one transaction and one run row, pipeline/runner.py).

* ``self`` (in the ingest pipeline, after "3"): detect new experiences, run the decomposer on every experience
  the current extractor version has not processed (the backfill rule of seed §6), publish to the belief ledger.
  `kenning self backfill` runs the same stage on its own.
* ``self-rollback``: soft-delete one extractor version's occurrences, rescore, republish (seed §6, §7).
* ``self-merge``, ``self-links``, ``self-conflicts``, ``self-demote``: the review operations of §8.3–8.4 and the
  ratchet's explicit trigger.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from kenning.config import Config
from kenning.llm import open_llm_run
from kenning.llm.version import extractor_version, extractor_version_parts
from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage0 import check_namespace
from kenning.selfbelief.epistemics import cue_lists
from kenning.sources.jcs import canonicalize
from kenning.store import selfbeliefs as sql

PROMPTS = ["atomizer", "epistemics_fallback", "verifier", "repair_json"]
# Bump when the deterministic rules (segmenter, rule atomizer, validator, canonicalizer) change meaning.
RULES_VERSION = "selfbelief-rules-2"      # 2: issue 22 (fronted clauses, negation scope, reported speech …)


def version_inputs(config: Config, llm_mode: str) -> dict[str, Any]:
    sb = config.self_beliefs
    return dict(prompts=PROMPTS, cue_lists=cue_lists(sb.epistemics), llm_mode=llm_mode,
                extra={"rules": RULES_VERSION,
                       "atomizer_backend": sb.atomizer.backend,
                       "atomizer_words": {"fronting": sb.atomizer.fronting_words,
                                          "intensifiers": sb.atomizer.intensifiers},
                       "models": sb.models.model_dump(mode="json"),
                       "segmenter": sb.segmenter.model_dump(mode="json"),
                       "validator": sb.validator.model_dump(mode="json"),
                       "text_similarity": sb.embeddings.text_similarity_thresholds.model_dump(mode="json")
                       if not sb.embeddings.enabled else None})


def current_version(config: Config, llm_mode: str) -> str:
    """seed 000 §6: prompts, cue lists, model ids and key thresholds, hashed by the model layer."""
    return extractor_version(config, **version_inputs(config, llm_mode))


def version_parts(config: Config, llm_mode: str) -> dict[str, Any]:
    return extractor_version_parts(config, **version_inputs(config, llm_mode))


def make_extractor(ctx: StageContext, llm, version: str, **kw):
    from kenning.selfbelief.extractor import HTNBeliefExtractor

    return HTNBeliefExtractor(ctx.conn, ctx.config, clock=ctx.clock, ids=ctx.ids, run_id=ctx.run_id,
                              extractor_version=version, llm=llm, llm_mode=ctx.llm_mode, warn=ctx.warn, **kw)


class SelfBeliefStage:
    """Seed 000 on every new experience (ingest), or `kenning self backfill`."""

    name = "self"
    title = "self-beliefs (seed 000)"
    # No model_wanted hook (M30): seed 000's model uses each have their own switch under self_beliefs
    # (atomizer.backend, the epistemics fallback threshold, resolution.verifier.enabled), so the stage takes
    # the run's mode as it is.

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.pipeline.incognito import incognito_skip
        from kenning.selfbelief.detector import ExperienceDetector

        check_namespace(ctx)
        version = current_version(ctx.config, ctx.llm_mode)
        sql.record_version(ctx.conn, version, canonicalize(version_parts(ctx.config, ctx.llm_mode)), ctx.clock.now())
        detector = ExperienceDetector(ctx.config)
        counts: Counter = detector.run(ctx)
        pending = sql.pending_experiences(ctx.conn, version, ctx.inputs.get("limit"),
                                          ctx.inputs.get("experience_ids"))
        skip = incognito_skip(ctx)
        if skip:  # an experience found before the mode was set waits for the purge, never for the extractor (I70)
            pending = [e for e in pending if e["conversation_id"] not in skip]
        out: dict[str, Any] = {"extractor_version": version, **{k: counts[k] for k in sorted(counts)}}
        if not pending and not detector.retired_nodes:
            out["experiences_processed"] = 0
            return out
        with open_llm_run(ctx, "self_beliefs", extractor_version=version) as llm:
            ex = make_extractor(ctx, llm, version)
            ex.touched.update(detector.retired_nodes)
            for n, exp in enumerate(pending, 1):
                ex.extract_and_update_self_knowledge(exp)
                ctx.progress(records=n, total=len(pending), file="self-beliefs", unit="experiences")
            llm.run.add(messages_processed=len(pending), assertions_extracted=ex.totals["occurrences"])
            out.update(ex.finish())
        out["experiences_processed"] = len(pending)
        out.update({k: ex.totals[k] for k in sorted(ex.totals)})
        return out


class SelfRollback:
    """`kenning self rollback VERSION` (seed §6: "DELETE FROM belief_occurrences WHERE extractor_version = ?",
    as a soft delete)."""

    name = "self-rollback"
    title = "roll back a self-belief extractor version"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.selfbelief.conflicts import ConflictResolutionError

        version = ctx.inputs["version"]
        if not sql.version_known(ctx.conn, version):
            raise ConflictResolutionError(f"no occurrences or runs of extractor version {version!r} "
                                          "(`kenning self versions` lists them)")
        now = ctx.clock.now()
        res = sql.rollback_version(ctx.conn, version, now)
        nodes = res.pop("nodes")
        ex = make_extractor(ctx, None, version)
        live = sql.live_occurrences(ctx.conn, nodes)
        for e in sql.edges_of(ctx.conn, nodes, "active"):
            if not live.get(e["node_a_id"]) or not live.get(e["node_b_id"]):
                sql.update_edge(ctx.conn, e["edge_id"], {"status": "resolved", "resolved_at": now,
                                                         "resolution_method": "rolled_back",
                                                         "resolution_reason": f"evidence of {version} rolled back"})
        for bid in nodes:
            if not live.get(bid):
                for link in sql.links_of(ctx.conn, bid):
                    sql.update_link(ctx.conn, link["link_id"], {"status": "rejected", "status_reason": "rolled_back",
                                                               "updated_at": now})
        ex.touched.update(nodes)
        out = ex.finish()
        return {"version": version, **res, "nodes_affected": len(nodes),
                "nodes_without_evidence": sum(1 for b in nodes if not live.get(b)), **out}


class SelfMerge:
    """`kenning self merge A B`: the explicit merge (invariant 4) — A is folded into B."""

    name = "self-merge"
    title = "merge two self-belief nodes"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.selfbelief.merge import merge_nodes

        ex = make_extractor(ctx, None, current_version(ctx.config, ctx.llm_mode))
        res = merge_nodes(ctx, ex, ctx.inputs["a"], ctx.inputs["b"])
        ex.touched.update([res["merged"], res["into"]])
        res.update(ex.finish())
        return res


class SelfLinkReview:
    """`kenning self links --accept/--reject ID` (§8.3: accept → marked for merge, reject → closed)."""

    name = "self-links"
    title = "review tentative links"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.selfbelief.links import TentativeLinkService

        svc = TentativeLinkService(ctx.conn, ctx.config, ctx.clock, ctx.ids, "review")
        done = [svc.review(lid, decision) for lid, decision in ctx.inputs["decisions"]]
        return {"reviewed": len(done), "accepted": sum(1 for d in done if d["status"] == "accepted"),
                "rejected": sum(1 for d in done if d["status"] == "rejected"),
                "links": [{"link_id": d["link_id"], "status": d["status"]} for d in done]}


class SelfConflictResolve:
    """`kenning self conflicts --resolve ID --by …` / `--resolve-all` (§8.4)."""

    name = "self-conflicts"
    title = "resolve self-belief conflicts"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.selfbelief.conflicts import ConflictResolutionError, resolve_edge

        method, keep = ctx.inputs["method"], ctx.inputs.get("keep")
        if ctx.inputs.get("all"):
            edges = sql.list_edges(ctx.conn, ["active"])
        else:
            edge = sql.get_edge_by_id(ctx.conn, ctx.inputs["edge_id"])
            if edge is None:
                raise ConflictResolutionError(f"no single conflict matches {ctx.inputs['edge_id']!r}")
            edges = [edge]
        ex = make_extractor(ctx, None, current_version(ctx.config, ctx.llm_mode))
        decided = []
        for e in edges:
            current = sql.get_edge(ctx.conn, e["node_a_id"], e["node_b_id"])
            if current is None or current["status"] != "active":
                continue
            d = resolve_edge(ctx.conn, ctx.clock, current, method, keep)
            decided.append(d)
            ex.touched.update([e["node_a_id"], e["node_b_id"]])
        out = ex.finish()
        return {"resolved": len(decided), "decisions": decided, **out}


class SelfDemote:
    """The ratchet's explicit trigger: move an identity node to another stream (§4.14)."""

    name = "self-demote"
    title = "demote a self-belief stream (explicit trigger)"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.selfbelief.streams import StreamService

        entry = StreamService(ctx.conn, ctx.config, ctx.clock, ctx.ids).demote(
            ctx.inputs["belief_id"], ctx.inputs["to"], ctx.inputs["trigger"], ctx.inputs.get("note"))
        return {"belief_id": ctx.inputs["belief_id"], **entry}


class SelfAnalyze:
    """`kenning self analyze --llm live|replay` and `kenning self annotate metrics --llm …`: phases 1–6 on given texts
    with the LLM atomizer / epistemics fallback. Writes no belief rows — only the model layer's call log (so a
    replay can answer the same prompts later). ``inputs["texts"]``: [{"text", "mode", "key"}]; the analyses are
    left in ``inputs["report"]``."""

    name = "self-analyze"
    title = "analyze self-statements (phases 1–6, nothing stored)"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.selfbelief.analyze import Analyzer

        version = current_version(ctx.config, ctx.llm_mode)
        out = []
        with open_llm_run(ctx, "self_beliefs_analyze", extractor_version=version) as llm:
            an = Analyzer(ctx.config, llm)
            for t in ctx.inputs["texts"]:
                out.append(an.analyze(t["text"], mode=t.get("mode"), item_key=t.get("key") or ""))
            llm.run.add(messages_processed=len(out), assertions_extracted=sum(len(a.atoms) for a in out))
        ctx.inputs["report"] = out
        return {"texts": len(out), "atoms": sum(len(a.atoms) for a in out), "extractor_version": version,
                "atomizer": an.backend}


def parse_history(js: str | None) -> list[dict]:
    return orjson.loads(js) if js else []
